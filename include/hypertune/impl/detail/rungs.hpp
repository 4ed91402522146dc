// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/detail/rungs.hpp>: rung options, the stop-type rungs.
// Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/detail/rungs.hpp>
#include <hypertune/linkage.hpp>
#include <fmt/format.h>
#include <algorithm>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/detail/rungs.hpp> is compiled into hypertune::compiled: include <hypertune/detail/rungs.hpp>"
#endif

namespace hypertune::detail {

HYPERTUNE_INLINE void validate_rung_options(std::string_view who, std::string_view factor_name, Resource min_resource,
                                  Resource max_resource, int factor) {
    if (min_resource < 1)
        throw InvalidArgument(fmt::format("{}: min_resource must be >= 1, got {}", who, min_resource));
    if (max_resource <= min_resource)
        throw InvalidArgument(
            fmt::format("{}: max_resource must be > min_resource, got max_resource = {} and "
                        "min_resource = {}",
                        who, max_resource, min_resource));
    if (factor < 2) throw InvalidArgument(fmt::format("{}: {} must be >= 2, got {}", who, factor_name, factor));
}

HYPERTUNE_INLINE std::vector<Resource> geometric_rungs(Resource min_resource, Resource max_resource, int factor) {
    std::vector<Resource> rungs;
    for (Resource r = min_resource; r < max_resource; r *= factor) {
        rungs.push_back(r);
        if (r > max_resource / factor) break;  // the next one is >= max_resource (and might overflow)
    }
    return rungs;
}

HYPERTUNE_INLINE Decision StopRungs::report(TrialId id, Resource step, double loss, std::vector<DecisionRecord>& out) {
    auto it = trials_.find(id);
    if (it == trials_.end()) return Decision::Continue;
    TrialState& t = it->second;
    if (t.stopped) return Decision::Stop;
    if (step <= t.last_step) return Decision::Continue;
    t.last_step = step;
    if (step > max_resource_) {
        t.stopped = true;
        out.push_back(DecisionRecord{id, DecisionRecord::Kind::Stop, labels_[t.bracket], -1, step, loss,
                                     std::numeric_limits<double>::quiet_NaN(), 0,
                                     fmt::format("step {} exceeds max_resource {}", step, max_resource_)});
        return Decision::Stop;
    }
    auto rung = advance(t, step);
    if (rung < 0) return Decision::Continue;
    return decide(id, t, static_cast<std::size_t>(rung), loss, &out);
}

HYPERTUNE_INLINE void StopRungs::finish(TrialId id, const Outcome& outcome) {
    auto it = trials_.find(id);
    if (it == trials_.end()) return;
    TrialState& t = it->second;
    if (outcome.status != Outcome::Status::Failed && !t.stopped && outcome.resource > t.last_step &&
        outcome.resource <= max_resource_) {
        auto rung = advance(t, outcome.resource);
        if (rung >= 0) (void)decide(id, t, static_cast<std::size_t>(rung), outcome.loss, nullptr);
    }
    trials_.erase(it);
}

HYPERTUNE_INLINE std::vector<Resource> StopRungs::rung_resources(std::size_t b) const {
    std::vector<Resource> r;
    for (const auto& rung : ladders_.at(b)) r.push_back(rung.resource);
    return r;
}

HYPERTUNE_INLINE std::size_t StopRungs::recorded(std::size_t b, std::size_t rung) const {
    return ladders_.at(b).at(rung).values.size();
}

HYPERTUNE_INLINE std::ptrdiff_t StopRungs::advance(TrialState& t, Resource step) const {
    const auto& ladder = ladders_[t.bracket];
    std::size_t from = t.next_rung;
    while (t.next_rung < ladder.size() && ladder[t.next_rung].resource <= step) ++t.next_rung;
    return t.next_rung > from ? static_cast<std::ptrdiff_t>(t.next_rung - 1) : -1;
}

}  // namespace hypertune::detail
