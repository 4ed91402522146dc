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
// point, for the refinement (detail/gp_refinement.hpp). Their definitions are in
// <hypertune/impl/detail/gp_acquisition.hpp>: inline in header-only mode, compiled into
// hypertune::compiled otherwise.

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
                                  const CandidateExclusion& exclusion) const;

    /// The best `keep` admissible candidates, (value, row) best first; empty when every candidate
    /// is excluded.
    [[nodiscard]] std::vector<std::pair<double, Eigen::Index>> best_candidates(const GpEncoding& encoding,
                                                                               const GpCandidates& c,
                                                                               const CandidateExclusion& exclusion,
                                                                               std::size_t exact_at_most,
                                                                               std::size_t keep) const;

    /// best_candidates() on a screened set: exact values for at most `exact_at_most` candidates,
    /// best bound first.
    [[nodiscard]] std::vector<std::pair<double, Eigen::Index>> top(Screened& s, std::size_t exact_at_most,
                                                                   std::size_t keep) const;

    /// The acquisition at one point's features, and its gradient in them (`grad`).
    [[nodiscard]] double at(const Eigen::VectorXd& features, Eigen::VectorXd& grad) const;

private:
    // The exact variance of each of `rows` not yet computed, into s.exact_variance.
    void exact_variances(Screened& s, const std::vector<Eigen::Index>& rows) const;

    const GaussianProcess& gp_;
    std::optional<double> best_;
    FeasibilityModel* feasibility_;
    Eigen::MatrixXd& workspace_;
    AcquisitionFunction function_;
};

}  // namespace hypertune::detail

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/detail/gp_acquisition.hpp>
#endif
