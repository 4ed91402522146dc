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
//   loss); the trials still running or paused below it, as pending (they may get there); and some
//   of the trials that ended below it. Those have no loss at the level; their loss at the highest
//   level they reached, shifted by the median difference between the two levels over the trials
//   that reached both, estimates one. The estimate enters the model only when it is worse than the
//   median loss at the level: there the rungs' verdict (a bad region) is safe to pass on, and the
//   model learns where not to look although no trial ran there to the top, which matters most while
//   the level holds few losses. Nearer the best it is too noisy when learning curves differ: on the
//   simulated cluster of bench/harness_multifidelity, entering every stopped trial (shifted, or at
//   the worst loss) made the best final loss worse and each proposal slower. A trial that failed
//   below the level, or whose estimate is not entered, is left out; since it then looks unexplored
//   to the model, a proposal within Bayesian::pending_radius of one is marked pending and the model
//   asked again (at most 3 times).
// - Random fraction: a new trial keeps its random configuration (RandomSampler's) with probability
//   `random_fraction` (default 1/3, as in BOHB), decided by a hash of (seed, trial id). Those keep
//   the search global (the model cannot be trusted outside what it has seen) and keep BOHB's
//   guarantee: at worst a constant factor slower than Hyperband. random_fraction = 1 is the
//   scheduler with random sampling exactly.
// - Proposal: a fresh GPSampler, seeded by (seed, trial id), started on the same space and given
//   the level's data with GPSampler::observe and observe_pending; its first sample is the model's
//   (initial_points = min_points, so it skips its space-filling design). A fresh model per
//   proposal costs a hyperparameter fit each time; it keeps this simple and exact, since the data
//   change level and content between proposals.
// - Resumed trials (synchronous Hyperband's promotions) keep the configuration they were first
//   given: the scheduler asks the sampler for new trials only.
// - Decisions: a Stop ends a trial for the model (synchronous Hyperband stops paused trials at its
//   barrier without a tell).
// - Notes: when the model takes over and each time it moves up a level; the model's fallbacks
//   (GPSampler::notes), each reason once.
// - Determinism: a model proposal depends on the observations so far, so the same seed and the same
//   sequence of calls give the same configurations; under a parallel Tuner results arrive in an
//   order that depends on timing, so configurations proposed by the model can differ run to run.
//   The trials that keep their random configuration are random search's, whatever the timing.

