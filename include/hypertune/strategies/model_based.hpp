// SPDX-License-Identifier: MIT
#pragma once
// ModelBasedSampler: the multi-fidelity Gaussian-process sampler of model-based Hyperband (BOHB:
// Falkner, Klein, Hutter, "BOHB: Robust and Efficient Hyperparameter Optimization at Scale", ICML
// 2018). A scheduler that uses it (Hyperband in either mode, ASHA) keeps its schedule, its stops,
// pauses and promotions; only the configurations of new trials change: they come from a
// Gaussian-process model (GPSampler) instead of uniform sampling. ModelBased<Hyperband> (and
// ModelBasedHyperband) is Hyperband with this sampler, ModelBased<ASHA> ASHA with it. The sampler
// learns from the scheduler's calls and decisions alone (sampler.hpp). Choices, in order:
//
// - Levels: the resources at which trials are compared, i.e. the scheduler's rung resources plus
//   max_resource (SamplerContext::levels; Hyperband: every rung of every bracket of its schedule;
//   ASHA: rung_resources()).
//   Losses at one level are comparable; losses across levels are not, so each level has its own
//   observations and a model sees one level only.
// - Observations: one loss per (trial, level), the latest. A report at a level records there; a
//   report that skips levels records at the highest level it reached (as the rungs judge it); a
//   repeated report at the level it last recorded overwrites it (a retried trial); tell() records
//   its final loss the same way at the resource the trial reached. A failed trial records a failure
//   at the next level it was running towards (a model there sees it at the worst loss of the level:
//   a crash says something about the configuration, not about the fidelity).
// - Which level: the largest one with at least `min_points` finite losses (default d + 2, d = the
//   tuned parameters: BOHB fits its model once a budget holds more than d + 1 points). As higher
//   levels fill up the model moves up to them: it then learns from the most faithful losses there
//   are. Until some level has enough, the configuration is random (RandomSampler's).
// - What the model at a level sees: the losses there (a failure recorded there counts as the worst
//   loss); the trials still running below it, as pending (they may get there); and some of the
//   trials that ended or are paused below it. Those have no loss at the level; their loss at the
//   highest level they reached, shifted by the median difference between the two levels over the trials
//   that reached both, estimates one. The estimate enters the model only when it is worse than the
//   median loss at the level: there the rungs' verdict (a bad region) is safe to pass on, and the
//   model learns where not to look although no trial ran there to the top, which matters most while
//   the level holds few losses. Nearer the best it is too noisy when learning curves differ: on the
//   simulated cluster of bench/harness_multifidelity, entering every stopped trial (shifted, or at
//   the worst loss) made the best final loss worse and each proposal slower. A trial that failed
//   below the level enters as a failure (the level's worst loss) when one of the 3 trials nearest
//   to it failed too: it lies in a region that fails (a learning rate that diverges), which the
//   model must learn to avoid at every level. Left out, such failures let the model extrapolate
//   the good losses at a crash region's edge into it: with the optimum just inside a region of
//   35% of the box that fails at once, 93% of the model's proposals fell in it; 15% with this
//   rule (random sampling: 35%), 10% entering every failure. A lone failure among successes (a
//   trial that failed at random) is left out, as entering it at the worst loss keeps the model
//   away from good regions too: with every 7th trial failing, entering every failure cut the
//   model's proposals near the optimum from 0.43 to 0.33 (ASHA, promotion type; stop type 0.50 to
//   0.23) and raised the best final loss from 0.091 to 0.106; this rule, 0.33 and 0.28 near it,
//   0.093 (test_model_based.cpp, three seeds' medians). A trial left out, failed or with an estimate not
//   entered, looks unexplored to the model: a proposal within Bayesian::pending_radius of one is
//   marked pending and the model asked again (at most 3 times), and one still that near is dropped
//   for the random configuration (on a small discrete space the model kept proposing a few points:
//   107 distinct configurations of 200 trials on 512).
// - Random fraction: a new trial keeps its random configuration (RandomSampler's) with probability
//   `random_fraction` (default 1/3, as in BOHB), decided by a hash of (seed, trial id). Those keep
//   the search global (the model cannot be trusted outside what it has seen) and keep BOHB's
//   guarantee: at worst a constant factor slower than Hyperband. random_fraction = 1 is the
//   scheduler with random sampling exactly.
// - Proposal: a fresh Gaussian-process sampler, seeded by (seed, trial id), started on the same
//   space and given the level's data (observed and pending points); its first sample is the
//   model's (initial_points = min_points, so it skips its space-filling design). Fresh, since the
//   data change level and content between proposals, not only by growing; but it goes on from
//   the last hyperparameter fit at its level and refits as one long-lived sampler would (every
//   new result below 20, then every refit_every = 5): 5x cheaper per trial over 500 trials
//   than a full fit per proposal, with the same quality on the simulated cluster (README).
// - Resumed trials (synchronous Hyperband's promotions) keep the configuration they were first
//   given: the scheduler asks the sampler for new trials only.
// - Decisions: a Stop ends a trial for the model (synchronous Hyperband stops paused trials at its
//   barrier without a tell). A Pause counts like an end until a Promote: with the promotion type
//   most paused trials are never promoted, and as pending points, spread over the whole space,
//   they hid the optimum from the model (0.09 of its proposals near the optimum instead of 0.52 in
//   tests/bayesian/test_model_based.cpp).
// - Notes: when the model takes over and each time it moves up a level; the model's fallbacks
//   (GPSampler::notes), each reason once.
// - Determinism: a model proposal depends on the observations so far, so the same seed and the same
//   sequence of calls give the same configurations; under a parallel Tuner results arrive in an
//   order that depends on timing, so configurations proposed by the model can differ run to run.
//   The trials that keep their random configuration are random search's, whatever the timing.

