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
    ladder_ = detail::StopRungs({rungs_}, {-1}, options_.reduction_factor, options_.max_resource);
}

HYPERTUNE_INLINE Decision ASHA::on_report(TrialId id, Resource step, double loss) {
    made_.clear();  // kept between reports: no allocation per decision
    const Decision d = ladder_.report(id, step, loss, made_);
    for (DecisionRecord& r : made_) decide(std::move(r));
    return d;
}

HYPERTUNE_INLINE std::vector<Resource> ASHA::fidelity_levels() const {
    std::vector<Resource> levels = rungs_;
    levels.push_back(options_.max_resource);
    return levels;
}

}  // namespace hypertune
