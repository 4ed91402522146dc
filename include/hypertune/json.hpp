// SPDX-License-Identifier: MIT
#pragma once
// The JSON add-on: Config and SearchSpace to and from JSON (nlohmann/json), and the strict field
// readers the journal and the result loaders use. Kept apart so that a program using only the
// search space or a strategy does not compile nlohmann/json; the journal, the results and
// <hypertune/hypertune.hpp> include it.

#include <hypertune/config.hpp>
#include <hypertune/error.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/search_space.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace hypertune {

namespace detail {

/// A finite number as JSON, NaN and infinities as null (JSON has no NaN).
[[nodiscard]] inline nlohmann::ordered_json number_or_null(double x) {
    return std::isfinite(x) ? nlohmann::ordered_json(x) : nlohmann::ordered_json(nullptr);
}

/// An integer field. A real number is refused, not converted: out of range, that is undefined.
template <class T>
[[nodiscard]] T integer_at(const nlohmann::ordered_json& j, const char* key) {
    const auto& v = j.at(key);
    if (!v.is_number_integer()) throw IoError(fmt::format("'{}' must be an integer, got {}", key, v.dump()));
    return v.get<T>();
}

template <class T>
[[nodiscard]] T integer_or(const nlohmann::ordered_json& j, const char* key, T fallback) {
    return j.contains(key) ? integer_at<T>(j, key) : fallback;
}

/// Rebuilds a search space from SearchSpace::to_json() (what a journal's run_started holds).
/// Throws IoError naming the parameter for an unknown kind or scaling, or an integer bound that is
/// not an integer; nlohmann's exceptions for a missing field (the journal reader names the line).
[[nodiscard]] SearchSpace space_from_json(const nlohmann::ordered_json& j);

}  // namespace detail

}  // namespace hypertune

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/json.hpp>
#endif
