// SPDX-License-Identifier: MIT
#pragma once
// The coordinator's rank allocation (internal): which free training ranks a trial gets, and when.
//
// Policy. Trials ask in the order the tuner starts them. Whenever a trial asks or a trial gives its
// ranks back, the waiting trials are scanned oldest first and each one that fits the free ranks
// starts at once, so no rank stays idle while a waiting trial fits (backfilling: a small trial
// starts ahead of a larger one that cannot start yet). Starvation: a large trial could wait
// forever behind a stream of small ones, each fitting into the ranks the last one freed. So every
// trial that starts ahead of an older waiting trial counts as overtaking it; once a waiting trial
// has been overtaken max_overtakes times it holds the queue: no trial that asked after it starts
// before it, and ranks that free up wait for it (the one case where a rank stays idle while a
// smaller trial waits). It starts once enough ranks are free, which happens because running trials
// end and nothing new starts. max_overtakes < 0: never hold (pure backfilling); 0: first come,
// first served.
//
// Placement. Among the runs of consecutive free ranks, the shortest one that holds the trial
// (best fit, the lowest on a tie) keeps long runs for large trials; without one, the lowest free
// ranks. The waits happen in the tuner's worker threads (a condition variable, no MPI call).

#include <hypertune/error.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/mpi/rank_usage.hpp>
#include <hypertune/types.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <list>
#include <map>
#include <mutex>
#include <vector>

namespace hypertune::mpi::detail {

class RankPool {
public:
    // Training ranks 1..world_size-1 (rank 0 coordinates).
    RankPool(int world_size, int max_overtakes)
        : free_(static_cast<std::size_t>(std::max(world_size, 1)), true), free_count_(world_size - 1),
          max_overtakes_(max_overtakes), start_(std::chrono::steady_clock::now()) {
        free_[0] = false;
        usage_.training_ranks = world_size - 1;
    }

    // Blocks until `wanted` ranks are the trial's; returns them in ascending order.
    HYPERTUNE_MPI_INLINE std::vector<int> acquire(TrialId trial, int wanted);

    HYPERTUNE_MPI_INLINE void release(TrialId trial, const std::vector<int>& ranks);

    // The usage at the end of the run.
    [[nodiscard]] HYPERTUNE_MPI_INLINE RankUsage finish();

private:
    struct Request {
        TrialId trial;
        int wanted;
        double since;
        std::size_t overtaken = 0;
        bool held = false;
        std::vector<int> granted{};
    };

    [[nodiscard]] double seconds() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }

    // Starts every waiting trial that fits, oldest first, up to one that holds the queue.
    HYPERTUNE_MPI_INLINE void schedule();

    HYPERTUNE_MPI_INLINE void grant(Request& r);

    // Best fit among runs of consecutive free ranks; else the lowest free ranks.
    [[nodiscard]] HYPERTUNE_MPI_INLINE std::vector<int> pick(int wanted) const;

    std::mutex mu_;
    std::condition_variable cv_;
    std::vector<bool> free_;  // by rank; rank 0 never
    int free_count_;
    int max_overtakes_;
    std::list<Request*> queue_;  // waiting, oldest first; each lives in its acquire() call
    std::map<TrialId, double> started_;
    std::chrono::steady_clock::time_point start_;
    RankUsage usage_;
};

}  // namespace hypertune::mpi::detail

#ifndef HYPERTUNE_COMPILED_MPI
#include <hypertune/impl/mpi/rank_pool.hpp>
#endif
