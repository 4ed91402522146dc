// SPDX-License-Identifier: MIT
#pragma once
// hypertune over MPI: one tuning run across many ranks, each trial trained by a group of ranks on
// its own communicator (data-parallel training inside a trial, trials in parallel across groups).
// The group's size is fixed, or is a tuned parameter of the trial (the worker count).
//
//   hypertune::mpi::Environment env(argc, argv);     // MPI_Init_thread(MPI_THREAD_MULTIPLE)
//   auto objective = [&](const ht::Config& cfg, ht::Trial& trial) {   // the same as for ht::Tuner
//       MPI_Comm group = ht::mpi::group_comm(trial);  // the trial's ranks (MPI_COMM_SELF in a Tuner)
//       ... every rank of the group trains, MPI_Allreduce on `group` ...
//       trial.report(epoch, value);          // collective, see below
//       if (trial.should_stop()) ...         // same answer on every rank
//       return value;                        // or ht::Metrics{...}
//   };
//   ht::mpi::MpiResult r = ht::mpi::fit(MPI_COMM_WORLD, space, ht::ASHA({.max_resource = 9}), options,
//                                       {.ranks_parameter = "workers"},     // or {.ranks_per_trial = 2}
//                                       objective);
//   fmt::print("{}\n{}\n", r.summary(), r.rank_usage().summary());
//
// One objective for both. The Trial an objective gets on a group's ranks is a
// hypertune::mpi::GroupTrial, which is a hypertune::Trial (mpi/group_trial.hpp): an objective
// R(const Config&, Trial&), R being double or Metrics, runs under hypertune::Tuner and under
// mpi::fit without a change; ht::mpi::group(trial) is its GroupTrial (communicator, rank, size,
// world ranks) under mpi::fit and nullptr in a Tuner. R(const Config&, GroupTrial&),
// R(const Config&, GroupTrial&, MPI_Comm group) and R(const Config&) work too.
//
// How it works. Rank 0 is the coordinator: it runs the ordinary hypertune::Tuner (so strategies,
// retries, callbacks, the journal and the Result are exactly those of a single-process run). Ranks
// 1..N-1 train. A group is formed per trial run: the tuner's worker thread reads the trial's rank
// count (MpiOptions::ranks_per_trial, or the value of the parameter MpiOptions::ranks_parameter
// names in the trial's configuration), waits until the coordinator's rank pool grants it that many
// free ranks (mpi/rank_pool.hpp: backfilling, with a bound on how long a large trial can be
// overtaken; consecutive ranks preferred), and sends each of them the trial header (id,
// configuration as JSON, budget, resumed_from, checkpoint flag, the group's ranks). Those ranks
// build the group's communicator among themselves with MPI_Comm_create_group (collective over the
// group only, so groups form and dissolve while others train); its lowest rank leads. The thread
// then serves the leader's messages: REPORT (a value, or Metrics) -> Trial::report + reply
// stop/continue or the report's error, SAVE -> the checkpoint, RESULT -> the value or Metrics,
// FAILED -> an exception, so the trial is recorded Failed. At the result the ranks go back to the pool. When the tuner ends, rank 0 sends STOP to
// every training rank and every rank returns.
//
// Layout and cost. The ranks hold (N-1) / ranks_per_trial trials at a time (N-1 must be a multiple
// of it), or N-1 with ranks_parameter (at most one trial per training rank in flight).
// TunerOptions::max_parallel_jobs left at 1 (the default) becomes that count; a larger value is a
// limit of the user's own (ranks stay idle), and one above that count is refused. (So under MPI,
// 1 cannot mean one trial at a time: ranks_per_trial = N-1 does that.) With ranks_per_trial,
// instances_per_trial, when left at 1, becomes ranks_per_trial. With ranks_parameter,
// TunerOptions::instances_parameter = ranks_parameter, so each trial is billed elapsed x its own
// rank count (TrialRecord::instances, billable_seconds). The time a trial waits for its ranks is
// not billed: the coordinator calls Trial::resources_acquired() once they are granted, and the
// wait goes to TrialRecord::waited_seconds. RankUsage has the ranks' own account
// (mpi/rank_usage.hpp).
//
// Rank utilisation. fit() returns an MpiResult: the Result, and rank_usage(): busy rank-seconds /
// (training ranks x wall seconds), the waits for ranks, and the timeline of allocations (wait,
// start on which ranks, end, hold). Result::cost().utilisation is the tuner's own figure (trial
// time over worker threads), not the ranks'.
//
// Threads and polling. Rank 0 calls MPI from the tuner's worker threads, so it needs at least
// MPI_THREAD_SERIALIZED (Environment asks for MPI_THREAD_MULTIPLE). Every MPI call on rank 0 goes
// through one mutex (correct under SERIALIZED and MULTIPLE alike; messages are tiny and rare) and
// waits by polling (MPI_Iprobe / MPI_Test) with a growing sleep, never in a blocking call: a blocked
// call would hold the mutex, and a spinning one would take a core from the ranks that train, which
// matters when ranks are oversubscribed. A thread waiting for ranks waits on a condition variable.
// Idle training ranks poll for rank 0's next message the same way. Every message carries its own
// tag and is received from one named source (the group's leader), and a rank serves one trial at a
// time, so concurrent threads never take each other's messages. Our traffic uses duplicates of the
// communicators, so it never mixes with the user's messages. (Forming a group calls the blocking
// MPI_Comm_create_group and MPI_Comm_dup; every member has just been told, so they are short.)
//
// Rules for the objective (documented limits):
// - It is called collectively by every rank of a group. Trial::report(step, value) (and
//   report(step, metrics)) is collective too: every rank of the group must call it at the same
//   steps (the leader's value is the one reported and judged; make the values agree, e.g. after an
//   MPI_Allreduce). should_stop() then returns the same answer on every rank, so stopping never
//   leaves a rank alone inside a collective.
// - It returns a number, or hypertune::Metrics when the run has several objectives or constraints
//   (TunerOptions::objectives / constraints): the leader's values are the trial's.
// - An exception on any rank fails the trial: at the end of the trial the group agrees on failure
//   (MPI_Allreduce of an error flag) and the leader sends the first failing rank's message. An
//   exception thrown while other ranks of the group are inside a collective of the user's (a throw
//   on one rank mid-training) leaves those ranks waiting there: MPI cannot cancel a collective.
//   Throw on every rank of the group (e.g. after agreeing on a check), or outside collectives.
// - save_checkpoint() keeps the leader's bytes (the model is expected to be replicated in the
//   group); the checkpoint is sent to every rank of the group when a trial resumes. A resumed
//   trial may run on other ranks than before (the same count: it comes from its configuration).
//   checkpoint_dir() is not available in a group (it throws Error: the folder would be rank 0's).
// - Ranks other than 0 return an empty MpiResult; broadcast_best() shares the best configuration.
// - The coordinator rank does not train; on a single node with few cores it sleeps while waiting.

