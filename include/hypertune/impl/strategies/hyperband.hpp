// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/strategies/hyperband.hpp>: the schedule, and which mode runs it (the
// asynchronous one on detail::HalvingRungs, the synchronous one on detail::SynchronousBrackets).
// Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/strategies/hyperband.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/detail/best_reports.hpp>
#include <hypertune/detail/halving_rungs.hpp>
#include <hypertune/detail/synchronous_brackets.hpp>
#include <fmt/format.h>
#include <algorithm>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/strategies/hyperband.hpp> is compiled into hypertune::compiled: include <hypertune/strategies/hyperband.hpp>"
#endif

namespace hypertune {

struct Hyperband::Rungs {
    detail::HalvingRungs async;         // the asynchronous mode's ladders
    detail::SynchronousBrackets sync;   // the synchronous mode's brackets
    detail::BestReports best;           // RankBy::BestReport
};

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
        // ceil((s_max + 1) * eta^s / (s + 1)) in integers, with eta^s = q (s + 1) + r split first:
        // the product itself overflows 64 bits near max_resource = 2^63 (it saturated, and rungs of
        // the largest brackets kept 0 configurations), n does not (at most about eta^s_max).
        const std::uint64_t whole = power[us] / (us + 1);
        const std::uint64_t part = power[us] % (us + 1);
        const auto brackets = static_cast<std::uint64_t>(s_max) + 1;
        const std::uint64_t n = brackets * whole + (brackets * part + us) / (us + 1);
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

HYPERTUNE_INLINE Hyperband::Hyperband(HyperbandOptions options, AnySampler sampler)
    : Scheduler(std::move(sampler)), options_(options) {
    detail::validate_rung_options("Hyperband", "eta", options_.min_resource, options_.max_resource, options_.eta);
    if (options_.mode == HyperbandMode::Synchronous && options_.type == HalvingType::Stop)
        throw InvalidArgument("Hyperband: type = HalvingType::Stop is for the asynchronous mode; the "
                              "synchronous mode pauses trials and promotes them at its barriers");
    if (options_.mode == HyperbandMode::Synchronous && options_.wait_for_peers)
        throw InvalidArgument("Hyperband: wait_for_peers is for the asynchronous mode; the synchronous mode "
                              "judges a rung only once all of its trials have reached it");
    if (options_.mode == HyperbandMode::Synchronous && options_.fill_idle_workers.value_or(false))
        throw InvalidArgument("Hyperband: fill_idle_workers is for the asynchronous mode; the synchronous mode "
                              "starts the next bracket while one waits at a barrier");
    if (options_.mode == HyperbandMode::Synchronous && options_.min_rung_results > 0)
        throw InvalidArgument("Hyperband: min_rung_results is for the asynchronous mode; the synchronous mode "
                              "promotes at a rung only once all of its trials have reached it");
    if (options_.mode == HyperbandMode::Synchronous && options_.noise_tolerance != 0)
        throw InvalidArgument("Hyperband: noise_tolerance is for the asynchronous mode; the synchronous mode "
                              "ranks a whole rung at its barrier");
    detail::validate_halving_rules("Hyperband", options_.type, options_.wait_for_peers,
                                   options_.fill_idle_workers, options_.min_rung_results);
    detail::validate_noise_tolerance("Hyperband", options_.noise_tolerance);
    schedule_ = detail::hyperband_schedule(options_.min_resource, options_.max_resource, options_.eta);
    const int all = static_cast<int>(schedule_.size());
    if (all == 1)  // s_max = 0: one bracket, whose only rung is max_resource
        throw InvalidArgument(fmt::format(
            "Hyperband: min_resource {} and max_resource {} with eta {} leave no rung below max_resource, so every "
            "trial would run to the end (random search by another name); min_resource * eta must be <= "
            "max_resource",
            options_.min_resource, options_.max_resource, options_.eta));
    if (options_.brackets && (*options_.brackets < 0 || *options_.brackets > all))
        throw InvalidArgument(fmt::format(
            "Hyperband: brackets = {}, but min_resource {}, max_resource {} and eta {} give {} bracket{} "
            "(s = 0..{}); use 1..{}, or 0 for all",
            *options_.brackets, options_.min_resource, options_.max_resource, options_.eta, all,
            all == 1 ? "" : "s", all - 1, all));
    const int running =
        options_.brackets.value_or(options_.mode == HyperbandMode::Asynchronous ? std::min(2, all) : 0);
    lowest_s_ = running == 0 ? 0 : all - running;
    // Round-robin weights n(s), capped so that the credits cannot overflow (2^40 is far beyond
    // any real schedule: only max_resource / min_resource above ~10^11 reaches it).
    for (const auto& b : schedule_) {
        weights_.push_back(static_cast<std::int64_t>(
            std::min<std::uint64_t>(b.rungs.front().configurations, std::uint64_t{1} << 40)));
        if (b.s >= lowest_s_) weight_total_ += weights_.back();
    }
}

HYPERTUNE_INLINE Settings Hyperband::settings() const {
    Settings s = detail::halving_settings(options_.min_resource, "eta", options_.eta, options_.type,
                                          options_.wait_for_peers,
                                          detail::fills_idle_workers(options_.type, options_.fill_idle_workers),
                                          options_.rank_by, options_.min_rung_results, options_.noise_tolerance);
    s.insert(s.begin() + 2, {"mode", options_.mode == HyperbandMode::Synchronous ? "synchronous" : "asynchronous"});
    s.insert(s.begin() + 3, {"brackets", std::to_string(brackets())});
    for (auto& setting : Scheduler::settings()) s.push_back(std::move(setting));
    return s;
}

HYPERTUNE_INLINE Hyperband::Hyperband(const Hyperband&) = default;
HYPERTUNE_INLINE Hyperband::Hyperband(Hyperband&&) = default;
HYPERTUNE_INLINE Hyperband& Hyperband::operator=(const Hyperband&) = default;
// A copy: the defaulted move would leave a self-moved Hyperband without its schedule (its vectors
// moved into themselves), and a move-assigned scheduler is rare enough not to need the speed.
HYPERTUNE_INLINE Hyperband& Hyperband::operator=(Hyperband&& other) {
    if (this != &other) *this = static_cast<const Hyperband&>(other);
    return *this;
}
HYPERTUNE_INLINE Hyperband::~Hyperband() = default;

HYPERTUNE_INLINE void Hyperband::on_start() {
    // Its barriers rank a rung on the loss alone: an infeasible trial would be promoted over a
    // feasible one, without a word. ASHA and the asynchronous mode put infeasible trials last.
    if (options_.mode == HyperbandMode::Synchronous && context().constrained)
        throw InvalidArgument("Hyperband: the synchronous mode ranks a rung on the loss alone and cannot put trials "
                              "that break a constraint last; use the asynchronous mode or ASHA, which do");
    detail::validate_rank_by("Hyperband", options_.rank_by, context().objectives);
    detail::validate_noise_tolerance("Hyperband", options_.noise_tolerance, context().objectives,
                                     context().constrained);
    Rungs& r = *rung_state_;
    r.best.clear();
    bracket_of_.clear();
    credit_.assign(schedule_.size(), 0);
    if (options_.mode == HyperbandMode::Asynchronous) {
        std::vector<std::vector<Resource>> ladders;
        std::vector<int> labels;
        for (const auto& b : schedule_) {  // every bracket, so that a trial's bracket indexes its ladder
            std::vector<Resource> rungs;
            for (std::size_t i = 0; i + 1 < b.rungs.size(); ++i) rungs.push_back(b.rungs[i].resource);
            ladders.push_back(std::move(rungs));
            labels.push_back(b.s);
        }
        r.async = detail::HalvingRungs(options_.type, ladders, std::move(labels), options_.eta, options_.max_resource,
                                       options_.wait_for_peers,
                                       detail::fills_idle_workers(options_.type, options_.fill_idle_workers),
                                       context().objectives, context().constrained);
        r.async.set_min_rung_results(options_.min_rung_results);
        r.async.set_noise_tolerance(options_.noise_tolerance);
    } else {
        std::vector<std::vector<detail::SynchronousBrackets::Rung>> brackets;
        for (const auto& b : schedule_) {
            auto& rungs = brackets.emplace_back();
            for (const auto& rung : b.rungs) rungs.push_back({rung.configurations, rung.resource});
        }
        r.sync = detail::SynchronousBrackets(std::move(brackets), options_.eta, options_.max_resource, lowest_s_);
    }
}

HYPERTUNE_INLINE Decision Hyperband::on_report_losses(TrialId id, Resource step, const IntermediateReport& reported) {
    Rungs& r = *rung_state_;
    const Decision d = r.best.with_judged(options_.rank_by, id, reported, [&](const IntermediateReport& report) {
        return options_.mode == HyperbandMode::Synchronous ? r.sync.report(id, step, report.loss, made_)
                                                           : r.async.report("Hyperband", id, step, report, made_);
    });
    decide_all(made_);
    return d;
}

HYPERTUNE_INLINE void Hyperband::on_tell(TrialId id, const Outcome& told) {
    Rungs& r = *rung_state_;
    r.best.with_judged(options_.rank_by, id, told, [&](const Outcome& outcome) {
        if (options_.mode == HyperbandMode::Synchronous)
            r.sync.finish(id, outcome, made_);
        else
            r.async.finish(id, outcome, made_);
    });
    decide_all(made_);
}

HYPERTUNE_INLINE std::vector<Resource> Hyperband::fidelity_levels() const {
    std::vector<Resource> levels;
    for (const auto& bracket : schedule_)
        if (bracket.s >= lowest_s_)
            for (const auto& rung : bracket.rungs) levels.push_back(rung.resource);
    levels.push_back(options_.max_resource);
    std::sort(levels.begin(), levels.end());
    levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
    return levels;
}

HYPERTUNE_INLINE int Hyperband::next_async_bracket() {
    int best = s_max();
    for (int s = s_max(); s >= lowest_s_; --s) {
        const auto us = static_cast<std::size_t>(s);
        credit_[us] += weights_[us];
        if (credit_[us] > credit_[static_cast<std::size_t>(best)]) best = s;
    }
    credit_[static_cast<std::size_t>(best)] -= weight_total_;
    return best;
}

HYPERTUNE_INLINE Suggestion Hyperband::ask_async(const TrialBudget& budget) {
    Suggestion next = rung_state_->async.next(
        [&] {
            Suggestion s = start_new(budget, options_.max_resource);
            if (!s.runs()) return std::pair{std::move(s), std::size_t{0}};
            const int bracket = next_async_bracket();
            bracket_of_.push_back(static_cast<std::int8_t>(bracket));
            return std::pair{std::move(s), static_cast<std::size_t>(bracket)};
        },
        made_, budget.allows_new());
    decide_all(made_);
    return next;
}

HYPERTUNE_INLINE Suggestion Hyperband::ask_sync(const TrialBudget& budget) {
    Suggestion next = rung_state_->sync.next(
        budget,
        [&](Resource resource, int bracket) {
            // What was decided so far goes out first, so that the sampler hears of it before it
            // samples the new trial's configuration.
            decide_all(made_);
            Suggestion s = start_new(budget, resource);
            if (s.runs()) bracket_of_.push_back(static_cast<std::int8_t>(bracket));
            return s;
        },
        made_);
    decide_all(made_);
    return next;
}

}  // namespace hypertune
