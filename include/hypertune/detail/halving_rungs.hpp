// SPDX-License-Identifier: MIT
#pragma once
// HalvingRungs: the rungs of ASHA and of asynchronous Hyperband, of either HalvingType, behind one
// interface, so that both schedulers run them the same way. ask() asks resume() first (a promotion,
// or a held trial judged in the top), then starts a new trial with add_trial()'s budget, and when
// nothing new may start asks nothing_new() whether to wait, release a held trial, or end.

#include <hypertune/detail/halving_rules.hpp>
#include <hypertune/detail/promotion_rungs.hpp>
#include <hypertune/detail/report_noise.hpp>
#include <hypertune/detail/rungs.hpp>
#include <hypertune/error.hpp>
#include <hypertune/strategies/halving_type.hpp>
#include <hypertune/strategies/rank_by.hpp>
#include <hypertune/strategy.hpp>

#include <fmt/core.h>

#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hypertune::detail {

class HalvingRungs {
public:
    HalvingRungs() = default;
    /// `objectives` and `constrained` are the run's (StrategyContext): with several objectives or
    /// with constraints, rungs rank by Pareto priority and every report must carry each
    /// objective's loss.
    HalvingRungs(HalvingType type, const std::vector<std::vector<Resource>>& brackets, std::vector<int> labels,
                 int eta, Resource max_resource, bool wait_for_peers, bool fill_idle_workers,
                 std::size_t objectives = 1, bool constrained = false)
        : type_(type), fill_idle_workers_(fill_idle_workers), objectives_(objectives) {
        const bool pareto = objectives > 1 || constrained;
        if (type_ == HalvingType::Stop)
            stop_ = StopRungs(brackets, std::move(labels), eta, max_resource, wait_for_peers, pareto);
        else
            promotion_ = PromotionRungs(brackets, std::move(labels), eta, max_resource, pareto);
        max_resource_ = max_resource;
    }

    /// Promotion type: while new trials may start, a rung promotes only once it holds at least
    /// `n` results (0: as soon as a paused trial is in its top 1/eta).
    void set_min_rung_results(std::size_t n) noexcept { min_rung_results_ = n; }

    /// Either type, one objective: a loss within `multiple` x the measured noise of the reports
    /// (detail/report_noise.hpp) above a rung's cut-off counts as in its top 1/eta. 0: off, and
    /// the reports are not measured.
    void set_noise_tolerance(double multiple) noexcept { noise_multiple_ = multiple; }

    /// What the scheduler's ask() answers: a paused trial to run again, else the new trial that
    /// `start_new()` makes (a {suggestion, bracket} pair; its budget is set here), else, when no
    /// new trial may start, nothing_new()'s answer. `new_may_start`: the budget allows a new trial
    /// (min_rung_results applies). Records go to `out`.
    template <class StartNew>
    [[nodiscard]] Suggestion next(StartNew&& start_new, std::vector<DecisionRecord>& out, bool new_may_start = false) {
        const std::size_t at_least = new_may_start ? min_rung_results_ : 0;
        if (auto r = resume(out, at_least)) return Suggestion::run(r->trial, std::move(r->config), r->to, r->from);
        auto [s, bracket] = start_new();
        if (!s.runs()) {
            // No new trial after all (the sampler has no more): rungs promote from their first eta.
            if (at_least > 0)
                if (auto r = resume(out)) return Suggestion::run(r->trial, std::move(r->config), r->to, r->from);
            return nothing_new(std::move(s), out);
        }
        s.budget = add_trial(s.trial, bracket, s.config);
        return s;
    }

    /// A paused trial to run again now, if any (its record goes to `out`); promotion type: from a
    /// rung with at least `at_least` results.
    [[nodiscard]] std::optional<Resumption> resume(std::vector<DecisionRecord>& out, std::size_t at_least = 0) {
        return type_ == HalvingType::Stop ? stop_.resume(out) : promotion_.promote(out, at_least);
    }

    /// Registers a new trial; returns its budget (max_resource for the stop type, the bracket's
    /// first rung for the promotion type).
    Resource add_trial(TrialId id, std::size_t bracket, const Config& config) {
        if (type_ == HalvingType::Promotion) return promotion_.add_trial(id, bracket, config);
        stop_.add_trial(id, bracket, config);
        return max_resource_;
    }

    /// Throws InvalidArgument, naming `scheduler`, when the run has several objectives and the
    /// report does not carry each one's loss: the rungs could not rank it.
    [[nodiscard]] Decision report(const char* scheduler, TrialId id, Resource step, const IntermediateReport& report,
                                  std::vector<DecisionRecord>& out) {
        if (objectives_ > 1 && report.losses.size() != objectives_)
            throw InvalidArgument(fmt::format(
                "{} ranks trials on {} objectives, but trial {} reported {} at step {}: report every objective, "
                "trial.report(step, ht::Metrics{{...}})",
                scheduler, objectives_, id,
                report.losses.empty() ? std::string("a single value") : fmt::format("{} losses", report.losses.size()),
                step));
        if (noise_multiple_ > 0) {
            noise_.observe(id, step, report.loss);
            const double tolerance = noise_multiple_ * noise_.sigma();
            if (type_ == HalvingType::Stop)
                stop_.set_tolerance(tolerance);
            else
                promotion_.set_tolerance(tolerance);
        }
        return type_ == HalvingType::Stop ? stop_.report(id, step, report, out)
                                          : promotion_.report(id, step, report, out);
    }

    void finish(TrialId id, const Outcome& outcome, std::vector<DecisionRecord>& out) {
        if (type_ == HalvingType::Stop)
            stop_.finish(id, outcome, out);
        else
            promotion_.finish(id, outcome, out);
    }

    /// When no new trial may start (`done` is the Done the scheduler would answer): Wait while a
    /// running trial may still make a paused one runnable (with fill_idle_workers, a paused trial
    /// promoted on the benefit of the doubt instead, when one can still make its rung's top), a
    /// held trial released when nothing else can run (the promotion type: the best at a ladder's
    /// highest rung that promoted none, PromotionRungs::promote_at_end), else `done` (with a Stop
    /// record for each trial left paused).
    [[nodiscard]] Suggestion nothing_new(Suggestion done, std::vector<DecisionRecord>& out) {
        if (type_ == HalvingType::Promotion) {
            if (promotion_.running() > 0) {
                if (fill_idle_workers_)
                    if (auto r = promotion_.speculate(out))
                        return Suggestion::run(r->trial, std::move(r->config), r->to, r->from);
                return Suggestion::wait();
            }
            if (auto r = promotion_.promote_at_end(out))
                return Suggestion::run(r->trial, std::move(r->config), r->to, r->from);
            promotion_.close(out);  // what is still paused will never run again
            return done;
        }
        if (stop_.waiting() == 0) return done;
        if (stop_.running() > 0) return Suggestion::wait();
        if (auto r = stop_.release(out)) return Suggestion::run(r->trial, std::move(r->config), r->to, r->from);
        return done;
    }

private:
    HalvingType type_ = HalvingType::Stop;
    bool fill_idle_workers_ = false;
    std::size_t min_rung_results_ = 0;
    double noise_multiple_ = 0.0;
    ReportNoise noise_;
    std::size_t objectives_ = 1;
    Resource max_resource_ = 0;
    StopRungs stop_;
    PromotionRungs promotion_;
};

}  // namespace hypertune::detail
