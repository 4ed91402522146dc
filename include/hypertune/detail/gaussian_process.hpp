// SPDX-License-Identifier: MIT
#pragma once
// A Gaussian process regression model for the Bayesian strategy, on points of the unit cube.
//
// - Kernel: Matern 5/2 with one length scale per dimension (ARD) and a signal variance, plus a
//   homoscedastic noise variance on the diagonal.
// - Outputs are standardised (mean 0, standard deviation 1) before fitting; predictions can be
//   had in either scale. Constant outputs cannot be standardised: the scale is then 1 and
//   constant_outputs() says so (the caller decides what to do; the Bayesian strategy falls back).
// - Hyperparameters, all in log space, are fitted by maximising the log marginal likelihood plus
//   weak Gaussian log priors (MAP), with L-BFGS-B (LBFGSpp) inside box bounds, from several starts.
// - The Cholesky factorisation adds jitter (relative to the signal variance) when it fails:
//   0, 1e-10, 1e-8, ..., 1e-2. Only when all of them fail does condition() return false.
//
// This header pulls in Eigen's Cholesky: include it only where the model is used. The members'
// definitions (and LBFGSpp) are in <hypertune/impl/detail/gaussian_process.hpp>: inline in
// header-only mode, compiled into hypertune::compiled otherwise, so that a compiled-mode file
// that includes this header (the model's own tests, a benchmark) does not compile the model again.

#include <hypertune/detail/cholesky_inverse.hpp>

#include <Eigen/Cholesky>
#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <exception>
#include <limits>
#include <numbers>
#include <vector>

namespace hypertune::detail {

/// Kernel and noise hyperparameters, in log space. Packed as [log l_1..log l_d, log sf2, log sn2].
struct GpHyperparameters {
    Eigen::VectorXd log_lengthscales;
    double log_signal_variance = 0.0;
    double log_noise_variance = std::log(1e-3);

    [[nodiscard]] Eigen::Index dimensions() const noexcept { return log_lengthscales.size(); }

    [[nodiscard]] Eigen::VectorXd pack() const {
        Eigen::VectorXd theta(log_lengthscales.size() + 2);
        theta.head(log_lengthscales.size()) = log_lengthscales;
        theta[log_lengthscales.size()] = log_signal_variance;
        theta[log_lengthscales.size() + 1] = log_noise_variance;
        return theta;
    }

    [[nodiscard]] static GpHyperparameters unpack(const Eigen::VectorXd& theta) {
        GpHyperparameters h;
        const Eigen::Index d = theta.size() - 2;
        h.log_lengthscales = theta.head(d);
        h.log_signal_variance = theta[d];
        h.log_noise_variance = theta[d + 1];
        return h;
    }
};

/// Weak Gaussian priors on the log hyperparameters (standard deviations of about one to three
/// e-folds), and the box the optimiser searches. For standardised outputs on the unit cube.
struct GpPrior {
    double log_lengthscale_mean = std::log(0.5);  ///< the Bayesian strategy uses log(0.5 sqrt(d))
    double log_lengthscale_sd = 1.0;
    double log_signal_mean = 0.0;
    double log_signal_sd = 1.5;
    double log_noise_mean = std::log(1e-3);
    double log_noise_sd = 3.0;

    double min_lengthscale = 1e-2, max_lengthscale = 20.0;
    double min_signal = 1e-2, max_signal = 1e2;
    double min_noise = 1e-6, max_noise = 1.0;

