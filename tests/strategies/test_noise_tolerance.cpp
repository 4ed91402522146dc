// SPDX-License-Identifier: MIT
// noise_tolerance: ASHA and asynchronous Hyperband count a loss within k x the measured noise of the
// reports above a rung's cut-off as in its top 1/eta (detail/report_noise.hpp measures the noise),
// in the promotion and the stop type; its checks and its name.

#include <hypertune/detail/report_noise.hpp>
#include <hypertune/strategies/asha.hpp>
#include <hypertune/strategies/hyperband.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

using namespace hypertune;
using Kind = DecisionRecord::Kind;

namespace {

SearchSpace noise_space() { return SearchSpace{ContinuousParameter("x", 0.0, 1.0)}; }

// A trial's loss at `step`: its level, plus +delta at odd steps and -delta at even ones. Every
// second difference of such a curve is +-4 delta, so the measured noise is 4 delta / (0.6745
// sqrt(6)) = 2.42 delta.
double zigzag(double level, Resource step, double delta) { return level + (step % 2 == 1 ? delta : -delta); }

constexpr double delta = 0.01;
const double measured_sigma = 4 * delta / (0.6744897501960817 * std::sqrt(6.0));

// Starts trials 0, 1 and 2 and runs each through steps 1..9 of the zigzag to a pause at rung 9:
// trial 0 lowest, trial 1 half a standard deviation of the measured noise above it, trial 2 three
// (7 second differences each, 21 in all: the noise is measured).
void pause_three_at_rung_nine(Scheduler& scheduler) {
    const double levels[] = {0.20, 0.20 + 0.5 * measured_sigma, 0.20 + 3 * measured_sigma};
    for (TrialId id = 0; id < 3; ++id) REQUIRE(scheduler.ask().trial == id);
    for (TrialId id = 0; id < 3; ++id) {
        for (Resource step = 1; step <= 9; ++step)
            CHECK(scheduler.report(id, step, zigzag(levels[id], step, delta)) == Decision::Continue);
        scheduler.tell(id, Outcome::completed(zigzag(levels[id], 9, delta), 9));
    }
    (void)scheduler.take_decisions();
}

}  // namespace

TEST_CASE("ReportNoise: the noise of curves with a trend, from the median of second differences") {
    // 60 trials, 30 reports each: a falling trend that flattens (a learning curve) plus Gaussian
    // noise of standard deviation 0.01. The trend's own second differences (at most 0.0054, at the
    // first steps) are small beside the noise's (standard deviation 0.0245).
    std::mt19937_64 rng(7);
    std::normal_distribution<double> noise(0.0, 0.01);
    std::uniform_real_distribution<double> level(0.1, 0.5);
    detail::ReportNoise estimate;
    for (TrialId id = 0; id < 60; ++id) {
        const double floor = level(rng);
        for (Resource step = 1; step <= 30; ++step)
            estimate.observe(id, step, floor + 0.2 * std::exp(-static_cast<double>(step) / 5) + noise(rng));
    }
    CHECK(estimate.samples() == 60 * 28);
    CHECK(estimate.sigma() == doctest::Approx(0.01).epsilon(0.05));

    // A noiseless linear trend: no noise at all.
    detail::ReportNoise straight;
    for (TrialId id = 0; id < 5; ++id)
        for (Resource step = 1; step <= 10; ++step) straight.observe(id, step, 1.0 - 0.02 * static_cast<double>(step));
    CHECK(straight.samples() == 40);
    CHECK(straight.sigma() == doctest::Approx(0.0).epsilon(1e-12));
}

TEST_CASE("ReportNoise: 0 until enough second differences, and gaps, restarts and non-finite losses start over") {
    detail::ReportNoise estimate;
    // Trials interleaved, as a run reports them: each trial's own sequence counts.
    for (Resource step = 1; step <= 4; ++step)
        for (TrialId id = 0; id < 3; ++id) estimate.observe(id, step, zigzag(0.5, step, delta));
    CHECK(estimate.samples() == 6);  // steps 3 and 4 of each
    CHECK(estimate.sigma() == 0.0);  // fewer than min_samples
    estimate.observe(0, 6, 0.4);    // step 5 skipped: no second difference
    estimate.observe(0, 7, 0.4);    // (5,) 6, 7: still only two in a row
    CHECK(estimate.samples() == 6);
    estimate.observe(1, 1, 0.9);  // trial 1 starts over (no checkpoint): a new sequence
    estimate.observe(1, 2, 0.9);
    CHECK(estimate.samples() == 6);
    estimate.observe(2, 5, std::numeric_limits<double>::quiet_NaN());  // breaks trial 2's sequence
    estimate.observe(2, 6, zigzag(0.5, 6, delta));
    estimate.observe(2, 7, zigzag(0.5, 7, delta));
    CHECK(estimate.samples() == 6);
    for (TrialId id = 10; id < 14; ++id)
        for (Resource step = 1; step <= 6; ++step) estimate.observe(id, step, zigzag(0.3, step, delta));
    CHECK(estimate.samples() == 6 + 4 * 4);
    CHECK(estimate.sigma() == doctest::Approx(measured_sigma));
    estimate.clear();
    CHECK(estimate.samples() == 0);
    CHECK(estimate.sigma() == 0.0);
}

