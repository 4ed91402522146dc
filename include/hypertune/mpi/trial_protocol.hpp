// SPDX-License-Identifier: MIT
#pragma once
// One trial's conversation between the coordinator (rank 0) and the ranks that train it
// (internal). Rank 0 sends the trial header, which names the group's ranks, to each of them; they
// form the group's communicator among themselves (MPI_Comm_create_group) and run the objective;
// the group's leader (its lowest rank) reports, saves checkpoints and sends the result or the
// failure. A training rank between trials waits for rank 0's next message by polling.

#include <hypertune/config.hpp>
#include <hypertune/error.hpp>
#include <hypertune/json.hpp>
#include <hypertune/mpi/channel.hpp>
#include <hypertune/mpi/group_trial.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/trial.hpp>

#include <fmt/format.h>
#include <mpi.h>
#include <nlohmann/json.hpp>

#include <climits>
#include <cmath>
#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hypertune::mpi::detail {

// Rank 0's side of one trial run on `ranks` (ascending; the first leads): returns the leader's
// result bytes (call_objective), throws Error with the group's failure.
inline std::string coordinate_trial(Channel& channel, const std::vector<int>& ranks, const Config& cfg, Trial& trial) {
    nlohmann::json header = {{"trial", trial.id()},
                             {"config", cfg.to_json()},
                             {"budget", trial.budget()},
                             {"resumed_from", trial.resumed_from()},
                             {"checkpoint", trial.checkpoint().has_value()},
                             {"ranks", ranks}};
    const std::string bytes = header.dump();
    for (int r : ranks) channel.send(r, trial_tag, bytes);
    const int leader = ranks.front();
    if (trial.checkpoint()) channel.send(leader, checkpoint_tag, *trial.checkpoint());
    for (;;) {
        auto [tag, message] = channel.receive(leader);
        switch (tag) {
            case report_tag: {
                auto m = unpack<ReportMessage>(message);
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
            case save_tag: trial.save_checkpoint(std::move(message)); break;
            case result_tag: return message;
            case failed_tag: throw Error(message);
            default: throw Error(fmt::format("hypertune::mpi: unexpected message tag {} from rank {}", tag, leader));
        }
    }
}

// One trial on this rank, a member of the group the header names.
template <class F>
void run_in_group(const SearchSpace& space, F& objective, Channel& channel, MPI_Comm groups_parent,
                  const nlohmann::json& h, int max_sleep_us) {
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
        if (leader) bytes = channel.receive(0, checkpoint_tag).second;
        broadcast(bytes, 0, internal.get(), group_channel);
        checkpoint = std::move(bytes);
    }
    GroupTrial trial = GroupTrialAccess::make(h.at("trial").get<TrialId>(), h.at("budget").get<Resource>(),
                                              h.at("resumed_from").get<Resource>(), std::move(checkpoint), group.get(),
                                              internal.get(), channel, group_channel);
    GroupTrialAccess::set_world_ranks(trial, ranks);
    std::string result;
    std::string error;
    try {
        GroupTrialAccess::set_config(trial, space.from_json(h.at("config")));
        result = call_objective(objective, trial.config(), trial);
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
                                                       ranks[static_cast<std::size_t>(first)], error);
            channel.send(0, failed_tag, why);
        }
    } else if (leader) {
        channel.send(0, result_tag, result);
    }
}

// A training rank's loop: a trial header from rank 0 -> the trial in its group; STOP -> return.
template <class F>
void serve_rank(const SearchSpace& space, F& objective, MPI_Comm world, MPI_Comm groups_parent, int world_rank,
                int max_sleep_us) {
    Channel channel(world, max_sleep_us);
    for (;;) {
        auto [tag, bytes] = channel.receive(0);
        if (tag == stop_tag) return;
        if (tag != trial_tag)
            throw Error(fmt::format("hypertune::mpi: rank {} expected a trial, got message tag {}", world_rank, tag));
        run_in_group(space, objective, channel, groups_parent, nlohmann::json::parse(bytes), max_sleep_us);
    }
}

}  // namespace hypertune::mpi::detail
