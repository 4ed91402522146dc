// SPDX-License-Identifier: MIT
#pragma once
// What the Gaussian-process sampler never suggests: a configuration it already has (a trial's,
// an earlier evaluation's or a seeded one: same_configuration(), repeats_known()), and, among the
// acquisition's candidates (CandidateExclusion), an exact repeat of a model point (its kernel
// value with the point reaches the signal variance) or a point closer than the pending radius
// (Euclidean, unit cube; gp_pending_radius, less inside a small trust region) to a pending trial.
// The refinement keeps to the pending radius too.

#include <hypertune/detail/gp_model_data.hpp>
#include <hypertune/strategies/bayesian_options.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace hypertune::detail {

[[nodiscard]] inline double squared_distance(const double* a, const double* b, std::size_t d) {
    double s = 0.0;
    for (std::size_t j = 0; j < d; ++j) s += (a[j] - b[j]) * (a[j] - b[j]);
    return s;
}

// The same (rounded) configuration: unit-cube points that coincide.
[[nodiscard]] inline bool same_configuration(const double* a, const double* b, std::size_t d) {
    return squared_distance(a, b, d) < 1e-18;
}

// Whether u repeats a trial's configuration, an earlier evaluation's or a seeded one.
[[nodiscard]] inline bool repeats_known(const GpObservations& observations, const std::vector<std::vector<double>>& seeded,
                                        const std::vector<double>& u) {
    const std::size_t d = u.size();
    auto same = [&](const GpPoint& t) { return same_configuration(t.u.data(), u.data(), d); };
    return std::any_of(observations.trials().begin(), observations.trials().end(), same) ||
           std::any_of(observations.earlier().begin(), observations.earlier().end(), same) ||
           std::any_of(seeded.begin(), seeded.end(),
                       [&](const std::vector<double>& v) { return same_configuration(v.data(), u.data(), d); });
}

// One suggestion's excluded candidates.
class CandidateExclusion {
public:
    /// pending: the pending points' unit-cube coordinates, one row each (d columns);
    /// signal_variance: the model's, the kernel value at distance 0; radius: the pending radius.
    CandidateExclusion(Eigen::MatrixXd pending, double signal_variance, double radius)
        : pending_(std::move(pending)), repeat_level_(signal_variance * (1.0 - 1e-9)), radius_(radius) {}

    /// A model point again: its largest kernel value with the model's points reaches the signal
    /// variance.
    [[nodiscard]] bool repeats(double largest_kernel_value) const noexcept { return largest_kernel_value >= repeat_level_; }

    /// Within the pending radius of a pending point.
    [[nodiscard]] bool near_pending(const double* row) const {
        const double radius2 = radius_ * radius_;
        for (Eigen::Index p = 0; p < pending_.rows(); ++p) {
            double s = 0.0;
            for (Eigen::Index j = 0; j < pending_.cols(); ++j) s += (row[j] - pending_(p, j)) * (row[j] - pending_(p, j));
            if (s < radius2) return true;
        }
        return false;
    }

private:
    Eigen::MatrixXd pending_;
    double repeat_level_;
    double radius_;
};

}  // namespace hypertune::detail
