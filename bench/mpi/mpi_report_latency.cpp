// SPDX-License-Identifier: MIT
// What one report() costs a group under hypertune::mpi::fit: 4 trials on groups of 2 ranks, each
// reporting `reports` times and doing nothing else, timed on rank 0; prints microseconds per report.
//
//   mpiexec -n 3 build/bench/mpi/mpi_report_latency [reports] [max_poll_sleep_microseconds]
//
// (Open MPI on fewer cores than ranks: add --oversubscribe --bind-to none.) Each report is the
// leader's round trip to rank 0 and one broadcast in the group; the figure moves with how busy the
// cores are, so compare builds in alternate runs.
#include <hypertune/hypertune.hpp>
#include <hypertune/mpi.hpp>

#include <fmt/core.h>

#include <chrono>
#include <cstdlib>

namespace ht = hypertune;

int main(int argc, char** argv) {
    ht::mpi::Environment env(argc, argv);
    const int reports = argc > 1 ? std::atoi(argv[1]) : 2000;
    const int max_sleep = argc > 2 ? std::atoi(argv[2]) : ht::mpi::MpiOptions{}.max_poll_sleep_microseconds;
    int rank = 0;
    int size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int per_trial = size >= 3 ? 2 : 1;
    const ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0)};
    const std::size_t trials = 4;
    const auto t0 = std::chrono::steady_clock::now();
    (void)ht::mpi::fit(MPI_COMM_WORLD, space, ht::RandomSearch({.max_resource = reports}),
                       {.max_jobs = trials, .seed = 1, .progress = ht::ProgressBar::Never},
                       {.ranks_per_trial = per_trial, .max_poll_sleep_microseconds = max_sleep},
                       [&](const ht::Config& c, ht::Trial& t) {
                           double v = 0.0;
                           for (int k = 1; k <= reports; ++k) t.report(k, v = c.get<double>("x") / k);
                           return v;
                       });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rank == 0)
        fmt::print("{:.2f} us per report ({} trials of {} reports, groups of {} ranks, max poll sleep {} us)\n",
                   seconds * 1e6 / (static_cast<double>(trials) * reports), trials, reports, per_trial, max_sleep);
}
