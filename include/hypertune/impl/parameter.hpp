// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/parameter.hpp>: mapping values to and from the unit interval, and the checks.
// Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/parameter.hpp>
#include <hypertune/linkage.hpp>
#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <system_error>
#include <vector>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/parameter.hpp> is compiled into hypertune::compiled: include <hypertune/parameter.hpp>"
#endif

namespace hypertune {

HYPERTUNE_INLINE Value ParameterSpec::from_unit(double u) const {
    // Outside [0,1] clamps; NaN is no point at all (and would be undefined in the casts below).
    if (std::isnan(u)) throw InvalidArgument(fmt::format("parameter '{}': the unit-cube coordinate is NaN", name));
    u = std::clamp(u, 0.0, 1.0);
    switch (kind) {
        case ParameterKind::Integer: {
            double lo = min - 0.5;
            double hi = max + 0.5;
            double x = 0.0;
            if (scaling == Scaling::Logarithmic)
                x = std::exp(std::log(lo) + u * (std::log(hi) - std::log(lo)));
            else
                x = lo + u * (hi - lo);
            double v = std::floor(x + 0.5);
            return static_cast<std::int64_t>(std::clamp(v, min, max));
        }
        case ParameterKind::Continuous: {
            // The ends exactly (a grid's, a design's on a face): the scalings' arithmetic would
            // miss them by a rounding (999.9999999999998 for 1000).
            if (u == 0.0) return min;
            if (u == 1.0) return max;
            double x = 0.0;
            if (scaling == Scaling::Logarithmic)
                x = std::exp(std::log(min) + u * (std::log(max) - std::log(min)));
            else if (scaling == Scaling::ReverseLogarithmic)  // 1 - e^y without cancelling near 0
                x = -std::expm1(std::log1p(-min) + u * (std::log1p(-max) - std::log1p(-min)));
            else
                x = min + u * (max - min);
            return std::clamp(x, min, max);
        }
        case ParameterKind::Categorical: {
            auto k = categories.size();
            auto i = static_cast<std::size_t>(u * static_cast<double>(k));
            return categories[std::min(i, k - 1)];
        }
        case ParameterKind::Static: return fixed;
    }
    return fixed;
}

HYPERTUNE_INLINE double ParameterSpec::to_unit(const Value& v) const {
    switch (kind) {
        case ParameterKind::Integer: {
            const auto* integer = std::get_if<std::int64_t>(&v);
            if (!integer)
                throw InvalidArgument(fmt::format("IntegerParameter '{}': {} is not an integer of [{}, {}]", name,
                                                  detail::given_value(v), min, max));
            double x = static_cast<double>(*integer);
            double lo = min - 0.5;
            double hi = max + 0.5;
            if (scaling == Scaling::Logarithmic) {
                // centre of the slice in log space
                double a = std::log(std::max(x - 0.5, lo));
                double b = std::log(std::min(x + 0.5, hi));
                return std::clamp((0.5 * (a + b) - std::log(lo)) / (std::log(hi) - std::log(lo)), 0.0, 1.0);
            }
            return std::clamp((x - lo) / (hi - lo), 0.0, 1.0);
        }
        case ParameterKind::Continuous: {
            const auto* real = std::get_if<double>(&v);
            if (!real)
                throw InvalidArgument(
                    fmt::format("ContinuousParameter '{}': {} is not a number", name, detail::given_value(v)));
            double x = *real;
            if (max == min) return 0.5;
            double u = 0.0;
            if (scaling == Scaling::Logarithmic)
                u = (std::log(x) - std::log(min)) / (std::log(max) - std::log(min));
            else if (scaling == Scaling::ReverseLogarithmic)
                u = (std::log1p(-x) - std::log1p(-min)) / (std::log1p(-max) - std::log1p(-min));
            else
                u = (x - min) / (max - min);
            return std::clamp(u, 0.0, 1.0);
        }
        case ParameterKind::Categorical: {
            const auto* text = std::get_if<std::string>(&v);
            if (!text)
                throw InvalidArgument(
                    fmt::format("CategoricalParameter '{}': {} is not one of its values (text)", name, detail::given_value(v)));
            const auto& s = *text;
            for (std::size_t i = 0; i < categories.size(); ++i)
                if (categories[i] == s)
                    return (static_cast<double>(i) + 0.5) / static_cast<double>(categories.size());
            throw InvalidArgument(fmt::format("CategoricalParameter '{}': '{}' is not one of its values", name, s));
        }
        case ParameterKind::Static: return 0.0;
    }
    return 0.0;
}

HYPERTUNE_INLINE void ParameterSpec::check(const Value& v) const {
    switch (kind) {
        case ParameterKind::Integer: {
            auto* p = std::get_if<std::int64_t>(&v);
            if (!p)
                throw InvalidArgument(fmt::format("IntegerParameter '{}': {} is not an integer of [{}, {}]", name,
                                                  detail::given_value(v), min, max));
            double x = static_cast<double>(*p);
            if (x < min || x > max)
                throw InvalidArgument(fmt::format("IntegerParameter '{}': {} is outside [{}, {}]", name, *p, min, max));
            return;
        }
        case ParameterKind::Continuous: {
            auto* p = std::get_if<double>(&v);
            if (!p)
                throw InvalidArgument(
                    fmt::format("ContinuousParameter '{}': {} is not a number", name, detail::given_value(v)));
            if (!(*p >= min && *p <= max))
                throw InvalidArgument(fmt::format("ContinuousParameter '{}': {} is outside [{}, {}]", name, *p, min, max));
            return;
        }
        case ParameterKind::Categorical: (void)to_unit(v); return;
        case ParameterKind::Static:
            if (v != fixed)
                throw InvalidArgument(fmt::format("StaticParameter '{}': {} differs from its fixed value {}", name,
                                                  detail::given_value(v), detail::given_value(fixed)));
            return;
    }
}
namespace detail {

HYPERTUNE_INLINE bool is_utf8(std::string_view s) noexcept {
    for (std::size_t i = 0; i < s.size();) {
        auto c = static_cast<unsigned char>(s[i]);
        std::size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (n == 0 || n > s.size() - i) return false;
        std::uint32_t cp = n == 1 ? c : c & (0x7Fu >> n);
        for (std::size_t k = 1; k < n; ++k) {
            auto b = static_cast<unsigned char>(s[i + k]);
            if ((b & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (b & 0x3Fu);
        }
        constexpr std::uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};  // shorter forms are overlong
        if (cp < least[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += n;
    }
    return true;
}

HYPERTUNE_INLINE std::string given_value(const Value& v) {
    if (const auto* s = std::get_if<std::string>(&v)) return fmt::format("the text '{}'", *s);
    return std::visit([](const auto& x) { return fmt::format("{}", x); }, v);
}

HYPERTUNE_INLINE bool same_value(const Value& a, const Value& b) noexcept {
    if (a == b) return true;
    const auto number = [](const Value& v) -> std::optional<double> {
        if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
        if (const auto* d = std::get_if<double>(&v)) return *d;
        return std::nullopt;
    };
    const auto x = number(a), y = number(b);
    return x && y && *x == *y;
}

HYPERTUNE_INLINE std::string name_problem(std::string_view name) {
    if (!is_utf8(name)) return "the name is not valid UTF-8";  // it is journaled, and a resume compares it as read back
    for (std::size_t i = 0; i < name.size(); ++i)
        if (const auto c = static_cast<unsigned char>(name[i]); c < 0x20 || c == 0x7f)
            return fmt::format("the name has a control character (0x{:02x} at byte {})", c, i);
    return {};
}

HYPERTUNE_INLINE std::string printable(std::string_view name) {
    std::string out;
    for (const char ch : name)
        if (const auto c = static_cast<unsigned char>(ch); c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
        else out += ch;
    return out;
}

HYPERTUNE_INLINE void check_name(std::string_view what, const std::string& name) {
    if (name.empty()) throw InvalidArgument(fmt::format("{}: the name is empty", what));
    if (const std::string problem = name_problem(name); !problem.empty())
        throw InvalidArgument(fmt::format("{} '{}': {}", what, printable(name), problem));
}

HYPERTUNE_INLINE Scaling resolve_scaling(std::string_view what, const std::string& name, Scaling s, double min, double max,
                               bool integer) {
    // Three decades or more; the ratio of bounds written in decimal (1e-5 and 0.01, or floats) can
    // fall a rounding short of 1000, hence the tolerance.
    if (s == Scaling::Auto) return (min > 0.0 && max / min >= 1000.0 * (1.0 - 1e-6)) ? Scaling::Logarithmic : Scaling::Linear;
    if (s == Scaling::Logarithmic && !(min > 0.0))
        throw InvalidArgument(
            fmt::format("{} '{}': Logarithmic scaling needs min > 0, got min = {}", what, name, min));
    if (s == Scaling::ReverseLogarithmic) {
        if (integer)
            throw InvalidArgument(fmt::format(
                "{} '{}': ReverseLogarithmic scaling is only for continuous parameters", what, name));
        if (!(min >= 0.0 && max < 1.0))
            throw InvalidArgument(fmt::format(
                "{} '{}': ReverseLogarithmic scaling needs 0 <= min and max < 1, got [{}, {}]", what, name, min, max));
    }
    return s;
}

HYPERTUNE_INLINE ParameterSpec numeric_spec(std::string_view what, std::string name, ParameterKind kind, double min, double max,
                                  Scaling scaling, std::string_view type) {
    ParameterSpec spec;
    spec.scaling = resolve_scaling(what, name, scaling, min, max, kind == ParameterKind::Integer);
    spec.requested_scaling = scaling;
    spec.name = std::move(name);
    spec.kind = kind;
    spec.min = min;
    spec.max = max;
    spec.type = type;
    return spec;
}

HYPERTUNE_INLINE double as_written(float bound) noexcept {
    std::array<char, 64> text{};
    const auto [end, ec] = std::to_chars(text.data(), text.data() + text.size() - 1, bound);
    if (ec != std::errc{}) return static_cast<double>(bound);
    *end = '\0';
    return std::strtod(text.data(), nullptr);
}

HYPERTUNE_INLINE ParameterSpec checked_spec(const ParameterSpec& given) {
    ParameterSpec s = given;
    const std::string_view what = s.kind == ParameterKind::Integer       ? "IntegerParameter"
                                  : s.kind == ParameterKind::Continuous  ? "ContinuousParameter"
                                  : s.kind == ParameterKind::Categorical ? "CategoricalParameter"
                                                                         : "StaticParameter";
    check_name(what, s.name);
    switch (s.kind) {
        case ParameterKind::Integer:
        case ParameterKind::Continuous: {
            const bool integer = s.kind == ParameterKind::Integer;
            if (!std::isfinite(s.min) || !std::isfinite(s.max) || !std::isfinite(s.max - s.min) || s.min > s.max)
                throw InvalidArgument(fmt::format("{} '{}': bounds must be finite with min <= max, got [{}, {}]", what,
                                                  s.name, s.min, s.max));
            if (integer && (s.min != std::round(s.min) || s.max != std::round(s.max) ||
                            std::abs(s.min) > max_exact_integer || std::abs(s.max) > max_exact_integer))
                throw InvalidArgument(fmt::format("{} '{}': bounds must be integers within +-2^46, got [{}, {}]", what,
                                                  s.name, s.min, s.max));
            s.scaling = resolve_scaling(what, s.name, s.scaling, s.min, s.max, integer);
            return s;
        }
        case ParameterKind::Categorical: {
            if (s.categories.empty()) throw InvalidArgument(fmt::format("{} '{}': needs at least one value", what, s.name));
            std::vector<std::string_view> sorted(s.categories.begin(), s.categories.end());
            std::sort(sorted.begin(), sorted.end());
            for (std::size_t i = 0; i < sorted.size(); ++i) {
                if (!is_utf8(sorted[i]))
                    throw InvalidArgument(fmt::format("{} '{}': value '{}' is not valid UTF-8", what, s.name, sorted[i]));
                if (i > 0 && sorted[i] == sorted[i - 1])
                    throw InvalidArgument(fmt::format("{} '{}': value '{}' is listed twice", what, s.name, sorted[i]));
            }
            s.min = 0.0;
            s.max = static_cast<double>(s.categories.size() - 1);
            return s;
        }
        case ParameterKind::Static: {
            const auto* text = std::get_if<std::string>(&s.fixed);
            const auto* real = std::get_if<double>(&s.fixed);
            if ((text && !is_utf8(*text)) || (real && !std::isfinite(*real)))
                throw InvalidArgument(fmt::format("{} '{}': the value must be {}", what, s.name,
                                                  text ? "valid UTF-8" : "finite"));
            return s;
        }
    }
    throw InvalidArgument(fmt::format("parameter '{}': unknown kind", s.name));
}

}  // namespace detail
}  // namespace hypertune
