// SPDX-License-Identifier: MIT
#pragma once
// Pareto dominance over loss vectors (every coordinate minimised): dominance, non-dominated
// sorting (Deb et al. 2002) and the exact hypervolume a point set dominates up to a reference
// point, the crowding distance (NSGA-II's tie-break within a front), and the priority order that
// multi-objective early stopping ranks a rung by (feasible first, then non-dominated rank, then
// crowding distance). Result::pareto_front() and Result::hypervolume() use these on the trials'
// objectives; ASHA and Hyperband rank the trials at a rung with them (MO-ASHA).

#include <hypertune/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <span>
#include <string>
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
[[nodiscard]] inline std::vector<std::size_t> non_dominated_ranks(const std::vector<std::vector<double>>& points) {
    const std::size_t n = points.size();
    std::vector<std::size_t> rank(n, 0);
    if (n == 0) return rank;
    const std::size_t d = points.front().size();
    std::vector<double> flat(n * d);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < d; ++k) {
            const double x = k < points[i].size() ? points[i][k] : std::numeric_limits<double>::quiet_NaN();
            flat[i * d + k] = std::isnan(x) ? std::numeric_limits<double>::infinity() : x;
        }
    const auto at = [&](std::size_t i) { return std::span<const double>(flat.data() + i * d, d); };
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const auto pa = at(a), pb = at(b);
        return std::lexicographical_compare(pa.begin(), pa.end(), pb.begin(), pb.end());
    });
    std::vector<std::vector<std::size_t>> fronts;
    for (std::size_t i : order) {
        std::size_t r = 0;
        // The last member added to a front is the likeliest to dominate the next point: test from the back.
        while (r < fronts.size() && std::any_of(fronts[r].rbegin(), fronts[r].rend(),
                                                [&](std::size_t j) { return dominates(at(j), at(i)); }))
            ++r;
        if (r == fronts.size()) fronts.emplace_back();
        fronts[r].push_back(i);
        rank[i] = r;
    }
    return rank;
}

/// NSGA-II's crowding distance (Deb et al. 2002) of each point of `front` (indices into
/// `points`, which share a non-dominated rank): per objective, the distance between a point's
/// neighbours on either side, divided by the objective's range over the front, summed over the
/// objectives. The extremes of each objective get infinity, so a front's ends are kept first.
/// A point in a sparse region of the front scores higher than one in a crowd.
[[nodiscard]] inline std::vector<double> crowding_distances(const std::vector<std::vector<double>>& points,
                                                            const std::vector<std::size_t>& front) {
    const std::size_t n = front.size();
    std::vector<double> distance(n, 0.0);
    if (n == 0) return distance;
    const std::size_t d = points[front.front()].size();
    std::vector<std::size_t> order(n);
    for (std::size_t k = 0; k < d; ++k) {
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return points[front[a]][k] < points[front[b]][k]; });
        const double low = points[front[order.front()]][k], high = points[front[order.back()]][k];
        distance[order.front()] = distance[order.back()] = std::numeric_limits<double>::infinity();
        if (!(high > low) || !std::isfinite(high - low)) continue;  // a flat (or unbounded) objective tells nothing
        for (std::size_t i = 1; i + 1 < n; ++i)
            distance[order[i]] += (points[front[order[i + 1]]][k] - points[front[order[i - 1]]][k]) / (high - low);
    }
    return distance;
}

/// The order in which multi-objective early stopping ranks the points recorded at a rung, best
/// first (indices into `points`): every feasible point before every infeasible one (Optuna's and
/// Deb's feasibility-first rule; `feasible` is empty when nothing is constrained); within each
/// group, by non-dominated rank; within a rank, by crowding distance, larger first; then by index,
/// earlier first. NaN coordinates must have been replaced (by infinity, say) beforehand.
/// O(d n^2) at worst for n points in d objectives (non_dominated_ranks), far less in practice.
[[nodiscard]] inline std::vector<std::size_t> priority_order(const std::vector<std::vector<double>>& points,
                                                            const std::vector<bool>& feasible = {}) {
    const std::size_t n = points.size();
    std::vector<std::size_t> order;
    order.reserve(n);
    for (const bool want_feasible : {true, false}) {
        std::vector<std::size_t> group;
        for (std::size_t i = 0; i < n; ++i)
            if ((feasible.empty() || feasible[i]) == want_feasible) group.push_back(i);
        if (group.empty()) continue;
        std::vector<std::vector<double>> sub;
        sub.reserve(group.size());
        for (std::size_t i : group) sub.push_back(points[i]);
        const std::vector<std::size_t> rank = non_dominated_ranks(sub);
        const std::size_t fronts = *std::max_element(rank.begin(), rank.end()) + 1;
        for (std::size_t r = 0; r < fronts; ++r) {
            std::vector<std::size_t> front;  // indices into `sub`, increasing
            for (std::size_t i = 0; i < group.size(); ++i)
                if (rank[i] == r) front.push_back(i);
            const std::vector<double> crowding = crowding_distances(sub, front);
            std::vector<std::size_t> by(front.size());
            std::iota(by.begin(), by.end(), std::size_t{0});
            std::stable_sort(by.begin(), by.end(), [&](std::size_t a, std::size_t b) { return crowding[a] > crowding[b]; });
            for (std::size_t i : by) order.push_back(group[front[i]]);
        }
    }
    return order;
}

