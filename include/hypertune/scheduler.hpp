// SPDX-License-Identifier: MIT
#pragma once
// Scheduler: the role that decides when trials run, pause, resume, stop and get promoted (Ray
// Tune's and Syne Tune's schedulers, Optuna's pruners). It gets the configurations of new trials
// from its sampler (sampler.hpp; RandomSampler unless told otherwise) and is driven by whoever
// runs the trials, the Tuner or the caller's own loop:
//   start(space, ctx)          once, before anything else;
//   ask()                      -> run a trial (new, or resume a paused one), wait, or done;
//   report(trial, step, loss)  -> continue or stop (early stopping); with several objectives or
//                                 constraints, an IntermediateReport with each loss;
//   tell(trial, outcome)       -> the trial's run ended: its final loss, or that it failed;
//   take_decisions()           -> the stops, pauses and promotions made since the last call.
//
// The base class owns what every scheduler would otherwise repeat: trial ids (dense, from 0, a
// new trial gets the next one), the budget of new trials (StrategyContext::max_trials), passing
// every report, result and decision on to the sampler, and the sink the decisions go to. A
// scheduler overrides next() and whichever hooks it needs; the rest do nothing by default:
//
//     class RunTen : public ht::Scheduler {       // every trial runs 10 units, nothing is stopped
//     public:
//         std::string name() const override { return "RunTen"; }
//     protected:
//         ht::Suggestion next(const ht::TrialBudget& b) override { return start_new(b, 10); }
//     };
//
// A suggestion of a new trial that the budget does not allow, or of an id never handed out, is a
// StrategyError naming the scheduler: the runner never has to guess, drop or ask again. So is a
// report() or tell() of a trial that is not running (its run ended with a tell()).

#include <hypertune/linkage.hpp>
#include <hypertune/error.hpp>
#include <hypertune/sampler.hpp>
#include <hypertune/samplers/random_sampler.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/strategy.hpp>

#include <fmt/core.h>

#include <concepts>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace hypertune {

/// What ask() may start now: the id the next new trial gets, and how many new trials the budget
/// still allows.
struct TrialBudget {
    TrialId next_id = 0;
    std::size_t new_trials_left = 0;
    [[nodiscard]] bool allows_new() const noexcept { return new_trials_left > 0; }
};

class Scheduler {
public:
    virtual ~Scheduler() = default;

    /// The scheduler's name, for output and for checking a journal on resume.
    [[nodiscard]] virtual std::string name() const = 0;

    /// Starts (or restarts) on `space`; throws InvalidArgument for a space with nothing to tune.
    void start(const SearchSpace& space, const StrategyContext& ctx);

    /// The next thing to run: a new trial, a paused one resumed, or Wait / Done.
    /// Throws StrategyError when next() breaks the budget or names a trial never handed out, and
    /// before start() (as report() and tell() do then, and for a trial ask() never handed out).
    [[nodiscard]] Suggestion ask();

    /// Trial `id` reported `loss` after `step` units: Continue, or Stop it.
    [[nodiscard]] Decision report(TrialId id, Resource step, double loss) {
        return report(id, step, IntermediateReport{loss});
    }
    /// The same, with each objective's loss and the constraints' verdict (a run with several
    /// objectives or with constraints). Throws InvalidArgument when a scheduler that ranks on
    /// every objective is given fewer: the report cannot be judged.
    [[nodiscard]] Decision report(TrialId id, Resource step, const IntermediateReport& report);

    /// Trial `id`'s run ended. report() and tell() are for a trial that ask() ran (new or
    /// resumed) and no tell() has ended since: for any other, they throw StrategyError.
    void tell(TrialId id, const Outcome& outcome);

    /// The stops, pauses and promotions decided since the last call, taken from the sink (the
    /// context's, when it gave one).
    [[nodiscard]] std::vector<DecisionRecord> take_decisions() { return sink().take(); }

