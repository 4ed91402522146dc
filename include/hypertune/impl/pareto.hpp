// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/pareto.hpp>: non-dominated sorting, crowding distance, the rung
// priority order and the hypervolume. Inline in header-only mode, compiled into
// hypertune::compiled otherwise (see <hypertune/linkage.hpp>).

#include <hypertune/pareto.hpp>
#include <hypertune/error.hpp>
#include <hypertune/linkage.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/pareto.hpp> is compiled into hypertune::compiled: include <hypertune/pareto.hpp>"
#endif

namespace hypertune {

HYPERTUNE_INLINE std::vector<std::size_t> non_dominated_ranks(const std::vector<std::vector<double>>& points) {
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

HYPERTUNE_INLINE std::vector<double> crowding_distances(const std::vector<std::vector<double>>& points,
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
        if (!(high > low)) continue;  // a flat objective tells nothing, and has no ends to keep
        // The ends: of points tied at an end, the first in index order (the sort is stable), so
        // that ties go to the earlier index, as everywhere else in the order.
        const auto top = std::find_if(order.begin(), order.end(),
                                      [&](std::size_t i) { return points[front[i]][k] == high; });
        distance[order.front()] = distance[*top] = std::numeric_limits<double>::infinity();
        if (!std::isfinite(high - low)) continue;  // an unbounded objective: its ends alone
        for (std::size_t i = 1; i + 1 < n; ++i)
            distance[order[i]] += (points[front[order[i + 1]]][k] - points[front[order[i - 1]]][k]) / (high - low);
    }
    return distance;
}

HYPERTUNE_INLINE std::vector<std::size_t> priority_order(const std::vector<std::vector<double>>& points,
                                                         const std::vector<bool>& feasible) {
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
HYPERTUNE_INLINE double hypervolume_sliced(std::vector<const double*> points, const double* ref, std::size_t d) {
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

HYPERTUNE_INLINE double hypervolume(const std::vector<std::vector<double>>& points,
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