TEST_CASE("noise_tolerance, promotion type: a paused trial within k x the noise above the cut-off is promoted, "
          "one beyond it is not") {
    // One rung at 9 (max_resource 27): three trials report steps 1..9 with the same zigzag (7 second
    // differences each, 21 in all: the noise is measured as 2.42 delta) around their levels.
    // Trial 0 ends lowest; trial 1 ends 0.5 sigma above it, trial 2 3 sigma above it.
    for (const double k : {0.0, 1.0}) {
        CAPTURE(k);
        ASHA asha({.min_resource = 9, .max_resource = 27, .reduction_factor = 3, .type = HalvingType::Promotion,
                   .fill_idle_workers = false, .noise_tolerance = k});
        asha.start(noise_space(), {.seed = 3, .max_trials = 3});
        pause_three_at_rung_nine(asha);
        // m = 3, q = 1: trial 0 is the top third, promoted first either way.
        Suggestion first = asha.ask();
        REQUIRE(first.runs());
        CHECK(first.trial == 0);
        auto records = asha.take_decisions();
        REQUIRE(records.size() == 1);
        CHECK(records[0].reason == "in the top 1/3 (1 of 3) at resource 9: resumes from 9 to 27");
        Suggestion second = asha.ask();
        if (k == 0.0) {
            CHECK(second.kind == Suggestion::Kind::Wait);  // trial 1 is second of three: not promoted
            continue;
        }
        REQUIRE(second.runs());
        CHECK(second.trial == 1);
        CHECK(second.resume_from == 9);
        records = asha.take_decisions();
        REQUIRE(records.size() == 1);
        CHECK(records[0].kind == Kind::Promote);
        CHECK(records[0].loss > records[0].threshold);  // above the cut-off, within the tolerance
        CHECK(records[0].reason ==
              "in the top 1/3 (1 of 3) at resource 9, within the noise tolerance of the cut-off: resumes from 9 to 27");
        CHECK(asha.ask().kind == Suggestion::Kind::Wait);  // trial 2, 3 sigma above: never
    }
}

TEST_CASE("noise_tolerance, stop type: a trial within k x the noise above the cut-off continues past the rung") {
    for (const double k : {0.0, 1.0}) {
        CAPTURE(k);
        ASHA asha({.min_resource = 9, .max_resource = 27, .reduction_factor = 3, .type = HalvingType::Stop,
                   .noise_tolerance = k});
        asha.start(noise_space(), {.seed = 3, .max_trials = 4});
        for (TrialId id = 0; id < 4; ++id) REQUIRE(asha.ask().trial == id);
        // Trials 0-2 reach the rung first (free passes: fewer than eta losses there, then the
        // third is judged among three); trial 3 arrives fourth, 0.5 sigma above the cut-off.
        const double levels[] = {0.20, 0.30, 0.40, 0.20 + 0.5 * measured_sigma};
        for (TrialId id = 0; id < 3; ++id)
            for (Resource step = 1; step <= 9; ++step) (void)asha.report(id, step, zigzag(levels[id], step, delta));
        (void)asha.take_decisions();
        for (Resource step = 1; step < 9; ++step) CHECK(asha.report(3, step, zigzag(levels[3], step, delta)) == Decision::Continue);
        const Decision at_rung = asha.report(3, 9, zigzag(levels[3], 9, delta));
        auto records = asha.take_decisions();
        REQUIRE(records.size() == 1);
        if (k == 0.0) {
            CHECK(at_rung == Decision::Stop);
            CHECK(records[0].kind == Kind::Stop);
        } else {
            CHECK(at_rung == Decision::Continue);
            CHECK(records[0].kind == Kind::Promote);
            CHECK(records[0].reason ==
                  "in the top 1/3 (1 of 4) at resource 9, within the noise tolerance of the cut-off: continues");
        }
    }
}

