// SPDX-License-Identifier: MIT
// Every public header, for the header-only link test (CMakeLists.txt here): both translation units
// include all of them, so a definition in a header that is not inline is defined twice and the
// link fails, naming it.
#pragma once

#include <string>

#include <hypertune/command_objective.hpp>
#include <hypertune/hypertune.hpp>
#include <hypertune/importance.hpp>
#include <hypertune/journal.hpp>
#include <hypertune/json.hpp>
#include <hypertune/report.hpp>
#include <hypertune/strategies/bayesian.hpp>
#include <hypertune/strategies/model_based.hpp>

namespace header_only_test {

/// Defined in first.cpp: a journaled ASHA run (promotion type).
hypertune::Result tune_with_journal(const std::string& journal);
/// Defined in first.cpp: tunes /bin/echo as a command, writes its files and report into `dir`;
/// returns the summary and the best configuration, formatted.
std::string run_a_command(const std::string& dir);

}  // namespace header_only_test
