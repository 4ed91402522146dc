// SPDX-License-Identifier: MIT
#pragma once
// The Gaussian-process sampler's hyperparameter fit: MAP (detail/gaussian_process.hpp) under a
// prior whose median length scale is `lengthscale` sqrt(d), from the last fit, the prior's mean and
// random starts, fewer starts and iterations past the early fits. When and on what data the
// sampler refits is the sampler's (detail/gp_model.hpp).

#include <hypertune/detail/gaussian_process.hpp>
#include <hypertune/detail/random.hpp>

#include <Eigen/Core>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

namespace hypertune::detail {

struct GpFit {
    GpHyperparameters hyperparameters;
    bool prior_mean = false;  // no start found a finite likelihood and there was no last fit
    double log_posterior = -std::numeric_limits<double>::infinity();  // the fit's MAP objective
};

// MAP hyperparameters for outputs y at rows x (`dims` tuned coordinates), from the last fit `last`
// (if any), the prior's mean and random starts (`warm_only`: from the last fit alone, once past
// the early fits; `fits`: the fits so far, which alternate the second start); the last fit (or the
// prior's mean) when no start finds a finite likelihood.
[[nodiscard]] inline GpFit fit_hyperparameters(Eigen::MatrixXd x, const Eigen::VectorXd& y,
                                               const std::optional<GpHyperparameters>& last, bool early,
                                               std::size_t fits, std::uint64_t stream, double lengthscale,
                                               std::size_t dims, bool warm_only) {
    const auto d = x.cols();
    GaussianProcess gp;
    gp.set_data(std::move(x), y);

    GpPrior prior;
    prior.log_lengthscale_mean = std::log(lengthscale * std::sqrt(static_cast<double>(dims)));
    std::vector<GpHyperparameters> starts;
    // Few results: the prior's mean and two random starts (plus the last fit). Later: the last
    // fit, and one other start that alternates between the prior's mean and a random one.
    // A last fit on other inputs (the sampler's oblique direction came or went) is no start.
    const bool usable_last = last && last->dimensions() == d;
    if (usable_last) starts.push_back(*last);
    const bool more = early || !warm_only || !usable_last;
    if (more && (early || fits % 2 == 0)) starts.push_back(prior.mean(d));
    SplitMix rng(stream);
    const int randoms = !more ? 0 : early ? 2 : (fits % 2 == 1 ? 1 : 0);
    for (int s = 0; s < randoms; ++s) {
        GpHyperparameters h = prior.mean(d);
        for (Eigen::Index i = 0; i < d; ++i) h.log_lengthscales[i] += 2.0 * (rng.uniform() - 0.5) * 1.5;
        h.log_signal_variance += 2.0 * (rng.uniform() - 0.5);
        h.log_noise_variance += 4.0 * (rng.uniform() - 0.5) * 2.0;
        starts.push_back(std::move(h));
    }
    auto result = gp.fit(starts, prior, early ? 40 : 25);
    if (result.ok) return {result.hyperparameters, false, result.log_posterior};
    if (usable_last) return {*last};
    return {prior.mean(d), true};
}

}  // namespace hypertune::detail
