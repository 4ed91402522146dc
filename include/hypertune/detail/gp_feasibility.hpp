// SPDX-License-Identifier: MIT
#pragma once
// FeasibilityModel: the Gaussian-process sampler's models of the run's constraints, one Gaussian
// process per constraint on its violation (<= 0 when met, Outcome::violations), and the log
// probability of feasibility they give a point, sum_j log P(c_j(x) <= 0). The sampler adds it to
// log expected improvement (constrained EI, Gardner et al. 2014; Gelbart et al. 2014), or uses it
// alone while no trial is feasible. Built for one suggestion from hyperparameters the sampler
// fitted (detail/gp_model.hpp, detail/gp_fit.hpp); candidates are scored in the acquisition's two
// passes (detail/gp_acquisition.hpp): a cheap upper bound for every candidate, then exact values
// for the most promising.

#include <hypertune/detail/gaussian_process.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

namespace hypertune::detail {

class FeasibilityModel {
public:
    /// x: the model points' features (rows); violations: one column per constraint, a row per
    /// point; hyper: one per constraint. False when a factorisation fails even with jitter.
    [[nodiscard]] bool set(const Eigen::MatrixXd& x, const Eigen::MatrixXd& violations,
                           const std::vector<GpHyperparameters>& hyper) {
        models_.clear();
        models_.resize(static_cast<std::size_t>(violations.cols()));
        for (Eigen::Index j = 0; j < violations.cols(); ++j) {
            Model& m = models_[static_cast<std::size_t>(j)];
            m.gp.set_data(x, violations.col(j));
            if (!m.gp.condition(hyper[static_cast<std::size_t>(j)])) return false;
            m.threshold = -m.gp.output_mean() / m.gp.output_scale();  // violation 0, standardised
        }
        return true;
    }

    [[nodiscard]] bool empty() const noexcept { return models_.empty(); }

    /// Prepares the candidates' rows (features) for exact() and returns, per row, an upper bound
    /// of its log probability of feasibility: where a model's mean breaks the constraint, the
    /// probability grows with the standard deviation, so the variance bound bounds it; where the
    /// mean meets it, 1 bounds it.
    [[nodiscard]] Eigen::VectorXd upper_bounds(const Eigen::MatrixXd& features) {
        features_ = features;
        Eigen::VectorXd total = Eigen::VectorXd::Zero(features.rows());
        for (Model& m : models_) {
            GaussianProcess::Screening screening = m.gp.screen(features);
            m.mean = std::move(screening.mean);
            for (Eigen::Index i = 0; i < features.rows(); ++i)
                if (m.mean[i] > m.threshold) total[i] += log_probability(m, m.mean[i], screening.bound[i]).log_cdf;
        }
        return total;
    }

    /// The exact log probability of feasibility of prepared rows (upper_bounds() first).
    [[nodiscard]] Eigen::VectorXd exact(const std::vector<Eigen::Index>& rows) const {
        Eigen::VectorXd total = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(rows.size()));
        Eigen::MatrixXd sub(static_cast<Eigen::Index>(rows.size()), features_.cols());
        for (std::size_t k = 0; k < rows.size(); ++k) sub.row(static_cast<Eigen::Index>(k)) = features_.row(rows[k]);
        for (const Model& m : models_) {
            const Eigen::VectorXd var = m.gp.variance_from(m.gp.cross_kernel(sub));
            for (std::size_t k = 0; k < rows.size(); ++k) {
                const auto r = static_cast<Eigen::Index>(k);
                total[r] += log_probability(m, m.mean[rows[k]], var[r]).log_cdf;
            }
        }
        return total;
    }

    /// The log probability of feasibility at one point's features, and its gradient in them.
    [[nodiscard]] double at(const Eigen::VectorXd& features, Eigen::VectorXd& grad) const {
        grad = Eigen::VectorXd::Zero(features.size());
        double total = 0.0;
        for (const Model& m : models_) {
            double mean = 0.0, var = 0.0;
            Eigen::VectorXd dmean, dvar;
            m.gp.predict_with_gradient(features, mean, var, dmean, dvar);
            const double sd = std::sqrt(std::max(var, min_variance));
            const LogPhi p = log_probability(m, mean, var);
            const double z = (m.threshold - mean) / sd;
            // dz = (-dmean - z dsd) / sd, dsd = dvar / (2 sd) (zero where the variance is floored)
            Eigen::VectorXd dsd = var > min_variance ? Eigen::VectorXd(dvar / (2.0 * sd)) : Eigen::VectorXd::Zero(dvar.size());
            grad += p.ratio * ((-dmean - z * dsd) / sd);
            total += p.log_cdf;
        }
        return total;
    }

    /// Per row (features), whether every model's mean meets its constraint.
    [[nodiscard]] std::vector<bool> likely_feasible(const Eigen::MatrixXd& features) const {
        std::vector<bool> out(static_cast<std::size_t>(features.rows()), true);
        for (const Model& m : models_) {
            const Eigen::VectorXd mean = m.gp.mean_from(m.gp.cross_kernel(features));
            for (Eigen::Index i = 0; i < features.rows(); ++i)
                if (mean[i] > m.threshold) out[static_cast<std::size_t>(i)] = false;
        }
        return out;
    }

private:
    static constexpr double min_variance = 1e-16;

    struct Model {
        GaussianProcess gp;
        double threshold = 0.0;  // the standardised output at which the violation is 0
        Eigen::VectorXd mean;    // upper_bounds()' candidates' standardised means
    };

    [[nodiscard]] static LogPhi log_probability(const Model& m, double mean, double var) noexcept {
        return log_normal_cdf((m.threshold - mean) / std::sqrt(std::max(var, min_variance)));
    }

    std::vector<Model> models_;
    Eigen::MatrixXd features_;  // upper_bounds()' candidates, for exact()
};

}  // namespace hypertune::detail
