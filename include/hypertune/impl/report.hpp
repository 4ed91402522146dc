// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/report.hpp>: the document around the sections.
// Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/detail/file.hpp>
#include <hypertune/detail/report_assets.hpp>
#include <hypertune/detail/report_sections.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/report.hpp>

#include <fmt/format.h>

#include <string>
#include <string_view>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/report.hpp> is compiled into hypertune::compiled: include <hypertune/report.hpp>"
#endif

namespace hypertune {

namespace detail::report {

// The options the sections rely on: a curve keeps its first and last points, the top trials are a
// share of the scored ones between two counts.
inline void check_options(const ReportOptions& o) {
    if (o.max_points_per_curve < 2)
        throw InvalidArgument(fmt::format("ReportOptions: max_points_per_curve must be >= 2 (a curve keeps its first "
                                          "and last points), got {}",
                                          o.max_points_per_curve));
    if (!(o.top_fraction >= 0.0 && o.top_fraction <= 1.0))
        throw InvalidArgument(fmt::format("ReportOptions: top_fraction must be in [0, 1], got {}", o.top_fraction));
    if (o.top_min > o.top_max)
        throw InvalidArgument(
            fmt::format("ReportOptions: top_min ({}) must be <= top_max ({})", o.top_min, o.top_max));
}

}  // namespace detail::report

HYPERTUNE_INLINE std::string render_report(const Result& result, const ReportOptions& options) {
    using namespace detail::report;
    check_options(options);
    const Context c(result, options);
    const auto& s = result.setup();
    std::string title = options.title.empty() ? fmt::format("{}: {}", s.strategy.empty() ? "tuning" : s.strategy, s.metric)
                                              : options.title;
    std::string h = fmt::format("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{0}</title>"
                                "<style>{1}</style></head><body>\n<h1>{0}</h1><p class=\"note\">hypertune report, {2}</p>\n",
                                esc(title), style_sheet,
                                c.t0 > 0.0 ? "run started " + detail::iso8601(c.t0) : std::string("no run recorded"));
    auto section = [&](std::string_view id, std::string_view heading, const std::string& body) {
        h += fmt::format("<section id=\"{}\"><h2>{}</h2>\n{}\n</section>\n", id, heading, body);
    };
    section("summary", "Summary", summary(c));
    section("progress", "Best so far", best_so_far(c));
    if (result.objectives().size() > 1) section("front", "Pareto front", front(c));
    section("curves", "Intermediate values", curves(c));
    section("timeline", "Timeline", timeline(c));
    section("parameters", "Objective against each hyperparameter", parameters(c));
    section("top", "Parallel coordinates of the top trials", parallel(c));
    section("importance", "Parameter importance", importance(c));
    section("table", "All trials", table(c));
    return h + fmt::format("<script>{}</script>\n</body></html>\n", sort_script);
}

HYPERTUNE_INLINE void write_report(const Result& result, const std::string& path, const ReportOptions& options) {
    detail::write_whole_file(path, "report file", render_report(result, options));
}

}  // namespace hypertune
