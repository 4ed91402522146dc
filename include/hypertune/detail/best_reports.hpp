// SPDX-License-Identifier: MIT
#pragma once
// BestReports: each trial's lowest loss reported so far, for RankBy::BestReport. judged() gives the
// report, or the outcome of a run segment, that a rung judges: the same with its loss (and its
// only objective's loss) replaced by the trial's best so far. The stop type judges reports, the
// promotion type and synchronous Hyperband the outcome of the segment that ends at a rung. A
// non-finite loss passes through unchanged (the rungs count it as a failure) and does not enter
// the best. A resumed run rebuilds it: its replay reports and tells again.

#include <hypertune/strategies/rank_by.hpp>
#include <hypertune/strategy.hpp>
#include <hypertune/types.hpp>

#include <cmath>
#include <unordered_map>

namespace hypertune::detail {

class BestReports {
public:
    /// `report`: an IntermediateReport or an Outcome.
    template <class Report>
    [[nodiscard]] Report judged(TrialId id, Report report) {
        if (!std::isfinite(report.loss)) return report;
        auto [at, fresh] = best_.try_emplace(id, report.loss);
        if (!fresh && report.loss < at->second) at->second = report.loss;
        report.loss = at->second;
        if (report.losses.size() == 1) report.losses[0] = at->second;
        return report;
    }
    /// Calls rung(r) with the report (or outcome) r that a rung judges under `rank_by`: `report`
    /// itself for RankBy::LastReport, without a copy (every report and tell of ASHA and Hyperband
    /// passes here), or judged(id, report) for RankBy::BestReport.
    template <class Report, class Rung>
    decltype(auto) with_judged(RankBy rank_by, TrialId id, const Report& report, Rung&& rung) {
        if (rank_by == RankBy::BestReport) return rung(judged(id, report));
        return rung(report);
    }

    void clear() { best_.clear(); }

private:
    std::unordered_map<TrialId, double> best_;
};

}  // namespace hypertune::detail
