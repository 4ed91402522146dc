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
    std::vector<Resource> rungs{min_resource};
    // The next rung r * factor is taken while r * factor * factor <= max_resource (integer division:
    // no overflow).
    for (Resource r = min_resource; r <= max_resource / factor / factor; r *= factor) rungs.push_back(r * factor);
    return rungs;
}

HYPERTUNE_INLINE Decision StopRungs::report(TrialId id, Resource step, const IntermediateReport& report,
                                            std::vector<DecisionRecord>& out) {
    TrialState* found = trials_.find(id);
    if (found == nullptr) return Decision::Continue;
    TrialState& t = *found;
    if (t.stopped) return Decision::Stop;
    if (step <= t.last_step) return Decision::Continue;
    t.last_step = step;
    if (step > max_resource_) {
        t.stopped = true;
        out.push_back(DecisionRecord{id, DecisionRecord::Kind::Stop, labels_[t.bracket], -1, step, report.loss,
                                     std::numeric_limits<double>::quiet_NaN(), 0,
                                     str_cat({"step ", step, " exceeds max_resource ", max_resource_})});
        return Decision::Stop;
    }
    auto rung = advance(t, step);
    if (rung < 0) return Decision::Continue;
    return decide(id, t, static_cast<std::size_t>(rung), report, &out);
}

HYPERTUNE_INLINE void StopRungs::finish(TrialId id, const Outcome& outcome, std::vector<DecisionRecord>& out) {
    TrialState* found = trials_.find(id);
    if (found == nullptr || !found->running) return;
    TrialState& t = *found;
    t.running = false;
    --running_;
    // A held trial that trained on to max_resource all the same (its trainer ignored the stop) has
    // nothing left to resume: it leaves its rung's waiting list, as a failed one does.
    const bool trained_in_full = outcome.resource >= max_resource_;
    if ((t.held || t.cleared) && !t.over && outcome.status != Outcome::Status::Failed && !trained_in_full) {
        // Paused at the rung it was held at, until judged (or, cleared, until a worker is free).
        const Rung& rung = ladders_[t.bracket][t.rung];
        t.reached = std::max(outcome.resource, rung.resource);
        out.push_back(DecisionRecord{
            id, DecisionRecord::Kind::Pause, labels_[t.bracket], static_cast<int>(t.rung), t.reached, outcome.loss,
            std::numeric_limits<double>::quiet_NaN(), rung.ranking.size(),
            t.cleared ? str_cat({"in the top 1/", eta_, " at resource ", rung.resource, " once ", eta_,
                                 " trials reached it: runs again when a worker is free"})
                      : str_cat({"one of the first ", rung.ranking.size(), " at resource ", rung.resource,
                                 " (fewer than eta = ", eta_, "): waits for more trials to reach it"})});
        if (t.cleared) cleared_.push_back(id);
        return;
    }
    if (t.held) {  // failed (or trained in full) while held: it leaves the rung's waiting list
        auto& held = ladders_[t.bracket][t.rung].held;
        held.erase(std::remove(held.begin(), held.end(), id), held.end());
    }
    stop_waiting(t);
    if (outcome.status != Outcome::Status::Failed && !t.stopped && outcome.resource > t.last_step &&
        outcome.resource <= max_resource_) {
        auto rung = advance(t, outcome.resource);
        if (rung >= 0) {
            const auto k = static_cast<std::size_t>(rung);
            (void)decide(id, t, k, IntermediateReport{outcome.loss, outcome.losses, outcome.feasible}, nullptr);
            // Its value may be the eta-th at that rung: what is held there can be judged now.
            const Rung& reached = ladders_[t.bracket][k];
            if (!reached.held.empty() && reached.ranking.top_size() > 0) judge_held(t.bracket, k, out);
        }
    }
    trials_.erase(id);
}

HYPERTUNE_INLINE void StopRungs::judge_held(std::size_t bracket, std::size_t rung_index,
                                            std::vector<DecisionRecord>& out) {
    Rung& rung = ladders_[bracket][rung_index];
    const double cutoff = rung.ranking.cutoff();
    const std::size_t m = rung.ranking.size();
    const std::size_t q = rung.ranking.top_size();
    for (TrialId id : rung.held) {
        TrialState& t = trials_.at(id);
        if (rung.ranking.in_top(id, t.value, tolerance_)) {
            t.held = false;
            t.cleared = true;
            if (!t.running) cleared_.push_back(id);  // paused already; else at finish()
            continue;
        }
        stop_waiting(t);
        out.push_back(DecisionRecord{id, DecisionRecord::Kind::Stop, labels_[bracket], static_cast<int>(rung_index),
                                     rung.resource, t.value, cutoff, m,
                                     str_cat({"held at resource ", rung.resource, " until ", eta_,
                                              " trials reached it: not in the top 1/", eta_, " (", q, " of ", m, ")",
                                              by_what(rung)})});
        if (t.running)
            t.over = true;  // forgotten when its run ends
        else
            trials_.erase(id);
    }
    rung.held.clear();
}

