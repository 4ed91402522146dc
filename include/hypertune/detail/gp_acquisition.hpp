// SPDX-License-Identifier: MIT
#pragma once
// GpAcquisition: what the Gaussian-process sampler maximises. Log expected improvement below the
// incumbent (standardised; none while no result is feasible: left out), plus the log probability
// of feasibility when there are constraint models (constrained EI, detail/gp_feasibility.hpp); or,
// as a member of the portfolio (BayesianOptions::portfolio, detail/gp_portfolio.hpp), the lower
// confidence bound mean - kappa sd, maximised as its negative. best_candidates() scores a candidate
// set (detail/gp_candidates.hpp) in two passes: a cheap upper bound for every admissible candidate
// (the variance left by its most correlated model point alone; every function here grows with the
// variance, so a bound on it bounds them), then exact values, best bound first, block by block,
// for at most `exact_at_most` of them, stopping once no remaining bound can beat the last of the
// best `keep`. screen() and top() are its two halves, so that the portfolio's members share one
// screening and one exact variance per candidate. at() gives the value and its gradient at one
// point, for the refinement (detail/gp_refinement.hpp).

#include <hypertune/detail/gaussian_process.hpp>
#include <hypertune/detail/gp_candidates.hpp>
#include <hypertune/detail/gp_encoding.hpp>
#include <hypertune/detail/gp_exclusion.hpp>
#include <hypertune/detail/gp_feasibility.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

namespace hypertune::detail {

/// Which function GpAcquisition maximises: log expected improvement (with the log probability of
/// feasibility under constraint models), or kappa sd - mean, the negative of the lower confidence
/// bound (kappa 0: the posterior mean alone).
struct AcquisitionFunction {
    enum class Kind { LogExpectedImprovement, LowerConfidenceBound };
    Kind kind = Kind::LogExpectedImprovement;
    double kappa = 0.0;
};

class GpAcquisition {
public:
    /// gp: the objective's model (with pending fantasies, if any); best: the standardised
    /// incumbent, none to leave EI out; feasibility: the constraint models, or nullptr;
    /// workspace: storage for best_candidates()' screening (GaussianProcess::screen), kept by the
    /// caller from one suggestion to the next; function: what is maximised.
    GpAcquisition(const GaussianProcess& gp, std::optional<double> best, FeasibilityModel* feasibility,
                  Eigen::MatrixXd& workspace, AcquisitionFunction function = {})
        : gp_(gp), best_(best), feasibility_(feasibility), workspace_(workspace), function_(function) {}

    [[nodiscard]] static double sd_of(double var) { return std::sqrt(std::max(var, 1e-16)); }

    /// The function at a standardised mean and variance, without feasibility (log EI: 0 without an
    /// incumbent).
    [[nodiscard]] double value(double mean, double var) const {
        if (function_.kind == AcquisitionFunction::Kind::LowerConfidenceBound) return function_.kappa * sd_of(var) - mean;
        return best_ ? log_expected_improvement(mean, sd_of(var), *best_) : 0.0;
    }

    /// A candidate set's features, their screening and the admissible candidates (not excluded),
    /// shared by the functions that score it (top()). Exact variances are filled in as top() needs
    /// them.
    struct Screened {
        Eigen::MatrixXd features;
        GaussianProcess::Screening screening;
        Eigen::VectorXd feasible_bound;
        std::vector<Eigen::Index> admissible;
        std::vector<double> exact_variance;  // NaN until computed
    };

    [[nodiscard]] Screened screen(const GpEncoding& encoding, const GpCandidates& c,
                                  const CandidateExclusion& exclusion) const {
        const Eigen::Index m = c.rows();
        std::vector<const double*> candidate_rows;
        for (Eigen::Index i = 0; i < m; ++i) candidate_rows.push_back(c.row(i).data());
        Screened s;
        s.features = encoding.feature_rows(candidate_rows);
        s.screening = gp_.screen(s.features, workspace_);
        s.feasible_bound = feasibility_ ? feasibility_->upper_bounds(s.features) : Eigen::VectorXd::Zero(m);
        for (Eigen::Index i = 0; i < m; ++i)
            if (!exclusion.repeats(s.screening.nearest[i]) && !exclusion.near_pending(c.row(i).data()))
                s.admissible.push_back(i);
        s.exact_variance.assign(static_cast<std::size_t>(m), std::numeric_limits<double>::quiet_NaN());
        return s;
    }

    /// The best `keep` admissible candidates, (value, row) best first; empty when every candidate
    /// is excluded.
    [[nodiscard]] std::vector<std::pair<double, Eigen::Index>> best_candidates(const GpEncoding& encoding,
                                                                               const GpCandidates& c,
                                                                               const CandidateExclusion& exclusion,
                                                                               std::size_t exact_at_most,
                                                                               std::size_t keep) const {
        Screened s = screen(encoding, c, exclusion);
        return top(s, exact_at_most, keep);
    }

