// SPDX-License-Identifier: MIT
// Promotion-type ASHA (detail/promotion_rungs.hpp): trials pause at each rung and are promoted
// once in the top 1/eta of it; a new trial starts only when nothing can be promoted.

#include <hypertune/strategies/asha.hpp>
#include <hypertune/strategies/hyperband.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <utility>
#include <vector>

using namespace hypertune;

namespace {

using Kind = DecisionRecord::Kind;

SearchSpace promotion_space() { return SearchSpace{ContinuousParameter("x", 0.0, 1.0)}; }

ASHA promotion_asha(Resource max_resource = 27, int eta = 3) {
    return ASHA({.min_resource = 1, .max_resource = max_resource, .reduction_factor = eta,
                 .type = HalvingType::Promotion, .fill_idle_workers = false});
}

}  // namespace

TEST_CASE("promotion-type ASHA: trials pause at their rung, and the best of the top 1/eta is promoted first") {
    ASHA asha = promotion_asha();
    CHECK(asha.name() == "ASHA-promotion");
    asha.start(promotion_space(), {.seed = 1, .max_trials = 10});
    std::vector<double> xs;
    for (TrialId id = 0; id < 3; ++id) {
        Suggestion s = asha.ask();
        REQUIRE(s.runs());
        xs.push_back(s.config.get<double>("x"));
        CHECK(s.trial == id);
        CHECK(s.budget == 1);  // the first rung, not max_resource
        CHECK(s.resume_from == 0);
    }
    const double losses[] = {0.5, 0.2, 0.9};
    for (TrialId id = 0; id < 3; ++id) {
        CHECK(asha.report(id, 1, losses[id]) == Decision::Continue);
        asha.tell(id, Outcome::completed(losses[id], 1));
        auto records = asha.take_decisions();
        REQUIRE(records.size() == 1);
        CHECK(records[0].kind == Kind::Pause);
        CHECK(records[0].rung == 0);
        CHECK(records[0].resource == 1);
        CHECK(records[0].peers == id + 1);
    }
    // m = 3, q = 1: only trial 1 (0.2) is in the top third. It resumes from 1 to the next rung.
    Suggestion p = asha.ask();
    REQUIRE(p.runs());
    CHECK(p.trial == 1);
    CHECK(p.budget == 3);
    CHECK(p.resume_from == 1);
    CHECK(p.config.get<double>("x") == xs[1]);  // the same configuration, resumed
    auto promoted = asha.take_decisions();
    REQUIRE(promoted.size() == 1);
    CHECK(promoted[0].kind == Kind::Promote);
    CHECK(promoted[0].threshold == 0.2);
    CHECK(promoted[0].peers == 3);
    CHECK(promoted[0].reason == "in the top 1/3 (1 of 3) at resource 1: resumes from 1 to 3");
    // Trial 0 (0.5) is not in the top third: a new trial starts instead of a blind promotion.
    Suggestion n = asha.ask();
    REQUIRE(n.runs());
    CHECK(n.trial == 3);
    CHECK(n.budget == 1);
    // A report past the rung's budget is an overrun: Stop, and the outcome still counts.
    CHECK(asha.report(1, 3, 0.15) == Decision::Continue);
    CHECK(asha.report(1, 4, 0.14) == Decision::Stop);
    asha.tell(1, Outcome::stopped(0.14, 4));
    auto paused = asha.take_decisions();
    REQUIRE(paused.size() == 1);
    CHECK(paused[0].kind == Kind::Pause);
    CHECK(paused[0].rung == 1);
    CHECK(paused[0].loss == 0.15);  // ranked as its peers are, on its report at the rung's resource
    // Trial 3 reports the best loss so far at rung 0: m = 4, q = 1, so it is promoted at once,
    // and trial 0 (second of four) still waits.
    asha.tell(3, Outcome::completed(0.1, 1));
    (void)asha.take_decisions();
    Suggestion q = asha.ask();
    CHECK(q.trial == 3);
    CHECK(q.resume_from == 1);
}

TEST_CASE("promotion-type ASHA: a trial that overran its rung is ranked on its report there, and resumes from "
          "where it got to") {
    // A trainer off by one trains a unit past each budget (and saves its checkpoint there): its
    // later, lower loss is no peer's, and training that unit again from the rung would waste it.
    // One that overran past the next rung (3) goes on to the rung after it (9).
    for (const auto& [first, reached] : {std::pair{0.5, Resource{2}}, {0.1, 2}, {0.1, 4}}) {
        CAPTURE(first);
        CAPTURE(reached);
        ASHA asha = promotion_asha();
        asha.start(promotion_space(), {.seed = 1, .max_trials = 3});
        for (TrialId id = 0; id < 3; ++id) REQUIRE(asha.ask().runs());
        CHECK(asha.report(0, 1, first) == Decision::Continue);
        CHECK(asha.report(0, reached, 0.05) == Decision::Stop);  // past its budget of 1
        asha.tell(0, Outcome::stopped(0.05, reached));
        for (TrialId id = 1; id < 3; ++id) {
            CHECK(asha.report(id, 1, 0.1 + 0.2 * static_cast<double>(id)) == Decision::Continue);  // 0.3, 0.5
            asha.tell(id, Outcome::completed(0.1 + 0.2 * static_cast<double>(id), 1));
        }
        const auto paused = asha.take_decisions();
        REQUIRE(paused.size() == 3);
        CHECK(paused[0].kind == Kind::Pause);
        CHECK(paused[0].loss == first);
        const Suggestion p = asha.ask();
        REQUIRE(p.runs());
        if (first == 0.5) {  // third of three on its report at 1 (its 0.05 at 2 would be first)
            CHECK(p.trial == 1);
            CHECK(p.resume_from == 1);
        } else {  // first of three: it goes on from the unit it reached to the next rung beyond it
            CHECK(p.trial == 0);
            CHECK(p.resume_from == reached);
            CHECK(p.budget == (reached < 3 ? 3 : 9));
            const auto promoted = asha.take_decisions();
            REQUIRE(promoted.size() == 1);
            CHECK(promoted[0].resource == 1);  // promoted from the rung at 1
            CHECK(promoted[0].reason == (reached < 3 ? "in the top 1/3 (1 of 3) at resource 1: resumes from 2 to 3"
                                                     : "in the top 1/3 (1 of 3) at resource 1: resumes from 4 to 9 (it "
                                                       "trained past 3 already)"));
        }
    }
}

