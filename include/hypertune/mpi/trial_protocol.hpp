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
#include <hypertune/linkage.hpp>
#include <hypertune/mpi/channel.hpp>
#include <hypertune/mpi/group_trial.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/trial.hpp>

#include <fmt/core.h>
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
HYPERTUNE_MPI_INLINE std::string coordinate_trial(Channel& channel, const std::vector<int>& ranks, const Config& cfg,
                                                  Trial& trial);

// One trial on this rank, a member of the group the header names.
HYPERTUNE_MPI_INLINE void run_in_group(const SearchSpace& space, const GroupObjectiveFunction& objective,
                                       Channel& channel, MPI_Comm groups_parent, const nlohmann::ordered_json& h,
                                       int max_sleep_us);

// A training rank's loop: a trial header from rank 0 -> the trial in its group; STOP -> return.
HYPERTUNE_MPI_INLINE void serve_rank(const SearchSpace& space, const GroupObjectiveFunction& objective, MPI_Comm world,
                                     MPI_Comm groups_parent, int world_rank, int max_sleep_us);

}  // namespace hypertune::mpi::detail

#ifndef HYPERTUNE_COMPILED_MPI
#include <hypertune/impl/mpi/trial_protocol.hpp>
#endif
