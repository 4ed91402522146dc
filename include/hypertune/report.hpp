// SPDX-License-Identifier: MIT
#pragma once
// An HTML report of a tuning run: one self-contained file (inline SVG, a small inline script to
// sort the table, nothing fetched) with the summary, best-so-far, intermediate curves with the
// rungs, the per-worker timeline, the objective against each hyperparameter, parallel coordinates
// of the top trials, parameter importance and a table of every trial with its decisions.
//
//   hypertune::write_report(result, "report.html");
//
// Large runs stay small: curves are thinned to max_points_per_curve, at most max_curves are drawn
// one by one (the rest become a percentile band), scatter plots keep max_dots points, and the
// timeline merges runs narrower than a pixel. The table keeps every trial.


#include <hypertune/linkage.hpp>
#include <hypertune/report_options.hpp>
#include <hypertune/result.hpp>

#include <cstddef>
#include <string>

namespace hypertune {

/// The report as one self-contained HTML document.
[[nodiscard]] std::string render_report(const Result& result, const ReportOptions& options = {});

/// Writes render_report(result) to `path`; throws IoError when it cannot.
void write_report(const Result& result, const std::string& path, const ReportOptions& options = {});

}  // namespace hypertune

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/report.hpp>
#endif
