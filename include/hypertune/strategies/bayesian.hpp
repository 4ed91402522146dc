// SPDX-License-Identifier: MIT
#pragma once
// GPSampler: Gaussian-process Bayesian optimisation with log expected improvement, as a sampler
// (sampler.hpp) that any scheduler can use; Bayesian is it with every trial run to completion.
//
// The model (detail/gaussian_process.hpp) works on the unit-cube encoding of the search space, so
// logarithmic and reverse-logarithmic scaling come from SearchSpace::encode. The sampler's inside
// is detail/gp_model.hpp, which lists the headers of its parts (encoding, model data, ParEGO,
// fits, constraint models, candidates, exclusion, acquisition, refinement). Choices, in order:
//
// - Initial design: the first `initial_points` trials (default d + 1, 5 at least, at most an
//   eighth of the run's budget of new trials: max(5, min(d + 1, max_trials / 8))) are the centre of
//   the box (`centre_first`), then points of a scrambled Sobol sequence (detail/sobol.hpp),
//   whatever the results so far; continuous coordinates keep `design_margin` (0.1) off either end
//   of their range.
// - Integers and categories: every point the model sees or scores is rounded to the centre of its
//   value's cell first (what decode then encode gives), so the model sees the values that run.
//   The model sees a categorical parameter one-hot (one input per value, each with its own length
//   scale); since every point is rounded to a value's cell before it is scored, the one-hot vector
//   is always exact (the argmax transformation of Garrido-Merchan and Hernandez-Lobato), so the
//   acquisition never scores a point between two values and no order of the values is assumed.
//   Local perturbations of a categorical switch it to a random value. A range with min == max is
//   a constant coordinate (0.5). An integer of three to about twenty values is suggested at an end
//   of its range only when the acquisition there beats the next value inward by more than
//   `discrete_end_margin` (0.5 nats): its end values are wide cells, and where it matters little
//   the model's variance, largest at the edges of its data, tips near-ties towards them.
// - Model: Matern 5/2 ARD on standardised losses; log length scales, signal and noise variance
//   fitted by MAP (log marginal likelihood + weak priors, L-BFGS-B in a box, several starts).
//   With `active_direction` (on), each refit fits a second model with one more input, the
//   coordinates' projection on the direction along which the first model's mean changes most
//   (its active subspace), takes it when its log posterior is higher by 10 nats and keeps it
//   while it is higher at all: an oblique valley, which axis-aligned length scales cannot follow.
//   The length scales' prior median is 0.5 sqrt(d) in the unit cube; 0.15 sqrt(d) for the
//   scalarised objectives of a multi-objective run, whose kinks a shorter scale fits (measured).
//   Refits: after every new result while fewer than 20 results, then once `refit_every` new
//   results have come in; between refits the last hyperparameters are reused. The fit uses at most
//   100 of the model's points (the best 50 and the 50 most recent) and starts from the last fit,
//   the priors' mean and random points (fewer starts and iterations past 20 results).
// - Model points: at most `max_model_points` results: the best half by loss, then the most recent
//   trials among the others. So the cost of a suggestion stops growing past the cap.
// - Failed trials (and completed ones with a non-finite loss) enter the model with the worst
//   finite loss observed, which steers the search away from their configurations. Stopped trials
//   enter with the loss they reported.
// - Constraints (TunerOptions::constraints; detail/gp_feasibility.hpp): each constraint's
//   violation (Outcome::violations, <= 0 when met) has a Gaussian process of its own, fitted
//   when the objective's is; every trial enters the objective's model with its own loss, and the
//   acquisition is log EI over the best feasible result plus sum_j log P(violation_j <= 0)
//   (constrained EI, Gardner et al. 2014). While no result is feasible, it is the probability of
//   feasibility alone. With `model_constraints = false`, or when a constrained metric is missing,
//   an infeasible trial enters the model as a failed one does, at the worst loss.
// - Heavy-tailed losses (worst - best > 10 x (median - best)): the model sees
//   log(loss - best + median - best) instead, said once in notes().
// - The incumbent (what expected improvement is measured against, and the trust region's centre):
//   the best result; while the model explains part of the results as noise (fitted noise variance
//   at least 1e-3 of the signal variance) and there are no constraint models, the result of
//   lowest posterior mean instead, since the best result is then the luckiest draw as much as the
//   best configuration (GPModel::noisy_incumbent).
// - Pending trials (asked, not yet told): kriging believer. Each enters the model with the
//   posterior mean at its point as a fantasy observation, and the incumbent is the best of the
//   observed losses and those fantasies, so the expected improvement at and around a pending point
//   collapses. On top of that, candidates closer than `pending_radius` (0.05, Euclidean in the
//   unit cube; inside a trust region a tenth of its side, if less) to a pending point and exact
//   repeats of the model's points are excluded. A suggestion that is still a configuration the
//   run has (one the model does not hold: an earlier trust region's, one beyond the cap, or a
//   point polished onto it) gives way to the next best candidate that is not.
// - Acquisition: log EI (stable where EI underflows), maximised over `candidates` scrambled Sobol
//   points plus candidates/8 Gaussian perturbations of the 5 best results (six scales, reflected
//   back into the cube at its faces). Candidates are ranked by a cheap upper bound of log EI (the
//   variance left by their most correlated model point alone); exact log EI is computed, best
//   bound first, for at most max(256, candidates / 8) of them, and stops early once no remaining
//   bound can beat the 3rd best exact value. L-BFGS-B then polishes the 3 best over the
//   continuous coordinates (`refine`): by default, with one objective, inside a trust region that
//   has shrunk to a side of 0.2, bounded by its box and onto no face of the cube (over the whole
//   box the polished points slid onto the faces: 24-88% of trials on a bound on ten test
//   functions); with several objectives over the whole box, since their Pareto sets often lie on
//   the faces (ZDT, DTLZ).
// - Trust region (`trust_region`, on by default with one objective; detail/gp_trust_region.hpp):
//   the Sobol candidates fill a box around the incumbent (feasible), sides scaled by the length
//   scales, each coordinate moved from the centre with probability min(1, 5 / d); the box doubles
//   after 3 successes and halves after max(8, 2d) failures, and once it has shrunk below 0.5^7
//   (0.5^10 while the model sees no noise in the region's results) a new region starts with a
//   fresh space-filling design and a model of its own results (TuRBO-1, Eriksson et al. 2019).
//   While no result is feasible, the whole cube is searched.
// - Random proposals (`random_proposals`, off by default): past the initial design, a trial is
//   the next space-filling point instead of the model's with a probability that decays as 1 / k;
//   its result does not count for or against the trust region, and notes() lists it.
// - Earlier evaluations (observe()): warm-start parents' results, or results at another
//   fidelity (model-based Hyperband). They enter the model like results and count towards the
//   initial design, but are not trials. seed_initial_design() puts given configurations (a
//   TransferLearning parent's best) at the head of the initial design.
// - Fallbacks, each recorded in notes() with the trial id: fewer than two finite results, all
//   results equal, a failed factorisation, or every candidate excluded -> the next space-filling
//   (Sobol) point.
// - Determinism: every random draw is a function of (seed, trial id), so the same seed and the same
//   sequence of ask/tell calls give the same trials. Under a parallel Tuner, results arrive in an
//   order that depends on timing, so suggestions after the initial design can differ run to run.

