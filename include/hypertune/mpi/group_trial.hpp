// SPDX-License-Identifier: MIT
#pragma once
// hypertune::mpi::GroupTrial: the hypertune::Trial an objective gets on every rank of a group
// (its reports, stops and checkpoints collective over the group, through the coordinator), plus
// the group's communicator; hypertune::mpi::group(trial) and group_comm(trial), which an objective
// written for hypertune::Trial uses to reach its group; and the shapes a group objective may have
// (GroupObjective).
//
// One objective for both: an objective R(const Config&, hypertune::Trial&) (R double or Metrics)
// runs under hypertune::Tuner and under hypertune::mpi::fit alike, since a GroupTrial is a Trial.
// Under mpi::fit every Trial call goes to the coordinator's own Trial of that trial, which judges
// it as in a single process (steps must increase, values be finite, the strategy's decision) and
// whose answer every rank of the group gets.

#include <hypertune/config.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/metrics.hpp>
#include <hypertune/mpi/channel.hpp>
#include <hypertune/strategy.hpp>
#include <hypertune/trial.hpp>
#include <hypertune/types.hpp>

#include <mpi.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <climits>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace hypertune::mpi {

namespace detail {

// Why a group's trial failed when its ranks did not report at the same steps and none had failed:
// `rank` (of the group; world rank `world`) returned from the objective while another was in report().
HYPERTUNE_MPI_INLINE std::string unequal_reports(int rank, int world);

// What another rank of a group tells its leader when it leaves the objective (left_tag).
inline constexpr const char* left_threw = "threw";
inline constexpr const char* left_returned = "returned";

// A rank of the group that left the objective, as its note to the leader says.
struct RankLeft {
    int rank = 0;
    bool threw = false;
};

// The Trial's host on every rank of a group: the link to the coordinator (rank 0). A report is
// collective over the group: the leader sends its own (step, value) to rank 0 and broadcasts the
// answer (continue, stop, or the InvalidArgument it rejected the report with) with its step, and a
// rank that reported another step throws InvalidArgument naming both. Checkpoints are the
// leader's, sent to rank 0 at once. Stops come with the answers to reports, so stop_requested()
// never differs between the ranks of a group.
//
// Every message the group exchanges at a report or at its end is one broadcast from the leader,
// so ranks that are at different steps (one threw, or returned early) never wait in collectives of
// different shapes: at its end the leader broadcasts reply_end, and the other ranks, at their
// end, take the leader's broadcasts until that one. A rank in report() that gets reply_end (the
// leader left) throws, and throws again if called again. The leader never waits for the others
// at a report, as a broadcast's root does not. finish() then says whether the ranks reported
// alike.
//
// So that a group does not train on for nothing, every other rank tells the leader when it leaves
// the objective (a left_tag message: it threw, or returned), and the leader looks for such notes
// at its reports (one MPI_Iprobe, at most every 10 ms): when one has come, the leader ends the
// trial there, as if it had left itself (reply_end), and its report() throws that this report is
// abandoned. The trial fails with the leaving rank's message, or as unequal reports when that
// rank had returned.
class GroupHost final : public hypertune::detail::TrialHost {
public:
    HYPERTUNE_MPI_INLINE GroupHost(bool leader, MPI_Comm internal, Channel& channel, Channel& group_channel);

    HYPERTUNE_MPI_INLINE Decision on_report(Trial& trial, Resource step, double value) override;
    HYPERTUNE_MPI_INLINE Decision on_report_metrics(Trial& trial, Resource step, const Metrics& values) override;
    bool stop_requested() const noexcept override { return false; }
    HYPERTUNE_MPI_INLINE void on_checkpoint(Trial& trial, Resource step, const std::string& bytes) override;
    // Throws Error: the trial's folder would be on rank 0's file system.
    HYPERTUNE_MPI_INLINE std::string checkpoint_folder(Trial& trial) override;

    // At the objective's end on every rank, after it returned (threw = false) or threw: another
    // rank tells the leader it left; the leader broadcasts reply_end (unless a report did) and
    // takes every other rank's note, the others take broadcasts until reply_end (unless a report
    // brought it). Returns the group rank that this rank saw return from the objective while
    // another was in report() (itself, for a report of the leader's it did not make; the leader,
    // whose end came in a report it made; for the leader, a rank whose note said it returned while
    // the leader reported), or -1.
    HYPERTUNE_MPI_INLINE int finish(bool threw);

