// SPDX-License-Identifier: MIT
#pragma once
// Hyperparameter ranges: integer, continuous, categorical and static (fixed) parameters, with
// SageMaker AMT's scaling types. Each constructor validates its range and throws
// hypertune::InvalidArgument naming the parameter and the rule it breaks.

#include <hypertune/linkage.hpp>
#include <hypertune/error.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace hypertune {

/// How a numeric range is searched (AMT's ScalingType).
/// - Auto: Logarithmic when the range is positive and spans three or more orders of magnitude
///   (max / min >= 1000), Linear otherwise.
/// - Logarithmic: uniform in log(value); needs min > 0.
/// - ReverseLogarithmic: uniform in log(1 - value), dense near 1; continuous only, 0 <= min, max < 1.
enum class Scaling { Auto, Linear, Logarithmic, ReverseLogarithmic };

enum class ParameterKind { Integer, Continuous, Categorical, Static };

/// One hyperparameter value: integers are stored as int64, reals as double, categories as text.
using Value = std::variant<std::int64_t, double, std::string>;

[[nodiscard]] inline std::string_view to_string(Scaling s) noexcept {
    switch (s) {
        case Scaling::Auto: return "Auto";
        case Scaling::Linear: return "Linear";
        case Scaling::Logarithmic: return "Logarithmic";
        case Scaling::ReverseLogarithmic: return "ReverseLogarithmic";
    }
    return "?";
}

[[nodiscard]] inline std::string_view to_string(ParameterKind k) noexcept {
    switch (k) {
        case ParameterKind::Integer: return "Integer";
        case ParameterKind::Continuous: return "Continuous";
        case ParameterKind::Categorical: return "Categorical";
        case ParameterKind::Static: return "Static";
    }
    return "?";
}

namespace detail {

template <class T>
constexpr std::string_view type_name() noexcept {
    if constexpr (std::is_same_v<T, bool>) return "bool";
    else if constexpr (std::is_same_v<T, char>) return "char";
    else if constexpr (std::is_same_v<T, signed char>) return "signed char";
    else if constexpr (std::is_same_v<T, unsigned char>) return "unsigned char";
    else if constexpr (std::is_same_v<T, short>) return "short";
    else if constexpr (std::is_same_v<T, unsigned short>) return "unsigned short";
    else if constexpr (std::is_same_v<T, int>) return "int";
    else if constexpr (std::is_same_v<T, unsigned>) return "unsigned";
    else if constexpr (std::is_same_v<T, long>) return "long";
    else if constexpr (std::is_same_v<T, unsigned long>) return "unsigned long";
    else if constexpr (std::is_same_v<T, long long>) return "long long";
    else if constexpr (std::is_same_v<T, unsigned long long>) return "unsigned long long";
    else if constexpr (std::is_same_v<T, float>) return "float";
    else if constexpr (std::is_same_v<T, double>) return "double";
    else if constexpr (std::is_same_v<T, long double>) return "long double";
    else if constexpr (std::is_same_v<T, std::string>) return "std::string";
    else if constexpr (std::is_same_v<T, std::string_view>) return "std::string_view";
    else if constexpr (std::is_same_v<T, const char*>) return "const char*";
    else return "unknown type";
}

// Integers travel through doubles in the unit-cube encoding. Within +-2^46 every value survives
// decode(encode(v)) under both scalings; beyond, a logarithmic range has values no point maps to.
inline constexpr std::int64_t max_integer_bound = std::int64_t{1} << 46;
inline constexpr double max_exact_integer = static_cast<double>(max_integer_bound);

}  // namespace detail

/// The type-erased description of one parameter, as the search space stores it.
struct ParameterSpec {
    std::string name{};
    ParameterKind kind = ParameterKind::Continuous;
    Scaling scaling = Scaling::Linear;            ///< resolved: never Auto
    Scaling requested_scaling = Scaling::Linear;  ///< as the user asked
    double min = 0.0;
    double max = 0.0;
    std::vector<std::string> categories{};  ///< Categorical only
    Value fixed{};                          ///< Static only
    std::string_view type{};                ///< the C++ value type the user declared ("int", "double"...)

    [[nodiscard]] bool tuned() const noexcept { return kind != ParameterKind::Static; }

    /// Maps a unit-interval coordinate to a value. Integers: every value v in [min, max] owns the
    /// slice [v - 0.5, v + 0.5) of the range, so under Linear each is equally likely; under
    /// Logarithmic that slice is measured in log space.
    [[nodiscard]] Value from_unit(double u) const;