    /// The full resource of a trial, for multi-fidelity schedulers and cost estimates.
    [[nodiscard]] virtual std::optional<Resource> max_resource() const { return std::nullopt; }
    /// Whether it may run a trial again after a run of it ended (a promotion, or the release of a
    /// trial held at a rung); MedianStopping, whose stops are final, refuses such a scheduler.
    [[nodiscard]] virtual bool resumes_trials() const { return false; }
    /// Whether it can run a search with `objectives` objectives (a multi-objective run passes each
    /// trial's as Outcome::losses). By default, one: a scheduler that stops or promotes trials on
    /// their reports compares a single loss.
    [[nodiscard]] virtual bool supports_objectives(std::size_t objectives) const { return objectives == 1; }
    /// Fallbacks and changes of model worth a warning in the result (the sampler's by default).
    [[nodiscard]] HYPERTUNE_INLINE virtual std::vector<std::string> notes() const;
    /// The options that decide its decisions and suggestions beyond its name (Settings): the
    /// sampler's by default; a scheduler with options of its own puts them first.
    [[nodiscard]] HYPERTUNE_INLINE virtual Settings settings() const;
    /// Earlier runs' trials (called once, after start()); false when nothing learns from them.
    HYPERTUNE_INLINE virtual bool warm_start(const std::vector<WarmStartObservation>& observations, WarmStartType type);

    /// New trials handed out since start().
    [[nodiscard]] std::size_t trials_started() const noexcept { return static_cast<std::size_t>(next_id_); }
    /// Changes the budget of new trials (StrategyContext::max_trials) after start(). A resumed run
    /// replays each session of its journal with that session's max_jobs, so that the scheduler
    /// decides as it did then (at the budget's end, a promotion-type scheduler stops the trials
    /// left paused; synchronous Hyperband promotes instead of starting new trials), and then
    /// goes on with the larger budget.
    void set_max_trials(std::size_t max_trials) {
        ctx_.max_trials = max_trials;
        if (sampler_) sampler_->on_max_trials(max_trials);
        on_max_trials(max_trials);
    }
    /// The sampler (empty for a scheduler that wraps another).
    [[nodiscard]] const AnySampler& sampler() const noexcept { return sampler_; }
    /// Replaces the sampler; before start().
    void use_sampler(AnySampler sampler) { sampler_ = std::move(sampler); }

protected:
    explicit Scheduler(AnySampler sampler = RandomSampler{}) : sampler_(std::move(sampler)) {}
    Scheduler(const Scheduler&) = default;
    Scheduler& operator=(const Scheduler&) = default;
    Scheduler(Scheduler&&) noexcept = default;
    Scheduler& operator=(Scheduler&&) noexcept = default;

    /// What to run next. Start a new trial only with id budget.next_id and while
    /// budget.allows_new(); start_new() does both.
    [[nodiscard]] virtual Suggestion next(const TrialBudget& budget) = 0;
    /// Called at the end of start(): reset per-run state here.
    virtual void on_start() {}
    virtual Decision on_report(TrialId /*id*/, Resource /*step*/, double /*loss*/) { return Decision::Continue; }
    /// A report with every objective's loss and the constraints' verdict; by default, on_report()
    /// with the first objective's loss. A scheduler that ranks trials on several objectives or
    /// puts infeasible ones last overrides this one.
    virtual Decision on_report_losses(TrialId id, Resource step, const IntermediateReport& report) {
        return on_report(id, step, report.loss);
    }
    virtual void on_tell(TrialId /*id*/, const Outcome& /*outcome*/) {}
    /// The budget changed (set_max_trials): a scheduler that wraps another passes it on.
    virtual void on_max_trials(std::size_t /*max_trials*/) {}
    /// The resources at which trials are compared (for a model-based sampler), increasing.
    [[nodiscard]] HYPERTUNE_INLINE virtual std::vector<Resource> fidelity_levels() const;

