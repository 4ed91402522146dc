// SPDX-License-Identifier: MIT
#pragma once
// hypertune over MPI: one tuning run across many ranks, each trial trained by a group of ranks on
// its own sub-communicator (data-parallel training inside a trial, trials in parallel across groups).
//
//   hypertune::mpi::Environment env(argc, argv);     // MPI_Init_thread(MPI_THREAD_MULTIPLE)
//   ht::Result r = ht::mpi::fit(MPI_COMM_WORLD, space, ht::ASHA({.max_resource = 9}), options,
//                               {.ranks_per_trial = 2},
//                               [&](const ht::Config& cfg, ht::mpi::GroupTrial& trial, MPI_Comm group) {
//                                   ... every rank of the group trains, MPI_Allreduce on `group` ...
//                                   trial.report(epoch, value);          // collective, see below
//                                   if (trial.should_stop()) ...         // same answer on every rank
//                               });
//
// How it works. Rank 0 is the coordinator: it runs the ordinary hypertune::Tuner (so strategies,
// retries, callbacks, the journal and the Result are exactly those of a single-process run) with
// max_parallel_jobs = number of groups. Ranks 1..N-1 are split into groups of ranks_per_trial
// consecutive ranks; the group's first rank is its leader. Each tuner worker thread on rank 0 takes
// a free group, sends it the trial (id, configuration as JSON, budget, resumed_from, checkpoint) and
// serves its messages: REPORT -> Trial::report + reply stop/continue, SAVE -> the checkpoint,
// RESULT -> the return value, FAILED -> an exception, so the trial is recorded Failed. When the tuner
// ends, rank 0 sends STOP to every leader and every rank returns.
//
// Threads and polling. Rank 0 calls MPI from the tuner's worker threads, so it needs at least
// MPI_THREAD_SERIALIZED (Environment asks for MPI_THREAD_MULTIPLE). Every MPI call on rank 0 goes
// through one mutex (correct under SERIALIZED and MULTIPLE alike; messages are tiny and rare) and
// waits by polling (MPI_Iprobe / MPI_Test) with a growing sleep, never in a blocking call: a blocked
// call would hold the mutex, and a spinning one would take a core from the ranks that train, which
// matters when ranks are oversubscribed. Every message carries its own tag and is received from one
// named source (the group's leader), and a group serves one trial at a time, so concurrent threads
// never take each other's messages. Our traffic uses duplicates of the communicators, so it never
// mixes with the user's messages.
//
// Rules for the objective (documented limits):
// - It is called collectively by every rank of a group. Trial::report(step, value) is collective
//   too: every rank of the group must call it at the same steps (the leader's value is the one
//   reported; make the values agree, e.g. after an MPI_Allreduce). should_stop() then returns the
//   same answer on every rank, so stopping never leaves a rank alone inside a collective.
// - An exception on any rank fails the trial: at the end of the trial the group agrees on failure
//   (MPI_Allreduce of an error flag) and the leader sends the first failing rank's message. An
//   exception thrown while other ranks of the group are inside a collective of the user's (a throw
//   on one rank mid-training) leaves those ranks waiting there: MPI cannot cancel a collective.
//   Throw on every rank of the group (e.g. after agreeing on a check), or outside collectives.
// - save_checkpoint() keeps the leader's bytes (the model is expected to be replicated in the
//   group); the checkpoint is sent to every rank of the group when a trial resumes.
// - Ranks other than 0 return an empty Result; broadcast_best() shares the best configuration.
// - The coordinator rank does not train; on a single node with few cores it sleeps while waiting.

#include <hypertune/config.hpp>
#include <hypertune/json.hpp>
#include <hypertune/error.hpp>
#include <hypertune/result.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/strategy.hpp>
#include <hypertune/trial.hpp>
#include <hypertune/tuner.hpp>

#include <fmt/format.h>
#include <mpi.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace hypertune::mpi {

/// How the ranks are used.
struct MpiOptions {
    /// Ranks that train one trial together. World size - 1 must be a multiple of it.
    int ranks_per_trial = 1;
    /// Longest sleep, in microseconds, between two polls of a rank that waits for a message (the
    /// sleep grows from 0 to this). Larger: less CPU taken from training ranks, more latency.
    int max_poll_sleep_microseconds = 1000;
};

