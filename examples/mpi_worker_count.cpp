// SPDX-License-Identifier: MIT
// The worker count as a hyperparameter, over MPI: accuracy against rank-seconds.
//
//   mpirun -n 5 build/examples/mpi/mpi_worker_count [fashion-mnist dir]
//
// A data-parallel trainer (softmax regression by minibatch SGD, gradients summed with
// MPI_Allreduce: examples/mpi/softmax_sgd.hpp) is tuned over its learning rate, per-worker batch
// and momentum, and over how many workers train it: workers in {1, 2, 4}. hypertune::mpi::fit
// forms a group of that many ranks for each trial (MpiOptions::ranks_parameter), packing groups of
// different sizes onto the 4 training ranks as trials start and end. Two objectives: validation
// accuracy (maximised) and the rank-seconds the training took (workers x its wall time,
// minimised). The result is the Pareto front, read by worker count.
//
// The data is Fashion-MNIST (10,000 training images pooled 2x2 to 196 features) when its files
// are found, else a synthetic 10-class problem of the same shape, so the example runs anywhere MPI
// and zlib are installed.

#include <hypertune/hypertune.hpp>
#include <hypertune/mpi.hpp>

#include "mpi/softmax_sgd.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#ifndef HYPERTUNE_FASHION_MNIST_DIR
#define HYPERTUNE_FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"
#endif

namespace ht = hypertune;

namespace {

constexpr std::uint64_t data_seed = 42;

// Ten classes around random centres in [0, 1]^196, with enough noise that they overlap.
softmax_sgd::Data synthetic(std::size_t rows, std::mt19937_64& rng, const softmax_sgd::Matrix& centres) {
    std::normal_distribution<float> noise(0.0f, 0.9f);
    std::uniform_int_distribution<int> label(0, softmax_sgd::classes - 1);
    softmax_sgd::Data d;
    d.x.resize(static_cast<Eigen::Index>(rows), centres.cols() + 1);
    d.y.resize(rows);
    for (std::size_t r = 0; r < rows; ++r) {
        const int y = label(rng);
        d.y[r] = y;
        for (Eigen::Index c = 0; c < centres.cols(); ++c)
            d.x(static_cast<Eigen::Index>(r), c) = centres(y, c) + noise(rng);
        d.x(static_cast<Eigen::Index>(r), centres.cols()) = 1.0f;
    }
    return d;
}

softmax_sgd::Splits load_or_make(const std::string& dir, std::size_t train, std::size_t valid, std::size_t test,
                                 bool& real) {
    real = std::filesystem::exists(std::filesystem::path(dir) / "train-images-idx3-ubyte.gz");
    if (real) return softmax_sgd::load(dir, train, valid, test, /*pool=*/true, data_seed);
    std::mt19937_64 rng{data_seed};
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    softmax_sgd::Matrix centres(softmax_sgd::classes, 196);
    for (Eigen::Index i = 0; i < centres.size(); ++i) centres.data()[i] = unit(rng);
    return {synthetic(train, rng, centres), synthetic(valid, rng, centres), synthetic(test, rng, centres)};
}

}  // namespace

