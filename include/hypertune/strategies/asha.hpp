// SPDX-License-Identifier: MIT
#pragma once
// ASHA: asynchronous successive halving (Li, Jamieson, Rostamizadeh, Gonina, Ben-tzur, Hardt, Recht,
// Talwalkar, "A System for Massively Parallel Hyperparameter Tuning", MLSys 2020), stop-based as in
// Ray Tune's ASHA scheduler: one bracket whose rungs are min_resource * reduction_factor^k below
// max_resource (1, 3, 9, 27 for 1..81 with factor 3; 1, 3, 9, 27 for 1..30 too). Every trial starts
// with budget = max_resource; the first time it reaches a rung, it continues only if its loss is in
// the top 1/reduction_factor of the losses recorded at that rung so far (the first
// reduction_factor - 1 trials at a rung always continue). The exact rule is at the top of
// detail/rungs.hpp, shared with asynchronous Hyperband. No trial waits for another, so workers never
// idle; a trial is judged at a rung only once it has reached it.

#include <hypertune/detail/rungs.hpp>
#include <hypertune/error.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/strategies/random_search.hpp>
#include <hypertune/strategy.hpp>

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
};

class ASHA {
public:
    /// Throws InvalidArgument unless 1 <= min_resource < max_resource and reduction_factor >= 2.
    explicit ASHA(AshaOptions options = {}) : options_(options) {
        detail::validate_rung_options("ASHA", "reduction_factor", options_.min_resource, options_.max_resource,
                                      options_.reduction_factor);
        rungs_ = detail::geometric_rungs(options_.min_resource, options_.max_resource, options_.reduction_factor);
    }

    void start(const SearchSpace& space, const StrategyContext& ctx) {
        space.require_tunable();
        space_ = space;
        ctx_ = ctx;
        next_id_ = 0;
        decisions_.clear();
        ladder_ = detail::StopRungs({rungs_}, {-1}, options_.reduction_factor, options_.max_resource);
    }

    [[nodiscard]] Suggestion ask() {
        if (ctx_.max_trials != 0 && next_id_ >= ctx_.max_trials) return Suggestion::done();
        TrialId id = next_id_++;
        ladder_.add_trial(id, 0);
        return Suggestion::run(id, RandomSearch::sample(space_, ctx_.seed, id), options_.max_resource);
    }

    [[nodiscard]] Decision report(TrialId id, Resource step, double loss) {
        return ladder_.report(id, step, loss, decisions_);
    }

    void tell(TrialId id, const Outcome& outcome) { ladder_.finish(id, outcome); }

    [[nodiscard]] std::string name() const { return "ASHA"; }
    [[nodiscard]] Resource max_resource() const noexcept { return options_.max_resource; }
    /// The stops and rung passes decided since the last call (bracket = -1: ASHA has one).
    [[nodiscard]] std::vector<DecisionRecord> take_decisions() { return std::exchange(decisions_, {}); }

    /// The rung resources where trials are judged, increasing, all below max_resource.
    [[nodiscard]] const std::vector<Resource>& rung_resources() const noexcept { return rungs_; }
    [[nodiscard]] const AshaOptions& options() const noexcept { return options_; }

private:
    AshaOptions options_;
    std::vector<Resource> rungs_;
    SearchSpace space_;
    StrategyContext ctx_;
    TrialId next_id_ = 0;
    detail::StopRungs ladder_;
    std::vector<DecisionRecord> decisions_;
};

static_assert(Strategy<ASHA>);
static_assert(ExplainsDecisions<ASHA>);
static_assert(HasMaxResource<ASHA>);

}  // namespace hypertune