TEST_CASE("promotion-type ASHA: failed trials and trials ended short of their rung are never promoted") {
    ASHA asha = promotion_asha(9);
    asha.start(promotion_space(), {.seed = 2, .max_trials = 6});
    for (int i = 0; i < 6; ++i) REQUIRE(asha.ask().runs());
    asha.tell(0, Outcome::failed(0));
    asha.tell(1, Outcome::stopped(0.01, 0));  // the run stopped it before its first rung
    asha.tell(2, Outcome::completed(0.3, 1));
    asha.tell(3, Outcome::completed(0.4, 1));
    asha.tell(4, Outcome::completed(0.5, 1));
    asha.tell(5, Outcome::completed(std::nan(""), 1));  // a NaN loss ranks worst
    auto records = asha.take_decisions();
    CHECK(std::count_if(records.begin(), records.end(), [](const auto& r) { return r.kind == Kind::Pause; }) == 4);
    // m = 4 recorded at rung 0 (the failed and the short trial are not), q = 1: trial 2 only.
    Suggestion s = asha.ask();
    REQUIRE(s.runs());
    CHECK(s.trial == 2);
    CHECK(s.budget == 3);
    asha.tell(2, Outcome::completed(0.2, 3));
    (void)asha.take_decisions();
    // Nothing else is in a rung's top 1/3, the budget of new trials is spent and nothing runs:
    // the rung at 3 holds trial 2 alone and promoted none, so trial 2 goes on to max_resource.
    Suggestion last = asha.ask();
    REQUIRE(last.runs());
    CHECK(last.trial == 2);
    CHECK(last.resume_from == 3);
    CHECK(last.budget == 9);
    const auto promoted = asha.take_decisions();
    REQUIRE(promoted.size() == 1);
    CHECK(promoted[0].kind == Kind::Promote);
    CHECK(promoted[0].reason == "nothing runs and no new trial may start: the best of 1 at resource 3, the highest rung "
                                "of its ladder, which promoted none and gets no more results, goes on so that a trial "
                                "trains to 9: resumes from 3 to 9");
    asha.tell(2, Outcome::completed(0.1, 9));
    CHECK(asha.take_decisions().empty());  // at max_resource: over
    // Then Done, and each trial still paused (3, 4, 5 at rung 0) is told it is over.
    CHECK(asha.ask().kind == Suggestion::Kind::Done);
    auto closed = asha.take_decisions();
    REQUIRE(closed.size() == 3);
    std::set<TrialId> ended;
    for (const auto& r : closed) {
        CHECK(r.kind == Kind::Stop);
        ended.insert(r.trial);
    }
    CHECK(ended == std::set<TrialId>{3, 4, 5});
    CHECK(closed.front().reason == "never in the top 1/3 (1 of 4) before the work ran out");
    CHECK(asha.ask().kind == Suggestion::Kind::Done);
    CHECK(asha.take_decisions().empty());
}

TEST_CASE("promotion-type ASHA waits, not ends, while a running trial may still make a promotion possible") {
    ASHA asha = promotion_asha(9);
    asha.start(promotion_space(), {.seed = 3, .max_trials = 3});
    for (int i = 0; i < 3; ++i) REQUIRE(asha.ask().runs());
    asha.tell(0, Outcome::completed(0.3, 1));
    asha.tell(1, Outcome::completed(0.4, 1));
    CHECK(asha.ask().kind == Suggestion::Kind::Wait);  // trial 2 still runs: m may reach eta
    asha.tell(2, Outcome::completed(0.1, 1));
    Suggestion s = asha.ask();
    REQUIRE(s.runs());
    CHECK(s.trial == 2);
}

namespace {

// Runs 2,000 trials of promotion-type ASHA, 6 at a time, finishing them in random order, and checks
// every answer of ask() against a brute-force ranking of each rung. With min_results > 0, a rung
// with fewer results promotes nothing while new trials may start (min_rung_results).
void check_promotions_against_brute_force(std::size_t min_results) {
    constexpr int eta = 3;
    constexpr Resource max_resource = 81;
    constexpr std::size_t max_trials = 2000;
    ASHA asha({.min_resource = 1, .max_resource = max_resource, .reduction_factor = eta,
               .type = HalvingType::Promotion, .fill_idle_workers = false, .min_rung_results = min_results});
    asha.start(promotion_space(), {.seed = 11, .max_trials = max_trials});
    const std::vector<Resource> rungs = asha.rung_resources();  // 1, 3, 9, 27

    // Brute force: per rung, every loss recorded there, and the trials paused there.
    std::map<std::size_t, std::vector<double>> recorded;
    std::map<std::size_t, std::set<std::pair<double, TrialId>>> waiting;
    std::map<TrialId, std::size_t> rung_of;  // the rung a running trial runs towards
    std::mt19937_64 rng(7);
    std::normal_distribution<double> noise(0.0, 0.05);

    // The expected answer of ask(): the best promotable paused trial at the highest rung that has
    // one (and, while new trials may start, at least min_results results).
    std::size_t started = 0;
    auto expected_promotion = [&]() -> std::optional<std::pair<TrialId, std::size_t>> {
        const std::size_t at_least = started < max_trials ? min_results : 0;
        for (std::size_t k = rungs.size(); k-- > 0;) {
            auto& values = recorded[k];
            const std::size_t q = values.size() / eta;
            if (q == 0 || waiting[k].empty() || values.size() < at_least) continue;
            std::vector<double> sorted = values;
            std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(q - 1), sorted.end());
            const auto [value, id] = *waiting[k].begin();
            if (value <= sorted[q - 1]) return std::pair{id, k};
        }
        return std::nullopt;
    };

