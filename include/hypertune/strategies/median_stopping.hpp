// SPDX-License-Identifier: MIT
#pragma once
// MedianStopping: SageMaker AMT's early stopping (early_stopping_type = Auto) around a strategy that
// never runs a trial again once a run of it ended (RandomSearch, GridSearch, Bayesian, stop-type ASHA
// or asynchronous Hyperband): a median stop is final, and a scheduler that pauses and promotes
// trials would take a stopped one for paused and run it again (it is refused).
//
// The rule, as AMT documents it: after each report at step t, take the running average (the mean of
// the values reported at steps <= t) of every earlier trial up to step t, and stop the current trial
// if its value at step t is worse than the median of those running averages. Here "earlier trials"
// are all the other trials that reported that same step t before this report, whether they are
// still running, finished, stopped or failed: in a parallel run a trial is judged as soon as enough
// others got to step t, not only once they have finished. Steps are matched exactly (trainers report
// at the same epochs). The rule applies only when at least min_trials other trials have a value at
// step t, and only at steps >= grace_steps. Ties continue; NaN values are ignored. Per step the
// running averages are kept split around their median (two heaps), so a decision costs O(log n).
//
// The wrapped scheduler still chooses the configurations (with its sampler) and sees every call; a
// Stop it returns itself is passed on. Its decisions go to the same sink as the median rule's.

#include <hypertune/detail/split_heap.hpp>
#include <hypertune/detail/str_cat.hpp>
#include <hypertune/error.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/scheduler.hpp>

#include <fmt/core.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hypertune {

struct MedianStoppingOptions {
    /// Other trials that must have a value at a step before the rule can stop anything there.
    std::size_t min_trials = 5;
    /// No trial is stopped at a step below this (steps count from 1).
    Resource grace_steps = 1;
};

/// Wraps `S` with AMT's median stopping rule (see the top of median_stopping.hpp).
template <Strategy S>
class MedianStopping : public Scheduler {
public:
    /// MedianStopping(RandomSearch{}) or MedianStopping(GridSearch{...}, {.min_trials = 3}).
    /// Throws InvalidArgument when min_trials is 0 or grace_steps is negative, or when `inner`
    /// runs trials again after a run ended (Scheduler::resumes_trials()).
    explicit MedianStopping(S inner, MedianStoppingOptions options = {})
        : Scheduler(AnySampler{}), inner_(std::move(inner)), options_(options) {
        if (inner_.resumes_trials())
            throw InvalidArgument(fmt::format(
                "MedianStopping({0}): {0} pauses trials and runs them again, and would take a trial the median rule "
                "stopped for a paused one; wrap one that does not (RandomSearch, GridSearch, Bayesian, or ASHA or "
                "asynchronous Hyperband with .type = ht::HalvingType::Stop)",
                inner_.name()));
        if (options_.min_trials < 1)
            throw InvalidArgument(fmt::format("MedianStopping: min_trials must be >= 1, got {}", options_.min_trials));
        if (options_.grace_steps < 0)
            throw InvalidArgument(
                fmt::format("MedianStopping: grace_steps must be >= 0, got {}", options_.grace_steps));
        if (const auto full = inner_.max_resource(); full && options_.grace_steps > *full)
            throw InvalidArgument(fmt::format("MedianStopping: grace_steps = {} is past max_resource = {}: the rule "
                                              "would never apply",
                                              options_.grace_steps, *full));
    }

    [[nodiscard]] std::string name() const override { return fmt::format("MedianStopping({})", inner_.name()); }
    [[nodiscard]] std::optional<Resource> max_resource() const override { return inner_.max_resource(); }
    [[nodiscard]] std::vector<std::string> notes() const override { return inner_.notes(); }
    /// Its rule's options, then the inner scheduler's settings.
    [[nodiscard]] Settings settings() const override {
        Settings s{{"min_trials", std::to_string(options_.min_trials)},
                   {"grace_steps", std::to_string(options_.grace_steps)}};
        for (auto& setting : inner_.settings()) s.push_back(std::move(setting));
        return s;
    }
    bool warm_start(const std::vector<WarmStartObservation>& observations, WarmStartType type) override {
        return inner_.warm_start(observations, type);
    }

    [[nodiscard]] const S& inner() const noexcept { return inner_; }
    [[nodiscard]] S& inner() noexcept { return inner_; }
    [[nodiscard]] const MedianStoppingOptions& options() const noexcept { return options_; }

protected:
    void on_start() override {
        // The median of a step's values mixes trials that meet the constraints with trials that
        // break them: a feasible trial would be stopped against infeasible ones, without a word.
        if (context().constrained)
            throw InvalidArgument(fmt::format(
                "MedianStopping({}): the median rule compares a step's values whether the trials meet the run's "
                "constraints or not, and would stop feasible trials against infeasible ones; with constraints, use "
                "ASHA or asynchronous Hyperband (.type = ht::HalvingType::Stop for final stops), which put trials "
                "that break a constraint last",
                inner_.name()));
        inner_.start(space(), context_for_inner());
        trials_.clear();
        steps_.clear();
    }

    // The inner scheduler hands out the trials: it keeps the same ids and budget as ours.
    [[nodiscard]] Suggestion next(const TrialBudget&) override { return deciding_inner().ask(); }
    void on_max_trials(std::size_t max_trials) override { deciding_inner().set_max_trials(max_trials); }

    // The whole report goes to the inner scheduler (its seconds too); the median rule reads the loss.
    [[nodiscard]] Decision on_report_losses(TrialId id, Resource step, const IntermediateReport& report) override {
        const double loss = report.loss;
        const Decision inner_decision = deciding_inner().report(id, step, report);
        TrialState& t = trials_[id];
        if (t.stopped) return Decision::Stop;
        if (step <= t.last_step || std::isnan(loss)) return inner_decision;
        t.last_step = step;
        t.sum += loss;
        ++t.count;
        const double average = detail::rank_value(t.sum / static_cast<double>(t.count));

        detail::SplitHeap& others = steps_[step];
        Decision decision = inner_decision;
        if (inner_decision == Decision::Continue && step >= options_.grace_steps &&
            others.size() >= options_.min_trials) {
            const double median = others.median();
            if (loss > median) {
                decision = Decision::Stop;
                t.stopped = true;
                DecisionRecord stop{
                    id, DecisionRecord::Kind::Stop, -1, -1, step, loss, median, others.size(),
                    detail::str_cat({"worse than the median of the running averages of ", others.size(),
                                     others.size() == 1 ? " other trial at step " : " other trials at step ", step})};
                decide(stop);
                // The sampler is the wrapped scheduler's (this one has none): it hears the rule's
                // decisions, once decide() took them, as it hears that scheduler's own.
                if (const AnySampler& sampler = inner_.sampler()) sampler->on_decision(stop);
            }
        }
        others.insert(average);
        return decision;
    }

    void on_tell(TrialId id, const Outcome& outcome) override {
        deciding_inner().tell(id, outcome);
        trials_.erase(id);
    }

private:
    // The inner scheduler, its decisions routed to this one's sink (a copy of a started
    // MedianStopping must not record them in the one it was copied from).
    S& deciding_inner() noexcept {
        route_decisions_here(inner_);
        return inner_;
    }

    struct TrialState {
        Resource last_step = 0;
        double sum = 0;
        std::size_t count = 0;
        bool stopped = false;
    };

    S inner_;
    MedianStoppingOptions options_;
    std::unordered_map<TrialId, TrialState> trials_;         // running trials
    std::unordered_map<Resource, detail::SplitHeap> steps_;  // running averages reported at each step
};

}  // namespace hypertune