/// Initialises MPI with MPI_THREAD_MULTIPLE (rank 0 calls MPI from worker threads) and finalises it
/// on destruction. If MPI is already initialised it only records the thread level.
class Environment {
public:
    Environment(int& argc, char**& argv, int required = MPI_THREAD_MULTIPLE) {
        int initialised = 0;
        MPI_Initialized(&initialised);
        if (initialised) {
            MPI_Query_thread(&provided_);
        } else {
            MPI_Init_thread(&argc, &argv, required, &provided_);
            owns_ = true;
        }
    }
    Environment(const Environment&) = delete;
    Environment& operator=(const Environment&) = delete;
    ~Environment() {
        int finalised = 0;
        MPI_Finalized(&finalised);
        if (owns_ && !finalised) MPI_Finalize();
    }
    /// The thread level MPI provides (MPI_THREAD_SINGLE ... MPI_THREAD_MULTIPLE).
    [[nodiscard]] int provided() const noexcept { return provided_; }

private:
    int provided_ = MPI_THREAD_SINGLE;
    bool owns_ = false;
};

namespace detail {

// Message tags; one per kind so a receive never mistakes one kind for another.
enum Tag : int {
    trial_tag = 7101,   // 0 -> leader: the trial header (JSON)
    stop_tag,           // 0 -> leader: the run is over
    checkpoint_tag,     // 0 -> leader: the checkpoint of a resumed trial
    report_tag,         // leader -> 0: step and value
    reply_tag,          // 0 -> leader: continue, stop, or an error message
    save_tag,           // leader -> 0: a checkpoint to keep
    result_tag,         // leader -> 0: the objective's value
    failed_tag,         // leader -> 0: why the trial failed
};

enum ReplyCode : char { reply_continue = 0, reply_stop = 1, reply_error = 2 };

inline void check(int rc, const char* what) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(rc, text, &length);
    throw Error(fmt::format("hypertune::mpi: {} failed: {}", what, std::string(text, static_cast<std::size_t>(length))));
}

inline int to_count(std::size_t n) {
    if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
        throw Error(fmt::format("hypertune::mpi: a message of {} bytes is too large (limit 2 GiB)", n));
    return static_cast<int>(n);
}

// Waits politely: yields a few times, then sleeps longer and longer up to the cap.
class Backoff {
public:
    explicit Backoff(int max_us) : max_us_(std::max(0, max_us)) {}
    void pause() {
        if (++polls_ <= 20 || max_us_ == 0) {
            std::this_thread::yield();
            return;
        }
        sleep_us_ = std::min(max_us_, std::max(1, sleep_us_ * 2));
        std::this_thread::sleep_for(std::chrono::microseconds(sleep_us_));
    }

private:
    int max_us_;
    int polls_ = 0;
    int sleep_us_ = 1;
};

// Point-to-point and collective helpers that never block inside MPI. The mutex serialises MPI calls
// between the tuner's threads on rank 0 (uncontended elsewhere).
class Channel {
public:
    Channel(MPI_Comm comm, int max_sleep_us) : comm_(comm), max_sleep_us_(max_sleep_us) {}

    void send(int dest, int tag, const std::string& bytes) {
        MPI_Request request = MPI_REQUEST_NULL;
        {
            std::lock_guard lk(mu_);
            check(MPI_Isend(bytes.data(), to_count(bytes.size()), MPI_BYTE, dest, tag, comm_, &request), "MPI_Isend");
        }
        wait(request);
    }

    // The next message from `source` with `tag` (MPI_ANY_TAG: any), as (tag, bytes).
    std::pair<int, std::string> receive(int source, int tag = MPI_ANY_TAG) {
        Backoff backoff(max_sleep_us_);
        for (;;) {
            {
                std::lock_guard lk(mu_);
                int found = 0;
                MPI_Status status;
                check(MPI_Iprobe(source, tag, comm_, &found, &status), "MPI_Iprobe");
                if (found) {
                    int count = 0;
                    MPI_Get_count(&status, MPI_BYTE, &count);
                    std::string bytes(static_cast<std::size_t>(count), '\0');
                    // Matched by the probe and no other thread receives from this source: completes at once.
                    check(MPI_Recv(bytes.data(), count, MPI_BYTE, source, status.MPI_TAG, comm_, MPI_STATUS_IGNORE),
                          "MPI_Recv");
                    return {status.MPI_TAG, std::move(bytes)};
                }
            }
            backoff.pause();
        }
    }

