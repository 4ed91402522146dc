// SPDX-License-Identifier: MIT
#pragma once
// The report's sections, each from the Context computed once: summary, best so far, the Pareto
// front (several objectives), curves, timeline, objective against each parameter, parallel
// coordinates, importance, the table.

#include <hypertune/detail/report_svg.hpp>
#include <hypertune/detail/file.hpp>
#include <hypertune/importance.hpp>
#include <hypertune/result.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hypertune::detail::report {

struct Context {
    const Result& result;
    const ReportOptions& options;
    CostSummary cost;
    double t0 = 0.0;                                  ///< the run's start (Unix seconds)
    const Config* layout = nullptr;                   ///< any trial's config: the parameters' specs
    std::vector<std::size_t> tuned;                   ///< indices of tuned parameters in a config
    std::vector<const TrialRecord*> scored;           ///< with a value, best first
    std::vector<const TrialRecord*> ranked;           ///< what best() ranks: the feasible ones of scored, Completed if any
    std::vector<Resource> rungs;                      ///< resources where decisions were taken
    bool any_cut = false;  ///< a Stopped trial the strategy did not stop (stop(), a time limit)
    bool any_unfinished = false;  ///< a Running or Paused trial (a journal read before its run ended)
    bool any_infeasible = false;  ///< a trial with values that breaks a constraint
    TrialId last_id = 0;

    Context(const Result& r, const ReportOptions& o) : result(r), options(o), cost(r.cost()), t0(r.setup().start_time) {
        double first = std::numeric_limits<double>::infinity();
        for (const auto& t : r.trials()) {
            if (!t.segments.empty()) first = std::min(first, t.start_time());
            last_id = std::max(last_id, t.id);
            if (!layout && t.config.size() > 0) layout = &t.config;
            if (t.has_objective()) scored.push_back(&t);
            for (const auto& d : t.decisions) rungs.push_back(d.resource);
        }
        if (!(t0 > 0.0) && std::isfinite(first)) t0 = first;
        if (layout)
            for (std::size_t i = 0; i < layout->size(); ++i)
                if (layout->parameter(i).tuned()) tuned.push_back(i);
        std::stable_sort(scored.begin(), scored.end(), [&](auto* a, auto* b) { return better(a->objective, b->objective); });
        for (const bool completed_only : {true, false}) {  // as Result::best_among()
            for (auto* t : scored)
                if (t->feasible && (!completed_only || t->status == TrialStatus::Completed)) ranked.push_back(t);
            if (!ranked.empty()) break;
        }
        // best() breaks a tie on the first objective by the next ones: the report circles that trial.
        if (r.has_best()) {
            const TrialId best_id = r.best().id;
            auto it = std::find_if(ranked.begin(), ranked.end(), [&](auto* t) { return t->id == best_id; });
            if (it != ranked.end()) std::rotate(ranked.begin(), it, it + 1);
        }
        std::sort(rungs.begin(), rungs.end());
        rungs.erase(std::unique(rungs.begin(), rungs.end()), rungs.end());
        std::erase_if(rungs, [](Resource x) { return x <= 0; });
        any_cut = std::any_of(r.trials().begin(), r.trials().end(), [](const TrialRecord& t) {
            return t.status == TrialStatus::Stopped && !Result::stopped_early(t);
        });
        any_unfinished = r.count(TrialStatus::Running) + r.count(TrialStatus::Paused) > 0;
        any_infeasible = std::any_of(scored.begin(), scored.end(), [](auto* t) { return !t->feasible; });
    }

    [[nodiscard]] bool maximize() const { return result.setup().direction == Direction::Maximize; }
    [[nodiscard]] bool better(double a, double b) const { return maximize() ? a > b : a < b; }
    [[nodiscard]] const std::string& metric() const { return result.setup().metric; }
    /// Why there is no best trial (ranked is empty), as Result::summary() says it.
    [[nodiscard]] std::string_view no_best() const {
        return scored.empty() ? "no trial produced a value" : "no trial met the constraints";
    }
    [[nodiscard]] std::string no_best_note() const {
        std::string text(no_best());
        text.front() = 'N';
        return fmt::format("<p class=\"note\">{}.</p>", text);
    }
};

// The colours' key. Stopped trials share a colour: those the strategy stopped, and those the run's
// end cut short (stop(), a time limit), which the key then names too. Unfinished trials and those
// that break a constraint get an entry when there are any.
inline std::string key_html(const Context& c) {
    return fmt::format("<p class=\"note key\"><i style=\"background:#2b6cb0\"></i>Completed (full resource)"
                       "<i style=\"background:#dd8a2a\"></i>{}<i style=\"background:#c53030\"></i>Failed{}{}</p>",
                       c.any_cut ? "Stopped early or cut short" : "Stopped early",
                       c.any_unfinished ? "<i style=\"background:#999\"></i>Unfinished (running or paused)" : "",
                       c.any_infeasible ? "<i style=\"background:#9f7aea\"></i>Breaks a constraint" : "");
}

