// SPDX-License-Identifier: MIT
// hypertune::compiled: results (text, CSV, JSON) and the JSON forms of configurations and spaces.
#include <hypertune/impl/json.hpp>
#include <hypertune/impl/result.hpp>