    [[nodiscard]] GpHyperparameters mean(Eigen::Index d) const {
        return {Eigen::VectorXd::Constant(d, log_lengthscale_mean), log_signal_mean, log_noise_mean};
    }
};

/// Standard normal density and distribution.
[[nodiscard]] inline double normal_pdf(double z) noexcept {
    return std::exp(-0.5 * z * z) * (1.0 / std::sqrt(2.0 * std::numbers::pi));
}
[[nodiscard]] inline double normal_cdf(double z) noexcept { return 0.5 * std::erfc(-z / std::numbers::sqrt2); }

/// log phi(t), the standard normal log density.
[[nodiscard]] inline double log_normal_pdf(double t) noexcept {
    return -0.5 * t * t - 0.5 * std::log(2.0 * std::numbers::pi);
}

/// The Mills ratio R(t) = Phi(-t) / phi(t) for t > 0: through erfcx below 30, the asymptotic
/// series above (where exp(t^2 / 2) would overflow).
[[nodiscard]] inline double mills_ratio(double t) noexcept {
    if (t < 30.0) {
        const double x = t / std::numbers::sqrt2;
        return std::sqrt(std::numbers::pi / 2.0) * std::exp(x * x) * std::erfc(x);
    }
    const double t2 = 1.0 / (t * t);
    return (1.0 / t) * (1.0 - t2 * (1.0 - 3.0 * t2 * (1.0 - 5.0 * t2)));
}

/// log h(z) and h'(z)/h(z) for h(z) = z Phi(z) + phi(z), the expected improvement of a unit normal
/// over z (EI = sigma h((best - mu) / sigma) when minimising). Stable for every finite z: for
/// z < -1 it works with 1 - t R(t), t = -z, R the Mills ratio (through erfcx), and for z < -30
/// with the asymptotic series, so log EI stays finite where EI itself underflows to 0.
struct LogH {
    double log_h;
    double ratio;  ///< Phi(z) / h(z) = d log h / dz
};

[[nodiscard]] inline LogH log_h(double z) noexcept {
    if (z >= -1.0) {
        const double cdf = normal_cdf(z);
        const double h = z * cdf + normal_pdf(z);
        return {std::log(h), cdf / h};
    }
    const double t = -z;
    const double mills = mills_ratio(t);
    double one_minus = 0.0;  // 1 - t R(t) = h(z) / phi(z)
    if (t < 30.0) {
        one_minus = 1.0 - t * mills;
    } else {
        const double t2 = 1.0 / (t * t);
        one_minus = t2 * (1.0 - 3.0 * t2 * (1.0 - 5.0 * t2 * (1.0 - 7.0 * t2)));
    }
    return {log_normal_pdf(t) + std::log(one_minus), mills / one_minus};
}

/// log EI for minimisation: log E[max(best - f, 0)], f ~ N(mean, sd^2), sd > 0.
[[nodiscard]] inline double log_expected_improvement(double mean, double sd, double best) noexcept {
    return std::log(sd) + log_h((best - mean) / sd).log_h;
}

/// log Phi(z) and its derivative phi(z) / Phi(z), stable in the left tail (through the Mills ratio,
/// as log_h): the log probability that a normal variable lies below a bound, z standard deviations
/// above its mean.
struct LogPhi {
    double log_cdf;
    double ratio;  ///< phi(z) / Phi(z) = d log Phi / dz
};

[[nodiscard]] inline LogPhi log_normal_cdf(double z) noexcept {
    if (z >= -5.0) {
        const double cdf = normal_cdf(z);
        return {std::log(cdf), normal_pdf(z) / cdf};
    }
    const double mills = mills_ratio(-z);
    return {log_normal_pdf(-z) + std::log(mills), 1.0 / mills};
}

/// Matern 5/2 from s = sqrt(5) r and exp(-s), coefficient-wise: sf2 (1 + s + s^2 / 3) exp(-s).
/// An Eigen expression: evaluate it within the statement that makes it.
template <typename S, typename E>
[[nodiscard]] auto matern_of(const Eigen::ArrayBase<S>& s, const Eigen::ArrayBase<E>& e, double sf2) {
    return sf2 * (1.0 + s.derived() + s.derived().square() * (1.0 / 3.0)) * e.derived();
}

class GaussianProcess {
public:
    /// Training inputs (rows, in the unit cube) and raw outputs (finite). Standardises the outputs.
    void set_data(Eigen::MatrixXd x, const Eigen::VectorXd& y);

    /// Same, with a given standardisation (y - mean) / scale: fantasies added to a model keep the
    /// scale its hyperparameters were fitted on.
    void set_data(Eigen::MatrixXd x, const Eigen::VectorXd& y, double mean, double scale);

