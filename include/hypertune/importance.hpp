// SPDX-License-Identifier: MIT
#pragma once
// Parameter importance: how much of the objective's variation each tuned hyperparameter explains on
// its own, from the trials a run already has (no extra training).
//
// Method: a binned first-order variance decomposition (the correlation ratio, corrected for chance).
//   1. Use the Completed trials with a finite objective: a stopped trial's value was measured at a
//      smaller resource and is not comparable. Fewer than 3 such trials: the result is empty.
//      Infeasible trials (a constraint not met) count: their objective was measured all the same,
//      and what this explains is the objective, not which configurations are feasible.
//   2. Clamp the objective to Tukey's far-out fences [Q1 - 3 IQR, Q3 + 3 IQR], so one diverged trial
//      with a huge loss cannot claim all the variance (ordinary values are left as they are).
//   3. For each tuned parameter, group the trials by its value: a categorical parameter one group
//      per category (its categories have no order, so binning them would merge unrelated ones); an
//      ordered one, one group per value when it takes at most `bins` distinct values (small integer
//      ranges), otherwise `bins` groups of nearly equal count along the parameter's own scale
//      (ParameterSpec::to_unit, so a log-scaled parameter is binned in log space).
//      bins = clamp(floor(sqrt(n)), 2, 10) for n trials.
//   4. first_order = (SSB - (k - 1) * SSW / (n - k)) / SST, clamped to [0, 1]: the share of the
//      variance explained by the group means (SSB between groups, SSW within, SST total, k
//      groups), minus what k groups of pure noise would explain (epsilon-squared). Its p_value is
//      the one-way analysis of variance's: the chance that groups of pure noise differ by as much
//      (F = (SSB / (k - 1)) / (SSW / (n - k)) against Fisher's F distribution).
//   5. A parameter explains more than chance would when its p_value is below 0.05 / (the number of
//      tuned parameters) (Bonferroni: on an objective of pure noise, all parameters stay out in 95%
//      of runs). share = first_order / (sum of first_order over those parameters), 0 for the
//      others: the shares sum to 1, or are all 0. epsilon-squared alone is positive for about half
//      of the parameters of pure noise, which then took all of a share.
// Limits: first order only, so an effect that exists only in interaction (y = x1 * x2 around 0) is
// not seen, and the unexplained rest (1 - sum of first_order) mixes interactions and noise.
// Correlated parameters (as Bayesian or grid search produce) share credit arbitrarily. With tens of
// trials the estimate is coarse. When the objective does not vary, or no parameter explains more
// than chance, every share and first_order is 0 (never NaN).

#include <hypertune/result.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace hypertune {

struct ParameterImportance {
    std::string name;
    double share = 0.0;        ///< of the explained variance; the shares of one result sum to 1 (or are all 0)
    double first_order = 0.0;  ///< fraction of the objective's variance this parameter explains alone
    std::size_t groups = 0;    ///< how many value groups it was measured with
    /// The chance that groups of pure noise explain as much (one-way analysis of variance, F test):
    /// a share is given only below 0.05 / the number of tuned parameters.
    double p_value = 1.0;
};

