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

#include <hypertune/detail/file.hpp>
#include <hypertune/importance.hpp>
#include <hypertune/result.hpp>

#include <fmt/format.h>

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

namespace hypertune {

struct ReportOptions {
    std::string title;                      ///< empty: "<strategy>: <metric>"
    std::size_t max_curves = 150;           ///< curves drawn one by one (the best ones); the rest as a band
    std::size_t max_points_per_curve = 60;  ///< points kept per drawn curve (first and last always)
    std::size_t max_dots = 1500;            ///< points per scatter plot (Completed trials first)
    double top_fraction = 0.2;              ///< parallel coordinates: this share of the scored trials...
    std::size_t top_min = 10, top_max = 100;  ///< ...but at least / at most this many
};

namespace detail::report {

[[nodiscard]] inline std::string esc(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

// Shortened for an axis label; the full text goes in a <title>.
[[nodiscard]] inline std::string clip(std::string_view s, std::size_t n = 18) {
    if (s.size() <= n) return std::string(s);
    std::size_t cut = n - 1;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
    return std::string(s.substr(0, cut)) + "\u2026";
}

[[nodiscard]] inline std::string num(double v, int digits = 4) {
    return std::isfinite(v) ? fmt::format("{:.{}g}", v, digits) : std::string();
}

// At most `keep` of the indices 0..n-1, evenly spread, first and last included.
[[nodiscard]] inline std::vector<std::size_t> thin(std::size_t n, std::size_t keep) {
    std::vector<std::size_t> idx;
    if (n == 0 || keep == 0) return idx;
    if (n <= keep || keep == 1) {
        for (std::size_t i = 0; i < (keep == 1 ? 1 : n); ++i) idx.push_back(i);
        return idx;
    }
    for (std::size_t k = 0; k < keep; ++k) idx.push_back(k * (n - 1) / (keep - 1));
    return idx;
}

// A hyperparameter value for people: reals to `digits` significant digits.
[[nodiscard]] inline std::string value_text(const Value& v, int digits = 6) {
    return std::holds_alternative<double>(v) ? num(std::get<double>(v), digits) : esc(format_value(v));
}

// One CSS class letter per outcome: C(ompleted at full resource), S(topped), F(ailed), R(unning/paused).
[[nodiscard]] inline char status_class(TrialStatus s) noexcept {
    switch (s) {
        case TrialStatus::Completed: return 'C';
        case TrialStatus::Stopped: return 'S';
        case TrialStatus::Failed: return 'F';
        default: return 'R';
    }
}

struct Tick {
    double at;  ///< 0..1 along the axis
    std::string label;
};

// A numeric axis over [lo, hi], linear or log10.
struct Axis {
    double lo = 0.0, hi = 1.0;
    bool log = false;

    [[nodiscard]] double at(double v) const {
        double a = log ? std::log10(lo) : lo, b = log ? std::log10(hi) : hi, x = log ? std::log10(v) : v;
        return b > a ? (x - a) / (b - a) : 0.5;
    }

    [[nodiscard]] std::vector<double> tick_values() const {
        std::vector<double> v;
        if (log) {
            for (double e = std::ceil(std::log10(lo) - 1e-9); e <= std::log10(hi) + 1e-9; ++e) v.push_back(std::pow(10.0, e));
            if (v.size() >= 3) return v;
            v.clear();
            for (double e = std::floor(std::log10(lo)); e <= std::ceil(std::log10(hi)); ++e)
                for (double m : {1.0, 2.0, 5.0})
                    if (double x = m * std::pow(10.0, e); x >= lo * (1 - 1e-9) && x <= hi * (1 + 1e-9)) v.push_back(x);
            if (v.size() >= 2) return v;
            return {lo, hi};
        }
        if (!(hi > lo)) return {lo};
        double step = std::pow(10.0, std::floor(std::log10((hi - lo) / 5.0)));
        for (double m : {2.0, 2.5, 2.0})
            if ((hi - lo) / step > 7.0) step *= m;
        for (double x = std::ceil(lo / step - 1e-9) * step; x <= hi + step * 1e-9; x += step)
            v.push_back(std::abs(x) < step * 1e-9 ? 0.0 : x);
        return v;
    }

    [[nodiscard]] std::vector<Tick> ticks() const {
        std::vector<Tick> t;
        for (double x : tick_values()) t.push_back({at(x), num(x)});
        return t;
    }

    // The range of `values` with a margin; when a few outliers would squash the rest, the 2nd..98th
    // percentile (points beyond it are drawn on the edge).
    [[nodiscard]] static Axis fit(std::vector<double> values, bool log = false) {
        std::erase_if(values, [&](double x) { return !std::isfinite(x) || (log && x <= 0.0); });
        if (values.empty()) return {0.0, 1.0, false};
        std::sort(values.begin(), values.end());
        double lo = values.front(), hi = values.back();
        if (values.size() >= 20) {
            double qlo = values[values.size() / 50], qhi = values[values.size() - 1 - values.size() / 50];
            if ((qhi - qlo) < 0.2 * (hi - lo)) {
                lo = std::max(lo, qlo - 0.25 * (qhi - qlo));
                hi = std::min(hi, qhi + 0.25 * (qhi - qlo));
            }
        }
        if (log) return {lo, hi > lo ? hi : lo * 10.0, true};
        double pad = hi > lo ? 0.05 * (hi - lo) : std::max(std::abs(lo) * 0.1, 1e-9);
        return {lo - pad, hi + pad, false};
    }
};

// Where a parameter's value sits on its axis: the parameter's own to_unit, so a Logarithmic
// parameter gets a log axis, a ReverseLogarithmic one its own, and each category a band.
[[nodiscard]] inline double parameter_at(const ParameterSpec& p, const Value& v) { return p.to_unit(v); }

[[nodiscard]] inline std::vector<Tick> parameter_ticks(const ParameterSpec& p) {
    std::vector<Tick> t;
    if (p.kind == ParameterKind::Categorical) {
        for (const auto& c : p.categories) t.push_back({p.to_unit(c), clip(c, 14)});
        return t;
    }
    std::vector<double> values;
    if (p.scaling == Scaling::ReverseLogarithmic) {
        values.push_back(p.min);
        for (int k = 1; k < 16; ++k)
            if (double x = 1.0 - std::pow(10.0, -k); x > p.min && x < p.max) values.push_back(x);
        values.push_back(p.max);
    } else {
        values = Axis{p.min, p.max, p.scaling == Scaling::Logarithmic}.tick_values();
    }
    for (double x : values) {
        if (p.kind != ParameterKind::Integer) {
            t.push_back({p.to_unit(x), num(x)});
        } else if (std::abs(x - std::round(x)) < 1e-9 && x >= p.min && x <= p.max) {
            t.push_back({p.to_unit(static_cast<std::int64_t>(std::llround(x))), num(x)});
        }
    }
    return t;
}

// A category's band is wide: spread its points across it (deterministically) so they do not stack.
[[nodiscard]] inline double jitter(const ParameterSpec& p, TrialId id) {
    if (p.kind != ParameterKind::Categorical) return 0.0;
    double h = static_cast<double>((id * 2654435761u) % 1000) / 1000.0 - 0.5;
    return 0.6 * h / static_cast<double>(p.categories.size());
}

// Chart widths that tile the 1140-pixel page: one, two or three in a row (10-pixel gaps).
inline constexpr double wide = 1140, half = 565, third = 373;

struct Point {
    double x, y;  ///< 0..1 in the plot area
};

// How many characters of text fit in `pixels`: a generous average width per character, for the
// 12-pixel bold of titles and the 10.5-pixel text of labels.
[[nodiscard]] inline std::size_t chars_in(double pixels, bool title = false) {
    return static_cast<std::size_t>(std::max(4.0, pixels / (title ? 7.2 : 6.2)));
}

// One SVG chart: a plot area inside margins, drawn in unit coordinates. A title too long for the
// chart is cut with an ellipsis; `full_title` (the title itself by default) is its tooltip then.
class Chart {
public:
    Chart(double width, double height, std::string_view title, double left = 56.0, double top = 24.0,
          std::string_view full_title = {})
        : w_(width), h_(height), l_(left), t_(top) {
        std::string shown = clip(title, chars_in(w_ - l_ - 6.0, true));
        if (full_title.empty()) full_title = title;
        svg_ = fmt::format("<svg width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\"><text class=\"ttl\" x=\"{2}\" "
                           "y=\"15\">{3}{4}</text>",
                           w_, h_, l_, esc(shown),
                           shown == full_title ? std::string() : fmt::format("<title>{}</title>", esc(full_title)));
    }

    [[nodiscard]] double x(double u) const { return l_ + std::clamp(u, 0.0, 1.0) * (w_ - l_ - r_); }
    [[nodiscard]] double y(double u) const { return h_ - b_ - std::clamp(u, 0.0, 1.0) * (h_ - t_ - b_); }

    void axes(const std::vector<Tick>& xt, const std::vector<Tick>& yt, std::string_view xlabel,
              std::string_view ylabel) {
        for (const auto& t : xt)
            svg_ += fmt::format("<path class=\"gl\" d=\"M{0:.1f} {1:.1f}V{2:.1f}\"/><text x=\"{0:.1f}\" y=\"{3:.1f}\" "
                                "text-anchor=\"middle\">{4}</text>",
                                x(t.at), y(0), y(1), y(0) + 13, esc(t.label));
        for (const auto& t : yt)
            svg_ += fmt::format("<path class=\"gl\" d=\"M{0:.1f} {1:.1f}H{2:.1f}\"/><text x=\"{3:.1f}\" y=\"{4:.1f}\" "
                                "text-anchor=\"end\">{5}</text>",
                                x(0), y(t.at), x(1), x(0) - 4, y(t.at) + 4, esc(t.label));
        svg_ += fmt::format("<rect class=\"ax\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"/>", x(0),
                            y(1), x(1) - x(0), y(0) - y(1));
        svg_ += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>", (x(0) + x(1)) / 2,
                            h_ - 4, esc(clip(xlabel, chars_in(w_))));
        svg_ += fmt::format("<text transform=\"translate(11 {:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
                            (y(0) + y(1)) / 2, esc(ylabel));
    }

    void line(const std::vector<Point>& pts, std::string_view cls, std::string_view title = {},
              std::string_view style = {}) {
        if (pts.empty()) return;
        svg_ += fmt::format("<polyline class=\"{}\"{} points=\"", cls,
                            style.empty() ? std::string() : fmt::format(" style=\"{}\"", style));
        for (const auto& p : pts) svg_ += fmt::format("{:.1f},{:.1f} ", x(p.x), y(p.y));
        svg_ += title.empty() ? std::string("\"/>") : fmt::format("\"><title>{}</title></polyline>", esc(title));
    }

    // One point, as a filled circle in the class's colour (a one-point polyline draws nothing).
    void marker(Point p, std::string_view cls, std::string_view title = {}) {
        svg_ += fmt::format("<circle class=\"{}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.6\"", cls, x(p.x), y(p.y));
        svg_ += title.empty() ? std::string("/>") : fmt::format("><title>{}</title></circle>", esc(title));
    }

    // Many points as one path of zero-length round-capped strokes: ~14 bytes a point.
    void dots(const std::vector<Point>& pts, std::string_view cls) {
        if (pts.empty()) return;
        svg_ += fmt::format("<path class=\"dot {}\" d=\"", cls);
        for (const auto& p : pts) svg_ += fmt::format("M{:.1f} {:.1f}h0", x(p.x), y(p.y));
        svg_ += "\"/>";
    }

    void rect(double x0, double y0, double x1, double y1, std::string_view cls, std::string_view title = {}) {
        svg_ += fmt::format("<rect class=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"", cls,
                            x(x0), y(y1), std::max(x(x1) - x(x0), 0.6), std::max(y(y0) - y(y1), 0.6));
        svg_ += title.empty() ? std::string("/>") : fmt::format("><title>{}</title></rect>", esc(title));
    }

    void text(double px, double py, std::string_view s, std::string_view anchor = "start", std::string_view cls = {}) {
        svg_ += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\"{}>{}</text>", px, py, anchor,
                            cls.empty() ? std::string() : fmt::format(" class=\"{}\"", cls), esc(s));
    }

