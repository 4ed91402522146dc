// SPDX-License-Identifier: MIT
#pragma once
// The core of hypertune: search space, configurations, trials, samplers and schedulers (random and
// grid search, Hyperband, ASHA, median stopping), the tuner, several objectives and constraints
// (metrics.hpp, pareto.hpp), results and the journal. Bayesian and
// model-based strategies (they need LBFGSpp), the report, CommandObjective and mpi.hpp are included
// on their own.

#include <hypertune/linkage.hpp>  // first: it refuses a standard older than C++20
#include <hypertune/config.hpp>
#include <hypertune/error.hpp>
#include <hypertune/metrics.hpp>
#include <hypertune/objective.hpp>
#include <hypertune/parameter.hpp>
#include <hypertune/pareto.hpp>
#include <hypertune/result.hpp>
#include <hypertune/sampler.hpp>
#include <hypertune/samplers/grid_sampler.hpp>
#include <hypertune/samplers/random_sampler.hpp>
#include <hypertune/scheduler.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/strategies/asha.hpp>
#include <hypertune/strategies/grid_search.hpp>
#include <hypertune/strategies/hyperband.hpp>
#include <hypertune/strategies/median_stopping.hpp>
#include <hypertune/strategies/random_search.hpp>
#include <hypertune/strategy.hpp>
#include <hypertune/trial.hpp>
#include <hypertune/tuner.hpp>
#include <hypertune/version.hpp>
#include <hypertune/warm_start.hpp>

// Header-only, this header has always given the nlohmann/json members (Config::to_json, ...)
// their definitions; in compiled mode they are in the library, and a file that uses their values
// includes <hypertune/json.hpp> itself, so that the others do not parse nlohmann/json.
#ifndef HYPERTUNE_COMPILED
#include <hypertune/json.hpp>
#endif
