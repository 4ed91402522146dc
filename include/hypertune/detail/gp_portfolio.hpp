// SPDX-License-Identifier: MIT
#pragma once
// GpPortfolio: a portfolio of acquisition functions chosen by GP-Hedge (Hoffman, Brochu and de
// Freitas, "Portfolio Allocation for Bayesian Optimization", 2011), BayesianOptions::portfolio.
// For each suggestion every member (log expected improvement and two lower confidence bounds)
// nominates its best candidate; the suggestion is one nominee, drawn with probability proportional
// to exp(eta x gain) of its member. Once that trial's result is in, the next suggestion's model
// rewards every member with the negative standardised posterior mean at its own nominee, whether
// that nominee was suggested or not: a member gains when the model, having learnt from the
// result, rates its nominee well. Rewards of one suggestion come from one model, so that the
// standardisation, which changes from one suggestion to the next, moves them alike.

#include <hypertune/detail/gaussian_process.hpp>
#include <hypertune/detail/gp_acquisition.hpp>
#include <hypertune/detail/gp_encoding.hpp>
#include <hypertune/types.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <map>
#include <vector>

namespace hypertune::detail {

class GpPortfolio {
public:
    using Kind = AcquisitionFunction::Kind;
    /// The members: expected improvement, the confidence bound at 2 standard deviations (towards
    /// what the model knows least) and at 0.5 (towards its lowest mean).
    static constexpr std::array<AcquisitionFunction, 3> members{{{Kind::LogExpectedImprovement, 0.0},
                                                                  {Kind::LowerConfidenceBound, 2.0},
                                                                  {Kind::LowerConfidenceBound, 0.5}}};
    /// Hedge's learning rate, on rewards in standard deviations of the results.
    static constexpr double eta = 1.0;

    /// The member to suggest from, for `uniform` in [0, 1).
    [[nodiscard]] std::size_t choose(double uniform) const {
        const double top = *std::max_element(gains_.begin(), gains_.end());
        std::array<double, members.size()> weight{};
        double total = 0.0;
        for (std::size_t k = 0; k < members.size(); ++k) total += weight[k] = std::exp(eta * (gains_[k] - top));
        double mass = uniform * total;
        for (std::size_t k = 0; k < members.size(); ++k) {
            if (mass < weight[k]) return k;
            mass -= weight[k];
        }
        return members.size() - 1;
    }

    /// Trial `id` was suggested from `member`'s nominee, among these (unit-cube points, one per
    /// member).
    void nominate(TrialId id, std::array<std::vector<double>, members.size()> nominees, std::size_t member) {
        nominees_[id] = std::move(nominees);
        ++picks_[member];
    }

    /// Rewards the members of every nominated trial for which `finished(id)` holds, by the
    /// standardised posterior mean of `gp` (a model over inputs encoded by `encoding`) at each
    /// nominee, and forgets those trials. A resumed run rebuilds the gains: its replay asks and
    /// tells the sampler again in the journal's order.
    template <class Finished>
    void reward(const GpEncoding& encoding, const GaussianProcess& gp, Finished finished) {
        for (auto it = nominees_.begin(); it != nominees_.end();) {
            if (!finished(it->first)) {
                ++it;
                continue;
            }
            std::vector<const double*> rows;
            for (const auto& u : it->second) rows.push_back(u.data());
            const Eigen::VectorXd mean = gp.mean_from(gp.cross_kernel(encoding.feature_rows(rows)));
            for (std::size_t k = 0; k < members.size(); ++k) gains_[k] -= mean[static_cast<Eigen::Index>(k)];
            it = nominees_.erase(it);
        }
    }

    void clear() {
        gains_ = {};
        picks_ = {};
        nominees_.clear();
    }

    /// Each member's gain so far, and how many suggestions it made.
    [[nodiscard]] const std::array<double, members.size()>& gains() const noexcept { return gains_; }
    [[nodiscard]] const std::array<std::size_t, members.size()>& picks() const noexcept { return picks_; }

private:
    std::array<double, members.size()> gains_{};
    std::array<std::size_t, members.size()> picks_{};
    std::map<TrialId, std::array<std::vector<double>, members.size()>> nominees_;
};

}  // namespace hypertune::detail