    /// Inverse of from_unit: the centre of the value's slice for integers and categories.
    [[nodiscard]] double to_unit(const Value& v) const;

    /// Throws InvalidArgument when `v` is not a value this parameter can take.
    void check(const Value& v) const;
};

namespace detail {

// Names and text values are written as JSON (journal, result, report), which must be UTF-8.
[[nodiscard]] bool is_utf8(std::string_view s) noexcept;

// Why `name` (a parameter's or a metric's) cannot be one, "" when it can: it must be UTF-8, and the
// summary, the progress line, the CSV and the report print it, which a control character (a
// newline, say) would break.
[[nodiscard]] std::string name_problem(std::string_view name);
// `name` for an error message: each control character as \xNN, so that a NUL does not end the
// message (what() is a C string) and a newline does not split it.
[[nodiscard]] std::string printable(std::string_view name);

void check_name(std::string_view what, const std::string& name);

Scaling resolve_scaling(std::string_view what, const std::string& name, Scaling s, double min, double max,
                               bool integer);

// The spec of a validated numeric range, with its scaling resolved.
ParameterSpec numeric_spec(std::string_view what, std::string name, ParameterKind kind, double min, double max,
                                  Scaling scaling, std::string_view type);

// `spec` checked as the parameter types' constructors check theirs (SearchSpace::add_spec takes
// specs from types of the user's own too), with an Auto scaling resolved and a categorical
// parameter's range set from its categories; throws InvalidArgument naming the parameter.
[[nodiscard]] ParameterSpec checked_spec(const ParameterSpec& spec);

// A float bound as the user wrote it: the shortest decimal that reads back as the same float (0.1f
// is 0.1, not 0.10000000149011612), so that a configuration at the bound, written in decimal (JSON),
// is inside the range.
[[nodiscard]] double as_written(float bound) noexcept;

// A value as a message shows it: text quoted ("the text '7'"), so that it is not taken for 7.
[[nodiscard]] std::string given_value(const Value& v);

// Equal values, an integer and a real of the same number included (JSON writes 2.0 as 2).
[[nodiscard]] bool same_value(const Value& a, const Value& b) noexcept;

}  // namespace detail

/// An integer hyperparameter in [min, max] (both included).
template <std::integral T = std::int64_t>
class IntegerParameter {
public:
    using value_type = T;

    IntegerParameter(std::string name, T min, T max, Scaling scaling = Scaling::Auto) {
        constexpr std::string_view what = "IntegerParameter";
        detail::check_name(what, name);
        if constexpr (std::is_same_v<T, bool>) static_assert(!sizeof(T), "use CategoricalParameter for booleans");
        auto lo = static_cast<double>(min);
        auto hi = static_cast<double>(max);
        if (min > max)
            throw InvalidArgument(fmt::format("{} '{}': min must be <= max, got [{}, {}]", what, name, min, max));
        // Compared as integers: converted to double, 2^53 + 1 would pass as 2^53.
        auto outside = [](T v) {
            if constexpr (std::is_signed_v<T>)
                return static_cast<long long>(v) < -detail::max_integer_bound ||
                       static_cast<long long>(v) > detail::max_integer_bound;
            else
                return static_cast<unsigned long long>(v) > static_cast<unsigned long long>(detail::max_integer_bound);
        };
        if (outside(min) || outside(max))
            throw InvalidArgument(fmt::format("{} '{}': bounds must lie within +-2^46, got [{}, {}]", what, name, min, max));
        spec_ = detail::numeric_spec(what, std::move(name), ParameterKind::Integer, lo, hi, scaling, detail::type_name<T>());
    }

    [[nodiscard]] const ParameterSpec& spec() const noexcept { return spec_; }

private:
    ParameterSpec spec_;
};

template <class A, class B, class... Rest>
IntegerParameter(std::string, A, B, Rest...) -> IntegerParameter<std::common_type_t<A, B>>;

/// A real-valued hyperparameter in [min, max].
template <std::floating_point T = double>
class ContinuousParameter {
public:
    using value_type = T;

    ContinuousParameter(std::string name, T min, T max, Scaling scaling = Scaling::Auto) {
        constexpr std::string_view what = "ContinuousParameter";
        detail::check_name(what, name);
        auto lo = widen(min);
        auto hi = widen(max);
        if (!std::isfinite(lo) || !std::isfinite(hi))
            throw InvalidArgument(fmt::format("{} '{}': bounds must be finite, got [{}, {}]", what, name, lo, hi));
        if (lo > hi)
            throw InvalidArgument(fmt::format("{} '{}': min must be <= max, got [{}, {}]", what, name, lo, hi));
        if (!std::isfinite(hi - lo))
            throw InvalidArgument(fmt::format("{} '{}': max - min must be finite, got [{}, {}]", what, name, lo, hi));
        spec_ = detail::numeric_spec(what, std::move(name), ParameterKind::Continuous, lo, hi, scaling,
                                     detail::type_name<T>());
    }

