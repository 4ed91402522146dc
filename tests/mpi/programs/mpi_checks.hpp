// SPDX-License-Identifier: MIT
#pragma once
// What the MPI test programs share: this rank's place in MPI_COMM_WORLD and its tally of checks.
// Each program is one translation unit run under mpirun; rank 0 prints every check, the other
// ranks only their failures, and main() sums the failures over the ranks.

#include <mpi.h>

#include <cstdio>
#include <string>

namespace {

int world_rank = 0;
int world_size = 1;
int passed = 0;
int failed = 0;

// Records a check made on this rank.
void check(bool ok, const std::string& what) {
    if (ok) ++passed;
    else ++failed;
    if (world_rank == 0 || !ok) std::printf("[rank %d] %s: %s\n", world_rank, ok ? "ok  " : "FAIL", what.c_str());
    std::fflush(stdout);
}

// Prints the checks of all ranks in total (on rank 0) and returns main()'s status: 1 when any
// rank failed one. Collective over MPI_COMM_WORLD.
int finish_checks() {
    int counts[2] = {passed, failed};
    int totals[2] = {0, 0};
    MPI_Reduce(counts, totals, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (world_rank == 0) std::printf("%d passed, %d failed (checks on all ranks)\n", totals[0], totals[1]);
    int any_failed = 0;
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any_failed ? 1 : 0;
}

}  // namespace
