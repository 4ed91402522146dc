// SPDX-License-Identifier: MIT
#pragma once
// The JSON forms of a configuration ({"name": value, ...} in parameter order), of a search space
// (an array of parameters) and of a run's objectives and constraints, as the journal and the
// results file hold them. The public
// Config::to_json, SearchSpace::to_json and SearchSpace::from_json (<hypertune/json.hpp>) are
// these, converted to nlohmann/json.

#include <hypertune/config.hpp>
#include <hypertune/detail/json_value.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/metrics.hpp>
#include <hypertune/search_space.hpp>

#include <vector>

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

/// The run's objectives and constraints as the journal's run_started and the results file hold
/// them (also what a resumed run must match). The readers throw IoError for an unknown direction
/// or kind.
[[nodiscard]] JsonValue objectives_to_json(const std::vector<Metric>& objectives);
[[nodiscard]] JsonValue constraints_to_json(const std::vector<Constraint>& constraints);
[[nodiscard]] std::vector<Metric> objectives_from_json(const JsonValue& j);
[[nodiscard]] std::vector<Constraint> constraints_from_json(const JsonValue& j);

}  // namespace hypertune::detail

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/detail/config_json.hpp>
#endif