#include <hypertune/config.hpp>
#include <hypertune/error.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/sampler.hpp>
#include <hypertune/samplers/random_sampler.hpp>
#include <hypertune/scheduler.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/strategies/asha.hpp>
#include <hypertune/strategies/bayesian.hpp>
#include <hypertune/strategies/hyperband.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace hypertune::detail {
struct GpFitMemory;  // detail/gp_model.hpp
}  // namespace hypertune::detail

namespace hypertune {

struct ModelBasedOptions {
    /// The share of new trials that keep a random configuration, in [0, 1].
    double random_fraction = 1.0 / 3.0;
    /// Finite losses a level needs before a model is fitted on it; 0: d + 2 (d = tuned parameters).
    std::size_t min_points = 0;
    /// Quasi-random candidates the model scores per proposal (BayesianOptions::candidates).
    std::size_t candidates = 512;
};

/// The multi-fidelity Gaussian-process sampler (see the top of model_based.hpp).
class ModelBasedSampler final : public Sampler {
public:
    /// Throws InvalidArgument unless random_fraction is in [0, 1], min_points is 0 or >= 2 and
    /// candidates >= 1.
    HYPERTUNE_INLINE explicit ModelBasedSampler(ModelBasedOptions options = {});

    [[nodiscard]] std::string name() const override { return "ModelBased"; }
    [[nodiscard]] HYPERTUNE_INLINE Settings settings() const override;

    HYPERTUNE_INLINE void start(const SearchSpace& space, const SamplerContext& ctx) override;
    [[nodiscard]] HYPERTUNE_INLINE std::optional<Config> sample(TrialId id) override;
    HYPERTUNE_INLINE void on_report(TrialId id, Resource step, double loss) override;
    HYPERTUNE_INLINE void on_result(TrialId id, const Outcome& outcome) override;
    // A stopped trial reaches no further level (synchronous Hyperband stops paused trials at its
    // barrier without a tell); a paused one is not pending until it is promoted.
    HYPERTUNE_INLINE void on_decision(const DecisionRecord& d) override;

    /// When and where the model took over, and the model's fallbacks.
    [[nodiscard]] std::vector<Note> notes() const override { return notes_; }