namespace detail {

// Hypervolume of `points` (each strictly below `ref` in every coordinate) in the first `d`
// coordinates, by slicing along the last one (HSO): between two consecutive values of the last
// coordinate, the dominated region is the (d-1)-dimensional hypervolume of the points at or below
// the slice, times the slice's width. Exact; O(n^(d-1) log n), fine for the front sizes of a run.
[[nodiscard]] inline double hypervolume_sliced(std::vector<const double*> points, const double* ref, std::size_t d) {
    if (points.empty()) return 0.0;
    const std::size_t last = d - 1;
    std::sort(points.begin(), points.end(), [&](const double* a, const double* b) { return a[last] < b[last]; });
    if (d == 1) return ref[0] - points.front()[0];
    if (d == 2) {  // sweep: each point adds the strip its x-interval spans below the best y so far
        double volume = 0.0, best_x = ref[0];
        for (const double* p : points) {
            if (p[0] < best_x) {
                volume += (best_x - p[0]) * (ref[1] - p[1]);
                best_x = p[0];
            }
        }
        return volume;
    }
    double volume = 0.0;
    std::vector<const double*> below;
    for (std::size_t i = 0; i < points.size(); ++i) {
        below.push_back(points[i]);
        const double upper = i + 1 < points.size() ? points[i + 1][last] : ref[last];
        const double width = upper - points[i][last];
        if (width > 0.0) volume += width * hypervolume_sliced(below, ref, d - 1);
    }
    return volume;
}

}  // namespace detail

/// The volume of the region that `points` dominate and that dominates `reference` (all
/// coordinates minimised): the larger, the better the front. A point not strictly below the
/// reference in every coordinate adds nothing. Throws InvalidArgument when a point's dimension
/// differs from the reference's, or a coordinate is not finite. A volume beyond the range of a
/// double (objectives near 1e154 in two coordinates) is infinity: scale such objectives first.
[[nodiscard]] inline double hypervolume(const std::vector<std::vector<double>>& points,
                                        const std::vector<double>& reference) {
    const std::size_t d = reference.size();
    if (d == 0) throw InvalidArgument("hypervolume: the reference point has no coordinates");
    for (double r : reference)
        if (!std::isfinite(r)) throw InvalidArgument("hypervolume: the reference point must be finite");
    std::vector<const double*> inside;
    for (const auto& p : points) {
        if (p.size() != d)
            throw InvalidArgument("hypervolume: a point has " + std::to_string(p.size()) +
                                  " coordinates, the reference " + std::to_string(d));
        bool below = true;
        for (std::size_t i = 0; i < d; ++i) {
            if (!std::isfinite(p[i])) throw InvalidArgument("hypervolume: a point has a coordinate that is not finite");
            below = below && p[i] < reference[i];
        }
        if (below) inside.push_back(p.data());
    }
    // Dominated points add nothing; dropping them first keeps the slices small.
    std::vector<std::vector<double>> copies;
    copies.reserve(inside.size());
    for (const double* p : inside) copies.emplace_back(p, p + d);
    const std::vector<std::size_t> rank = non_dominated_ranks(copies);
    std::vector<const double*> front;
    for (std::size_t i = 0; i < inside.size(); ++i)
        if (rank[i] == 0) front.push_back(inside[i]);
    return detail::hypervolume_sliced(std::move(front), reference.data(), d);
}

}  // namespace hypertune
