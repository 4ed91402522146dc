// SPDX-License-Identifier: MIT
#pragma once
// Promotion-type asynchronous successive halving (Li et al., "A System for Massively Parallel
// Hyperparameter Tuning", MLSys 2020, Algorithm 2; Syne Tune's type="promotion"), over one or more
// brackets, shared by ASHA and asynchronous Hyperband.
//
// A trial runs one rung at a time. It starts with budget = the first rung of its bracket; when its
// run ends having reached that budget, its loss is recorded at the rung and it pauses (a Pause
// record). ask() then looks for a paused trial to promote, from the highest rung of each bracket
// down: at a rung with m recorded losses and q = floor(m / eta), a paused trial is promoted when its
// loss is <= the q-th smallest loss recorded there (the cut-off: it is in the top 1/eta; ties go to
// the trial), the best paused trial first (then the smaller id). A promoted trial resumes with the
// same id, budget = the next rung (max_resource after the last rung) and resume_from = the rung's
// resource (a Promote record), continuing from its checkpoint or starting over. Only when nothing
// can be promoted does a new trial start. So no trial is judged before eta peers reached its rung,
// and none is stopped for arriving early: it waits, paused, until later arrivals settle its rank.
// A trial that reaches max_resource is over. With a noise tolerance t (HalvingRungs, from the
// measured noise of the reports), "in the top 1/eta" means a loss <= the cut-off + t. With
// min_rung_results = n (HalvingRungs), while new
// trials may start, promote() skips rungs with fewer than n recorded losses, so that the first
// promotions of a rung are judged on more peers; once none may start, every rung promotes from eta.
//
// The price is that a promising trial waits (paused) until enough peers reach its rung; with a
// budget of new trials, some paused trials are never promoted. When nothing runs and no new trial
// may start, no rung can get another result: a ladder whose highest rung with results promoted
// none (fewer than eta reached it) promotes its best feasible trial there (promote_at_end()), and
// again at each rung it reaches, so that a small budget or a sampler that ran out still trains a
// trial to max_resource, as a truncated synchronous bracket keeps one. When ask() has nothing
// left to run, each trial still paused gets a Stop record (close()).
// With a budget of new trials, once it is spent the workers that finish wait (ask() answers Wait)
// while the last trials run towards their rungs. With fill_idle_workers, such a worker gets a
// paused trial instead (speculate()), by the first of two rules that finds one, each the highest
// rung first:
// - the benefit of the doubt: at a rung with m recorded losses and a trials running towards it,
//   q' = floor((m + a) / eta) is the most the top 1/eta can hold once they have all arrived; the
//   best paused trial there is promoted early when fewer than q' recorded losses are strictly
//   lower than its own, i.e. when it will be in the top 1/eta should the arrivals all rank behind
//   it;
// - the time the run needs anyway: the run cannot end before its running trials reach their
//   budgets, the furthest h seconds away (h = the largest of (budget - last step reported) x the
//   trial's seconds per unit from now). The best paused trial, at the highest rung, whose
//   remaining units to max_resource take at most h seconds at its own pace runs straight to
//   max_resource: it ends by then, so it costs no wall time, and it is a second chance for the
//   best of those the rule left behind. It is recorded at no rung on the way, so it makes no other
//   trial promotable and starts no cascade of work. A trial's pace is the seconds per unit of its
//   latest run so far (IntermediateReport::seconds over the units that run trained: from 0 when it
//   reports step 1 again, a trainer that kept no checkpoint), and once that run has ended
//   Outcome::seconds over them, which counts what the trainer did after its last report (saving
//   its checkpoint: a trial paused at its first rung has reported once, and the save can take
//   longer than the unit trained); one not measured yet is given the mean pace of those measured.
//   An objective that keeps no checkpoint trains a resumed trial again from unit 1: once the latest
//   resumed run to end did so (its first report at or below the step it resumed from, or, through
//   the Tuner, which passes on no step judged before, Outcome::started_over), a paused trial's
//   remaining work is every unit to max_resource, and a resumed run's pace counts its units from 0.
//   A resumed trial running towards its first report (through the Tuner, the first step past the
//   one it resumed from, however many units it trains again before) still counts from that step:
//   h errs short, so that a fill ends before the run would have.
//   A run spends time before its first unit too (starting, loading data): from a run's second
//   report on, its units are timed apart from it (the marginal pace: seconds between its first
//   and latest reports per unit, and its set-up: what came before, less the units it reported
//   first). A running trial's units to go then take the marginal pace each (without one, its
//   pace less the mean set-up measured spread over the units that pace was measured on: a short
//   estimate, so that a set-up does not stretch h), and a paused trial needs what its last run
//   spent beside its units (set-up and save) plus its units at the marginal pace (without a
//   marginal pace, its units at its pace: a long estimate, so that a fill does not outlast the
//   run). Without any measure (reports without seconds), or when the mean measured pace
//   is under 10 ms a unit (an objective for tests or overhead benchmarks, whose times the runner's
//   own work and thread scheduling decide, not training: a millisecond and more under load or a
//   sanitizer), every unit counts as one second: h and the remaining work are counted in units.
//   Configurations train at very different paces (8x between XGBoost's deepest and shallowest
//   trees in bench/data), so counting units would let a slow fill outlast the run, and leave fast
//   ones unused.
// No new trial is started for either.
// A report past the trial's budget gets Stop (the trainer overran its rung; it still counts at the
// rung, ranked on its report at the rung's resource as its peers are, or on its outcome when it
// made none there, and a promotion resumes it from where it got to, where its checkpoint is), past
// max_resource a Stop record. A failed trial, or one that
// ended short of its budget (the run stopping), leaves the rungs: it is never promoted. A NaN loss
// ranks worst. Each rung keeps every recorded loss in a SplitHeap (the cut-off in O(1)) and its
// paused trials in an ordered set (the best in O(1)), so recording and promoting cost O(log m) and
// a scan costs O(rungs).
// In a run with several objectives or with constraints (MO-ASHA), "in the top 1/eta" means a
// place below q in the rung's Pareto priority order (feasible first, then non-dominated rank,
// then crowding distance; detail/rung_ranking.hpp); the best paused trial is the one placed
// first, and records carry no threshold.

