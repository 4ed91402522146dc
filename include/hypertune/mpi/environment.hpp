// SPDX-License-Identifier: MIT
#pragma once
// hypertune::mpi::Environment: MPI's initialisation at the thread level hypertune::mpi::fit needs
// (rank 0 calls MPI from the tuner's worker threads), and its finalisation.

#include <mpi.h>

namespace hypertune::mpi {

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

}  // namespace hypertune::mpi
