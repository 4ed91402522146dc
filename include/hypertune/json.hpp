// SPDX-License-Identifier: MIT
#pragma once
// The JSON add-on: the nlohmann/json forms of configurations, search spaces and results
// (Config::to_json, SearchSpace::to_json and from_json, Result::to_json), converted from the
// library's own JSON (detail/json_value.hpp), which the journal and the results file use. Kept
// apart so that only a program that asks for nlohmann/json compiles it: the tuner does not;
// <hypertune/hypertune.hpp> includes this header.

#include <hypertune/config.hpp>
#include <hypertune/detail/config_json.hpp>
#include <hypertune/detail/json_value.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/result.hpp>
#include <hypertune/search_space.hpp>

#include <nlohmann/json.hpp>

namespace hypertune::detail {

[[nodiscard]] nlohmann::ordered_json to_nlohmann(const JsonValue& v);

/// Throws InvalidArgument for what JSON text cannot hold (nlohmann's binary values).
[[nodiscard]] JsonValue from_nlohmann(const nlohmann::ordered_json& j);

/// space_from_json (detail/config_json.hpp) of a document held by nlohmann/json.
[[nodiscard]] SearchSpace space_from_json(const nlohmann::ordered_json& j);

}  // namespace hypertune::detail

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/json.hpp>
#endif
