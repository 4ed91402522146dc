// SPDX-License-Identifier: MIT
#pragma once
// GpAcquisition: what the Gaussian-process sampler maximises. Log expected improvement below the
// incumbent (standardised; none while no result is feasible: left out), plus the log probability
// of feasibility when there are constraint models (constrained EI, detail/gp_feasibility.hpp).
// best_candidates() scores a candidate set (detail/gp_candidates.hpp) in two passes: a cheap upper
// bound for every admissible candidate (the variance left by its most correlated model point
// alone), then exact values, best bound first, block by block, for at most `exact_at_most` of them,
// stopping once no remaining bound can beat the last of the best `keep`. at() gives the value and
// its gradient at one point, for the refinement (detail/gp_refinement.hpp).

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

class GpAcquisition {
public:
    /// gp: the objective's model (with pending fantasies, if any); best: the standardised
    /// incumbent, none to leave EI out; feasibility: the constraint models, or nullptr;
    /// workspace: storage for best_candidates()' screening (GaussianProcess::screen), kept by the
    /// caller from one suggestion to the next.
    GpAcquisition(const GaussianProcess& gp, std::optional<double> best, FeasibilityModel* feasibility,
                  Eigen::MatrixXd& workspace)
        : gp_(gp), best_(best), feasibility_(feasibility), workspace_(workspace) {}

    [[nodiscard]] static double sd_of(double var) { return std::sqrt(std::max(var, 1e-16)); }

    /// Log EI at a standardised mean and variance (0 without an incumbent).
    [[nodiscard]] double log_ei(double mean, double var) const {
        return best_ ? log_expected_improvement(mean, sd_of(var), *best_) : 0.0;
    }

    /// The best `keep` admissible candidates, (value, row) best first; empty when every candidate
    /// is excluded.
    [[nodiscard]] std::vector<std::pair<double, Eigen::Index>> best_candidates(const GpEncoding& encoding,
                                                                               const GpCandidates& c,
                                                                               const CandidateExclusion& exclusion,
                                                                               std::size_t exact_at_most,
                                                                               std::size_t keep) const {
        const Eigen::Index m = c.rows();
        std::vector<const double*> candidate_rows;
        for (Eigen::Index i = 0; i < m; ++i) candidate_rows.push_back(c.row(i).data());
        const Eigen::MatrixXd features = encoding.feature_rows(candidate_rows);
        const GaussianProcess::Screening screening = gp_.screen(features, workspace_);
        const Eigen::VectorXd& mean = screening.mean;
        const Eigen::VectorXd feasible_bound =
            feasibility_ ? feasibility_->upper_bounds(features) : Eigen::VectorXd::Zero(m);

        constexpr double ninf = -std::numeric_limits<double>::infinity();
        std::vector<double> upper(static_cast<std::size_t>(m), ninf);
        std::vector<Eigen::Index> order;
        order.reserve(static_cast<std::size_t>(m));
        for (Eigen::Index i = 0; i < m; ++i) {
            if (exclusion.repeats(screening.nearest[i]) || exclusion.near_pending(c.row(i).data())) continue;
            upper[static_cast<std::size_t>(i)] = log_ei(mean[i], screening.bound[i]) + feasible_bound[i];
            order.push_back(i);
        }
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
            Eigen::MatrixXd sub(static_cast<Eigen::Index>(stop - start), features.cols());
            for (std::size_t k = start; k < stop; ++k) sub.row(static_cast<Eigen::Index>(k - start)) = features.row(order[k]);
            const Eigen::VectorXd var = gp_.variance_from(gp_.cross_kernel(sub));
            const std::vector<Eigen::Index> rows(order.begin() + static_cast<std::ptrdiff_t>(start),
                                                 order.begin() + static_cast<std::ptrdiff_t>(stop));
            const Eigen::VectorXd feasible =
                feasibility_ ? feasibility_->exact(rows) : Eigen::VectorXd::Zero(static_cast<Eigen::Index>(rows.size()));
            for (std::size_t k = start; k < stop; ++k) {
                const auto r = static_cast<Eigen::Index>(k - start);
                top.emplace_back(log_ei(mean[order[k]], var[r]) + feasible[r], order[k]);
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
        if (best_) {
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
    const GaussianProcess& gp_;
    std::optional<double> best_;
    FeasibilityModel* feasibility_;
    Eigen::MatrixXd& workspace_;
};

}  // namespace hypertune::detail
