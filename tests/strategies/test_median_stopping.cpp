// SPDX-License-Identifier: MIT
// MedianStopping: AMT's median rule around any strategy.

#include <hypertune/strategies/asha.hpp>
#include <hypertune/strategies/grid_search.hpp>
#include <hypertune/strategies/hyperband.hpp>
#include <hypertune/strategies/median_stopping.hpp>
#include <hypertune/strategies/random_search.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <vector>

using namespace hypertune;

namespace {

SearchSpace ms_space() { return SearchSpace{ContinuousParameter("x", 0.0, 1.0), IntegerParameter("depth", 1, 10)}; }

// Runs trial `id` through steps 1..last with value(step); returns the step it was stopped at, or 0.
template <class S, class F>
Resource run_curve(S& s, TrialId id, Resource last, F value) {
    for (Resource step = 1; step <= last; ++step) {
        if (s.report(id, step, value(step)) == Decision::Stop) {
            s.tell(id, Outcome::stopped(value(step), step));
            return step;
        }
    }
    s.tell(id, Outcome::completed(value(last), last));
    return 0;
}

}  // namespace

TEST_CASE("MedianStopping validates its options") {
    CHECK_THROWS_WITH_AS(MedianStopping(RandomSearch{}, {.min_trials = 0}),
                         doctest::Contains("MedianStopping: min_trials must be >= 1, got 0"), InvalidArgument);
    CHECK_THROWS_WITH_AS(MedianStopping(RandomSearch{}, {.grace_steps = -1}),
                         doctest::Contains("MedianStopping: grace_steps must be >= 0, got -1"), InvalidArgument);
    CHECK_THROWS_WITH_AS(MedianStopping(RandomSearch({.max_resource = 5}), {.grace_steps = 6}),
                         "MedianStopping: grace_steps = 6 is past max_resource = 5: the rule would never apply",
                         InvalidArgument);
    CHECK_NOTHROW(MedianStopping(RandomSearch({.max_resource = 5}), {.grace_steps = 5}));
}

TEST_CASE("MedianStopping wraps any strategy and forwards to it") {
    MedianStopping ms(RandomSearch({.max_resource = 20}));
    static_assert(std::same_as<decltype(ms), MedianStopping<RandomSearch>>);
    static_assert(Strategy<MedianStopping<RandomSearch>>);
    CHECK(ms.max_resource() == 20);
    static_assert(Strategy<MedianStopping<GridSearch>>);
    CHECK(ms.name() == "MedianStopping(RandomSearch)");
    CHECK(MedianStopping(GridSearch{}).name() == "MedianStopping(GridSearch)");
    CHECK(ms.max_resource() == 20);
    CHECK(ms.options().min_trials == 5);

    ms.start(ms_space(), {.seed = 4, .max_trials = 3});
    RandomSearch plain({.max_resource = 20});
    plain.start(ms_space(), {.seed = 4, .max_trials = 3});
    for (int k = 0; k < 3; ++k) {
        auto a = ms.ask();
        auto b = plain.ask();
        REQUIRE(a.runs());
        CHECK(a.trial == b.trial);
        CHECK(a.config == b.config);
        CHECK(a.budget == 20);
    }
    CHECK(ms.ask().kind == Suggestion::Kind::Done);

    AnyStrategy any(MedianStopping(RandomSearch{}, {.min_trials = 2}));
    CHECK(any.name() == "MedianStopping(RandomSearch)");
    CHECK(any.max_resource() == 1);
}

namespace {
// A scheduler that runs every trial 10 units and keeps the reports it is given.
class ReportKeeper : public Scheduler {
public:
    std::string name() const override { return "ReportKeeper"; }
    std::vector<IntermediateReport> seen;

protected:
    Suggestion next(const TrialBudget& b) override { return start_new(b, 10); }
    Decision on_report_losses(TrialId, Resource, const IntermediateReport& report) override {
        seen.push_back(report);
        return Decision::Continue;
    }
};
}  // namespace

TEST_CASE("MedianStopping passes the whole report on to the wrapped scheduler, its seconds too") {
    MedianStopping ms(ReportKeeper{}, {.min_trials = 1});
    ms.start(ms_space(), {.seed = 1, .max_trials = 2});
    REQUIRE(ms.ask().trial == 0);
    IntermediateReport report{0.5};
    report.seconds = 2.5;
    report.feasible = false;
    CHECK(ms.report(0, 1, report) == Decision::Continue);
    REQUIRE(ms.inner().seen.size() == 1);
    CHECK(ms.inner().seen[0].loss == 0.5);
    CHECK(ms.inner().seen[0].seconds == 2.5);
    CHECK_FALSE(ms.inner().seen[0].feasible);
}

