// SPDX-License-Identifier: MIT
#pragma once
// The inverse of a symmetric positive-definite matrix from its Cholesky factor L (K = L L^T):
// K^-1 = L^-T L^-1, both steps by halving the triangle (Eigen's triangular and rank-update
// products on the blocks). The Gaussian process's likelihood gradient needs the whole K^-1 at
// every evaluation; solving L L^T X = I for it with Eigen (two triangular solves with n right-hand
// sides, 2 n^3 flops that ignore the identity's zeros) took three quarters of a hyperparameter fit
// at 200 points. Halving does about 2 n^3 / 3 flops, in matrix-matrix products, and agrees with
// the solves to a relative 1e-15; bench/bench_gp_likelihood times the two side by side.

#include <Eigen/Core>

namespace hypertune::detail {

namespace cholesky_inverse_detail {

// Below this size a block is left to Eigen's triangular solve, whose overhead the halving no
// longer pays for.
inline constexpr Eigen::Index leaf = 48;

// The lower triangle of `a` (lower-triangular, invertible) overwritten with its inverse:
// [A 0; B C]^-1 = [A^-1 0; -C^-1 B A^-1, C^-1]. `scratch`: at least a.rows() x a.rows().
inline void invert_lower(Eigen::Ref<Eigen::MatrixXd> a, Eigen::MatrixXd& scratch) {
    const Eigen::Index n = a.rows();
    if (n <= leaf) {
        auto identity = scratch.topLeftCorner(n, n);
        identity.setIdentity();
        a.triangularView<Eigen::Lower>().solveInPlace(identity);
        a.triangularView<Eigen::Lower>() = identity;
        return;
    }
    const Eigen::Index h = n / 2;
    invert_lower(a.topLeftCorner(h, h), scratch);
    invert_lower(a.bottomRightCorner(n - h, n - h), scratch);
    auto product = scratch.topLeftCorner(n - h, h);
    product.noalias() = a.bottomLeftCorner(n - h, h) * a.topLeftCorner(h, h).triangularView<Eigen::Lower>();
    a.bottomLeftCorner(n - h, h).noalias() = -(a.bottomRightCorner(n - h, n - h).triangularView<Eigen::Lower>() * product);
}

// The lower triangle of `a` (lower-triangular M) overwritten with the lower triangle of M^T M:
// for M = [P 0; Q R], M^T M = [P^T P + Q^T Q, Q^T R; R^T Q, R^T R].
inline void lower_gram(Eigen::Ref<Eigen::MatrixXd> a, Eigen::MatrixXd& scratch) {
    const Eigen::Index n = a.rows();
    if (n <= leaf) {
        auto m = scratch.topLeftCorner(n, n);
        m = a.triangularView<Eigen::Lower>();
        a.triangularView<Eigen::Lower>() = m.transpose() * m;
        return;
    }
    const Eigen::Index h = n / 2;
    auto p = a.topLeftCorner(h, h);
    auto q = a.bottomLeftCorner(n - h, h);
    auto r = a.bottomRightCorner(n - h, n - h);
    // In this order, each step reads blocks the steps before it have not yet overwritten.
    lower_gram(p, scratch);
    p.selfadjointView<Eigen::Lower>().rankUpdate(q.transpose());
    auto product = scratch.topLeftCorner(n - h, h);
    product.noalias() = r.triangularView<Eigen::Lower>().transpose() * q;
    q = product;
    lower_gram(r, scratch);
}

}  // namespace cholesky_inverse_detail

/// K^-1, whole (both triangles), into `out` from K's lower Cholesky factor, held in the lower
/// triangle of `factor` (Eigen::LLT::matrixLLT()). `scratch`: storage kept by a caller that
/// inverts often, so that nothing of size n x n is allocated anew.
inline void inverse_from_cholesky(const Eigen::MatrixXd& factor, Eigen::MatrixXd& out, Eigen::MatrixXd& scratch) {
    const Eigen::Index n = factor.rows();
    out = factor;
    scratch.resize(n, n);
    cholesky_inverse_detail::invert_lower(out, scratch);
    cholesky_inverse_detail::lower_gram(out, scratch);
    out.triangularView<Eigen::StrictlyUpper>() = out.transpose();
}

}  // namespace hypertune::detail