    std::vector<TrialId> running;
    std::size_t promotions = 0, completed = 0, asks = 0;
    for (;;) {
        while (running.size() < 6) {
            auto want = expected_promotion();
            Suggestion s = asha.ask();
            ++asks;
            auto records = asha.take_decisions();
            if (want) {
                REQUIRE(s.runs());
                CHECK(s.trial == want->first);
                CHECK(s.resume_from == rungs[want->second]);
                CHECK(s.budget == (want->second + 1 < rungs.size() ? rungs[want->second + 1] : max_resource));
                REQUIRE(records.size() == 1);
                CHECK(records[0].kind == Kind::Promote);
                CHECK(records[0].peers == recorded[want->second].size());
                waiting[want->second].erase(waiting[want->second].begin());
                rung_of[s.trial] = want->second + 1;
                ++promotions;
            } else if (s.runs()) {
                CHECK(s.resume_from == 0);
                CHECK(s.budget == rungs.front());
                CHECK(records.empty());
                rung_of[s.trial] = 0;
                ++started;
            } else {
                CHECK(s.kind == (running.empty() ? Suggestion::Kind::Done : Suggestion::Kind::Wait));
                std::size_t still_paused = 0;
                for (const auto& [k, w] : waiting) still_paused += w.size();
                // Done tells every trial still paused that it is over; Wait tells nothing.
                CHECK(records.size() == (s.kind == Suggestion::Kind::Done ? still_paused : 0));
                for (const auto& r : records) CHECK(r.kind == Kind::Stop);
                break;
            }
            running.push_back(s.trial);
        }
        if (running.empty()) break;
        const std::size_t pick = rng() % running.size();
        const TrialId id = running[pick];
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(pick));
        const std::size_t k = rung_of.at(id);
        const Resource reached = k < rungs.size() ? rungs[k] : max_resource;
        // Losses rounded to 2 decimals: ties happen, and go to the paused trial.
        const double quality = static_cast<double>(id % 97) / 97.0;
        const double loss = std::round(100 * (quality + 1.0 / static_cast<double>(reached) + noise(rng))) / 100;
        asha.tell(id, Outcome::completed(loss, reached));
        auto records = asha.take_decisions();
        if (k < rungs.size()) {
            REQUIRE(records.size() == 1);
            CHECK(records[0].kind == Kind::Pause);
            recorded[k].push_back(loss);
            waiting[k].emplace(loss, id);
        } else {
            CHECK(records.empty());
            ++completed;
        }
    }
    CHECK(asks > max_trials);
    CHECK(started == max_trials);
    CHECK(recorded[0].size() == max_trials);
    // Every rung promotes about a third of what it records; some reach max_resource.
    CHECK(promotions >= max_trials / 3);
    CHECK(completed >= 20);
}

}  // namespace

TEST_CASE("promotion-type ASHA matches a brute-force ranking over many interleaved trials") {
    check_promotions_against_brute_force(0);
}

TEST_CASE("min_rung_results: while new trials may start, a rung promotes only from that many results (brute force)") {
    check_promotions_against_brute_force(9);
}

TEST_CASE("min_rung_results: the first rung waits for its 9 results, then promotes its best, and once no new trial may start every rung promotes from eta") {
    ASHA asha({.min_resource = 1, .max_resource = 9, .reduction_factor = 3, .type = HalvingType::Promotion,
               .fill_idle_workers = false, .min_rung_results = 9});
    CHECK(asha.name() == "ASHA-promotion-min9");
    asha.start(promotion_space(), {.seed = 3, .max_trials = 10});
    auto expect_run = [&](TrialId id, Resource from, Resource budget) {
        Suggestion s = asha.ask();
        REQUIRE(s.runs());
        CHECK(s.trial == id);
        CHECK(s.resume_from == from);
        CHECK(s.budget == budget);
    };
    // Trials 0..8 reach rung 1 with losses 0.9, 0.8, ..., 0.1: the best is trial 8.
    for (TrialId id = 0; id < 9; ++id) {
        expect_run(id, 0, 1);  // new, though trials 0..2 would have promoted trial 2 after three
        const double loss = 0.9 - 0.1 * static_cast<double>(id);
        asha.tell(id, Outcome::completed(loss, 1));
        (void)asha.take_decisions();
    }
    // 9 results: the top third is trials 8, 7, 6, best first.
    for (TrialId want : {8, 7, 6}) expect_run(want, 1, 3);
    // Trial 6 reaches rung 3 alone: with one result there, nothing to promote yet; the last new
    // trial starts.
    asha.tell(6, Outcome::completed(0.05, 3));
    (void)asha.take_decisions();
    expect_run(9, 0, 1);
    // No new trial may start now: rung 3 promotes from eta = 3 results, as without the option.
    asha.tell(7, Outcome::completed(0.5, 3));
    asha.tell(8, Outcome::completed(0.6, 3));
    (void)asha.take_decisions();
    expect_run(6, 3, 9);
}

// ---- promotion type filling idle workers (fill_idle_workers) ------------------------------------

namespace {

ASHA filling_asha(bool fill, Resource max_resource = 27) {
    return ASHA({.min_resource = 1, .max_resource = max_resource, .reduction_factor = 3,
                 .type = HalvingType::Promotion, .fill_idle_workers = fill});
}

// The ask() made once no new trial may start and nothing can be promoted by the rule: without
// filling, a Wait with no record; filling, paused trial `id` resumed from `from` to `to` with a
// single Promote record at `from`, which it returns.
std::optional<DecisionRecord> expect_fill(ASHA& asha, bool fill, TrialId id, Resource from, Resource to) {
    Suggestion s = asha.ask();
    auto records = asha.take_decisions();
    if (!fill) {
        CHECK(s.kind == Suggestion::Kind::Wait);
        CHECK(records.empty());
        return std::nullopt;
    }
    REQUIRE(s.runs());
    CHECK(s.trial == id);
    CHECK(s.resume_from == from);
    CHECK(s.budget == to);
    REQUIRE(records.size() == 1);
    CHECK(records[0].kind == Kind::Promote);
    CHECK(records[0].resource == from);
    return records[0];
}

}  // namespace

TEST_CASE("fill_idle_workers: once no new trial may start, a paused trial that can still make its rung's top runs") {
    for (bool fill : {false, true}) {
        CAPTURE(fill);
        ASHA asha = filling_asha(fill);
        CHECK(asha.name() == (fill ? "ASHA-promotion-fill" : "ASHA-promotion"));
        asha.start(promotion_space(), {.seed = 2, .max_trials = 6});
        for (TrialId id = 0; id < 6; ++id) REQUIRE(asha.ask().trial == id);  // nothing paused yet: all new
        const double losses[] = {0.5, 0.2, 0.9, 0.4, 0.8};
        for (TrialId id = 0; id < 5; ++id) asha.tell(id, Outcome::completed(losses[id], 1));
        (void)asha.take_decisions();
        // m = 5, q = 1: trial 1 (0.2) is promoted by the rule.
        Suggestion p = asha.ask();
        REQUIRE(p.runs());
        CHECK(p.trial == 1);
        (void)asha.take_decisions();
        // No new trial may start; trial 5 still runs towards rung 0. Once it arrives the rung holds
        // 6 values and its top third 2: trial 3 (0.4, one value ahead of it) makes it if trial 5
        // ranks behind it. Filling, it runs now; otherwise the worker waits.
        const auto record = expect_fill(asha, fill, 3, 1, 3);
        if (!record) continue;
        CHECK(record->loss == 0.4);
        CHECK(record->threshold == 0.2);  // the rule's cut-off, which 0.4 does not meet yet
        CHECK(record->peers == 5);
        CHECK(record->reason == "no new trial may start and a worker is free: 1 of 5 ahead of it at resource 1, "
                                "1 more on their way, so in the top 1/3 (2 of 6) should they all rank behind it: "
                                "resumes from 1 to 3");
        // Trial 0 (0.5) has two ahead of it: it could not make the top 2 of 6 whatever trial 5 does.
        CHECK(asha.ask().kind == Suggestion::Kind::Wait);
        CHECK(asha.take_decisions().empty());
        // Trial 5 arrives ahead of trial 3 after all (the price of the benefit of the doubt); it is in
        // the top 2 of 6 and is promoted by the rule.
        asha.tell(5, Outcome::completed(0.1, 1));
        (void)asha.take_decisions();
        Suggestion q = asha.ask();
        REQUIRE(q.runs());
        CHECK(q.trial == 5);
        CHECK(asha.take_decisions().at(0).reason.starts_with("in the top 1/3 (2 of 6)"));
    }
}