// The colour class of a trial's dot: its outcome's, or I when it breaks a constraint.
[[nodiscard]] inline char dot_class(const TrialRecord& t) { return t.feasible ? status_class(t.status) : 'I'; }

// Dots of several classes, one dots() per class, later ones on top: unfinished, stopped, breaking a
// constraint, completed.
inline void class_dots(Chart& ch, const std::vector<std::pair<char, Point>>& points) {
    for (char k : {'R', 'S', 'I', 'C'}) {
        std::vector<Point> of;
        for (const auto& [cls, p] : points)
            if (cls == k) of.push_back(p);
        if (!of.empty()) ch.dots(of, std::string(1, k));
    }
}

// A ratio for people: "3.2x faster", "10.0x slower" (not "0.1x faster"), and `same` when the two
// agree to within 5% (not "1.0x less").
[[nodiscard]] inline std::string times(double ratio, std::string_view up, std::string_view down, std::string_view same) {
    if (!std::isfinite(ratio) || !(ratio > 0.0)) return std::string(same);
    if (ratio >= 1.05) return fmt::format("{:.1f}x {}", ratio, up);
    if (ratio <= 1.0 / 1.05) return fmt::format("{:.1f}x {}", 1.0 / ratio, down);
    return std::string(same);
}

inline std::string summary(const Context& c) {
    const auto& r = c.result;
    const auto& s = r.setup();
    std::string h = "<table class=\"kv\">";
    auto row = [&](std::string_view k, const std::string& v) { h += fmt::format("<tr><th>{}<td>{}", k, v); };
    row("strategy", fmt::format("{} ({} {}), seed {}", esc(s.strategy), to_string(s.direction), esc(s.metric), s.seed));
    row("trials", fmt::format("{} in all: {}", r.trials().size(), r.status_counts()));
    if (r.has_best()) {
        const auto& b = r.best();
        std::string cfg;
        for (std::size_t i = 0; i < b.config.size(); ++i)
            cfg += fmt::format("{}{} = {}", i ? ", " : "", esc(b.config.name(i)), value_text(b.config.value(i)));
        row("best", fmt::format("<b>{} = {}</b> (trial {}, {}): {}", esc(s.metric), num(b.objective, 6), b.id,
                                to_string(b.status), cfg));
    } else {
        row("best", fmt::format("none: {}", c.no_best()));
    }
    if (const std::string overall = r.overall_best_summary(); !overall.empty()) row("overall best", esc(overall));
    if (const std::string constraints = r.constraints_summary(); !constraints.empty()) row("constraints", esc(constraints));
    const auto& k = c.cost;
    row(s.instances_parameter.empty()
            ? fmt::format("billable time ({} instance{} per trial)", s.instances_per_trial, s.instances_per_trial == 1 ? "" : "s")
            : fmt::format("billable time (instances per trial: {} x its {})", s.instances_per_trial,
                          esc(s.instances_parameter)),
        fmt::format("{} with early stopping, {} estimated without{}", human_duration(k.billable_seconds),
                    human_duration(k.billable_seconds_without_early_stopping),
                    k.billable_seconds > 0
                        ? fmt::format(" ({})", times(k.billable_seconds_without_early_stopping / k.billable_seconds,
                                                     "less", "more", "no saving"))
                        : std::string()));
    // Sessions resumed with another max_parallel_jobs: the most of them, as an upper bound (as summary()).
    row("wall time", fmt::format("{} on {}{} parallel job{} vs {} sequential{}", human_duration(k.wall_seconds),
                                 same_capacity(k, s.max_parallel_jobs) ? "" : "up to ", s.max_parallel_jobs,
                                 s.max_parallel_jobs == 1 ? "" : "s",
                                 human_duration(k.sequential_seconds),
                                 k.wall_seconds > 0 && k.sequential_seconds > 0
                                     ? fmt::format(" ({})", times(k.sequential_seconds / k.wall_seconds, "faster",
                                                                  "slower", "no speed-up"))
                                     : std::string()));
    row("worker utilisation", fmt::format("{:.0f}%", 100.0 * k.utilisation));
    if (s.max_resource) row("resource", fmt::format("max {} per trial; {} used in all", *s.max_resource, k.resource_used));
    row("ended", s.stop_reason.empty() ? std::string("-") : esc(s.stop_reason));
    for (const auto& w : s.warnings) row("warning", fmt::format("<span class=\"warn\">{}</span>", esc(w)));
    return h + "</table>";
}

