// SPDX-License-Identifier: MIT
#pragma once
// ReportOptions: what the HTML report (report.hpp) draws and how much of it.

#include <cstddef>
#include <string>

namespace hypertune {

struct ReportOptions {
    std::string title{};                    ///< empty: "<strategy>: <metric>"
    std::size_t max_curves = 150;           ///< curves drawn one by one (the best ones); the rest as a band
    std::size_t max_points_per_curve = 60;  ///< points kept per drawn curve (first and last always): >= 2
    std::size_t max_dots = 1500;            ///< points per scatter plot (Completed trials first)
    double top_fraction = 0.2;              ///< parallel coordinates: this share (in [0, 1]) of the scored trials...
    std::size_t top_min = 10, top_max = 100;  ///< ...but at least / at most this many (top_min <= top_max)
    // render_report and write_report refuse other values with InvalidArgument naming the field.
};

}  // namespace hypertune
