// SPDX-License-Identifier: MIT
// The tuner's own cost: trials per second with an objective that does nothing, so that all that is
// measured is dispatch, bookkeeping and the strategy.
#include "xgboost_space.hpp"

#include <hypertune/hypertune.hpp>
#include <hypertune/journal.hpp>
#include <hypertune/run_state.hpp>

#include <benchmark/benchmark.h>

#include <filesystem>

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

// The same with a journal: one line per event, flushed, and an fsync per trial (what makes a
// completed trial survive a crash). Optuna's JournalFileStorage adds 6-8 ms per trial.
void BM_TunerNoOpJournal(benchmark::State& state) {
    auto space = ht::bench::xgboost_space();
    constexpr std::size_t trials = 2000;
    auto path = std::filesystem::temp_directory_path() / "hypertune-bench-journal.jsonl";
    for (auto _ : state) {
        std::filesystem::remove(path);
        ht::Tuner tuner(space, ht::RandomSearch({.max_resource = 10}),
                        {.max_jobs = trials, .max_parallel_jobs = 1, .progress = ht::ProgressBar::Never,
                         .journal = path.string()});
        auto result = tuner.fit([](const ht::Config&, ht::Trial& trial) {
            for (ht::Resource s = 1; s <= trial.budget(); ++s) trial.report(s, 1.0 / static_cast<double>(s));
            return 0.1;
        });
        benchmark::DoNotOptimize(result);
    }
    std::filesystem::remove(path);
    state.counters["per_trial"] = benchmark::Counter(static_cast<double>(state.iterations() * trials),
                                                     benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// A journal of 10,000 trials of 10 reports each (about 15 MB), written once.
const std::string& big_journal() {
    static const std::string path = [] {
        auto p = (std::filesystem::temp_directory_path() / "hypertune-bench-load.jsonl").string();
        std::filesystem::remove(p);
        ht::Tuner tuner(ht::bench::xgboost_space(), ht::RandomSearch({.max_resource = 10}),
                        {.max_jobs = 10000, .progress = ht::ProgressBar::Never, .journal = p});
        (void)tuner.fit([](const ht::Config&, ht::Trial& trial) {
            for (ht::Resource s = 1; s <= trial.budget(); ++s) trial.report(s, 1.0 / static_cast<double>(s));
            return 0.1;
        });
        return p;
    }();
    return path;
}

// load_result: each event applied as it is read. Its peak memory, against the layout before
// (below), is what /usr/bin/time -v shows running each case alone:
//   /usr/bin/time -v build/bench/bench_tuner --benchmark_filter='LoadResult$'
//   /usr/bin/time -v build/bench/bench_tuner --benchmark_filter=LoadResultAllEventsFirst
void BM_LoadResult(benchmark::State& state) {
    const std::string& path = big_journal();
    for (auto _ : state) benchmark::DoNotOptimize(ht::load_result(path));
}

// The layout before: every event parsed and held, then applied.
void BM_LoadResultAllEventsFirst(benchmark::State& state) {
    const std::string& path = big_journal();
    for (auto _ : state) {
        const auto contents = ht::detail::read_journal(path);
        ht::RunState run;
        std::vector<ht::detail::JsonValue> events;  // every event parsed and held first
        for (const auto& text : contents.events) events.push_back(ht::detail::JsonValue::parse(text));
        for (const auto& event : events) run.apply(ht::detail::event_from_json(event, run.space()));
        benchmark::DoNotOptimize(std::move(run).result(true));
    }
}

// A resume of the same journal: the tuner replays it into the strategy and the state, and finds
// nothing left to run (max_jobs as the run had it). Peak memory:
//   /usr/bin/time -v build/bench/bench_tuner --benchmark_filter='Resume/'
void BM_Resume(benchmark::State& state) {
    const std::string& path = big_journal();
    const std::string copy = path + ".resumed.jsonl";
    for (auto _ : state) {
        state.PauseTiming();
        std::filesystem::copy_file(path, copy, std::filesystem::copy_options::overwrite_existing);
        state.ResumeTiming();
        ht::Tuner tuner(ht::bench::xgboost_space(), ht::RandomSearch({.max_resource = 10}),
                        {.max_jobs = 10000, .progress = ht::ProgressBar::Never, .journal = copy});
        benchmark::DoNotOptimize(tuner.fit([](const ht::Config&, ht::Trial&) { return 0.1; }));
    }
    std::filesystem::remove(copy);
}

// A run whose trainers report every minibatch: 20 trials of 100,000 reports (2 million curve
// points), made once.
const ht::Result& long_curves() {
    static const ht::Result result =
        ht::Tuner(ht::bench::xgboost_space(), ht::RandomSearch({.max_resource = 100000}),
                  {.max_jobs = 20, .progress = ht::ProgressBar::Never})
            .fit([](const ht::Config&, ht::Trial& trial) {
                for (ht::Resource s = 1; s <= trial.budget(); ++s) trial.report(s, 1.0 / static_cast<double>(s));
                return 1e-5;
            });
    return result;
}

// Result::to_json(path): written trial by trial. Its peak memory, against the whole document as
// one tree (below), is what /usr/bin/time -v shows running each case alone:
//   /usr/bin/time -v build/bench/bench_tuner --benchmark_filter='ResultToJson/'
//   /usr/bin/time -v build/bench/bench_tuner --benchmark_filter=ResultToJsonWholeTree
void BM_ResultToJson(benchmark::State& state) {
    const auto path = (std::filesystem::temp_directory_path() / "hypertune-bench-result.json").string();
    for (auto _ : state) long_curves().to_json(path);
    std::filesystem::remove(path);
}

// The layout before: the document built as one JSON tree, then written.
void BM_ResultToJsonWholeTree(benchmark::State& state) {
    const auto path = (std::filesystem::temp_directory_path() / "hypertune-bench-result.json").string();
    for (auto _ : state)
        ht::detail::write_whole_file(path, "JSON file", ht::detail::result_json(long_curves()).dump(2) + '\n');
    std::filesystem::remove(path);
}

}  // namespace

BENCHMARK(BM_Resume)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_ResultToJson)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_ResultToJsonWholeTree)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_LoadResult)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LoadResultAllEventsFirst)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TunerNoOpJournal)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TunerNoOp)->Arg(1)->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TunerNoOpWithReports)->Unit(benchmark::kMillisecond)->UseRealTime();
