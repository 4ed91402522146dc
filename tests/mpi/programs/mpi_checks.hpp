// SPDX-License-Identifier: MIT
#pragma once
// What the MPI test programs share: this rank's place in MPI_COMM_WORLD and its tally of checks.
// Each program is one translation unit run under mpirun; rank 0 prints every check, the other
// ranks only their failures, and main() sums the failures over the ranks.

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

}  // namespace
