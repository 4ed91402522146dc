// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/detail/rung_ranking.hpp>.
// Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/detail/rung_ranking.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/pareto.hpp>

#include <map>
#include <utility>
#include <vector>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/detail/rung_ranking.hpp> is compiled into hypertune::compiled: include <hypertune/detail/rung_ranking.hpp>"
#endif

namespace hypertune::detail {

HYPERTUNE_INLINE void RungRanking::record_pareto(TrialId id, const IntermediateReport& report) {
    std::vector<double> point = report.losses.empty() ? std::vector<double>{report.loss} : report.losses;
    for (double& x : point) x = rank_value(x);
    ids_.push_back(id);
    points_.push_back(std::move(point));
    feasible_.push_back(report.feasible);
    sorted_ = false;
}

HYPERTUNE_INLINE std::size_t RungRanking::ahead_of(TrialId id, double value) {
    if (!pareto_) return values_.count_below(value);
    sort();
    return ahead_.at(id);
}

HYPERTUNE_INLINE bool RungRanking::within(TrialId id, double value, std::size_t k) {
    if (k == 0) return false;
    if (pareto_) return ahead_of(id, value) < k;
    if (k >= values_.size()) return true;  // at most m - 1 values can be ahead of a recorded one
    values_.set_lower_size(k);
    const bool in = value <= values_.lower_max();  // the k-th smallest is not below it
    values_.set_lower_size(top_size());
    return in;
}

HYPERTUNE_INLINE bool RungRanking::before(TrialId a, double va, TrialId b, double vb) {
    if (!pareto_) return va < vb || (va == vb && a < b);
    sort();
    return place_.at(a) < place_.at(b);
}

HYPERTUNE_INLINE const std::vector<TrialId>& RungRanking::order() {
    sort();
    return order_;
}

HYPERTUNE_INLINE void RungRanking::sort() {
    if (sorted_) return;
    const std::vector<std::size_t> by = priority_order(points_, feasible_);
    order_.clear();
    place_.clear();
    ahead_.clear();
    std::map<std::pair<bool, std::vector<double>>, std::size_t> first_place;  // of each distinct report
    for (std::size_t i = 0; i < by.size(); ++i) {
        const TrialId id = ids_[by[i]];
        order_.push_back(id);
        place_[id] = i;
        ahead_[id] = first_place.try_emplace({feasible_[by[i]], points_[by[i]]}, i).first->second;
    }
    sorted_ = true;
}

}  // namespace hypertune::detail