TEST_CASE("MedianStopping stops a trial at the first step its value is worse than the median") {
    MedianStopping ms(RandomSearch({.max_resource = 10}));  // min_trials 5, grace_steps 1
    ms.start(ms_space(), {.seed = 1});
    // Five earlier trials with flat curves 1.0 .. 1.4: the median of the running averages is 1.2.
    for (TrialId j = 0; j < 5; ++j) {
        REQUIRE(ms.ask().trial == j);
        CHECK(run_curve(ms, j, 10, [&](Resource) { return 1.0 + 0.1 * static_cast<double>(j); }) == 0);
    }
    CHECK(ms.take_decisions().empty());

    // Getting worse: 1.05, 1.10, 1.15, 1.20 (a tie continues), 1.25 -> stopped at step 5.
    REQUIRE(ms.ask().trial == 5);
    CHECK(run_curve(ms, 5, 10, [](Resource t) { return 1.0 + 0.05 * static_cast<double>(t); }) == 5);
    auto rec = ms.take_decisions();
    REQUIRE(rec.size() == 1);
    CHECK(rec[0].trial == 5);
    CHECK(rec[0].kind == DecisionRecord::Kind::Stop);
    CHECK(rec[0].resource == 5);
    CHECK(rec[0].loss == doctest::Approx(1.25));
    CHECK(rec[0].threshold == doctest::Approx(1.2));
    CHECK(rec[0].peers == 5);
    CHECK(rec[0].bracket == -1);
    CHECK(rec[0].reason.find("median") != std::string::npos);

    // A good trial is never stopped.
    REQUIRE(ms.ask().trial == 6);
    CHECK(run_curve(ms, 6, 10, [](Resource) { return 0.5; }) == 0);
    // A bad one is stopped at once (grace_steps = 1 allows step 1), against 7 others now.
    REQUIRE(ms.ask().trial == 7);
    CHECK(run_curve(ms, 7, 10, [](Resource) { return 3.0; }) == 1);
    rec = ms.take_decisions();
    REQUIRE(rec.size() == 1);
    CHECK(rec[0].peers == 7);
    // At step 1 the others are {0.5, 1.0, 1.05, 1.1, 1.2, 1.3, 1.4}: trials 5 and 6 count too.
    CHECK(rec[0].threshold == doctest::Approx(1.1));
}

TEST_CASE("MedianStopping compares with running averages and honours grace_steps") {
    MedianStopping ms(RandomSearch({.max_resource = 10}), {.min_trials = 3, .grace_steps = 4});
    ms.start(ms_space(), {.seed = 1});
    // Earlier curves 3/t + c: running average at t is c + 3 H(t) / t, above the value at t.
    const std::vector<double> offsets = {0.0, 0.1, 0.2};
    for (TrialId j = 0; j < 3; ++j) {
        (void)ms.ask();
        CHECK(run_curve(ms, j, 10, [&](Resource t) { return 3.0 / static_cast<double>(t) + offsets[j]; }) == 0);
    }
    auto median_at = [](Resource t) {  // median trial: offset 0.1
        double h = 0;
        for (Resource k = 1; k <= t; ++k) h += 1.0 / static_cast<double>(k);
        return 0.1 + 3.0 * h / static_cast<double>(t);
    };
    // A flat curve at 1.2: worse than the median running average from the step where it drops below 1.2.
    Resource expected = 0;
    for (Resource t = 4; t <= 10 && expected == 0; ++t)
        if (1.2 > median_at(t)) expected = t;
    REQUIRE(expected > 4);
    (void)ms.ask();
    CHECK(run_curve(ms, 3, 10, [](Resource) { return 1.2; }) == expected);
    auto rec = ms.take_decisions();
    REQUIRE(rec.size() == 1);
    CHECK(rec[0].threshold == doctest::Approx(median_at(expected)));
    // A terrible trial is not stopped before grace_steps.
    (void)ms.ask();
    CHECK(run_curve(ms, 4, 10, [](Resource) { return 100.0; }) == 4);
}

TEST_CASE("MedianStopping needs min_trials others at the step and counts running trials") {
    MedianStopping ms(RandomSearch({.max_resource = 5}), {.min_trials = 3});
    ms.start(ms_space(), {.seed = 1});
    for (int k = 0; k < 6; ++k) (void)ms.ask();
    // Trials 0, 1 report step 1 (still running): two others only, so trial 2 is not judged.
    CHECK(ms.report(0, 1, 1.0) == Decision::Continue);
    CHECK(ms.report(1, 1, 2.0) == Decision::Continue);
    CHECK(ms.report(2, 1, 9.0) == Decision::Continue);
    // Now three others reported step 1 ({1, 2, 9}, median 2): trial 3 at 2.5 is stopped.
    CHECK(ms.report(3, 1, 2.5) == Decision::Stop);
    // A NaN value is ignored: neither judged nor counted.
    CHECK(ms.report(4, 1, std::numeric_limits<double>::quiet_NaN()) == Decision::Continue);
    // Failed trials keep the values they reported; four others at step 1 now: {1, 2, 9, 2.5}, median 2.25.
    ms.tell(2, Outcome::failed(1));
    CHECK(ms.report(5, 1, 2.3) == Decision::Stop);
    auto rec = ms.take_decisions();
    REQUIRE(rec.size() == 2);
    CHECK(rec[0].trial == 3);
    CHECK(rec[0].threshold == 2.0);
    CHECK(rec[0].peers == 3);
    CHECK(rec[1].trial == 5);
    CHECK(rec[1].threshold == 2.25);
    CHECK(rec[1].peers == 4);
    // A stopped trial stays stopped; repeated steps are ignored.
    CHECK(ms.report(3, 2, 0.0) == Decision::Stop);
    CHECK(ms.report(0, 1, 50.0) == Decision::Continue);
    CHECK(ms.take_decisions().empty());
}