    // Whether report() threw because another rank had left the objective (the leader, for the
    // others; another rank, for the leader): this rank's exception is then not its own failure.
    [[nodiscard]] bool abandoned() const noexcept { return abandoned_.has_value(); }

private:
    // The leader sends `message` with `tag` and receives rank 0's answer; the group shares it, with
    // the leader's step, which every other rank compares with its own `step`.
    HYPERTUNE_MPI_INLINE Decision exchange(const Trial& trial, Resource step, int tag, const std::string& message);
    // The leader: takes the notes of ranks that left, blocking until every other rank's when `all`.
    // Returns the first rank that left in this call, if any.
    HYPERTUNE_MPI_INLINE std::optional<RankLeft> take_notes(bool all);
    // The leader: broadcasts reply_end, once.
    HYPERTUNE_MPI_INLINE void end_reports();
    // Ends the group's broadcasts from this rank's side: report() throws `why` from now on.
    [[noreturn]] HYPERTUNE_MPI_INLINE void abandon(std::string why);

    bool leader_;
    MPI_Comm internal_;  // a duplicate of the group's communicator for our own collectives
    Channel* channel_;
    Channel* group_channel_;
    int size_ = 1;                       // ranks in the group
    int rank_ = 0;                       // this rank's, in the group
    int notes_ = 0;                      // the leader: notes taken from ranks that left
    bool ended_ = false;                 // reply_end broadcast (leader) or received (the others)
    int returned_ = -1;                  // see finish()
    std::optional<std::string> abandoned_;  // why report() throws, once the group's reports ended
    std::string note_;                   // another rank: its note to the leader, alive until sent
    // The leader looks for notes at a report at most this often (see exchange()).
    static constexpr std::chrono::milliseconds look_every{10};
    std::chrono::steady_clock::time_point next_look_{};
};

struct GroupTrialAccess;

}  // namespace detail

/// The Trial an objective sees on every rank of a group under hypertune::mpi::fit: every method of
/// hypertune::Trial, collective over the group, plus the group's communicator. report() is
/// collective: every rank of the group calls it at the same steps, the leader's value is reported,
/// and a report the coordinator rejects (steps must increase, values be finite) throws the same
/// InvalidArgument on every rank. should_stop() gives the same answer on every rank.
/// save_checkpoint() keeps the leader's bytes (on the other ranks it only replaces the local copy).
/// checkpoint_dir() is not available (the folder would be rank 0's): it throws Error.
class GroupTrial final : public Trial {
public:
    /// The group's communicator (ranks of this trial only), its size and this rank in it.
    [[nodiscard]] MPI_Comm comm() const noexcept { return comm_; }
    [[nodiscard]] int rank() const noexcept { return rank_; }
    [[nodiscard]] int size() const noexcept { return size_; }
    /// The group's ranks in the communicator given to fit(), in group-rank order (ascending).
    [[nodiscard]] const std::vector<int>& world_ranks() const noexcept { return world_ranks_; }
    /// The leader (rank 0 of the group) is the rank that talks to the coordinator.
    [[nodiscard]] bool is_leader() const noexcept { return rank_ == 0; }

private:
    friend struct detail::GroupTrialAccess;

    HYPERTUNE_MPI_INLINE GroupTrial(detail::GroupHost& host, TrialId id, Config config, Resource budget,
                                    Resource resumed_from, std::optional<std::string> checkpoint, MPI_Comm comm,
                                    std::vector<int> world_ranks);

    MPI_Comm comm_;
    int rank_ = 0;
    int size_ = 1;
    std::vector<int> world_ranks_;
};

/// The group trial `trial` is when hypertune::mpi::fit runs it on a group of ranks; nullptr for a
/// trial an in-process hypertune::Tuner runs (or one made by hand). For an objective written
/// against hypertune::Trial that needs its group: `if (auto* g = ht::mpi::group(trial)) g->rank()`.
[[nodiscard]] inline GroupTrial* group(Trial& trial) noexcept { return dynamic_cast<GroupTrial*>(&trial); }
[[nodiscard]] inline const GroupTrial* group(const Trial& trial) noexcept {
    return dynamic_cast<const GroupTrial*>(&trial);
}

/// The communicator of the ranks that train `trial`: its group's under hypertune::mpi::fit, and
/// MPI_COMM_SELF (this process alone) for a trial an in-process hypertune::Tuner runs, so that one
/// objective's collectives (MPI_Allreduce...) run under either. MPI must be initialised to use it,
/// and MPI_COMM_SELF is one communicator: a Tuner whose trials call collectives on it runs them
/// one at a time (max_parallel_jobs = 1), or the objective skips them when group() is nullptr.
[[nodiscard]] inline MPI_Comm group_comm(const Trial& trial) noexcept {
    const GroupTrial* g = group(trial);
    return g ? g->comm() : MPI_COMM_SELF;
}