    /// The resources where losses are recorded, increasing (once started).
    [[nodiscard]] const std::vector<Resource>& levels() const noexcept { return resources_; }
    /// Trials with a loss recorded at `resource`; 0 for a resource that is not a level.
    [[nodiscard]] HYPERTUNE_INLINE std::size_t observations(Resource resource) const;
    /// The level the last model proposal was fitted on; empty while configurations are random.
    [[nodiscard]] std::optional<Resource> model_resource() const {
        if (!model_level_) return std::nullopt;
        return resources_[*model_level_];
    }
    /// Whether trial `id`'s configuration came from the model (false for random ones and unknown ids).
    [[nodiscard]] bool proposed_by_model(TrialId id) const {
        auto it = trials_.find(id);
        return it != trials_.end() && it->second.from_model;
    }
    /// New trials whose configuration came from the model since start().
    [[nodiscard]] std::size_t model_proposals() const noexcept { return model_proposals_; }
    /// Hyperparameter fits made for those proposals: each proposal's model goes on from the last
    /// fit at its level and refits as one Bayesian sampler would (every result below 20, then
    /// every BayesianOptions::refit_every = 5), so past the first proposals most make none.
    [[nodiscard]] std::size_t model_fits() const noexcept { return model_fits_; }
    /// The finite losses a level needs before the model uses it (min_points, or d + 2), once started.
    [[nodiscard]] std::size_t min_points() const noexcept { return min_points_; }
    [[nodiscard]] const ModelBasedOptions& options() const noexcept { return options_; }

private:
    struct Level {
        std::map<TrialId, double> losses;  // by trial id, so that the model sees them in a fixed order
        std::size_t finite = 0;
    };
    struct TrialState {
        Config config;
        std::vector<double> point;  // its unit-cube encoding
        int last_level = -1;  // the highest level it recorded a loss at
        bool ended = false;   // failed or stopped: it will reach no further level
        bool paused = false;  // paused at a rung until a promotion, which most never get
        bool from_model = false;
    };

    static constexpr std::uint64_t stream_model = 0x3b0001;
    static constexpr std::uint64_t stream_random_share = 0x3b0002;
    static constexpr std::size_t min_shift_pairs = 3;
    static constexpr int max_repeat_asks = 3;
    static constexpr std::size_t failure_neighbours = 3;

    [[nodiscard]] HYPERTUNE_INLINE bool keeps_random(TrialId id) const;
    // The largest level with enough finite losses.
    [[nodiscard]] HYPERTUNE_INLINE std::optional<std::size_t> level_for_model() const;
    HYPERTUNE_INLINE void set_loss(std::size_t level, TrialId id, double loss);
    // A loss at `step`: recorded at the highest level reached if it is a new one, or at the level
    // last recorded when the step is that level exactly (a repeated report: the latest wins).
    HYPERTUNE_INLINE void record(TrialId id, TrialState& t, Resource step, double loss);
    // The model's configuration for new trial `id`, fitted on level `level`; empty when it failed.
    [[nodiscard]] HYPERTUNE_INLINE std::optional<Config> propose(TrialId id, std::size_t level);
    // The first trial of `trials` closer than Bayesian::pending_radius to the unit-cube point `u`.
    [[nodiscard]] HYPERTUNE_INLINE static const TrialState* nearest_within(const std::vector<const TrialState*>& trials,
                                                                          const std::vector<double>& u);
    // Whether one of the failure_neighbours trials nearest to `failed` (trial `id`; among those
    // that recorded a loss or a failure at some level) failed too: it lies in a region that fails.
    [[nodiscard]] HYPERTUNE_INLINE bool among_failures(TrialId id, const TrialState& failed) const;
    // The median of the finite losses of a level that has some.
    [[nodiscard]] HYPERTUNE_INLINE static double median_loss(const Level& l);
    // Per level below `level`: the median of (loss at `level` - loss there) over the trials with a
    // finite loss at both, or nothing when fewer than min_shift_pairs have.
    [[nodiscard]] HYPERTUNE_INLINE std::vector<std::optional<double>> shifts_to(std::size_t level) const;
    // Adds "trial <id>: <text>" unless a note of the same text up to its numbers was added before.
    HYPERTUNE_INLINE void note_once(TrialId id, const std::string& text);

