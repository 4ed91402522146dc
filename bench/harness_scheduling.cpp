// SPDX-License-Identifier: MIT
// Scheduling efficiency of the tuner: trials that sleep a known time (sleeping needs no core, so 8
// workers are meaningful on 2 cores). Prints total work W (summed trial time), wall time, the ideal
// W / P and their ratio: 1.00 means the tuner adds nothing to the wall time.
//   harness_scheduling [trials=10000] [milliseconds=5] [parallel=8]
#include "xgboost_space.hpp"

#include <hypertune/hypertune.hpp>

#include <chrono>
#include <cstdlib>
#include <thread>

namespace ht = hypertune;

int main(int argc, char** argv) {
    std::size_t trials = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10000;
    double ms = argc > 2 ? std::strtod(argv[2], nullptr) : 5.0;
    std::size_t parallel = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 8;
    auto duration = std::chrono::duration<double, std::milli>(ms);

    ht::Tuner tuner(ht::bench::xgboost_space(), ht::RandomSearch(),
                    {.max_jobs = trials, .max_parallel_jobs = parallel, .progress = ht::ProgressBar::Never});
    auto result = tuner.fit([&](const ht::Config&) {
        std::this_thread::sleep_for(duration);
        return 0.0;
    });
    auto cost = result.cost();
    double ideal = cost.busy_seconds / static_cast<double>(parallel);
    fmt::print("| trials | trial time | parallel | work W (s) | wall (s) | ideal W/P (s) | wall / ideal | utilisation |\n");
    fmt::print("|---|---|---|---|---|---|---|---|\n");
    fmt::print("| {} | {} ms | {} | {:.2f} | {:.2f} | {:.2f} | {:.4f} | {:.1f}% |\n", result.trials().size(), ms, parallel,
               cost.busy_seconds, cost.wall_seconds, ideal, cost.wall_seconds / ideal, 100.0 * cost.utilisation);
}
