// SPDX-License-Identifier: MIT
// hypertune::compiled: CommandObjective (the trainer's process, its output and metrics, the
// command template), so that <regex> and the process handling stay in here.
#include <hypertune/impl/command_objective.hpp>
