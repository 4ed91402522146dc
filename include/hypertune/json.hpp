// SPDX-License-Identifier: MIT
#pragma once
// The JSON add-on: Config and SearchSpace to and from JSON (nlohmann/json). Kept apart so that a
// program using only the search space or a strategy does not compile nlohmann/json; the journal,
// the results and <hypertune/hypertune.hpp> include it.

#include <hypertune/config.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/search_space.hpp>

#include <nlohmann/json.hpp>

#include <cmath>

namespace hypertune {

namespace detail {

/// A finite number as JSON, NaN and infinities as null (JSON has no NaN).
[[nodiscard]] inline nlohmann::json number_or_null(double x) {
    return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr);
}

}  // namespace detail

}  // namespace hypertune

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/json.hpp>
#endif
