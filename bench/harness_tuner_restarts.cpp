// SPDX-License-Identifier: MIT
// Filling idle workers through the Tuner, with a trainer that keeps a checkpoint and with one that
// keeps none. harness_recorded replays the schedulers on a simulated clock through their own
// interface; here the real Tuner runs them, on threads, with in-process objectives that sleep
// each unit's recorded time: the recorded learning curves of bench/data (XGBoost on Fashion-MNIST
// Pullover vs Coat, softmax regression on Fashion-MNIST), 81 configurations x 30 units, a unit
// taking its configuration's measured seconds / 30, times `scale`.
//   harness_tuner_restarts [orders=3] [scale=1] [data_dir=bench/data]
//
// A trainer that keeps a checkpoint continues a promoted trial from it; one that keeps none trains
// it again from unit 1 (the Tuner passes on no step it judged before). For each sampling order
// (RecordedSampler, as in harness_recorded), the defaults of asynchronous Hyperband and of ASHA
// (promotion type), with and without fill_idle_workers, at P = 4 and 16 workers, max_jobs = 81.
// Printed per row, over the orders: reach (the best final value within 0.002 of the file's best,
// which random search running all 81 finds), units trained (median), wall seconds (median) and
// utilisation = units' seconds / (P x wall) (mean). Filling should cost no wall time: a row with
// it should end no later than the same row without it.
#include "statistics.hpp"
#include "recorded_curves.hpp"
#include "xgboost_space.hpp"

#include <hypertune/strategies/asha.hpp>
#include <hypertune/strategies/hyperband.hpp>
#include <hypertune/tuner.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace ht = hypertune;

namespace {

using hypertune::bench::mean;
using hypertune::bench::median;

struct Task {
    const char* title;
    const char* file;
    ht::SearchSpace space;
    const char* metric;
};

struct Row {
    std::string scheduler;
    bool fill = true;
    bool checkpoints = true;
    std::size_t workers = 4;
    int reach = 0;
    std::vector<double> units, wall, utilisation;
};


ht::AnyStrategy make(const std::string& scheduler, bool fill, ht::bench::RecordedSampler sampler) {
    if (scheduler == "Hyperband")
        return ht::Hyperband({.min_resource = 1, .max_resource = 30, .eta = 3, .fill_idle_workers = fill},
                             std::move(sampler));
    return ht::ASHA({.min_resource = 1, .max_resource = 30, .reduction_factor = 3, .fill_idle_workers = fill},
                    std::move(sampler));
}

void run_task(const Task& task, const std::filesystem::path& dir, std::uint64_t orders, double scale) {
    const auto curves = ht::bench::read_curves(dir / task.file, task.space, task.metric);
    const ht::bench::RecordedProblem problem(curves);
    const auto configs = std::make_shared<const std::vector<ht::Config>>(curves.configs);
    double best = 0.0;  // random search's best final value: the file's
    for (const auto& v : curves.values) best = std::max(best, v.back());
    const ht::Resource R = curves.max_resource();

    std::vector<Row> rows;
    for (const char* scheduler : {"Hyperband", "ASHA"})
        for (std::size_t workers : {4, 16})
            for (bool checkpoints : {true, false})
                for (bool fill : {true, false}) rows.push_back(Row{scheduler, fill, checkpoints, workers, 0, {}, {}, {}});

    for (std::uint64_t o = 0; o < orders; ++o) {
        const auto order = ht::bench::permutation(curves.size(), o);
        for (Row& row : rows) {
            std::atomic<long> units{0};
            std::atomic<long> busy_us{0};
            auto objective = [&](const ht::Config& c, ht::Trial& trial) {
                const ht::bench::RecordedCurve curve = problem.curve(c);
                const auto unit = std::chrono::microseconds(static_cast<long>(curve.unit_seconds * scale * 1e6));
                ht::Resource from = 0;
                if (row.checkpoints && trial.checkpoint()) from = std::stoll(*trial.checkpoint());
                double loss = 0.0;
                for (ht::Resource r = from + 1; r <= trial.budget(); ++r) {
                    std::this_thread::sleep_for(unit);
                    ++units;
                    busy_us += unit.count();
                    trial.report(r, loss = curve.loss(r));
                    if (trial.should_stop()) break;
                    if (row.checkpoints) trial.save_checkpoint(std::to_string(r));
                }
                return loss;
            };
            ht::Tuner tuner(task.space, make(row.scheduler, row.fill, ht::bench::RecordedSampler(configs, order)),
                            {.max_jobs = curves.size(), .max_parallel_jobs = row.workers, .seed = o,
                             .progress = ht::ProgressBar::Never});
            const auto began = std::chrono::steady_clock::now();
            const ht::Result result = tuner.fit(objective);
            const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
            double found = 0.0;
            for (const auto& t : result.trials())
                if (t.resource_used >= R && t.has_objective()) found = std::max(found, 1.0 - t.objective);
            row.reach += found >= best - 0.002;
            row.units.push_back(static_cast<double>(units.load()));
            row.wall.push_back(wall);
            row.utilisation.push_back(static_cast<double>(busy_us.load()) * 1e-6 /
                                      (static_cast<double>(row.workers) * wall));
        }
    }

    fmt::print("## {}\n\n", task.title);
    fmt::print("| scheduler | P | checkpoints | fill idle workers | reach | units | wall s | utilisation |\n");
    fmt::print("|---|---|---|---|---|---|---|---|\n");
    for (const Row& row : rows)
        fmt::print("| {} | {} | {} | {} | {}/{} | {:.0f} | {:.2f} | {:.1f}% |\n", row.scheduler, row.workers,
                   row.checkpoints ? "kept" : "none", row.fill ? "yes" : "no", row.reach, orders, median(row.units),
                   median(row.wall), 100.0 * mean(row.utilisation));
    fmt::print("\n");
}

}  // namespace

int main(int argc, char** argv) try {
    const std::uint64_t orders = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 3;
    const double scale = argc > 2 ? std::strtod(argv[2], nullptr) : 1.0;
    const std::filesystem::path dir = argc > 3 ? std::filesystem::path(argv[3]) : HYPERTUNE_BENCH_DATA_DIR;
    if (orders == 0 || !(scale > 0.0) || argc > 4) {
        fmt::print(stderr, "usage: harness_tuner_restarts [orders>=1] [scale>0] [data_dir]\n");
        return 2;
    }
    const std::vector<Task> tasks = {
        {"XGBoost, Fashion-MNIST Pullover vs Coat", "xgboost_pullover_coat.csv", ht::bench::xgboost_space(), "auc"},
        {"Softmax regression by SGD, Fashion-MNIST", "softmax_fashion_mnist.csv", ht::bench::softmax_space(),
         "accuracy"},
    };
    fmt::print("Through the Tuner: {} orders, each unit its recorded seconds x {}\n\n", orders, scale);
    for (const auto& task : tasks) run_task(task, dir, orders, scale);
    return 0;
} catch (const std::exception& e) {
    fmt::print(stderr, "harness_tuner_restarts: {}\n", e.what());
    return 2;
}
