// SPDX-License-Identifier: MIT
#pragma once
// Hyperband (Li, Jamieson, DeSalvo, Rostamizadeh, Talwalkar, "Hyperband: A Novel Bandit-Based
// Approach to Hyperparameter Optimization", JMLR 18, 2018), with SageMaker AMT's options:
// min_resource, max_resource (in the trainer's resource units: epochs, boosting rounds...) and eta.
//
// The schedule. With R = max_resource / min_resource and s_max = floor(log_eta R) (computed with
// integers: the largest s with min_resource * eta^s <= max_resource), bracket s = s_max..0 starts
// n(s) = ceil((s_max + 1) / (s + 1) * eta^s) configurations; rung i = 0..s of bracket s keeps
// n_i = floor(n(s) / eta^i) of them and gives each the resource r_i = max_resource / eta^(s - i).
// When that is not an integer it is rounded to the nearest one (halves up): the result is always
// >= min_resource, strictly increasing along the bracket, and the last rung is max_resource exactly.
//
// Two ways to run it (HyperbandMode):
// - Asynchronous (the default, what AMT does): every bracket is an ASHA ladder whose rungs are the
//   bracket's r_0..r_{s-1}, of HyperbandOptions::type. Promotion (the default;
//   detail/promotion_rungs.hpp): a trial runs to its bracket's next rung and pauses there until it
//   ranks in the top 1/eta of that rung; once no new trial may start, idle workers are filled
//   with paused trials (fill_idle_workers). Stop (detail/rungs.hpp): every trial starts with budget =
//   max_resource and reports as it goes; at each rung it continues only if it is in the top 1/eta
//   of the losses recorded there so far, otherwise report() returns Stop. No barrier either way.
//   New trial k goes to a bracket by smooth weighted round-robin with weights n(s) (each bracket
//   then spends about the same total resource, as in the paper): every bracket adds its weight to a
//   credit, the bracket with the most credit takes the trial (ties: the larger s) and pays the sum of
//   all weights. It depends on k only: for (1, 81, 3) the brackets go 4 3 4 2 4 3 4 4 1 ..., and
//   every 143 trials hold exactly 81, 34, 15, 8 and 5 trials of brackets 4..0. A failed trial is
//   left out of the rungs it had not reached. ask() answers Done once max_trials trials started.
// - Synchronous (the paper's algorithm): brackets s_max, s_max - 1, ..., 0 (then again from s_max
//   while max_trials allows). A trial's budget is its rung's resource. When it returns it pauses
//   (DecisionRecord Pause) until every trial of its rung has returned; then the best
//   min(n_{i+1}, max(1, floor(m / eta))) of the m trials of the rung (equal to n_{i+1} for a full
//   bracket) are promoted: ask() resumes each with the same id and configuration, budget r_{i+1}
//   and resume_from = the resource it reached (DecisionRecord Promote); the others get a Stop
//   record (threshold = the worst promoted loss, peers = m). Failed trials rank last and are never
//   promoted; ties go to the smaller trial id. While a bracket waits at a barrier, ask() starts the
//   next bracket rather than answering Wait, so workers do not idle; older brackets always have
//   priority. So ask() answers Wait only once max_trials trials have started and every unfinished
//   bracket waits at a barrier, and Done once nothing is left; with max_trials = 0 the iterations
//   repeat until the runner stops. When max_trials runs out, the last bracket started is truncated
//   (it starts fewer configurations and keeps floor(m / eta), at least one, at each rung) and the
//   rest never start. A report past the trial's budget gets Stop (past max_resource, with a Stop
//   record); its tell() still counts for the rung. Trial ids, the bracket of each id and its
//   configuration do not depend on the number of workers or on the order in which trials finish.
//   Its brackets, barriers and promotions are run by detail/synchronous_brackets.hpp.
// - HyperbandOptions::brackets = k runs only brackets s_max..s_max - k + 1, in either mode: the
//   round-robin weighs those alone, and the synchronous iterations go from s_max down to
//   s_max - k + 1; 0 runs all. Unset, the asynchronous mode runs the two most aggressive (all when
//   there are fewer) and the synchronous mode all of them. Bracket numbers (DecisionRecord::bracket,
//   bracket_of()) stay the paper's s.
//
// In both modes new trials' configurations come from the sampler: by default RandomSampler, so that
// trial k's configuration is RandomSampler::sample(space, seed, k).

#include <hypertune/linkage.hpp>
#include <hypertune/config.hpp>
#include <hypertune/detail/boxed.hpp>
#include <hypertune/detail/halving_rules.hpp>
#include <hypertune/error.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/samplers/random_sampler.hpp>
#include <hypertune/scheduler.hpp>
#include <hypertune/strategies/halving_type.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hypertune {

/// How Hyperband runs its brackets (see the top of hyperband.hpp).
enum class HyperbandMode {
    Asynchronous,  ///< stop-based: every bracket is an ASHA ladder; no barrier (AMT's Hyperband)
    Synchronous,   ///< the paper's successive halving with a barrier at every rung; trials pause and resume
};