TEST_CASE("noise_tolerance, stop type with wait_for_peers: a held trial within the tolerance is cleared and resumed") {
    for (const double k : {0.0, 1.0}) {
        CAPTURE(k);
        ASHA asha({.min_resource = 9, .max_resource = 27, .reduction_factor = 3, .type = HalvingType::Stop,
                   .wait_for_peers = true, .noise_tolerance = k});
        asha.start(noise_space(), {.seed = 3, .max_trials = 3});
        for (TrialId id = 0; id < 3; ++id) REQUIRE(asha.ask().trial == id);
        // Trials 0 and 1 arrive first and are held; trial 2 arrives third, lowest, and sets the
        // cut-off: trial 0 is half a standard deviation above it, trial 1 far above.
        const double levels[] = {0.20 + 0.5 * measured_sigma, 0.40, 0.20};
        for (TrialId id = 0; id < 2; ++id) {
            for (Resource step = 1; step < 9; ++step) (void)asha.report(id, step, zigzag(levels[id], step, delta));
            CHECK(asha.report(id, 9, zigzag(levels[id], 9, delta)) == Decision::Stop);  // held
            asha.tell(id, Outcome::stopped(zigzag(levels[id], 9, delta), 9));
        }
        (void)asha.take_decisions();
        for (Resource step = 1; step <= 9; ++step)
            CHECK(asha.report(2, step, zigzag(levels[2], step, delta)) == Decision::Continue);
        auto records = asha.take_decisions();
        const auto stopped = std::count_if(records.begin(), records.end(), [](const auto& r) { return r.kind == Kind::Stop; });
        CHECK(stopped == (k == 0.0 ? 2 : 1));  // trial 1 either way, trial 0 without the tolerance
        Suggestion next = asha.ask();
        if (k == 0.0) {
            CHECK(next.kind == Suggestion::Kind::Done);  // nothing held, no new trial: trial 2 runs on alone
            continue;
        }
        REQUIRE(next.runs());
        CHECK(next.trial == 0);
        CHECK(next.resume_from == 9);
        records = asha.take_decisions();
        REQUIRE(records.size() == 1);
        CHECK(records[0].reason == "in the top 1/3 at resource 9 once 3 trials reached it, within the noise tolerance "
                                   "of the cut-off: resumes from 9 to 27");
    }
}

TEST_CASE("noise_tolerance: asynchronous Hyperband promotes within it too") {
    // min_resource 9 of 27, eta 3: brackets s = 1 (rung 9) and s = 0; brackets = 1 runs s = 1 alone,
    // the ladder of the ASHA case above, with the same three trials.
    for (const double k : {0.0, 1.0}) {
        CAPTURE(k);
        Hyperband hb({.min_resource = 9, .max_resource = 27, .eta = 3, .fill_idle_workers = false, .brackets = 1,
                      .noise_tolerance = k});
        CHECK(hb.name() == (k == 0.0 ? "Hyperband-promotion-brackets=1" : "Hyperband-promotion-noise1-brackets=1"));
        hb.start(noise_space(), {.seed = 5, .max_trials = 3});
        pause_three_at_rung_nine(hb);
        const Suggestion first = hb.ask();
        REQUIRE(first.runs());
        CHECK(first.trial == 0);
        CHECK(first.resume_from == 9);
        const Suggestion second = hb.ask();
        if (k == 0.0) {
            CHECK(second.kind == Suggestion::Kind::Wait);
            continue;
        }
        REQUIRE(second.runs());
        CHECK(second.trial == 1);
        CHECK(second.resume_from == 9);
        CHECK(hb.ask().kind == Suggestion::Kind::Wait);
    }
}

TEST_CASE("noise_tolerance: refused where it cannot apply, with the option named, and its name") {
    for (const double bad : {-1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
        CHECK_THROWS_WITH_AS(ASHA({.noise_tolerance = bad}), doctest::Contains("ASHA: noise_tolerance must be a finite number >= 0"),
                             InvalidArgument);
        CHECK_THROWS_WITH_AS(Hyperband({.noise_tolerance = bad}),
                             doctest::Contains("Hyperband: noise_tolerance must be a finite number >= 0"), InvalidArgument);
    }
    CHECK_THROWS_WITH_AS(Hyperband({.mode = HyperbandMode::Synchronous, .noise_tolerance = 1}),
                         "Hyperband: noise_tolerance is for the asynchronous mode; the synchronous mode ranks a whole "
                         "rung at its barrier",
                         InvalidArgument);
    ASHA two({.noise_tolerance = 1});
    CHECK_THROWS_WITH_AS(two.start(noise_space(), {.seed = 1, .objectives = 2}),
                         "ASHA: noise_tolerance compares one loss with a rung's cut-off; this run's rungs rank by "
                         "Pareto priority (2 objectives): leave noise_tolerance at 0",
                         InvalidArgument);
    Hyperband constrained({.noise_tolerance = 1});
    CHECK_THROWS_WITH_AS(constrained.start(noise_space(), {.seed = 1, .constrained = true}),
                         doctest::Contains("rank by Pareto priority (constraints)"), InvalidArgument);
    CHECK(ASHA({.noise_tolerance = 1}).name() == "ASHA-promotion-fill-noise1");
    CHECK(ASHA({.type = HalvingType::Stop, .noise_tolerance = 0.5}).name() == "ASHA-noise0.5");
    CHECK(Hyperband({.noise_tolerance = 1}).name() == "Hyperband-promotion-fill-noise1-brackets=2");
    CHECK(ASHA({.noise_tolerance = 0}).name() == "ASHA-promotion-fill");
}