TEST_CASE("fill_idle_workers: with nothing left to promote early, a paused trial that ends in time runs to the end") {
    // Rungs 1 and 2 below max_resource 4 (reduction factor 2).
    for (bool fill : {false, true}) {
        CAPTURE(fill);
        ASHA asha({.min_resource = 1, .max_resource = 4, .reduction_factor = 2, .type = HalvingType::Promotion,
                   .fill_idle_workers = fill});
        asha.start(promotion_space(), {.seed = 3, .max_trials = 5});
        for (TrialId id = 0; id < 5; ++id) REQUIRE(asha.ask().trial == id);
        const double losses[] = {0.5, 0.2, 0.9, 0.4};
        for (TrialId id = 0; id < 4; ++id) asha.tell(id, Outcome::completed(losses[id], 1));
        // Rung 1 holds 4, its top half {1, 3}: both go to rung 2, where 1 ranks first and goes on.
        REQUIRE(asha.ask().trial == 1);
        REQUIRE(asha.ask().trial == 3);
        asha.tell(1, Outcome::completed(0.1, 2));
        asha.tell(3, Outcome::completed(0.3, 2));
        Suggestion top = asha.ask();
        REQUIRE(top.runs());
        CHECK(top.trial == 1);
        CHECK(top.budget == 4);
        (void)asha.take_decisions();
        // Running: trial 1 (2 units to go) and trial 4 (1). Trial 3 (0.3) is not in rung 2's top
        // (1 of 2) and no arrival can change that; trial 0 (0.5) has two ahead of it at rung 1,
        // whose top holds 2 of 5 once trial 4 arrives. The second rule: trial 3 needs 2 units to
        // max_resource, within the 2 trial 1 still needs, so it runs to the end; trial 0 would
        // need 3.
        const auto record = expect_fill(asha, fill, 3, 2, 4);
        if (!record) continue;
        CHECK(record->loss == 0.3);
        CHECK(record->reason == "no new trial may start and a worker is free: the best paused trial at resource 2 "
                                "that ends in time, its 2 units to the end within the 2 a running trial still needs: "
                                "resumes from 2 to 4");
        CHECK(asha.ask().kind == Suggestion::Kind::Wait);  // trial 0's 3 units would outlast the run
        CHECK(asha.take_decisions().empty());
        // It ends at max_resource, recorded at no rung: over, with no Pause record.
        asha.tell(3, Outcome::completed(0.05, 4));
        CHECK(asha.take_decisions().empty());
        asha.tell(1, Outcome::completed(0.08, 4));
        asha.tell(4, Outcome::completed(0.7, 1));
        (void)asha.take_decisions();
        // Nothing runs: the run is over, trial 0 and trial 4 stopped where they paused.
        CHECK(asha.ask().kind == Suggestion::Kind::Done);
        std::set<TrialId> stopped;
        for (const auto& d : asha.take_decisions())
            if (d.kind == Kind::Stop) stopped.insert(d.trial);
        CHECK(stopped == std::set<TrialId>{0, 2, 4});
    }
}

TEST_CASE("fill_idle_workers: with the reports' seconds, the run to the end is the best paused trial that ends in time at its pace") {
    // The scenario above, with each report saying how long its run took: trial 3 trains at 3 s a
    // unit, trial 0 at 0.5 s, the others at 1 s. At a two-hundredth of that (`scale`), under 10 ms
    // a unit on average, the times are taken for noise and units are counted, as above.
    for (double scale : {1.0, 1.0 / 200}) {
        CAPTURE(scale);
        ASHA asha({.min_resource = 1, .max_resource = 4, .reduction_factor = 2, .type = HalvingType::Promotion});
        asha.start(promotion_space(), {.seed = 3, .max_trials = 5});
        for (TrialId id = 0; id < 5; ++id) REQUIRE(asha.ask().trial == id);
        const double pace[] = {0.5, 1.0, 1.0, 3.0, 1.0};
        auto finish = [&](TrialId id, Resource from, Resource to, double loss) {
            IntermediateReport report{loss};
            report.seconds = static_cast<double>(to - from) * pace[id] * scale;
            REQUIRE(asha.report(id, to, report) == Decision::Continue);
            asha.tell(id, Outcome::completed(loss, to));
        };
        const double losses[] = {0.5, 0.2, 0.9, 0.4};
        for (TrialId id = 0; id < 4; ++id) finish(id, 0, 1, losses[id]);
        REQUIRE(asha.ask().trial == 1);
        REQUIRE(asha.ask().trial == 3);
        finish(1, 1, 2, 0.1);
        finish(3, 1, 2, 0.3);
        REQUIRE(asha.ask().trial == 1);  // the top half of rung 2, on to 4: 2 units at 1 s
        (void)asha.take_decisions();
        if (scale < 1) {  // counting units: trial 3's 2 units within the 2 trial 1 still needs
            const auto record = expect_fill(asha, true, 3, 2, 4);
            REQUIRE(record);
            CHECK(record->reason.find("its 2 units to the end within the 2 a running trial still needs") !=
                  std::string::npos);
            continue;
        }
        // Trial 4 runs 1 unit at the mean pace (1.375 s), trial 1 needs 2 s: the horizon is 2 s. Trial 3
        // at rung 2 would need 2 units x 3 s; trial 0 at rung 1 needs 3 units x 0.5 s and goes, though
        // counting units would have chosen trial 3 (its 2 units within the 2 left).
        const auto record = expect_fill(asha, true, 0, 1, 4);
        REQUIRE(record);
        CHECK(record->reason == "no new trial may start and a worker is free: the best paused trial at resource 1 that "
                                "ends in time, its 3 units to the end take about 1.5 s at its pace, within the 2 s a "
                                "running trial still needs: resumes from 1 to 4");
        CHECK(asha.ask().kind == Suggestion::Kind::Wait);  // trial 2's 3 units take 3 s, trial 3's 6 s
        CHECK(asha.take_decisions().empty());
    }
}

