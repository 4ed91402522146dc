// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/scheduler.hpp>: the scheduler's bookkeeping of ids, budget and sampler.
// Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/scheduler.hpp>
#include <hypertune/linkage.hpp>
#include <fmt/format.h>
#include <algorithm>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/scheduler.hpp> is compiled into hypertune::compiled: include <hypertune/scheduler.hpp>"
#endif

namespace hypertune {

HYPERTUNE_INLINE void Scheduler::start(const SearchSpace& space, const StrategyContext& ctx) {
    space.require_tunable();
    space_ = space;
    ctx_ = ctx;
    next_id_ = 0;
    started_ = true;
    running_.clear();
    (void)own_sink_.take();
    if (sampler_)
        sampler_->start(space, SamplerContext{ctx.seed, fidelity_levels(),
                                              ctx.planned_trials != 0 ? ctx.planned_trials : ctx.max_trials,
                                              ctx.constrained});
    on_start();
}

HYPERTUNE_INLINE void Scheduler::require_started(const char* call, std::optional<TrialId> id) const {
    if (!started_)
        throw StrategyError(fmt::format("strategy '{}': {}() before start(space, context): a strategy is started "
                                        "once before anything is asked of it (the Tuner does it)",
                                        name(), call));
    if (id && *id >= next_id_)
        throw StrategyError(fmt::format("strategy '{}': {}() for trial {}, which ask() never handed out (the next "
                                        "new trial's id is {})",
                                        name(), call, *id, next_id_));
}

HYPERTUNE_INLINE void Scheduler::require_running(const char* call, TrialId id) const {
    require_started(call, id);
    if (static_cast<std::size_t>(id) >= running_.size() || !running_[static_cast<std::size_t>(id)]) [[unlikely]]
        throw StrategyError(fmt::format("strategy '{}': {}() for trial {}, which is not running: its run ended with "
                                        "tell(), and only ask() runs it again (report() and tell() are for a trial "
                                        "between ask() and its tell())",
                                        name(), call, id));
}

HYPERTUNE_INLINE void Scheduler::refuse_decision(TrialId id) const {
    throw StrategyError(fmt::format("strategy '{}' decided about trial {}, which ask() never handed out (the next new "
                                    "trial's id is {}); a decision names a trial the strategy started",
                                    name(), id, next_id_));
}

HYPERTUNE_INLINE Suggestion Scheduler::ask() {
    require_started("ask");
    const TrialBudget budget{next_id_, new_trials_left()};
    Suggestion s = next(budget);
    if (s.runs()) {
        if (s.trial == next_id_) {
            if (!budget.allows_new())
                throw StrategyError(fmt::format(
                    "strategy '{}' suggested new trial {} beyond the budget of {} new trials (max_jobs); "
                    "a scheduler may start a new trial only while TrialBudget::allows_new()",
                    name(), s.trial, ctx_.max_trials));
            ++next_id_;
        } else if (s.trial > next_id_) {
            throw StrategyError(fmt::format("strategy '{}' suggested trial {}, which was never started; the next "
                                            "new trial's id is {}",
                                            name(), s.trial, next_id_));
        }
        const auto slot = static_cast<std::size_t>(s.trial);
        if (slot >= running_.size()) running_.resize(slot + 1);
        running_[slot] = true;
    }
    return s;
}

HYPERTUNE_INLINE Decision Scheduler::report(TrialId id, Resource step, const IntermediateReport& report) {
    require_running("report", id);
    const Decision d = on_report_losses(id, step, report);
    if (sampler_) {
        // A scheduler's InvalidArgument says the report cannot be judged, and fails the trial; a
        // sampler judges none, so what it throws is its own fault (a Config::get of a misspelt
        // name failed every trial, naming no strategy).
        call_sampler("report", "on_report", [&] { sampler_->on_report(id, step, report.loss); });
    }
    return d;
}

HYPERTUNE_INLINE void Scheduler::tell(TrialId id, const Outcome& outcome) {
    require_running("tell", id);
    running_[static_cast<std::size_t>(id)] = false;
    on_tell(id, outcome);
    if (sampler_) call_sampler("tell", "on_result", [&] { sampler_->on_result(id, outcome); });
}

HYPERTUNE_INLINE std::vector<std::string> Scheduler::notes() const {
    std::vector<std::string> out;
    if (sampler_)
        for (const Note& n : sampler_->notes()) out.push_back(to_string(n));
    return out;
}

HYPERTUNE_INLINE Settings Scheduler::settings() const {
    Settings out;
    if (sampler_)  // named after the sampler ("GP.candidates"): its options and the scheduler's apart
        for (auto& [name, value] : sampler_->settings()) out.emplace_back(sampler_->name() + "." + name, std::move(value));
    return out;
}

HYPERTUNE_INLINE bool Scheduler::warm_start(const std::vector<WarmStartObservation>& observations, WarmStartType type) {
    return sampler_ && sampler_->warm_start(observations, type);
}

HYPERTUNE_INLINE std::vector<Resource> Scheduler::fidelity_levels() const {
    if (auto r = max_resource()) return {*r};
    return {};
}

HYPERTUNE_INLINE Suggestion Scheduler::start_new(const TrialBudget& budget, Resource resource) {
    if (!sampler_)
        throw StrategyError(fmt::format("strategy '{}' has no sampler to start a new trial with", name()));
    if (!budget.allows_new()) return Suggestion::done();
    std::optional<Config> cfg;
    call_sampler("ask", "sample", [&] { cfg = sampler_->sample(budget.next_id); });
    if (!cfg) return Suggestion::done();
    return Suggestion::run(budget.next_id, std::move(*cfg), resource);
}

HYPERTUNE_INLINE void Scheduler::decide(DecisionRecord d) {
    require_decidable(d.trial);
    if (sampler_) sampler_->on_decision(d);
    sink().add(std::move(d));
}

HYPERTUNE_INLINE std::string Scheduler::with_sampler_name(const std::string& scheduler) const {
    if (!sampler_ || dynamic_cast<const RandomSampler*>(sampler_.get()) != nullptr) return scheduler;
    return fmt::format("{}({})", sampler_->name(), scheduler);
}

HYPERTUNE_INLINE std::string RunToCompletion::name() const {
    return label_ == "RunToCompletion" ? fmt::format("RunToCompletion({})", sampler()->name()) : label_;
}

}  // namespace hypertune