    [[nodiscard]] const ParameterSpec& spec() const noexcept { return spec_; }

private:
    static double widen(T bound) {
        if constexpr (std::is_same_v<T, float>) return detail::as_written(bound);
        else return static_cast<double>(bound);
    }

    ParameterSpec spec_;
};

// ContinuousParameter("eta", 0, 1) means doubles, not a compile error.
template <class A, class B, class... Rest>
ContinuousParameter(std::string, A, B, Rest...)
    -> ContinuousParameter<std::conditional_t<std::is_floating_point_v<std::common_type_t<A, B>>,
                                              std::common_type_t<A, B>, double>>;

/// One of a list of text values, e.g. CategoricalParameter("booster", {"gbtree", "dart"}).
class CategoricalParameter {
public:
    using value_type = std::string;

    CategoricalParameter(std::string name, std::vector<std::string> values) {
        constexpr std::string_view what = "CategoricalParameter";
        detail::check_name(what, name);
        if (values.empty()) throw InvalidArgument(fmt::format("{} '{}': needs at least one value", what, name));
        for (const auto& v : values)
            if (!detail::is_utf8(v)) throw InvalidArgument(fmt::format("{} '{}': value '{}' is not valid UTF-8", what, name, v));
        for (std::size_t i = 0; i < values.size(); ++i)
            for (std::size_t j = 0; j < i; ++j)
                if (values[i] == values[j])
                    throw InvalidArgument(fmt::format("{} '{}': value '{}' is listed twice", what, name, values[i]));
        spec_.name = std::move(name);
        spec_.kind = ParameterKind::Categorical;
        spec_.categories = std::move(values);
        spec_.max = static_cast<double>(spec_.categories.size() - 1);
        spec_.type = detail::type_name<std::string>();
    }

    [[nodiscard]] const ParameterSpec& spec() const noexcept { return spec_; }

private:
    ParameterSpec spec_;
};

/// A fixed value passed to every trial but never tuned (AMT's static hyperparameters).
template <class T>
class StaticParameter {
public:
    using value_type = T;

    StaticParameter(std::string name, T value) {
        detail::check_name("StaticParameter", name);
        spec_.name = std::move(name);
        spec_.kind = ParameterKind::Static;
        spec_.type = detail::type_name<T>();
        if constexpr (std::is_same_v<T, std::string>) {
            if (!detail::is_utf8(value))
                throw InvalidArgument(fmt::format("StaticParameter '{}': the value is not valid UTF-8", spec_.name));
            spec_.fixed = std::move(value);
        } else if constexpr (std::is_integral_v<T>) {
            // A configuration holds a signed 64-bit integer: an unsigned one past it would wrap.
            if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(std::int64_t))
                if (value > static_cast<T>(std::numeric_limits<std::int64_t>::max()))
                    throw InvalidArgument(fmt::format("StaticParameter '{}': {} is past the largest integer a "
                                                      "configuration holds ({})",
                                                      spec_.name, value, std::numeric_limits<std::int64_t>::max()));
            spec_.fixed = static_cast<std::int64_t>(value);
        } else {
            static_assert(std::is_floating_point_v<T>, "StaticParameter holds an integer, a real or a string");
            if (!std::isfinite(static_cast<double>(value)))
                throw InvalidArgument(fmt::format("StaticParameter '{}': value must be finite", spec_.name));
            // A float as written (0.1f is 0.1, not 0.10000000149011612), as a float bound is.
            if constexpr (std::is_same_v<T, float>) spec_.fixed = detail::as_written(value);
            else spec_.fixed = static_cast<double>(value);
        }
    }

    [[nodiscard]] const ParameterSpec& spec() const noexcept { return spec_; }

private:
    ParameterSpec spec_;
};

StaticParameter(std::string, const char*) -> StaticParameter<std::string>;
StaticParameter(std::string, std::string_view) -> StaticParameter<std::string>;

template <class P>
concept Parameter = requires(const P& p) {
    typename P::value_type;
    { p.spec() } -> std::same_as<const ParameterSpec&>;
};

}  // namespace hypertune

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/parameter.hpp>
#endif