TEST_CASE("MedianStopping decisions match a brute-force median over interleaved trials") {
    MedianStopping ms(RandomSearch({.max_resource = 20}), {.min_trials = 4, .grace_steps = 2});
    ms.start(ms_space(), {.seed = 8, .max_trials = 300});
    std::map<Resource, std::vector<double>> averages;  // brute force: running averages per step
    struct Running {
        TrialId id;
        double quality;
        Resource step = 0;
        double sum = 0;
    };
    std::vector<Running> running;
    std::mt19937_64 rng(2);
    std::normal_distribution<double> noise(0.0, 0.1);
    bool done = false;
    std::size_t stops = 0;
    while (!done || !running.empty()) {
        while (!done && running.size() < 6) {
            auto s = ms.ask();
            if (!s.runs()) {
                done = true;
                break;
            }
            running.push_back({s.trial, s.config.get<double>("x")});
        }
        if (running.empty()) break;
        std::size_t pick = rng() % running.size();
        Running& t = running[pick];
        ++t.step;
        double value = t.quality + 1.0 / static_cast<double>(t.step) + noise(rng);
        t.sum += value;
        auto& others = averages[t.step];
        bool expect_stop = false;
        double median = 0;
        if (t.step >= 2 && others.size() >= 4) {
            std::vector<double> sorted = others;
            std::sort(sorted.begin(), sorted.end());
            std::size_t n = sorted.size();
            median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
            expect_stop = value > median;
        }
        Decision d = ms.report(t.id, t.step, value);
        CHECK(d == (expect_stop ? Decision::Stop : Decision::Continue));
        auto rec = ms.take_decisions();
        if (expect_stop) {
            ++stops;
            REQUIRE(rec.size() == 1);
            CHECK(rec[0].threshold == doctest::Approx(median));
            CHECK(rec[0].peers == others.size());
        }
        others.push_back(t.sum / static_cast<double>(t.step));
        if (d == Decision::Stop || t.step == 20) {
            ms.tell(t.id, d == Decision::Stop ? Outcome::stopped(value, t.step) : Outcome::completed(value, 20));
            running.erase(running.begin() + static_cast<std::ptrdiff_t>(pick));
        }
    }
    CHECK(stops > 100);
}

TEST_CASE("MedianStopping refuses a scheduler that runs trials again: it would take a stopped trial for a paused one") {
    // Around promotion-type ASHA, a trial the median rule stopped at rung 0 was paused there by ASHA,
    // promoted and trained again from scratch (its checkpoint was gone with the stop).
    const std::string expected = "MedianStopping(ASHA-promotion-fill): ASHA-promotion-fill pauses trials and runs them "
                                 "again, and would take a trial the median rule stopped for a paused one; wrap one that "
                                 "does not (RandomSearch, GridSearch, Bayesian, or ASHA or asynchronous Hyperband with "
                                 ".type = ht::HalvingType::Stop)";
    CHECK_THROWS_WITH_AS(MedianStopping(ASHA({.max_resource = 9})), expected.c_str(), InvalidArgument);
    CHECK_THROWS_AS(MedianStopping(ASHA({.max_resource = 9, .type = HalvingType::Stop, .wait_for_peers = true})),
                    InvalidArgument);
    CHECK_THROWS_AS(MedianStopping(Hyperband({.max_resource = 9, .mode = HyperbandMode::Synchronous})), InvalidArgument);
    CHECK_THROWS_AS(MedianStopping(Hyperband({.max_resource = 9})), InvalidArgument);  // promotion type by default
    CHECK_NOTHROW(MedianStopping(Hyperband({.max_resource = 9, .type = HalvingType::Stop})));
    CHECK_NOTHROW(MedianStopping(ASHA({.max_resource = 9, .type = HalvingType::Stop})));
}

TEST_CASE("MedianStopping passes on the wrapped strategy's stops and records") {
    MedianStopping ms(ASHA({.min_resource = 1, .max_resource = 9, .type = HalvingType::Stop}), {.min_trials = 100});
    CHECK(ms.name() == "MedianStopping(ASHA)");
    CHECK(ms.max_resource() == 9);
    ms.start(ms_space(), {.seed = 1});
    for (int k = 0; k < 3; ++k) (void)ms.ask();
    CHECK(ms.report(0, 1, 1.0) == Decision::Continue);
    CHECK(ms.report(1, 1, 2.0) == Decision::Continue);
    CHECK(ms.report(2, 1, 3.0) == Decision::Stop);  // ASHA's rule (m = 3, cut-off 1.0)
    auto rec = ms.take_decisions();
    REQUIRE(rec.size() == 3);
    CHECK(rec[2].kind == DecisionRecord::Kind::Stop);
    CHECK(rec[2].threshold == 1.0);
    CHECK(ms.inner().rung_resources() == std::vector<Resource>{1, 3});
}