#include <hypertune/config.hpp>
#include <hypertune/detail/random.hpp>
#include <hypertune/error.hpp>
#include <hypertune/sampler.hpp>
#include <hypertune/samplers/random_sampler.hpp>
#include <hypertune/scheduler.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/strategies/asha.hpp>
#include <hypertune/strategies/bayesian.hpp>
#include <hypertune/strategies/hyperband.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

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
    explicit ModelBasedSampler(ModelBasedOptions options = {}) : options_(options) {
        if (!(options_.random_fraction >= 0.0 && options_.random_fraction <= 1.0))
            throw InvalidArgument(
                fmt::format("ModelBased: random_fraction must be in [0, 1], got {}", options_.random_fraction));
        if (options_.min_points == 1)
            throw InvalidArgument("ModelBased: min_points must be >= 2 (or 0 for d + 2), got 1");
        if (options_.candidates < 1) throw InvalidArgument("ModelBased: candidates must be >= 1, got 0");
    }

    [[nodiscard]] std::string name() const override { return "ModelBased"; }

    void start(const SearchSpace& space, const SamplerContext& ctx) override {
        space_ = space;
        seed_ = ctx.seed;
        resources_ = ctx.levels;
        min_points_ = options_.min_points != 0 ? options_.min_points : space.dimensions() + 2;
        levels_.assign(resources_.size(), Level{});
        trials_.clear();
        notes_.clear();
        model_notes_seen_.clear();
        model_level_.reset();
        model_proposals_ = 0;
    }

    [[nodiscard]] std::optional<Config> sample(TrialId id) override {
        TrialState t{RandomSampler::sample(space_, seed_, id), {}};
        if (!keeps_random(id))
            if (auto level = level_for_model())
                if (auto proposed = propose(id, *level)) {
                    t.config = std::move(*proposed);
                    t.from_model = true;
                }
        t.point = space_.encode(t.config);
        Config out = t.config;
        trials_.insert_or_assign(id, std::move(t));
        return out;
    }

    void on_report(TrialId id, Resource step, double loss) override {
        if (auto it = trials_.find(id); it != trials_.end()) record(id, it->second, step, loss);
    }

    void on_result(TrialId id, const Outcome& outcome) override {
        auto it = trials_.find(id);
        if (it == trials_.end()) return;
        TrialState& t = it->second;
        if (outcome.status == Outcome::Status::Failed || !std::isfinite(outcome.loss)) {
            // A failure at the level it was running towards: the model sees it at the worst loss there.
            t.ended = true;
            const auto next = static_cast<std::size_t>(t.last_level + 1);
            if (next < resources_.size()) {
                set_loss(next, id, std::numeric_limits<double>::quiet_NaN());
                t.last_level = static_cast<int>(next);
            }
            return;
        }
        if (outcome.status == Outcome::Status::Stopped) t.ended = true;
        record(id, t, outcome.resource, outcome.loss);
    }

    // A stopped trial reaches no further level (synchronous Hyperband stops paused trials at its
    // barrier without a tell).
    void on_decision(const DecisionRecord& d) override {
        if (d.kind != DecisionRecord::Kind::Stop) return;
        if (auto it = trials_.find(d.trial); it != trials_.end()) it->second.ended = true;
    }

    /// When and where the model took over, and the model's fallbacks.
    [[nodiscard]] std::vector<Note> notes() const override { return notes_; }

    /// The resources where losses are recorded, increasing (once started).
    [[nodiscard]] const std::vector<Resource>& levels() const noexcept { return resources_; }
    /// Trials with a loss recorded at `resource`; 0 for a resource that is not a level.
    [[nodiscard]] std::size_t observations(Resource resource) const {
        auto it = std::find(resources_.begin(), resources_.end(), resource);
        return it == resources_.end() ? 0 : levels_[static_cast<std::size_t>(it - resources_.begin())].losses.size();
    }
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
        bool from_model = false;
    };

    static constexpr std::uint64_t stream_model = 0x3b0001;
    static constexpr std::uint64_t stream_random_share = 0x3b0002;
    static constexpr std::size_t min_shift_pairs = 3;
    static constexpr int max_repeat_asks = 3;

    [[nodiscard]] bool keeps_random(TrialId id) const {
        if (options_.random_fraction >= 1.0) return true;
        return detail::to_unit(detail::hash3(seed_, stream_random_share, id)) < options_.random_fraction;
    }

    // The largest level with enough finite losses.
    [[nodiscard]] std::optional<std::size_t> level_for_model() const {
        for (std::size_t i = levels_.size(); i-- > 0;)
            if (levels_[i].finite >= min_points_) return i;
        return std::nullopt;
    }

    void set_loss(std::size_t level, TrialId id, double loss) {
        Level& l = levels_[level];
        auto [it, inserted] = l.losses.try_emplace(id, loss);
        if (!inserted) {
            if (std::isfinite(it->second)) --l.finite;
            it->second = loss;
        }
        if (std::isfinite(loss)) ++l.finite;
    }

    // A loss at `step`: recorded at the highest level reached if it is a new one, or at the level
    // last recorded when the step is that level exactly (a repeated report: the latest wins).
    void record(TrialId id, TrialState& t, Resource step, double loss) {
        auto above = std::upper_bound(resources_.begin(), resources_.end(), step);
        if (above == resources_.begin()) return;  // below the first level
        const auto level = static_cast<int>(above - resources_.begin()) - 1;
        const bool at_level = resources_[static_cast<std::size_t>(level)] == step;
        if (level > t.last_level || (level == t.last_level && at_level)) {
            set_loss(static_cast<std::size_t>(level), id, std::isfinite(loss) ? loss : std::numeric_limits<double>::quiet_NaN());
            t.last_level = level;
        }
    }

    // The model's configuration for new trial `id`, fitted on level `level`; empty when it failed.
    [[nodiscard]] std::optional<Config> propose(TrialId id, std::size_t level) {
        const Level& l = levels_[level];
        try {
            GPSampler model(BayesianOptions{.initial_points = min_points_, .candidates = options_.candidates});
            model.start(space_, SamplerContext{detail::hash3(seed_, stream_model, id), {}});
            const auto at = static_cast<int>(level);
            const std::vector<std::optional<double>> shift = shifts_to(level);
            const double median = median_loss(l);
            std::vector<const TrialState*> left_out;  // ended below the level, not entered
            for (const auto& [trial, t] : trials_) {
                if (auto it = l.losses.find(trial); it != l.losses.end()) {
                    model.observe(t.config, it->second);
                } else if (t.last_level > at) {
                    continue;  // its reports skipped this level: it has losses above it
                } else if (!t.ended) {
                    model.observe_pending(t.config);  // running or paused: it may still get here
                } else if (t.last_level < 0) {
                    left_out.push_back(&t);
                } else {
                    const auto below = static_cast<std::size_t>(t.last_level);
                    const double loss = levels_[below].losses.at(trial);  // NaN: it failed there
                    if (!std::isnan(loss) && shift[below] && loss + *shift[below] > median)
                        model.observe(t.config, loss + *shift[below]);
                    else
                        left_out.push_back(&t);
                }
            }
            // The fresh model's trials count from 0: its random draws depend on (its seed, 0, 1, ...).
            TrialId asked = 0;
            Config proposal = *model.sample(asked++);
            // A repeat of a trial left out is marked pending and the model asked again (its fit is reused).
            for (int again = 0; again < max_repeat_asks; ++again) {
                const TrialState* repeated = nearest_within(left_out, space_.encode(proposal));
                if (repeated == nullptr) break;
                model.observe_pending(repeated->config);
                proposal = *model.sample(asked++);
            }
            if (!model_level_ || *model_level_ != level) {
                if (!model_level_)
                    notes_.push_back({id, fmt::format("the model takes over, fitted on the {} losses at resource {} "
                                                      "({:.0f}% of new configurations stay random)",
                                                      l.finite, resources_[level], 100.0 * options_.random_fraction)});
                else if (level > *model_level_)
                    notes_.push_back(
                        {id, fmt::format("the model moves up to resource {} ({} losses)", resources_[level], l.finite)});
                model_level_ = level;
            }
            for (const Note& n : model.notes()) note_once(id, "the model: " + n.text);
            ++model_proposals_;
            return proposal;
        } catch (const std::exception& e) {
            note_once(id, fmt::format("the model failed ({}); the configuration stays random", e.what()));
            return std::nullopt;
        }
    }

    // The first trial of `trials` closer than Bayesian::pending_radius to the unit-cube point `u`.
    [[nodiscard]] static const TrialState* nearest_within(const std::vector<const TrialState*>& trials,
                                                          const std::vector<double>& u) {
        constexpr double radius2 = GPSampler::pending_radius * GPSampler::pending_radius;
        for (const TrialState* t : trials) {
            double d2 = 0.0;
            for (std::size_t j = 0; j < u.size(); ++j) d2 += (t->point[j] - u[j]) * (t->point[j] - u[j]);
            if (d2 < radius2) return t;
        }
        return nullptr;
    }

    // The median of the finite losses of a level that has some.
    [[nodiscard]] static double median_loss(const Level& l) {
        std::vector<double> finite;
        for (const auto& [trial, loss] : l.losses)
            if (std::isfinite(loss)) finite.push_back(loss);
        auto middle = finite.begin() + static_cast<std::ptrdiff_t>(finite.size() / 2);
        std::nth_element(finite.begin(), middle, finite.end());
        return *middle;
    }

    // Per level below `level`: the median of (loss at `level` - loss there) over the trials with a
    // finite loss at both, or nothing when fewer than min_shift_pairs have.
    [[nodiscard]] std::vector<std::optional<double>> shifts_to(std::size_t level) const {
        std::vector<std::optional<double>> shift(level);
        std::vector<double> differences;
        for (std::size_t below = 0; below < level; ++below) {
            differences.clear();
            for (const auto& [trial, loss] : levels_[level].losses) {
                auto it = levels_[below].losses.find(trial);
                if (it != levels_[below].losses.end() && std::isfinite(loss) && std::isfinite(it->second))
                    differences.push_back(loss - it->second);
            }
            if (differences.size() < min_shift_pairs) continue;
            auto middle = differences.begin() + static_cast<std::ptrdiff_t>(differences.size() / 2);
            std::nth_element(differences.begin(), middle, differences.end());
            shift[below] = *middle;
        }
        return shift;
    }

    // Adds "trial <id>: <text>" unless a note of the same text up to its numbers was added before.
    void note_once(TrialId id, const std::string& text) {
        std::string shape;
        for (char c : text)
            if (!std::isdigit(static_cast<unsigned char>(c))) shape += c;
        if (model_notes_seen_.insert(shape).second) notes_.push_back({id, text});
    }

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
    std::size_t model_proposals_ = 0;
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
    [[nodiscard]] std::size_t min_points() const noexcept { return model().min_points(); }
};

/// Model-based Hyperband (BOHB-style, with a Gaussian process): ModelBasedHyperband({.max_resource = 81}).
using ModelBasedHyperband = ModelBased<Hyperband>;

static_assert(Strategy<ModelBased<Hyperband>>);
static_assert(Strategy<ModelBased<ASHA>>);

}  // namespace hypertune