HYPERTUNE_INLINE std::optional<Resumption> StopRungs::resume(std::vector<DecisionRecord>& out) {
    if (cleared_.empty()) return std::nullopt;
    const TrialId id = cleared_.front();
    cleared_.pop_front();
    TrialState& t = trials_.at(id);
    const Rung& rung = ladders_[t.bracket][t.rung];
    stop_waiting(t);
    t.stopped = false;
    t.running = true;
    t.last_step = t.reached;
    ++running_;
    out.push_back(DecisionRecord{id, DecisionRecord::Kind::Promote, labels_[t.bracket], static_cast<int>(t.rung),
                                 rung.resource, t.value, rung.ranking.cutoff(), rung.ranking.size(),
                                 str_cat({"in the top 1/", eta_, " at resource ", rung.resource, " once ", eta_,
                                          " trials reached it", tolerance_note(t.value, rung.ranking.cutoff(), tolerance_),
                                          ": resumes from ", t.reached, " to ", max_resource_})});
    return Resumption{id, *t.config, t.reached, max_resource_};
}

HYPERTUNE_INLINE std::optional<Resumption> StopRungs::release(std::vector<DecisionRecord>& out) {
    // The highest rung where trials are held (paused: nothing runs when this is called).
    Rung* top = nullptr;
    std::size_t top_bracket = 0, top_index = 0;
    for (std::size_t b = 0; b < ladders_.size(); ++b)
        for (std::size_t k = 0; k < ladders_[b].size(); ++k) {
            Rung& rung = ladders_[b][k];
            if (!rung.held.empty() && (top == nullptr || rung.resource > top->resource)) {
                top = &rung;
                top_bracket = b;
                top_index = k;
            }
        }
    if (top == nullptr) return std::nullopt;
    TrialId best = top->held.front();
    for (TrialId id : top->held)
        if (top->ranking.before(id, trials_.at(id).value, best, trials_.at(best).value)) best = id;
    const std::size_t m = top->ranking.size();
    for (TrialId id : top->held) {
        if (id == best) continue;
        TrialState& t = trials_.at(id);
        stop_waiting(t);
        out.push_back(DecisionRecord{id, DecisionRecord::Kind::Stop, labels_[top_bracket], static_cast<int>(top_index),
                                     top->resource, t.value, trials_.at(best).value, m,
                                     str_cat({"held at resource ", top->resource, ", which fewer than ", eta_,
                                              " trials reached: not the best of the ", m, " there"})});
        trials_.erase(id);
    }
    top->held.clear();
    TrialState& t = trials_.at(best);
    stop_waiting(t);
    t.stopped = false;
    t.running = true;
    t.last_step = t.reached;
    ++running_;
    out.push_back(DecisionRecord{best, DecisionRecord::Kind::Promote, labels_[top_bracket],
                                 static_cast<int>(top_index), top->resource, t.value,
                                 std::numeric_limits<double>::quiet_NaN(), m,
                                 str_cat({"the best of the ", m, " held at resource ", top->resource,
                                          ", which fewer than ", eta_, " trials reached and no more will: resumes from ",
                                          t.reached, " to ", max_resource_})});
    return Resumption{best, *t.config, t.reached, max_resource_};
}

HYPERTUNE_INLINE std::vector<Resource> StopRungs::rung_resources(std::size_t b) const {
    std::vector<Resource> r;
    for (const auto& rung : ladders_.at(b)) r.push_back(rung.resource);
    return r;
}

HYPERTUNE_INLINE std::size_t StopRungs::recorded(std::size_t b, std::size_t rung) const {
    return ladders_.at(b).at(rung).ranking.size();
}

HYPERTUNE_INLINE std::ptrdiff_t StopRungs::advance(TrialState& t, Resource step) const {
    const auto& ladder = ladders_[t.bracket];
    std::size_t from = t.next_rung;
    while (t.next_rung < ladder.size() && ladder[t.next_rung].resource <= step) ++t.next_rung;
    return t.next_rung > from ? static_cast<std::ptrdiff_t>(t.next_rung - 1) : -1;
}

}  // namespace hypertune::detail
