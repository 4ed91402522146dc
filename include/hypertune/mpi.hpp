// SPDX-License-Identifier: MIT
#pragma once
// hypertune over MPI: one tuning run across many ranks, each trial trained by a group of ranks on
// its own communicator (data-parallel training inside a trial, trials in parallel across groups).
// The group's size is fixed, or is a tuned parameter of the trial (the worker count).
//
//   hypertune::mpi::Environment env(argc, argv);     // MPI_Init_thread(MPI_THREAD_MULTIPLE)
//   ht::mpi::MpiResult r = ht::mpi::fit(MPI_COMM_WORLD, space, ht::ASHA({.max_resource = 9}), options,
//                               {.ranks_parameter = "workers"},     // or {.ranks_per_trial = 2}
//                               [&](const ht::Config& cfg, ht::mpi::GroupTrial& trial, MPI_Comm group) {
//                                   ... every rank of the group trains, MPI_Allreduce on `group` ...
//                                   trial.report(epoch, value);          // collective, see below
//                                   if (trial.should_stop()) ...         // same answer on every rank
//                                   return value;                        // or ht::Metrics{...}
//                               });
//   fmt::print("{}\n{}\n", r.summary(), r.rank_usage().summary());
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
// then serves the leader's messages: REPORT -> Trial::report + reply stop/continue, SAVE -> the
// checkpoint, RESULT -> the value or Metrics, FAILED -> an exception, so the trial is recorded
// Failed. At the result the ranks go back to the pool. When the tuner ends, rank 0 sends STOP to
// every training rank and every rank returns.
//
// Layout and cost. With ranks_per_trial, max_parallel_jobs = (N-1) / ranks_per_trial (N-1 must be
// a multiple of it) and, when left at 1, instances_per_trial = ranks_per_trial. With
// ranks_parameter, max_parallel_jobs = N-1 (at most one trial per training rank in flight) and
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
// - It is called collectively by every rank of a group. Trial::report(step, value) is collective
//   too: every rank of the group must call it at the same steps (the leader's value is the one
//   reported; make the values agree, e.g. after an MPI_Allreduce). should_stop() then returns the
//   same answer on every rank, so stopping never leaves a rank alone inside a collective.
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
// - Ranks other than 0 return an empty MpiResult; broadcast_best() shares the best configuration.
// - The coordinator rank does not train; on a single node with few cores it sleeps while waiting.

#include <hypertune/config.hpp>
#include <hypertune/detail/instance_count.hpp>
#include <hypertune/error.hpp>
#include <hypertune/json.hpp>
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

#include <fmt/format.h>
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
inline std::string encode_error(char kind, std::string_view what) { return std::string(1, kind) + std::string(what); }

[[noreturn]] inline void throw_encoded(const std::string& e) {
    std::string what = e.substr(1);
    if (e[0] == 'I') throw InvalidArgument(what);
    if (e[0] == 'O') throw IoError(what);
    throw Error(what);
}

// The layout's and the rank parameter's problems, or empty; the same text on every rank.
inline std::string check_layout(const SearchSpace& space, const MpiOptions& m, int size) {
    const int per_trial = m.ranks_per_trial;
    const bool by_parameter = !m.ranks_parameter.empty();
    if (per_trial < 1) return fmt::format("mpi::fit: ranks_per_trial must be >= 1, got {}", per_trial);
    if (by_parameter && per_trial != 1)
        return fmt::format("mpi::fit: ranks_per_trial = {} and ranks_parameter = '{}': give one of them (the rank count "
                           "is fixed, or comes from the parameter)",
                           per_trial, m.ranks_parameter);
    if (size < 2) return "mpi::fit: needs at least 2 ranks (rank 0 coordinates, the others train), got 1";
    if (m.max_poll_sleep_microseconds < 0)
        return fmt::format("mpi::fit: max_poll_sleep_microseconds must be >= 0, got {}", m.max_poll_sleep_microseconds);
    if (by_parameter) {
        try {
            hypertune::detail::check_count_parameter(space.parameters(), m.ranks_parameter,
                                  fmt::format("mpi::fit: ranks_parameter '{}'", m.ranks_parameter), size - 1,
                                  fmt::format("the training ranks: world size {} minus rank 0, the coordinator", size));
        } catch (const InvalidArgument& e) {
            return e.what();
        }
    } else if ((size - 1) % per_trial != 0) {
        return fmt::format("mpi::fit: ranks_per_trial = {} does not divide the {} training ranks (world size {} minus "
                           "rank 0, the coordinator); run with 1 + k*{} ranks",
                           per_trial, size - 1, size, per_trial);
    }
    return {};
}

}  // namespace detail

