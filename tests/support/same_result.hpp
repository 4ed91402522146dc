// SPDX-License-Identifier: MIT
#pragma once
// check_same_result(live, loaded): a run's live Result and the one load_result() rebuilds from its
// journal agree field by field: the setup, and every trial's record (status, value, each metric's
// value and feasibility, curve, run segments, time, cost, failure, retries, decisions). Times are
// compared exactly: both come from the same journaled numbers.

#include <hypertune/hypertune.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <string>

namespace hypertune::testing {

inline bool same_number(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

inline void check_same_decision(const DecisionRecord& a, const DecisionRecord& b) {
    CHECK(a.trial == b.trial);
    CHECK(a.kind == b.kind);
    CHECK(a.bracket == b.bracket);
    CHECK(a.rung == b.rung);
    CHECK(a.resource == b.resource);
    CHECK(same_number(a.loss, b.loss));
    CHECK(same_number(a.threshold, b.threshold));
    CHECK(a.peers == b.peers);
    CHECK(a.reason == b.reason);
}

inline void check_same_result(const Result& live, const Result& loaded) {
    const Result::Setup& a = live.setup();
    const Result::Setup& b = loaded.setup();
    CHECK(a.metric == b.metric);
    CHECK(a.direction == b.direction);
    CHECK(a.strategy == b.strategy);
    CHECK(a.max_parallel_jobs == b.max_parallel_jobs);
    CHECK(a.instances_per_trial == b.instances_per_trial);
    CHECK(a.max_resource == b.max_resource);
    CHECK(a.seed == b.seed);
    CHECK(a.stop_reason == b.stop_reason);
    CHECK(a.start_time == b.start_time);
    CHECK(a.wall_seconds == doctest::Approx(b.wall_seconds).epsilon(1e-9));
    CHECK(a.worker_seconds == doctest::Approx(b.worker_seconds).epsilon(1e-9));
    CHECK(a.parent_runs == b.parent_runs);
    CHECK(a.parameter_names == b.parameter_names);
    CHECK(live.objectives() == loaded.objectives());
    CHECK(a.constraints == b.constraints);
    CHECK(a.warnings == b.warnings);
    REQUIRE(a.parent_bests.size() == b.parent_bests.size());
    for (std::size_t i = 0; i < a.parent_bests.size(); ++i) {
        CHECK(a.parent_bests[i].trial == b.parent_bests[i].trial);
        CHECK(same_number(a.parent_bests[i].objective, b.parent_bests[i].objective));
    }
    REQUIRE(live.trials().size() == loaded.trials().size());
    for (std::size_t i = 0; i < live.trials().size(); ++i) {
        const TrialRecord& x = live.trials()[i];
        const TrialRecord& y = loaded.trials()[i];
        CAPTURE(x.id);
        CHECK(x.id == y.id);
        CHECK(x.config == y.config);
        CHECK(x.status == y.status);
        CHECK(same_number(x.objective, y.objective));
        REQUIRE(x.values.size() == y.values.size());
        for (std::size_t k = 0; k < x.values.size(); ++k) CHECK(same_number(x.values[k], y.values[k]));
        CHECK(x.feasible == y.feasible);
        REQUIRE(x.curve.size() == y.curve.size());
        for (std::size_t k = 0; k < x.curve.size(); ++k) {
            CHECK(x.curve[k].step == y.curve[k].step);
            CHECK(x.curve[k].value == y.curve[k].value);
            CHECK(x.curve[k].seconds == y.curve[k].seconds);
        }
        CHECK(x.resource_used == y.resource_used);
        REQUIRE(x.segments.size() == y.segments.size());
        for (std::size_t k = 0; k < x.segments.size(); ++k) {
            CHECK(x.segments[k].start == y.segments[k].start);
            CHECK(x.segments[k].end == y.segments[k].end);
            CHECK(x.segments[k].worker == y.segments[k].worker);
        }
        CHECK(x.elapsed_seconds == y.elapsed_seconds);
        CHECK(x.waited_seconds == y.waited_seconds);
        CHECK(x.billable_seconds == y.billable_seconds);
        CHECK(x.failure_reason == y.failure_reason);
        CHECK(x.retries == y.retries);
        REQUIRE(x.decisions.size() == y.decisions.size());
        for (std::size_t k = 0; k < x.decisions.size(); ++k) check_same_decision(x.decisions[k], y.decisions[k]);
    }
    CHECK(live.to_csv() == loaded.to_csv());
}

}  // namespace hypertune::testing
