// SPDX-License-Identifier: MIT
#pragma once
// hypertune::mpi::MpiOptions: how hypertune::mpi::fit uses the ranks.

#include <stop_token>
#include <string>

namespace hypertune::mpi {

/// How the ranks are used.
struct MpiOptions {
    /// Ranks that train one trial together, the same for every trial. World size - 1 must be a
    /// multiple of it.
    int ranks_per_trial = 1;
    /// Or: the name of an integer-valued parameter of the search space whose value in a trial's
    /// configuration is the number of ranks that train it, e.g. "workers" for
    /// CategoricalParameter("workers", {"1", "2", "4"}) or IntegerParameter("workers", 1, 4). Every
    /// value it can take must lie in [1, world size - 1]. Leave ranks_per_trial at 1.
    std::string ranks_parameter{};
    /// With ranks_parameter: how many trials that asked for ranks later may start ahead of a
    /// waiting trial (onto ranks too few for it) before free ranks are held for it. Bounds how long
    /// a large trial can starve behind small ones; < 0: no bound, 0: first come, first served.
    int max_overtakes = 8;
    /// Longest sleep, in microseconds, between two polls of a rank that waits for a message (the
    /// sleep grows from 0 to this). Larger: less CPU taken from training ranks, more latency.
    int max_poll_sleep_microseconds = 1000;
    /// Rank 0's way to stop the run, as TuningJob::stop() does for a Tuner: once a stop is
    /// requested on it (std::stop_source::request_stop(), say from a thread of rank 0 that waits
    /// for SIGINT or SIGTERM with sigwait), no new trial starts, the trials in flight see
    /// should_stop() on every rank of their group with the answer to their next report, and every
    /// rank returns; nothing completed is lost. Other ranks' are not read.
    std::stop_token stop{};
};

}  // namespace hypertune::mpi