// Best-so-far against trial number and against elapsed time, over every trial's value as dots.
inline std::string best_so_far(const Context& c) {
    if (c.ranked.empty()) return c.no_best_note();
    const bool completed_only = c.ranked.front()->status == TrialStatus::Completed;
    std::vector<double> values;
    for (auto* t : c.scored) values.push_back(t->objective);
    Axis ya = Axis::fit(values);
    std::string out = "<div class=\"grid\">";
    for (bool by_time : {false, true}) {
        std::vector<const TrialRecord*> order = c.scored;
        auto when = [&](const TrialRecord* t) { return by_time ? t->end_time() - c.t0 : static_cast<double>(t->id); };
        std::stable_sort(order.begin(), order.end(), [&](auto* a, auto* b) { return when(a) < when(b); });
        // Trial numbers are whole: their axis reaches at least trial 1 and has no tick between two.
        Axis xa = by_time ? Axis{0.0, std::max(std::max(c.cost.wall_seconds, when(order.back())), 1e-9), false}
                          : Axis{0.0, std::max(static_cast<double>(c.last_id), 1.0), false, true};
        Chart ch(half, 280, by_time ? "best so far against elapsed time" : "best so far against trial number");
        ch.axes(xa.ticks(), ya.ticks(), by_time ? "seconds since start" : "trial", c.metric());
        std::vector<std::pair<char, Point>> done, others, dots;
        std::vector<Point> steps;
        for (auto* t : order)
            (t->status == TrialStatus::Completed ? done : others).push_back({dot_class(*t), {xa.at(when(t)), ya.at(t->objective)}});
        for (const auto* part : {&others, &done})
            for (auto i : thin(part->size(), c.options.max_dots / 2)) dots.push_back((*part)[i]);
        class_dots(ch, dots);
        double best = std::nan("");
        for (auto* t : order) {
            if (!t->feasible || (completed_only && t->status != TrialStatus::Completed)) continue;
            if (std::isfinite(best) && !c.better(t->objective, best)) continue;
            if (std::isfinite(best)) steps.push_back({xa.at(when(t)), ya.at(best)});
            best = t->objective;
            steps.push_back({xa.at(when(t)), ya.at(best)});
        }
        steps.push_back({1.0, ya.at(best)});
        ch.line(steps, "best");
        out += ch.str();
    }
    return out + "</div>" + key_html(c) +
           fmt::format("<p class=\"note\">The black line is the best value so far among {}; dots are every trial's "
                       "final value (a stopped trial's at the resource it reached).</p>",
                       completed_only ? "trials completed at full resource" : "all trials (none completed)");
}