TEST_CASE("fill_idle_workers: once resumed trials train again from unit 1 (no checkpoint), a fill counts every unit") {
    // The scenario of the tests above: a unit takes 1 s, trial 3's a quarter of that; or a
    // two-hundredth of both (units counted). Trials 1 and 3 are promoted from rung 1 to 2 and train
    // again from unit 1, as an objective that keeps no checkpoint does. Through the Tuner, which
    // passes on no step judged before, their first report is step 2, 2 units into the run, and the
    // run's end says that it started over (Outcome::started_over); driven directly, they report
    // step 1 again. Either way the scheduler then knows: a paused trial run to the end trains all 4
    // of its units, not the 2 above its rung, at a pace measured over every unit its run trained.
    for (double scale : {1.0, 1.0 / 200})
        for (bool through_tuner : {true, false}) {
            CAPTURE(scale);
            CAPTURE(through_tuner);
            ASHA asha({.min_resource = 1, .max_resource = 4, .reduction_factor = 2, .type = HalvingType::Promotion});
            asha.start(promotion_space(), {.seed = 3, .max_trials = 5});
            for (TrialId id = 0; id < 5; ++id) REQUIRE(asha.ask().trial == id);
            const double pace[] = {1.0, 1.0, 1.0, 0.25};
            auto report = [&](TrialId id, Resource units, double loss) {
                IntermediateReport r{loss};
                r.seconds = static_cast<double>(units) * pace[id] * scale;
                return asha.report(id, units, r);
            };
            auto tell = [&](TrialId id, Resource units, double loss, bool started_over) {
                Outcome o = Outcome::completed(loss, units);
                o.seconds = static_cast<double>(units) * pace[id] * scale;
                o.started_over = started_over;
                asha.tell(id, o);
            };
            const double losses[] = {0.5, 0.2, 0.9, 0.4};
            for (TrialId id = 0; id < 4; ++id) {
                REQUIRE(report(id, 1, losses[id]) == Decision::Continue);
                tell(id, 1, losses[id], false);
            }
            REQUIRE(asha.ask().trial == 1);
            REQUIRE(asha.ask().trial == 3);
            for (TrialId id : {1, 3}) {
                const double loss = id == 1 ? 0.1 : 0.3;
                if (!through_tuner) REQUIRE(report(id, 1, loss) == Decision::Continue);  // step 1 again
                REQUIRE(report(id, 2, loss) == Decision::Continue);
                tell(id, 2, loss, through_tuner);
            }
            REQUIRE(asha.ask().trial == 1);  // on to 4: it still needs 2 units past its rung, at 1 s
            (void)asha.take_decisions();
            if (scale < 1) {
                // Counting units, every paused trial needs 4 from unit 1, past the 2 trial 1 still
                // needs: a free worker waits (counted from its rung, trial 3 ran to the end).
                CHECK(asha.ask().kind == Suggestion::Kind::Wait);
                CHECK(asha.take_decisions().empty());
                continue;
            }
            // Trial 3 trains its 4 units in 1 s, within trial 1's 2 s (its pace taken over the 1
            // unit above its rung, it seemed to take 0.5 s a unit, and trial 1 2 s).
            const auto record = expect_fill(asha, true, 3, 2, 4);
            REQUIRE(record);
            CHECK(record->reason == "no new trial may start and a worker is free: the best paused trial at resource 2 "
                                    "that ends in time, its 4 units to the end (from unit 1: the trials keep no "
                                    "checkpoint) take about 1 s at its pace, within the 2 s a running trial still "
                                    "needs: resumes from 2 to 4");
            CHECK(asha.ask().kind == Suggestion::Kind::Wait);  // trials 0 and 2 need 4 s
            CHECK(asha.take_decisions().empty());
        }
}

TEST_CASE("fill_idle_workers: a trial's pace counts its whole run, what it did after its last report too") {
    // The scenario above, except that trial 0 saves a checkpoint after its report at rung 1 that
    // takes 2.5 s: its report says 0.5 s a unit, its run took 3 s. Paced on its report, its 3 units
    // to the end would take 1.5 s, within the 2 s horizon, and it would run to the end; paced on
    // its run, they take 9 s. With every paused trial past the horizon, a free worker waits.
    ASHA asha({.min_resource = 1, .max_resource = 4, .reduction_factor = 2, .type = HalvingType::Promotion});
    asha.start(promotion_space(), {.seed = 3, .max_trials = 5});
    for (TrialId id = 0; id < 5; ++id) REQUIRE(asha.ask().trial == id);
    const double pace[] = {0.5, 1.0, 1.0, 3.0, 1.0};
    auto finish = [&](TrialId id, Resource from, Resource to, double loss, double after_report = 0.0) {
        IntermediateReport report{loss};
        report.seconds = static_cast<double>(to - from) * pace[id];
        REQUIRE(asha.report(id, to, report) == Decision::Continue);
        Outcome outcome = Outcome::completed(loss, to);
        outcome.seconds = report.seconds + after_report;
        asha.tell(id, outcome);
    };
    const double losses[] = {0.5, 0.2, 0.9, 0.4};
    for (TrialId id = 0; id < 4; ++id) finish(id, 0, 1, losses[id], id == 0 ? 2.5 : 0.0);
    REQUIRE(asha.ask().trial == 1);
    REQUIRE(asha.ask().trial == 3);
    finish(1, 1, 2, 0.1);
    finish(3, 1, 2, 0.3);
    REQUIRE(asha.ask().trial == 1);
    (void)asha.take_decisions();
    // Trial 4's unit at the mean pace (3 + 1 + 1 + 3) / 4 = 2 s and trial 1's 2 units at 1 s: 2 s.
    CHECK(asha.ask().kind == Suggestion::Kind::Wait);
    CHECK(asha.take_decisions().empty());
}

