// SPDX-License-Identifier: MIT
#pragma once
// RungRanking: how one rung of asynchronous successive halving ranks the trials recorded there,
// in one of two ways fixed for the run.
// - By loss (one objective, no constraints): the rank values sit in a SplitHeap split at
//   q = floor(m / eta) of the m recorded; a trial is in the top 1/eta when its value is <= the
//   q-th smallest (the cut-off), ties going to the trial. O(log m) a record, O(1) a question.
// - By Pareto priority (several objectives, or constraints): MO-ASHA (Schmucker, Donini, Zafar,
//   Salinas, Archambeau, "Multi-objective Asynchronous Successive Halving", 2021). Every recorded
//   loss vector is kept and ranked by priority_order() (pareto.hpp): feasible trials first, then
//   non-dominated rank, then crowding distance (NSGA-II's tie-break: the ends and sparse parts of
//   a front first), then the earlier record. A trial is in the top 1/eta when fewer than q trials
//   rank strictly before it: those placed before it in that order, less those with the same
//   feasibility and the same loss vector, which tie with it (ties go to the trial, as by loss, so
//   that a constraint every trial meets changes no decision). The order is recomputed when asked
//   after a record (O(d m^2) at worst, far less in practice): well under a millisecond for the
//   few hundred trials a rung of a multi-objective run holds.
// A NaN loss ranks worst (in each coordinate).

#include <hypertune/linkage.hpp>
#include <hypertune/detail/split_heap.hpp>
#include <hypertune/strategy.hpp>

#include <cstddef>
#include <limits>
#include <unordered_map>
#include <vector>

namespace hypertune::detail {

class RungRanking {
public:
    RungRanking() = default;
    /// @param eta     the top 1/eta is kept
    /// @param pareto  rank by Pareto priority (each report's `losses` and `feasible`), not by loss
    RungRanking(std::size_t eta, bool pareto) : eta_(eta), pareto_(pareto) {}

    /// Records trial `id` here (once per trial and rung).
    void record(TrialId id, const IntermediateReport& report) {
        if (pareto_) return record_pareto(id, report);
        // By loss, the path of every report that reaches a rung: kept here so that it inlines.
        values_.insert(rank_value(report.loss));
        values_.set_lower_size(values_.size() / eta_);
    }

    [[nodiscard]] bool pareto() const noexcept { return pareto_; }
    /// How many trials are recorded here (m).
    [[nodiscard]] std::size_t size() const noexcept { return pareto_ ? ids_.size() : values_.size(); }
    /// The size of the top 1/eta: q = floor(m / eta).
    [[nodiscard]] std::size_t top_size() const noexcept { return size() / eta_; }

    /// Whether trial `id`, recorded here with rank value `value` (rank_value of its loss), is in
    /// the top 1/eta now: by loss, value <= the cut-off + `tolerance` (the rungs' noise tolerance,
    /// detail/report_noise.hpp; 0 by Pareto priority, where no single value decides). False while
    /// q == 0.
    [[nodiscard]] bool in_top(TrialId id, double value, double tolerance = 0.0) {
        if (top_size() == 0) return false;
        return pareto_ ? ahead_of(id, value) < top_size() : value <= values_.lower_max() + tolerance;
    }

    /// By loss: the q-th smallest rank value, the value to beat; NaN while q == 0 and by Pareto
    /// priority (no single value decides there).
    [[nodiscard]] double cutoff() const noexcept {
        return !pareto_ && values_.lower_size() > 0 ? values_.lower_max() : std::numeric_limits<double>::quiet_NaN();
    }

    /// How many recorded trials rank strictly before recorded trial `id` (rank value `value`):
    /// by loss, the losses strictly lower (O(m)); by Pareto priority, the place of the first trial
    /// that ties with it (the same feasibility and loss vector; itself when none does).
    [[nodiscard]] std::size_t ahead_of(TrialId id, double value);

    /// Whether fewer than `k` recorded trials rank strictly before recorded trial `id` (rank value
    /// `value`): ahead_of(id, value) < k, without counting. By loss, `value` against the k-th
    /// smallest, the split of the heap moved there and back: O((k - top_size()) log m).
    [[nodiscard]] bool within(TrialId id, double value, std::size_t k);

    /// Whether recorded trial `a` (rank value `va`) ranks before recorded trial `b` (value `vb`).
    [[nodiscard]] bool before(TrialId a, double va, TrialId b, double vb);

    /// By Pareto priority: the recorded trials, best first.
    [[nodiscard]] const std::vector<TrialId>& order();

private:
    void record_pareto(TrialId id, const IntermediateReport& report);
    void sort();  // brings order_ and place_ up to date

    std::size_t eta_ = 3;
    bool pareto_ = false;
    SplitHeap values_;  // by loss
    // by Pareto priority
    std::vector<TrialId> ids_;
    std::vector<std::vector<double>> points_;
    std::vector<bool> feasible_;
    std::vector<TrialId> order_;
    std::unordered_map<TrialId, std::size_t> place_;  // in order_
    std::unordered_map<TrialId, std::size_t> ahead_;  // ahead_of(): the place of its first tie
    bool sorted_ = true;
};

/// For a record's reason: said when `value` made the top 1/eta only by the noise tolerance (it is
/// above the cut-off); "" otherwise. The values stay out of the text, as in every reason: the
/// record holds the value and the cut-off.
[[nodiscard]] inline const char* tolerance_note(double value, double cutoff, double tolerance) noexcept {
    return tolerance > 0 && value > cutoff ? ", within the noise tolerance of the cut-off" : "";
}

}  // namespace hypertune::detail

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/detail/rung_ranking.hpp>
#endif