#include <hypertune/config.hpp>
#include <hypertune/error.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/sampler.hpp>
#include <hypertune/scheduler.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/strategies/bayesian_options.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hypertune::detail {
class GPModel;
}  // namespace hypertune::detail

namespace hypertune {

/// The Gaussian-process sampler (see the top of bayesian.hpp). BayesianOptions::max_resource is
/// the scheduler's, not the sampler's. A copy has the same state and goes on independently.
class GPSampler final : public Sampler {
public:
    /// Candidates closer than this to a pending trial's point are not suggested (inside a trust
    /// region: a tenth of its side, if less).
    static constexpr double pending_radius = detail::gp_pending_radius;

    /// Throws InvalidArgument for options out of range, naming the option.
    explicit GPSampler(BayesianOptions options = {});
    GPSampler(const GPSampler& other);
    GPSampler& operator=(const GPSampler& other);
    GPSampler(GPSampler&&) noexcept;
    GPSampler& operator=(GPSampler&&) noexcept;
    HYPERTUNE_INLINE ~GPSampler() override;

    [[nodiscard]] std::string name() const override { return "GP"; }
    /// Every option but max_resource (the scheduler's).
    [[nodiscard]] HYPERTUNE_INLINE Settings settings() const override;
    /// Several objectives: each suggestion models a random weighting of them (ParEGO).
    [[nodiscard]] bool supports_objectives(std::size_t) const override { return true; }
    HYPERTUNE_INLINE void start(const SearchSpace& space, const SamplerContext& ctx) override;
    /// The k-th configuration asked for (k counts this sampler's trials): a seeded one, a point of
    /// the initial design, then the model's. Every random draw depends on (seed, id).
    [[nodiscard]] HYPERTUNE_INLINE std::optional<Config> sample(TrialId id) override;
    /// Completed and stopped trials with a finite loss are results; anything else counts as failed.
    HYPERTUNE_INLINE void on_result(TrialId id, const Outcome& outcome) override;
    /// Earlier runs' trials (the Tuner's TunerOptions::warm_start). IdenticalDataAndAlgorithm:
    /// every one is an observation (failed ones discourage their region). TransferLearning: the
    /// best `initial_points` of them open the initial design, to be evaluated again here; they do
    /// not enter the model, since the objective may have changed.
    HYPERTUNE_INLINE bool warm_start(const std::vector<WarmStartObservation>& observations, WarmStartType type) override;
    /// Why suggestions fell back from the model, one per change of reason, with the trial.
    [[nodiscard]] HYPERTUNE_INLINE std::vector<Note> notes() const override;

