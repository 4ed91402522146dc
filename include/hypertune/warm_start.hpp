// SPDX-License-Identifier: MIT
#pragma once
// Warm start: a new tuning run learns from the trials of up to 5 earlier runs (AMT's parent
// tuning jobs), given as their Results or journals (TunerOptions::warm_start).
//
// - Parents must optimise the same metric in the same direction.
// - IdenticalDataAndAlgorithm: the parents' tuned parameters must be this run's (same names and
//   kinds; ranges may change) and their static parameters the same values. Completed trials are
//   observations, failed ones count as failed.
// - TransferLearning: parameters may be added, removed or made static. A parent's value for a
//   parameter it lacks is the middle of this run's range (a static one's value); parameters only
//   the parent has are ignored. Only completed trials are used.
// - Values outside this run's ranges are clipped to them (OutsideRange::Clip) or the trial is
//   dropped (OutsideRange::Drop); a category this run no longer has always drops the trial. Each
//   is counted in a note that becomes a warning of the result.
// - Stopped trials are not used: their value is at a smaller resource than a completed trial's.
// - Strategies that learn from earlier runs (Bayesian) take the observations; for the others
//   the parents only count towards Result::overall_best().

#include <hypertune/error.hpp>
#include <hypertune/result.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/strategy.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace hypertune {

/// What to do with a parent's value outside this run's range.
enum class OutsideRange { Clip, Drop };

struct WarmStart {
    /// AMT's limit, kept: the model's cost grows with the observations.
    static constexpr std::size_t max_parents = 5;

    WarmStartType type = WarmStartType::IdenticalDataAndAlgorithm;
    std::vector<Result> parents;
    OutsideRange outside_range = OutsideRange::Clip;

    /// Parents from their journals (load_result); a missing or damaged one throws IoError naming it.
    [[nodiscard]] static WarmStart from_journals(const std::vector<std::string>& paths,
                                                 WarmStartType type = WarmStartType::IdenticalDataAndAlgorithm);

    [[nodiscard]] bool empty() const noexcept { return parents.empty(); }
};

/// The parents' trials in this run's space, their best trials, and what was changed on the way.
struct PreparedWarmStart {
    std::vector<WarmStartObservation> observations;
    std::vector<ParentBest> parent_bests;
    std::vector<std::string> notes;
    std::size_t parent_runs = 0;  ///< 0: no warm start
    /// A digest (16 hex digits) of the observations and the warm start's type: what the strategy
    /// learns from. A resumed run must be given a warm start with the same one, or its strategy
    /// would suggest other trials than its journal holds.
    std::string fingerprint;
    WarmStartType type = WarmStartType::IdenticalDataAndAlgorithm;
};

namespace detail {
/// FNV-1a (64 bits, 16 hex digits) over the type and, per observation, its parent, trial, loss
/// bits and configuration (as the journal writes it).
[[nodiscard]] std::string warm_start_fingerprint(const std::vector<WarmStartObservation>& observations,
                                                 WarmStartType type);
/// The trials two parent runs have alike when they are one run, possibly at two moments (a copy of
/// its journal and the journal grown since), or 0 when they are two runs.
[[nodiscard]] std::size_t same_run_trials(const Result& a, const Result& b);
}  // namespace detail

/// Checks the parents against this run and translates their trials into its space. Throws
/// InvalidArgument naming the parent and the parameter when they cannot be used. With this run's
/// `constraints`, a parent's best trial (for Result::overall_best) is its best that meets them,
/// judged on the metrics it recorded; a trial that did not record a constrained metric cannot be
/// judged and is left out (a note says when a parent has no such trial).
[[nodiscard]] PreparedWarmStart prepare_warm_start(const WarmStart& w, const SearchSpace& space,
                                                          const std::string& metric, Direction direction,
                                                          const std::vector<Constraint>& constraints = {});

}  // namespace hypertune

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/warm_start.hpp>
#endif