namespace {

// Promotion-type ASHA on rungs 1 and 3 below 9 with 9 trials, whose runs each spend `setup`
// seconds before their first unit, then 1 s a unit (trial 1: 0.5 s). The 9 trials have run to
// rung 1 (one report each, losses 0.1, 0.2, ...) and trials 0, 1 and 2 have been promoted.
struct SetUpRuns {
    explicit SetUpRuns(double setup_seconds) : setup(setup_seconds) {
        asha.start(promotion_space(), {.seed = 5, .max_trials = 9});
        for (TrialId id = 0; id < 9; ++id) REQUIRE(asha.ask().trial == id);
        for (TrialId id = 0; id < 9; ++id) finish(id, 0, 1, 0.1 * static_cast<double>(id + 1));
        for (TrialId id = 0; id < 3; ++id) REQUIRE(asha.ask().trial == id);  // rung 1's top 3 of 9
    }
    [[nodiscard]] double seconds(TrialId id, Resource units) const {
        return setup + static_cast<double>(units) * (id == 1 ? 0.5 : 1.0);
    }
    void report(TrialId id, Resource from, Resource step, double loss) {
        IntermediateReport r{loss};
        r.seconds = seconds(id, step - from);
        REQUIRE(asha.report(id, step, r) == Decision::Continue);
    }
    void finish(TrialId id, Resource from, Resource to, double loss) {
        for (Resource step = from + 1; step <= to; ++step) report(id, from, step, loss);
        Outcome outcome = Outcome::completed(loss, to);
        outcome.seconds = seconds(id, to - from);
        asha.tell(id, outcome);
    }
    // The next ask() runs trial `id` on to 9.
    void expect_to_the_end(TrialId id) {
        const Suggestion s = asha.ask();
        REQUIRE(s.runs());
        REQUIRE(s.trial == id);
        REQUIRE(s.budget == 9);
        (void)asha.take_decisions();
    }
    // With a set-up of 4 s trial 1's 6 units to the end (7 s) are past `horizon`: a free worker
    // waits. With 1 s (4 s), it runs to the end.
    void expect_trial_1_filled_within(const char* horizon) {
        if (setup > 1.0) {
            CHECK(asha.ask().kind == Suggestion::Kind::Wait);
            CHECK(asha.take_decisions().empty());
            return;
        }
        const auto record = expect_fill(asha, true, 1, 3, 9);
        REQUIRE(record);
        CHECK(record->reason == fmt::format("no new trial may start and a worker is free: the best paused trial at "
                                            "resource 3 that ends in time, its 6 units to the end take about 4 s at its "
                                            "pace, within the {} s a running trial still needs: resumes from 3 to 9",
                                            horizon));
    }

    double setup;
    ASHA asha{{.min_resource = 1, .max_resource = 9, .reduction_factor = 3, .type = HalvingType::Promotion}};
};

}  // namespace

TEST_CASE("fill_idle_workers: a run's set-up is not spread over its units") {
    // Trials 0, 1 and 2 report twice on the way to rung 3 (a pace per unit apart from the set-up)
    // and trial 0, first there, goes on to 9. It has reported step 4, after the set-up and a unit
    // of 1 s: 5 units to go, 5 s, not 5 x (setup + 1). Trial 1 (0.5 s a unit) at rung 3 needs a
    // set-up and 6 units to the end: with a set-up of 4 s, 7 s, past the 5 s, so the worker waits
    // (spread over its 2 units, the set-up would make it 15 s within 25 s, and it would end 2 s
    // after the run could); with a set-up of 1 s, 4 s: it runs to the end beside trial 0.
    for (double setup : {4.0, 1.0}) {
        CAPTURE(setup);
        SetUpRuns runs(setup);
        for (TrialId id = 0; id < 3; ++id) runs.finish(id, 1, 3, 0.1 * static_cast<double>(id + 1));
        runs.expect_to_the_end(0);  // rung 3's top 1 of 3
        runs.report(0, 3, 4, 0.05);
        runs.expect_trial_1_filled_within("5");
    }
}

TEST_CASE("fill_idle_workers: a trial promoted from a run of one report is timed without the set-up too") {
    // Trials 0 and 1 report twice on the way to rung 3 (the set-up measured), and 0 goes on to 9
    // by the benefit of the doubt. Trial 2 has not reported in its run yet: its only pace, setup
    // + 1 s a unit, is its first run's, one unit with the set-up. Its 2 units to rung 3 take 2 s,
    // not 2 x (setup + 1): the horizon is trial 0's 6 units at 1 s. Trial 1 needs a set-up and
    // 3 s to the end: with a set-up of 4 s, 7 s, past the 6 s (with the set-up spread it would
    // have had 10 s, and ended a second after the run could); with a set-up of 1 s, 4 s.
    for (double setup : {4.0, 1.0}) {
        CAPTURE(setup);
        SetUpRuns runs(setup);
        runs.finish(0, 1, 3, 0.1);
        runs.finish(1, 1, 3, 0.2);
        runs.expect_to_the_end(0);  // rung 3: 2 recorded, trial 2 on its way
        runs.expect_trial_1_filled_within("6");
    }
}

