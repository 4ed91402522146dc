// SPDX-License-Identifier: MIT
#pragma once
// Pareto dominance over loss vectors (every coordinate minimised): dominance, non-dominated
// sorting (Deb et al. 2002) and the exact hypervolume a point set dominates up to a reference
// point, the crowding distance (NSGA-II's tie-break within a front), and the priority order that
// multi-objective early stopping ranks a rung by (feasible first, then non-dominated rank, then
// crowding distance). Result::pareto_front() and Result::hypervolume() use these on the trials'
// objectives; ASHA and Hyperband rank the trials at a rung with them (MO-ASHA).

#include <hypertune/linkage.hpp>

#include <cstddef>
#include <span>
#include <vector>

namespace hypertune {

/// a dominates b: no worse in every coordinate, better in at least one (all minimised).
[[nodiscard]] inline bool dominates(std::span<const double> a, std::span<const double> b) noexcept {
    bool better = false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i] > b[i]) return false;
        if (a[i] < b[i]) better = true;
    }
    return better;
}

/// The non-dominated rank of each point: 0 for the points no other point dominates (the Pareto
/// front), 1 for those only rank-0 points dominate, and so on. Equal points share a rank; a NaN
/// coordinate counts as +infinity.
///
/// Efficient non-dominated sort, sequential search (Zhang et al., "An Efficient Approach to
/// Nondominated Sorting for Evolutionary Multiobjective Optimization", 2015): in lexicographic
/// order every point comes after all the points that dominate it, so a point goes into the first
/// front none of whose members so far dominates it. Memory O(n d) (Deb's fast sort keeps every
/// dominating pair: n^2/4 of them for random points, 834 MB at 20,000); time O(n log n) for the
/// sort plus one dominance test per member of each front a point is checked against, O(n^2) at
/// worst and far less in practice (20,000 random points in two objectives: milliseconds).
[[nodiscard]] std::vector<std::size_t> non_dominated_ranks(const std::vector<std::vector<double>>& points);

/// NSGA-II's crowding distance (Deb et al. 2002) of each point of `front` (indices into
/// `points`, which share a non-dominated rank): per objective, the distance between a point's
/// neighbours on either side, divided by the objective's range over the front, summed over the
/// objectives. The extremes of each objective get infinity, so a front's ends are kept first
/// (of points tied at an extreme, the first in `front`; an objective equal over the whole front
/// counts for nothing). A point in a sparse region of the front scores higher than one in a crowd.
[[nodiscard]] std::vector<double> crowding_distances(const std::vector<std::vector<double>>& points,
                                                     const std::vector<std::size_t>& front);

/// The order in which multi-objective early stopping ranks the points recorded at a rung, best
/// first (indices into `points`): every feasible point before every infeasible one (Optuna's and
/// Deb's feasibility-first rule; `feasible` is empty when nothing is constrained); within each
/// group, by non-dominated rank; within a rank, by crowding distance, larger first; then by index,
/// earlier first. NaN coordinates must have been replaced (by infinity, say) beforehand.
/// O(d n^2) at worst for n points in d objectives (non_dominated_ranks), far less in practice.
[[nodiscard]] std::vector<std::size_t> priority_order(const std::vector<std::vector<double>>& points,
                                                      const std::vector<bool>& feasible = {});

/// The volume of the region that `points` dominate and that dominates `reference` (all
/// coordinates minimised): the larger, the better the front. A point not strictly below the
/// reference in every coordinate adds nothing. Throws InvalidArgument when a point's dimension
/// differs from the reference's, or a coordinate is not finite. A volume beyond the range of a
/// double (objectives near 1e154 in two coordinates) is infinity: scale such objectives first.
[[nodiscard]] double hypervolume(const std::vector<std::vector<double>>& points,
                                 const std::vector<double>& reference);

}  // namespace hypertune

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/pareto.hpp>
#endif
