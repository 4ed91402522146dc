// SPDX-License-Identifier: MIT
#pragma once
// ReportNoise: how far a trial's reported loss moves from one unit to the next beyond its trend,
// measured over every trial of a run, for the rungs' noise_tolerance (AshaOptions,
// HyperbandOptions). A validation metric computed after each epoch of SGD jumps by a few tenths of
// a percent from epoch to epoch; a rung that ranks trials on one such report can cut the best
// configuration on an unlucky epoch (README, "Noisy learning curves").
//
// The estimate: for three reports of one trial at consecutive steps s - 2, s - 1, s, the second
// difference d = loss(s) - 2 loss(s - 1) + loss(s - 2) cancels a trend that is locally linear
// (learning progress) and leaves the noise: for independent noise of standard deviation sigma, d
// has standard deviation sigma * sqrt(6), and the median of |d| is 0.6745 * sqrt(6) * sigma. So
// sigma() = median |d| / (0.6745 * sqrt(6)) over every such triple seen, or 0 until there are
// `min_samples` of them (a rung then ranks as without tolerance). The median keeps the curvature
// of the first units and the odd diverging run from inflating it. Reports that skip a step, or a
// trainer that starts over from step 1 (no checkpoint), start a new triple. Costs O(log n) a
// report (a SplitHeap of the |d| seen); only a run that asks for a tolerance measures it.

#include <hypertune/detail/split_heap.hpp>
#include <hypertune/types.hpp>

#include <cmath>
#include <cstddef>
#include <unordered_map>

namespace hypertune::detail {

class ReportNoise {
public:
    /// Second differences needed before sigma() is other than 0.
    static constexpr std::size_t min_samples = 20;

    /// A report of trial `id` at `step`. Non-finite losses are left out (and break the triple).
    void observe(TrialId id, Resource step, double loss) {
        Recent& r = recent_[id];
        if (!std::isfinite(loss)) {
            r = Recent{};
            return;
        }
        if (r.count >= 2 && r.step == step - 1) {
            differences_.insert(std::abs(loss - 2.0 * r.last + r.before));
            sigma_ = differences_.size() < min_samples ? 0.0 : differences_.median() / median_of_normal_d;
        }
        r.count = r.count > 0 && r.step == step - 1 ? r.count + 1 : 1;
        r.before = r.last;
        r.last = loss;
        r.step = step;
    }

    /// The noise's standard deviation, estimated; 0 until min_samples second differences.
    [[nodiscard]] double sigma() const noexcept { return sigma_; }
    /// Second differences seen.
    [[nodiscard]] std::size_t samples() const noexcept { return differences_.size(); }

    void clear() {
        recent_.clear();
        differences_ = SplitHeap{};
        sigma_ = 0.0;
    }

private:
    // 0.6745 (the median of |N(0, 1)|) x sqrt(6).
    static constexpr double median_of_normal_d = 0.6744897501960817 * 2.449489742783178;

    struct Recent {
        std::size_t count = 0;  // consecutive steps ending at `step`
        Resource step = 0;
        double last = 0.0;    // the loss at `step`
        double before = 0.0;  // the loss at step - 1
    };
    std::unordered_map<TrialId, Recent> recent_;
    SplitHeap differences_;
    double sigma_ = 0.0;
};

}  // namespace hypertune::detail
