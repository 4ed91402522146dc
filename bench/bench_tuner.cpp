// SPDX-License-Identifier: MIT
// The tuner's own cost: trials per second with an objective that does nothing, so that all that is
// measured is dispatch, bookkeeping and the strategy.
#include "xgboost_space.hpp"

#include <hypertune/hypertune.hpp>

#include <benchmark/benchmark.h>

namespace ht = hypertune;

namespace {

void BM_TunerNoOp(benchmark::State& state) {
    auto space = ht::bench::xgboost_space();
    auto threads = static_cast<std::size_t>(state.range(0));
    constexpr std::size_t trials = 100000;
    for (auto _ : state) {
        ht::Tuner tuner(space, ht::RandomSearch(),
                        {.max_jobs = trials, .max_parallel_jobs = threads, .progress = ht::ProgressBar::Never});
        auto result = tuner.fit([](const ht::Config&) { return 0.0; });
        benchmark::DoNotOptimize(result);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * trials));
}

void BM_TunerNoOpWithReports(benchmark::State& state) {
    auto space = ht::bench::xgboost_space();
    constexpr std::size_t trials = 20000;
    for (auto _ : state) {
        ht::Tuner tuner(space, ht::RandomSearch({.max_resource = 10}),
                        {.max_jobs = trials, .max_parallel_jobs = 1, .progress = ht::ProgressBar::Never});
        auto result = tuner.fit([](const ht::Config&, ht::Trial& trial) {
            for (ht::Resource s = 1; s <= trial.budget(); ++s) trial.report(s, 1.0 / static_cast<double>(s));
            return 0.1;
        });
        benchmark::DoNotOptimize(result);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * trials));
}

}  // namespace

BENCHMARK(BM_TunerNoOp)->Arg(1)->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TunerNoOpWithReports)->Unit(benchmark::kMillisecond)->UseRealTime();
