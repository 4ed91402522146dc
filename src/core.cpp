// SPDX-License-Identifier: MIT
// hypertune::compiled: parameters, the search space and configurations, the samplers and
// schedulers. One translation unit, so that the hot path of a suggestion (the scheduler, the
// sampler, decoding the unit cube) is inlined as in header-only mode.
#include <hypertune/impl/config.hpp>
#include <hypertune/impl/detail/promotion_rungs.hpp>
#include <hypertune/impl/detail/rung_ranking.hpp>
#include <hypertune/impl/detail/rungs.hpp>
#include <hypertune/impl/detail/synchronous_brackets.hpp>
#include <hypertune/impl/parameter.hpp>
#include <hypertune/impl/pareto.hpp>
#include <hypertune/impl/samplers/grid_sampler.hpp>
#include <hypertune/impl/samplers/random_sampler.hpp>
#include <hypertune/impl/scheduler.hpp>
#include <hypertune/impl/search_space.hpp>
#include <hypertune/impl/strategies/asha.hpp>
#include <hypertune/impl/strategies/hyperband.hpp>