/// Runs a tuning job over the ranks of `world`: rank 0 coordinates (the ordinary Tuner), ranks
/// 1..N-1 train each trial in a group of mpi_options.ranks_per_trial ranks, or of as many ranks as
/// the trial's parameter mpi_options.ranks_parameter says (see the top of this file). Collective:
/// call it on every rank of `world`. Bad options, a bad layout or a bad rank parameter throw the
/// same InvalidArgument on every rank before any trial. Returns the Result and the ranks' usage on
/// rank 0, an empty MpiResult elsewhere.
template <class F>
MpiResult fit(MPI_Comm world, const SearchSpace& space, AnyStrategy strategy, TunerOptions options,
              MpiOptions mpi_options, F&& objective) {
    static_assert(GroupObjective<F>,
                  "hypertune::mpi::fit: the objective must be callable as R(const hypertune::Config&, "
                  "hypertune::mpi::GroupTrial&) or R(const hypertune::Config&, hypertune::mpi::GroupTrial&, MPI_Comm), "
                  "R being double or hypertune::Metrics");
    constexpr bool metrics = detail::returns_metrics_v<F>;
    detail::CommHandle comm;
    detail::check(MPI_Comm_dup(world, comm.out()), "MPI_Comm_dup");
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(comm.get(), &rank);
    MPI_Comm_size(comm.get(), &size);
    const bool by_parameter = !mpi_options.ranks_parameter.empty();

    // Every check runs on rank 0 and its verdict is broadcast: all ranks throw together or go on.
    std::optional<Tuner> tuner;
    std::string verdict;
    if (rank == 0) {
        int provided = MPI_THREAD_SINGLE;
        MPI_Query_thread(&provided);
        if (std::string layout = detail::check_layout(space, mpi_options, size); !layout.empty()) {
            verdict = detail::encode_error('I', layout);
        } else if (provided < MPI_THREAD_SERIALIZED) {
            verdict = detail::encode_error(
                'I', "mpi::fit: rank 0 calls MPI from worker threads and needs MPI_THREAD_SERIALIZED or better; "
                     "initialise MPI with MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...) or hypertune::mpi::Environment");
        } else if (by_parameter && !options.instances_parameter.empty() &&
                   options.instances_parameter != mpi_options.ranks_parameter) {
            verdict = detail::encode_error(
                'I', fmt::format("mpi::fit: TunerOptions::instances_parameter = '{}' but ranks_parameter = '{}': a trial "
                                 "is billed for its ranks; leave instances_parameter empty",
                                 options.instances_parameter, mpi_options.ranks_parameter));
        } else if (!metrics && (options.objectives.size() > 1 || !options.constraints.empty())) {
            verdict = detail::encode_error(
                'I', fmt::format("mpi::fit: the run has metrics {}: the objective must return hypertune::Metrics with "
                                 "a value for each, not a single number",
                                 fmt::join(metric_names(options.objectives, options.constraints), ", ")));
        } else {
            if (by_parameter) {
                options.max_parallel_jobs = static_cast<std::size_t>(size - 1);
                options.instances_parameter = mpi_options.ranks_parameter;
            } else {
                options.max_parallel_jobs = static_cast<std::size_t>((size - 1) / mpi_options.ranks_per_trial);
                if (options.instances_per_trial == 1) options.instances_per_trial = mpi_options.ranks_per_trial;
            }
            try {
                tuner.emplace(space, std::move(strategy), std::move(options));
            } catch (const InvalidArgument& e) {
                verdict = detail::encode_error('I', e.what());
            } catch (const IoError& e) {
                verdict = detail::encode_error('O', e.what());
            } catch (const std::exception& e) {
                verdict = detail::encode_error('E', e.what());
            }
        }
    }
    {
        // Blocking is fine here: every rank is at this point.
        long long n = static_cast<long long>(verdict.size());
        MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, comm.get());
        verdict.resize(static_cast<std::size_t>(n));
        if (n > 0) MPI_Bcast(verdict.data(), static_cast<int>(n), MPI_BYTE, 0, comm.get());
    }
    if (!verdict.empty()) detail::throw_encoded(verdict);

    // The groups are created on a communicator of their own, apart from our messages.
    detail::CommHandle groups_parent;
    detail::check(MPI_Comm_dup(comm.get(), groups_parent.out()), "MPI_Comm_dup");
    if (rank != 0) {
        detail::serve_rank(space, objective, comm.get(), groups_parent.get(), rank,
                           mpi_options.max_poll_sleep_microseconds);
        return MpiResult{};
    }

    detail::Channel channel(comm.get(), mpi_options.max_poll_sleep_microseconds);
    detail::RankPool pool(size, by_parameter ? mpi_options.max_overtakes : -1);
    // Whatever happens on rank 0, every training rank is told to stop, so no rank waits forever.
    struct StopRanks {
        detail::Channel& channel;
        int size;
        ~StopRanks() {
            for (int r = 1; r < size; ++r) {
                try {
                    channel.send(r, detail::stop_tag, std::string());
                } catch (...) {  // an MPI failure here has nothing better to do
                }
            }
        }
    } stop_ranks{channel, size};
    auto run_trial = [&](const Config& cfg, Trial& trial) -> std::string {
        const int wanted = by_parameter ? static_cast<int>(hypertune::detail::count_in(cfg, mpi_options.ranks_parameter))
                                        : mpi_options.ranks_per_trial;
        const std::vector<int> ranks = pool.acquire(trial.id(), wanted);
        trial.resources_acquired();  // the wait for ranks is not billed
        struct Release {
            detail::RankPool& pool;
            TrialId trial;
            const std::vector<int>& ranks;
            ~Release() { pool.release(trial, ranks); }
        } release{pool, trial.id(), ranks};
        return detail::coordinate_trial(channel, ranks, cfg, trial);
    };
    Result result;
    if constexpr (metrics)
        result = tuner->fit([&](const Config& cfg, Trial& trial) -> Metrics {
            return detail::metrics_from(run_trial(cfg, trial));
        });
    else
        result = tuner->fit([&](const Config& cfg, Trial& trial) -> double {
            return detail::unpack<double>(run_trial(cfg, trial));
        });
    return MpiResult(std::move(result), pool.finish());
}

/// Shares the best configuration of rank 0's Result with every rank of `world` (collective).
/// Throws hypertune::Error on every rank when rank 0's result has no best trial.
[[nodiscard]] inline Config broadcast_best(MPI_Comm world, const SearchSpace& space, const Result& result) {
    int rank = 0;
    MPI_Comm_rank(world, &rank);
    std::string bytes;
    if (rank == 0) bytes = result.has_best() ? result.best().config.to_json().dump() : std::string();
    long long n = static_cast<long long>(bytes.size());
    MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, world);
    bytes.resize(static_cast<std::size_t>(n));
    if (n == 0) throw Error("mpi::broadcast_best: rank 0's result has no best trial");
    MPI_Bcast(bytes.data(), detail::to_count(bytes.size()), MPI_BYTE, 0, world);
    return space.from_json(nlohmann::json::parse(bytes));
}

}  // namespace hypertune::mpi
