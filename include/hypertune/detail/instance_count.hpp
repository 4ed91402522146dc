// SPDX-License-Identifier: MIT
#pragma once
// The instance count of a trial taken from one of its parameters (TunerOptions::instances_parameter,
// e.g. the worker count a distributed trainer runs with): which parameters can carry one, and the
// count a configuration holds. Billable time is elapsed x instances, so a trial on 4 workers costs
// four times one on 1 worker for the same time.

#include <hypertune/config.hpp>
#include <hypertune/error.hpp>
#include <hypertune/parameter.hpp>

#include <fmt/core.h>

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace hypertune::detail {

// "4" -> 4; anything else (" 4", "4.0", "four", out of range) -> nothing.
inline std::optional<std::int64_t> parse_count(std::string_view text) {
    std::int64_t n = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return n;
}

// Every value the parameter `name` can take, as integers; throws InvalidArgument (prefixed by
// `who`) naming the parameter when it is missing or not integer-valued.
inline std::vector<std::int64_t> count_values(const std::vector<ParameterSpec>& params, std::string_view name,
                                              std::string_view who) {
    const ParameterSpec* p = nullptr;
    std::string known;
    for (const auto& q : params) {
        if (q.name == name) p = &q;
        known += fmt::format("{}{}", known.empty() ? "" : ", ", q.name);
    }
    if (!p)
        throw InvalidArgument(fmt::format("{}: '{}' is not a parameter of the search space (it has: {})", who, name,
                                          known.empty() ? "none" : known));
    auto not_integer = [&](std::string_view why) {
        return InvalidArgument(fmt::format("{}: parameter '{}' must be integer-valued (an integer parameter, or a "
                                           "categorical one whose values are integers such as {{\"1\", \"2\", \"4\"}}): {}",
                                           who, name, why));
    };
    switch (p->kind) {
        case ParameterKind::Integer:
            // Its bounds are the extreme values it takes.
            return {static_cast<std::int64_t>(p->min), static_cast<std::int64_t>(p->max)};
        case ParameterKind::Categorical: {
            std::vector<std::int64_t> out;
            for (const auto& c : p->categories) {
                auto n = parse_count(c);
                if (!n) throw not_integer(fmt::format("its value \"{}\" is not an integer", c));
                out.push_back(*n);
            }
            return out;
        }
        case ParameterKind::Static:
            if (p->type == "bool") throw not_integer("it holds a bool, not a count");
            if (std::holds_alternative<double>(p->fixed))
                throw not_integer(fmt::format("its fixed value {} is a real number (give it as an integer: "
                                              "StaticParameter(\"{}\", 2), not 2.0)",
                                              format_value(p->fixed), name));
            if (const auto* n = std::get_if<std::int64_t>(&p->fixed)) return {*n};
            if (const auto* s = std::get_if<std::string>(&p->fixed))
                if (auto n = parse_count(*s)) return {*n};
            throw not_integer(fmt::format("its fixed value {} is not an integer", format_value(p->fixed)));
        case ParameterKind::Continuous: break;
    }
    throw not_integer("it is continuous");
}

// Checks that `name` names a parameter whose every value is a count in [1, most] (most: no upper
// bound when empty). Throws InvalidArgument naming the parameter and the offending value.
inline void check_count_parameter(const std::vector<ParameterSpec>& params, std::string_view name, std::string_view who,
                                  std::optional<std::int64_t> most = std::nullopt, std::string_view most_is = {}) {
    for (std::int64_t n : count_values(params, name, who)) {
        if (n < 1) throw InvalidArgument(fmt::format("{}: parameter '{}' can take the value {}; every value must be >= 1",
                                                     who, name, n));
        if (most && n > *most)
            throw InvalidArgument(fmt::format("{}: parameter '{}' can take the value {}, more than {} ({})", who, name, n,
                                              *most, most_is));
    }
}

// The count `cfg` holds in parameter `name` (checked up front with check_count_parameter).
inline std::int64_t count_in(const Config& cfg, std::string_view name) {
    const Value& v = cfg.value(name);
    if (const auto* n = std::get_if<std::int64_t>(&v)) return *n;
    if (const auto* s = std::get_if<std::string>(&v))
        if (auto n = parse_count(*s)) return *n;
    throw InvalidArgument(fmt::format("parameter '{}' holds {}, not an integer count", name, format_value(v)));
}

}  // namespace hypertune::detail