// Every trial's intermediate values against resource, coloured by outcome, rungs marked.
inline std::string curves(const Context& c) {
    std::vector<const TrialRecord*> with;
    std::vector<double> values, steps;
    for (const auto& t : c.result.trials()) {
        if (t.curve.empty()) continue;
        with.push_back(&t);
        for (auto i : thin(t.curve.size(), c.options.max_points_per_curve)) {
            values.push_back(t.curve[i].value);
            steps.push_back(static_cast<double>(t.curve[i].step));
        }
    }
    if (with.empty()) return "<p class=\"note\">No trial reported intermediate values.</p>";
    // The best curves (by their last value) are drawn one by one, the rest as a band.
    std::stable_sort(with.begin(), with.end(),
                     [&](auto* a, auto* b) { return c.better(a->curve.back().value, b->curve.back().value); });
    const double smin = *std::min_element(steps.begin(), steps.end()), smax = *std::max_element(steps.begin(), steps.end());
    Axis xa{smin, smax > smin ? smax : smin + 1, c.rungs.size() >= 2 && smin >= 1 && smax / smin >= 8, true};
    Axis ya = Axis::fit(values);
    Chart ch(wide, 360, fmt::format("{} against resource, {} trials", c.metric(), with.size()));
    ch.axes(xa.ticks(), ya.ticks(), xa.log ? "resource (log scale)" : "resource", c.metric());
    for (Resource r : c.rungs) {
        double u = xa.at(static_cast<double>(r));
        ch.raw(fmt::format("<path class=\"rung\" d=\"M{0:.1f} {1:.1f}V{2:.1f}\"/>", ch.x(u), ch.y(0), ch.y(1)));
        ch.text(ch.x(u) + 3, ch.y(1) + 11, fmt::format("rung {}", r));
    }
    const std::size_t drawn = std::min(with.size(), c.options.max_curves);
    if (drawn < with.size()) {
        // Percentiles per pixel column of the curves not drawn.
        std::map<int, std::vector<double>> column;
        for (std::size_t k = drawn; k < with.size(); ++k)
            for (const auto& p : with[k]->curve)
                column[static_cast<int>(std::lround(xa.at(static_cast<double>(p.step)) * 200))].push_back(p.value);
        std::vector<Point> upper, lower, median;
        for (auto& [x, column_values] : column) {
            auto& v = column_values;  // a lambda may not capture a structured binding before clang 16
            std::sort(v.begin(), v.end());
            auto q = [&](double f) { return ya.at(v[static_cast<std::size_t>(f * static_cast<double>(v.size() - 1))]); };
            upper.push_back({x / 200.0, q(0.9)});
            lower.push_back({x / 200.0, q(0.1)});
            median.push_back({x / 200.0, q(0.5)});
        }
        // A band over one resource only (every such trial stopped at the same rung) would have no
        // width: it is drawn 6 pixels wide.
        const double half_px = upper.size() == 1 ? 3.0 : 0.0;
        std::string d;
        for (const auto& p : upper)
            d += fmt::format("{}{:.1f} {:.1f}", d.empty() ? "M" : "L", ch.x(p.x) - half_px, ch.y(p.y));
        if (half_px > 0) d += fmt::format("L{:.1f} {:.1f}", ch.x(upper.back().x) + half_px, ch.y(upper.back().y));
        for (auto it = lower.rbegin(); it != lower.rend(); ++it)
            d += fmt::format("L{:.1f} {:.1f}", ch.x(it->x) + half_px, ch.y(it->y));
        if (half_px > 0) d += fmt::format("L{:.1f} {:.1f}", ch.x(lower.front().x) - half_px, ch.y(lower.front().y));
        ch.raw(fmt::format("<path class=\"band\" d=\"{}Z\"/>", d));
        if (median.size() == 1) ch.marker(median.front(), "R", "median of the curves not drawn one by one");
        else ch.line(median, "R", "median of the curves not drawn one by one");
    }
    std::size_t dots = 0;  // trials with a single value (stopped at their first report): a polyline of one point is invisible
    for (std::size_t k = drawn; k-- > 0;) {  // the best last, on top
        const auto* t = with[k];
        std::vector<Point> pts;
        for (auto i : thin(t->curve.size(), c.options.max_points_per_curve))
            pts.push_back({xa.at(static_cast<double>(t->curve[i].step)), ya.at(t->curve[i].value)});
        auto title = fmt::format("trial {} ({}): {} at resource {}", t->id, to_string(t->status),
                                 num(t->curve.back().value, 6), t->curve.back().step);
        // Purple where it breaks a constraint, as in the other charts and the key.
        if (pts.size() == 1) {
            ch.marker(pts.front(), std::string(1, dot_class(*t)), title);
            ++dots;
        } else {
            ch.line(pts, std::string(1, dot_class(*t)), title);
        }
    }
    std::string note = fmt::format("{} trial{} drawn one by one{}: {} as curve{}{}{}.", drawn, drawn == 1 ? "" : "s",
                                   drawn < with.size() ? " (the best by last value)" : "", drawn - dots,
                                   drawn - dots == 1 ? "" : "s",
                                   dots > 0 ? fmt::format(", {} with a single value as dot{}", dots, dots == 1 ? "" : "s")
                                            : std::string(),
                                   drawn < with.size()
                                       ? fmt::format("; the other {} as the grey band (10th to 90th percentile) and its "
                                                     "median line",
                                                     with.size() - drawn)
                                       : std::string());
    if (!c.rungs.empty()) note += " Dashed lines: the resources where the strategy stopped or promoted trials (rungs).";
    return ch.str() + key_html(c) + fmt::format("<p class=\"note\">{}</p>", note);
}

