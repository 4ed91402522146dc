// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/mpi/channel.hpp>: the polling sends, receives and broadcasts, and
// forming a group's communicator. Inline unless the program links hypertune::compiled_mpi, which
// compiles them (see <hypertune/linkage.hpp>).

#include <hypertune/linkage.hpp>
#include <hypertune/mpi/channel.hpp>

#if defined(HYPERTUNE_COMPILED_MPI) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/mpi/channel.hpp> is compiled into hypertune::compiled_mpi: include <hypertune/mpi/channel.hpp>"
#endif

namespace hypertune::mpi::detail {

HYPERTUNE_MPI_INLINE void check(int rc, const char* what) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(rc, text, &length);
    throw Error(fmt::format("hypertune::mpi: {} failed: {}", what, std::string(text, static_cast<std::size_t>(length))));
}

HYPERTUNE_MPI_INLINE int to_count(std::size_t n) {
    if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
        throw Error(fmt::format("hypertune::mpi: a message of {} bytes is too large (limit 2 GiB)", n));
    return static_cast<int>(n);
}

HYPERTUNE_MPI_INLINE void Backoff::pause() {
    if (++polls_ <= 20 || max_us_ == 0) {
        std::this_thread::yield();
        return;
    }
    sleep_us_ = std::min(max_us_, std::max(1, sleep_us_ * 2));
    std::this_thread::sleep_for(std::chrono::microseconds(sleep_us_));
}

HYPERTUNE_MPI_INLINE MPI_Request Channel::post(int dest, int tag, const std::string& bytes) {
    MPI_Request request = MPI_REQUEST_NULL;
    std::lock_guard lk(mu_);
    check(MPI_Isend(bytes.data(), to_count(bytes.size()), MPI_BYTE, dest, tag, comm_, &request), "MPI_Isend");
    return request;
}

HYPERTUNE_MPI_INLINE void Channel::send(int dest, int tag, const std::string& bytes) {
    MPI_Request request = post(dest, tag, bytes);
    wait(request);
}

HYPERTUNE_MPI_INLINE Message Channel::receive(int source, int tag) {
    Backoff backoff(max_sleep_us_);
    for (;;) {
        if (auto message = try_receive(source, tag)) return std::move(*message);
        backoff.pause();
    }
}

HYPERTUNE_MPI_INLINE std::optional<Message> Channel::try_receive(int source, int tag) {
    std::lock_guard lk(mu_);
    int found = 0;
    MPI_Status status;
    check(MPI_Iprobe(source, tag, comm_, &found, &status), "MPI_Iprobe");
    if (!found) return std::nullopt;
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    Message message{status.MPI_SOURCE, status.MPI_TAG, std::string(static_cast<std::size_t>(count), '\0')};
    // Matched by the probe under the lock, and no other thread receives from this source: the
    // probed message is the one received, at once.
    check(MPI_Recv(message.bytes.data(), count, MPI_BYTE, message.source, message.tag, comm_, MPI_STATUS_IGNORE),
          "MPI_Recv");
    return message;
}

HYPERTUNE_MPI_INLINE void Channel::wait(MPI_Request& request) {
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

HYPERTUNE_MPI_INLINE void broadcast(std::string& bytes, int root, MPI_Comm comm, Channel& channel) {
    long long size = static_cast<long long>(bytes.size());
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Ibcast(&size, 1, MPI_LONG_LONG, root, comm, &request), "MPI_Ibcast");
    channel.wait(request);
    bytes.resize(static_cast<std::size_t>(size));
    if (size == 0) return;
    check(MPI_Ibcast(bytes.data(), to_count(bytes.size()), MPI_BYTE, root, comm, &request), "MPI_Ibcast");
    channel.wait(request);
}

HYPERTUNE_MPI_INLINE void create_group(MPI_Comm parent, const std::vector<int>& ranks, CommHandle& out) {
    MPI_Group all = MPI_GROUP_NULL;
    MPI_Group some = MPI_GROUP_NULL;
    check(MPI_Comm_group(parent, &all), "MPI_Comm_group");
    int rc = MPI_Group_incl(all, static_cast<int>(ranks.size()), ranks.data(), &some);
    MPI_Group_free(&all);
    check(rc, "MPI_Group_incl");
    rc = MPI_Comm_create_group(parent, some, group_tag, out.out());
    MPI_Group_free(&some);
    check(rc, "MPI_Comm_create_group");
}

}  // namespace hypertune::mpi::detail
