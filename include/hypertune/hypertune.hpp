// SPDX-License-Identifier: MIT
#pragma once
// The core of hypertune: search space, configurations, trials, strategies, the tuner, results and
// the journal.

#include <hypertune/config.hpp>
#include <hypertune/error.hpp>
#include <hypertune/journal.hpp>
#include <hypertune/objective.hpp>
#include <hypertune/parameter.hpp>
#include <hypertune/result.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/strategies/grid_search.hpp>
#include <hypertune/strategies/random_search.hpp>
#include <hypertune/strategy.hpp>
#include <hypertune/trial.hpp>
#include <hypertune/tuner.hpp>
#include <hypertune/version.hpp>
#include <hypertune/warm_start.hpp>