// Which worker ran what, when: idle time is the grey left between the bars.
inline std::string timeline(const Context& c) {
    std::size_t workers = c.result.setup().max_parallel_jobs, segments = 0;
    double end = c.cost.wall_seconds;
    for (const auto& t : c.result.trials())
        for (const auto& g : t.segments) {
            workers = std::max(workers, g.worker + 1);
            end = std::max(end, g.end - c.t0);
            ++segments;
        }
    if (segments == 0) return "<p class=\"note\">No trial ran.</p>";
    const double row = std::clamp(260.0 / static_cast<double>(workers), 3.0, 24.0);
    Axis xa{0.0, end > 0 ? end : 1.0, false};
    Chart ch(wide, 60 + row * static_cast<double>(workers), "trials per worker over time", 110);
    ch.axes(xa.ticks(), {}, "seconds since start", "");
    const auto yw = [&](std::size_t w, double f) { return 1.0 - (static_cast<double>(w) + f) / static_cast<double>(workers); };
    std::vector<double> busy(workers, 0.0);
    struct Bar {
        double x0, x1;
        char cls;
        std::string title;
    };
    std::vector<std::vector<Bar>> bars(workers);
    const bool merge = segments > 2000;  // beyond that, bars narrower than a pixel are merged
    for (const auto& t : c.result.trials())
        for (const auto& g : t.segments) {
            busy[g.worker] += g.end - g.start;
            bars[g.worker].push_back({xa.at(g.start - c.t0), xa.at(g.end - c.t0), status_class(t.status),
                                      merge ? std::string()
                                            : fmt::format("trial {} ({}), {:.2f}s to {:.2f}s", t.id, to_string(t.status),
                                                          g.start - c.t0, g.end - c.t0)});
        }
    const double pixel = 1.0 / (wide - 110.0);
    for (std::size_t w = 0; w < workers; ++w) {
        ch.rect(0, yw(w, 0.9), 1, yw(w, 0.1), "idle");
        if (row >= 9)
            ch.text(106, ch.y(yw(w, 0.5)) + 4,
                    fmt::format("worker {} \u00b7 {:.0f}%", w, end > 0 ? 100.0 * busy[w] / end : 0.0), "end");
        auto& list = bars[w];
        std::sort(list.begin(), list.end(), [](const Bar& a, const Bar& b) { return a.x0 < b.x0; });
        std::vector<Bar> kept;
        for (auto& b : list) {
            if (merge && !kept.empty() && kept.back().cls == b.cls && b.x0 - kept.back().x1 < pixel)
                kept.back().x1 = std::max(kept.back().x1, b.x1);
            else
                kept.push_back(std::move(b));
        }
        for (const auto& b : kept) ch.rect(b.x0, yw(w, 0.9), b.x1, yw(w, 0.1), std::string(1, b.cls), b.title);
    }
    // The bars are the time a worker held a trial (its wait for resources included); utilisation is
    // the training time over the run's wall time (no waits; for a resumed run, no gap between its
    // sessions), so the two are said apart, each with the numbers it is made of.
    double held = 0.0;
    for (const double b : busy) held += b;
    const double capacity = end * static_cast<double>(workers);
    return ch.str() + key_html(c) +
           fmt::format("<p class=\"note\">One row per worker, with its share of the time shown held by a trial "
                       "(training, or waiting for its resources); grey is idle. {} of {} worker-seconds held ({:.0f}%). "
                       "Utilisation: {} worker-seconds of training over {} ({:.0f}%).{}</p>",
                       num(held, 4), num(capacity, 4), capacity > 0 ? 100.0 * held / capacity : 0.0,
                       num(c.cost.busy_seconds, 4),
                       same_capacity(c.cost, c.result.setup().max_parallel_jobs)
                           ? fmt::format("{} x {} s of wall time", c.result.setup().max_parallel_jobs,
                                         num(c.cost.wall_seconds, 4))
                           : fmt::format("{} worker-seconds (each session's workers x its wall time)",
                                         num(c.cost.worker_seconds, 4)),
                       100.0 * c.cost.utilisation, merge ? " Adjacent bars narrower than a pixel are merged." : "");
}

