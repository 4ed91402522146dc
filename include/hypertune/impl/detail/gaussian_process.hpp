// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/detail/gaussian_process.hpp>: the Gaussian process's conditioning,
// predictions, likelihood and hyperparameter fit. Inline in header-only mode, compiled into
// hypertune::compiled otherwise (see <hypertune/linkage.hpp>).

#include <hypertune/detail/gaussian_process.hpp>
#include <hypertune/linkage.hpp>

#include <LBFGSB.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <numbers>
#include <vector>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/detail/gaussian_process.hpp> is compiled into hypertune::compiled: include <hypertune/detail/gaussian_process.hpp>"
#endif

namespace hypertune::detail {

HYPERTUNE_INLINE void GaussianProcess::set_data(Eigen::MatrixXd x, const Eigen::VectorXd& y) {
    // Standardised in units of the largest |y|, so that the result does not depend on the units:
    // a loss near 1e-14 (a mean squared error) was taken for a constant by an absolute threshold,
    // and one near 1e155 overflowed the sum of squares; either way the model went flat in silence.
    const double n = static_cast<double>(y.size());
    const double largest = y.size() > 0 ? y.cwiseAbs().maxCoeff() : 0.0;
    const double unit = largest > 0.0 && std::isfinite(largest) ? largest : 1.0;
    const Eigen::ArrayXd scaled = y.array() / unit;
    const double mean = y.size() > 0 ? scaled.mean() : 0.0;
    const double sd = y.size() > 1 ? std::sqrt((scaled - mean).square().sum() / n) : 0.0;
    const bool constant = !(sd > 1e-12 * std::max(1.0, std::abs(mean)));
    x_ = std::move(x);
    y_mean_ = mean * unit;
    y_scale_ = constant ? unit : sd * unit;
    y_ = constant ? Eigen::VectorXd(scaled - mean) : Eigen::VectorXd((scaled - mean) / sd);
    conditioned_ = false;
    constant_ = constant;
}

HYPERTUNE_INLINE void GaussianProcess::set_data(Eigen::MatrixXd x, const Eigen::VectorXd& y, double mean,
                                                double scale) {
    x_ = std::move(x);
    y_mean_ = mean;
    y_scale_ = scale;
    y_ = (y.array() - mean) / scale;
    constant_ = false;
    conditioned_ = false;
}

HYPERTUNE_INLINE bool GaussianProcess::condition(const GpHyperparameters& h) {
    h_ = h;
    inverse_lengthscales_ = (-h.log_lengthscales.array()).exp();
    signal_ = std::exp(h.log_signal_variance);
    noise_ = std::exp(h.log_noise_variance);
    scaled_ = x_.array().rowwise() * inverse_lengthscales_.transpose().array();
    // The kernel matrix is kept (kernel_): a model reused from one suggestion to the next with
    // as many points (at the cap) then allocates nothing of size n x n.
    kernel_.resize(x_.rows(), x_.rows());
    distances_into(scaled_, scaled_, true, kernel_);
    matern_in_place(kernel_, signal_);
    conditioned_ = factorise(kernel_, noise_, signal_, llt_, jitter_);
    if (conditioned_) alpha_ = llt_.solve(y_);
    return conditioned_;
}

HYPERTUNE_INLINE Eigen::MatrixXd GaussianProcess::cross_kernel(const Eigen::MatrixXd& xs) const {
    Eigen::MatrixXd k(xs.rows(), scaled_.rows());
    cross_kernel_into(xs, Eigen::Map<Eigen::MatrixXd>(k.data(), k.rows(), k.cols()));
    return k;
}

HYPERTUNE_INLINE GaussianProcess::Screening GaussianProcess::screen(const Eigen::MatrixXd& xs) const {
    Eigen::MatrixXd workspace;
    return screen(xs, workspace);
}

HYPERTUNE_INLINE GaussianProcess::Screening GaussianProcess::screen(const Eigen::MatrixXd& xs,
                                                                    Eigen::MatrixXd& workspace) const {
    const Eigen::Index m = xs.rows();
    Screening out{Eigen::VectorXd(m), Eigen::VectorXd(m), Eigen::VectorXd(m)};
    // Storage for the largest block, grown in steps of 64 model points and never shrunk: the
    // model gains a point with nearly every suggestion, and storage resized to the exact block
    // each time was allocated and faulted in anew each time. Each block uses the start of it.
    const Eigen::Index n = scaled_.rows();
    const Eigen::Index rows = std::min(screen_block, m);
    if (workspace.size() < rows * n) workspace.resize(rows * ((n + 63) / 64 * 64), 1);
    for (Eigen::Index start = 0; start < m; start += screen_block) {
        const Eigen::Index count = std::min(screen_block, m - start);
        Eigen::Map<Eigen::MatrixXd> cross(workspace.data(), count, n);  // contiguous
        cross_kernel_into(xs.middleRows(start, count), cross);
        out.mean.segment(start, count).noalias() = cross * alpha_;
        auto nearest = out.nearest.segment(start, count);
        nearest = cross.col(0);  // a column at a time: contiguous in the column-major block
        for (Eigen::Index j = 1; j < cross.cols(); ++j) nearest = nearest.cwiseMax(cross.col(j));
    }
    out.bound = variance_bound_from_nearest(out.nearest);
    return out;
}

HYPERTUNE_INLINE Eigen::VectorXd GaussianProcess::variance_from(const Eigen::MatrixXd& cross) const {
    Eigen::MatrixXd v = llt_.matrixL().solve(cross.transpose());
    Eigen::VectorXd var = signal_ - v.colwise().squaredNorm().transpose().array();
    return var.cwiseMax(0.0);
}

HYPERTUNE_INLINE Eigen::VectorXd GaussianProcess::variance_bound_from(const Eigen::MatrixXd& cross) const {
    return variance_bound_from_nearest(cross.rowwise().maxCoeff());
}

HYPERTUNE_INLINE Eigen::VectorXd GaussianProcess::variance_bound_from_nearest(const Eigen::VectorXd& kmax) const {
    Eigen::VectorXd var = signal_ - kmax.array().square() / (signal_ + noise_ + jitter_);
    return var.cwiseMax(0.0);
}

HYPERTUNE_INLINE void GaussianProcess::predict_standardised(const Eigen::MatrixXd& xs, Eigen::VectorXd& mean,
                                                            Eigen::VectorXd& var) const {
    Eigen::MatrixXd cross = cross_kernel(xs);
    mean = mean_from(cross);
    var = variance_from(cross);
}

HYPERTUNE_INLINE void GaussianProcess::predict(const Eigen::MatrixXd& xs, Eigen::VectorXd& mean,
                                               Eigen::VectorXd& var) const {
    predict_standardised(xs, mean, var);
    mean = mean.array() * y_scale_ + y_mean_;
    var *= y_scale_ * y_scale_;
}

HYPERTUNE_INLINE void GaussianProcess::predict_with_gradient(const Eigen::VectorXd& x, double& mean, double& var,
                                                             Eigen::VectorXd& dmean, Eigen::VectorXd& dvar) const {
    Eigen::VectorXd k;
    Eigen::MatrixXd dk;
    kernel_row_with_gradient(x, k, dk);
    mean = k.dot(alpha_);
    dmean = dk.transpose() * alpha_;
    Eigen::VectorXd v = llt_.matrixL().solve(k);
    Eigen::VectorXd w = llt_.matrixU().solve(v);
    var = signal_ - v.squaredNorm();
    dvar = -2.0 * (dk.transpose() * w);
    if (var < 0.0) {
        var = 0.0;
        dvar.setZero();
    }
}

HYPERTUNE_INLINE Eigen::VectorXd GaussianProcess::mean_gradient(const Eigen::VectorXd& x) const {
    Eigen::VectorXd k;
    Eigen::MatrixXd dk;
    kernel_row_with_gradient(x, k, dk);
    return dk.transpose() * alpha_;
}

HYPERTUNE_INLINE double GaussianProcess::log_marginal_likelihood(const Eigen::VectorXd& theta,
                                                                 Eigen::VectorXd* grad) const {
    LikelihoodWorkspace workspace;
    return log_marginal_likelihood(theta, grad, workspace);
}

HYPERTUNE_INLINE double GaussianProcess::log_marginal_likelihood(const Eigen::VectorXd& theta, Eigen::VectorXd* grad,
                                                                 LikelihoodWorkspace& ws) const {
    const Eigen::Index n = x_.rows();
    const Eigen::Index d = x_.cols();
    const GpHyperparameters h = GpHyperparameters::unpack(theta);
    const Eigen::ArrayXd inv = (-h.log_lengthscales.array()).exp();
    const double sf2 = std::exp(h.log_signal_variance);
    const double sn2 = std::exp(h.log_noise_variance);
    Eigen::MatrixXd s = x_.array().rowwise() * inv.transpose();
    ws.r.resize(n, n);
    distances_into(s, s, true, ws.r);
    // The kernel as matern_in_place() makes it, with its exponentials kept for the gradient
    // (an exponential is the dearest part of a kernel value).
    ws.r.array() *= std::sqrt(5.0);  // s = sqrt(5) r from here on
    ws.e = (-ws.r.array()).exp();
    ws.k = matern_of(ws.r.array(), ws.e.array(), sf2).matrix();
    double jitter = 0.0;
    if (!factorise(ws.k, sn2, sf2, ws.llt, jitter)) {
        if (grad) grad->setZero(theta.size());
        return -std::numeric_limits<double>::infinity();
    }
    Eigen::VectorXd alpha = ws.llt.solve(y_);
    const double log_det = 2.0 * ws.llt.matrixLLT().diagonal().array().log().sum();
    const double lml = -0.5 * y_.dot(alpha) - 0.5 * log_det - 0.5 * static_cast<double>(n) * std::log(2.0 * std::numbers::pi);
    if (grad) {
        grad->resize(theta.size());
        // d lml / d theta = 0.5 tr(W dK/dtheta), W = alpha alpha^T - K^-1.
        Eigen::MatrixXd& w = ws.w;
        inverse_from_cholesky(ws.llt.matrixLLT(), w, ws.scratch);
        w = -w;
        w.noalias() += alpha * alpha.transpose();
        // dK/dlog l_i = sf2 (5/3) (1 + s) exp(-s) (x_i - x'_i)^2 / l_i^2, s = sqrt(5) r; m
        // (W times that, without the distance term) overwrites s, which is not needed again.
        Eigen::MatrixXd& m = ws.r;
        m.array() = w.array() * (sf2 * (5.0 / 3.0)) * (1.0 + m.array()) * ws.e.array();
        Eigen::VectorXd row_sums = m.rowwise().sum();
        Eigen::MatrixXd ms = m * s;
        for (Eigen::Index i = 0; i < d; ++i) {
            const double term = 2.0 * s.col(i).array().square().matrix().dot(row_sums) - 2.0 * s.col(i).dot(ms.col(i));
            (*grad)[i] = 0.5 * term;
        }
        (*grad)[d] = 0.5 * (w.array() * ws.k.array()).sum();
        (*grad)[d + 1] = 0.5 * sn2 * w.trace();
    }
    return lml;
}

HYPERTUNE_INLINE double GaussianProcess::log_prior(const Eigen::VectorXd& theta, const GpPrior& prior,
                                                   Eigen::VectorXd* grad) {
    const Eigen::Index d = theta.size() - 2;
    double lp = 0.0;
    if (grad) grad->resize(theta.size());
    auto term = [&](Eigen::Index i, double mu, double sd) {
        const double z = (theta[i] - mu) / sd;
        lp -= 0.5 * z * z;
        if (grad) (*grad)[i] = -z / sd;
    };
    for (Eigen::Index i = 0; i < d; ++i) term(i, prior.log_lengthscale_mean, prior.log_lengthscale_sd);
    term(d, prior.log_signal_mean, prior.log_signal_sd);
    term(d + 1, prior.log_noise_mean, prior.log_noise_sd);
    return lp;
}

HYPERTUNE_INLINE GaussianProcess::FitResult GaussianProcess::fit(const std::vector<GpHyperparameters>& starts,
                                                                 const GpPrior& prior, int max_iterations) const {
    const Eigen::Index d = x_.cols();
    Eigen::VectorXd lb(d + 2), ub(d + 2);
    lb.head(d).setConstant(std::log(prior.min_lengthscale));
    ub.head(d).setConstant(std::log(prior.max_lengthscale));
    lb[d] = std::log(prior.min_signal);
    ub[d] = std::log(prior.max_signal);
    lb[d + 1] = std::log(prior.min_noise);
    ub[d + 1] = std::log(prior.max_noise);

    FitResult result;
    struct Objective {
        const GaussianProcess& gp;
        const GpPrior& prior;
        FitResult& result;
        LikelihoodWorkspace workspace;
        double operator()(const Eigen::VectorXd& theta, Eigen::VectorXd& grad) {
            ++result.evaluations;
            Eigen::VectorXd g_prior;
            const double lml = gp.log_marginal_likelihood(theta, &grad, workspace);
            const double lp = log_prior(theta, prior, &g_prior);
            const double value = lml + lp;
            if (!std::isfinite(value)) {
                grad.setZero();
                return 1e300;  // L-BFGS-B backtracks from here
            }
            if (value > result.log_posterior) {
                result.log_posterior = value;
                result.hyperparameters = GpHyperparameters::unpack(theta);
                result.ok = true;
            }
            grad = -(grad + g_prior);
            return -value;
        }
    };
    Objective objective{*this, prior, result, {}};
    LBFGSpp::LBFGSBParam<double> param;
    param.max_iterations = max_iterations;
    param.epsilon = 1e-5;
    param.max_linesearch = 30;
    LBFGSpp::LBFGSBSolver<double> solver(param);
    for (const auto& start : starts) {
        Eigen::VectorXd theta = start.pack().cwiseMax(lb).cwiseMin(ub);
        double fx = 0.0;
        try {
            (void)solver.minimize(objective, theta, fx, lb, ub);
        } catch (const std::exception&) {
            // a failed line search: keep the best point seen
        }
    }
    return result;
}

HYPERTUNE_INLINE void GaussianProcess::kernel_row_with_gradient(const Eigen::VectorXd& x, Eigen::VectorXd& k,
                                                                Eigen::MatrixXd& dk) const {
    const Eigen::ArrayXd inv2 = inverse_lengthscales_.array().square();
    const Eigen::ArrayXXd diff = ((-x_).rowwise() + x.transpose()).array();  // x - x_j, one row per j
    const Eigen::ArrayXd r = (diff.square().rowwise() * inv2.transpose()).rowwise().sum().sqrt();
    const Eigen::ArrayXd s = std::sqrt(5.0) * r;
    const Eigen::ArrayXd e = (-s).exp();
    k = (signal_ * (1.0 + s + s.square() / 3.0) * e).matrix();
    const Eigen::ArrayXd coef = -signal_ * (5.0 / 3.0) * (1.0 + s) * e;
    dk = ((diff.rowwise() * inv2.transpose()).colwise() * coef).matrix();
}

HYPERTUNE_INLINE void GaussianProcess::cross_kernel_into(const Eigen::Ref<const Eigen::MatrixXd>& xs,
                                                         Eigen::Map<Eigen::MatrixXd> k) const {
    const Eigen::MatrixXd s = xs.array().rowwise() * inverse_lengthscales_.transpose().array();
    distances_into(s, scaled_, false, k);
    matern_in_place(k, signal_);
}

HYPERTUNE_INLINE void GaussianProcess::distances_into(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, bool same,
                                                      Eigen::Map<Eigen::MatrixXd> r) {
    Eigen::VectorXd a2 = a.rowwise().squaredNorm();
    Eigen::RowVectorXd b2 = b.rowwise().squaredNorm().transpose();
    r.noalias() = -2.0 * (a * b.transpose());
    r.colwise() += a2;
    r.rowwise() += b2;
    r.array() = r.array().max(0.0).sqrt();
    if (same) r.diagonal().setZero();
}

HYPERTUNE_INLINE void GaussianProcess::matern_in_place(Eigen::Map<Eigen::MatrixXd> r, double sf2) {
    r.array() *= std::sqrt(5.0);
    r.array() = matern_of(r.array(), (-r.array()).exp(), sf2);
}

HYPERTUNE_INLINE void GaussianProcess::matern_in_place(Eigen::MatrixXd& r, double sf2) {
    matern_in_place(Eigen::Map<Eigen::MatrixXd>(r.data(), r.rows(), r.cols()), sf2);
}

HYPERTUNE_INLINE void GaussianProcess::distances_into(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, bool same,
                                                      Eigen::MatrixXd& r) {
    distances_into(a, b, same, Eigen::Map<Eigen::MatrixXd>(r.data(), r.rows(), r.cols()));
}

HYPERTUNE_INLINE bool GaussianProcess::factorise(Eigen::MatrixXd& k, double noise, double signal,
                                                 Eigen::LLT<Eigen::MatrixXd>& llt, double& jitter) {
    static constexpr double steps[] = {0.0, 1e-10, 1e-8, 1e-6, 1e-4, 1e-2};
    const Eigen::VectorXd diagonal = k.diagonal();
    bool done = false;
    for (double step : steps) {
        jitter = step * signal;
        k.diagonal() = diagonal.array() + (noise + jitter);
        llt.compute(k);
        done = llt.info() == Eigen::Success && llt.matrixLLT().diagonal().allFinite() &&
               llt.matrixLLT().diagonal().minCoeff() > 0.0;
        if (done) break;
    }
    k.diagonal() = diagonal;
    return done;
}

}  // namespace hypertune::detail