    void raw(std::string_view s) { svg_ += s; }
    [[nodiscard]] std::string str() const { return svg_ + "</svg>"; }

private:
    double w_, h_, l_, t_, r_ = 14.0, b_ = 34.0;
    std::string svg_;
};

inline constexpr std::string_view style = R"(
body{font:14px/1.45 system-ui,sans-serif;margin:20px auto;max-width:1140px;color:#222;padding:0 10px}
h1{font-size:21px;margin:0 0 4px}h2{font-size:16px;margin:26px 0 8px;border-bottom:1px solid #ddd}
.grid{display:flex;flex-wrap:wrap;gap:10px}.note{color:#666;font-size:12.5px}.warn{color:#a33}
svg{font-size:10.5px;background:#fff;outline:1px solid #e4e4e4;max-width:100%;height:auto}.ttl{font-weight:600;font-size:12px}
.gl{stroke:#eee}.ax{fill:none;stroke:#aaa}.rung{stroke:#555;stroke-dasharray:4 3}
polyline{fill:none;stroke-width:1.1;stroke-opacity:.75}.dot{fill:none;stroke-width:5;stroke-linecap:round}
.C{stroke:#2b6cb0}.S{stroke:#dd8a2a}.F{stroke:#c53030}.R{stroke:#999}rect.C,circle.C{fill:#2b6cb0}
rect.S,circle.S{fill:#dd8a2a}rect.F,circle.F{fill:#c53030}rect.R,circle.R{fill:#999}circle.C,circle.S,circle.F,circle.R{fill-opacity:.8}
.halo{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}
rect.C,rect.S,rect.F,rect.R{stroke:#fff;stroke-width:.7}
.dot.S{stroke-opacity:.55}.best{stroke:#111;stroke-width:2;fill:none}.band{fill:#bbb;fill-opacity:.45;stroke:none}
.idle{fill:#f1f1f1}.cat{fill:#f6f6f6}.key i{display:inline-block;width:10px;height:10px;margin:0 4px 0 10px}
table{border-collapse:collapse;font-size:12.5px}td,th{padding:2px 7px;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
.kv th{font-weight:500;color:#555}#trials th{cursor:pointer;position:sticky;top:0;background:#f3f3f3}
#trials td:nth-child(n+3){font-variant-numeric:tabular-nums}#trials td.why{min-width:400px;font-size:11.5px}tr.F td:nth-child(2){color:#c53030}tr.S td:nth-child(2){color:#b86e12}
.bar{background:#2b6cb0;height:11px}.scroll{max-height:640px;overflow:auto;border:1px solid #eee}
)";

// Sorts the table on a header click; `#selftest` in the URL sorts every column once (the browser
// test uses it). The data-report attribute says the script ran to the end without an error.
inline constexpr std::string_view script = R"(
(function(){
var t=document.getElementById('trials');
function key(c){var s=c.textContent,n=parseFloat(s);return isNaN(n)?s:n;}
function sort(i,th){
 var b=t.tBodies[0],r=Array.prototype.slice.call(b.rows),d=th.getAttribute('data-dir')==='a'?-1:1;
 th.setAttribute('data-dir',d>0?'a':'d');
 r.sort(function(x,y){var a=key(x.cells[i]),c=key(y.cells[i]);
  if(typeof a!==typeof c)return typeof a==='number'?-1:1;return a<c?-d:a>c?d:0;});
 var f=document.createDocumentFragment();r.forEach(function(x){f.appendChild(x);});b.appendChild(f);}
if(t){var h=Array.prototype.slice.call(t.tHead.rows[0].cells);
 h.forEach(function(th,i){th.title='click to sort';th.onclick=function(){sort(i,th);};});
 if(location.hash==='#selftest')h.forEach(function(th,i){sort(i,th);sort(i,th);});}
document.body.setAttribute('data-report','ok');
})();
)";

// What every section needs, computed once.
struct Context {
    const Result& result;
    const ReportOptions& options;
    CostSummary cost;
    double t0 = 0.0;                                  ///< the run's start (Unix seconds)
    const Config* layout = nullptr;                   ///< any trial's config: the parameters' specs
    std::vector<std::size_t> tuned;                   ///< indices of tuned parameters in a config
    std::vector<const TrialRecord*> scored;           ///< with a value, best first
    std::vector<const TrialRecord*> ranked;           ///< what best() ranks: Completed if any, else scored
    std::vector<Resource> rungs;                      ///< resources where decisions were taken
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
        for (auto* t : scored)
            if (t->status == TrialStatus::Completed) ranked.push_back(t);
        if (ranked.empty()) ranked = scored;
        std::sort(rungs.begin(), rungs.end());
        rungs.erase(std::unique(rungs.begin(), rungs.end()), rungs.end());
        std::erase_if(rungs, [](Resource x) { return x <= 0; });
    }

    [[nodiscard]] bool maximize() const { return result.setup().direction == Direction::Maximize; }
    [[nodiscard]] bool better(double a, double b) const { return maximize() ? a > b : a < b; }
    [[nodiscard]] const std::string& metric() const { return result.setup().metric; }
};

inline std::string key_html() {
    return "<p class=\"note key\"><i style=\"background:#2b6cb0\"></i>Completed (full resource)"
           "<i style=\"background:#dd8a2a\"></i>Stopped early<i style=\"background:#c53030\"></i>Failed</p>";
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
    row("trials", fmt::format("{} in all: {} completed, {} stopped early, {} failed{}", r.trials().size(),
                              r.count(TrialStatus::Completed), r.count(TrialStatus::Stopped), r.count(TrialStatus::Failed),
                              r.count(TrialStatus::Running) + r.count(TrialStatus::Paused) > 0
                                  ? fmt::format(", {} unfinished", r.count(TrialStatus::Running) + r.count(TrialStatus::Paused))
                                  : std::string()));
    if (r.has_best()) {
        const auto& b = r.best();
        std::string cfg;
        for (std::size_t i = 0; i < b.config.size(); ++i)
            cfg += fmt::format("{}{} = {}", i ? ", " : "", esc(b.config.name(i)), value_text(b.config.value(i)));
        row("best", fmt::format("<b>{} = {}</b> (trial {}, {}): {}", esc(s.metric), num(b.objective, 6), b.id,
                                to_string(b.status), cfg));
    } else {
        row("best", "none: no trial produced a value");
    }
    const auto& k = c.cost;
    row(fmt::format("billable time ({} instance{} per trial)", s.instances_per_trial, s.instances_per_trial == 1 ? "" : "s"),
        fmt::format("{} with early stopping, {} estimated without{}", human_duration(k.billable_seconds),
                    human_duration(k.billable_seconds_without_early_stopping),
                    k.billable_seconds > 0
                        ? fmt::format(" ({})", times(k.billable_seconds_without_early_stopping / k.billable_seconds,
                                                     "less", "more", "no saving"))
                        : std::string()));
    row("wall time", fmt::format("{} on {} parallel job{} vs {} sequential{}", human_duration(k.wall_seconds),
                                 s.max_parallel_jobs, s.max_parallel_jobs == 1 ? "" : "s",
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
    if (c.ranked.empty()) return "<p class=\"note\">No trial produced a value.</p>";
    const bool completed_only = c.ranked.front()->status == TrialStatus::Completed;
    std::vector<double> values;
    for (auto* t : c.scored) values.push_back(t->objective);
    Axis ya = Axis::fit(values);
    std::string out = "<div class=\"grid\">";
    for (bool by_time : {false, true}) {
        std::vector<const TrialRecord*> order = c.scored;
        auto when = [&](const TrialRecord* t) { return by_time ? t->end_time() - c.t0 : static_cast<double>(t->id); };
        std::stable_sort(order.begin(), order.end(), [&](auto* a, auto* b) { return when(a) < when(b); });
        double xmax = by_time ? std::max(c.cost.wall_seconds, when(order.back())) : static_cast<double>(c.last_id);
        Axis xa{0.0, std::max(xmax, 1e-9), false};
        Chart ch(half, 280, by_time ? "best so far against elapsed time" : "best so far against trial number");
        ch.axes(xa.ticks(), ya.ticks(), by_time ? "seconds since start" : "trial", c.metric());
        std::vector<Point> done, stopped, steps;
        for (auto* t : order) (t->status == TrialStatus::Completed ? done : stopped).push_back({xa.at(when(t)), ya.at(t->objective)});
        auto thinned = [&](const std::vector<Point>& p, std::size_t keep) {
            std::vector<Point> o;
            for (auto i : thin(p.size(), keep)) o.push_back(p[i]);
            return o;
        };
        ch.dots(thinned(stopped, c.options.max_dots / 2), "S");
        ch.dots(thinned(done, c.options.max_dots / 2), "C");
        double best = std::nan("");
        for (auto* t : order) {
            if (completed_only && t->status != TrialStatus::Completed) continue;
            if (std::isfinite(best) && !c.better(t->objective, best)) continue;
            if (std::isfinite(best)) steps.push_back({xa.at(when(t)), ya.at(best)});
            best = t->objective;
            steps.push_back({xa.at(when(t)), ya.at(best)});
        }
        steps.push_back({1.0, ya.at(best)});
        ch.line(steps, "best");
        out += ch.str();
    }
    return out + "</div>" + key_html() +
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
    Axis xa{smin, smax > smin ? smax : smin + 1, c.rungs.size() >= 2 && smin >= 1 && smax / smin >= 8};
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
        for (auto& [x, v] : column) {
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
        if (pts.size() == 1) {
            ch.marker(pts.front(), std::string(1, status_class(t->status)), title);
            ++dots;
        } else {
            ch.line(pts, std::string(1, status_class(t->status)), title);
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
    return ch.str() + key_html() + fmt::format("<p class=\"note\">{}</p>", note);
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
    return ch.str() + key_html() +
           fmt::format("<p class=\"note\">One row per worker (its share of the wall time busy); grey is idle. {} of {} "
                       "worker-seconds busy ({:.0f}%).{}</p>",
                       num(c.cost.busy_seconds, 4), num(end * static_cast<double>(workers), 4),
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
        auto pts = [&](const std::vector<const TrialRecord*>& ts, const std::vector<std::size_t>& keep) {
            std::vector<Point> o;
            for (auto k : keep)
                o.push_back({parameter_at(p, ts[k]->config.value(i)) + jitter(p, ts[k]->id), ya.at(ts[k]->objective)});
            return o;
        };
        ch.dots(pts(stopped, keep_stopped), "S");
        ch.dots(pts(done, keep_done), "C");
        const auto* b = c.ranked.front();
        ch.raw(fmt::format("<circle class=\"best\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"6\"><title>best: trial {}, {} = "
                           "{}</title></circle>",
                           ch.x(parameter_at(p, b->config.value(i)) + jitter(p, b->id)), ch.y(ya.at(b->objective)), b->id,
                           esc(p.name), value_text(b->config.value(i))));
        out += ch.str();
    }
    std::size_t shown = keep_done.size() + keep_stopped.size();
    return out + "</div>" + key_html() +
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
    if (c.tuned.empty() || c.ranked.empty()) return "<p class=\"note\">No trial produced a value.</p>";
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
        explained += p.first_order;
        h += fmt::format("<tr><td>{}<td style=\"width:420px\"><div class=\"bar\" style=\"width:{:.1f}%\"></div><td>{:.0f}%",
                         esc(p.name), 100.0 * p.share, 100.0 * p.share);
    }
    return h + fmt::format("</table><p class=\"note\">Each parameter's share of the variance of the objective "
                           "that it explains on its own (binned first-order decomposition over the {} completed trials, "
                           "corrected for chance; see importance.hpp). {} First order only, and coarse with few "
                           "trials.</p>",
                           c.result.count(TrialStatus::Completed),
                           explained <= 1.0 ? fmt::format("Together they explain {:.0f}% of it; the rest is interactions "
                                                          "and noise.", 100.0 * explained)
                                            : std::string("Their separate estimates overlap (few trials, or parameters "
                                                          "that varied together)."));
}

// Every trial, compactly (optional end tags omitted): what it reached and why first, then its
// configuration and times.
inline std::string table(const Context& c) {
    const auto& r = c.result;
    if (r.trials().empty()) return "<p class=\"note\">No trials.</p>";
    std::string h = fmt::format("<div class=\"scroll\"><table id=\"trials\"><thead><tr><th>trial<th>status<th>{}"
                                "<th>resource<th>decisions and failures",
                                esc(c.metric()));
    if (c.layout)
        for (std::size_t i = 0; i < c.layout->size(); ++i) h += "<th>" + esc(c.layout->name(i));
    h += "<th>elapsed s<th>billable s<th>retries</thead><tbody>";
    for (const auto& t : r.trials()) {
        // Only a cell with text is made wide: an empty column must not push the table into a scroll.
        bool why = !t.decisions.empty() || !t.failure_reason.empty();
        h += fmt::format("<tr class={}><td>{}<td>{}<td>{}<td>{}<td{}>", status_class(t.status), t.id, to_string(t.status),
                         num(t.objective, 6), t.resource_used, why ? " class=why" : "");
        for (std::size_t k = 0; k < t.decisions.size(); ++k) h += (k ? "<br>" : "") + esc(r.describe(t.decisions[k]));
        if (!t.failure_reason.empty()) h += (t.decisions.empty() ? "failed: " : "<br>failed: ") + esc(t.failure_reason);
        for (std::size_t i = 0; i < t.config.size(); ++i) h += "<td>" + value_text(t.config.value(i), 5);
        h += fmt::format("<td>{:.3g}<td>{:.3g}<td>{}\n", t.elapsed_seconds, t.billable_seconds, t.retries);
    }
    return h + "</tbody></table></div><p class=\"note\">Click a column header to sort.</p>";
}

}  // namespace detail::report

/// The report as one self-contained HTML document.
[[nodiscard]] inline std::string render_report(const Result& result, const ReportOptions& options = {}) {
    using namespace detail::report;
    const Context c(result, options);
    const auto& s = result.setup();
    std::string title = options.title.empty() ? fmt::format("{}: {}", s.strategy.empty() ? "tuning" : s.strategy, s.metric)
                                              : options.title;
    std::string h = fmt::format("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{0}</title>"
                                "<style>{1}</style></head><body>\n<h1>{0}</h1><p class=\"note\">hypertune report, run "
                                "started {2}</p>\n",
                                esc(title), style, detail::iso8601(c.t0));
    auto section = [&](std::string_view id, std::string_view heading, const std::string& body) {
        h += fmt::format("<section id=\"{}\"><h2>{}</h2>\n{}\n</section>\n", id, heading, body);
    };
    section("summary", "Summary", summary(c));
    section("progress", "Best so far", best_so_far(c));
    section("curves", "Intermediate values", curves(c));
    section("timeline", "Timeline", timeline(c));
    section("parameters", "Objective against each hyperparameter", parameters(c));
    section("top", "Parallel coordinates of the top trials", parallel(c));
    section("importance", "Parameter importance", importance(c));
    section("table", "All trials", table(c));
    return h + fmt::format("<script>{}</script>\n</body></html>\n", script);
}

/// Writes render_report(result) to `path`; throws IoError when it cannot.
inline void write_report(const Result& result, const std::string& path, const ReportOptions& options = {}) {
    detail::write_whole_file(path, "report file", render_report(result, options));
}

}  // namespace hypertune
