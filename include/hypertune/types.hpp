// SPDX-License-Identifier: MIT
#pragma once
// The two numbers every part of hypertune speaks of, in a header that costs nothing to include.

#include <cstdint>

namespace hypertune {

/// A trial's id: dense, from 0, handed out by the runner in the order trials start.
using TrialId = std::uint64_t;
/// Resource units (epochs, boosting rounds, blocks of data...): what a trial's budget counts.
using Resource = std::int64_t;

}  // namespace hypertune
