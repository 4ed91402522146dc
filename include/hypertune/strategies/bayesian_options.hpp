// SPDX-License-Identifier: MIT
#pragma once
// BayesianOptions: the Gaussian-process sampler's settings (strategies/bayesian.hpp).

#include <hypertune/types.hpp>

#include <cstddef>
#include <optional>

namespace hypertune {

struct BayesianOptions {
    /// Space-filling trials before the model is used; 0: d + 1 (5 at least), capped at an eighth
    /// of the run's budget of new trials (TunerOptions::max_jobs) when it has one.
    std::size_t initial_points = 0;
    /// The first trial of a run is the centre of the box: every continuous and integer parameter
    /// at the middle of its range in its scaling (the geometric middle of a logarithmic one),
    /// categories from the design; the rest of the initial design is unchanged. A range is
    /// usually drawn around a value known to work, and the centre is the point that no face cuts;
    /// dlib's LIPO evaluates it first and CMA-ES starts its mean there. Not when the run has seeded
    /// or earlier evaluations (warm start), which say more. Measured on the nineteen functions of
    /// bench/peers (README, "Bayesian optimisation"): the median regret fell on the smooth
    /// functions whose optimum lies in the middle half of the box (Hartmann 6-D at 50 evaluations
    /// from 0.0115 to 0.0042, Dixon-Price 10-D from 2,958 to 437, Powell 8-D from 65 to 8.3), and
    /// rose on some whose optimum is far from it (Levy 10-D at 200, 0.44 to 0.73). false: the
    /// whole initial design is the Sobol sequence.
    bool centre_first = true;
    /// The space-filling points (the initial design, each new trust region's design, and the
    /// fallbacks listed in notes()) draw a continuous parameter from its range without this share
    /// at either end (in the scaled range: log scaling applies first); integer and categorical
    /// parameters keep every value. In 0 <= margin < 0.5; 0 spreads the design over the whole box.
    /// Why 0.1: in d dimensions a uniform point lies within a tenth of some face with probability
    /// 1 - 0.8^d (67% at d = 5, 99% at d = 20), where a stationary model learns least from it and
    /// a trust region centred on it is cut by the box. On ten test functions from 2 to 20
    /// dimensions (`bench/peers/peer_functions --samplers Bayesian --seeds 20`, against the same
    /// with `--design-margin 0`), it lowered the median regret on 14 of 20 (function, budget)
    /// pairs (16 of 20 on seeds 101-120), Hartmann 6-D at 50 evaluations from 0.12 to 0.006. The
    /// model's suggestions still reach the bounds.
    double design_margin = 0.1;
    /// Quasi-random candidates scored per suggestion (plus candidates / 8 local perturbations).
    std::size_t candidates = 2048;
    /// Results the Gaussian process uses at most (the best half, then the most recent).
    std::size_t max_model_points = 300;
    /// Refit the hyperparameters once this many new results came in (every result below 20).
    std::size_t refit_every = 5;
    /// The budget every trial gets (Trial::budget()).
    Resource max_resource = 1;
    /// With constraints (TunerOptions::constraints): a Gaussian process per constraint learns its
    /// violation, and expected improvement over the best feasible result is weighted by the
    /// probability of feasibility. false: an infeasible trial enters the one model at the worst
    /// loss, as a failed one does (one fit per refit instead of one per constraint more).
    bool model_constraints = true;
    /// Polish the 3 best candidates by L-BFGS-B on the acquisition's gradient. Unset (the default):
    /// with one objective, inside the trust region once its side is at most 0.2, bounded by the
    /// region's box and moving no coordinate onto a face of the cube, and not over the whole box;
    /// with several objectives, over the whole box. true: in every region, or over the whole box
    /// without one; false: never. Over the whole box with one objective, the gradient of expected
    /// improvement points out of the data towards the faces, and the polished points landed on
    /// them (24-88% of trials on a bound on ten test functions). In a small region it gives the
    /// last digits of an optimum: on the 28 functions of bench/peers (seeds 1-20, 50 and 200
    /// evaluations; `bench/peers/peer_functions --samplers Bayesian --seeds 20 [--no-refine]`) the
    /// median regret fell by more than 10% on 24 of the 56 rows (Hartmann 6-D at 200 from 6.5e-6
    /// to 5.5e-7, Rosenbrock 4-D from 0.082 to 0.0055) and rose on 7 (Schwefel 4-D at 200 from
    /// 238 to 345, though over seeds 1-100 238 either way), the median share of trials on a bound
    /// still 0. With several objectives (ParEGO) the Pareto
    /// sets of the usual problems lie on faces (ZDT's at x_2..x_n = 0) and the front's precision is
    /// the hypervolume: without polishing (45d0a6b), the median hypervolume fell below Optuna's
    /// MOTPE on DTLZ2 with 3 objectives at 200 evaluations (0.626 against 0.637; 0.650 with it),
    /// and on ZDT1 at 50 from 11.69 to 11.52 (`bench/peers/peer_multi_objective --samplers
    /// Bayesian --seeds 10`, at each revision).
    std::optional<bool> refine = std::nullopt;
    /// Search inside a trust region around the best result, which grows on successes, shrinks on
    /// failures and restarts elsewhere once it has shrunk away (TuRBO-1, detail/gp_trust_region.hpp).
    /// With one objective only: several objectives (ParEGO) search the whole space. On by default:
    /// on ten test functions from 2 to 20 dimensions at 50 and 200 evaluations (bench/peers), it
    /// lowered the median regret on 11 and 14 of the 20 (function, budget) pairs of two sets of 20
    /// seeds, passed 18 of 20 rows against Optuna's TPE and CMA-ES (16 without), and its restarts
    /// keep the model small.
    bool trust_region = true;
    /// One more model input along an oblique direction: at each refit, the direction in which the
    /// fitted model's mean changes most (the leading eigenvector of the mean of its gradient's
    /// outer product over the model's points: the one-dimensional active subspace), given its own
    /// length scale, taken when that fit's log posterior beats the fit on the parameters alone by
    /// 10 nats and then kept while it beats it at all (GPSampler::direction() says which). A Matern kernel with a length scale per
    /// parameter models a valley along an axis, but a valley across the axes only with short
    /// length scales on all of them: learning rate against batch size in log scale, or any loss
    /// that depends on a sum of parameters. With one objective, continuous parameters (two at
    /// least) and no constraint models; it costs a second hyperparameter fit per refit. Measured
    /// on the 28 functions of bench/peers (README, "The oblique direction"): Zakharov 8-D, whose
    /// valley is oblique, at 50 / 200 evaluations from a median regret of 134 / 21.9 to 74 / 0.71
    /// (CMA-ES: 43.9 / 14.1); 20 other rows moved, 7 down and 13 up, none past a peer. false: the
    /// parameters alone.
    bool active_direction = true;
    /// Random interleaving (SMAC's random design, decaying): past the initial design, the k-th
    /// trial is a space-filling point of the whole box instead of the model's suggestion with
    /// probability random_proposals x (initial design size) / (k + 1), so that a misled model
    /// still sees the rest of the space now and then, more often early, while it knows least.
    /// Such a trial's result enters the model but does not count for or against the trust region,
    /// and notes() lists it. In [0, 1]; 0 (the default): never. Not on by default because, on the
    /// 28 functions of bench/peers (seeds 1-20, 50 and 200 evaluations; README, "Exploration
    /// beside the model"), 0.3 took the median regret up by more than 10% on 22 of the 56 rows
    /// and down on 13 (Schwefel 4-D at 200 halved, Powell 8-D at 50 nearly tripled, Rastrigin 5-D
    /// at 50 past TPE's): the trust region's restarts, with the space-filling designs they start
    /// with, already explore, and the budget is mostly better spent in the model's own region.
    double random_proposals = 0.0;
    /// A portfolio of acquisition functions chosen by GP-Hedge (detail/gp_portfolio.hpp): log
    /// expected improvement and the lower confidence bounds at 2 and at 0.5 standard deviations
    /// each nominate a candidate, and the member whose nominees the model, once it has learnt
    /// their results, rates best is the likeliest to be suggested from (GPSampler::portfolio_picks()
    /// counts them). With one objective and no constraint models; otherwise expected improvement
    /// alone. Off by default: on the 28 functions of bench/peers (seeds 1-20, 50 and 200
    /// evaluations; README, "A portfolio of acquisition functions") it took the median regret down
    /// by more than 10% on 24 of the 56 rows and up on 16. The gains favour the member whose
    /// nominees have the lowest mean, the confidence bound at 0.5, which makes most suggestions:
    /// better where the first basin is the right one and the budget is small (Hartmann 6-D at 50
    /// from 0.0066 to 0.00095; Zakharov 8-D at 50 from 84 to 69, though 76 either way on seeds
    /// 101-120), worse where a run stays in a wrong basin or a narrow valley (Shekel 4-D at 200
    /// from 0.0064 to 6.5, Colville 4-D at 200 from 0.0021 to 2.6, Trid 6-D at 50 from 3.3 to
    /// 11.7; the same on seeds 101-120).
    bool portfolio = false;
    /// An integer parameter of three to about twenty values (its end value at least 1/20 of the
    /// unit cube from the next one) is suggested at the end of its range (its min or max) only when
    /// the acquisition there beats the next value inward by more than this many nats of log
    /// expected improvement (for the portfolio's confidence bounds: standardised loss units);
    /// otherwise the value inward is suggested. Every value of an integer owns a cell of the unit
    /// cube, so the end values of an integer of few values are wide cells that the candidates fill
    /// as often as any other, and where the parameter matters little the model's variance, largest
    /// at the edges of the data, tips near-ties towards the ends: on `lr_batch5` of bench/peers (a
    /// warmup of 0..10 epochs whose effect is small), 26% and 11.5% of trials had a parameter on a
    /// bound at 50 and 200 evaluations without this rule (6% and 3.2% with it). A real preference
    /// for an end still wins: a lower mean there counts in expected improvement. An integer of more
    /// values is left alone: its end cells are narrow, and one value inward is nearly the same
    /// point. 0: none (ends as the acquisition ranks them). Measured in README ("Integer ends").
    double discrete_end_margin = 0.5;
};

namespace detail {
/// GPSampler::pending_radius (the model needs it without the sampler's header).
inline constexpr double gp_pending_radius = 0.05;
}  // namespace detail

}  // namespace hypertune