struct HyperbandOptions {
    /// The smallest resource a trial gets before it can be judged (AMT's MinResource).
    Resource min_resource = 1;
    /// The full resource of a trial (AMT's MaxResource).
    Resource max_resource = 81;
    /// Keep the top 1/eta at every rung.
    int eta = 3;
    HyperbandMode mode = HyperbandMode::Asynchronous;
    /// The asynchronous mode's rungs: pause trials at a rung until they can be promoted (the
    /// default, chosen by measurement: see halving_type.hpp), or stop them as they reach it. The
    /// synchronous mode always pauses and promotes, at its barriers.
    HalvingType type = HalvingType::Promotion;
    /// Asynchronous stop type: a trial that reaches a rung before eta - 1 others of its bracket did
    /// waits there (paused) until enough trials arrive to judge it, instead of a free pass.
    bool wait_for_peers = false;
    /// Asynchronous promotion type: once no new trial may start, a worker that would wait gets a
    /// paused trial instead: one that can still make its rung's top 1/eta when the trials running
    /// towards that rung have arrived, promoted early, else one whose units to max_resource fit in
    /// what the running trials still need, run to the end (detail/promotion_rungs.hpp). Unset: on
    /// for the asynchronous promotion type (README, "Idle workers"); false saves the units it spends.
    std::optional<bool> fill_idle_workers = std::nullopt;
    /// How many brackets run: the `brackets` most aggressive ones, s = s_max down to
    /// s_max - brackets + 1 (Syne Tune's option of the same name); 0 runs all s_max + 1 of the
    /// paper. Fewer brackets hedge less against misleading early values and spend fewer units:
    /// 1 is ASHA on Hyperband's rungs. Both modes. Unset: 2 in the asynchronous mode (all when
    /// there are fewer), chosen by measurement (README, "Recorded learning curves": the paper's
    /// schedule over all brackets trains 0.27 of random search's units however its rungs
    /// decide), and all in the synchronous mode, the paper's algorithm.
    std::optional<int> brackets = std::nullopt;
    /// What a trial is judged on at a rung, in either mode: the loss reported there, or its best
    /// so far (rank_by.hpp). One objective only.
    RankBy rank_by = RankBy::LastReport;
    /// Asynchronous promotion type: while new trials may still start, a rung promotes only once it
    /// holds at least this many results; once none may, from its first eta as before. 0 (the
    /// default): a paused trial is promoted as soon as it is in its rung's top 1/eta. eta^2 (9)
    /// judges on more peers, so a run with a fixed number of trials trains fewer units, but it
    /// finds its best later (README, "Recorded learning curves").
    std::size_t min_rung_results = 0;
    /// Asynchronous mode, either type: a trial whose loss at a rung is within noise_tolerance x the
    /// measured noise of the reports above the rung's cut-off counts as in its top 1/eta, so that
    /// one unlucky epoch does not decide. The noise: how far a trial's loss moves from one unit to
    /// the next beyond its trend, over every trial's reports so far (detail/report_noise.hpp; a
    /// trainer that reports every unit). 0 (the default): off. With 1, the default reached random
    /// search's best in 19 or 20 orders of 20 on every recorded set, for 4-39% more units (README,
    /// "Noisy learning curves"). One objective and no constraints.
    double noise_tolerance = 0.0;
};

/// One rung of a bracket: how many configurations run there, and with how much resource.
struct HyperbandRung {
    std::size_t configurations = 0;
    Resource resource = 0;
    friend bool operator==(const HyperbandRung&, const HyperbandRung&) = default;
};

/// Bracket s of the schedule: its rungs, from the most configurations to one.
struct HyperbandBracket {
    int s = 0;
    std::vector<HyperbandRung> rungs;
    friend bool operator==(const HyperbandBracket&, const HyperbandBracket&) = default;
};

namespace detail {

/// The largest s with min_resource * eta^s <= max_resource, in integers.
[[nodiscard]] int hyperband_s_max(Resource min_resource, Resource max_resource, int eta) noexcept;

/// The schedule of the Hyperband paper, indexed by s (see the top of hyperband.hpp).
[[nodiscard]] std::vector<HyperbandBracket> hyperband_schedule(Resource min_resource, Resource max_resource,
                                                                      int eta);

}  // namespace detail

/// Hyperband, asynchronous (default) or synchronous. See the top of hyperband.hpp for the rules.
class Hyperband : public Scheduler {
public:
    /// Throws InvalidArgument unless 1 <= min_resource, min_resource * eta <= max_resource and eta >= 2. New trials'
    /// configurations come from `sampler` (random by default).
    HYPERTUNE_INLINE explicit Hyperband(HyperbandOptions options = {}, AnySampler sampler = RandomSampler{});
    // Out of line, with the constructor: the rungs are complete only in impl/. Moves may throw (a
    // moved rung state allocates a new box; boxed.hpp).
    HYPERTUNE_INLINE Hyperband(const Hyperband&);
    HYPERTUNE_INLINE Hyperband(Hyperband&&);
    HYPERTUNE_INLINE Hyperband& operator=(const Hyperband&);
    HYPERTUNE_INLINE Hyperband& operator=(Hyperband&&);
    HYPERTUNE_INLINE ~Hyperband() override;

