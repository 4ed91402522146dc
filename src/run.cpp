// SPDX-License-Identifier: MIT
// hypertune::compiled: the runner, its events and state, the journal and warm start, compiled once.
#include <hypertune/impl/run_events.hpp>
#include <hypertune/impl/run_state.hpp>
#include <hypertune/impl/tuner.hpp>
#include <hypertune/impl/warm_start.hpp>