/// What a group objective may return: a number, or hypertune::Metrics for a run with several
/// objectives or constraints (TunerOptions::objectives / constraints).
template <class R>
concept GroupObjectiveResult = std::convertible_to<R, double> || std::convertible_to<R, Metrics>;

/// The objective: R(const Config&, Trial&) (the same objective as for hypertune::Tuner),
/// R(const Config&, GroupTrial&), R(const Config&, GroupTrial&, MPI_Comm group) or R(const Config&),
/// where R is double or hypertune::Metrics.
template <class F>
concept GroupObjective =
    (std::invocable<F&, const Config&, GroupTrial&, MPI_Comm> &&
     GroupObjectiveResult<std::invoke_result_t<F&, const Config&, GroupTrial&, MPI_Comm>>) ||
    (std::invocable<F&, const Config&, GroupTrial&> &&
     GroupObjectiveResult<std::invoke_result_t<F&, const Config&, GroupTrial&>>) ||
    (std::invocable<F&, const Config&> && GroupObjectiveResult<std::invoke_result_t<F&, const Config&>>);

namespace detail {

// The objective's result type, for the first of its forms it has (as call_objective calls it).
template <class F>
using group_result_t = typename std::conditional_t<
    std::invocable<F&, const Config&, GroupTrial&, MPI_Comm>, std::invoke_result<F&, const Config&, GroupTrial&, MPI_Comm>,
    std::conditional_t<std::invocable<F&, const Config&, GroupTrial&>, std::invoke_result<F&, const Config&, GroupTrial&>,
                       std::invoke_result<F&, const Config&>>>::type;

/// True when the objective returns Metrics (several objectives or constraints), not a number.
template <class F>
inline constexpr bool returns_metrics_v = !std::convertible_to<group_result_t<F>, double>;

// Metrics as the leader sends them: [[name, value], ...], a non-finite value as null, read back as
// NaN so that the coordinator names it.
HYPERTUNE_MPI_INLINE std::string metrics_bytes(const Metrics& m);
HYPERTUNE_MPI_INLINE Metrics metrics_from(const std::string& bytes);

// The objective's answer as the leader sends it: 8 bytes of double, or the metrics (metrics_bytes).
template <class F>
std::string call_objective(F& objective, const Config& cfg, GroupTrial& trial) {
    auto call = [&]() -> decltype(auto) {
        if constexpr (std::invocable<F&, const Config&, GroupTrial&, MPI_Comm>) return objective(cfg, trial, trial.comm());
        else if constexpr (std::invocable<F&, const Config&, GroupTrial&>) return objective(cfg, trial);
        else return objective(cfg);
    };
    if constexpr (returns_metrics_v<F>) {
        return metrics_bytes(call());
    } else {
        return pack(static_cast<double>(call()));
    }
}

// Any group objective behind one type (for the compiled part of fit()).
struct GroupObjectiveFunction {
    std::function<std::string(const Config&, GroupTrial&)> call;
    bool returns_metrics = false;
};

template <class F>
GroupObjectiveFunction make_group_objective(F& objective) {
    return GroupObjectiveFunction{[&objective](const Config& c, GroupTrial& t) { return call_objective(objective, c, t); },
                                  returns_metrics_v<F>};
}

// Builds GroupTrials (their constructor is private so users cannot make one detached from a group).
struct GroupTrialAccess {
    static GroupTrial make(GroupHost& host, TrialId id, Config config, Resource budget, Resource resumed_from,
                           std::optional<std::string> checkpoint, MPI_Comm comm, std::vector<int> world_ranks) {
        return GroupTrial(host, id, std::move(config), budget, resumed_from, std::move(checkpoint), comm,
                          std::move(world_ranks));
    }
    // Its should_stop() turns true `seconds` from now, as the coordinator's Trial does (the same
    // moment up to the message's latency).
    static void stop_after(GroupTrial& trial, double seconds) {
        trial.stop_at(std::chrono::steady_clock::now() +
                           std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                               std::chrono::duration<double>(std::min(seconds, 1e9))));
    }
};

}  // namespace detail

}  // namespace hypertune::mpi

#ifndef HYPERTUNE_COMPILED_MPI
#include <hypertune/impl/mpi/group_trial.hpp>
#endif
