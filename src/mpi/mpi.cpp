// SPDX-License-Identifier: MIT
// hypertune::compiled_mpi: hypertune::mpi (the message layer, the rank pool, the group trial, the
// coordinator and the training ranks' loop). Built only when CMake finds MPI, apart from
// hypertune::compiled, which does not need MPI.
#include <hypertune/impl/mpi.hpp>
#include <hypertune/impl/mpi/channel.hpp>
#include <hypertune/impl/mpi/group_trial.hpp>
#include <hypertune/impl/mpi/rank_pool.hpp>
#include <hypertune/impl/mpi/rank_usage.hpp>
#include <hypertune/impl/mpi/trial_protocol.hpp>