    [[nodiscard]] Eigen::Index size() const noexcept { return x_.rows(); }
    [[nodiscard]] Eigen::Index dimensions() const noexcept { return x_.cols(); }
    [[nodiscard]] const Eigen::MatrixXd& inputs() const noexcept { return x_; }
    [[nodiscard]] const Eigen::VectorXd& standardised_outputs() const noexcept { return y_; }
    [[nodiscard]] bool constant_outputs() const noexcept { return constant_; }
    [[nodiscard]] double output_mean() const noexcept { return y_mean_; }
    [[nodiscard]] double output_scale() const noexcept { return y_scale_; }
    [[nodiscard]] bool conditioned() const noexcept { return conditioned_; }
    [[nodiscard]] double jitter() const noexcept { return jitter_; }
    [[nodiscard]] const GpHyperparameters& hyperparameters() const noexcept { return h_; }
    [[nodiscard]] double signal_variance() const noexcept { return signal_; }
    [[nodiscard]] double noise_variance() const noexcept { return noise_; }
    /// The lower Cholesky factor of K + (noise + jitter) I in the lower triangle (the upper one is
    /// K's own), as Eigen::LLT::matrixLLT() keeps it. Call after condition().
    [[nodiscard]] const Eigen::MatrixXd& cholesky_factor() const noexcept { return llt_.matrixLLT(); }

    /// Factorises K + noise I for `h`. False when the factorisation fails even with the largest
    /// jitter (the model is then unusable).
    bool condition(const GpHyperparameters& h);

    /// The standardised posterior mean at the model's own inputs, in O(n): K alpha, which is
    /// y - (noise + jitter) alpha since (K + (noise + jitter) I) alpha = y. Call after condition().
    [[nodiscard]] Eigen::VectorXd fitted_means() const { return y_ - (noise_ + jitter_) * alpha_; }

    /// K(xs, X) for rows xs: the cross kernel the predictions are built from.
    [[nodiscard]] Eigen::MatrixXd cross_kernel(const Eigen::MatrixXd& xs) const;

    /// A first look at many rows xs (a candidate set): per row, the standardised posterior mean,
    /// the variance bound (variance_bound_from) and the largest kernel value against a model point
    /// (the nearest one's correlation). The cross kernel is built `screen_block` rows at a time:
    /// whole, it is megabytes (2,304 candidates x 300 points), and allocating and faulting it in
    /// afresh on every suggestion cost more than the arithmetic on it.
    struct Screening {
        Eigen::VectorXd mean, bound, nearest;
    };
    static constexpr Eigen::Index screen_block = 512;
    [[nodiscard]] Screening screen(const Eigen::MatrixXd& xs) const;
    /// The same with the block held in `workspace`: a caller that screens on every suggestion
    /// keeps one, so that the block's storage (a megabyte) is not allocated and faulted in anew.
    [[nodiscard]] Screening screen(const Eigen::MatrixXd& xs, Eigen::MatrixXd& workspace) const;

    /// Standardised posterior means from a cross kernel.
    [[nodiscard]] Eigen::VectorXd mean_from(const Eigen::MatrixXd& cross) const { return cross * alpha_; }

    /// Latent (noise-free) standardised posterior variances from a cross kernel (m x n).
    [[nodiscard]] Eigen::VectorXd variance_from(const Eigen::MatrixXd& cross) const;

    /// An upper bound of the latent variance that costs O(n) per point: conditioning on the single
    /// most correlated training point leaves more variance than conditioning on all of them.
    [[nodiscard]] Eigen::VectorXd variance_bound_from(const Eigen::MatrixXd& cross) const;
    /// The same from each row's largest kernel value.
    [[nodiscard]] Eigen::VectorXd variance_bound_from_nearest(const Eigen::VectorXd& kmax) const;

    /// Standardised posterior mean and latent variance at rows xs.
    void predict_standardised(const Eigen::MatrixXd& xs, Eigen::VectorXd& mean, Eigen::VectorXd& var) const;

    /// Posterior mean and latent variance in the outputs' own units.
    void predict(const Eigen::MatrixXd& xs, Eigen::VectorXd& mean, Eigen::VectorXd& var) const;

    /// Standardised mean and latent variance at one point with their gradients in x.
    void predict_with_gradient(const Eigen::VectorXd& x, double& mean, double& var, Eigen::VectorXd& dmean,
                               Eigen::VectorXd& dvar) const;