int main(int argc, char** argv) {
    ht::mpi::Environment env(argc, argv);
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 5) {
        if (rank == 0) std::fprintf(stderr, "run with at least 5 ranks (groups of up to 4): mpirun -n 5 %s\n", argv[0]);
        return 2;
    }
    const bool quick = std::getenv("HYPERTUNE_CTEST") != nullptr;  // ctest: a short budget
    const std::string dir = argc > 1 ? argv[1] : HYPERTUNE_FASHION_MNIST_DIR;
    const int epochs = quick ? 2 : 5;
    const std::size_t max_jobs = quick ? 18 : 60;

    bool real = false;
    softmax_sgd::Splits data;
    try {
        data = load_or_make(dir, quick ? 6'000 : 10'000, 2'000, 2'000, real);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    ht::SearchSpace space;
    auto workers = space.add(ht::CategoricalParameter("workers", {"1", "2", "4"}));
    auto lr = space.add(ht::ContinuousParameter("learning_rate", 1e-3, 3.0));  // Auto: log scale
    auto batch = space.add(ht::IntegerParameter("batch_per_worker", 8, 128, ht::Scaling::Logarithmic));
    auto momentum = space.add(ht::ContinuousParameter("momentum", 0.0, 0.95, ht::Scaling::ReverseLogarithmic));

    ht::TunerOptions options{.metric = "accuracy", .direction = ht::Direction::Maximize,
                             .objectives = {{"accuracy", ht::Direction::Maximize}, {"rank_seconds", ht::Direction::Minimize}},
                             .max_jobs = max_jobs, .seed = 11, .progress = ht::ProgressBar::Never};
    ht::mpi::MpiResult result = ht::mpi::fit(
        MPI_COMM_WORLD, space, ht::RandomSearch(), options, {.ranks_parameter = "workers"},
        [&](const ht::Config& cfg, ht::mpi::GroupTrial& trial, MPI_Comm group) {
            // Exactly the job of `workers` real workers: global batch = workers x per-worker batch.
            softmax_sgd::Hyper h{.learning_rate = cfg[lr], .batch_per_worker = cfg[batch], .momentum = cfg[momentum],
                                 .workers = trial.size()};
            softmax_sgd::Trainer trainer(data.train, h, group, data_seed);
            double seconds = 0.0;
            for (int e = 0; e < epochs && !trainer.diverged(); ++e) seconds += trainer.epoch();
            // The slowest rank sets the time; every rank holds the same weights.
            double longest = 0.0;
            MPI_Allreduce(&seconds, &longest, 1, MPI_DOUBLE, MPI_MAX, group);
            const double accuracy = trainer.diverged() ? 0.0 : softmax_sgd::accuracy(trainer.weights(), data.valid);
            return ht::Metrics{{"accuracy", accuracy}, {"rank_seconds", trial.size() * longest}};
        });
    if (rank != 0) return 0;

    std::printf("%s: %zu training rows, %d epochs per trial, %zu trials; workers in {1, 2, 4} on %d training ranks\n",
                real ? "Fashion-MNIST (10 classes, 196 features)" : "synthetic 10-class data (Fashion-MNIST not found)",
                data.train.y.size(), epochs, result.trials().size(), size - 1);
    std::printf("%s\n", result.rank_usage().summary().c_str());
    // The tuner bills elapsed x ranks from the moment a trial has its ranks (the wait before is
    // TrialRecord::waited_seconds); the ranks' own account adds the messages around a trial.
    double waited = 0.0;
    for (const auto& t : result.trials()) waited += t.waited_seconds;
    std::printf("billable (elapsed x ranks) %.3g rank-s, after %.3g s waiting for ranks; busy on ranks %.3g rank-s\n",
                result.cost().billable_seconds, waited, result.rank_usage().busy_rank_seconds);

    // Time per epoch by worker count, over every trial (rank-seconds / workers / epochs).
    std::map<int, std::pair<double, int>> per_epoch;
    for (const auto& t : result.trials()) {
        if (t.values.size() != 2) continue;
        const int w = std::stoi(t.config[workers]);
        per_epoch[w].first += t.values[1] / w / epochs;
        ++per_epoch[w].second;
    }
    std::printf("measured time per epoch (mean over trials):");
    for (const auto& [w, s] : per_epoch)
        std::printf("  %d worker%s %.1f ms", w, w == 1 ? "" : "s", 1000.0 * s.first / s.second);
    std::printf("\n");

    // The front, by worker count: for each count, its trials on the front, cheapest first.
    auto front = result.pareto_front();
    std::sort(front.begin(), front.end(), [](const auto& a, const auto& b) { return a.values[1] < b.values[1]; });
    std::map<int, std::vector<const ht::TrialRecord*>> by_workers;
    for (const auto& t : front) by_workers[std::stoi(t.config[workers])].push_back(&t);
    std::printf("\nOn the front, by worker count:\n");
    for (int w : {1, 2, 4}) {
        auto it = by_workers.find(w);
        if (it == by_workers.end()) {
            std::printf("  %d worker%s: none (each such trial is dominated: another reached as much accuracy for fewer "
                        "rank-seconds)\n",
                        w, w == 1 ? "" : "s");
            continue;
        }
        std::printf("  %d worker%s: %zu trial%s\n", w, w == 1 ? "" : "s", it->second.size(), it->second.size() == 1 ? "" : "s");
        for (const auto* t : it->second)
            std::printf("    accuracy %.4f for %6.3f rank-s  (learning rate %.3g, batch %d per worker = %d global, "
                        "momentum %.2f)\n",
                        t->values[0], t->values[1], t->config[lr], t->config[batch], t->config[batch] * w,
                        t->config[momentum]);
    }
    if (!front.empty()) {
        const auto& cheapest = front.front();
        const auto& best = front.back();
        std::printf("\nWhat the front says: the cheapest point is %s worker(s) at %.3f rank-s (accuracy %.4f); the most "
                    "accurate is %s worker(s) at %.3f rank-s (accuracy %.4f), %.1fx the cost for %+.4f accuracy.\n",
                    cheapest.config[workers].c_str(), cheapest.values[1], cheapest.values[0], best.config[workers].c_str(),
                    best.values[1], best.values[0], best.values[1] / cheapest.values[1], best.values[0] - cheapest.values[0]);
    }
    std::printf(
        "\nWhat this machine can show (%u hardware threads for %d ranks): the accuracy side is exact - a trial on w "
        "ranks makes the very updates of w real workers (global batch w x per-worker batch, so fewer steps per epoch). "
        "The time side is not: with more ranks than cores the ranks of a group share cores, so a 4-rank epoch is not "
        "4x faster than a 1-rank one, and its rank-seconds count time spent waiting for a core or at the Allreduce. "
        "On a cluster with a core (or GPU) per rank and a real network, time per epoch falls with more workers until "
        "the Allreduce dominates; run this there to measure that trade-off.\n",
        std::thread::hardware_concurrency(), size);
    return front.empty() ? 1 : 0;
}