// The objective against each tuned hyperparameter, on the parameter's own scale.
inline std::string parameters(const Context& c) {
    if (c.tuned.empty() || c.scored.empty()) return "<p class=\"note\">No trial produced a value.</p>";
    std::vector<double> values;
    std::vector<const TrialRecord*> done, stopped;
    for (auto* t : c.scored) {
        values.push_back(t->objective);
        (t->status == TrialStatus::Completed ? done : stopped).push_back(t);
    }
    // Keep every Completed trial up to the budget, then a thinned share of the others.
    auto keep_done = thin(done.size(), c.options.max_dots);
    auto keep_stopped = thin(stopped.size(), c.options.max_dots - keep_done.size());
    Axis ya = Axis::fit(values);
    std::string out = "<div class=\"grid\">";
    for (std::size_t i : c.tuned) {
        const ParameterSpec& p = c.layout->parameter(i);
        std::string_view scale = p.kind == ParameterKind::Categorical ? "categories"
                                 : p.scaling == Scaling::Logarithmic  ? "log scale"
                                 : p.scaling == Scaling::ReverseLogarithmic ? "reverse-log scale"
                                                                            : "linear";
        // A long name is cut so that the scale still shows (2 bytes spare for the ellipsis's UTF-8);
        // the whole name is the title's tooltip.
        auto suffix = fmt::format(" ({})", scale);
        auto fits = chars_in(third - 62.0, true);
        Chart ch(third, 250, clip(p.name, fits > suffix.size() + 6 ? fits - suffix.size() - 2 : 4) + suffix, 56.0, 24.0,
                 p.name + suffix);
        if (p.kind == ParameterKind::Categorical)
            for (std::size_t k = 0; k < p.categories.size(); k += 2) {
                double n = static_cast<double>(p.categories.size());
                ch.rect(static_cast<double>(k) / n, 0, static_cast<double>(k + 1) / n, 1, "cat");
            }
        ch.axes(parameter_ticks(p), ya.ticks(), p.name, c.metric());
        std::vector<std::pair<char, Point>> pts;
        auto add = [&](const std::vector<const TrialRecord*>& ts, const std::vector<std::size_t>& keep) {
            for (auto k : keep)
                pts.push_back({dot_class(*ts[k]),
                               {parameter_at(p, ts[k]->config.value(i)) + jitter(p, ts[k]->id), ya.at(ts[k]->objective)}});
        };
        add(stopped, keep_stopped);
        add(done, keep_done);
        class_dots(ch, pts);
        if (c.ranked.empty()) {  // nothing feasible: no best to circle
            out += ch.str();
            continue;
        }
        const auto* b = c.ranked.front();
        ch.raw(fmt::format("<circle class=\"best\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"6\"><title>best: trial {}, {} = "
                           "{}</title></circle>",
                           ch.x(parameter_at(p, b->config.value(i)) + jitter(p, b->id)), ch.y(ya.at(b->objective)), b->id,
                           esc(p.name), value_text(b->config.value(i))));
        out += ch.str();
    }
    std::size_t shown = keep_done.size() + keep_stopped.size();
    return out + "</div>" + key_html(c) +
           fmt::format("<p class=\"note\">Circled: the best trial. {}{}</p>",
                       shown < c.scored.size() ? fmt::format("{} of {} trials shown (all completed ones first). ", shown,
                                                             c.scored.size())
                                               : std::string(),
                       c.result.count(TrialStatus::Failed) > 0
                           ? fmt::format("{} failed trials have no value.", c.result.count(TrialStatus::Failed))
                           : std::string());
}

// The top trials as lines across one vertical axis per parameter, plus the objective.
inline std::string parallel(const Context& c) {
    if (c.tuned.empty() || c.ranked.empty()) return c.no_best_note();
    const auto& o = c.options;
    std::size_t top = static_cast<std::size_t>(std::ceil(o.top_fraction * static_cast<double>(c.ranked.size())));
    top = std::min(std::clamp(top, o.top_min, o.top_max), c.ranked.size());
    std::vector<double> values;
    for (std::size_t k = 0; k < top; ++k) values.push_back(c.ranked[k]->objective);
    Axis ya = Axis::fit(values);
    const std::size_t axes = c.tuned.size() + 1;
    Chart ch(wide, 330, fmt::format("the top {} of {} trials (darker is better)", top, c.ranked.size()), 14, 48);
    // Axes evenly spaced, inset so that the centred labels of the outer ones fit.
    auto ax = [&](std::size_t a) {
        return axes == 1 ? 0.5 : 0.05 + 0.9 * static_cast<double>(a) / static_cast<double>(axes - 1);
    };
    auto axis = [&](std::size_t a, const std::string& name, const std::vector<Tick>& ticks) {
        double px = ch.x(ax(a));
        ch.raw(fmt::format("<path class=\"ax\" d=\"M{0:.1f} {1:.1f}V{2:.1f}\"/>", px, ch.y(0), ch.y(1)));
        ch.raw(fmt::format("<text class=\"ttl halo\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}<title>{}"
                           "</title></text>",
                           px, ch.y(1) - 8, esc(clip(name, axes > 8 ? 12 : 18)), esc(name)));
        // Drawn over the trial lines with a white halo, so that the lines do not cross them out.
        for (auto k : thin(ticks.size(), 9)) ch.text(px + 3, ch.y(ticks[k].at) + 3, ticks[k].label, "start", "halo");
    };
    for (std::size_t k = top; k-- > 0;) {
        const auto* t = c.ranked[k];
        std::vector<Point> pts;
        for (std::size_t a = 0; a < c.tuned.size(); ++a) {
            const auto& p = c.layout->parameter(c.tuned[a]);
            pts.push_back({ax(a), parameter_at(p, t->config.value(c.tuned[a]))});
        }
        pts.push_back({ax(axes - 1), ya.at(t->objective)});
        double light = top > 1 ? 25.0 + 50.0 * static_cast<double>(k) / static_cast<double>(top - 1) : 25.0;
        ch.line(pts, "pc", fmt::format("trial {}: {} = {}", t->id, c.metric(), num(t->objective, 6)),
                fmt::format("stroke:hsl(212,60%,{:.0f}%);stroke-width:{}", light, k == 0 ? 2.5 : 1.2));
    }
    for (std::size_t a = 0; a < c.tuned.size(); ++a) {
        const auto& p = c.layout->parameter(c.tuned[a]);
        axis(a, p.name, parameter_ticks(p));
    }
    axis(axes - 1, c.metric(), ya.ticks());
    return ch.str() + "<p class=\"note\">Each line is one trial, among the " +
           std::string(c.ranked.front()->status == TrialStatus::Completed ? "completed ones" : "trials with a value") +
           "; hover a line for its id.</p>";
}

