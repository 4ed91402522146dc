// SPDX-License-Identifier: MIT
// Non-dominated sorting, which Result::pareto_front(), summary(), to_csv(), the report and MO-ASHA's
// rung ranking rest on: hypertune's efficient non-dominated sort beside Deb's fast non-dominated
// sort (NSGA-II, 2002; the layout before), which keeps every dominating pair, on the same random
// points (a run's objectives as random search spreads them), in one run:
//   build/bench/bench_pareto
// Each case's "pairs_MB" counter is the memory the dominating pairs take (the fast sort's lists).
#include <hypertune/pareto.hpp>

#include <benchmark/benchmark.h>

#include <random>
#include <vector>

namespace {

using Points = std::vector<std::vector<double>>;

// d independent uniform objectives per point.
Points random_points(std::size_t n, std::size_t d) {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    Points points(n, std::vector<double>(d));
    for (auto& p : points)
        for (auto& x : p) x = unit(rng);
    return points;
}

// Deb et al. 2002, as hypertune had it: every pair compared, each point's dominated list kept.
std::vector<std::size_t> fast_non_dominated_sort(const Points& points, std::size_t& pairs) {
    const std::size_t n = points.size();
    std::vector<std::size_t> rank(n, 0), dominated_by(n, 0);
    std::vector<std::vector<std::size_t>> dominates_list(n);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j) {
            if (hypertune::dominates(points[i], points[j])) {
                dominates_list[i].push_back(j);
                ++dominated_by[j];
            } else if (hypertune::dominates(points[j], points[i])) {
                dominates_list[j].push_back(i);
                ++dominated_by[i];
            }
        }
    pairs = 0;
    for (const auto& l : dominates_list) pairs += l.size();
    std::vector<std::size_t> current;
    for (std::size_t i = 0; i < n; ++i)
        if (dominated_by[i] == 0) current.push_back(i);
    for (std::size_t r = 0; !current.empty(); ++r) {
        std::vector<std::size_t> next;
        for (std::size_t i : current) {
            rank[i] = r;
            for (std::size_t j : dominates_list[i])
                if (--dominated_by[j] == 0) next.push_back(j);
        }
        current = std::move(next);
    }
    return rank;
}

void BM_EfficientNonDominatedSort(benchmark::State& state) {
    const Points points = random_points(static_cast<std::size_t>(state.range(0)), static_cast<std::size_t>(state.range(1)));
    for (auto _ : state) benchmark::DoNotOptimize(hypertune::non_dominated_ranks(points));
    state.counters["pairs_MB"] = 0.0;
}

void BM_DebFastNonDominatedSort(benchmark::State& state) {
    const Points points = random_points(static_cast<std::size_t>(state.range(0)), static_cast<std::size_t>(state.range(1)));
    std::size_t pairs = 0;
    for (auto _ : state) benchmark::DoNotOptimize(fast_non_dominated_sort(points, pairs));
    state.counters["pairs_MB"] = static_cast<double>(pairs * sizeof(std::size_t)) / 1e6;
}

void sizes(benchmark::internal::Benchmark* b) {
    for (long d : {2, 3})
        for (long n : {1000, 5000, 20000}) b->Args({n, d});
    b->Unit(benchmark::kMillisecond);
}

}  // namespace

BENCHMARK(BM_EfficientNonDominatedSort)->Apply(sizes);
BENCHMARK(BM_DebFastNonDominatedSort)->Apply(sizes);