    /// A new trial with `resource` as its budget and the sampler's configuration; Done when the
    /// budget allows no new trial or the sampler has none left.
    [[nodiscard]] Suggestion start_new(const TrialBudget& budget, Resource resource);

    /// Records a stop, pause or promotion: it goes to the sink and the sampler hears of it.
    void decide(DecisionRecord d);
    /// decide() for each of `records`, in order, leaving it empty: the sampler sees each record,
    /// and the sink takes them as one vector (DecisionSink::add_all), not one move each.
    void decide_all(std::vector<DecisionRecord>& records) {
        if (records.empty()) return;
        for (const DecisionRecord& d : records) require_decidable(d.trial);
        if (sampler_)
            for (const DecisionRecord& d : records) sampler_->on_decision(d);
        sink().add_all(records);
    }

    /// `scheduler` alone with the default random sampler, else "Sampler(scheduler)", e.g.
    /// "ModelBased(Hyperband)".
    [[nodiscard]] std::string with_sampler_name(const std::string& scheduler) const;

    [[nodiscard]] const SearchSpace& space() const noexcept { return space_; }
    [[nodiscard]] const StrategyContext& context() const noexcept { return ctx_; }
    /// The context to start a wrapped scheduler with: same seed and budget, decisions to our sink.
    [[nodiscard]] StrategyContext context_for_inner() noexcept {
        StrategyContext c = ctx_;
        c.decisions = &sink();
        return c;
    }
    /// A wrapper calls this before it hands `inner` (started with context_for_inner()) a call that
    /// may decide: a copy or move of the wrapper copied the inner scheduler's way to the sink of
    /// the wrapper it came from, which may be gone.
    void route_decisions_here(Scheduler& inner) noexcept {
        if (inner.started_) inner.ctx_.decisions = &sink();
    }

private:
    // Throws StrategyError when `call` comes before start(), or names a trial never handed out.
    HYPERTUNE_INLINE void require_started(const char* call, std::optional<TrialId> id = std::nullopt) const;
    // require_started(), and trial `id` running: ask() started (or resumed) it and no tell() has
    // ended that run. A report or a second tell after the end was taken in silence, the scheduler
    // judging a trial it had recorded, paused or forgotten.
    HYPERTUNE_INLINE void require_running(const char* call, TrialId id) const;
    // Throws StrategyError when a decision names a trial never handed out (it used to be dropped):
    // the trial being handed out (next() may decide about it before returning it) or an earlier one.
    void require_decidable(TrialId id) const {
        if (id > next_id_) [[unlikely]]
            refuse_decision(id);
    }
    [[noreturn]] HYPERTUNE_INLINE void refuse_decision(TrialId id) const;
    // Runs `hook` (a call of the sampler's `sampler_call`, within this scheduler's `call`): what
    // it throws becomes a StrategyError naming both ("strategy 'ASHA' failed in tell(): sampler
    // 'Mine' failed in on_result(): ..."), so that the runner blames neither the trial nor the
    // scheduler alone.
    template <class Hook>
    void call_sampler(const char* call, const char* sampler_call, Hook&& hook) const {
        try {
            hook();
        } catch (const StrategyError&) {
            throw;
        } catch (const std::exception& e) {
            throw StrategyError(fmt::format("strategy '{}' failed in {}(): sampler '{}' failed in {}(): {}", name(), call,
                                            sampler_->name(), sampler_call, e.what()));
        }
    }
    [[nodiscard]] DecisionSink& sink() noexcept { return ctx_.decisions ? *ctx_.decisions : own_sink_; }
    [[nodiscard]] std::size_t new_trials_left() const noexcept {
        if (ctx_.max_trials == 0) return std::numeric_limits<std::size_t>::max();
        return next_id_ >= ctx_.max_trials ? 0 : ctx_.max_trials - static_cast<std::size_t>(next_id_);
    }

    AnySampler sampler_;
    SearchSpace space_;
    StrategyContext ctx_;
    DecisionSink own_sink_;
    TrialId next_id_ = 0;
    bool started_ = false;
    std::vector<bool> running_;  // by trial id: ask() ran it, and no tell() has ended that run yet
};