    ModelBasedOptions options_;
    SearchSpace space_;
    std::uint64_t seed_ = 0;
    std::vector<Resource> resources_;  // the levels, increasing
    std::size_t min_points_ = 0;
    std::vector<Level> levels_;               // parallel to resources_
    std::map<TrialId, TrialState> trials_;    // every trial sampled, by id: the model's order
    std::vector<Note> notes_;
    std::set<std::string> model_notes_seen_;  // note texts without their digits
    std::optional<std::size_t> model_level_;  // the level of the last model proposal
    // Per level, the last model's hyperparameter fit, which the next proposal's model goes on from
    // (shared: a copy of the sampler may go on with it; never changed once made).
    std::vector<std::shared_ptr<const detail::GpFitMemory>> fits_;
    std::size_t model_proposals_ = 0;
    std::size_t model_fits_ = 0;
};

namespace detail {

/// The options type a scheduler is built from (HyperbandOptions, AshaOptions), or void.
template <class S>
struct scheduler_options {
    using type = void;
};
template <class S>
    requires requires(const S& s) { s.options(); }
struct scheduler_options<S> {
    using type = std::remove_cvref_t<decltype(std::declval<const S&>().options())>;
};

}  // namespace detail

/// Model-based Hyperband (or ASHA): the scheduler `Inner` with ModelBasedSampler as its sampler.
/// ModelBased(Hyperband({.max_resource = 81}), {.random_fraction = 0.2}) is
/// Hyperband({.max_resource = 81}, ModelBasedSampler({.random_fraction = 0.2})), with the
/// sampler's accessors at hand.
template <class Inner>
    requires std::derived_from<Inner, Scheduler> && (!std::is_void_v<typename detail::scheduler_options<Inner>::type>)
class ModelBased : public Inner {
    using InnerOptions = typename detail::scheduler_options<Inner>::type;

public:
    /// Throws InvalidArgument unless random_fraction is in [0, 1], min_points is 0 or >= 2 and
    /// candidates >= 1.
    explicit ModelBased(Inner inner, ModelBasedOptions options = {}) : Inner(std::move(inner)) {
        this->use_sampler(ModelBasedSampler(options));
    }
    /// ModelBased<Hyperband>({.max_resource = 81, .mode = HyperbandMode::Synchronous}, {...}).
    explicit ModelBased(const InnerOptions& inner_options, ModelBasedOptions options = {})
        : ModelBased(Inner(inner_options), options) {}

    /// The sampler, with what it has learnt.
    [[nodiscard]] const ModelBasedSampler& model() const noexcept {
        return static_cast<const ModelBasedSampler&>(*this->sampler());
    }
    /// The scheduler without the model's accessors.
    [[nodiscard]] const Inner& inner() const noexcept { return *this; }
    [[nodiscard]] Inner& inner() noexcept { return *this; }
    [[nodiscard]] const ModelBasedOptions& options() const noexcept { return model().options(); }

    /// The resources where losses are recorded, increasing (the rungs and max_resource).
    [[nodiscard]] std::vector<Resource> levels() const { return this->fidelity_levels(); }
    [[nodiscard]] std::size_t observations(Resource resource) const { return model().observations(resource); }
    [[nodiscard]] std::optional<Resource> model_resource() const { return model().model_resource(); }
    [[nodiscard]] bool proposed_by_model(TrialId id) const { return model().proposed_by_model(id); }
    [[nodiscard]] std::size_t model_proposals() const noexcept { return model().model_proposals(); }
    [[nodiscard]] std::size_t model_fits() const noexcept { return model().model_fits(); }
    [[nodiscard]] std::size_t min_points() const noexcept { return model().min_points(); }
};

/// Model-based Hyperband (BOHB-style, with a Gaussian process): ModelBasedHyperband({.max_resource = 81}).
using ModelBasedHyperband = ModelBased<Hyperband>;

static_assert(Strategy<ModelBased<Hyperband>>);
static_assert(Strategy<ModelBased<ASHA>>);

}  // namespace hypertune

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/strategies/model_based.hpp>
#endif
