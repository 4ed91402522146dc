// SPDX-License-Identifier: MIT
// Re-tuning a data-parallel trainer for more workers, with hypertune over MPI.
//
//   mpirun -n 5 build/examples/mpi/mpi_data_parallel [fashion-mnist dir]
//
// The trainer is softmax regression on Fashion-MNIST (all 10 classes, 10,000 training images pooled
// 2x2 to 196 features) by minibatch SGD; with several workers each takes its share of the global
// batch and the gradients are averaged with MPI_Allreduce (examples/mpi/softmax_sgd.hpp).
//
// 1. Scaling from 1 to 4 workers at the same hyperparameters, keeping the per-worker batch (so the
//    global batch grows 4x) and the number of epochs: an epoch takes less time, but there are 4x
//    fewer updates, and test accuracy drops.
// 2. Re-tuning for 4 workers: learning rate (log scale), per-worker batch and momentum, with ASHA
//    (epochs are the resource), by hypertune::mpi::fit: rank 0 coordinates, ranks 1..4 form two
//    groups of 2 ranks that train two trials at once. Each trial trains exactly the 4-worker job
//    (global batch = 4 x per-worker batch) on its 2 ranks, judged on a validation split.
// 3. The tuned configuration on the 4 real workers, against the same test set.

#include <hypertune/hypertune.hpp>
#include <hypertune/mpi.hpp>
#include <hypertune/report.hpp>
#include <hypertune/strategies/asha.hpp>

#include "mpi/softmax_sgd.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#ifndef HYPERTUNE_FASHION_MNIST_DIR
#define HYPERTUNE_FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"
#endif

namespace ht = hypertune;

namespace {

constexpr int workers = 4;  // the distributed setup being tuned for
constexpr std::uint64_t data_seed = 42;

// Waits for a non-blocking collective while sleeping, so ranks with nothing to do leave the cores
// to the ranks that train (a blocking MPI call spins).
void wait_politely(MPI_Request& request) {
    for (;;) {
        int done = 0;
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        if (done) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

struct Measured {
    double seconds_per_epoch = 0.0;
    double test_accuracy = 0.0;
};

// Trains `hyper` on world ranks 1..hyper.workers for `epochs`; the others wait. Collective over world.
Measured train_on_workers(const softmax_sgd::Splits& data, softmax_sgd::Hyper hyper, int epochs) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    bool trains = rank >= 1 && rank <= hyper.workers;
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, trains ? 0 : MPI_UNDEFINED, rank, &comm);
    std::array<double, 2> mine{0.0, 0.0};
    if (trains) {
        softmax_sgd::Trainer trainer(data.train, hyper, comm, data_seed);
        double seconds = 0.0;
        for (int e = 0; e < epochs; ++e) seconds += trainer.epoch();
        mine = {seconds / epochs, softmax_sgd::accuracy(trainer.weights(), data.test)};
        MPI_Comm_free(&comm);
    }
    // The slowest rank sets the time per epoch; the accuracy is the same on every training rank.
    std::array<double, 2> all{};
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Iallreduce(mine.data(), all.data(), 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &request);
    wait_politely(request);
    return {all[0], all[1]};
}

void print_row(const std::string& setup, const softmax_sgd::Hyper& h, const Measured& m) {
    std::printf("%-34s %6d %9.4f %9.3f %11.1f ms %9.4f\n", setup.c_str(), h.batch_per_worker * h.workers,
                h.learning_rate, h.momentum, 1000.0 * m.seconds_per_epoch, m.test_accuracy);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    ht::mpi::Environment env(argc, argv);
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 1 + workers) {
        if (rank == 0) std::fprintf(stderr, "run with %d ranks: mpirun -n %d %s\n", 1 + workers, 1 + workers, argv[0]);
        return 2;
    }
    const bool quick = std::getenv("HYPERTUNE_CTEST") != nullptr;  // ctest: fewer trials
    std::string dir = HYPERTUNE_FASHION_MNIST_DIR;
    bool report = false;  // --report: also write report.html (rank 0)
    for (int i = 1; i < argc; ++i) {
        if (std::string_view(argv[i]) == "--report") report = true;
        else dir = argv[i];
    }
    const int epochs = 6;
    const std::size_t max_jobs = quick ? 12 : 32;

