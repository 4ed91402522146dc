// SPDX-License-Identifier: MIT
#pragma once
// The report's SVG primitives: escaping and number text, axes and ticks, and Chart (lines, dots,
// bands and labels in one <svg>).

#include <hypertune/report_options.hpp>
#include <hypertune/detail/file.hpp>
#include <hypertune/detail/utf8.hpp>
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

// Text for HTML and SVG: markup characters escaped, and bytes that are not well-formed UTF-8 (a
// failure reason quoting a trainer's Latin-1 stderr) replaced by U+FFFD, as the CSV and JSON
// writers do, since the page declares UTF-8.
[[nodiscard]] inline std::string esc(std::string_view text) {
    const std::string s = valid_utf8(text);
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

// A tick's label: num() with the exponent as short as it reads (1e-5, 1.5e308, not 1e-05,
// 1.5e+308), so that the labels left of a chart fit its margin.
[[nodiscard]] inline std::string tick_label(double v, int digits) {
    std::string s = num(v, digits);
    const auto e = s.find('e');
    if (e == std::string::npos) return s;
    std::size_t digit = e + 1;
    if (digit < s.size() && s[digit] == '+') s.erase(digit, 1);
    else if (digit < s.size() && s[digit] == '-') ++digit;
    while (digit + 1 < s.size() && s[digit] == '0') s.erase(digit, 1);
    return s;
}

// Half of b - a, which does not overflow where b - a would (values of either sign near 1e308).
[[nodiscard]] inline double half_span(double a, double b) noexcept { return b / 2.0 - a / 2.0; }

// A numeric axis over [lo, hi], linear or log10. Differences of values are taken in halves
// (half_span), so objectives near the largest doubles still give finite coordinates.
struct Axis {
    static constexpr int max_ticks = 64;
    double lo = 0.0, hi = 1.0;
    bool log = false;
    bool integral = false;  ///< whole numbers only (trial numbers): no tick between two of them

    [[nodiscard]] double at(double v) const {
        double a = log ? std::log10(lo) : lo, b = log ? std::log10(hi) : hi, x = log ? std::log10(v) : v;
        return b > a ? half_span(a, x) / half_span(a, b) : 0.5;
    }

    [[nodiscard]] std::vector<double> tick_values() const {
        std::vector<double> v;
        if (log) {
            // A tick per decade, or per 2, 3... decades over a long range, at most 8 (16 decades put
            // their labels on top of each other, 600 a black bar under the axis).
            const double e0 = std::ceil(std::log10(lo) - 1e-9), e1 = std::floor(std::log10(hi) + 1e-9);
            const double every = std::max(1.0, std::ceil((e1 - e0 + 1) / 8));
            for (double e = std::ceil(e0 / every) * every; e <= e1; e += every) v.push_back(std::pow(10.0, e));
            if (v.size() >= 3) return v;
            v.clear();
            for (double e = std::floor(std::log10(lo)); e <= std::ceil(std::log10(hi)); ++e)
                for (double m : {1.0, 2.0, 5.0})
                    if (double x = m * std::pow(10.0, e); x >= lo * (1 - 1e-9) && x <= hi * (1 + 1e-9)) v.push_back(x);
            if (v.size() >= 2) return v;
            return {lo, hi};
        }
        if (!(hi > lo)) return {lo};
        const double half = half_span(lo, hi);
        double step = std::pow(10.0, std::floor(std::log10(half / 2.5)));
        for (double m : {2.0, 2.5, 2.0})
            if (half / step > 3.5) step *= m;
        if (integral) step = std::max(step, 1.0);
        // Counted, not accumulated: a step below the doubles' resolution at lo (values a few ulps
        // apart) would leave x where it is. Finite: past the largest double, x would stay at infinity.
        const double first = std::ceil(lo / step - 1e-9) * step;
        for (int i = 0; i < max_ticks; ++i) {
            // In halves: i x step passes the largest double on an axis across it (-1.7e308 to
            // 1.5e308 had no tick above 0), a tick within it never does.
            const double x = 2.0 * (first / 2.0 + static_cast<double>(i) * (step / 2.0));
            if (!std::isfinite(x) || x > hi + step * 1e-9 || (!v.empty() && !(x > v.back()))) break;
            v.push_back(std::abs(x) < step * 1e-9 ? 0.0 : x);
        }
        if (v.empty()) v.push_back(lo);
        return v;
    }

    [[nodiscard]] std::vector<Tick> ticks() const {
        const std::vector<double> values = tick_values();
        const int digits = log ? 4 : tick_digits(values);
        std::vector<Tick> t;
        for (double x : values) t.push_back({at(x), tick_label(x, digits)});
        return t;
    }

    // Significant digits for the labels of ticks `values` (increasing): at least 4, and enough that
    // neighbours read differently (2.30212 and 2.30214, 100000 and 100002), at most 15.
    [[nodiscard]] static int tick_digits(const std::vector<double>& values) {
        double gap = std::numeric_limits<double>::infinity(), magnitude = 0.0;
        for (std::size_t i = 0; i < values.size(); ++i) {
            magnitude = std::max(magnitude, std::abs(values[i]));
            if (i > 0) gap = std::min(gap, 2.0 * half_span(values[i - 1], values[i]));
        }
        if (!(gap > 0.0) || !std::isfinite(gap) || !(magnitude > 0.0)) return 4;
        return std::clamp(static_cast<int>(std::ceil(std::log10(magnitude / gap))) + 1, 4, 15);
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
            if (half_span(qlo, qhi) < 0.2 * half_span(lo, hi)) {
                lo = std::max(lo, qlo - 0.5 * half_span(qlo, qhi));
                hi = std::min(hi, qhi + 0.5 * half_span(qlo, qhi));
            }
        }
        constexpr double largest = std::numeric_limits<double>::max();
        if (log) return {lo, hi > lo ? hi : std::min(lo * 10.0, largest), true};
        // Values equal to 12 digits (0.3 and 0.1 + 0.2) are drawn as equal: a span of a few ulps has
        // no ticks to show.
        const bool spread = half_span(lo, hi) > 0.5e-12 * std::max(std::abs(lo), std::abs(hi));
        double pad = spread ? 0.1 * half_span(lo, hi) : std::max(std::abs(lo) * 0.1, 1e-9);
        return {std::max(lo - pad, -largest), std::min(hi + pad, largest), false};
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
    const int digits = p.scaling == Scaling::Logarithmic ? 4 : Axis::tick_digits(values);
    for (double x : values) {
        if (p.kind != ParameterKind::Integer) {
            t.push_back({p.to_unit(x), tick_label(x, digits)});
        } else if (std::abs(x - std::round(x)) < 1e-9 && x >= p.min && x <= p.max) {
            t.push_back({p.to_unit(static_cast<std::int64_t>(std::llround(x))), tick_label(x, digits)});
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
        for (const auto& t : xt) {
            // A label centred on a tick near the chart's edge would be cut ("1e+09" at the right end
            // of a narrow chart): it is aligned with the edge instead.
            const double at = x(t.at), half_width = 3.1 * static_cast<double>(t.label.size());
            const bool right = at + half_width > w_ - 1, left = at - half_width < 1;
            svg_ += fmt::format("<path class=\"gl\" d=\"M{0:.1f} {1:.1f}V{2:.1f}\"/><text x=\"{3:.1f}\" y=\"{4:.1f}\" "
                                "text-anchor=\"{5}\">{6}</text>",
                                at, y(0), y(1), right ? w_ - 1 : left ? 1.0 : at, y(0) + 13,
                                right ? "end" : left ? "start" : "middle", esc(t.label));
        }
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

}  // namespace hypertune::detail::report