inline std::string importance(const Context& c) {
    auto imp = parameter_importance(c.result);
    if (imp.empty()) return "<p class=\"note\">Needs at least 3 trials completed at full resource.</p>";
    double explained = 0.0;
    std::string h = "<table>";
    for (const auto& p : imp) {
        if (p.share > 0.0) explained += p.first_order;  // those that explain more than chance would
        h += fmt::format("<tr><td>{}<td style=\"width:420px\"><div class=\"bar\" style=\"width:{:.1f}%\"></div><td>{:.0f}%",
                         esc(p.name), 100.0 * p.share, 100.0 * p.share);
    }
    return h + fmt::format("</table><p class=\"note\">Each parameter's share of the variance of the objective "
                           "that it explains on its own (binned first-order decomposition over the {} completed trials, "
                           "corrected for chance; see importance.hpp). {} First order only, and coarse with few "
                           "trials.</p>",
                           c.result.count(TrialStatus::Completed),
                           explained == 0.0 ? std::string("No parameter explains more of it than chance would: the objective "
                                                          "is flat, or the trials are too few to tell.")
                           : explained <= 1.0 ? fmt::format("Together they explain {:.0f}% of it; the rest is interactions "
                                                          "and noise.", 100.0 * explained)
                                            : std::string("Their separate estimates overlap (few trials, or parameters "
                                                          "that varied together)."));
}

// A run with several objectives: each pair of objectives as a scatter of the completed trials
// (grey: breaks a constraint), the Pareto front drawn over it, and a table of the front.
inline std::string front(const Context& c) {
    const auto& r = c.result;
    const auto objectives = r.objectives();
    const auto names = r.metric_names();
    const auto members = r.pareto_front();
    std::vector<const TrialRecord*> done;
    for (const auto& t : r.trials())
        if (t.status == TrialStatus::Completed && t.values.size() >= objectives.size()) done.push_back(&t);
    if (done.empty()) return "<p class=\"note\">No trial completed with a value of every objective.</p>";
    auto label = [&](std::size_t i) {
        return fmt::format("{} ({})", objectives[i].name, objectives[i].direction == Direction::Maximize ? "max" : "min");
    };
    std::vector<std::pair<std::size_t, std::size_t>> pairs;  // (y, x) objective indices
    for (std::size_t a = 0; a < objectives.size(); ++a)
        for (std::size_t b = a + 1; b < objectives.size(); ++b) pairs.emplace_back(a, b);
    const std::size_t shown_pairs = std::min<std::size_t>(pairs.size(), 6);
    const double width = shown_pairs == 1 ? wide : third;
    std::string out = "<div class=\"grid\">";
    for (std::size_t k = 0; k < shown_pairs; ++k) {
        // Named copies: a lambda may not capture a structured binding before clang 16.
        const std::size_t yi = pairs[k].first, xi = pairs[k].second;
        std::vector<double> xs, ys;
        for (auto* t : done) {
            xs.push_back(t->values[xi]);
            ys.push_back(t->values[yi]);
        }
        const Axis xa = Axis::fit(xs), ya = Axis::fit(ys);
        Chart ch(width, shown_pairs == 1 ? 380 : 300, fmt::format("{} against {}", objectives[yi].name, objectives[xi].name));
        ch.axes(xa.ticks(), ya.ticks(), label(xi), label(yi));
        std::vector<Point> feasible, infeasible;
        for (auto* t : done)
            (t->feasible ? feasible : infeasible).push_back({xa.at(t->values[xi]), ya.at(t->values[yi])});
        ch.dots(infeasible, "I");
        ch.dots(feasible, "C");
        std::vector<const TrialRecord*> on;
        for (const auto& m : members) on.push_back(&m);
        std::sort(on.begin(), on.end(), [&](auto* a, auto* b) { return a->values[xi] < b->values[xi]; });
        if (objectives.size() == 2 && on.size() > 1) {
            // The front as a staircase, the best value of one objective reachable at each value of
            // the other: between two members it holds the value of the one that covers that stretch
            // (the left one when x is minimised, the right one when maximised).
            const bool x_up = objectives[xi].direction == Direction::Maximize;
            std::vector<Point> steps;
            for (std::size_t i = 0; i < on.size(); ++i) {
                const Point p{xa.at(on[i]->values[xi]), ya.at(on[i]->values[yi])};
                if (i > 0) steps.push_back(x_up ? Point{steps.back().x, p.y} : Point{p.x, steps.back().y});
                steps.push_back(p);
            }
            ch.line(steps, "best", "the Pareto front");
        }
        for (auto* m : on)
            ch.marker({xa.at(m->values[xi]), ya.at(m->values[yi])}, "P",
                      fmt::format("trial {}: {} = {}, {} = {}", m->id, names[yi], num(m->values[yi], 6), names[xi],
                                  num(m->values[xi], 6)));
        out += ch.str();
    }
    out += "</div>";
    std::size_t infeasible = 0;
    for (auto* t : done) infeasible += t->feasible ? 0 : 1;
    out += fmt::format("<p class=\"note\">{} of {} completed trials are on the Pareto front (black): no other feasible "
                       "trial is at least as good on every objective and better on one.{}{}</p>",
                       members.size(), done.size(),
                       infeasible ? fmt::format(" Purple dots ({}) break a constraint.", infeasible) : std::string(),
                       objectives.size() > 2 ? " With more than two objectives each chart is a projection: a front "
                                               "member may look dominated in one of them."
                                             : "");
    std::string h = "<div class=\"scroll\"><table id=\"front-table\"><thead><tr><th>trial";
    for (const auto& n : names) h += "<th>" + esc(n);
    if (c.layout)
        for (std::size_t i = 0; i < c.layout->size(); ++i) h += "<th>" + esc(c.layout->name(i));
    h += "</thead><tbody>";
    for (const auto& m : members) {
        h += fmt::format("<tr><td>{}", m.id);
        for (double v : m.values) h += "<td>" + num(v, 6);
        for (std::size_t i = 0; i < m.config.size(); ++i) h += "<td>" + value_text(m.config.value(i));
        h += "\n";
    }
    return out + h + "</tbody></table></div>";
}

