// SPDX-License-Identifier: MIT
// Cost of one Bayesian suggestion (ask + tell) after n completed trials, on the 7-parameter XGBoost
// space. The strategy is prefilled with n results of a synthetic loss (outside the timing), then
// each iteration times one ask() and the tell() of its result, so the hyperparameter refits that
// fall due on the schedule (every 5 results) are included in the average.
#include "xgboost_space.hpp"

#include <hypertune/strategies/bayesian.hpp>

#include <benchmark/benchmark.h>

#include <cmath>

namespace {

namespace ht = hypertune;

void ask_tell(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const auto space = ht::bench::xgboost_space();
    ht::Bayesian strategy;
    strategy.start(space, {42, 0});
    for (std::size_t i = 0; i < n; ++i) {
        auto s = strategy.ask();
        strategy.tell(s.trial, ht::Outcome::completed(ht::bench::synthetic_loss(s.config), 1));
    }
    for (auto _ : state) {
        auto s = strategy.ask();
        strategy.tell(s.trial, ht::Outcome::completed(ht::bench::synthetic_loss(s.config), 1));
        benchmark::DoNotOptimize(s);
    }
    state.counters["model_fits"] = static_cast<double>(strategy.model_fits());
}

}  // namespace

// 10 iterations each: the next 10 suggestions after n results (two refits at n >= 20).
BENCHMARK(ask_tell)->Arg(50)->Arg(200)->Arg(1000)->Iterations(10)->Unit(benchmark::kMillisecond);