    softmax_sgd::Splits data;
    try {
        data = softmax_sgd::load(dir, 10'000, 5'000, 10'000, /*pool=*/true, data_seed);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    // 1. One worker, then four at the same hyperparameters (per-worker batch kept).
    const softmax_sgd::Hyper single{.learning_rate = 0.1, .batch_per_worker = 32, .momentum = 0.0, .workers = 1};
    softmax_sgd::Hyper scaled = single;
    scaled.workers = workers;
    if (rank == 0) {
        std::printf("softmax regression on Fashion-MNIST (10 classes, %zu training images, 196 features), %d epochs\n",
                    data.train.y.size(), epochs);
        std::printf("%-34s %6s %9s %9s %14s %9s\n", "setup", "global", "lr", "momentum", "time/epoch", "test acc");
    }
    auto one = train_on_workers(data, single, epochs);
    if (rank == 0) print_row("1 worker", single, one);
    auto four = train_on_workers(data, scaled, epochs);
    if (rank == 0) print_row("4 workers, same hyperparameters", scaled, four);

    // 2. Re-tune for 4 workers: two trials at a time, each on a group of 2 ranks.
    ht::SearchSpace space;
    auto lr = space.add(ht::ContinuousParameter("learning_rate", 1e-3, 3.0));  // Auto: log scale
    auto batch = space.add(ht::IntegerParameter("batch_per_worker", 8, 128, ht::Scaling::Logarithmic));
    auto momentum = space.add(ht::ContinuousParameter("momentum", 0.0, 0.95, ht::Scaling::ReverseLogarithmic));
    ht::TunerOptions options{.metric = "validation:accuracy", .direction = ht::Direction::Maximize,
                             .max_jobs = max_jobs, .seed = 7, .progress = ht::ProgressBar::Never};
    // The trainer keeps no checkpoint, so the stop type: the default promotion type would train each
    // promoted trial again from its first epoch.
    const ht::ASHA asha({.min_resource = 1, .max_resource = epochs, .reduction_factor = 2, .type = ht::HalvingType::Stop});
    ht::Result result = ht::mpi::fit(
        MPI_COMM_WORLD, space, asha, options,
        {.ranks_per_trial = 2}, [&](const ht::Config& cfg, ht::mpi::GroupTrial& trial, MPI_Comm group) {
            softmax_sgd::Hyper h{.learning_rate = cfg[lr], .batch_per_worker = cfg[batch], .momentum = cfg[momentum],
                                 .workers = workers};
            softmax_sgd::Trainer trainer(data.train, h, group, data_seed);
            double acc = 0.0;
            for (ht::Resource epoch = 1; epoch <= trial.budget(); ++epoch) {
                trainer.epoch();
                // Every rank holds the same weights, so every rank computes the same accuracy.
                acc = softmax_sgd::accuracy(trainer.weights(), data.valid);
                trial.report(epoch, acc);  // collective: every rank of the group, every epoch
                if (trial.should_stop() || trainer.diverged()) break;
            }
            return acc;
        });
    if (rank == 0) {
        auto cost = result.cost();
        std::printf("tuning: %zu trials of ASHA on 2 groups of 2 ranks (%zu completed, %zu stopped early) in %.1fs; "
                    "best validation accuracy %.4f (trial %llu)\n",
                    result.trials().size(), result.count(ht::TrialStatus::Completed),
                    result.count(ht::TrialStatus::Stopped), cost.wall_seconds, result.best().objective,
                    static_cast<unsigned long long>(result.best().id));
        if (report) {
            ht::write_report(result, "report.html");
            std::printf("wrote report.html\n");
        }
        std::fflush(stdout);
    }

    // 3. The tuned configuration on the 4 real workers.
    ht::Config best = ht::mpi::broadcast_best(MPI_COMM_WORLD, space, result);
    softmax_sgd::Hyper tuned{.learning_rate = best[lr], .batch_per_worker = best[batch], .momentum = best[momentum],
                             .workers = workers};
    auto after = train_on_workers(data, tuned, epochs);
    if (rank == 0) {
        print_row(fmt::format("4 workers, tuned (batch {}/worker)", tuned.batch_per_worker), tuned, after);
        // An honest note: this model is tiny (an epoch is a few ms of arithmetic), so on a node with
        // fewer cores than ranks the time per epoch is mostly waiting at the Allreduce.
        std::printf("time/epoch: the slowest rank; %u hardware threads for %d ranks\n",
                    std::thread::hardware_concurrency(), size);
        std::printf("best: %s\n", fmt::format("{}", best).c_str());
        std::printf("test accuracy: 1 worker %.4f, 4 workers %.4f (%+.4f), 4 workers tuned %.4f (%+.4f vs 1 worker)\n",
                    one.test_accuracy, four.test_accuracy, four.test_accuracy - one.test_accuracy, after.test_accuracy,
                    after.test_accuracy - one.test_accuracy);
    }
    return 0;
}
