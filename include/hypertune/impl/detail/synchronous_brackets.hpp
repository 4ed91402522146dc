// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/detail/synchronous_brackets.hpp>: Hyperband's synchronous brackets.
// Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/detail/synchronous_brackets.hpp>
#include <hypertune/linkage.hpp>
#include <fmt/format.h>
#include <algorithm>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/detail/synchronous_brackets.hpp> is compiled into hypertune::compiled: include <hypertune/detail/synchronous_brackets.hpp>"
#endif

namespace hypertune::detail {

HYPERTUNE_INLINE Suggestion SynchronousBrackets::next(const TrialBudget& budget, const StartNew& start_new,
                                                      std::vector<DecisionRecord>& out) {
    // Older brackets first: finishing them is what produces results.
    for (auto it = brackets_.begin(); it != brackets_.end(); ++it) {
        SyncBracket& b = it->second;
        if (b.rung == 0 && b.created < b.rung_size) {
            Suggestion s = new_trial(start_new, it, out);
            if (s.runs()) return s;
            break;  // the sampler has no configuration left: the bracket was cut where it stood
        }
        if (!b.promoted.empty()) return resume_trial(b, out);
    }
    if (budget.allows_new() && !sampler_exhausted_) {
        // Start the next bracket (also when the others wait at a barrier: no idle worker).
        std::size_t n = schedule_[static_cast<std::size_t>(next_s_)].front().configurations;
        n = std::min<std::size_t>(n, budget.new_trials_left);
        auto serial = next_serial_++;
        auto it = brackets_.try_emplace(serial).first;
        it->second.s = next_s_;
        it->second.rung_size = n;
        next_s_ = next_s_ == lowest_s_ ? s_max() : next_s_ - 1;
        Suggestion s = new_trial(start_new, it, out);
        if (s.runs()) return s;
    }
    // Promotions a cut bracket made possible are handed out at once.
    for (auto& [serial, b] : brackets_)
        if (!b.promoted.empty()) return resume_trial(b, out);
    return running_ > 0 ? Suggestion::wait() : Suggestion::done();
}

HYPERTUNE_INLINE Suggestion SynchronousBrackets::new_trial(const StartNew& start_new, BracketIt it,
                                                           std::vector<DecisionRecord>& out) {
    SyncBracket& b = it->second;
    Suggestion next = start_new(rung_resource(b.s, 0), b.s);
    if (!next.runs()) {
        sampler_exhausted_ = true;
        // The bracket is cut only once none of its trials runs, by the ask() that finds the sampler
        // empty then. Cut while one ran, by an ask() that answered Wait, the rung closed at that
        // trial's end; a resume replays only the asks that started a trial, so it did not cut the
        // bracket, and the journal's stops at that end diverged from the replay's.
        if (b.running > 0) return next;
        b.rung_size = b.created;
        if (b.created == 0) brackets_.erase(it);
        else close_rung(it, out);
        return next;
    }
    const TrialId id = next.trial;
    ++b.created;
    ++b.running;
    ++running_;
    SyncTrial& t = trials_.insert(id, SyncTrial{});
    t.bracket = it->first;
    t.rung = 0;
    t.config = next.config;
    t.budget = next.budget;
    t.running = true;
    return next;
}

HYPERTUNE_INLINE Suggestion SynchronousBrackets::resume_trial(SyncBracket& b, std::vector<DecisionRecord>& out) {
    TrialId id = b.promoted.front();
    b.promoted.pop_front();
    ++b.running;
    ++running_;
    SyncTrial& t = trials_.at(id);
    const Resource from = t.reached;
    out.push_back(DecisionRecord{
        id, DecisionRecord::Kind::Promote, b.s, static_cast<int>(t.rung), t.budget, t.loss, t.threshold, t.peers,
        str_cat({"among the best ", b.rung_size, " of ", t.peers, " at resource ", t.budget, ": resumes from ", from,
                 " to ", rung_resource(b.s, b.rung)})});
    t.rung = b.rung;
    t.budget = rung_resource(b.s, b.rung);
    t.running = true;
    return Suggestion::run(id, t.config, t.budget, from);
}

HYPERTUNE_INLINE Decision SynchronousBrackets::report(TrialId id, Resource step, double loss,
                                                      std::vector<DecisionRecord>& out) {
    SyncTrial* found = trials_.find(id);
    if (found == nullptr || !found->running) return Decision::Continue;
    SyncTrial& t = *found;
    if (step <= t.last_step) return Decision::Continue;
    t.last_step = step;
    if (step > max_resource_) {
        out.push_back(
            DecisionRecord{id, DecisionRecord::Kind::Stop, brackets_.at(t.bracket).s, static_cast<int>(t.rung),
                           step, loss, std::numeric_limits<double>::quiet_NaN(), 0,
                           str_cat({"step ", step, " exceeds max_resource ", max_resource_})});
        return Decision::Stop;
    }
    // Past its rung's budget: the trainer overran; stop it there, its tell() still counts for the
    // rung (no record: the Pause at tell() says what happens next).
    return step > t.budget ? Decision::Stop : Decision::Continue;
}

HYPERTUNE_INLINE void SynchronousBrackets::finish(TrialId id, const Outcome& outcome,
                                                  std::vector<DecisionRecord>& out) {
    SyncTrial* found = trials_.find(id);
    if (found == nullptr || !found->running) return;
    SyncTrial& t = *found;
    t.running = false;
    --running_;
    auto bit = brackets_.find(t.bracket);
    SyncBracket& b = bit->second;
    --b.running;
    const bool failed = outcome.status == Outcome::Status::Failed || std::isnan(outcome.loss);
    t.reached = outcome.resource > 0 ? std::min(outcome.resource, t.budget) : t.budget;
    t.loss = failed ? std::numeric_limits<double>::infinity() : outcome.loss;
    b.results.push_back(RungResult{t.loss, id, failed});
    const bool last_rung = t.rung + 1 == schedule_[static_cast<std::size_t>(b.s)].size();
    if (failed || last_rung) {
        trials_.erase(id);
    } else if (outcome.resource >= max_resource_) {
        t.complete = true;  // no Pause: the trial is over, only its loss goes on (close_rung)
    } else {
        out.push_back(
            DecisionRecord{id, DecisionRecord::Kind::Pause, b.s, static_cast<int>(t.rung), t.reached, outcome.loss,
                           std::numeric_limits<double>::quiet_NaN(), 0,
                           str_cat({"rung ", t.rung, " of bracket ", b.s, ": waits for ", b.rung_size - b.results.size(),
                                    " more of ", b.rung_size, " trials before promotions"})});
    }
    if (b.running == 0 && b.promoted.empty() && (b.rung > 0 || b.created == b.rung_size)) close_rung(bit, out);
}

HYPERTUNE_INLINE void SynchronousBrackets::close_rung(BracketIt bit, std::vector<DecisionRecord>& out) {
    SyncBracket& b = bit->second;
    const auto& rungs = schedule_[static_cast<std::size_t>(b.s)];
    if (b.rung + 1 == rungs.size()) {
        brackets_.erase(bit);
        return;
    }
    auto& results = b.results;
    std::sort(results.begin(), results.end(), [](const RungResult& x, const RungResult& y) {
        if (x.failed != y.failed) return y.failed;
        if (x.loss != y.loss) return x.loss < y.loss;
        return x.id < y.id;
    });
    const std::size_t m = results.size();
    std::size_t ok = 0;
    while (ok < m && !results[ok].failed) ++ok;
    std::size_t keep = std::min(rungs[b.rung + 1].configurations, std::max<std::size_t>(1, m / eta_));
    keep = std::min(keep, ok);
    const double threshold = keep > 0 ? results[keep - 1].loss : std::numeric_limits<double>::quiet_NaN();
    const Resource resource = rungs[b.rung].resource;
    for (std::size_t j = keep; j < ok; ++j) {
        if (trials_.at(results[j].id).complete) {  // over already: nothing to stop
            trials_.erase(results[j].id);
            continue;
        }
        out.push_back(DecisionRecord{
            results[j].id, DecisionRecord::Kind::Stop, b.s, static_cast<int>(b.rung), trials_.at(results[j].id).reached,
            results[j].loss, threshold, m,
            keep == 0 ? str_cat({"rung ", b.rung, " of bracket ", b.s, ": no trial to promote"})
                      : str_cat({"not among the best ", keep, " of ", m, " at resource ", resource})});
        trials_.erase(results[j].id);
    }
    if (keep == 0) {
        brackets_.erase(bit);
        return;
    }
    b.promoted.clear();
    std::vector<RungResult> carried;  // trained in full already: their losses count at the next rung
    const bool next_is_last = b.rung + 2 == rungs.size();
    for (std::size_t j = 0; j < keep; ++j) {
        SyncTrial& t = trials_.at(results[j].id);
        if (t.complete) {
            carried.push_back(results[j]);
            if (next_is_last) trials_.erase(results[j].id);
            continue;
        }
        t.threshold = threshold;
        t.peers = m;
        b.promoted.push_back(results[j].id);
    }
    ++b.rung;
    b.rung_size = keep;
    results = std::move(carried);
    if (b.promoted.empty()) close_rung(bit, out);  // every survivor is carried: nothing to run here
}

}  // namespace hypertune::detail
