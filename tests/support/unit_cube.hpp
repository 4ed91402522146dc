// SPDX-License-Identifier: MIT
#pragma once
// A d-dimensional unit cube (x0 .. x{d-1}, linear) and a bowl on it, for the Gaussian-process
// tests that need a space of a given dimension rather than a named test function.

#include <hypertune/config.hpp>
#include <hypertune/parameter.hpp>
#include <hypertune/search_space.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace hypertune::testing {

[[nodiscard]] inline SearchSpace unit_space(std::size_t d) {
    SearchSpace s;
    for (std::size_t j = 0; j < d; ++j) s.add(ContinuousParameter(fmt::format("x{}", j), 0.0, 1.0));
    return s;
}

/// The squared distance to (0.3, ..., 0.3) in the first d coordinates, with a flat bottom at
/// `floor`: once the search is in it, nothing improves.
[[nodiscard]] inline double flat_bowl(const Config& c, std::size_t d, double floor = 0.0) {
    double r2 = 0.0;
    for (std::size_t j = 0; j < d; ++j) r2 += std::pow(c.get<double>(fmt::format("x{}", j)) - 0.3, 2);
    return std::max(r2, floor);
}

}  // namespace hypertune::testing