TEST_CASE("fill_idle_workers matches a brute-force check of every early promotion and every Wait") {
    // Random interleavings on 4 workers with a budget of new trials. Each early promotion by the
    // benefit of the doubt must have fewer losses ahead of it at its rung than the top 1/eta holds
    // once the trials running towards that rung arrive; each run to the end must come when no
    // paused trial has that, and be the best paused trial, at the highest rung, whose remaining
    // units take no longer at its pace than the most a running trial still needs at its own; each
    // Wait must come when no paused trial has either. Without seconds in the reports, a unit counts
    // as a second for every trial; with them (`paced`), each trial trains at its own pace, from
    // 0.25 to 2 seconds a unit, and one not measured yet counts at the mean of those measured.
    constexpr int eta = 3;
    constexpr Resource max_resource = 27;
    std::mt19937_64 rng(17);
    std::size_t early = 0, to_the_end = 0, waits_checked = 0, slow_skipped = 0;
    for (int run = 0; run < 80; ++run) {
        const bool paced = run % 2 == 1;
        CAPTURE(paced);
        ASHA asha = filling_asha(true, max_resource);
        const std::size_t max_trials = 12 + rng() % 30;
        asha.start(promotion_space(), {.seed = static_cast<std::uint64_t>(run), .max_trials = max_trials});
        std::map<Resource, std::vector<double>> recorded;         // rung resource -> losses recorded there
        std::map<Resource, std::set<std::pair<double, TrialId>>> paused;
        std::map<TrialId, std::pair<Resource, Resource>> running;  // id -> (resumed from, budget)
        std::map<TrialId, double> value_of;                       // a trial's loss, fixed per trial
        std::map<TrialId, double> pace_of;                        // its seconds per unit, fixed per trial
        std::map<TrialId, double> measured;                       // the paces the scheduler has seen
        std::size_t started = 0;
        auto arriving = [&](Resource r) {
            return static_cast<std::size_t>(std::count_if(running.begin(), running.end(),
                                                          [&](const auto& e) { return e.second.second == r; }));
        };
        auto pace = [&](TrialId id) {  // as the scheduler knows it
            if (auto m = measured.find(id); m != measured.end()) return m->second;
            if (measured.empty()) return 1.0;
            double sum = 0;
            for (const auto& [i, p] : measured) sum += p;
            return sum / static_cast<double>(measured.size());
        };
        auto horizon = [&] {
            double h = 0;
            for (const auto& [id, span] : running)
                h = std::max(h, static_cast<double>(span.second - span.first) * pace(id));
            return h;
        };
        auto ends_in_time = [&](Resource r, TrialId id) {
            return static_cast<double>(max_resource - r) * pace(id) <= horizon();
        };
        auto any_paused = [&](auto&& predicate) {
            for (const auto& [r, set] : paused)
                for (const auto& [v, id] : set)
                    if (predicate(r, v, id)) return true;
            return false;
        };
        auto ahead = [&](Resource r, double v) {
            const auto& vs = recorded[r];
            return static_cast<std::size_t>(std::count_if(vs.begin(), vs.end(), [&](double x) { return x < v; }));
        };
        auto could_make_it = [&](Resource r, double v, TrialId) {
            return ahead(r, v) < (recorded[r].size() + arriving(r)) / eta;
        };
        for (int guard = 0; guard < 10000; ++guard) {
            while (running.size() < 4) {
                Suggestion s = asha.ask();
                for (const auto& d : asha.take_decisions()) {
                    if (d.kind != Kind::Promote) continue;
                    paused[d.resource].erase({d.loss, d.trial});
                    if (!d.reason.starts_with("no new trial may start")) continue;
                    CHECK(started == max_trials);
                    if (d.reason.find("units to the end") == std::string::npos) {
                        ++early;
                        CHECK(could_make_it(d.resource, d.loss, d.trial));
                    } else {
                        ++to_the_end;
                        CHECK_FALSE(any_paused(could_make_it));
                        CHECK(ends_in_time(d.resource, d.trial));
                        CHECK(s.budget == max_resource);
                        // The best that ends in time at the highest rung where one does.
                        const bool better = any_paused([&](Resource r, double v, TrialId id) {
                            return (r > d.resource || (r == d.resource && v < d.loss)) && ends_in_time(r, id);
                        });
                        CHECK_FALSE(better);
                        slow_skipped += any_paused([&](Resource r, double v, TrialId id) {
                            return r == d.resource && v < d.loss && !ends_in_time(r, id);
                        });
                    }
                }
                if (!s.runs()) {
                    if (s.kind == Suggestion::Kind::Wait) {
                        ++waits_checked;
                        CHECK_FALSE(any_paused(could_make_it));
                        CHECK_FALSE(any_paused([&](Resource r, double, TrialId id) { return ends_in_time(r, id); }));
                    }
                    break;
                }
                if (s.resume_from == 0) {
                    ++started;
                    value_of[s.trial] = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
                    pace_of[s.trial] = paced ? 0.25 * static_cast<double>(1 + rng() % 8) : 1.0;
                }
                running[s.trial] = {s.resume_from, s.budget};
            }
            if (running.empty()) break;
            auto it = running.begin();
            std::advance(it, static_cast<std::ptrdiff_t>(rng() % running.size()));
            const TrialId id = it->first;
            const auto [from, budget] = it->second;
            running.erase(it);
            // A loss that improves a little with resource, so ranks mostly hold from rung to rung.
            const double loss = value_of[id] * (1.0 - 0.01 * static_cast<double>(budget));
            if (paced) {  // its last step, with the seconds this run took
                IntermediateReport report{loss};
                report.seconds = static_cast<double>(budget - from) * pace_of[id];
                CHECK(asha.report(id, budget, report) == Decision::Continue);
                measured[id] = pace_of[id];
            }
            asha.tell(id, Outcome::completed(loss, budget));
            for (const auto& d : asha.take_decisions())
                if (d.kind == Kind::Pause) {
                    recorded[d.resource].push_back(d.loss);
                    paused[d.resource].emplace(d.loss, d.trial);
                }
        }
        CHECK(running.empty());
    }
    CHECK(early > 20);  // each rule was exercised, not just allowed
    CHECK(to_the_end > 20);
    CHECK(waits_checked > 20);
    CHECK(slow_skipped > 5);  // with paces, a better trial too slow to end in time was passed over
}

TEST_CASE("a halving rule set for the type that ignores it is refused, naming the scheduler") {
    CHECK_THROWS_WITH_AS(ASHA({.type = HalvingType::Stop, .fill_idle_workers = true}),
                         "ASHA: fill_idle_workers is a rule of the promotion type (.type = HalvingType::Promotion); "
                         "the stop type never leaves a worker waiting",
                         InvalidArgument);
    CHECK_THROWS_WITH_AS(ASHA({.type = HalvingType::Promotion, .wait_for_peers = true}),
                         "ASHA: wait_for_peers is a rule of the stop type; the promotion type never lets a trial "
                         "past a rung before eta trials reached it",
                         InvalidArgument);
    CHECK_THROWS_AS(Hyperband({.type = HalvingType::Promotion, .wait_for_peers = true}), InvalidArgument);
    CHECK_THROWS_AS(Hyperband({.type = HalvingType::Stop, .fill_idle_workers = true}), InvalidArgument);
    CHECK_THROWS_WITH_AS(Hyperband({.mode = HyperbandMode::Synchronous, .wait_for_peers = true}),
                         "Hyperband: wait_for_peers is for the asynchronous mode; the synchronous mode judges a rung "
                         "only once all of its trials have reached it",
                         InvalidArgument);
    CHECK(Hyperband({.type = HalvingType::Promotion, .fill_idle_workers = true, .brackets = 0}).name() ==
          "Hyperband-promotion-fill");
    CHECK_THROWS_WITH_AS(ASHA({.type = HalvingType::Stop, .min_rung_results = 9}),
                         "ASHA: min_rung_results is a rule of the promotion type (.type = HalvingType::Promotion); for "
                         "the stop type, wait_for_peers holds the first arrivals at a rung",
                         InvalidArgument);
    CHECK_THROWS_WITH_AS(Hyperband({.mode = HyperbandMode::Synchronous, .min_rung_results = 9}),
                         "Hyperband: min_rung_results is for the asynchronous mode; the synchronous mode promotes at a "
                         "rung only once all of its trials have reached it",
                         InvalidArgument);
    CHECK(Hyperband({.min_rung_results = 9}).name() == "Hyperband-promotion-fill-min9-brackets=2");
}

