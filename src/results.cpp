// SPDX-License-Identifier: MIT
// hypertune::compiled: results (text, CSV, JSON), the library's JSON reader and writer, and the JSON
// forms of configurations and spaces (its own, and nlohmann/json's for the JSON add-on).
#include <hypertune/impl/detail/config_json.hpp>
#include <hypertune/impl/detail/json_value.hpp>
#include <hypertune/impl/json.hpp>
#include <hypertune/impl/result.hpp>
