// SPDX-License-Identifier: MIT
// RankBy::BestReport: ASHA and Hyperband judge a trial at a rung on its best report so far
// (detail/best_reports.hpp), in the stop type, the promotion type and synchronous Hyperband.

#include <hypertune/detail/best_reports.hpp>
#include <hypertune/strategies/asha.hpp>
#include <hypertune/strategies/hyperband.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace hypertune;

namespace {

SearchSpace rank_space() { return SearchSpace{ContinuousParameter("x", 0.0, 1.0)}; }

// Trial 2's curve: best at steps 1-2, worst at the rung (step 3); trials 0 and 1 report 0.5 and
// 0.6 at every step.
double curve(TrialId id, Resource step) {
    if (id == 2) return step < 3 ? 0.1 : 0.9;
    return id == 0 ? 0.5 : 0.6;
}

// Each of `ids` reports its curve at steps 1..3 and ends its run segment there.
void run_to_rung(Scheduler& scheduler, const std::vector<TrialId>& ids) {
    for (const TrialId id : ids) {
        for (Resource step = 1; step <= 3; ++step) (void)scheduler.report(id, step, curve(id, step));
        scheduler.tell(id, Outcome::completed(curve(id, 3), 3));
    }
}

}  // namespace

TEST_CASE("BestReports: the lowest finite loss so far, per trial, and a non-finite one passes through") {
    detail::BestReports best;
    CHECK(best.judged(1, IntermediateReport{0.4}).loss == 0.4);
    CHECK(best.judged(1, IntermediateReport{0.7}).loss == 0.4);
    CHECK(best.judged(2, IntermediateReport{0.9}).loss == 0.9);  // per trial
    CHECK(std::isnan(best.judged(1, IntermediateReport{std::numeric_limits<double>::quiet_NaN()}).loss));
    const IntermediateReport one{0.8, {0.8}};
    CHECK(best.judged(1, one).losses == std::vector<double>{0.4});  // the only objective's loss too
    const Outcome told = best.judged(1, Outcome::completed(0.2, 3));  // an outcome, and a new best
    CHECK(told.loss == 0.2);
    CHECK(told.status == Outcome::Status::Completed);
    CHECK(best.judged(1, IntermediateReport{0.3}).loss == 0.2);
    CHECK(std::isnan(best.judged(1, Outcome::failed()).loss));
}

TEST_CASE("rank_by: the stop type judges a trial at its rung on its best report, or on the report there") {
    for (const RankBy rank_by : {RankBy::LastReport, RankBy::BestReport}) {
        // rungs {3}: at most one of three may continue past it once three arrived
        ASHA asha({.min_resource = 3, .max_resource = 9, .reduction_factor = 3, .type = HalvingType::Stop,
                   .rank_by = rank_by});
        asha.start(rank_space(), {.seed = 2, .max_trials = 3});
        for (TrialId id = 0; id < 3; ++id) REQUIRE(asha.ask().trial == id);
        Decision at_rung = Decision::Continue;
        for (TrialId id = 0; id < 3; ++id)
            for (Resource step = 1; step <= 3; ++step) at_rung = asha.report(id, step, curve(id, step));
        // trial 2: 0.9 at the rung is last of {0.5, 0.6, 0.9}; its best, 0.1, is first
        CHECK(at_rung == (rank_by == RankBy::BestReport ? Decision::Continue : Decision::Stop));
    }
}

TEST_CASE("rank_by: the promotion type and synchronous Hyperband judge the segment that ends at a rung on its best report") {
    for (const RankBy rank_by : {RankBy::LastReport, RankBy::BestReport}) {
        INFO("best report: " << (rank_by == RankBy::BestReport));
        const TrialId expected = rank_by == RankBy::BestReport ? 2 : 0;
        ASHA asha({.min_resource = 3, .max_resource = 9, .reduction_factor = 3, .type = HalvingType::Promotion,
                   .fill_idle_workers = false, .rank_by = rank_by});
        CHECK(asha.name() == (rank_by == RankBy::BestReport ? "ASHA-promotion-best" : "ASHA-promotion"));
        asha.start(rank_space(), {.seed = 2, .max_trials = 3});
        for (TrialId id = 0; id < 3; ++id) REQUIRE(asha.ask().budget == 3);
        run_to_rung(asha, {0, 1, 2});
        const Suggestion promoted = asha.ask();
        REQUIRE(promoted.runs());
        CHECK(promoted.trial == expected);
        CHECK(promoted.resume_from == 3);

        // Synchronous Hyperband with one bracket of 3 trials at 3 units, 1 promoted to 9.
        Hyperband sync({.min_resource = 3, .max_resource = 9, .eta = 3, .mode = HyperbandMode::Synchronous,
                        .brackets = 1, .rank_by = rank_by});
        sync.start(rank_space(), {.seed = 2, .max_trials = 3});
        std::vector<TrialId> started;
        for (int i = 0; i < 3; ++i) {
            const Suggestion s = sync.ask();
            REQUIRE(s.runs());
            REQUIRE(s.budget == 3);
            started.push_back(s.trial);
        }
        run_to_rung(sync, started);
        const Suggestion next = sync.ask();
        REQUIRE(next.runs());
        CHECK(next.trial == expected);
        CHECK(next.budget == 9);
    }
}

TEST_CASE("rank_by: BestReport judges one objective, and says so before a run of several starts") {
    ASHA asha({.rank_by = RankBy::BestReport});
    CHECK_THROWS_WITH_AS(asha.start(rank_space(), {.seed = 1, .max_trials = 4, .objectives = 2}),
                         "ASHA: rank_by = RankBy::BestReport judges one objective; this run has 2 (use "
                         "RankBy::LastReport, which ranks every objective's last report)",
                         InvalidArgument);
    Hyperband hyperband({.rank_by = RankBy::BestReport});
    CHECK_THROWS_AS(hyperband.start(rank_space(), {.seed = 1, .max_trials = 4, .objectives = 2}), InvalidArgument);
    CHECK(Hyperband({.rank_by = RankBy::BestReport}).name() == "Hyperband-promotion-fill-best-brackets=2");
}
