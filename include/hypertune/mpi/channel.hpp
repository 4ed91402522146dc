// SPDX-License-Identifier: MIT
#pragma once
// The message layer of hypertune::mpi (internal): tags, and point-to-point and collective helpers
// that wait by polling with a growing sleep instead of blocking inside MPI. A blocked call on rank 0
// would hold the mutex the tuner's threads share; a spinning one would take a core from the ranks
// that train, which matters when ranks are oversubscribed.

#include <hypertune/error.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/types.hpp>

#include <fmt/core.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace hypertune::mpi {

namespace detail {

// Message tags; one per kind so a receive never mistakes one kind for another.
enum Tag : int {
    trial_tag = 7101,   // 0 -> every rank of a group: the trial header (JSON, with the group's ranks)
    stop_tag,           // 0 -> every training rank: the run is over
    checkpoint_tag,     // 0 -> leader: the checkpoint of a resumed trial
    report_tag,         // leader -> 0: step and value
    reply_tag,          // 0 -> leader: continue, stop, or an error message
    save_tag,           // leader -> 0: a checkpoint to keep
    result_tag,         // leader -> 0: the objective's value or metrics
    failed_tag,         // leader -> 0: why the trial failed
    group_tag,          // MPI_Comm_create_group among a trial's ranks (on a communicator of its own)
    report_metrics_tag, // leader -> 0: step and named metrics (JSON)
    left_tag,           // another rank of a group -> its leader: this rank left the objective (threw or returned)
};

// What the group's leader broadcasts at each report (rank 0's answer), and once at its end (reply_end).
enum ReplyCode : char { reply_continue = 0, reply_stop = 1, reply_error = 2, reply_end = 3 };

HYPERTUNE_MPI_INLINE void check(int rc, const char* what);

HYPERTUNE_MPI_INLINE int to_count(std::size_t n);

// A message received: who sent it, its tag and its bytes.
struct Message {
    int source = 0;
    int tag = 0;
    std::string bytes;
};

// Waits politely: yields a few times, then sleeps longer and longer up to the cap.
class Backoff {
public:
    explicit Backoff(int max_us) : max_us_(std::max(0, max_us)) {}
    HYPERTUNE_MPI_INLINE void pause();

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

    HYPERTUNE_MPI_INLINE void send(int dest, int tag, const std::string& bytes);
    // Starts sending `bytes` (which must outlive the request) and returns at once; wait() ends it.
    HYPERTUNE_MPI_INLINE MPI_Request post(int dest, int tag, const std::string& bytes);

    // The next message from `source` (MPI_ANY_SOURCE: any) with `tag` (MPI_ANY_TAG: any).
    HYPERTUNE_MPI_INLINE Message receive(int source, int tag = MPI_ANY_TAG);
    // The same if one has arrived, without waiting.
    HYPERTUNE_MPI_INLINE std::optional<Message> try_receive(int source, int tag = MPI_ANY_TAG);

    HYPERTUNE_MPI_INLINE void wait(MPI_Request& request);

    [[nodiscard]] int max_sleep_us() const noexcept { return max_sleep_us_; }

private:
    MPI_Comm comm_;
    int max_sleep_us_;
    std::mutex mu_;
};

// Broadcasts a byte string within `comm` from `root` (MPI_Ibcast and polling, so waiting ranks sleep).
HYPERTUNE_MPI_INLINE void broadcast(std::string& bytes, int root, MPI_Comm comm, Channel& channel);

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
    explicit operator bool() const noexcept { return comm_ != MPI_COMM_NULL; }

private:
    MPI_Comm comm_ = MPI_COMM_NULL;
};

// The communicator of `ranks` (ranks of `parent`, in this order), made by those ranks only:
// MPI_Comm_create_group is collective over the new group, not over `parent`, so groups form while
// other ranks train. Disjoint groups may form at once on the same parent.
HYPERTUNE_MPI_INLINE void create_group(MPI_Comm parent, const std::vector<int>& ranks, CommHandle& out);

}  // namespace detail

}  // namespace hypertune::mpi

#ifndef HYPERTUNE_COMPILED_MPI
#include <hypertune/impl/mpi/channel.hpp>
#endif
