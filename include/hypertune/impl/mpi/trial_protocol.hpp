// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/mpi/trial_protocol.hpp>: the coordinator's and the group's sides of a
// trial. Inline unless the program links hypertune::compiled_mpi, which compiles them (see
// <hypertune/linkage.hpp>).

#include <hypertune/linkage.hpp>
#include <hypertune/mpi/trial_protocol.hpp>

#if defined(HYPERTUNE_COMPILED_MPI) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/mpi/trial_protocol.hpp> is compiled into hypertune::compiled_mpi: include <hypertune/mpi/trial_protocol.hpp>"
#endif

namespace hypertune::mpi::detail {

HYPERTUNE_MPI_INLINE std::string coordinate_trial(Channel& channel, const std::vector<int>& ranks, const Config& cfg,
                                                  Trial& trial) {
    nlohmann::ordered_json header = {{"trial", trial.id()},
                             {"config", cfg.to_json()},
                             {"budget", trial.budget()},
                             {"resumed_from", trial.resumed_from()},
                             {"checkpoint", trial.checkpoint().has_value()},
                             {"ranks", ranks}};
    // When the group's should_stop() turns true of itself (max_trial_seconds, max_runtime_seconds):
    // an objective that polls it between reports stops in time, as it does in process.
    if (const auto at = trial.stops_at())
        header["stop_in"] = std::max(0.0, std::chrono::duration<double>(*at - std::chrono::steady_clock::now()).count());
    const std::string bytes = header.dump();
    for (int r : ranks) channel.send(r, trial_tag, bytes);
    const int leader = ranks.front();
    if (trial.checkpoint()) channel.send(leader, checkpoint_tag, *trial.checkpoint());
    // The report as this rank's Trial takes it; its rejection goes back to the group as text.
    auto answer = [&](auto&& report) {
        std::string reply;
        try {
            report();
            reply.assign(1, trial.should_stop() ? reply_stop : reply_continue);
        } catch (const std::exception& e) {
            // The group throws this on every rank, then ends the trial as failed.
            reply = std::string(1, reply_error) + e.what();
        }
        channel.send(leader, reply_tag, reply);
    };
    for (;;) {
        auto [source, tag, message] = channel.receive(leader);
        switch (tag) {
            case report_tag: {
                auto m = unpack<ReportMessage>(message);
                answer([&] { trial.report(m.step, m.value); });
                break;
            }
            case report_metrics_tag: {
                if (message.size() < sizeof(Resource))
                    throw Error(fmt::format("hypertune::mpi: malformed message of {} bytes", message.size()));
                const auto step = unpack<Resource>(message.substr(0, sizeof(Resource)));
                answer([&] { trial.report(step, metrics_from(message.substr(sizeof(Resource)))); });
                break;
            }
            case save_tag: {
                if (message.size() < sizeof(Resource))
                    throw Error(fmt::format("hypertune::mpi: malformed message of {} bytes", message.size()));
                const auto step = unpack<Resource>(message.substr(0, sizeof(Resource)));
                trial.save_checkpoint(message.substr(sizeof(Resource)), step);
                break;
            }
            case result_tag:
                // What the group's should_stop() said by itself at its end, this Trial says too
                // (a time limit reached): the run judges the trial as one it ran in process.
                (void)trial.should_stop();
                return message;
            case failed_tag: throw Error(message);
            default: throw Error(fmt::format("hypertune::mpi: unexpected message tag {} from rank {}", tag, leader));
        }
    }
}

HYPERTUNE_MPI_INLINE void run_in_group(const SearchSpace& space, const GroupObjectiveFunction& objective,
                                       Channel& channel, MPI_Comm groups_parent, const nlohmann::ordered_json& h,
                                       int max_sleep_us) {
    const auto ranks = h.at("ranks").get<std::vector<int>>();
    CommHandle group;
    create_group(groups_parent, ranks, group);
    CommHandle internal;  // our own collectives, apart from the user's traffic on `group`
    check(MPI_Comm_dup(group.get(), internal.out()), "MPI_Comm_dup");
    Channel group_channel(internal.get(), max_sleep_us);
    int group_rank = 0;
    MPI_Comm_rank(group.get(), &group_rank);
    const bool leader = group_rank == 0;
    std::optional<std::string> checkpoint;
    if (h.at("checkpoint").get<bool>()) {
        std::string bytes;
        if (leader) bytes = channel.receive(0, checkpoint_tag).bytes;
        broadcast(bytes, 0, internal.get(), group_channel);
        checkpoint = std::move(bytes);
    }
    GroupHost host(leader, internal.get(), channel, group_channel);
    std::string result;
    std::string error;
    try {
        GroupTrial trial = GroupTrialAccess::make(host, h.at("trial").get<TrialId>(), space.from_json(h.at("config")),
                                                  h.at("budget").get<Resource>(), h.at("resumed_from").get<Resource>(),
                                                  std::move(checkpoint), group.get(), ranks);
        if (const auto stop_in = h.find("stop_in"); stop_in != h.end())
            GroupTrialAccess::stop_after(trial, stop_in->get<double>());
        result = objective.call(trial.config(), trial);
        // A report that failed on this rank fails the trial even if the objective caught it, as
        // in process (the leader's also failed rank 0's Trial; another rank's is known here only).
        if (!trial.failure().empty()) error = trial.failure();
    } catch (const std::exception& e) {
        error = e.what();
        if (error.empty()) error = "an exception with an empty message";
    } catch (...) {
        error = "a non-standard exception";
    }
    // The leader's broadcasts end (GroupHost::finish), then the group agrees on failure: the lowest
    // group rank that failed tells why (a rank whose report() threw because another rank had left
    // did not fail of itself), and which rank, if any, returned while another reported.
    const int returned = host.finish(!error.empty());
    int mine[2] = {error.empty() || host.abandoned() ? INT_MAX : group_rank, returned < 0 ? INT_MAX : returned};
    int all[2] = {INT_MAX, INT_MAX};
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Iallreduce(mine, all, 2, MPI_INT, MPI_MIN, internal.get(), &request), "MPI_Iallreduce");
    group_channel.wait(request);
    const int first = all[0];
    if (first == INT_MAX && all[1] != INT_MAX) {
        if (leader) channel.send(0, failed_tag, unequal_reports(all[1], ranks[static_cast<std::size_t>(all[1])]));
    } else if (first != INT_MAX) {
        broadcast(error, first, internal.get(), group_channel);
        if (leader) {
            // Whichever rank it was, the leader too: the reason names where to look.
            const int world = ranks[static_cast<std::size_t>(first)];
            std::string why = ranks.size() == 1
                                  ? fmt::format("world rank {}: {}", world, error)
                                  : fmt::format("rank {} of the group (world rank {}): {}", first, world, error);
            channel.send(0, failed_tag, why);
        }
    } else if (leader) {
        channel.send(0, result_tag, result);
    }
}

HYPERTUNE_MPI_INLINE void serve_rank(const SearchSpace& space, const GroupObjectiveFunction& objective, MPI_Comm world,
                                     MPI_Comm groups_parent, int world_rank, int max_sleep_us) {
    Channel channel(world, max_sleep_us);
    for (;;) {
        auto [source, tag, bytes] = channel.receive(0);
        if (tag == stop_tag) return;
        if (tag != trial_tag)
            throw Error(fmt::format("hypertune::mpi: rank {} expected a trial, got message tag {}", world_rank, tag));
        run_in_group(space, objective, channel, groups_parent, nlohmann::ordered_json::parse(bytes), max_sleep_us);
    }
}

}  // namespace hypertune::mpi::detail
