// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/detail/gp_acquisition.hpp>: scoring a candidate set, and the value and
// gradient at one point. Inline in header-only mode, compiled into hypertune::compiled otherwise
// (see <hypertune/linkage.hpp>).

#include <hypertune/detail/gp_acquisition.hpp>
#include <hypertune/linkage.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/detail/gp_acquisition.hpp> is compiled into hypertune::compiled: include <hypertune/detail/gp_acquisition.hpp>"
#endif

namespace hypertune::detail {

HYPERTUNE_INLINE GpAcquisition::Screened GpAcquisition::screen(const GpEncoding& encoding, const GpCandidates& c,
                                                               const CandidateExclusion& exclusion) const {
    const Eigen::Index m = c.rows();
    std::vector<const double*> candidate_rows;
    for (Eigen::Index i = 0; i < m; ++i) candidate_rows.push_back(c.row(i).data());
    Screened s;
    s.features = encoding.feature_rows(candidate_rows);
    s.screening = gp_.screen(s.features, workspace_);
    s.feasible_bound = feasibility_ ? feasibility_->upper_bounds(s.features) : Eigen::VectorXd::Zero(m);
    for (Eigen::Index i = 0; i < m; ++i)
        if (!exclusion.repeats(s.screening.nearest[i]) && !exclusion.near_pending(c.row(i).data()))
            s.admissible.push_back(i);
    s.exact_variance.assign(static_cast<std::size_t>(m), std::numeric_limits<double>::quiet_NaN());
    return s;
}

HYPERTUNE_INLINE std::vector<std::pair<double, Eigen::Index>> GpAcquisition::best_candidates(const GpEncoding& encoding,
                                                                                             const GpCandidates& c,
                                                                                             const CandidateExclusion& exclusion,
                                                                                             std::size_t exact_at_most,
                                                                                             std::size_t keep) const {
    Screened s = screen(encoding, c, exclusion);
    return top(s, exact_at_most, keep);
}

HYPERTUNE_INLINE std::vector<std::pair<double, Eigen::Index>> GpAcquisition::top(Screened& s, std::size_t exact_at_most,
                                                                                 std::size_t keep) const {
    const Eigen::Index m = s.features.rows();
    const Eigen::VectorXd& mean = s.screening.mean;
    constexpr double ninf = -std::numeric_limits<double>::infinity();
    std::vector<double> upper(static_cast<std::size_t>(m), ninf);
    std::vector<Eigen::Index> order = s.admissible;
    for (const Eigen::Index i : order)
        upper[static_cast<std::size_t>(i)] = value(mean[i], s.screening.bound[i]) + s.feasible_bound[i];
    std::vector<std::pair<double, Eigen::Index>> top;  // best first
    if (order.empty()) return top;
    std::sort(order.begin(), order.end(), [&](Eigen::Index a, Eigen::Index b) {
        return upper[static_cast<std::size_t>(a)] > upper[static_cast<std::size_t>(b)] ||
               (upper[static_cast<std::size_t>(a)] == upper[static_cast<std::size_t>(b)] && a < b);
    });

    // Exact log EI, block by block, while the bound of the next candidate can still make the top.
    constexpr Eigen::Index block = 128;
    const std::size_t exact_limit = std::min(order.size(), exact_at_most);
    for (std::size_t start = 0; start < exact_limit;) {
        if (top.size() >= keep && upper[static_cast<std::size_t>(order[start])] <= top.back().first) break;
        const std::size_t stop = std::min(exact_limit, start + static_cast<std::size_t>(block));
        const std::vector<Eigen::Index> rows(order.begin() + static_cast<std::ptrdiff_t>(start),
                                             order.begin() + static_cast<std::ptrdiff_t>(stop));
        exact_variances(s, rows);
        const Eigen::VectorXd feasible =
            feasibility_ ? feasibility_->exact(rows) : Eigen::VectorXd::Zero(static_cast<Eigen::Index>(rows.size()));
        for (std::size_t k = start; k < stop; ++k) {
            const auto r = static_cast<Eigen::Index>(k - start);
            top.emplace_back(value(mean[order[k]], s.exact_variance[static_cast<std::size_t>(order[k])]) + feasible[r],
                             order[k]);
        }
        std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) {
            return a.first > b.first || (a.first == b.first && a.second < b.second);
        });
        if (top.size() > keep) top.resize(keep);
        start = stop;
    }
    return top;
}

HYPERTUNE_INLINE double GpAcquisition::at(const Eigen::VectorXd& features, Eigen::VectorXd& grad) const {
    double value = 0.0;
    Eigen::VectorXd g = Eigen::VectorXd::Zero(features.size());
    if (function_.kind == AcquisitionFunction::Kind::LowerConfidenceBound) {
        double mean = 0.0, var = 0.0;
        Eigen::VectorXd dmean, dvar;
        gp_.predict_with_gradient(features, mean, var, dmean, dvar);
        const double sd = sd_of(var);
        const Eigen::VectorXd dsd = var > 1e-16 ? Eigen::VectorXd(dvar / (2.0 * sd)) : Eigen::VectorXd::Zero(dvar.size());
        value = function_.kappa * sd - mean;
        g = function_.kappa * dsd - dmean;
    } else if (best_) {
        double mean = 0.0, var = 0.0;
        Eigen::VectorXd dmean, dvar;
        gp_.predict_with_gradient(features, mean, var, dmean, dvar);
        double sd = sd_of(var);
        Eigen::VectorXd dsd = var > 1e-16 ? Eigen::VectorXd(dvar / (2.0 * sd)) : Eigen::VectorXd::Zero(dvar.size());
        const double zz = (*best_ - mean) / sd;
        const auto lh = log_h(zz);
        value = std::log(sd) + lh.log_h;
        // d log EI = dsd / sd + ratio * dz,  dz = (-dmean - z dsd) / sd
        g = dsd / sd + lh.ratio * ((-dmean - zz * dsd) / sd);
    }
    if (feasibility_) {
        Eigen::VectorXd gf;
        value += feasibility_->at(features, gf);
        g += gf;
    }
    grad = std::move(g);
    return value;
}

HYPERTUNE_INLINE void GpAcquisition::exact_variances(Screened& s, const std::vector<Eigen::Index>& rows) const {
    std::vector<Eigen::Index> missing;
    for (const Eigen::Index i : rows)
        if (std::isnan(s.exact_variance[static_cast<std::size_t>(i)])) missing.push_back(i);
    if (missing.empty()) return;
    Eigen::MatrixXd sub(static_cast<Eigen::Index>(missing.size()), s.features.cols());
    for (std::size_t k = 0; k < missing.size(); ++k) sub.row(static_cast<Eigen::Index>(k)) = s.features.row(missing[k]);
    const Eigen::VectorXd var = gp_.variance_from(gp_.cross_kernel(sub));
    for (std::size_t k = 0; k < missing.size(); ++k)
        s.exact_variance[static_cast<std::size_t>(missing[k])] = var[static_cast<Eigen::Index>(k)];
}

}  // namespace hypertune::detail
