// SPDX-License-Identifier: MIT
// What one evaluation of the Gaussian process's hyperparameter fit costs at n model points, and
// the part of it that K^-1 was: the inverse from the Cholesky factor by halving the triangle
// (detail/cholesky_inverse.hpp, what the likelihood gradient uses) beside solving L L^T X = I with
// Eigen's triangular solves (what it used before), in the same run. The points: n of a scrambled
// Sobol sequence in 8-D, the kernel at length scales 0.5 sqrt(8) with noise 1e-3.
#include <hypertune/detail/cholesky_inverse.hpp>
#include <hypertune/detail/gaussian_process.hpp>
#include <hypertune/detail/sobol.hpp>

#include <benchmark/benchmark.h>

#include <Eigen/Core>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <utility>

namespace {

namespace hd = hypertune::detail;

constexpr Eigen::Index dims = 8;

hd::GpHyperparameters hyperparameters() {
    return {Eigen::VectorXd::Constant(dims, std::log(0.5 * std::sqrt(double{dims}))), 0.0, std::log(1e-3)};
}

hd::GaussianProcess model(Eigen::Index n) {
    const hd::ScrambledSobol sobol(static_cast<std::size_t>(dims), 11);
    Eigen::MatrixXd x(n, dims);
    Eigen::VectorXd y(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        for (Eigen::Index j = 0; j < dims; ++j) x(i, j) = sobol.at(static_cast<std::uint32_t>(i), static_cast<std::size_t>(j));
        y[i] = std::sin(3.0 * x(i, 0)) + x.row(i).squaredNorm();
    }
    hd::GaussianProcess gp;
    gp.set_data(std::move(x), y);
    return gp;
}

// The model at the benchmark's hyperparameters, conditioned: its Cholesky factor is what is inverted.
hd::GaussianProcess conditioned(Eigen::Index n) {
    hd::GaussianProcess gp = model(n);
    if (!gp.condition(hyperparameters())) throw std::runtime_error("the benchmark's kernel did not factorise");
    return gp;
}

// K^-1 as the likelihood gradient had it before: L L^T X = I by two triangular solves, as
// Eigen::LLT::solveInPlace does them.
void inverse_by_triangular_solves(benchmark::State& state) {
    const hd::GaussianProcess gp = conditioned(state.range(0));
    const auto lower = gp.cholesky_factor().triangularView<Eigen::Lower>();
    Eigen::MatrixXd out;
    for (auto _ : state) {
        out.setIdentity(state.range(0), state.range(0));
        lower.solveInPlace(out);
        lower.adjoint().solveInPlace(out);
        benchmark::DoNotOptimize(out.data());
    }
}

void inverse_by_halving(benchmark::State& state) {
    const hd::GaussianProcess gp = conditioned(state.range(0));
    Eigen::MatrixXd out, scratch;
    for (auto _ : state) {
        hd::inverse_from_cholesky(gp.cholesky_factor(), out, scratch);
        benchmark::DoNotOptimize(out.data());
    }
}

void likelihood_with_gradient(benchmark::State& state) {
    const hd::GaussianProcess gp = model(state.range(0));
    const Eigen::VectorXd theta = hyperparameters().pack();
    Eigen::VectorXd grad;
    hd::GaussianProcess::LikelihoodWorkspace workspace;
    for (auto _ : state) benchmark::DoNotOptimize(gp.log_marginal_likelihood(theta, &grad, workspace));
}

void likelihood_alone(benchmark::State& state) {
    const hd::GaussianProcess gp = model(state.range(0));
    const Eigen::VectorXd theta = hyperparameters().pack();
    hd::GaussianProcess::LikelihoodWorkspace workspace;
    for (auto _ : state) benchmark::DoNotOptimize(gp.log_marginal_likelihood(theta, nullptr, workspace));
}

}  // namespace

BENCHMARK(inverse_by_triangular_solves)->Arg(100)->Arg(200)->Arg(300)->Unit(benchmark::kMillisecond);
BENCHMARK(inverse_by_halving)->Arg(100)->Arg(200)->Arg(300)->Unit(benchmark::kMillisecond);
BENCHMARK(likelihood_with_gradient)->Arg(100)->Arg(200)->Arg(300)->Unit(benchmark::kMillisecond);
BENCHMARK(likelihood_alone)->Arg(100)->Arg(200)->Arg(300)->Unit(benchmark::kMillisecond);