// Every trial, compactly (optional end tags omitted): what it reached and why first, then its
// configuration and times.
inline std::string table(const Context& c) {
    const auto& r = c.result;
    if (r.trials().empty()) return "<p class=\"note\">No trials.</p>";
    // With several objectives or constraints, each metric's final value after the first's: the one
    // a trial breaks a constraint on is read here, and the table sorts on any of them.
    const std::vector<std::string> metrics = r.metric_names();
    std::string h = fmt::format("<div class=\"scroll\"><table id=\"trials\"><thead><tr><th>trial<th>status<th>{}",
                                esc(c.metric()));
    for (std::size_t j = 1; j < metrics.size(); ++j) h += "<th>" + esc(metrics[j]);
    h += "<th>resource<th>decisions and failures";
    if (c.layout)
        for (std::size_t i = 0; i < c.layout->size(); ++i) h += "<th>" + esc(c.layout->name(i));
    h += "<th>elapsed s<th>billable s<th>retries</thead><tbody>";
    for (const auto& t : r.trials()) {
        // Only a cell with text is made wide: an empty column must not push the table into a scroll.
        bool why = !t.decisions.empty() || !t.failure_reason.empty();
        // Numbers shown to 6 digits; the objective sorted on exactly (data-v: the shortest text that
        // reads back as it), the rest on what is shown (an exact value per cell made the table of
        // 10,000 trials 38% larger).
        h += fmt::format("<tr class={}><td>{}<td>{}{}<td{}>{}", status_class(t.status), t.id, to_string(t.status),
                         t.has_objective() && !t.feasible ? " (breaks a constraint)" : "",
                         std::isfinite(t.objective) ? fmt::format(" data-v=\"{}\"", t.objective) : std::string(),
                         num(t.objective, 6));
        for (std::size_t j = 1; j < metrics.size(); ++j)
            h += "<td>" + (t.values.size() == metrics.size() ? num(t.values[j], 6) : std::string());
        h += fmt::format("<td>{}<td{}>", t.resource_used, why ? " class=why" : "");
        for (std::size_t k = 0; k < t.decisions.size(); ++k) h += (k ? "<br>" : "") + esc(r.describe(t.decisions[k]));
        if (!t.failure_reason.empty()) h += (t.decisions.empty() ? "failed: " : "<br>failed: ") + esc(t.failure_reason);
        for (std::size_t i = 0; i < t.config.size(); ++i) h += "<td>" + value_text(t.config.value(i));
        h += fmt::format("<td>{}<td>{}<td>{}\n", num(t.elapsed_seconds, 6), num(t.billable_seconds, 6), t.retries);
    }
    return h + "</tbody></table></div><p class=\"note\">Click a column header to sort.</p>";
}

}  // namespace hypertune::detail::report