    /// An evaluation made outside this run's trials (a warm-start parent's result, or a result at
    /// another fidelity): it enters the model like a trial's result and counts towards the initial
    /// design. A non-finite loss counts as a failed evaluation. Call after start(); `cfg` must
    /// belong to the space given to start().
    void observe(const Config& cfg, double loss);
    /// A configuration under evaluation elsewhere: the model treats it like a pending trial.
    void observe_pending(const Config& cfg);
    /// The first trials evaluate these configurations (in order) before the space-filling design
    /// goes on; call after start(). Repeats are dropped.
    void seed_initial_design(const std::vector<Config>& configs);
    /// The size of the initial design, once started.
    [[nodiscard]] std::size_t initial_points() const noexcept;
    /// Hyperparameter fits so far.
    [[nodiscard]] std::size_t model_fits() const noexcept;
    /// The fitted length scales (unit-cube units), one per model input: one per tuned parameter,
    /// except that a categorical parameter has one per value (one-hot). With the oblique direction
    /// (BayesianOptions::active_direction), a continuous parameter's length scale is the distance
    /// along it at which the kernel falls as far, both inputs counted. Empty before a fit.
    [[nodiscard]] std::vector<double> lengthscales() const;
    /// The oblique direction the model uses as one more input (BayesianOptions::active_direction):
    /// a unit vector over the continuous parameters (unit-cube coordinates, in the space's order
    /// of tuned parameters, integers and categories left out); empty while it uses none.
    [[nodiscard]] std::vector<double> direction() const;
    /// Whether suggestions come from a trust region (BayesianOptions::trust_region), once started.
    [[nodiscard]] bool trust_region() const noexcept;
    /// The trust region's side now (unit-cube units, scaled per parameter by its length scale),
    /// and how often it has restarted; 0 and 0 without one.
    [[nodiscard]] double trust_region_length() const noexcept;
    [[nodiscard]] std::size_t trust_region_restarts() const noexcept;
    /// With BayesianOptions::portfolio: how many suggestions each member of the portfolio made, in
    /// the order log expected improvement, the confidence bound at 2 and at 0.5 standard
    /// deviations; all 0 without it. Suggestions from the initial design and fallbacks count in none.
    [[nodiscard]] std::vector<std::size_t> portfolio_picks() const;

private:
    std::unique_ptr<detail::GPModel> model_;
};

/// Bayesian optimisation: every trial runs to completion, configurations from GPSampler.
class Bayesian final : public RunToCompletion {
public:
    /// Candidates closer than this to a pending trial's point are not suggested.
    static constexpr double pending_radius = GPSampler::pending_radius;

    /// Throws InvalidArgument for options out of range, naming the option.
    explicit Bayesian(BayesianOptions options = {})
        : RunToCompletion("Bayesian", options.max_resource, GPSampler(options)) {}

    /// The Gaussian-process sampler.
    [[nodiscard]] GPSampler& model() noexcept { return static_cast<GPSampler&>(*sampler()); }
    [[nodiscard]] const GPSampler& model() const noexcept { return static_cast<const GPSampler&>(*sampler()); }

    /// See GPSampler::observe, observe_pending and seed_initial_design (after start()).
    void observe(const Config& cfg, double loss) { model().observe(cfg, loss); }
    void observe_pending(const Config& cfg) { model().observe_pending(cfg); }
    void seed_initial_design(const std::vector<Config>& configs) { model().seed_initial_design(configs); }
    [[nodiscard]] std::size_t initial_points() const noexcept { return model().initial_points(); }
    [[nodiscard]] std::size_t model_fits() const noexcept { return model().model_fits(); }
    [[nodiscard]] std::vector<double> lengthscales() const { return model().lengthscales(); }
    [[nodiscard]] std::vector<double> direction() const { return model().direction(); }
    [[nodiscard]] bool trust_region() const noexcept { return model().trust_region(); }
    [[nodiscard]] double trust_region_length() const noexcept { return model().trust_region_length(); }
    [[nodiscard]] std::size_t trust_region_restarts() const noexcept { return model().trust_region_restarts(); }
    [[nodiscard]] std::vector<std::size_t> portfolio_picks() const { return model().portfolio_picks(); }
};

}  // namespace hypertune

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/strategies/bayesian.hpp>
#endif