// ---- stop type without free passes (wait_for_peers) ---------------------------------------------

namespace {

ASHA waiting_asha(Resource max_resource = 27) {
    return ASHA({.min_resource = 1,
                 .max_resource = max_resource,
                 .reduction_factor = 3,
                 .type = HalvingType::Stop,
                 .wait_for_peers = true});
}

}  // namespace

TEST_CASE("stop-type ASHA with wait_for_peers holds the first arrivals at a rung until eta peers judge them") {
    ASHA asha = waiting_asha();
    asha.start(promotion_space(), {.seed = 4, .max_trials = 10});
    for (TrialId id = 0; id < 3; ++id) CHECK(asha.ask().budget == 27);  // the stop type's full budget
    // Trials 0 and 1 reach rung 0 before eta = 3 values are there: held, told Stop, no record yet.
    CHECK(asha.report(0, 1, 0.5) == Decision::Stop);
    CHECK(asha.take_decisions().empty());
    asha.tell(0, Outcome::stopped(0.5, 1));
    auto paused = asha.take_decisions();
    REQUIRE(paused.size() == 1);
    CHECK(paused[0].kind == Kind::Pause);
    CHECK(paused[0].reason == "one of the first 1 at resource 1 (fewer than eta = 3): waits for more trials to reach it");
    CHECK(asha.report(1, 1, 0.3) == Decision::Stop);
    // Trial 2 is the third: it is judged at once (0.9 is not the best of three) and so are the held:
    // trial 1 (0.3, the cut-off) is cleared, trial 0 (0.5) is stopped, while trial 1 still runs.
    CHECK(asha.report(2, 1, 0.9) == Decision::Stop);
    auto judged = asha.take_decisions();
    REQUIRE(judged.size() == 2);
    CHECK(judged[0].trial == 0);
    CHECK(judged[0].kind == Kind::Stop);
    CHECK(judged[0].threshold == 0.3);
    CHECK(judged[0].reason == "held at resource 1 until 3 trials reached it: not in the top 1/3 (1 of 3)");
    CHECK(judged[1].trial == 2);
    CHECK(judged[1].kind == Kind::Stop);
    asha.tell(2, Outcome::stopped(0.9, 1));
    // Trial 1 returns: it pauses, cleared, and is the next thing ask() runs, from where it was.
    asha.tell(1, Outcome::stopped(0.3, 1));
    auto cleared = asha.take_decisions();
    REQUIRE(cleared.size() == 1);
    CHECK(cleared[0].kind == Kind::Pause);
    CHECK(cleared[0].reason == "in the top 1/3 at resource 1 once 3 trials reached it: runs again when a worker is free");
    Suggestion r = asha.ask();
    REQUIRE(r.runs());
    CHECK(r.trial == 1);
    CHECK(r.resume_from == 1);
    CHECK(r.budget == 27);
    auto promoted = asha.take_decisions();
    REQUIRE(promoted.size() == 1);
    CHECK(promoted[0].kind == Kind::Promote);
    // The next ask starts a new trial again.
    CHECK(asha.ask().trial == 3);
}

TEST_CASE("stop-type ASHA with wait_for_peers: when nothing else can run, the best held trial goes on") {
    ASHA asha = waiting_asha(9);
    asha.start(promotion_space(), {.seed = 5, .max_trials = 2});
    REQUIRE(asha.ask().runs());
    REQUIRE(asha.ask().runs());
    CHECK(asha.report(0, 1, 0.4) == Decision::Stop);
    CHECK(asha.report(1, 1, 0.2) == Decision::Stop);
    asha.tell(1, Outcome::stopped(0.2, 1));
    // Trial 0 still runs: its end could bring a third value, so ask() waits.
    CHECK(asha.ask().kind == Suggestion::Kind::Wait);
    asha.tell(0, Outcome::stopped(0.4, 1));
    (void)asha.take_decisions();
    // No new trial may start and nothing runs: the better held trial (1) continues, 0 is stopped.
    Suggestion r = asha.ask();
    REQUIRE(r.runs());
    CHECK(r.trial == 1);
    CHECK(r.resume_from == 1);
    auto records = asha.take_decisions();
    REQUIRE(records.size() == 2);
    CHECK(records[0].trial == 0);
    CHECK(records[0].kind == Kind::Stop);
    CHECK(records[1].trial == 1);
    CHECK(records[1].kind == Kind::Promote);
    // At rung 3 it is alone again, and held; with nothing else left it is released to the end.
    CHECK(asha.report(1, 3, 0.1) == Decision::Stop);
    asha.tell(1, Outcome::stopped(0.1, 3));
    (void)asha.take_decisions();
    Suggestion last = asha.ask();
    REQUIRE(last.runs());
    CHECK(last.resume_from == 3);
    asha.tell(1, Outcome::completed(0.05, 9));
    CHECK(asha.ask().kind == Suggestion::Kind::Done);
}

TEST_CASE("promotion-type ASHA: from its last rung a trial is promoted to max_resource, a factor away") {
    // Rungs 1, 3, 9 for 30 units: no rung at 27, where the last three units' noise would decide.
    ASHA asha({.min_resource = 9, .max_resource = 30, .type = HalvingType::Promotion, .fill_idle_workers = false});
    REQUIRE(asha.rung_resources() == std::vector<Resource>{9});
    asha.start(promotion_space(), {.seed = 2, .max_trials = 3});
    for (TrialId id = 0; id < 3; ++id) {
        Suggestion s = asha.ask();
        REQUIRE(s.runs());
        CHECK(s.budget == 9);
    }
    for (TrialId id = 0; id < 3; ++id) asha.tell(id, Outcome::completed(0.1 * static_cast<double>(id + 1), 9));
    Suggestion promoted = asha.ask();
    REQUIRE(promoted.runs());
    CHECK(promoted.trial == 0);
    CHECK(promoted.resume_from == 9);
    CHECK(promoted.budget == 30);
}
