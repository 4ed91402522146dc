// SPDX-License-Identifier: MIT
#pragma once
// BayesianOptions: the Gaussian-process sampler's settings (strategies/bayesian.hpp).

#include <hypertune/types.hpp>

#include <cstddef>

namespace hypertune {

struct BayesianOptions {
    /// Space-filling trials before the model is used; 0: max(5, d + 1).
    std::size_t initial_points = 0;
    /// Quasi-random candidates scored per suggestion (plus candidates / 8 local perturbations).
    std::size_t candidates = 2048;
    /// Results the Gaussian process uses at most (the best half, then the most recent).
    std::size_t max_model_points = 300;
    /// Refit the hyperparameters once this many new results came in (every result below 20).
    std::size_t refit_every = 5;
    /// The budget every trial gets (Trial::budget()).
    Resource max_resource = 1;
    /// With constraints (TunerOptions::constraints): a Gaussian process per constraint learns its
    /// violation, and expected improvement over the best feasible result is weighted by the
    /// probability of feasibility. false: an infeasible trial enters the one model at the worst
    /// loss, as a failed one does (one fit per refit instead of one per constraint more).
    bool model_constraints = true;
};

namespace detail {
/// GPSampler::pending_radius (the model needs it without the sampler's header).
inline constexpr double gp_pending_radius = 0.05;
}  // namespace detail

}  // namespace hypertune