#include <hypertune/linkage.hpp>
#include <hypertune/config.hpp>
#include <hypertune/detail/live_trials.hpp>
#include <hypertune/detail/rungs.hpp>
#include <hypertune/strategy.hpp>

#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace hypertune::detail {

class PromotionRungs {
public:
    PromotionRungs() = default;

    /// @param brackets    per bracket, its increasing rung resources, all below max_resource
    /// @param labels      per bracket, the number put in DecisionRecord::bracket (-1 for ASHA)
    /// @param eta         promote the top 1/eta at each rung
    /// @param pareto      rank by Pareto priority (several objectives or constraints)
    PromotionRungs(const std::vector<std::vector<Resource>>& brackets, std::vector<int> labels, int eta,
                   Resource max_resource, bool pareto = false);

    /// When no new trial may start and a worker would wait: the best paused trial that can still
    /// reach its rung's top 1/eta once the trials running towards that rung have arrived, promoted
    /// now, else one whose remaining units to max_resource take no longer than the running trials
    /// still need, run to the end (see the top of this file); appends its Promote record to `out`.
    [[nodiscard]] std::optional<Resumption> speculate(std::vector<DecisionRecord>& out);

    /// Registers a new trial in `bracket` (its configuration is kept, to resume it with); returns
    /// its budget: the bracket's first rung, or max_resource for a bracket without rungs.
    Resource add_trial(TrialId id, std::size_t bracket, Config config);

    /// The next paused trial to promote, if any (see the top of this file), from a rung with at
    /// least `at_least` recorded results; appends its Promote record to `out`.
    [[nodiscard]] std::optional<Resumption> promote(std::vector<DecisionRecord>& out, std::size_t at_least = 0);

    /// Continue, unless the step overruns the trial's budget (Stop) or max_resource (Stop and a
    /// record). Unknown trials and repeated or older steps get Continue. The report's seconds, when
    /// given, measure the trial's pace.
    [[nodiscard]] Decision report(TrialId id, Resource step, const IntermediateReport& report,
                                  std::vector<DecisionRecord>& out);

    /// The trial's run ended. Having reached its budget (or Completed), its loss is recorded at its
    /// rung and it pauses (a Pause record) unless the budget was max_resource; failed, or stopped
    /// short of its budget, it leaves the rungs.
    void finish(TrialId id, const Outcome& outcome, std::vector<DecisionRecord>& out);

