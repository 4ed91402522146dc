// SPDX-License-Identifier: MIT
// Accuracy against time when a trainer scales out: the worker count is tuned together with the
// learning rate, per-worker batch and momentum, for two objectives (test accuracy, maximised; time
// to train, minimised) under a cost limit in billable rank-seconds (workers x seconds). The result
// is the Pareto front: for each training time, the best accuracy found, and with which worker
// count and hyperparameters.
//
//   build/examples/scale_out_trade_off
//
// The trainer here is a cost and convergence model of data-parallel SGD, not a real run, so that
// the example runs in a second anywhere. Its shape follows what scaling out does: the global batch
// is workers x per-worker batch, and fewer, larger steps make an epoch faster; the learning rate
// that works grows with the global batch (the linear scaling rule) while large global batches
// generalise worse; each step pays a fixed overhead and, with several workers, a gradient
// all-reduce that grows with log2(workers), so more workers cost more rank-seconds. A real trainer
// returns the same metrics from a measured run (see examples/mpi_data_parallel.cpp for a trainer
// under MPI).

#include <hypertune/hypertune.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

namespace ht = hypertune;

namespace {

struct Run {
    double accuracy;
    double train_seconds;
    double rank_seconds;
};

Run train(int workers, double learning_rate, int batch, double momentum) {
    constexpr int epochs = 10;
    constexpr double samples = 60000, seconds_per_sample = 0.002, step_overhead = 0.05, allreduce = 0.03;
    const double global_batch = workers * batch;
    const double good_lr = 0.05 * global_batch / 256.0;  // the linear scaling rule
    const double lr_miss = std::log10(learning_rate / good_lr);
    const double accuracy = 0.93 - 0.05 * lr_miss * lr_miss - 0.015 * std::max(0.0, std::log2(global_batch / 256.0)) -
                            0.3 * (momentum - 0.9) * (momentum - 0.9);
    const double steps = samples / global_batch;
    const double step_seconds = step_overhead + batch * seconds_per_sample + allreduce * std::log2(workers);
    const double train_seconds = epochs * steps * step_seconds;
    return {accuracy, train_seconds, workers * train_seconds};
}

}  // namespace

int main() {
    ht::SearchSpace space;
    auto workers = space.add(ht::CategoricalParameter("workers", {"1", "2", "4"}));
    auto lr = space.add(ht::ContinuousParameter("learning_rate", 1e-3, 1.0, ht::Scaling::Logarithmic));
    auto batch = space.add(ht::IntegerParameter("batch", 32, 512, ht::Scaling::Logarithmic));
    auto momentum = space.add(ht::ContinuousParameter("momentum", 0.5, 0.99));

    ht::TunerOptions options;
    options.objectives = {{"accuracy", ht::Direction::Maximize}, {"train_seconds", ht::Direction::Minimize}};
    options.constraints = {ht::Constraint::at_most("rank_seconds", 2000.0)};  // the cost limit
    options.max_jobs = 300;
    options.max_parallel_jobs = 2;
    options.seed = 3;
    options.instances_parameter = "workers";  // the run's own billable time counts each trial's workers
    ht::Tuner tuner(space, ht::RandomSearch(), options);
    ht::Result result = tuner.fit([&](const ht::Config& c) {
        Run r = train(std::stoi(c[workers]), c[lr], c[batch], c[momentum]);
        return ht::Metrics{{"accuracy", r.accuracy}, {"train_seconds", r.train_seconds}, {"rank_seconds", r.rank_seconds}};
    });

    fmt::print("{}", result.summary());
    // What the front says: the best accuracy each worker count reaches on it, and in what time.
    std::map<std::string, const ht::TrialRecord*> best_per_size;
    const auto front = result.pareto_front();
    for (const auto& t : front) {
        auto& slot = best_per_size[t.config[workers]];
        if (!slot || t.values[0] > slot->values[0]) slot = &t;
    }
    fmt::print("\nOn the front, by worker count:\n");
    for (const auto& [size, t] : best_per_size)
        fmt::print("  {} worker(s): accuracy {:.4f} in {:.0f} s ({:.0f} rank-seconds), learning rate {:.3g}, batch {} "
                   "per worker, momentum {:.2f}\n",
                   size, t->values[0], t->values[1], t->values[2], t->config[lr], t->config[batch], t->config[momentum]);
    fmt::print("hypervolume against (accuracy 0.8, 3,000 s): {:.1f}\n", result.hypervolume({0.8, 3000.0}));
    return front.empty() ? 1 : 0;
}