    /// The paper's schedule: schedule()[s] is bracket s, s = 0..s_max().
    [[nodiscard]] const std::vector<HyperbandBracket>& schedule() const noexcept { return schedule_; }
    [[nodiscard]] int s_max() const noexcept { return static_cast<int>(schedule_.size()) - 1; }
    /// The least aggressive bracket that runs (0 when every bracket runs): the brackets
    /// s = s_max..lowest_bracket() run.
    [[nodiscard]] int lowest_bracket() const noexcept { return lowest_s_; }
    /// How many brackets run (options().brackets, or its default for the mode).
    [[nodiscard]] int brackets() const noexcept { return s_max() + 1 - lowest_s_; }
    [[nodiscard]] const HyperbandOptions& options() const noexcept { return options_; }

    /// Asynchronous: "Hyperband-promotion-fill" (the default), "Hyperband-promotion"
    /// (.fill_idle_workers = false), "Hyperband" (stop type) or "Hyperband-wait" (stop type,
    /// wait_for_peers), the promotion type's with "-min<n>" for min_rung_results = n, "-noise<t>"
    /// for noise_tolerance = t; synchronous:
    /// "Hyperband". Then "-brackets=k" when k brackets run and others
    /// do not ("Hyperband-promotion-fill-brackets=2" by default), with the sampler's name when it is
    /// not random.
    [[nodiscard]] std::string name() const override {
        std::string rules = options_.mode == HyperbandMode::Synchronous
                                ? std::string("Hyperband")
                                : detail::halving_name("Hyperband", options_.type, options_.wait_for_peers,
                                                       detail::fills_idle_workers(options_.type, options_.fill_idle_workers),
                                                       options_.rank_by, options_.min_rung_results,
                                                       options_.noise_tolerance);
        if (options_.mode == HyperbandMode::Synchronous && options_.rank_by == RankBy::BestReport) rules += "-best";
        if (lowest_s_ > 0) rules += fmt::format("-brackets={}", brackets());
        return with_sampler_name(rules);
    }
    /// Every option but max_resource (journaled apart), brackets as run, then the sampler's.
    [[nodiscard]] HYPERTUNE_INLINE Settings settings() const override;
    [[nodiscard]] std::optional<Resource> max_resource() const override { return options_.max_resource; }
    [[nodiscard]] bool resumes_trials() const override {
        return options_.mode == HyperbandMode::Synchronous || options_.type == HalvingType::Promotion ||
               options_.wait_for_peers;
    }
    /// Asynchronous: any number, as its sampler allows (each rung ranks by Pareto priority,
    /// MO-ASHA's rule in every bracket). Synchronous: one, ranked at its barriers by loss.
    [[nodiscard]] bool supports_objectives(std::size_t objectives) const override {
        if (objectives == 1) return true;
        return options_.mode == HyperbandMode::Asynchronous && (!sampler() || sampler()->supports_objectives(objectives));
    }

    /// The bracket s of trial `id`, or -1 for an id not handed out yet.
    [[nodiscard]] int bracket_of(TrialId id) const noexcept {
        return id < bracket_of_.size() ? static_cast<int>(bracket_of_[id]) : -1;
    }

protected:
    HYPERTUNE_INLINE void on_start() override;

    [[nodiscard]] Suggestion next(const TrialBudget& budget) override {
        return options_.mode == HyperbandMode::Asynchronous ? ask_async(budget) : ask_sync(budget);
    }

    [[nodiscard]] HYPERTUNE_INLINE Decision on_report_losses(TrialId id, Resource step, const IntermediateReport& report) override;

    HYPERTUNE_INLINE void on_tell(TrialId id, const Outcome& outcome) override;

    // Every rung resource of every bracket, and max_resource.
    [[nodiscard]] HYPERTUNE_INLINE std::vector<Resource> fidelity_levels() const override;

private:
    // Smooth weighted round-robin over the brackets, weights n(s).
    [[nodiscard]] int next_async_bracket();

    [[nodiscard]] Suggestion ask_async(const TrialBudget& budget);

    [[nodiscard]] Suggestion ask_sync(const TrialBudget& budget);

    HyperbandOptions options_;
    std::vector<HyperbandBracket> schedule_;
    int lowest_s_ = 0;  // brackets s_max..lowest_s_ run
    std::vector<std::int8_t> bracket_of_;  // indexed by trial id (ids are dense)

    std::vector<DecisionRecord> made_;  // scratch for one call's decisions: no allocation per call

    // Both modes' rungs and what they judge on, defined in impl/: a program that makes a
    // Hyperband does not compile them.
    struct Rungs;
    detail::Boxed<Rungs> rung_state_;

    // asynchronous: the weights of the brackets' round-robin
    std::vector<std::int64_t> credit_;
    std::vector<std::int64_t> weights_;
    std::int64_t weight_total_ = 0;
};

static_assert(Strategy<Hyperband>);

}  // namespace hypertune

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/strategies/hyperband.hpp>
#endif
