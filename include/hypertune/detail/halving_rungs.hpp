// SPDX-License-Identifier: MIT
#pragma once
// HalvingRungs: the rungs of ASHA and of asynchronous Hyperband, of either HalvingType, behind one
// interface, so that both schedulers run them the same way. ask() asks resume() first (a promotion,
// or a held trial judged in the top), then starts a new trial with add_trial()'s budget, and when
// nothing new may start asks nothing_new() whether to wait, release a held trial, or end.

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

/// The scheduler's name with its rules: "ASHA", "ASHA-wait", "ASHA-promotion", "ASHA-promotion-fill",
/// the promotion type's with "-min<n>" when a rung promotes only from n results while new trials
/// may start (min_rung_results), each with "-best" when trials are judged on their best report
/// (RankBy::BestReport) and "-noise<t>" with a noise tolerance of t.
[[nodiscard]] inline std::string halving_name(const std::string& scheduler, HalvingType type, bool wait_for_peers,
                                              bool fill_idle_workers, RankBy rank_by = RankBy::LastReport,
                                              std::size_t min_rung_results = 0, double noise_tolerance = 0.0) {
    const std::string judged = (rank_by == RankBy::BestReport ? "-best" : "") +
                               (noise_tolerance > 0 ? fmt::format("-noise{:g}", noise_tolerance) : std::string());
    if (type == HalvingType::Promotion)
        return scheduler + (fill_idle_workers ? "-promotion-fill" : "-promotion") +
               (min_rung_results > 0 ? "-min" + std::to_string(min_rung_results) : "") + judged;
    return (wait_for_peers ? scheduler + "-wait" : scheduler) + judged;
}

/// The rung rules as Settings (Scheduler::settings()), the reduction factor under the scheduler's
/// own name for it ("reduction_factor", "eta").
[[nodiscard]] inline Settings halving_settings(Resource min_resource, const char* factor_name, int factor,
                                               HalvingType type, bool wait_for_peers, bool fill_idle_workers,
                                               RankBy rank_by, std::size_t min_rung_results, double noise_tolerance) {
    const auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
    return {{"min_resource", std::to_string(min_resource)},
            {factor_name, std::to_string(factor)},
            {"type", type == HalvingType::Promotion ? "promotion" : "stop"},
            {"wait_for_peers", flag(wait_for_peers)},
            {"fill_idle_workers", flag(fill_idle_workers)},
            {"rank_by", rank_by == RankBy::BestReport ? "best_report" : "last_report"},
            {"min_rung_results", std::to_string(min_rung_results)},
            {"noise_tolerance", fmt::format("{}", noise_tolerance)}};
}

/// Whether idle workers are filled: as set, else on for the promotion type (the default, chosen by
/// measurement: README, "Idle workers").
[[nodiscard]] inline bool fills_idle_workers(HalvingType type, std::optional<bool> fill_idle_workers) noexcept {
    return fill_idle_workers.value_or(type == HalvingType::Promotion);
}

/// Throws InvalidArgument, naming `scheduler`, when an option is set for the type that ignores it:
/// wait_for_peers belongs to the stop type, fill_idle_workers (set to true) and min_rung_results
/// to the promotion type.
inline void validate_halving_rules(const char* scheduler, HalvingType type, bool wait_for_peers,
                                   std::optional<bool> fill_idle_workers, std::size_t min_rung_results = 0) {
    if (type == HalvingType::Stop && min_rung_results > 0)
        throw InvalidArgument(fmt::format("{}: min_rung_results is a rule of the promotion type (.type = "
                                          "HalvingType::Promotion); for the stop type, wait_for_peers holds the first "
                                          "arrivals at a rung",
                                          scheduler));
    if (type == HalvingType::Promotion && wait_for_peers)
        throw InvalidArgument(fmt::format("{}: wait_for_peers is a rule of the stop type; the promotion type never "
                                          "lets a trial past a rung before eta trials reached it",
                                          scheduler));
    if (type == HalvingType::Stop && fill_idle_workers.value_or(false))
        throw InvalidArgument(fmt::format("{}: fill_idle_workers is a rule of the promotion type (.type = "
                                          "HalvingType::Promotion); the stop type never leaves a worker waiting",
                                          scheduler));
}

/// Throws InvalidArgument, naming `scheduler`, when trials are to be judged on their best report
/// in a run of several objectives: a best report per objective would be a point no trial reported.
inline void validate_rank_by(const char* scheduler, RankBy rank_by, std::size_t objectives) {
    if (rank_by == RankBy::BestReport && objectives > 1)
        throw InvalidArgument(fmt::format("{}: rank_by = RankBy::BestReport judges one objective; this run has {} "
                                          "(use RankBy::LastReport, which ranks every objective's last report)",
                                          scheduler, objectives));
}

/// Throws InvalidArgument, naming `scheduler`, unless noise_tolerance is a finite number >= 0, and
/// when it is set in a run whose rungs rank by Pareto priority (several objectives, or
/// constraints): no single loss is compared with a cut-off there. `objectives` = 0: not known yet
/// (the constructor's check).
inline void validate_noise_tolerance(const char* scheduler, double noise_tolerance, std::size_t objectives = 0,
                                     bool constrained = false) {
    if (!std::isfinite(noise_tolerance) || noise_tolerance < 0)
        throw InvalidArgument(fmt::format("{}: noise_tolerance must be a finite number >= 0 (a multiple of the "
                                          "measured noise of the reports; 0: off), got {}",
                                          scheduler, noise_tolerance));
    if (noise_tolerance > 0 && (objectives > 1 || constrained))
        throw InvalidArgument(fmt::format(
            "{}: noise_tolerance compares one loss with a rung's cut-off; this run's rungs rank by Pareto "
            "priority ({}): leave noise_tolerance at 0",
            scheduler, objectives > 1 ? fmt::format("{} objectives", objectives) : std::string("constraints")));
}

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
    /// held trial released when nothing else can run, else `done` (with a Stop record for each
    /// trial left paused).
    [[nodiscard]] Suggestion nothing_new(Suggestion done, std::vector<DecisionRecord>& out) {
        if (type_ == HalvingType::Promotion) {
            if (promotion_.running() > 0) {
                if (fill_idle_workers_)
                    if (auto r = promotion_.speculate(out))
                        return Suggestion::run(r->trial, std::move(r->config), r->to, r->from);
                return Suggestion::wait();
            }
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