    void wait(MPI_Request& request) {
        Backoff backoff(max_sleep_us_);
        for (;;) {
            int done = 0;
            {
                std::lock_guard lk(mu_);
                check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
            }
            if (done) return;
            backoff.pause();
        }
    }

    [[nodiscard]] int max_sleep_us() const noexcept { return max_sleep_us_; }

private:
    MPI_Comm comm_;
    int max_sleep_us_;
    std::mutex mu_;
};

// Broadcasts a byte string within `comm` from `root` (MPI_Ibcast and polling, so waiting ranks sleep).
inline void broadcast(std::string& bytes, int root, MPI_Comm comm, Channel& channel) {
    long long size = static_cast<long long>(bytes.size());
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Ibcast(&size, 1, MPI_LONG_LONG, root, comm, &request), "MPI_Ibcast");
    channel.wait(request);
    bytes.resize(static_cast<std::size_t>(size));
    if (size == 0) return;
    check(MPI_Ibcast(bytes.data(), to_count(bytes.size()), MPI_BYTE, root, comm, &request), "MPI_Ibcast");
    channel.wait(request);
}

template <class T>
std::string pack(const T& x) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::string s(sizeof(T), '\0');
    std::memcpy(s.data(), &x, sizeof(T));
    return s;
}

template <class T>
T unpack(const std::string& s) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (s.size() != sizeof(T)) throw Error(fmt::format("hypertune::mpi: malformed message of {} bytes", s.size()));
    T x;
    std::memcpy(&x, s.data(), sizeof(T));
    return x;
}

struct ReportMessage {
    Resource step;
    double value;
};

// Owns an MPI communicator and frees it.
class CommHandle {
public:
    CommHandle() = default;
    explicit CommHandle(MPI_Comm c) : comm_(c) {}
    CommHandle(const CommHandle&) = delete;
    CommHandle& operator=(const CommHandle&) = delete;
    ~CommHandle() {
        if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    }
    [[nodiscard]] MPI_Comm get() const noexcept { return comm_; }
    MPI_Comm* out() noexcept { return &comm_; }

private:
    MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace detail

/// What the objective sees of its trial on every rank of a group: the same methods as
/// hypertune::Trial, plus the group's communicator. report() is collective over the group.
class GroupTrial {
public:
    GroupTrial(const GroupTrial&) = delete;
    GroupTrial& operator=(const GroupTrial&) = delete;

    [[nodiscard]] TrialId id() const noexcept { return id_; }
    [[nodiscard]] const Config& config() const noexcept { return config_; }
    /// The resource (epochs, rounds...) this run of the trial may reach in total.
    [[nodiscard]] Resource budget() const noexcept { return budget_; }
    /// > 0 only when the trial continues from checkpoint(); 0: start from scratch.
    [[nodiscard]] Resource resumed_from() const noexcept { return resumed_from_; }

    /// The group's communicator (ranks of this trial only), its size and this rank in it.
    [[nodiscard]] MPI_Comm comm() const noexcept { return comm_; }
    [[nodiscard]] int rank() const noexcept { return rank_; }
    [[nodiscard]] int size() const noexcept { return size_; }
    /// The leader (rank 0 of the group) is the rank that talks to the coordinator.
    [[nodiscard]] bool is_leader() const noexcept { return rank_ == 0; }

    /// Reports the objective metric after `step` units. Collective: every rank of the group calls
    /// it at the same steps; the leader's value is reported. Throws InvalidArgument on every rank
    /// when the coordinator rejects the report (steps must increase, values be finite).
    void report(Resource step, double value) {
        std::string reply;
        if (is_leader()) {
            channel_->send(0, detail::report_tag, detail::pack(detail::ReportMessage{step, value}));
            reply = channel_->receive(0, detail::reply_tag).second;
        }
        detail::broadcast(reply, 0, internal_, *group_channel_);
        if (reply.empty()) throw Error("hypertune::mpi: empty reply to a report");
        last_step_ = step;
        last_value_ = value;
        ++reports_;
        if (reply[0] == detail::reply_stop) stop_ = true;
        if (reply[0] == detail::reply_error) throw InvalidArgument(reply.substr(1));
    }

    /// True once the strategy stopped this trial or the run is ending; the same on every rank.
    [[nodiscard]] bool should_stop() const noexcept { return stop_; }

