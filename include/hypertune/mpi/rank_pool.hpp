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
#include <hypertune/mpi/rank_usage.hpp>
#include <hypertune/types.hpp>

#include <fmt/format.h>

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
    std::vector<int> acquire(TrialId trial, int wanted) {
        if (wanted < 1 || wanted > usage_.training_ranks)
            throw InvalidArgument(fmt::format("trial {} asks for {} ranks; there are {} training ranks", trial, wanted,
                                              usage_.training_ranks));
        std::unique_lock lk(mu_);
        Request request{trial, wanted, seconds()};
        usage_.timeline.push_back({RankEvent::Kind::Wait, request.since, trial, wanted, {}});
        queue_.push_back(&request);
        schedule();
        cv_.wait(lk, [&] { return !request.granted.empty(); });
        return request.granted;
    }

    void release(TrialId trial, const std::vector<int>& ranks) {
        std::lock_guard lk(mu_);
        const double now = seconds();
        for (int r : ranks) free_[static_cast<std::size_t>(r)] = true;
        free_count_ += static_cast<int>(ranks.size());
        auto it = started_.find(trial);
        if (it != started_.end()) {
            usage_.busy_rank_seconds += static_cast<double>(ranks.size()) * (now - it->second);
            started_.erase(it);
        }
        usage_.timeline.push_back({RankEvent::Kind::End, now, trial, static_cast<int>(ranks.size()), ranks});
        schedule();
        cv_.notify_all();
    }

    // The usage at the end of the run.
    [[nodiscard]] RankUsage finish() {
        std::lock_guard lk(mu_);
        RankUsage u = usage_;
        u.wall_seconds = seconds();
        if (u.training_ranks > 0 && u.wall_seconds > 0.0)
            u.utilisation = u.busy_rank_seconds / (u.training_ranks * u.wall_seconds);
        return u;
    }

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
    void schedule() {
        bool started = false;
        for (auto it = queue_.begin(); it != queue_.end();) {
            Request& r = **it;
            if (r.wanted <= free_count_) {
                grant(r);
                for (auto older = queue_.begin(); older != it; ++older) ++(*older)->overtaken;
                queue_.erase(it);
                started = true;
                // From the oldest again: one that has just been overtaken enough now holds.
                it = queue_.begin();
                continue;
            }
            if (max_overtakes_ >= 0 && r.overtaken >= static_cast<std::size_t>(max_overtakes_)) {
                if (!r.held) {
                    r.held = true;
                    usage_.timeline.push_back({RankEvent::Kind::Hold, seconds(), r.trial, r.wanted, {}});
                }
                break;
            }
            ++it;
        }
        if (started) cv_.notify_all();
    }

    void grant(Request& r) {
        r.granted = pick(r.wanted);
        for (int x : r.granted) free_[static_cast<std::size_t>(x)] = false;
        free_count_ -= r.wanted;
        const double now = seconds();
        started_[r.trial] = now;
        ++usage_.runs;
        usage_.waited_seconds += now - r.since;
        usage_.longest_wait_seconds = std::max(usage_.longest_wait_seconds, now - r.since);
        usage_.timeline.push_back({RankEvent::Kind::Start, now, r.trial, r.wanted, r.granted});
    }

    // Best fit among runs of consecutive free ranks; else the lowest free ranks.
    [[nodiscard]] std::vector<int> pick(int wanted) const {
        const int n = static_cast<int>(free_.size());
        int best_start = -1;
        int best_length = 0;
        for (int i = 1; i < n;) {
            if (!free_[static_cast<std::size_t>(i)]) {
                ++i;
                continue;
            }
            int j = i;
            while (j < n && free_[static_cast<std::size_t>(j)]) ++j;
            if (j - i >= wanted && (best_start < 0 || j - i < best_length)) {
                best_start = i;
                best_length = j - i;
            }
            i = j;
        }
        std::vector<int> out;
        if (best_start >= 0) {
            for (int k = 0; k < wanted; ++k) out.push_back(best_start + k);
            return out;
        }
        for (int i = 1; i < n && static_cast<int>(out.size()) < wanted; ++i)
            if (free_[static_cast<std::size_t>(i)]) out.push_back(i);
        return out;
    }

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
