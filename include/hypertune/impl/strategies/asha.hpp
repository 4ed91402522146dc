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
    ladder_ = detail::HalvingRungs(options_.type, {rungs_}, {-1}, options_.reduction_factor,
                                        options_.max_resource, options_.wait_for_peers);
}

HYPERTUNE_INLINE Suggestion ASHA::next(const TrialBudget& budget) {
    made_.clear();
    if (auto r = ladder_.resume(made_)) {
        pass_on_decisions();
        return Suggestion::run(r->trial, std::move(r->config), r->to, r->from);
    }
    Suggestion s = start_new(budget, options_.max_resource);
    if (s.runs()) {
        s.budget = ladder_.add_trial(s.trial, 0, s.config);
        return s;
    }
    s = ladder_.nothing_new(std::move(s), made_);
    pass_on_decisions();
    return s;
}

HYPERTUNE_INLINE Decision ASHA::on_report(TrialId id, Resource step, double loss) {
    made_.clear();  // kept between calls: no allocation per decision
    const Decision d = ladder_.report(id, step, loss, made_);
    pass_on_decisions();
    return d;
}

HYPERTUNE_INLINE void ASHA::on_tell(TrialId id, const Outcome& outcome) {
    made_.clear();
    ladder_.finish(id, outcome, made_);
    pass_on_decisions();
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