    /// Keeps a checkpoint for when the trial resumes. Only the leader's is kept (it is sent to the
    /// coordinator at once); on the other ranks this only replaces the local copy.
    void save_checkpoint(std::string bytes) {
        if (is_leader()) channel_->send(0, detail::save_tag, bytes);
        checkpoint_ = std::move(bytes);
    }
    [[nodiscard]] const std::optional<std::string>& checkpoint() const noexcept { return checkpoint_; }

    [[nodiscard]] Resource last_step() const noexcept { return last_step_; }
    [[nodiscard]] std::optional<double> last_value() const noexcept { return last_value_; }
    [[nodiscard]] std::size_t reports() const noexcept { return reports_; }

private:
    friend struct GroupTrialAccess;

    GroupTrial(TrialId id, Resource budget, Resource resumed_from, std::optional<std::string> checkpoint, MPI_Comm comm,
               MPI_Comm internal, detail::Channel& channel, detail::Channel& group_channel)
        : id_(id), budget_(budget), resumed_from_(resumed_from), last_step_(resumed_from),
          checkpoint_(std::move(checkpoint)), comm_(comm), internal_(internal), channel_(&channel),
          group_channel_(&group_channel) {
        MPI_Comm_rank(comm_, &rank_);
        MPI_Comm_size(comm_, &size_);
    }