    /// best_candidates() on a screened set: exact values for at most `exact_at_most` candidates,
    /// best bound first.
    [[nodiscard]] std::vector<std::pair<double, Eigen::Index>> top(Screened& s, std::size_t exact_at_most,
                                                                   std::size_t keep) const {
        const Eigen::Index m = s.features.rows();
        const Eigen::VectorXd& mean = s.screening.mean;
        constexpr double ninf = -std::numeric_limits<double>::infinity();
        std::vector<double> upper(static_cast<std::size_t>(m), ninf);
        std::vector<Eigen::Index> order = s.admissible;
        for (const Eigen::Index i : order)
            upper[static_cast<std::size_t>(i)] = value(mean[i], s.screening.bound[i]) + s.feasible_bound[i];
        std::vector<std::pair<double, Eigen::Index>> top;  // best first
        if (order.empty()) return top;
        std::sort(order.begin(), order.end(), [&](Eigen::Index a, Eigen::Index b) {
            return upper[static_cast<std::size_t>(a)] > upper[static_cast<std::size_t>(b)] ||
                   (upper[static_cast<std::size_t>(a)] == upper[static_cast<std::size_t>(b)] && a < b);
        });

        // Exact log EI, block by block, while the bound of the next candidate can still make the top.
        constexpr Eigen::Index block = 128;
        const std::size_t exact_limit = std::min(order.size(), exact_at_most);
        for (std::size_t start = 0; start < exact_limit;) {
            if (top.size() >= keep && upper[static_cast<std::size_t>(order[start])] <= top.back().first) break;
            const std::size_t stop = std::min(exact_limit, start + static_cast<std::size_t>(block));
            const std::vector<Eigen::Index> rows(order.begin() + static_cast<std::ptrdiff_t>(start),
                                                 order.begin() + static_cast<std::ptrdiff_t>(stop));
            exact_variances(s, rows);
            const Eigen::VectorXd feasible =
                feasibility_ ? feasibility_->exact(rows) : Eigen::VectorXd::Zero(static_cast<Eigen::Index>(rows.size()));
            for (std::size_t k = start; k < stop; ++k) {
                const auto r = static_cast<Eigen::Index>(k - start);
                top.emplace_back(value(mean[order[k]], s.exact_variance[static_cast<std::size_t>(order[k])]) + feasible[r],
                                 order[k]);
            }
            std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) {
                return a.first > b.first || (a.first == b.first && a.second < b.second);
            });
            if (top.size() > keep) top.resize(keep);
            start = stop;
        }
        return top;
    }

    /// The acquisition at one point's features, and its gradient in them (`grad`).
    [[nodiscard]] double at(const Eigen::VectorXd& features, Eigen::VectorXd& grad) const {
        double value = 0.0;
        Eigen::VectorXd g = Eigen::VectorXd::Zero(features.size());
        if (function_.kind == AcquisitionFunction::Kind::LowerConfidenceBound) {
            double mean = 0.0, var = 0.0;
            Eigen::VectorXd dmean, dvar;
            gp_.predict_with_gradient(features, mean, var, dmean, dvar);
            const double sd = sd_of(var);
            const Eigen::VectorXd dsd = var > 1e-16 ? Eigen::VectorXd(dvar / (2.0 * sd)) : Eigen::VectorXd::Zero(dvar.size());
            value = function_.kappa * sd - mean;
            g = function_.kappa * dsd - dmean;
        } else if (best_) {
            double mean = 0.0, var = 0.0;
            Eigen::VectorXd dmean, dvar;
            gp_.predict_with_gradient(features, mean, var, dmean, dvar);
            double sd = sd_of(var);
            Eigen::VectorXd dsd = var > 1e-16 ? Eigen::VectorXd(dvar / (2.0 * sd)) : Eigen::VectorXd::Zero(dvar.size());
            const double zz = (*best_ - mean) / sd;
            const auto lh = log_h(zz);
            value = std::log(sd) + lh.log_h;
            // d log EI = dsd / sd + ratio * dz,  dz = (-dmean - z dsd) / sd
            g = dsd / sd + lh.ratio * ((-dmean - zz * dsd) / sd);
        }
        if (feasibility_) {
            Eigen::VectorXd gf;
            value += feasibility_->at(features, gf);
            g += gf;
        }
        grad = std::move(g);
        return value;
    }

private:
    // The exact variance of each of `rows` not yet computed, into s.exact_variance.
    void exact_variances(Screened& s, const std::vector<Eigen::Index>& rows) const {
        std::vector<Eigen::Index> missing;
        for (const Eigen::Index i : rows)
            if (std::isnan(s.exact_variance[static_cast<std::size_t>(i)])) missing.push_back(i);
        if (missing.empty()) return;
        Eigen::MatrixXd sub(static_cast<Eigen::Index>(missing.size()), s.features.cols());
        for (std::size_t k = 0; k < missing.size(); ++k) sub.row(static_cast<Eigen::Index>(k)) = s.features.row(missing[k]);
        const Eigen::VectorXd var = gp_.variance_from(gp_.cross_kernel(sub));
        for (std::size_t k = 0; k < missing.size(); ++k)
            s.exact_variance[static_cast<std::size_t>(missing[k])] = var[static_cast<Eigen::Index>(k)];
    }

    const GaussianProcess& gp_;
    std::optional<double> best_;
    FeasibilityModel* feasibility_;
    Eigen::MatrixXd& workspace_;
    AcquisitionFunction function_;
};

}  // namespace hypertune::detail
