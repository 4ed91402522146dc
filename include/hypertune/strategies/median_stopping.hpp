// SPDX-License-Identifier: MIT
#pragma once
// MedianStopping: SageMaker AMT's early stopping (early_stopping_type = Auto) around any strategy
// that does not stop trials itself (RandomSearch, GridSearch, Bayesian).
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
// The wrapped strategy still chooses the configurations and sees every call; a Stop it returns
// itself is passed on.

#include <hypertune/detail/rungs.hpp>
#include <hypertune/error.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/strategy.hpp>

#include <fmt/format.h>

#include <cmath>
#include <limits>
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
class MedianStopping {
public:
    /// MedianStopping(RandomSearch{}) or MedianStopping(GridSearch{...}, {.min_trials = 3}).
    /// Throws InvalidArgument when min_trials is 0 or grace_steps is negative.
    explicit MedianStopping(S inner, MedianStoppingOptions options = {}) : inner_(std::move(inner)), options_(options) {
        if (options_.min_trials < 1)
            throw InvalidArgument(fmt::format("MedianStopping: min_trials must be >= 1, got {}", options_.min_trials));
        if (options_.grace_steps < 0)
            throw InvalidArgument(
                fmt::format("MedianStopping: grace_steps must be >= 0, got {}", options_.grace_steps));
    }

    void start(const SearchSpace& space, const StrategyContext& ctx) {
        inner_.start(space, ctx);
        trials_.clear();
        steps_.clear();
        decisions_.clear();
    }

    [[nodiscard]] Suggestion ask() { return inner_.ask(); }

    [[nodiscard]] Decision report(TrialId id, Resource step, double loss) {
        const Decision inner_decision = inner_.report(id, step, loss);
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
                decisions_.push_back(DecisionRecord{
                    id, DecisionRecord::Kind::Stop, -1, -1, step, loss, median, others.size(),
                    fmt::format("worse than the median of the running averages of {} other trials at step {}",
                                others.size(), step)});
            }
        }
        others.insert(average);
        return decision;
    }

    void tell(TrialId id, const Outcome& outcome) {
        inner_.tell(id, outcome);
        trials_.erase(id);
    }

    [[nodiscard]] std::string name() const { return fmt::format("MedianStopping({})", std::string(inner_.name())); }

    [[nodiscard]] Resource max_resource() const requires HasMaxResource<S> { return inner_.max_resource(); }
    [[nodiscard]] const std::vector<std::string>& notes() const requires HasNotes<S> { return inner_.notes(); }
    void warm_start(const std::vector<WarmStartObservation>& observations, WarmStartType type)
        requires LearnsFromEarlierRuns<S>
    {
        inner_.warm_start(observations, type);
    }

    /// The wrapped strategy's records (if it keeps any), then the stops of the median rule.
    [[nodiscard]] std::vector<DecisionRecord> take_decisions() {
        if constexpr (ExplainsDecisions<S>) {
            auto records = inner_.take_decisions();
            if (records.empty()) return std::exchange(decisions_, {});
            for (auto& r : decisions_) records.push_back(std::move(r));
            decisions_.clear();
            return records;
        } else {
            return std::exchange(decisions_, {});
        }
    }

    [[nodiscard]] const S& inner() const noexcept { return inner_; }
    [[nodiscard]] S& inner() noexcept { return inner_; }
    [[nodiscard]] const MedianStoppingOptions& options() const noexcept { return options_; }

private:
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
    std::vector<DecisionRecord> decisions_;
};

}  // namespace hypertune
