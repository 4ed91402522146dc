// SPDX-License-Identifier: MIT
#pragma once
// GpEncoding: how the Gaussian-process sampler sees the search space. Points live in the unit
// cube (SearchSpace::encode); round() snaps integer and categorical coordinates to the centre of
// their value's cell, as decode then encode would, and a range with min == max to 0.5. The model's
// inputs (features) are the coordinates with each categorical parameter one-hot (one input per
// value). continuous() lists the coordinates that L-BFGS-B refines (detail/gp_refinement.hpp).

#include <hypertune/parameter.hpp>
#include <hypertune/search_space.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

namespace hypertune::detail {

class GpEncoding {
public:
    GpEncoding() = default;
    /// The tuned parameters of `space`, in its dimension order.
    explicit GpEncoding(const SearchSpace& space) : dims_(space.dimensions()) {
        for (std::size_t j = 0; j < dims_; ++j) {
            const ParameterSpec& p = space.parameter(space.tuned_index(j));
            specs_.push_back(p);
            if (p.kind == ParameterKind::Continuous && p.min < p.max) continuous_.push_back(j);
        }
        for (const ParameterSpec& p : specs_) {
            feature_of_.push_back(features_);
            features_ += p.kind == ParameterKind::Categorical ? p.categories.size() : 1;
        }
    }

    /// Unit-cube coordinates (tuned parameters).
    [[nodiscard]] std::size_t dimensions() const noexcept { return dims_; }
    /// Model inputs: categorical parameters one-hot, then the direction's input if one is set.
    [[nodiscard]] std::size_t features() const noexcept { return features_ + (direction_.size() > 0 ? 1 : 0); }
    /// The spec of coordinate j.
    [[nodiscard]] const ParameterSpec& spec(std::size_t j) const { return specs_[j]; }
    /// Coordinates refined by L-BFGS-B: continuous parameters with min < max.
    [[nodiscard]] const std::vector<std::size_t>& continuous() const noexcept { return continuous_; }
    /// Coordinate j's first model input.
    [[nodiscard]] std::size_t feature_of(std::size_t j) const { return feature_of_[j]; }

    // Rounds the discrete coordinates to their cell centres, as decode then encode would.
    void round(double* u) const {
        for (std::size_t j = 0; j < dims_; ++j) {
            const ParameterSpec& p = specs_[j];
            double x = std::clamp(u[j], 0.0, 1.0);
            switch (p.kind) {
                case ParameterKind::Integer: x = p.to_unit(p.from_unit(x)); break;
                case ParameterKind::Categorical: {
                    const auto k = static_cast<double>(p.categories.size());
                    x = (std::min(std::floor(x * k), k - 1.0) + 0.5) / k;
                    break;
                }
                case ParameterKind::Continuous:
                    if (!(p.min < p.max)) x = 0.5;
                    break;
                case ParameterKind::Static: break;
            }
            u[j] = x;
        }
    }

    // The model's inputs for a (rounded) unit-cube point: categorical coordinates one-hot.
    void to_features(const double* u, double* f) const {
        for (std::size_t j = 0; j < dims_; ++j) {
            const std::size_t at = feature_of_[j];
            if (specs_[j].kind == ParameterKind::Categorical) {
                const std::size_t k = specs_[j].categories.size();
                const auto value = std::min(static_cast<std::size_t>(std::max(u[j], 0.0) * static_cast<double>(k)), k - 1);
                for (std::size_t c = 0; c < k; ++c) f[at + c] = c == value ? 1.0 : 0.0;
            } else {
                f[at] = u[j];
            }
        }
        if (direction_.size() == 0) return;
        double v = 0.5;
        for (std::size_t i = 0; i < continuous_.size(); ++i) v += direction_[static_cast<Eigen::Index>(i)] * (u[continuous_[i]] - 0.5);
        f[features_] = v;
    }

    /// A unit direction over continuous() whose coordinate, (u - 1/2) . direction + 1/2, is one more
    /// model input after the others; an empty vector: none.
    void set_direction(Eigen::VectorXd direction) { direction_ = std::move(direction); }
    [[nodiscard]] const Eigen::VectorXd& direction() const noexcept { return direction_; }

    /// d/du_j of a function of the features, from its gradient in them (`g`), for the continuous
    /// coordinate j = continuous()[i].
    [[nodiscard]] double unit_gradient(const Eigen::VectorXd& g, std::size_t i) const {
        const double own = g[static_cast<Eigen::Index>(feature_of_[continuous_[i]])];
        if (direction_.size() == 0) return own;
        return own + direction_[static_cast<Eigen::Index>(i)] * g[static_cast<Eigen::Index>(features_)];
    }

    /// Coordinate j's length scale (log), for a model with these length scales per input: with a
    /// direction, the distance along the coordinate at which the kernel falls as it does at one
    /// length scale (1 / l^2 = 1 / l_j^2 + w_j^2 / l_w^2).
    [[nodiscard]] double coordinate_log_lengthscale(const Eigen::VectorXd& log_lengthscales, std::size_t j) const {
        const double own = log_lengthscales[static_cast<Eigen::Index>(feature_of_[j])];
        if (direction_.size() == 0) return own;
        const auto it = std::find(continuous_.begin(), continuous_.end(), j);
        if (it == continuous_.end()) return own;
        const double w = direction_[it - continuous_.begin()];
        return -0.5 * std::log(std::exp(-2.0 * own) + w * w * std::exp(-2.0 * log_lengthscales[static_cast<Eigen::Index>(features_)]));
    }

    // One feature row per unit-cube point.
    [[nodiscard]] Eigen::MatrixXd feature_rows(const std::vector<const double*>& rows) const {
        Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> f(static_cast<Eigen::Index>(rows.size()),
                                                                                 static_cast<Eigen::Index>(features()));
        for (std::size_t r = 0; r < rows.size(); ++r) to_features(rows[r], f.row(static_cast<Eigen::Index>(r)).data());
        return f;
    }

private:
    std::size_t dims_ = 0;
    std::vector<ParameterSpec> specs_;
    std::vector<std::size_t> continuous_;  // coordinates refined by L-BFGS-B
    std::size_t features_ = 0;             // model inputs: categorical parameters one-hot
    std::vector<std::size_t> feature_of_;  // tuned coordinate -> its first model input
    Eigen::VectorXd direction_;            // set_direction(); empty: none
};

}  // namespace hypertune::detail
