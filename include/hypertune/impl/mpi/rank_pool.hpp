// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/mpi/rank_pool.hpp>: the coordinator's rank allocation. Inline unless
// the program links hypertune::compiled_mpi, which compiles them (see <hypertune/linkage.hpp>).

#include <hypertune/linkage.hpp>
#include <hypertune/mpi/rank_pool.hpp>

#if defined(HYPERTUNE_COMPILED_MPI) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/mpi/rank_pool.hpp> is compiled into hypertune::compiled_mpi: include <hypertune/mpi/rank_pool.hpp>"
#endif

namespace hypertune::mpi::detail {

HYPERTUNE_MPI_INLINE std::vector<int> RankPool::acquire(TrialId trial, int wanted) {
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

HYPERTUNE_MPI_INLINE void RankPool::release(TrialId trial, const std::vector<int>& ranks) {
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

HYPERTUNE_MPI_INLINE RankUsage RankPool::finish() {
    std::lock_guard lk(mu_);
    RankUsage u = usage_;
    u.wall_seconds = seconds();
    if (u.training_ranks > 0 && u.wall_seconds > 0.0)
        u.utilisation = u.busy_rank_seconds / (u.training_ranks * u.wall_seconds);
    return u;
}

HYPERTUNE_MPI_INLINE void RankPool::schedule() {
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

HYPERTUNE_MPI_INLINE void RankPool::grant(Request& r) {
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

HYPERTUNE_MPI_INLINE std::vector<int> RankPool::pick(int wanted) const {
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

}  // namespace hypertune::mpi::detail
