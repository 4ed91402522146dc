// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/mpi.hpp>: the checks, the coordinator and the training ranks of
// hypertune::mpi::fit. Inline unless the program links hypertune::compiled_mpi, which compiles
// them (see <hypertune/linkage.hpp>).

#include <hypertune/linkage.hpp>
#include <hypertune/detail/str_cat.hpp>
#include <hypertune/mpi.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#if defined(HYPERTUNE_COMPILED_MPI) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/mpi.hpp> is compiled into hypertune::compiled_mpi: include <hypertune/mpi.hpp>"
#endif

namespace hypertune::mpi {

namespace detail {

HYPERTUNE_MPI_INLINE std::string encode_error(char kind, std::string_view what) {
    return std::string(1, kind) + std::string(what);
}

HYPERTUNE_MPI_INLINE void throw_encoded(const std::string& e) {
    std::string what = e.substr(1);
    if (e[0] == 'I') throw InvalidArgument(what);
    if (e[0] == 'O') throw IoError(what);
    throw Error(what);
}

// Rank 0's `bytes` on every rank of `comm`, blocking (every rank is at this call).
HYPERTUNE_MPI_INLINE void broadcast_from_0(std::string& bytes, MPI_Comm comm) {
    long long n = static_cast<long long>(bytes.size());
    MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, comm);
    bytes.resize(static_cast<std::size_t>(n));
    if (n > 0) MPI_Bcast(bytes.data(), to_count(bytes.size()), MPI_BYTE, 0, comm);
}

HYPERTUNE_MPI_INLINE std::string check_layout(const SearchSpace& space, const MpiOptions& m, int size) {
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
            hypertune::detail::check_count_parameter(
                space.parameters(), m.ranks_parameter, fmt::format("mpi::fit: ranks_parameter '{}'", m.ranks_parameter),
                size - 1, fmt::format("the training ranks: world size {} minus rank 0, the coordinator", size));
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

HYPERTUNE_MPI_INLINE MpiResult fit(MPI_Comm world, const SearchSpace& space, AnyStrategy strategy, TunerOptions options,
                                   MpiOptions mpi_options, const GroupObjectiveFunction& objective) {
    const bool metrics = objective.returns_metrics;
    CommHandle comm;
    check(MPI_Comm_dup(world, comm.out()), "MPI_Comm_dup");
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(comm.get(), &rank);
    MPI_Comm_size(comm.get(), &size);
    const bool by_parameter = !mpi_options.ranks_parameter.empty();

    // Every rank must tune the same space: one with another fails each configuration it is sent,
    // and hangs a group whose objective calls a collective. Rank 0's is compared on every rank.
    const std::string my_space = space.to_json().dump();
    std::vector<int> differs(static_cast<std::size_t>(size), 0);
    {
        std::string zero = my_space;
        broadcast_from_0(zero, comm.get());
        const int mismatch = zero != my_space ? 1 : 0;
        MPI_Gather(&mismatch, 1, MPI_INT, differs.data(), 1, MPI_INT, 0, comm.get());
    }
    std::vector<int> other_spaces;  // the world ranks whose space is not rank 0's (rank 0 only)
    for (int r = 0; r < size; ++r)
        if (differs[static_cast<std::size_t>(r)] != 0) other_spaces.push_back(r);

    // Every check runs on rank 0 and its verdict is broadcast: all ranks throw together or go on.
    std::optional<Tuner> tuner;
    std::string verdict;
    if (rank == 0) {
        int provided = MPI_THREAD_SINGLE;
        MPI_Query_thread(&provided);
        if (!other_spaces.empty()) {
            verdict = encode_error(
                'I', fmt::format("mpi::fit: the search space of rank{} {} is not rank 0's: every rank must build the "
                                 "same space (rank 0's: {})",
                                 other_spaces.size() == 1 ? "" : "s", fmt::join(other_spaces, ", "), my_space));
        } else if (std::string layout = check_layout(space, mpi_options, size); !layout.empty()) {
            verdict = encode_error('I', layout);
        } else if (provided < MPI_THREAD_SERIALIZED) {
            verdict = encode_error(
                'I', "mpi::fit: rank 0 calls MPI from worker threads and needs MPI_THREAD_SERIALIZED or better; "
                     "initialise MPI with MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...) or hypertune::mpi::Environment");
        } else if (by_parameter && !options.instances_parameter.empty() &&
                   options.instances_parameter != mpi_options.ranks_parameter) {
            verdict = encode_error(
                'I', fmt::format("mpi::fit: TunerOptions::instances_parameter = '{}' but ranks_parameter = '{}': a trial "
                                 "is billed for its ranks; leave instances_parameter empty",
                                 options.instances_parameter, mpi_options.ranks_parameter));
        } else if (!metrics && (options.objectives.size() > 1 || !options.constraints.empty())) {
            verdict = encode_error(
                'I', fmt::format("mpi::fit: the run has metrics {}: the objective must return hypertune::Metrics with "
                                 "a value for each, not a single number",
                                 hypertune::detail::join(metric_names(options.objectives, options.constraints), ", ")));
        } else if (const auto ranks_allow = static_cast<std::size_t>(by_parameter ? size - 1
                                                                                   : (size - 1) / mpi_options.ranks_per_trial);
                   options.max_parallel_jobs > ranks_allow) {
            verdict = encode_error(
                'I', fmt::format("mpi::fit: TunerOptions::max_parallel_jobs = {} but the ranks hold at most {} trial{} "
                                 "at a time ({} training ranks{}); leave it at 1 for as many as the ranks hold, or set "
                                 "at most {}",
                                 options.max_parallel_jobs, ranks_allow, ranks_allow == 1 ? "" : "s", size - 1,
                                 by_parameter ? ", one trial per rank at most"
                                              : fmt::format(", {} per trial", mpi_options.ranks_per_trial),
                                 ranks_allow));
        } else {
            // 1 (the default) means as many trials as the ranks hold; more is the user's own limit.
            if (options.max_parallel_jobs == 1) options.max_parallel_jobs = ranks_allow;
            if (by_parameter) {
                options.instances_parameter = mpi_options.ranks_parameter;
            } else if (options.instances_per_trial == 1) {
                options.instances_per_trial = mpi_options.ranks_per_trial;
            }
            try {
                tuner.emplace(space, std::move(strategy), std::move(options));
            } catch (const InvalidArgument& e) {
                verdict = encode_error('I', e.what());
            } catch (const IoError& e) {
                verdict = encode_error('O', e.what());
            } catch (const std::exception& e) {
                verdict = encode_error('E', e.what());
            }
        }
    }
    broadcast_from_0(verdict, comm.get());
    if (!verdict.empty()) throw_encoded(verdict);

    // The groups are created on a communicator of their own, apart from our messages.
    CommHandle groups_parent;
    check(MPI_Comm_dup(comm.get(), groups_parent.out()), "MPI_Comm_dup");
    if (rank != 0) {
        serve_rank(space, objective, comm.get(), groups_parent.get(), rank, mpi_options.max_poll_sleep_microseconds);
        return MpiResult{};
    }

    Channel channel(comm.get(), mpi_options.max_poll_sleep_microseconds);
    RankPool pool(size, by_parameter ? mpi_options.max_overtakes : -1);
    // Whatever happens on rank 0, every training rank is told to stop, so no rank waits forever.
    struct StopRanks {
        Channel& channel;
        int size;
        ~StopRanks() {
            for (int r = 1; r < size; ++r) {
                try {
                    channel.send(r, stop_tag, std::string());
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
            RankPool& pool;
            TrialId trial;
            const std::vector<int>& ranks;
            ~Release() { pool.release(trial, ranks); }
        } release{pool, trial.id(), ranks};
        return coordinate_trial(channel, ranks, cfg, trial);
    };
    // MpiOptions::stop ends the run as TuningJob::stop() ends a Tuner's (declared after the job, so
    // that a stop under way in another thread is waited for before the job goes).
    auto run_job = [&](TuningJob job) {
        const std::stop_callback on_stop(mpi_options.stop, [&job] { job.stop(); });
        return job.take_result();
    };
    Result result =
        metrics ? run_job(tuner->start([&](const Config& cfg, Trial& trial) -> Metrics {
                      return metrics_from(run_trial(cfg, trial));
                  }))
                : run_job(tuner->start([&](const Config& cfg, Trial& trial) -> double {
                      return unpack<double>(run_trial(cfg, trial));
                  }));
    return MpiResult(std::move(result), pool.finish());
}

}  // namespace detail

HYPERTUNE_MPI_INLINE Config broadcast_best(MPI_Comm world, const SearchSpace& space, const Result& result) {
    int rank = 0;
    MPI_Comm_rank(world, &rank);
    std::string bytes;
    if (rank == 0) bytes = result.has_best() ? result.best().config.to_json().dump() : std::string();
    detail::broadcast_from_0(bytes, world);
    if (bytes.empty()) throw Error("mpi::broadcast_best: rank 0's result has no best trial");
    return space.from_json(nlohmann::ordered_json::parse(bytes));
}

}  // namespace hypertune::mpi
