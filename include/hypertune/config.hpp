// SPDX-License-Identifier: MIT
#pragma once
// Config: one assignment of values to the parameters of a search space, with typed access by name
// (cfg.get<double>("eta")) or by the handle that SearchSpace::add returned (cfg[eta]).

#include <hypertune/linkage.hpp>
#include <hypertune/error.hpp>
#include <hypertune/parameter.hpp>

#include <fmt/core.h>
#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace hypertune {

/// A typed reference to a parameter of one search space, returned by SearchSpace::add.
/// cfg[handle] returns a T with no name lookup and no cast.
template <class T>
struct ParameterHandle {
    std::size_t index = 0;
};

namespace detail {

using Layout = std::vector<ParameterSpec>;

template <class T>
constexpr bool is_text_v = std::is_same_v<T, std::string> || std::is_same_v<T, std::string_view>;

// The name of the type a parameter holds, for error messages.
inline std::string declared_type(const ParameterSpec& p) {
    if (p.kind == ParameterKind::Static) return fmt::format("static {}", p.type);
    return fmt::format("{}", p.type);
}

// What a value holds, for the message of a configuration whose value does not match its parameter
// (one built by hand, not by the search space).
[[nodiscard]] inline std::string_view held_type(const Value& v) noexcept {
    return std::holds_alternative<std::int64_t>(v) ? "an integer" : std::holds_alternative<double>(v) ? "a real" : "text";
}

template <class T>
T convert_value(const ParameterSpec& p, const Value& v) {
    auto mismatch = [&] {
        if (p.type == type_name<T>())  // the type asked for is the declared one: the value is what is wrong
            return InvalidArgument(fmt::format("parameter '{}' is declared {} ({}) but this configuration holds {} for "
                                               "it: the configuration was not made by its search space",
                                               p.name, declared_type(p), to_string(p.kind), held_type(v)));
        return InvalidArgument(fmt::format("parameter '{}' holds {} ({}), not {}", p.name, declared_type(p),
                                           to_string(p.kind), type_name<T>()));
    };
    if constexpr (std::is_same_v<T, bool>) {
        // Only a StaticParameter holds a bool (as 0 or 1); a tuned one is a CategoricalParameter.
        const auto* x = std::get_if<std::int64_t>(&v);
        if (p.kind == ParameterKind::Static && p.type == type_name<bool>() && x) return *x != 0;
        throw mismatch();
    } else if constexpr (std::is_integral_v<T>) {
        auto* x = std::get_if<std::int64_t>(&v);
        if (!x) throw mismatch();
        if (*x < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
            (*x > 0 && static_cast<std::uint64_t>(*x) > static_cast<std::uint64_t>(std::numeric_limits<T>::max())))
            throw InvalidArgument(fmt::format("parameter '{}': value {} does not fit in {}", p.name, *x, type_name<T>()));
        return static_cast<T>(*x);
    } else if constexpr (std::is_floating_point_v<T>) {
        auto* x = std::get_if<double>(&v);
        if (!x) throw mismatch();
        return static_cast<T>(*x);
    } else if constexpr (is_text_v<T>) {
        auto* x = std::get_if<std::string>(&v);
        if (!x) throw mismatch();
        return T(*x);
    } else {
        static_assert(!sizeof(T), "Config::get<T>: T must be an integer, a floating-point or a string type");
    }
}

}  // namespace detail

/// One configuration: a value for every parameter of the search space it came from.
class Config {
public:
    Config() = default;
    Config(std::shared_ptr<const detail::Layout> layout, std::vector<Value> values)
        : layout_(std::move(layout)), values_(std::move(values)) {}

    [[nodiscard]] std::size_t size() const noexcept { return values_.size(); }
    [[nodiscard]] bool empty() const noexcept { return values_.empty(); }
    /// The i-th parameter's name, value and description; InvalidArgument when i >= size().
    [[nodiscard]] const std::string& name(std::size_t i) const { return parameter(i).name; }
    [[nodiscard]] const Value& value(std::size_t i) const {
        require_index(i);
        return values_[i];
    }
    [[nodiscard]] const std::vector<Value>& values() const noexcept { return values_; }
    [[nodiscard]] const ParameterSpec& parameter(std::size_t i) const {
        require_index(i);
        return (*layout_)[i];
    }

    [[nodiscard]] bool contains(std::string_view name) const noexcept { return find(name) != npos; }

    /// The index of `name`; throws InvalidArgument listing the known names when it is unknown.
    [[nodiscard]] std::size_t index_of(std::string_view name) const;

    [[nodiscard]] const Value& value(std::string_view name) const { return values_[index_of(name)]; }

    /// The value of `name` as a T. Integer parameters convert to any integral type it fits in,
    /// continuous ones to any floating-point type, categorical ones to std::string(_view).
    template <class T>
    [[nodiscard]] T get(std::string_view name) const {
        auto i = index_of(name);
        return detail::convert_value<T>((*layout_)[i], values_[i]);
    }

    template <class T>
    [[nodiscard]] T operator[](ParameterHandle<T> h) const {
        if (h.index >= values_.size())
            throw InvalidArgument(fmt::format("parameter handle #{} does not belong to this configuration", h.index));
        return detail::convert_value<T>((*layout_)[h.index], values_[h.index]);
    }

    /// The same values of parameters of the same names, in the same order ({a=0.5} is not {b=0.5}).
    friend bool operator==(const Config& a, const Config& b) {
        if (a.values_ != b.values_) return false;
        if (a.layout_ == b.layout_) return true;
        for (std::size_t i = 0; i < a.values_.size(); ++i)
            if ((*a.layout_)[i].name != (*b.layout_)[i].name) return false;
        return true;
    }

    /// {"name": value, ...} in parameter order. Defined in <hypertune/json.hpp>, which brings in
    /// nlohmann/json (<hypertune/hypertune.hpp> includes it).
    [[nodiscard]] nlohmann::ordered_json to_json() const;

private:
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);

    void require_index(std::size_t i) const {
        if (i >= values_.size() || !layout_)
            throw InvalidArgument(fmt::format("Config: parameter #{} asked of a configuration of {} parameters", i,
                                              values_.size()));
    }

    [[nodiscard]] std::size_t find(std::string_view name) const noexcept {
        if (!layout_) return npos;
        for (std::size_t i = 0; i < values_.size(); ++i)
            if ((*layout_)[i].name == name) return i;
        return npos;
    }

    std::shared_ptr<const detail::Layout> layout_;
    std::vector<Value> values_;
};

/// Formats a value as text: integers plainly, reals with the shortest exact form, text as is.
[[nodiscard]] inline std::string format_value(const Value& v) {
    return std::visit([](const auto& x) { return fmt::format("{}", x); }, v);
}

}  // namespace hypertune

/// fmt support: prints {name=value, ...}. No format spec is taken: reusing formatter<string_view>'s
/// spec parser made GCC 12 warn (-Wstringop-overflow, a false positive inside fmt 9) in every
/// program that formats a Config with -O3 -Wall.
template <>
struct fmt::formatter<hypertune::Config> {
    constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }

    template <class Ctx>
    auto format(const hypertune::Config& c, Ctx& ctx) const {
        auto out = fmt::format_to(ctx.out(), "{{");
        for (std::size_t i = 0; i < c.size(); ++i)
            out = fmt::format_to(out, "{}{}={}", i ? ", " : "", c.name(i), hypertune::format_value(c.value(i)));
        return fmt::format_to(out, "}}");
    }
};

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/config.hpp>
#endif