    /// Nothing runs and no new trial may start, so no rung gets another result: in each ladder
    /// whose highest rung with results has promoted none (fewer than eta reached it, or its top
    /// was infeasible), the best feasible trial paused there goes on, the highest such rung first,
    /// as a truncated synchronous bracket keeps one trial; asked again as it pauses higher, it
    /// trains to max_resource. So a small max_jobs, or a sampler that ran out (a grid, a finite
    /// space), still ends with a trial trained in full. Appends its Promote record to `out`.
    [[nodiscard]] std::optional<Resumption> promote_at_end(std::vector<DecisionRecord>& out);

    /// The run ends (nothing runs, nothing new may start): every trial still paused gets a Stop
    /// record, so that whoever drives the scheduler learns that it is over.
    void close(std::vector<DecisionRecord>& out);

    /// Trials running now (started or promoted, not yet finished).
    [[nodiscard]] std::size_t running() const noexcept { return running_.size(); }
    /// A paused trial whose loss is this far above its rung's cut-off still counts as in the top
    /// 1/eta (by loss only; the rungs' noise tolerance, detail/report_noise.hpp).
    void set_tolerance(double tolerance) noexcept { tolerance_ = tolerance; }
    /// Trials paused at a rung, waiting for a promotion that may never come.
    [[nodiscard]] std::size_t paused() const noexcept;
    /// How many losses are recorded at rung `rung` of bracket `b`.
    [[nodiscard]] std::size_t recorded(std::size_t b, std::size_t rung) const;

private:
    struct Rung {
        Resource resource = 0;
        RungRanking ranking;                            // every trial recorded here
        std::set<std::pair<double, TrialId>> waiting;  // paused here: (rank value, id)
        std::size_t arriving = 0;                       // trials running towards it
        std::size_t promoted = 0;                       // trials resumed from it, by any rule
    };
    struct TrialState {
        std::size_t bracket = 0;
        std::size_t rung = 0;  // the rung it runs towards (== ladder size: towards max_resource)
        Resource budget = 0;
        Resource last_step = 0;
        bool running = true;
        double loss = 0;  // its rank value where it waits
        bool feasible = true;  // its result where it waits met the constraints
        std::size_t running_slot = 0;  // its place in running_, while it runs
        // Its latest run: where it started (0, the rung it resumed from, or 0 again when the
        // trainer kept no checkpoint and reports from step 1), the last step it reported, and its
        // seconds per unit (NaN: not measured).
        Resource run_from = 0;
        Resource run_step = 0;
        bool run_reported = false;
        // The step its latest run resumed it from (0: a new trial), and whether that run trained
        // again from the start instead (its first report at or below it, or Outcome::started_over).
        Resource resumed_from = 0;
        bool started_over = false;
        double pace = std::numeric_limits<double>::quiet_NaN();
        Resource pace_units = 0;  // the units `pace` was measured over (its set-up spread over them)
        // Its pace apart from its set-up: the run's first timed report (step and seconds); from a
        // later one, the seconds per unit after it (`marginal`), and the seconds the run spent
        // before its first unit (`setup`: starting, loading data); once a run with a marginal
        // pace has ended, the seconds it spent beside its units (`overhead`: the set-up and what
        // followed its last report, saving its checkpoint). NaN: not measured.
        Resource first_step = 0;
        double first_seconds = std::numeric_limits<double>::quiet_NaN();
        double marginal = std::numeric_limits<double>::quiet_NaN();
        double setup = std::numeric_limits<double>::quiet_NaN();
        double overhead = std::numeric_limits<double>::quiet_NaN();
        // Its latest run's report at its budget: what it is ranked on at the rung should the
        // trainer overrun the budget (its loss after more units is no peer's).
        std::optional<IntermediateReport> at_budget;
        Config config;
    };

