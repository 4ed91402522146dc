// SPDX-License-Identifier: MIT
// Cost of a strategy per trial (ask + tell, no objective) on the 7-parameter XGBoost space, after
// n trials. "per_trial" is the figure to compare with Optuna's ~1 ms per trial (RandomSampler).
#include "xgboost_space.hpp"

#include <hypertune/strategies/grid_search.hpp>
#include <hypertune/strategies/random_search.hpp>

#include <benchmark/benchmark.h>

namespace ht = hypertune;

namespace {

template <class S>
void ask_tell(benchmark::State& state, S strategy) {
    auto space = ht::bench::xgboost_space();
    auto n = static_cast<std::size_t>(state.range(0));
    std::size_t trials = 0;
    for (auto _ : state) {
        state.PauseTiming();
        S s = strategy;
        s.start(space, {.seed = 1, .max_trials = n});
        state.ResumeTiming();
        for (std::size_t i = 0; i < n; ++i) {
            auto suggestion = s.ask();
            benchmark::DoNotOptimize(suggestion);
            s.tell(suggestion.trial, ht::Outcome::completed(static_cast<double>(i % 17), suggestion.budget));
        }
        trials += n;
    }
    // seconds of CPU per trial, printed with an SI prefix (e.g. 85n = 85 ns)
    state.counters["per_trial"] =
        benchmark::Counter(static_cast<double>(trials), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_RandomSearch(benchmark::State& state) { ask_tell(state, ht::RandomSearch()); }
void BM_GridSearch(benchmark::State& state) {
    ht::GridSearchOptions options;
    for (const char* name : {"eta", "min_child_weight", "alpha", "colsample_bylevel", "colsample_bytree"})
        options.points[name] = 4;
    ask_tell(state, ht::GridSearch(options));
}

}  // namespace

BENCHMARK(BM_RandomSearch)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GridSearch)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);
