// SPDX-License-Identifier: MIT
// Pareto dominance, non-dominated sorting and hypervolume, against brute force on random point
// sets in 2 to 4 dimensions (with ties, duplicates and points beyond the reference).
#include <hypertune/pareto.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <set>
#include <vector>

namespace ht = hypertune;

namespace {

using Points = std::vector<std::vector<double>>;

// Coordinates on a coarse grid, so that ties and duplicates are frequent.
Points random_points(std::mt19937_64& rng, std::size_t n, std::size_t d) {
    std::uniform_int_distribution<int> coordinate(0, 6);
    Points out(n, std::vector<double>(d));
    for (auto& p : out)
        for (auto& x : p) x = coordinate(rng) * 0.5;
    return out;
}

bool brute_dominates(const std::vector<double>& a, const std::vector<double>& b) {
    bool all_le = true, some_lt = false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        all_le = all_le && a[i] <= b[i];
        some_lt = some_lt || a[i] < b[i];
    }
    return all_le && some_lt;
}

// Peels fronts: rank r is what no point left after removing ranks < r dominates.
std::vector<std::size_t> brute_ranks(const Points& p) {
    std::vector<std::size_t> rank(p.size(), SIZE_MAX);
    for (std::size_t r = 0, left = p.size(); left > 0; ++r) {
        std::vector<std::size_t> front;
        for (std::size_t i = 0; i < p.size(); ++i) {
            if (rank[i] != SIZE_MAX) continue;
            bool dominated = false;
            for (std::size_t j = 0; j < p.size() && !dominated; ++j)
                dominated = rank[j] == SIZE_MAX && brute_dominates(p[j], p[i]);
            if (!dominated) front.push_back(i);
        }
        for (std::size_t i : front) rank[i] = r;
        left -= front.size();
    }
    return rank;
}

// The exact dominated volume by cells: the distinct coordinates (and the reference) cut the box
// into cells; a cell counts when some point dominates its lower corner.
double brute_hypervolume(const Points& p, const std::vector<double>& ref) {
    const std::size_t d = ref.size();
    std::vector<std::vector<double>> cuts(d);
    for (std::size_t k = 0; k < d; ++k) {
        std::set<double> c{ref[k]};
        for (const auto& x : p)
            if (x[k] < ref[k]) c.insert(x[k]);
        cuts[k].assign(c.begin(), c.end());
    }
    double volume = 0.0;
    std::vector<std::size_t> idx(d, 0);
    while (true) {
        bool valid = true;
        for (std::size_t k = 0; k < d; ++k) valid = valid && idx[k] + 1 < cuts[k].size();
        if (valid) {
            bool covered = false;
            for (const auto& x : p) {
                bool dominates_corner = true;
                for (std::size_t k = 0; k < d; ++k) dominates_corner = dominates_corner && x[k] <= cuts[k][idx[k]];
                covered = covered || dominates_corner;
            }
            if (covered) {
                double cell = 1.0;
                for (std::size_t k = 0; k < d; ++k) cell *= cuts[k][idx[k] + 1] - cuts[k][idx[k]];
                volume += cell;
            }
        }
        std::size_t k = 0;
        while (k < d && ++idx[k] >= cuts[k].size()) idx[k++] = 0;
        if (k == d) break;
    }
    return volume;
}

}  // namespace

TEST_CASE("dominates: no worse everywhere and better somewhere") {
    using V = std::vector<double>;
    CHECK(ht::dominates(V{1, 2}, V{2, 2}));
    CHECK_FALSE(ht::dominates(V{2, 2}, V{1, 2}));
    CHECK_FALSE(ht::dominates(V{1, 2}, V{1, 2}));  // equal points dominate neither way
    CHECK_FALSE(ht::dominates(V{1, 3}, V{2, 2}));  // a trade-off
    CHECK_FALSE(ht::dominates(V{2, 2}, V{1, 3}));
}

TEST_CASE("non_dominated_ranks agree with peeling fronts by brute force, in 2 to 4 dimensions") {
    std::mt19937_64 rng(11);
    for (std::size_t d = 2; d <= 4; ++d)
        for (int round = 0; round < 60; ++round) {
            const std::size_t n = 1 + static_cast<std::size_t>(round % 25);
            auto points = random_points(rng, n, d);
            CAPTURE(d);
            CAPTURE(n);
            CHECK(ht::non_dominated_ranks(points) == brute_ranks(points));
        }
    CHECK(ht::non_dominated_ranks({}).empty());
    // Larger sets of distinct values, where fronts are many and long.
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (std::size_t d = 2; d <= 4; ++d) {
        Points points(400, std::vector<double>(d));
        for (auto& p : points)
            for (auto& x : p) x = unit(rng);
        CAPTURE(d);
        CHECK(ht::non_dominated_ranks(points) == brute_ranks(points));
    }
    // A NaN coordinate counts as +infinity.
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    CHECK(ht::non_dominated_ranks({{nan, 1.0}, {2.0, 1.0}, {inf, 0.5}}) ==
          ht::non_dominated_ranks({{inf, 1.0}, {2.0, 1.0}, {inf, 0.5}}));
    CHECK(ht::non_dominated_ranks({{nan, 1.0}, {2.0, 1.0}}) == std::vector<std::size_t>{1, 0});
}

TEST_CASE("hypervolume agrees with counting cells by brute force, in 2 to 4 dimensions") {
    std::mt19937_64 rng(5);
    for (std::size_t d = 2; d <= 4; ++d)
        for (int round = 0; round < 60; ++round) {
            const std::size_t n = 1 + static_cast<std::size_t>(round % 12);
            auto points = random_points(rng, n, d);
            // Some points lie on or beyond the reference in a coordinate: they add nothing.
            std::vector<double> ref(d, 2.5);
            CAPTURE(d);
            CAPTURE(n);
            CHECK(ht::hypervolume(points, ref) == doctest::Approx(brute_hypervolume(points, ref)).epsilon(1e-12));
        }
}

TEST_CASE("hypervolume: a known front, an empty one, and bad input named") {
    CHECK(ht::hypervolume({{1, 3}, {2, 2}, {3, 1}}, {4, 4}) == doctest::Approx(6.0));
    CHECK(ht::hypervolume({{1, 1, 1}}, {2, 3, 4}) == doctest::Approx(6.0));
    CHECK(ht::hypervolume({{1, 1}, {1, 1}}, {2, 2}) == doctest::Approx(1.0));  // duplicates count once
    CHECK(ht::hypervolume({}, {1, 1}) == 0.0);
    CHECK(ht::hypervolume({{5, 0}}, {4, 4}) == 0.0);  // beyond the reference in one coordinate
    CHECK_THROWS_WITH_AS((void)ht::hypervolume({{1, 2, 3}}, {4, 4}), "hypervolume: a point has 3 coordinates, the reference 2",
                         ht::InvalidArgument);
    CHECK_THROWS_AS((void)ht::hypervolume({{1, 2}}, {}), ht::InvalidArgument);
    CHECK_THROWS_AS((void)ht::hypervolume({{1, std::nan("")}}, {4, 4}), ht::InvalidArgument);
}
