// SPDX-License-Identifier: MIT
#pragma once
// The summaries the harnesses print over seeds, orders and runs.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <vector>

namespace hypertune::bench {

/// The median of `v` (the mean of the middle two for an even count); NaN when empty.
[[nodiscard]] inline double median(std::vector<double> v) {
    if (v.empty()) return std::nan("");
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// The mean of `v`; NaN when empty.
[[nodiscard]] inline double mean(const std::vector<double>& v) {
    if (v.empty()) return std::nan("");
    return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

}  // namespace hypertune::bench