    /// The standardised mean's gradient in x at one point, without the variance's two triangular
    /// solves (O(n d) rather than O(n^2)).
    [[nodiscard]] Eigen::VectorXd mean_gradient(const Eigen::VectorXd& x) const;

    /// The n x n scratch of log_marginal_likelihood(), kept by a fit from one evaluation to the
    /// next: allocated afresh each time (300 x 300 at the model's cap), the allocator hands the
    /// memory back to the system in between and its pages are faulted in again.
    struct LikelihoodWorkspace {
        Eigen::MatrixXd r, e, k, w, scratch;
        Eigen::LLT<Eigen::MatrixXd> llt;
    };

    /// Log marginal likelihood of the standardised outputs for packed hyperparameters `theta`,
    /// and its gradient when `grad` is given. -infinity when the factorisation fails.
    [[nodiscard]] double log_marginal_likelihood(const Eigen::VectorXd& theta, Eigen::VectorXd* grad) const;
    [[nodiscard]] double log_marginal_likelihood(const Eigen::VectorXd& theta, Eigen::VectorXd* grad,
                                                 LikelihoodWorkspace& ws) const;

    /// The log prior density (up to a constant) of packed hyperparameters, with its gradient.
    [[nodiscard]] static double log_prior(const Eigen::VectorXd& theta, const GpPrior& prior, Eigen::VectorXd* grad);

    struct FitResult {
        GpHyperparameters hyperparameters;
        double log_posterior = -std::numeric_limits<double>::infinity();
        int evaluations = 0;
        bool ok = false;
    };

    /// MAP hyperparameters: L-BFGS-B from each start (clamped into the prior's box), best kept.
    /// Line-search failures end a start early; the best point evaluated so far still counts.
    [[nodiscard]] FitResult fit(const std::vector<GpHyperparameters>& starts, const GpPrior& prior,
                                int max_iterations = 40) const;

private:
    // The kernel row k_j = k(x, x_j) at one point and its gradient, dk(j, i) = dk_j / dx_i.
    void kernel_row_with_gradient(const Eigen::VectorXd& x, Eigen::VectorXd& k, Eigen::MatrixXd& dk) const;

    // K(xs, X) into `k`, xs.rows() x size(): a view of a matrix's storage, which may be larger
    // (screen() reuses one block's storage for every block).
    void cross_kernel_into(const Eigen::Ref<const Eigen::MatrixXd>& xs, Eigen::Map<Eigen::MatrixXd> k) const;

    // Euclidean distances between the rows of a and b into r (a.rows() x b.rows()), computed in
    // place (the matrices are large: temporaries would cost more than the arithmetic).
    static void distances_into(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, bool same,
                               Eigen::Map<Eigen::MatrixXd> r);

    // Matern 5/2 of distances r, overwriting r.
    static void matern_in_place(Eigen::Map<Eigen::MatrixXd> r, double sf2);
    // The two above on a whole matrix.
    static void matern_in_place(Eigen::MatrixXd& r, double sf2);
    static void distances_into(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, bool same, Eigen::MatrixXd& r);

    // Cholesky of k + (noise + jitter) I, escalating the jitter (relative to the signal variance).
    // The noise goes onto k's own diagonal, which is put back before returning: a copy of k for
    // each attempt would be an n x n allocation (720 KB at the 300-point cap) per factorisation.
    static bool factorise(Eigen::MatrixXd& k, double noise, double signal, Eigen::LLT<Eigen::MatrixXd>& llt,
                          double& jitter);

    Eigen::MatrixXd x_;
    Eigen::VectorXd y_;
    double y_mean_ = 0.0;
    double y_scale_ = 1.0;
    bool constant_ = true;

    GpHyperparameters h_;
    Eigen::VectorXd inverse_lengthscales_;
    double signal_ = 1.0;
    double noise_ = 1e-3;
    double jitter_ = 0.0;
    Eigen::MatrixXd scaled_;
    Eigen::LLT<Eigen::MatrixXd> llt_;
    Eigen::MatrixXd kernel_;  // condition()'s K(X, X), its storage reused
    Eigen::VectorXd alpha_;
    bool conditioned_ = false;
};

}  // namespace hypertune::detail

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/detail/gaussian_process.hpp>
#endif