namespace detail {

// `v` clamped to Tukey's far-out fences (Q1 - 3 IQR, Q3 + 3 IQR); unchanged when the IQR is 0.
[[nodiscard]] inline std::vector<double> clamp_outliers(std::vector<double> v) {
    if (v.size() < 4) return v;
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    auto quantile = [&](double f) {
        double pos = f * static_cast<double>(sorted.size() - 1);
        auto i = static_cast<std::size_t>(pos);
        double frac = pos - static_cast<double>(i);
        return i + 1 < sorted.size() ? sorted[i] + frac * (sorted[i + 1] - sorted[i]) : sorted[i];
    };
    double q1 = quantile(0.25), q3 = quantile(0.75), iqr = q3 - q1;
    if (!(iqr > 0.0)) return v;
    for (double& x : v) x = std::clamp(x, q1 - 3.0 * iqr, q3 + 3.0 * iqr);
    return v;
}

// The group of each point along one coordinate `u`, and the number of groups. Equal coordinates
// always share a group, so an integer value is never split across bins.
[[nodiscard]] inline std::pair<std::vector<std::size_t>, std::size_t> value_groups(const std::vector<double>& u,
                                                                                 std::size_t bins) {
    std::vector<std::size_t> order(u.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return u[a] < u[b]; });
    std::size_t distinct = 0;
    for (std::size_t i = 0; i < order.size(); ++i) distinct += (i == 0 || u[order[i]] != u[order[i - 1]]) ? 1u : 0u;
    const bool per_value = distinct <= bins;
    std::vector<std::size_t> group(u.size());
    std::size_t bin = 0;      // the equal-count bin reached
    std::size_t current = 0;  // the group: bins numbered densely, since one value held by more
                              // than a bin's share of the trials skips bins, which hold none
    for (std::size_t i = 0; i < order.size(); ++i) {
        bool same = i > 0 && u[order[i]] == u[order[i - 1]];
        if (i > 0 && !same) {
            std::size_t target = per_value ? bin + 1 : i * bins / order.size();  // equal-count bins
            if (target > bin) {
                bin = target;
                ++current;
            }
        }
        group[order[i]] = current;
    }
    return {std::move(group), u.empty() ? 0 : current + 1};
}

// log Gamma(m / 2) for m >= 1, by Gamma(x + 1) = x Gamma(x) from Gamma(1) = 1 or Gamma(1/2) = sqrt(pi):
// exact enough for the F test's degrees of freedom, and free of std::lgamma's global sign (a data
// race when two threads rank parameters at once).
[[nodiscard]] inline double log_gamma_half(std::size_t m) {
    const double target = 0.5 * static_cast<double>(m);
    double x = m % 2 == 0 ? 1.0 : 0.5;
    double log_gamma = m % 2 == 0 ? 0.0 : 0.5 * std::log(3.14159265358979323846);
    for (; x < target - 0.25; x += 1.0) log_gamma += std::log(x);
    return log_gamma;
}

// The regularised incomplete beta function I_x(a/2, b/2) for whole a, b >= 1, by its continued
// fraction (modified Lentz), on the side of x where it converges fast.
[[nodiscard]] inline double incomplete_beta_halves(std::size_t a, std::size_t b, double x) {
    if (!(x > 0.0)) return 0.0;
    if (!(x < 1.0)) return 1.0;
    const double p = 0.5 * static_cast<double>(a), q = 0.5 * static_cast<double>(b);
    const double front = std::exp(log_gamma_half(a + b) - log_gamma_half(a) - log_gamma_half(b) + p * std::log(x) +
                                  q * std::log1p(-x));
    auto fraction = [](double aa, double bb, double xx) {
        constexpr double tiny = 1e-300;
        double c = 1.0, d = 1.0 - (aa + bb) * xx / (aa + 1.0);
        d = 1.0 / (std::abs(d) < tiny ? tiny : d);
        double h = d;
        for (int m = 1; m <= 500; ++m) {
            const double dm = static_cast<double>(m);
            for (const double coefficient : {dm * (bb - dm) * xx / ((aa + 2.0 * dm - 1.0) * (aa + 2.0 * dm)),
                                             -(aa + dm) * (aa + bb + dm) * xx / ((aa + 2.0 * dm) * (aa + 2.0 * dm + 1.0))}) {
                d = 1.0 + coefficient * d;
                d = 1.0 / (std::abs(d) < tiny ? tiny : d);
                c = 1.0 + coefficient / c;
                if (std::abs(c) < tiny) c = tiny;
                h *= c * d;
            }
            if (std::abs(c * d - 1.0) < 1e-14) break;
        }
        return h;
    };
    return x < (p + 1.0) / (p + q + 2.0) ? front * fraction(p, q, x) / p : 1.0 - front * fraction(q, p, 1.0 - x) / q;
}