    TrialId id_;
    Config config_;
    Resource budget_;
    Resource resumed_from_;
    Resource last_step_;
    std::optional<double> last_value_;
    std::size_t reports_ = 0;
    std::optional<std::string> checkpoint_;
    bool stop_ = false;
    MPI_Comm comm_;
    MPI_Comm internal_;  // a duplicate of comm_ for our own collectives
    detail::Channel* channel_;
    detail::Channel* group_channel_;
    int rank_ = 0;
    int size_ = 1;
};

/// The objective: double(const Config&, GroupTrial&) or double(const Config&, GroupTrial&, MPI_Comm group).
template <class F>
concept GroupObjective =
    (std::invocable<F&, const Config&, GroupTrial&> &&
     std::convertible_to<std::invoke_result_t<F&, const Config&, GroupTrial&>, double>) ||
    (std::invocable<F&, const Config&, GroupTrial&, MPI_Comm> &&
     std::convertible_to<std::invoke_result_t<F&, const Config&, GroupTrial&, MPI_Comm>, double>);

// Builds GroupTrials (their constructor is private so users cannot make one detached from a group).
struct GroupTrialAccess {
    static GroupTrial make(TrialId id, Resource budget, Resource resumed_from, std::optional<std::string> checkpoint,
                           MPI_Comm comm, MPI_Comm internal, detail::Channel& channel, detail::Channel& group_channel) {
        return GroupTrial(id, budget, resumed_from, std::move(checkpoint), comm, internal, channel, group_channel);
    }
    static void set_config(GroupTrial& t, Config c) { t.config_ = std::move(c); }
};

namespace detail {

// The groups free to take a trial, on rank 0. There are as many groups as tuner threads, so one is
// always free when a thread asks.
class GroupPool {
public:
    explicit GroupPool(std::vector<int> leaders) : free_(std::move(leaders)) {}
    int acquire() {
        std::lock_guard lk(mu_);
        if (free_.empty()) throw Error("hypertune::mpi: no free group (more trials in flight than groups)");
        int leader = free_.back();
        free_.pop_back();
        return leader;
    }
    void release(int leader) {
        std::lock_guard lk(mu_);
        free_.push_back(leader);
    }

private:
    std::mutex mu_;
    std::vector<int> free_;
};

// Rank 0's side of one trial: hands it to a group's leader and serves its messages.
inline double coordinate_trial(Channel& channel, int leader, const Config& cfg, Trial& trial) {
    nlohmann::json header = {{"trial", trial.id()},
                             {"config", cfg.to_json()},
                             {"budget", trial.budget()},
                             {"resumed_from", trial.resumed_from()},
                             {"checkpoint", trial.checkpoint().has_value()}};
    channel.send(leader, trial_tag, header.dump());
    if (trial.checkpoint()) channel.send(leader, checkpoint_tag, *trial.checkpoint());
    for (;;) {
        auto [tag, bytes] = channel.receive(leader);
        switch (tag) {
            case report_tag: {
                auto m = unpack<ReportMessage>(bytes);
                std::string reply;
                try {
                    trial.report(m.step, m.value);
                    reply.assign(1, trial.should_stop() ? reply_stop : reply_continue);
                } catch (const std::exception& e) {
                    // The group throws this on every rank, then ends the trial as failed.
                    reply = std::string(1, reply_error) + e.what();
                }
                channel.send(leader, reply_tag, reply);
                break;
            }
            case save_tag: trial.save_checkpoint(std::move(bytes)); break;
            case result_tag: return unpack<double>(bytes);
            case failed_tag: throw Error(bytes);
            default: throw Error(fmt::format("hypertune::mpi: unexpected message tag {} from rank {}", tag, leader));
        }
    }
}

template <class F>
double call_objective(F& objective, const Config& cfg, GroupTrial& trial) {
    if constexpr (std::invocable<F&, const Config&, GroupTrial&, MPI_Comm>)
        return static_cast<double>(objective(cfg, trial, trial.comm()));
    else
        return static_cast<double>(objective(cfg, trial));
}

// A group's side: receive trials until STOP. `world_rank` (this rank in `world`) only names ranks in
// messages; the leader sends them, and the group's ranks are consecutive in `world`.
template <class F>
void serve_group(const SearchSpace& space, F& objective, MPI_Comm world, MPI_Comm group, int world_rank,
                 int max_sleep_us) {
    CommHandle internal;
    check(MPI_Comm_dup(group, internal.out()), "MPI_Comm_dup");
    Channel channel(world, max_sleep_us);
    Channel group_channel(internal.get(), max_sleep_us);
    int group_rank = 0;
    MPI_Comm_rank(group, &group_rank);
    const bool leader = group_rank == 0;
    for (;;) {
        std::string header;
        if (leader) {
            auto [tag, bytes] = channel.receive(0);
            if (tag == trial_tag) header = std::move(bytes);
            else if (tag != stop_tag)
                throw Error(fmt::format("hypertune::mpi: rank {} expected a trial, got message tag {}", world_rank, tag));
        }
        broadcast(header, 0, internal.get(), group_channel);  // empty: stop
        if (header.empty()) return;
        auto h = nlohmann::json::parse(header);
        std::optional<std::string> checkpoint;
        if (h.at("checkpoint").get<bool>()) {
            std::string bytes;
            if (leader) bytes = channel.receive(0, checkpoint_tag).second;
            broadcast(bytes, 0, internal.get(), group_channel);
            checkpoint = std::move(bytes);
        }
        GroupTrial trial = GroupTrialAccess::make(h.at("trial").get<TrialId>(), h.at("budget").get<Resource>(),
                                                  h.at("resumed_from").get<Resource>(), std::move(checkpoint), group,
                                                  internal.get(), channel, group_channel);
        double value = std::nan("");
        std::string error;
        try {
            GroupTrialAccess::set_config(trial, space.from_json(h.at("config")));
            value = call_objective(objective, trial.config(), trial);
        } catch (const std::exception& e) {
            error = e.what();
            if (error.empty()) error = "an exception with an empty message";
        } catch (...) {
            error = "a non-standard exception";
        }
        // The group agrees on failure: the lowest group rank that failed tells why.
        int mine = error.empty() ? INT_MAX : group_rank;
        int first = INT_MAX;
        MPI_Request request = MPI_REQUEST_NULL;
        check(MPI_Iallreduce(&mine, &first, 1, MPI_INT, MPI_MIN, internal.get(), &request), "MPI_Iallreduce");
        group_channel.wait(request);
        if (first != INT_MAX) {
            broadcast(error, first, internal.get(), group_channel);
            if (leader) {
                std::string why = first == 0 ? error
                                             : fmt::format("rank {} of the group (world rank {}): {}", first,
                                                           world_rank + first, error);
                channel.send(0, failed_tag, why);
            }
        } else if (leader) {
            channel.send(0, result_tag, pack(value));
        }
    }
}

// Error kinds carried from rank 0 to every rank, so all throw the same exception.
inline std::string encode_error(char kind, std::string_view what) { return std::string(1, kind) + std::string(what); }

[[noreturn]] inline void throw_encoded(const std::string& e) {
    std::string what = e.substr(1);
    if (e[0] == 'I') throw InvalidArgument(what);
    if (e[0] == 'O') throw IoError(what);
    throw Error(what);
}

}  // namespace detail

/// Runs a tuning job over the ranks of `world`: rank 0 coordinates (the ordinary Tuner, with
/// max_parallel_jobs set to the number of groups and, when left at 1, instances_per_trial set to
/// ranks_per_trial), ranks 1..N-1 train trials in groups of mpi_options.ranks_per_trial. Collective:
/// call it on every rank of `world`. Bad options or a bad layout throw the same InvalidArgument on
/// every rank before any trial. Returns the Result on rank 0 and an empty Result elsewhere.
template <class F>
Result fit(MPI_Comm world, const SearchSpace& space, AnyStrategy strategy, TunerOptions options,
           MpiOptions mpi_options, F&& objective) {
    static_assert(GroupObjective<F>,
                  "hypertune::mpi::fit: the objective must be callable as double(const hypertune::Config&, "
                  "hypertune::mpi::GroupTrial&) or double(const hypertune::Config&, hypertune::mpi::GroupTrial&, "
                  "MPI_Comm)");
    detail::CommHandle comm;
    detail::check(MPI_Comm_dup(world, comm.out()), "MPI_Comm_dup");
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(comm.get(), &rank);
    MPI_Comm_size(comm.get(), &size);
    const int per_trial = mpi_options.ranks_per_trial;

    // Every check runs on rank 0 and its verdict is broadcast: all ranks throw together or go on.
    std::optional<Tuner> tuner;
    std::string verdict;
    if (rank == 0) {
        int provided = MPI_THREAD_SINGLE;
        MPI_Query_thread(&provided);
        if (per_trial < 1) {
            verdict = detail::encode_error('I', fmt::format("mpi::fit: ranks_per_trial must be >= 1, got {}", per_trial));
        } else if (size < 2) {
            verdict = detail::encode_error('I', "mpi::fit: needs at least 2 ranks (rank 0 coordinates, the others "
                                                "train), got 1");
        } else if ((size - 1) % per_trial != 0) {
            verdict = detail::encode_error(
                'I', fmt::format("mpi::fit: ranks_per_trial = {} does not divide the {} training ranks (world size {} "
                                 "minus rank 0, the coordinator); run with 1 + k*{} ranks",
                                 per_trial, size - 1, size, per_trial));
        } else if (mpi_options.max_poll_sleep_microseconds < 0) {
            verdict = detail::encode_error('I', fmt::format("mpi::fit: max_poll_sleep_microseconds must be >= 0, got {}",
                                                            mpi_options.max_poll_sleep_microseconds));
        } else if (provided < MPI_THREAD_SERIALIZED) {
            verdict = detail::encode_error(
                'I', "mpi::fit: rank 0 calls MPI from worker threads and needs MPI_THREAD_SERIALIZED or better; "
                     "initialise MPI with MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...) or hypertune::mpi::Environment");
        } else {
            options.max_parallel_jobs = static_cast<std::size_t>((size - 1) / per_trial);
            if (options.instances_per_trial == 1) options.instances_per_trial = per_trial;
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

    detail::CommHandle group;
    detail::check(MPI_Comm_split(comm.get(), rank == 0 ? MPI_UNDEFINED : (rank - 1) / per_trial, rank, group.out()),
                  "MPI_Comm_split");
    if (rank != 0) {
        detail::serve_group(space, objective, comm.get(), group.get(), rank, mpi_options.max_poll_sleep_microseconds);
        return Result{};
    }

    detail::Channel channel(comm.get(), mpi_options.max_poll_sleep_microseconds);
    std::vector<int> leaders;
    for (int r = 1; r < size; r += per_trial) leaders.push_back(r);
    detail::GroupPool pool(leaders);
    // Whatever happens on rank 0, every group is told to stop, so no rank waits forever.
    struct StopGroups {
        detail::Channel& channel;
        const std::vector<int>& leaders;
        ~StopGroups() {
            for (int leader : leaders) {
                try {
                    channel.send(leader, detail::stop_tag, std::string());
                } catch (...) {  // an MPI failure here has nothing better to do
                }
            }
        }
    } stop_groups{channel, leaders};
    return tuner->fit([&](const Config& cfg, Trial& trial) -> double {
        int leader = pool.acquire();
        struct Release {
            detail::GroupPool& pool;
            int leader;
            ~Release() { pool.release(leader); }
        } release{pool, leader};
        return detail::coordinate_trial(channel, leader, cfg, trial);
    });
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
