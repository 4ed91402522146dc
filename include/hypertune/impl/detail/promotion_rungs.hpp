// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/detail/promotion_rungs.hpp>: promotion-type successive halving.
// Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/detail/promotion_rungs.hpp>
#include <hypertune/linkage.hpp>
#include <fmt/format.h>
#include <algorithm>
#include <limits>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/detail/promotion_rungs.hpp> is compiled into hypertune::compiled: include <hypertune/detail/promotion_rungs.hpp>"
#endif

namespace hypertune::detail {

HYPERTUNE_INLINE PromotionRungs::PromotionRungs(const std::vector<std::vector<Resource>>& brackets,
                                                std::vector<int> labels, int eta, Resource max_resource,
                                                bool pareto)
    : labels_(std::move(labels)), eta_(static_cast<std::size_t>(eta)), max_resource_(max_resource) {
    ladders_.resize(brackets.size());
    for (std::size_t b = 0; b < brackets.size(); ++b)
        for (Resource r : brackets[b]) ladders_[b].push_back(Rung{r, RungRanking(eta_, pareto), {}, 0});
}

HYPERTUNE_INLINE std::optional<std::pair<double, TrialId>> PromotionRungs::promotable(Rung& rung) {
    if (rung.ranking.top_size() == 0) return std::nullopt;  // nothing in the top yet: no scan
    const auto best = best_waiting(rung);
    return best && rung.ranking.in_top(best->second, best->first, tolerance_) ? best : std::nullopt;
}

HYPERTUNE_INLINE void PromotionRungs::run_towards(TrialId id, TrialState& t) {
    t.running = true;
    t.run_from = t.run_step = t.resumed_from = t.last_step;
    t.run_reported = false;
    t.started_over = false;
    t.first_seconds = std::numeric_limits<double>::quiet_NaN();  // this run's first report is to come
    t.at_budget.reset();
    t.running_slot = running_.size();
    running_.push_back(id);
    auto& ladder = ladders_[t.bracket];
    if (t.rung < ladder.size()) ++ladder[t.rung].arriving;
}

HYPERTUNE_INLINE Resource PromotionRungs::add_trial(TrialId id, std::size_t bracket, Config config) {
    TrialState t;
    t.bracket = bracket;
    t.budget = budget_at(bracket, 0);
    t.config = std::move(config);
    const Resource budget = t.budget;
    run_towards(id, trials_.insert(id, std::move(t)));
    return budget;
}

HYPERTUNE_INLINE std::optional<Resumption> PromotionRungs::promote(std::vector<DecisionRecord>& out,
                                                                   std::size_t at_least) {
    // The best candidate of each bracket is at its highest rung that has one; among brackets, the
    // one closest to max_resource goes first (the first bracket on ties).
    Rung* best_rung = nullptr;
    std::size_t best_bracket = 0;
    std::size_t best_index = 0;
    for (std::size_t b = 0; b < ladders_.size(); ++b) {
        auto& ladder = ladders_[b];
        for (std::size_t k = ladder.size(); k-- > 0;) {
            Rung& rung = ladder[k];
            if (rung.ranking.size() < at_least || !promotable(rung)) continue;
            if (best_rung == nullptr || rung.resource > best_rung->resource) {
                best_rung = &rung;
                best_bracket = b;
                best_index = k;
            }
            break;
        }
    }
    if (best_rung == nullptr) return std::nullopt;

    const auto [value, id] = *promotable(*best_rung);
    const std::size_t m = best_rung->ranking.size();
    return resume(best_bracket, best_index, value, id,
                  str_cat({"in the top 1/", eta_, " (", best_rung->ranking.top_size(), " of ", m, ") at resource ",
                           best_rung->resource, best_rung->ranking.pareto() ? " by Pareto priority" : "",
                           tolerance_note(value, best_rung->ranking.cutoff(), tolerance_)}),
                  out);
}

HYPERTUNE_INLINE std::optional<Resumption> PromotionRungs::speculate(std::vector<DecisionRecord>& out) {
    // The highest rung first (the closest to max_resource), as promote() does.
    std::vector<std::pair<std::size_t, std::size_t>> rungs;  // (bracket, index)
    for (std::size_t b = 0; b < ladders_.size(); ++b)
        for (std::size_t k = 0; k < ladders_[b].size(); ++k)
            if (!ladders_[b][k].waiting.empty()) rungs.emplace_back(b, k);
    highest_first(rungs);
    for (const auto& [b, k] : rungs) {
        Rung& rung = ladders_[b][k];
        const auto best = best_waiting(rung);
        if (!best) continue;
        const std::size_t m = rung.ranking.size();
        const std::size_t most = (m + rung.arriving) / eta_;  // the top 1/eta once all have arrived
        if (!rung.ranking.within(best->second, best->first, most)) continue;
        const std::size_t ahead = rung.ranking.ahead_of(best->second, best->first);  // for the record only
        return resume(b, k, best->first, best->second,
                      str_cat({"no new trial may start and a worker is free: ", ahead, " of ", m,
                               " ahead of it at resource ", rung.resource,
                               rung.ranking.pareto() ? " by Pareto priority" : "", ", ", rung.arriving,
                               " more on their way, so in the top 1/", eta_, " (", most, " of ", m + rung.arriving,
                               ") should they all rank behind it"}),
                      out);
    }
    // Nothing paused can still make its rung's top: the run lasts at least as long as its longest
    // running trial still needs, so a paused trial whose remaining units to max_resource take no
    // longer at its pace runs to the end at no cost in wall time, straight, recorded at no rung on
    // the way (so it makes no other trial promotable): a second chance for the best of the rest.
    const double horizon = running_horizon();
    for (const auto& [b, k] : rungs) {
        Rung& rung = ladders_[b][k];
        const Resource units = restarts_ ? max_resource_ : max_resource_ - rung.resource;
        const auto fits = [&](const TrialState& t) { return seconds_for(t, units) <= horizon; };
        const auto best = first_waiting(rung, fits);
        if (!best) continue;
        const char* from_start = restarts_ ? " (from unit 1: the trials keep no checkpoint)" : "";
        const std::string measure =
            !timed() ? str_cat({"its ", units, " units to the end", from_start, " within the ",
                                   static_cast<Resource>(horizon), " a running trial still needs"})
                        : str_cat({"its ", units, " units to the end", from_start, " take about ",
                                   fmt::format("{:.3g}", seconds_for(trials_.at(best->second), units)),
                                   " s at its pace, within the ", fmt::format("{:.3g}", horizon),
                                   " s a running trial still needs"});
        return resume(b, k, best->first, best->second,
                      str_cat({"no new trial may start and a worker is free: the best paused trial at resource ",
                               rung.resource, " that ends in time, ", measure}),
                      out, ladders_[b].size());
    }
    return std::nullopt;
}

HYPERTUNE_INLINE void PromotionRungs::highest_first(std::vector<std::pair<std::size_t, std::size_t>>& rungs) const {
    std::stable_sort(rungs.begin(), rungs.end(), [&](const auto& x, const auto& y) {
        return ladders_[x.first][x.second].resource > ladders_[y.first][y.second].resource;
    });
}

HYPERTUNE_INLINE double PromotionRungs::running_horizon() const {
    double horizon = 0.0;
    for (TrialId id : running_)
        if (const TrialState* t = trials_.find(id))
            horizon = std::max(horizon, static_cast<double>(t->budget - t->run_step) * running_pace(*t));
    return horizon;
}

HYPERTUNE_INLINE void PromotionRungs::measure_pace(TrialState& t, double seconds, Resource step, bool ended) noexcept {
    if (std::isnan(seconds) || seconds < 0 || step <= t.run_from) return;
    const double units = static_cast<double>(step - t.run_from);
    const double pace = seconds / units;
    pace_sum_ += std::isnan(t.pace) ? pace : pace - t.pace;
    if (std::isnan(t.pace)) ++paced_;
    t.pace = pace;
    t.pace_units = step - t.run_from;
    if (ended) {
        // Whatever the run spent beside its units at the marginal pace: set-up and the end.
        if (!std::isnan(t.marginal)) t.overhead = std::max(0.0, seconds - units * t.marginal);
        return;
    }
    if (std::isnan(t.first_seconds)) {
        t.first_step = step;
        t.first_seconds = seconds;
        return;
    }
    if (step <= t.first_step) return;
    t.marginal = std::max(0.0, (seconds - t.first_seconds) / static_cast<double>(step - t.first_step));
    const double setup = std::max(0.0, t.first_seconds - static_cast<double>(t.first_step - t.run_from) * t.marginal);
    setup_sum_ += std::isnan(t.setup) ? setup : setup - t.setup;
    if (std::isnan(t.setup)) ++set_up_;
    t.setup = setup;
}

HYPERTUNE_INLINE double PromotionRungs::running_pace(const TrialState& t) const noexcept {
    if (!timed()) return 1.0;
    if (!std::isnan(t.marginal)) return t.marginal;
    if (std::isnan(t.pace) || set_up_ == 0 || t.pace_units == 0) return pace_of(t);
    return std::max(0.0, t.pace - setup_sum_ / static_cast<double>(set_up_) / static_cast<double>(t.pace_units));
}

HYPERTUNE_INLINE double PromotionRungs::seconds_for(const TrialState& t, Resource units) const noexcept {
    if (!timed() || std::isnan(t.marginal) || std::isnan(t.overhead))
        return static_cast<double>(units) * pace_of(t);
    return t.overhead + static_cast<double>(units) * t.marginal;
}

HYPERTUNE_INLINE Resumption PromotionRungs::resume(std::size_t b, std::size_t k, double value, TrialId id,
                                                   std::string why, std::vector<DecisionRecord>& out,
                                                   std::optional<std::size_t> to) {
    Rung& rung = ladders_[b][k];
    rung.waiting.erase({value, id});
    ++rung.promoted;
    TrialState& t = trials_.at(id);
    t.rung = to.value_or(k + 1);
    t.last_step = std::max(t.last_step, rung.resource);  // it reached the rung, reported or not
    // A trainer that overran its rung's budget continues from where it got to (its checkpoint is
    // there); one that got past the next rung goes on to the first rung beyond it, unjudged at
    // those it overran (training them again from the rung would waste what it trained).
    const std::size_t next = t.rung;
    while (t.rung < ladders_[b].size() && budget_at(b, t.rung) <= t.last_step) ++t.rung;
    t.budget = budget_at(b, t.rung);
    const Resource from = t.last_step < t.budget ? t.last_step : rung.resource;
    t.last_step = from;
    run_towards(id, t);
    out.push_back(DecisionRecord{
        id, DecisionRecord::Kind::Promote, labels_[b], static_cast<int>(k), rung.resource, value,
        rung.ranking.cutoff(), rung.ranking.size(),
        str_cat({why, ": resumes from ", from, " to ", t.budget,
                 t.rung > next ? str_cat({" (it trained past ", budget_at(b, next), " already)"}) : std::string()})});
    return Resumption{id, t.config, from, t.budget};
}

HYPERTUNE_INLINE Decision PromotionRungs::report(TrialId id, Resource step, const IntermediateReport& report,
                                                 std::vector<DecisionRecord>& out) {
    TrialState* found = trials_.find(id);
    if (found == nullptr || !found->running) return Decision::Continue;
    TrialState& t = *found;
    if (!t.run_reported) {
        t.run_reported = true;
        // A first report at or below where it resumed: the trainer started over. The Tuner passes
        // on no step judged before, so when the objective is known to keep no checkpoint, the
        // first report of a resumed run counts its units from 0 too.
        t.started_over = step <= t.run_from;
        if (t.started_over || (restarts_ && t.resumed_from > 0)) t.run_from = t.run_step = 0;
    }
    t.run_step = std::max(t.run_step, step);
    measure_pace(t, report.seconds, step, false);
    if (step <= t.last_step) return Decision::Continue;
    t.last_step = step;
    if (step == t.budget) t.at_budget = report;
    if (step > max_resource_) {
        out.push_back(DecisionRecord{id, DecisionRecord::Kind::Stop, labels_[t.bracket], static_cast<int>(t.rung),
                                     step, report.loss, std::numeric_limits<double>::quiet_NaN(), 0,
                                     str_cat({"step ", step, " exceeds max_resource ", max_resource_})});
        return Decision::Stop;
    }
    // Past its rung's budget: the trainer overran; its outcome still counts at the rung.
    return step > t.budget ? Decision::Stop : Decision::Continue;
}

HYPERTUNE_INLINE void PromotionRungs::finish(TrialId id, const Outcome& outcome, std::vector<DecisionRecord>& out) {
    TrialState* found = trials_.find(id);
    if (found == nullptr || !found->running) return;
    TrialState& t = *found;
    // The whole run's time, with what the trainer did after its last report (saving its
    // checkpoint): the pace a promotion to max_resource will train at.
    if (outcome.status != Outcome::Status::Failed) {
        if (t.resumed_from > 0) {  // whether this objective's resumed trials continue: the latest says
            t.started_over = t.started_over || outcome.started_over;
            restarts_ = t.started_over;
            t.run_from = t.started_over ? 0 : t.resumed_from;
        }
        measure_pace(t, outcome.seconds, outcome.resource, true);
    }
    t.running = false;
    running_[t.running_slot] = running_.back();  // swap-remove: the last one takes its place
    trials_.at(running_.back()).running_slot = t.running_slot;
    running_.pop_back();
    auto& ladder = ladders_[t.bracket];
    if (t.rung < ladder.size()) --ladder[t.rung].arriving;
    const bool reached = outcome.status == Outcome::Status::Completed || outcome.resource >= t.budget;
    // Past its last rung, or trained in full already (an objective that cannot see its budget): over.
    if (outcome.status == Outcome::Status::Failed || !reached || t.rung >= ladder.size() ||
        outcome.resource >= max_resource_) {
        trials_.erase(id);
        return;
    }
    Rung& rung = ladder[t.rung];
    // Ranked as its peers are, at the rung's resource: on its report there when it went past it.
    const IntermediateReport judged = outcome.resource > t.budget && t.at_budget
                                          ? std::move(*t.at_budget)
                                          : IntermediateReport{outcome.loss, outcome.losses, outcome.feasible};
    t.at_budget.reset();
    const double value = rank_value(judged.loss);
    rung.ranking.record(id, judged);
    rung.waiting.emplace(value, id);
    t.loss = value;
    t.feasible = judged.feasible;
    out.push_back(DecisionRecord{
        id, DecisionRecord::Kind::Pause, labels_[t.bracket], static_cast<int>(t.rung), rung.resource, judged.loss,
        std::numeric_limits<double>::quiet_NaN(), rung.ranking.size(),
        str_cat({"until it ranks in the top 1/", eta_, " here"})});
}

HYPERTUNE_INLINE std::optional<Resumption> PromotionRungs::promote_at_end(std::vector<DecisionRecord>& out) {
    // Per ladder, its highest rung with results, when that one promoted none; the highest first.
    std::vector<std::pair<std::size_t, std::size_t>> rungs;  // (bracket, index)
    for (std::size_t b = 0; b < ladders_.size(); ++b) {
        const auto& ladder = ladders_[b];
        std::size_t k = ladder.size();
        while (k > 0 && ladder[k - 1].ranking.size() == 0) --k;
        if (k > 0 && ladder[k - 1].promoted == 0) rungs.emplace_back(b, k - 1);
    }
    highest_first(rungs);
    for (const auto& [b, k] : rungs) {
        Rung& rung = ladders_[b][k];
        const auto best = first_waiting(rung, [](const TrialState& t) { return t.feasible; });
        if (!best) continue;
        return resume(b, k, best->first, best->second,
                      str_cat({"nothing runs and no new trial may start: the best of ", rung.ranking.size(),
                               " at resource ", rung.resource, rung.ranking.pareto() ? " by Pareto priority" : "",
                               ", the highest rung of its ladder, which promoted none and gets no more results, "
                               "goes on so that a trial trains to ",
                               max_resource_}),
                      out);
    }
    return std::nullopt;
}

HYPERTUNE_INLINE void PromotionRungs::close(std::vector<DecisionRecord>& out) {
    for (std::size_t b = 0; b < ladders_.size(); ++b)
        for (std::size_t k = 0; k < ladders_[b].size(); ++k) {
            Rung& rung = ladders_[b][k];
            const std::size_t m = rung.ranking.size();
            const double cutoff = rung.ranking.cutoff();
            for (const auto& [value, id] : rung.waiting) {
                out.push_back(DecisionRecord{id, DecisionRecord::Kind::Stop, labels_[b], static_cast<int>(k),
                                             rung.resource, value, cutoff, m,
                                             str_cat({"never in the top 1/", eta_, " (", rung.ranking.top_size(),
                                                      " of ", m, ")",
                                                      rung.ranking.pareto() ? " by Pareto priority" : "",
                                                      " before the work ran out"})});
                trials_.erase(id);
            }
            rung.waiting.clear();
        }
}

HYPERTUNE_INLINE std::size_t PromotionRungs::paused() const noexcept {
    std::size_t n = 0;
    for (const auto& ladder : ladders_)
        for (const auto& rung : ladder) n += rung.waiting.size();
    return n;
}

HYPERTUNE_INLINE std::size_t PromotionRungs::recorded(std::size_t b, std::size_t rung) const {
    return ladders_.at(b).at(rung).ranking.size();
}

}  // namespace hypertune::detail
