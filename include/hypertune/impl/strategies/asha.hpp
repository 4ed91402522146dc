// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/strategies/asha.hpp>: the ladder behind ASHA.
// Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/strategies/asha.hpp>
#include <hypertune/linkage.hpp>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/strategies/asha.hpp> is compiled into hypertune::compiled: include <hypertune/strategies/asha.hpp>"
#endif

namespace hypertune {

HYPERTUNE_INLINE void ASHA::on_start() {
    if (options_.type == HalvingType::Stop)
        ladder_ = detail::StopRungs({rungs_}, {-1}, options_.reduction_factor, options_.max_resource);
    else
        promotions_ = detail::PromotionRungs({rungs_}, {-1}, options_.reduction_factor, options_.max_resource);
    configs_.clear();
}

HYPERTUNE_INLINE Suggestion ASHA::next(const TrialBudget& budget) {
    if (options_.type == HalvingType::Stop) {
        Suggestion s = start_new(budget, options_.max_resource);
        if (s.runs()) ladder_.add_trial(s.trial, 0);
        return s;
    }
    made_.clear();
    if (auto p = promotions_.promote(made_)) {
        pass_on_decisions();
        return Suggestion::run(p->trial, configs_.at(p->trial), p->to, p->from);
    }
    Suggestion s = start_new(budget, rungs_.front());
    if (s.runs()) {
        (void)promotions_.add_trial(s.trial, 0);
        configs_.emplace(s.trial, s.config);
        return s;
    }
    // Trials still running may make a paused one promotable when they end.
    return promotions_.running() > 0 ? Suggestion::wait() : s;
}

HYPERTUNE_INLINE Decision ASHA::on_report(TrialId id, Resource step, double loss) {
    made_.clear();  // kept between calls: no allocation per decision
    const Decision d = options_.type == HalvingType::Stop ? ladder_.report(id, step, loss, made_)
                                                          : promotions_.report(id, step, loss, made_);
    pass_on_decisions();
    return d;
}

HYPERTUNE_INLINE void ASHA::on_tell(TrialId id, const Outcome& outcome) {
    if (options_.type == HalvingType::Stop) {
        ladder_.finish(id, outcome);
        return;
    }
    made_.clear();
    promotions_.finish(id, outcome, made_);
    const bool paused = !made_.empty() && made_.back().kind == DecisionRecord::Kind::Pause;
    pass_on_decisions();
    if (!paused) configs_.erase(id);
}

HYPERTUNE_INLINE void ASHA::pass_on_decisions() {
    for (DecisionRecord& r : made_) decide(std::move(r));
    made_.clear();
}

HYPERTUNE_INLINE std::vector<Resource> ASHA::fidelity_levels() const {
    std::vector<Resource> levels = rungs_;
    levels.push_back(options_.max_resource);
    return levels;
}

}  // namespace hypertune