/// A scheduler: a class derived from Scheduler.
template <class S>
concept Strategy = std::derived_from<S, Scheduler>;

/// Runs every trial to its full resource, new trials while the budget and the sampler allow
/// (Ray Tune's FIFOScheduler). RandomSearch, GridSearch and Bayesian are this with their sampler.
class RunToCompletion : public Scheduler {
public:
    /// Throws InvalidArgument unless max_resource >= 1.
    explicit RunToCompletion(Resource max_resource = 1, AnySampler sampler = RandomSampler{})
        : RunToCompletion("RunToCompletion", max_resource, std::move(sampler)) {}

    [[nodiscard]] HYPERTUNE_INLINE std::string name() const override;
    [[nodiscard]] std::optional<Resource> max_resource() const override { return max_resource_; }
    /// Nothing is stopped early, so as many objectives as the sampler handles.
    [[nodiscard]] bool supports_objectives(std::size_t objectives) const override {
        return objectives == 1 || (sampler() && sampler()->supports_objectives(objectives));
    }

protected:
    RunToCompletion(std::string label, Resource max_resource, AnySampler sampler)
        : Scheduler(std::move(sampler)), label_(std::move(label)), max_resource_(max_resource) {
        if (max_resource_ < 1)
            throw InvalidArgument(fmt::format("{}: max_resource must be >= 1, got {}", label_, max_resource_));
    }

    [[nodiscard]] Suggestion next(const TrialBudget& budget) override { return start_new(budget, max_resource_); }

private:
    std::string label_;
    Resource max_resource_;
};

/// Any scheduler behind one type, so that the tuner is not a template. Move-only.
class AnyStrategy {
public:
    template <class S>
        requires Strategy<std::remove_cvref_t<S>>
    AnyStrategy(S&& strategy)  // NOLINT: implicit on purpose, Tuner(space, Hyperband{...})
        : impl_(std::make_unique<std::remove_cvref_t<S>>(std::forward<S>(strategy))) {}

    void start(const SearchSpace& space, const StrategyContext& ctx) { impl_->start(space, ctx); }
    [[nodiscard]] Suggestion ask() { return impl_->ask(); }
    [[nodiscard]] Decision report(TrialId id, Resource step, double loss) { return impl_->report(id, step, loss); }
    [[nodiscard]] Decision report(TrialId id, Resource step, const IntermediateReport& report) {
        return impl_->report(id, step, report);
    }
    void tell(TrialId id, const Outcome& o) { impl_->tell(id, o); }
    [[nodiscard]] std::string name() const { return impl_->name(); }
    [[nodiscard]] std::vector<DecisionRecord> take_decisions() { return impl_->take_decisions(); }
    [[nodiscard]] std::optional<Resource> max_resource() const { return impl_->max_resource(); }
    /// Whether every trial runs to its budget (RandomSearch, GridSearch, Bayesian): nothing judges
    /// intermediate reports.
    [[nodiscard]] bool runs_to_completion() const { return dynamic_cast<const RunToCompletion*>(impl_.get()) != nullptr; }
    [[nodiscard]] std::vector<std::string> notes() const { return impl_->notes(); }
    [[nodiscard]] Settings settings() const { return impl_->settings(); }
    void set_max_trials(std::size_t max_trials) { impl_->set_max_trials(max_trials); }
    /// Hands earlier runs' trials to the strategy; false when it does not learn from them.
    bool warm_start(const std::vector<WarmStartObservation>& observations, WarmStartType type) {
        return impl_->warm_start(observations, type);
    }
    [[nodiscard]] Scheduler& get() noexcept { return *impl_; }
    [[nodiscard]] const Scheduler& get() const noexcept { return *impl_; }

private:
    std::unique_ptr<Scheduler> impl_;
};

}  // namespace hypertune

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/scheduler.hpp>
#endif