struct ExplainedShare {
    double first_order = 0.0;  // epsilon-squared
    double p_value = 1.0;      // of the F test
};

// Epsilon-squared of `y` grouped by `group` (k groups), the chance-corrected explained share, and
// the one-way analysis of variance's p-value.
[[nodiscard]] inline ExplainedShare explained_share(const std::vector<double>& y, const std::vector<std::size_t>& group,
                                                    std::size_t k) {
    const std::size_t n = y.size();
    if (k < 2 || n <= k) return {};
    double mean = std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(n);
    std::vector<double> sum(k, 0.0), count(k, 0.0);
    double sst = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        sum[group[i]] += y[i];
        count[group[i]] += 1.0;
        sst += (y[i] - mean) * (y[i] - mean);
    }
    if (!(sst > 0.0)) return {};
    double ssb = 0.0;
    for (std::size_t g = 0; g < k; ++g)
        if (count[g] > 0.0) ssb += count[g] * (sum[g] / count[g] - mean) * (sum[g] / count[g] - mean);
    double ssw = std::max(sst - ssb, 0.0);
    double chance = static_cast<double>(k - 1) * ssw / static_cast<double>(n - k);
    const double first_order = std::clamp((ssb - chance) / sst, 0.0, 1.0);
    // P(F >= f) with (k - 1, n - k) degrees of freedom = I_w((n - k) / 2, (k - 1) / 2), where
    // w = (n - k) / (n - k + (k - 1) f) = SSW / (SSW + SSB).
    const double w = ssw / (ssw + ssb);
    return {first_order, ssb > 0.0 ? incomplete_beta_halves(n - k, k - 1, w) : 1.0};
}

}  // namespace detail

/// Each tuned hyperparameter's share of the objective's variance (see the method at the top of
/// this header), sorted by share, largest first (ties keep the parameters' order). Empty when fewer
/// than 3 trials completed with a value.
[[nodiscard]] inline std::vector<ParameterImportance> parameter_importance(const Result& result) {
    std::vector<const TrialRecord*> done;
    for (const auto& t : result.trials())
        if (t.status == TrialStatus::Completed && t.has_objective()) done.push_back(&t);
    if (done.size() < 3) return {};

    const std::size_t n = done.size();
    std::vector<double> objective(n);
    double largest = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        objective[i] = done[i]->objective;
        largest = std::max(largest, std::abs(objective[i]));
    }
    // Scaled by a power of two (exactly) to at most 1 in magnitude: the shares do not depend on the
    // scale, and the squares of objectives beyond about 1e154 would overflow to infinity.
    if (largest > 0.0)
        for (double& v : objective) v = std::ldexp(v, -std::ilogb(largest) - 1);
    const std::vector<double> y = detail::clamp_outliers(std::move(objective));
    const std::size_t bins = std::clamp<std::size_t>(static_cast<std::size_t>(std::sqrt(static_cast<double>(n))), 2, 10);

    std::vector<ParameterImportance> out;
    const Config& layout = done.front()->config;
    std::vector<double> u(n);
    for (std::size_t p = 0; p < layout.size(); ++p) {
        const ParameterSpec& spec = layout.parameter(p);
        if (!spec.tuned()) continue;
        for (std::size_t i = 0; i < n; ++i) u[i] = spec.to_unit(done[i]->config.value(p));
        // A categorical parameter's coordinates are its categories' indices: one group each.
        auto [group, k] = detail::value_groups(u, spec.kind == ParameterKind::Categorical ? n : bins);
        const detail::ExplainedShare explained = detail::explained_share(y, group, k);
        out.push_back({spec.name, 0.0, explained.first_order, k, explained.p_value});
    }
    const double significance = 0.05 / static_cast<double>(std::max<std::size_t>(out.size(), 1));
    double total = 0.0;
    for (const auto& p : out)
        if (p.p_value < significance) total += p.first_order;
    if (total > 0.0)
        for (auto& p : out)
            if (p.p_value < significance) p.share = p.first_order / total;
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.share > b.share; });
    return out;
}

}  // namespace hypertune
