// SPDX-License-Identifier: MIT
#pragma once
// How a run over MPI used its training ranks: the timeline of rank allocations (which trial waited,
// started on which ranks, ended), the busy rank-seconds and the rank utilisation, measured by the
// coordinator. hypertune::mpi::fit returns it beside the run's Result (MpiResult).

#include <hypertune/linkage.hpp>
#include <hypertune/result.hpp>
#include <hypertune/types.hpp>

#include <fmt/core.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace hypertune::mpi {

/// One step of the coordinator's rank allocation. Events are in the order they happened; the
/// events of one decision (a trial asks for ranks or gives them back, then the trials this lets
/// start) follow each other.
struct RankEvent {
    enum class Kind {
        Wait,   ///< a trial asks for `wanted` ranks (every run of a trial starts with one)
        Start,  ///< it got `ranks` and starts
        End,    ///< it gave `ranks` back
        Hold,   ///< it cannot start yet and was passed over MpiOptions::max_overtakes times: no trial
                ///< that asked later starts before it (free ranks wait for it)
    };
    Kind kind = Kind::Wait;
    double seconds = 0.0;  ///< since the run's start (the coordinator's clock)
    TrialId trial = 0;
    int wanted = 0;          ///< the ranks the trial runs on
    std::vector<int> ranks;  ///< Start, End: its ranks in the communicator given to fit()
};

[[nodiscard]] inline const char* to_string(RankEvent::Kind k) noexcept {
    switch (k) {
        case RankEvent::Kind::Wait: return "wait";
        case RankEvent::Kind::Start: return "start";
        case RankEvent::Kind::End: return "end";
        case RankEvent::Kind::Hold: return "hold";
    }
    return "?";
}

/// How the training ranks were used (on rank 0; empty elsewhere).
struct RankUsage {
    int training_ranks = 0;         ///< world size - 1
    double wall_seconds = 0.0;      ///< from the tuner's start to its end
    double busy_rank_seconds = 0.0; ///< sum over trial runs of ranks x (end - start)
    /// busy_rank_seconds / (training_ranks x wall_seconds): 1 when no rank was ever idle.
    double utilisation = 0.0;
    std::size_t runs = 0;             ///< trial runs (a promoted trial runs again)
    double waited_seconds = 0.0;      ///< sum over runs of the time from asking for ranks to starting
    double longest_wait_seconds = 0.0;
    std::vector<RankEvent> timeline;

    /// One line: "rank utilisation 87% (busy 41.2 rank-s of 6 ranks x 7.9 s); 24 runs waited 3.1 s
    /// for ranks in all, at most 0.8 s".
    [[nodiscard]] HYPERTUNE_MPI_INLINE std::string summary() const;
};

/// What hypertune::mpi::fit returns: the run's Result (a Result, so `ht::Result r = mpi::fit(...)`
/// keeps working) and how the ranks were used.
class MpiResult : public Result {
public:
    MpiResult() = default;
    MpiResult(Result result, RankUsage usage) : Result(std::move(result)), usage_(std::move(usage)) {}
    [[nodiscard]] const RankUsage& rank_usage() const noexcept { return usage_; }

private:
    RankUsage usage_;
};

}  // namespace hypertune::mpi

#ifndef HYPERTUNE_COMPILED_MPI
#include <hypertune/impl/mpi/rank_usage.hpp>
#endif
