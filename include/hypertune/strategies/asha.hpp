// SPDX-License-Identifier: MIT
#pragma once
// ASHA: asynchronous successive halving (Li, Jamieson, Rostamizadeh, Gonina, Ben-tzur, Hardt, Recht,
// Talwalkar, "A System for Massively Parallel Hyperparameter Tuning", MLSys 2020): one bracket whose
// rungs are min_resource * reduction_factor^k up to max_resource / reduction_factor (1, 3, 9, 27 for
// 1..81 with factor 3; 1, 3, 9 for 1..30: no decision within a factor of max_resource, where the last
// few units' noise would decide it; detail/rungs.hpp, geometric_rungs), in one of two types
// (HalvingType; Promotion by default):
// - Stop, as Ray Tune's ASHA scheduler: every trial starts with budget = max_resource; the first
//   time it reaches a rung, it continues only if its loss is in the top 1/reduction_factor of the
//   losses recorded at that rung so far (the first reduction_factor - 1 trials at a rung always
//   continue). The exact rule is at the top of detail/rungs.hpp, shared with asynchronous Hyperband.
// - Promotion, the paper's algorithm: a trial runs to the next rung and pauses; ask() promotes a
//   paused trial once it is in the top 1/reduction_factor of its rung, and starts a new trial only
//   when none can be promoted. The exact rule is at the top of detail/promotion_rungs.hpp.
// No trial waits for a barrier in either type, so workers idle only when the budget of new trials
// is spent and nothing paused can be promoted yet (and, filling idle workers, the promotion type's
// default, when no paused trial can run on either).

#include <hypertune/linkage.hpp>
#include <hypertune/detail/boxed.hpp>
#include <hypertune/detail/halving_rules.hpp>
#include <hypertune/error.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/samplers/random_sampler.hpp>
#include <hypertune/scheduler.hpp>
#include <hypertune/strategies/halving_type.hpp>
#include <hypertune/strategies/rank_by.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hypertune {

struct AshaOptions {
    /// The grace period: the first rung, and the least resource a trial gets before it can be stopped.
    Resource min_resource = 1;
    /// The full resource of a trial: every trial's budget.
    Resource max_resource = 81;
    /// Keep the top 1/reduction_factor at every rung (eta in the paper).
    int reduction_factor = 3;
    /// Pause trials at a rung until they can be promoted (the default, chosen by measurement: see
    /// halving_type.hpp), or stop them as they reach it.
    HalvingType type = HalvingType::Promotion;
    /// Stop type: a trial that reaches a rung before reduction_factor - 1 others did waits there
    /// (paused) until enough trials arrive to judge it, instead of continuing on a free pass.
    bool wait_for_peers = false;
    /// Promotion type: once no new trial may start, a worker that would wait gets a paused trial
    /// instead: one that can still make its rung's top 1/reduction_factor when the trials running
    /// towards that rung have arrived, promoted early, else one whose units to max_resource fit in
    /// what the running trials still need, run to the end (detail/promotion_rungs.hpp). Unset: on
    /// for the promotion type (README, "Idle workers"); false saves the units it spends.
    std::optional<bool> fill_idle_workers = std::nullopt;
    /// What a trial is judged on at a rung: the loss reported there, or its best so far
    /// (rank_by.hpp). One objective only.
    RankBy rank_by = RankBy::LastReport;
    /// Promotion type: while new trials may still start, a rung promotes only once it holds at
    /// least this many results; once none may, from its first reduction_factor as before. 0 (the
    /// default): a paused trial is promoted as soon as it is in its rung's top 1/reduction_factor.
    /// reduction_factor^2 (9) judges on more peers, so a run with a fixed number of trials trains
    /// fewer units, but it finds its best later (README, "Recorded learning curves").
    std::size_t min_rung_results = 0;
    /// Either type: a trial whose loss at a rung is within noise_tolerance x the measured noise of
    /// the reports above the rung's cut-off counts as in its top 1/reduction_factor, so that one
    /// unlucky epoch does not decide. The noise: how far a trial's loss moves from one unit to the
    /// next beyond its trend, over every trial's reports so far (detail/report_noise.hpp; a trainer
    /// that reports every unit). 0 (the default): off. A single ladder gains little from it where
    /// one epoch drops the best configuration far below a rung's cut-off; Hyperband's brackets
    /// gain more (README, "Noisy learning curves"). One objective and no constraints.
    double noise_tolerance = 0.0;
};