    // The paused trial that `rung` would promote now, if one is in its top 1/eta.
    [[nodiscard]] std::optional<std::pair<double, TrialId>> promotable(Rung& rung);
    // The best paused trial at `rung` (the first in Pareto priority, or the lowest loss).
    [[nodiscard]] std::optional<std::pair<double, TrialId>> best_waiting(Rung& rung) {
        return first_waiting(rung, [](const TrialState&) { return true; });
    }
    // The best paused trial at `rung` for which `accept(state)` holds.
    template <class Accept>
    [[nodiscard]] std::optional<std::pair<double, TrialId>> first_waiting(Rung& rung, Accept accept) {
        if (!rung.ranking.pareto()) {
            for (const auto& [value, id] : rung.waiting)
                if (accept(trials_.at(id))) return std::pair{value, id};
            return std::nullopt;
        }
        // A trial waits at one rung at most, and `loss` holds its rank value there.
        for (TrialId id : rung.ranking.order())
            if (const TrialState* t = trials_.find(id); t != nullptr && rung.waiting.count({t->loss, id}) && accept(*t))
                return std::pair{t->loss, id};
        return std::nullopt;
    }
    // Resumes paused trial `id` (rank value `value`) from rung `k` of bracket `b` to rung `to` (the
    // next one by default; the ladder's size: to max_resource), with a Promote record saying `why`.
    [[nodiscard]] Resumption resume(std::size_t b, std::size_t k, double value, TrialId id, std::string why,
                                    std::vector<DecisionRecord>& out, std::optional<std::size_t> to = std::nullopt);
    // `rungs` ((bracket, index) pairs) ordered by resource, the closest to max_resource first
    // (ties keep their order): the order promotions look in.
    void highest_first(std::vector<std::pair<std::size_t, std::size_t>>& rungs) const;
    // Trial `id` starts running towards its rung `t.rung` (counted in that rung's `arriving`).
    void run_towards(TrialId id, TrialState& t);
    // Below this mean pace (seconds per unit), measured times are noise: units are counted.
    static constexpr double min_timed_pace = 0.01;
    // Whether the fill counts seconds (reports measured paces worth comparing) or units.
    [[nodiscard]] bool timed() const noexcept {
        return paced_ > 0 && pace_sum_ / static_cast<double>(paced_) >= min_timed_pace;
    }
    // Its run took `seconds` (NaN: not measured) up to `step`, a report's or (`ended`) the whole
    // run's: its pace, seconds per unit trained, and apart from its set-up once it can tell.
    void measure_pace(TrialState& t, double seconds, Resource step, bool ended) noexcept;
    // Trial `t`'s seconds per unit: its own measure, else the mean of those measured; 1 when the
    // fill counts units.
    [[nodiscard]] double pace_of(const TrialState& t) const noexcept {
        if (!timed()) return 1.0;
        return std::isnan(t.pace) ? pace_sum_ / static_cast<double>(paced_) : t.pace;
    }
    // The seconds a unit of running trial `t` takes from now: its marginal pace; before it has
    // one (a single report in every run so far, or none yet), its pace less the mean set-up
    // measured spread over the units that pace was measured on (an estimate that errs short, so
    // that the horizon is not stretched by a set-up); else pace_of().
    [[nodiscard]] double running_pace(const TrialState& t) const noexcept;
    // The seconds paused trial `t` needs to train `units` more: its last run's overhead plus the
    // units at its marginal pace; without a marginal pace, the units at pace_of() (set-up spread
    // over the units, an estimate that errs long, so that a fill does not outlast the run).
    [[nodiscard]] double seconds_for(const TrialState& t, Resource units) const noexcept;
    // The most seconds a running trial still needs to reach its budget, at its pace.
    [[nodiscard]] double running_horizon() const;

    [[nodiscard]] Resource budget_at(std::size_t bracket, std::size_t rung) const {
        const auto& ladder = ladders_[bracket];
        return rung < ladder.size() ? ladder[rung].resource : max_resource_;
    }

    std::vector<std::vector<Rung>> ladders_;
    std::vector<int> labels_;
    std::size_t eta_ = 3;
    Resource max_resource_ = 0;
    double tolerance_ = 0.0;
    LiveTrials<TrialState> trials_;
    std::vector<TrialId> running_;  // the trials running now, in no order (swap-removed in O(1))
    double pace_sum_ = 0.0;         // the latest pace of each trial measured so far, summed
    std::size_t paced_ = 0;         // how many trials that is
    double setup_sum_ = 0.0;        // the latest set-up of each trial measured so far, summed
    std::size_t set_up_ = 0;        // how many trials that is
    // The latest resumed run that ended trained again from the start: the objective keeps no
    // checkpoint, so a fill trains every unit, and a resumed run's pace counts its units from 0.
    bool restarts_ = false;
};

}  // namespace hypertune::detail

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/detail/promotion_rungs.hpp>
#endif
