// SPDX-License-Identifier: MIT
#pragma once
// Pareto dominance over loss vectors (every coordinate minimised): dominance, non-dominated
// sorting (Deb et al. 2002) and the exact hypervolume a point set dominates up to a reference
// point. Result::pareto_front() and Result::hypervolume() use these on the trials' objectives;
// a multi-objective scheduler ranks the trials at a rung with them.

#include <hypertune/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
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
/// front), 1 for those only rank-0 points dominate, and so on. Equal points share a rank.
[[nodiscard]] inline std::vector<std::size_t> non_dominated_ranks(const std::vector<std::vector<double>>& points) {
    const std::size_t n = points.size();
    std::vector<std::size_t> rank(n, 0), dominated_by(n, 0);
    std::vector<std::vector<std::size_t>> dominates_list(n);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j) {
            if (dominates(points[i], points[j])) {
                dominates_list[i].push_back(j);
                ++dominated_by[j];
            } else if (dominates(points[j], points[i])) {
                dominates_list[j].push_back(i);
                ++dominated_by[i];
            }
        }
    std::vector<std::size_t> current;
    for (std::size_t i = 0; i < n; ++i)
        if (dominated_by[i] == 0) current.push_back(i);
    for (std::size_t r = 0; !current.empty(); ++r) {
        std::vector<std::size_t> next;
        for (std::size_t i : current) {
            rank[i] = r;
            for (std::size_t j : dominates_list[i])
                if (--dominated_by[j] == 0) next.push_back(j);
        }
        current = std::move(next);
    }
    return rank;
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
/// differs from the reference's, or a coordinate is not finite.
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
    std::vector<const double*> front;
    for (const double* p : inside) {
        const bool dominated = std::any_of(inside.begin(), inside.end(), [&](const double* q) {
            return q != p && dominates(std::span(q, d), std::span(p, d));
        });
        if (!dominated) front.push_back(p);
    }
    return detail::hypervolume_sliced(std::move(front), reference.data(), d);
}

}  // namespace hypertune
