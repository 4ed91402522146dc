// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/strategies/asha.hpp>: the ladder behind ASHA, held in ASHA::Rungs.
// Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/strategies/asha.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/detail/best_reports.hpp>
#include <hypertune/detail/halving_rungs.hpp>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/strategies/asha.hpp> is compiled into hypertune::compiled: include <hypertune/strategies/asha.hpp>"
#endif

namespace hypertune {

struct ASHA::Rungs {
    detail::HalvingRungs ladder;
    detail::BestReports best;  // RankBy::BestReport
};

HYPERTUNE_INLINE ASHA::ASHA(AshaOptions options, AnySampler sampler)
    : Scheduler(std::move(sampler)), options_(options) {
    detail::validate_rung_options("ASHA", "reduction_factor", options_.min_resource, options_.max_resource,
                                  options_.reduction_factor);
    detail::validate_halving_rules("ASHA", options_.type, options_.wait_for_peers, options_.fill_idle_workers,
                                   options_.min_rung_results);
    detail::validate_noise_tolerance("ASHA", options_.noise_tolerance);
    rungs_ = detail::geometric_rungs(options_.min_resource, options_.max_resource, options_.reduction_factor);
}

HYPERTUNE_INLINE ASHA::ASHA(const ASHA&) = default;
HYPERTUNE_INLINE ASHA::ASHA(ASHA&&) = default;
HYPERTUNE_INLINE ASHA& ASHA::operator=(const ASHA&) = default;
// A copy: the defaulted move would leave a self-moved ASHA without its schedule (its vectors
// moved into themselves), and a move-assigned scheduler is rare enough not to need the speed.
HYPERTUNE_INLINE ASHA& ASHA::operator=(ASHA&& other) {
    if (this != &other) *this = static_cast<const ASHA&>(other);
    return *this;
}
HYPERTUNE_INLINE ASHA::~ASHA() = default;

HYPERTUNE_INLINE Settings ASHA::settings() const {
    Settings s = detail::halving_settings(options_.min_resource, "reduction_factor", options_.reduction_factor,
                                          options_.type, options_.wait_for_peers,
                                          detail::fills_idle_workers(options_.type, options_.fill_idle_workers),
                                          options_.rank_by, options_.min_rung_results, options_.noise_tolerance);
    for (auto& setting : Scheduler::settings()) s.push_back(std::move(setting));
    return s;
}

HYPERTUNE_INLINE void ASHA::on_start() {
    detail::validate_rank_by("ASHA", options_.rank_by, context().objectives);
    detail::validate_noise_tolerance("ASHA", options_.noise_tolerance, context().objectives, context().constrained);
    Rungs& r = *rung_state_;
    r.best.clear();
    r.ladder = detail::HalvingRungs(options_.type, {rungs_}, {-1}, options_.reduction_factor, options_.max_resource,
                                    options_.wait_for_peers,
                                    detail::fills_idle_workers(options_.type, options_.fill_idle_workers),
                                    context().objectives, context().constrained);
    r.ladder.set_min_rung_results(options_.min_rung_results);
    r.ladder.set_noise_tolerance(options_.noise_tolerance);
}

HYPERTUNE_INLINE Suggestion ASHA::next(const TrialBudget& budget) {
    Suggestion s = rung_state_->ladder.next(
        [&] { return std::pair{start_new(budget, options_.max_resource), std::size_t{0}}; }, made_,
        budget.allows_new());
    decide_all(made_);
    return s;
}

HYPERTUNE_INLINE Decision ASHA::on_report_losses(TrialId id, Resource step, const IntermediateReport& report) {
    Rungs& r = *rung_state_;
    const Decision d = r.best.with_judged(options_.rank_by, id, report, [&](const IntermediateReport& judged) {
        return r.ladder.report("ASHA", id, step, judged, made_);
    });
    decide_all(made_);
    return d;
}

HYPERTUNE_INLINE void ASHA::on_tell(TrialId id, const Outcome& outcome) {
    Rungs& r = *rung_state_;
    r.best.with_judged(options_.rank_by, id, outcome,
                       [&](const Outcome& judged) { r.ladder.finish(id, judged, made_); });
    decide_all(made_);
}

HYPERTUNE_INLINE std::vector<Resource> ASHA::fidelity_levels() const {
    std::vector<Resource> levels = rungs_;
    levels.push_back(options_.max_resource);
    return levels;
}

}  // namespace hypertune