#include <hypertune/config.hpp>
#include <hypertune/detail/instance_count.hpp>
#include <hypertune/error.hpp>
#include <hypertune/json.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/metrics.hpp>
#include <hypertune/mpi/channel.hpp>
#include <hypertune/mpi/environment.hpp>
#include <hypertune/mpi/group_trial.hpp>
#include <hypertune/mpi/options.hpp>
#include <hypertune/mpi/rank_pool.hpp>
#include <hypertune/mpi/rank_usage.hpp>
#include <hypertune/mpi/trial_protocol.hpp>
#include <hypertune/result.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/strategy.hpp>
#include <hypertune/trial.hpp>
#include <hypertune/tuner.hpp>

#include <fmt/core.h>
#include <mpi.h>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hypertune::mpi {

namespace detail {

// Error kinds carried from rank 0 to every rank, so all throw the same exception.
HYPERTUNE_MPI_INLINE std::string encode_error(char kind, std::string_view what);
[[noreturn]] HYPERTUNE_MPI_INLINE void throw_encoded(const std::string& e);

// The layout's and the rank parameter's problems, or empty; the same text on every rank.
HYPERTUNE_MPI_INLINE std::string check_layout(const SearchSpace& space, const MpiOptions& m, int size);

// fit() once the objective is behind one type.
HYPERTUNE_MPI_INLINE MpiResult fit(MPI_Comm world, const SearchSpace& space, AnyStrategy strategy, TunerOptions options,
                                   MpiOptions mpi_options, const GroupObjectiveFunction& objective);

}  // namespace detail

/// Runs a tuning job over the ranks of `world`: rank 0 coordinates (the ordinary Tuner), ranks
/// 1..N-1 train each trial in a group of mpi_options.ranks_per_trial ranks, or of as many ranks as
/// the trial's parameter mpi_options.ranks_parameter says (see the top of this file). Collective:
/// call it on every rank of `world`. The objective may be the one written for hypertune::Tuner,
/// R(const Config&, Trial&) (see GroupObjective). Bad options, a bad layout or a bad rank
/// parameter throw the same InvalidArgument on every rank before any trial. Returns the Result and
/// the ranks' usage on rank 0, an empty MpiResult elsewhere.
template <class F>
MpiResult fit(MPI_Comm world, const SearchSpace& space, AnyStrategy strategy, TunerOptions options,
              MpiOptions mpi_options, F&& objective) {
    static_assert(GroupObjective<F>,
                  "hypertune::mpi::fit: the objective must be callable as R(const hypertune::Config&, "
                  "hypertune::Trial&), R(const hypertune::Config&, hypertune::mpi::GroupTrial&), "
                  "R(const hypertune::Config&, hypertune::mpi::GroupTrial&, MPI_Comm) or R(const hypertune::Config&), "
                  "R being double or hypertune::Metrics");
    return detail::fit(world, space, std::move(strategy), std::move(options), std::move(mpi_options),
                       detail::make_group_objective(objective));
}

/// Shares the best configuration of rank 0's Result with every rank of `world` (collective).
/// Throws hypertune::Error on every rank when rank 0's result has no best trial.
[[nodiscard]] HYPERTUNE_MPI_INLINE Config broadcast_best(MPI_Comm world, const SearchSpace& space, const Result& result);

}  // namespace hypertune::mpi

#ifndef HYPERTUNE_COMPILED_MPI
#include <hypertune/impl/mpi.hpp>
#endif
