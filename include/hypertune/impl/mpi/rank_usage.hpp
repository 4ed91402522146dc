// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/mpi/rank_usage.hpp>. Inline unless the program links
// hypertune::compiled_mpi, which compiles them (see <hypertune/linkage.hpp>).

#include <hypertune/linkage.hpp>
#include <hypertune/mpi/rank_usage.hpp>

#if defined(HYPERTUNE_COMPILED_MPI) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/mpi/rank_usage.hpp> is compiled into hypertune::compiled_mpi: include <hypertune/mpi/rank_usage.hpp>"
#endif

namespace hypertune::mpi {

HYPERTUNE_MPI_INLINE std::string RankUsage::summary() const {
    return fmt::format("rank utilisation {:.0f}% (busy {:.3g} rank-s of {} rank{} x {:.3g} s); {} run{} waited {:.3g} s "
                       "for ranks in all, at most {:.3g} s",
                       100.0 * utilisation, busy_rank_seconds, training_ranks, training_ranks == 1 ? "" : "s",
                       wall_seconds, runs, runs == 1 ? "" : "s", waited_seconds, longest_wait_seconds);
}

}  // namespace hypertune::mpi
