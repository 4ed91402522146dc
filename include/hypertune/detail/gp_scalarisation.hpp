// SPDX-License-Identifier: MIT
#pragma once
// ParEGO (Knowles 2006): how the Gaussian-process sampler handles several objectives. Each
// suggestion models one random weighting of them: every objective is scaled to [0, 1] over the
// results so far, and a trial's loss becomes the augmented Tchebycheff scalarisation
// max_i w_i f_i + rho sum_i w_i f_i, with weights w drawn uniformly from the simplex. Maximising
// expected improvement of it finds a point of the front in that direction; over many
// suggestions, the front.

#include <hypertune/detail/gp_model_data.hpp>
#include <hypertune/detail/random.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace hypertune::detail {

// ParEGO's augmented Tchebycheff scalarisation: max_i w_i f_i + rho * sum_i w_i f_i.
inline constexpr double tchebycheff_rho = 0.05;

// Sets the loss of every observed trial with all `objectives` losses to their scalarisation,
// under weights drawn from `stream` (a function of the seed and the trial being suggested).
inline void parego_scalarise(std::vector<GpPoint>& trials, std::size_t objectives, std::uint64_t stream) {
    std::vector<double> low(objectives, std::numeric_limits<double>::infinity());
    std::vector<double> high(objectives, -std::numeric_limits<double>::infinity());
    for (const GpPoint& t : trials)
        if (t.state == GpPointState::Observed && t.losses.size() == objectives)
            for (std::size_t i = 0; i < objectives; ++i) {
                low[i] = std::min(low[i], t.losses[i]);
                high[i] = std::max(high[i], t.losses[i]);
            }
    SplitMix rng(stream);
    std::vector<double> w(objectives);
    double total = 0.0;
    for (double& x : w) total += x = -std::log(1.0 - rng.uniform());  // Dirichlet(1, ..., 1)
    for (double& x : w) x /= total;
    for (GpPoint& t : trials) {
        if (t.state != GpPointState::Observed || t.losses.size() != objectives) continue;
        double worst = 0.0, sum = 0.0;
        for (std::size_t i = 0; i < objectives; ++i) {
            const double range = high[i] - low[i];
            const double f = range > 0.0 ? (t.losses[i] - low[i]) / range : 0.0;
            worst = std::max(worst, w[i] * f);
            sum += w[i] * f;
        }
        t.loss = worst + tchebycheff_rho * sum;
    }
}

}  // namespace hypertune::detail
