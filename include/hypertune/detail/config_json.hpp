// SPDX-License-Identifier: MIT
#pragma once
// The JSON forms of a configuration ({"name": value, ...} in parameter order) and of a search
// space (an array of parameters), as the journal and the results file hold them. The public
// Config::to_json, SearchSpace::to_json and SearchSpace::from_json (<hypertune/json.hpp>) are
// these, converted to nlohmann/json.

#include <hypertune/config.hpp>
#include <hypertune/detail/json_value.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/search_space.hpp>

namespace hypertune::detail {

[[nodiscard]] JsonValue config_json(const Config& config);

/// The configuration of `space` that `j` describes. Static parameters may be omitted (they take
/// their fixed value). Throws InvalidArgument naming an unknown or missing parameter, or a value of
/// the wrong type; SearchSpace::make's errors for a value out of range.
[[nodiscard]] Config config_from_json(const SearchSpace& space, const JsonValue& j);

[[nodiscard]] JsonValue space_json(const SearchSpace& space);

/// Rebuilds a search space from space_json() (what a journal's run_started holds). Throws IoError
/// naming the parameter for an unknown kind or scaling, or an integer bound that is not an integer;
/// JsonError for a missing field (the journal reader names the line).
[[nodiscard]] SearchSpace space_from_json(const JsonValue& j);

}  // namespace hypertune::detail

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/detail/config_json.hpp>
#endif
