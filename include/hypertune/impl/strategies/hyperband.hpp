// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/strategies/hyperband.hpp>: the schedule, and both modes of running it.
// Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/strategies/hyperband.hpp>
#include <hypertune/linkage.hpp>
#include <fmt/format.h>
#include <algorithm>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/strategies/hyperband.hpp> is compiled into hypertune::compiled: include <hypertune/strategies/hyperband.hpp>"
#endif

namespace hypertune {
namespace detail {

HYPERTUNE_INLINE int hyperband_s_max(Resource min_resource, Resource max_resource, int eta) noexcept {
    int s = 0;
    for (Resource r = min_resource; r <= max_resource / eta; r *= eta) ++s;
    return s;
}

HYPERTUNE_INLINE std::vector<HyperbandBracket> hyperband_schedule(Resource min_resource, Resource max_resource,
                                                                      int eta) {
    const int s_max = hyperband_s_max(min_resource, max_resource, eta);
    const auto e = static_cast<std::uint64_t>(eta);
    std::vector<std::uint64_t> power(static_cast<std::size_t>(s_max) + 1, 1);  // eta^k
    for (std::size_t k = 1; k < power.size(); ++k) power[k] = power[k - 1] * e;

    std::vector<HyperbandBracket> schedule(power.size());
    for (int s = 0; s <= s_max; ++s) {
        const auto us = static_cast<std::size_t>(s);
        // ceil((s_max + 1) * eta^s / (s + 1)) in integers
        std::uint64_t numerator = saturating_mul(static_cast<std::uint64_t>(s_max) + 1, power[us]);
        std::uint64_t n = numerator / (us + 1) + (numerator % (us + 1) != 0 ? 1 : 0);
        HyperbandBracket& bracket = schedule[us];
        bracket.s = s;
        for (std::size_t i = 0; i <= us; ++i) {
            // max_resource / eta^(s - i), rounded to the nearest integer, halves up
            auto d = static_cast<Resource>(power[us - i]);
            Resource q = max_resource / d;
            Resource rem = max_resource % d;
            Resource r = q + (rem >= d - rem ? 1 : 0);
            bracket.rungs.push_back(HyperbandRung{static_cast<std::size_t>(n / power[i]), r});
        }
    }
    return schedule;
}

}  // namespace detail

HYPERTUNE_INLINE void Hyperband::on_start() {
    bracket_of_.clear();
    credit_.assign(schedule_.size(), 0);
    if (options_.mode == HyperbandMode::Asynchronous) {
        std::vector<std::vector<Resource>> ladders;
        std::vector<int> labels;
        for (const auto& b : schedule_) {
            std::vector<Resource> rungs;
            for (std::size_t i = 0; i + 1 < b.rungs.size(); ++i) rungs.push_back(b.rungs[i].resource);
            ladders.push_back(std::move(rungs));
            labels.push_back(b.s);
        }
        async_ = detail::HalvingRungs(options_.type, ladders, std::move(labels), options_.eta, options_.max_resource,
                                      options_.wait_for_peers, context().objectives, context().constrained);
    }
    brackets_.clear();
    trials_.clear();
    next_serial_ = 0;
    next_s_ = s_max();
    running_ = 0;
    sampler_exhausted_ = false;
}

HYPERTUNE_INLINE Decision Hyperband::on_report_losses(TrialId id, Resource step, const IntermediateReport& report) {
    if (options_.mode == HyperbandMode::Synchronous) return report_sync(id, step, report.loss);
    const Decision d = async_.report("Hyperband", id, step, report, made_);
    decide_all(made_);
    return d;
}

HYPERTUNE_INLINE void Hyperband::on_tell(TrialId id, const Outcome& outcome) {
    if (options_.mode == HyperbandMode::Synchronous) {
        tell_sync(id, outcome);
        return;
    }
    async_.finish(id, outcome, made_);
    decide_all(made_);
}

HYPERTUNE_INLINE std::vector<Resource> Hyperband::fidelity_levels() const {
    std::vector<Resource> levels;
    for (const auto& bracket : schedule_)
        for (const auto& rung : bracket.rungs) levels.push_back(rung.resource);
    levels.push_back(options_.max_resource);
    std::sort(levels.begin(), levels.end());
    levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
    return levels;
}

HYPERTUNE_INLINE int Hyperband::next_async_bracket() {
    int best = s_max();
    for (int s = s_max(); s >= 0; --s) {
        const auto us = static_cast<std::size_t>(s);
        credit_[us] += weights_[us];
        if (credit_[us] > credit_[static_cast<std::size_t>(best)]) best = s;
    }
    credit_[static_cast<std::size_t>(best)] -= weight_total_;
    return best;
}

HYPERTUNE_INLINE Suggestion Hyperband::ask_async(const TrialBudget& budget) {
    Suggestion next = async_.next(
        [&] {
            Suggestion s = start_new(budget, options_.max_resource);
            if (!s.runs()) return std::pair{std::move(s), std::size_t{0}};
            const int bracket = next_async_bracket();
            bracket_of_.push_back(static_cast<std::int8_t>(bracket));
            return std::pair{std::move(s), static_cast<std::size_t>(bracket)};
        },
        made_);
    decide_all(made_);
    return next;
}

HYPERTUNE_INLINE Suggestion Hyperband::ask_sync(const TrialBudget& budget) {
    // Older brackets first: finishing them is what produces results.
    for (auto it = brackets_.begin(); it != brackets_.end(); ++it) {
        SyncBracket& b = it->second;
        if (b.rung == 0 && b.created < b.rung_size) {
            Suggestion s = new_sync_trial(budget, it);
            if (s.runs()) return s;
            break;  // the sampler has no configuration left: the bracket was cut where it stood
        }
        if (!b.promoted.empty()) return resume_sync_trial(b);
    }
    if (budget.allows_new() && !sampler_exhausted_) {
        // Start the next bracket (also when the others wait at a barrier: no idle worker).
        std::size_t n = schedule_[static_cast<std::size_t>(next_s_)].rungs.front().configurations;
        n = std::min<std::size_t>(n, budget.new_trials_left);
        auto serial = next_serial_++;
        auto it = brackets_.try_emplace(serial).first;
        it->second.s = next_s_;
        it->second.rung_size = n;
        next_s_ = next_s_ == 0 ? s_max() : next_s_ - 1;
        Suggestion s = new_sync_trial(budget, it);
        if (s.runs()) return s;
    }
    // Promotions a cut bracket made possible are handed out at once.
    for (auto& [serial, b] : brackets_)
        if (!b.promoted.empty()) return resume_sync_trial(b);
    return running_ > 0 ? Suggestion::wait() : Suggestion::done();
}

HYPERTUNE_INLINE Suggestion Hyperband::new_sync_trial(const TrialBudget& budget, std::map<std::uint64_t, SyncBracket>::iterator it) {
    SyncBracket& b = it->second;
    Suggestion next = start_new(budget, rung_resource(b.s, 0));
    if (!next.runs()) {
        sampler_exhausted_ = true;
        b.rung_size = b.created;
        if (b.created == 0) brackets_.erase(it);
        else if (b.running == 0) close_rung(it);
        return next;
    }
    const TrialId id = next.trial;
    ++b.created;
    ++b.running;
    ++running_;
    bracket_of_.push_back(static_cast<std::int8_t>(b.s));
    SyncTrial& t = trials_[id];
    t.bracket = it->first;
    t.rung = 0;
    t.config = next.config;
    t.budget = next.budget;
    t.running = true;
    return next;
}

HYPERTUNE_INLINE Suggestion Hyperband::resume_sync_trial(SyncBracket& b) {
    TrialId id = b.promoted.front();
    b.promoted.pop_front();
    ++b.running;
    ++running_;
    SyncTrial& t = trials_.at(id);
    const Resource from = t.reached;
    decide(DecisionRecord{
        id, DecisionRecord::Kind::Promote, b.s, static_cast<int>(t.rung), t.budget, t.loss, t.threshold, t.peers,
        fmt::format("among the best {} of {} at resource {}: resumes from {} to {}", b.rung_size, t.peers, t.budget,
                    from, rung_resource(b.s, b.rung))});
    t.rung = b.rung;
    t.budget = rung_resource(b.s, b.rung);
    t.running = true;
    return Suggestion::run(id, t.config, t.budget, from);
}

HYPERTUNE_INLINE Decision Hyperband::report_sync(TrialId id, Resource step, double loss) {
    auto it = trials_.find(id);
    if (it == trials_.end() || !it->second.running) return Decision::Continue;
    SyncTrial& t = it->second;
    if (step <= t.last_step) return Decision::Continue;
    t.last_step = step;
    if (step > options_.max_resource) {
        decide(
            DecisionRecord{id, DecisionRecord::Kind::Stop, brackets_.at(t.bracket).s, static_cast<int>(t.rung),
                           step, loss, std::numeric_limits<double>::quiet_NaN(), 0,
                           fmt::format("step {} exceeds max_resource {}", step, options_.max_resource)});
        return Decision::Stop;
    }
    // Past its rung's budget: the trainer overran; stop it there, its tell() still counts for the
    // rung (no record: the Pause at tell() says what happens next).
    return step > t.budget ? Decision::Stop : Decision::Continue;
}

HYPERTUNE_INLINE void Hyperband::tell_sync(TrialId id, const Outcome& outcome) {
    auto it = trials_.find(id);
    if (it == trials_.end() || !it->second.running) return;
    SyncTrial& t = it->second;
    t.running = false;
    --running_;
    auto bit = brackets_.find(t.bracket);
    SyncBracket& b = bit->second;
    --b.running;
    const bool failed = outcome.status == Outcome::Status::Failed || std::isnan(outcome.loss);
    t.reached = outcome.resource > 0 ? std::min(outcome.resource, t.budget) : t.budget;
    t.loss = failed ? std::numeric_limits<double>::infinity() : outcome.loss;
    b.results.push_back(RungResult{t.loss, id, failed});
    const bool last_rung = t.rung + 1 == schedule_[static_cast<std::size_t>(b.s)].rungs.size();
    if (failed || last_rung) {
        trials_.erase(it);
    } else {
        decide(
            DecisionRecord{id, DecisionRecord::Kind::Pause, b.s, static_cast<int>(t.rung), t.reached, outcome.loss,
                           std::numeric_limits<double>::quiet_NaN(), 0,
                           fmt::format("rung {} of bracket {}: waits for {} more of {} trials before promotions",
                                       t.rung, b.s, b.rung_size - b.results.size(), b.rung_size)});
    }
    if (b.running == 0 && b.promoted.empty() && (b.rung > 0 || b.created == b.rung_size)) close_rung(bit);
}

HYPERTUNE_INLINE void Hyperband::close_rung(std::map<std::uint64_t, SyncBracket>::iterator bit) {
    SyncBracket& b = bit->second;
    const auto& rungs = schedule_[static_cast<std::size_t>(b.s)].rungs;
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
    const auto eta = static_cast<std::size_t>(options_.eta);
    std::size_t keep = std::min(rungs[b.rung + 1].configurations, std::max<std::size_t>(1, m / eta));
    keep = std::min(keep, ok);
    const double threshold = keep > 0 ? results[keep - 1].loss : std::numeric_limits<double>::quiet_NaN();
    const Resource resource = rungs[b.rung].resource;
    for (std::size_t j = keep; j < ok; ++j) {
        auto tit = trials_.find(results[j].id);
        decide(DecisionRecord{
            results[j].id, DecisionRecord::Kind::Stop, b.s, static_cast<int>(b.rung), tit->second.reached,
            results[j].loss, threshold, m,
            keep == 0 ? fmt::format("rung {} of bracket {}: no trial to promote", b.rung, b.s)
                      : fmt::format("not among the best {} of {} at resource {}", keep, m, resource)});
        trials_.erase(tit);
    }
    if (keep == 0) {
        brackets_.erase(bit);
        return;
    }
    b.promoted.clear();
    for (std::size_t j = 0; j < keep; ++j) {
        SyncTrial& t = trials_.at(results[j].id);
        t.threshold = threshold;
        t.peers = m;
        b.promoted.push_back(results[j].id);
    }
    ++b.rung;
    b.rung_size = keep;
    results.clear();
}

}  // namespace hypertune
