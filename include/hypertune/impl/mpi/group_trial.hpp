// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/mpi/group_trial.hpp>: a group's side of its reports and checkpoints.
// Inline unless the program links hypertune::compiled_mpi, which compiles them (see
// <hypertune/linkage.hpp>).

#include <hypertune/error.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/mpi/channel.hpp>
#include <hypertune/mpi/group_trial.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <limits>

#if defined(HYPERTUNE_COMPILED_MPI) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/mpi/group_trial.hpp> is compiled into hypertune::compiled_mpi: include <hypertune/mpi/group_trial.hpp>"
#endif

namespace hypertune::mpi {

namespace detail {

HYPERTUNE_MPI_INLINE GroupHost::GroupHost(bool leader, MPI_Comm internal, Channel& channel, Channel& group_channel)
    : leader_(leader), internal_(internal), channel_(&channel), group_channel_(&group_channel) {
    check(MPI_Comm_size(internal_, &size_), "MPI_Comm_size");
    check(MPI_Comm_rank(internal_, &rank_), "MPI_Comm_rank");
}

HYPERTUNE_MPI_INLINE std::string unequal_reports(int rank, int world) {
    return fmt::format("report() is collective: every rank of the group calls it at the same steps, but rank {} of "
                       "the group (world rank {}) returned from the objective while another was in report()",
                       rank, world);
}

HYPERTUNE_MPI_INLINE void GroupHost::end_reports() {
    if (ended_) return;
    std::string end(1, reply_end);
    broadcast(end, 0, internal_, *group_channel_);
    ended_ = true;
}

HYPERTUNE_MPI_INLINE void GroupHost::abandon(std::string why) {
    ended_ = true;
    abandoned_ = why;
    throw Error(std::move(why));
}

HYPERTUNE_MPI_INLINE std::optional<RankLeft> GroupHost::take_notes(bool all) {
    std::optional<RankLeft> first;
    for (; notes_ < size_ - 1; ++notes_) {
        std::optional<Message> note =
            all ? group_channel_->receive(MPI_ANY_SOURCE, left_tag) : group_channel_->try_receive(MPI_ANY_SOURCE, left_tag);
        if (!note) break;
        if (!first) first = RankLeft{note->source, note->bytes == left_threw};
    }
    return first;
}

HYPERTUNE_MPI_INLINE Decision GroupHost::exchange(const Trial& trial, Resource step, int tag,
                                                  const std::string& message) {
    if (abandoned_) throw Error(*abandoned_);
    std::string reply;
    if (leader_) {
        // A probe makes Open MPI run its progress engine, which yields the core when ranks are
        // oversubscribed: a probe at every report made reports slower, one per 10 ms does not.
        std::optional<RankLeft> left;
        if (const auto now = std::chrono::steady_clock::now(); now >= next_look_) {
            next_look_ = now + look_every;
            left = take_notes(false);
        }
        if (left) {
            if (!left->threw) returned_ = left->rank;  // it returned, and the leader reports on
            end_reports();
            abandon(fmt::format("hypertune::mpi: rank {} of the group {} the objective; this report is abandoned",
                                left->rank, left->threw ? "threw and left" : "returned from"));
        }
        channel_->send(0, tag, message);
        reply = channel_->receive(0, reply_tag).bytes;
        if (!reply.empty() && reply[0] != reply_error) reply += pack(step);
    }
    broadcast(reply, 0, internal_, *group_channel_);
    if (reply.empty()) throw Error("hypertune::mpi: empty reply to a report");
    if (reply[0] == reply_end) {
        // The leader returned or threw while this rank reported: the trial ends (failed).
        returned_ = 0;
        abandon("hypertune::mpi: the group's leader has left the objective; this report is abandoned");
    }
    // Trial::report makes this the trial's failure and throws it, on every rank of the group.
    if (reply[0] == reply_error) throw InvalidArgument(reply.substr(1));
    if (!leader_) {
        if (reply.size() != 1 + sizeof(Resource))
            throw Error(fmt::format("hypertune::mpi: malformed reply of {} bytes to a report", reply.size()));
        // The leader's value was reported at its step: a report of another step here would be
        // a value that never counts, so the group fails, naming both (Trial::report keeps it).
        if (const auto leaders = unpack<Resource>(reply.substr(1)); leaders != step)
            throw InvalidArgument(fmt::format("trial {}: report(step {}) where the group's leader reported step {}: "
                                              "report() is collective, every rank of the group calls it at the same "
                                              "steps",
                                              trial.id(), step, leaders));
    }
    return reply[0] == reply_stop ? Decision::Stop : Decision::Continue;
}

HYPERTUNE_MPI_INLINE int GroupHost::finish(bool threw) {
    if (leader_) {
        end_reports();
        take_notes(true);
        return returned_;
    }
    note_ = threw ? left_threw : left_returned;
    MPI_Request request = group_channel_->post(0, left_tag, note_);
    while (!ended_) {
        std::string reply;
        broadcast(reply, 0, internal_, *group_channel_);
        if (!reply.empty() && reply[0] == reply_end) ended_ = true;
        else returned_ = rank_;  // a report of the leader's that this rank did not make
    }
    group_channel_->wait(request);
    return returned_;
}

HYPERTUNE_MPI_INLINE Decision GroupHost::on_report(Trial& trial, Resource step, double value) {
    return exchange(trial, step, report_tag, leader_ ? pack(ReportMessage{step, value}) : std::string());
}

HYPERTUNE_MPI_INLINE Decision GroupHost::on_report_metrics(Trial& trial, Resource step, const Metrics& values) {
    return exchange(trial, step, report_metrics_tag, leader_ ? pack(step) + metrics_bytes(values) : std::string());
}

HYPERTUNE_MPI_INLINE void GroupHost::on_checkpoint(Trial&, Resource step, const std::string& bytes) {
    if (leader_) channel_->send(0, save_tag, pack(step) + bytes);  // the step its state is at, then the state
}

HYPERTUNE_MPI_INLINE std::string GroupHost::checkpoint_folder(Trial& trial) {
    throw Error(fmt::format("trial {}: checkpoint_dir() is not available under hypertune::mpi::fit (the folder would "
                            "be rank 0's); save_checkpoint() is: the leader's bytes are kept",
                            trial.id()));
}

HYPERTUNE_MPI_INLINE std::string metrics_bytes(const Metrics& m) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const auto& [name, value] : m.values())
        j.push_back({name, std::isfinite(value) ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr)});
    return j.dump();
}

HYPERTUNE_MPI_INLINE Metrics metrics_from(const std::string& bytes) {
    Metrics m;
    for (const auto& item : nlohmann::ordered_json::parse(bytes))
        m.set(item.at(0).get<std::string>(),
              item.at(1).is_null() ? std::numeric_limits<double>::quiet_NaN() : item.at(1).get<double>());
    return m;
}

}  // namespace detail

HYPERTUNE_MPI_INLINE GroupTrial::GroupTrial(detail::GroupHost& host, TrialId id, Config config, Resource budget,
                                            Resource resumed_from, std::optional<std::string> checkpoint, MPI_Comm comm,
                                            std::vector<int> world_ranks)
    : Trial(host, id, std::move(config), budget, resumed_from, std::move(checkpoint)), comm_(comm),
      world_ranks_(std::move(world_ranks)) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
}

}  // namespace hypertune::mpi