class ASHA : public Scheduler {
public:
    /// Throws InvalidArgument unless 1 <= min_resource < max_resource and reduction_factor >= 2.
    /// New trials' configurations come from `sampler` (random by default).
    HYPERTUNE_INLINE explicit ASHA(AshaOptions options = {}, AnySampler sampler = RandomSampler{});
    // Out of line, with the constructor: the rungs are complete only in impl/. Moves may throw (a
    // moved rung state allocates a new box; boxed.hpp).
    HYPERTUNE_INLINE ASHA(const ASHA&);
    HYPERTUNE_INLINE ASHA(ASHA&&);
    HYPERTUNE_INLINE ASHA& operator=(const ASHA&);
    HYPERTUNE_INLINE ASHA& operator=(ASHA&&);
    HYPERTUNE_INLINE ~ASHA() override;

    /// "ASHA" (stop type), "ASHA-wait" (stop type, wait_for_peers), "ASHA-promotion-fill" (the
    /// default) or "ASHA-promotion" (.fill_idle_workers = false), "-min<n>" after it with
    /// min_rung_results = n, "-noise<t>" with noise_tolerance = t, with the
    /// sampler's name when it is not random. A journal records it: a run resumes only with the
    /// same rules.
    [[nodiscard]] std::string name() const override {
        return with_sampler_name(detail::halving_name("ASHA", options_.type, options_.wait_for_peers,
                                                      detail::fills_idle_workers(options_.type, options_.fill_idle_workers),
                                                      options_.rank_by, options_.min_rung_results,
                                                      options_.noise_tolerance));
    }
    /// Every option but max_resource (journaled apart), then the sampler's.
    [[nodiscard]] HYPERTUNE_INLINE Settings settings() const override;
    [[nodiscard]] std::optional<Resource> max_resource() const override { return options_.max_resource; }
    [[nodiscard]] bool resumes_trials() const override {
        return options_.type == HalvingType::Promotion || options_.wait_for_peers;
    }
    /// Any number, as its sampler allows: with several objectives (or constraints) each rung ranks
    /// by Pareto priority, MO-ASHA (detail/rung_ranking.hpp).
    [[nodiscard]] bool supports_objectives(std::size_t objectives) const override {
        return objectives == 1 || !sampler() || sampler()->supports_objectives(objectives);
    }

    /// The rung resources where trials are judged, increasing: min_resource, then each further one
    /// at most max_resource / reduction_factor.
    [[nodiscard]] const std::vector<Resource>& rung_resources() const noexcept { return rungs_; }
    [[nodiscard]] const AshaOptions& options() const noexcept { return options_; }

protected:
    HYPERTUNE_INLINE void on_start() override;

    [[nodiscard]] HYPERTUNE_INLINE Suggestion next(const TrialBudget& budget) override;
    [[nodiscard]] HYPERTUNE_INLINE Decision on_report_losses(TrialId id, Resource step, const IntermediateReport& report) override;
    HYPERTUNE_INLINE void on_tell(TrialId id, const Outcome& outcome) override;

    [[nodiscard]] HYPERTUNE_INLINE std::vector<Resource> fidelity_levels() const override;

private:
    // The ladder and what it judges on, defined in impl/: a program that makes an ASHA does not
    // compile its rungs.
    struct Rungs;

    AshaOptions options_;
    std::vector<Resource> rungs_;
    detail::Boxed<Rungs> rung_state_;
    std::vector<DecisionRecord> made_;  // scratch for one call's decisions: no allocation per call
};

static_assert(Strategy<ASHA>);

}  // namespace hypertune

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/strategies/asha.hpp>
#endif
