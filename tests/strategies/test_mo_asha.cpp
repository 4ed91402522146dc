// SPDX-License-Identifier: MIT
// Multi-objective early stopping (MO-ASHA): with several objectives or constraints, ASHA and
// asynchronous Hyperband rank each rung by Pareto priority (feasible first, non-dominated rank,
// crowding distance). Decisions are checked against a brute-force ranking written here
// independently of pareto.hpp, in the stop and the promotion types.

#include <hypertune/pareto.hpp>
#include <hypertune/strategies/asha.hpp>
#include <hypertune/strategies/hyperband.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace hypertune;

namespace {

using Kind = DecisionRecord::Kind;

struct MoPoint {
    TrialId id = 0;
    std::vector<double> losses;
    bool feasible = true;
};

bool mo_dominates(const std::vector<double>& a, const std::vector<double>& b) {
    bool strictly = false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i] > b[i]) return false;
        strictly = strictly || a[i] < b[i];
    }
    return strictly;
}

// The brute-force priority order of `points` (indices): feasible first; fronts peeled one by one;
// within a front, crowding distance (computed on the front alone), larger first, then the earlier.
std::vector<std::size_t> brute_priority(const std::vector<MoPoint>& points) {
    std::vector<std::size_t> order;
    for (bool feasible : {true, false}) {
        std::vector<std::size_t> left;
        for (std::size_t i = 0; i < points.size(); ++i)
            if (points[i].feasible == feasible) left.push_back(i);
        while (!left.empty()) {
            std::vector<std::size_t> front, rest;
            for (std::size_t i : left) {
                bool dominated = false;
                for (std::size_t j : left) dominated = dominated || mo_dominates(points[j].losses, points[i].losses);
                (dominated ? rest : front).push_back(i);
            }
            std::map<std::size_t, double> crowding;
            for (std::size_t i : front) crowding[i] = 0.0;
            const std::size_t d = points[front.front()].losses.size();
            for (std::size_t k = 0; k < d; ++k) {
                std::vector<std::size_t> by = front;
                std::sort(by.begin(), by.end(), [&](std::size_t a, std::size_t b) {
                    const double va = points[a].losses[k], vb = points[b].losses[k];
                    return va < vb || (va == vb && a < b);
                });
                const double low = points[by.front()].losses[k], high = points[by.back()].losses[k];
                if (!(high > low)) continue;  // flat: no ends
                // The ends: the earliest point at each (ties go to the earlier arrival).
                const std::size_t top = *std::find_if(by.begin(), by.end(),
                                                      [&](std::size_t i) { return points[i].losses[k] == high; });
                crowding[by.front()] = crowding[top] = std::numeric_limits<double>::infinity();
                for (std::size_t i = 1; i + 1 < by.size(); ++i)
                    crowding[by[i]] += (points[by[i + 1]].losses[k] - points[by[i - 1]].losses[k]) / (high - low);
            }
            std::sort(front.begin(), front.end(), [&](std::size_t a, std::size_t b) {
                return crowding[a] > crowding[b] || (crowding[a] == crowding[b] && a < b);
            });
            order.insert(order.end(), front.begin(), front.end());
            left = rest;
        }
    }
    return order;
}

// How many trials rank strictly before trial `id` in the brute-force order of `points`: the
// place of the first with its feasibility and losses (ties go to the trial).
std::size_t brute_ahead(const std::vector<MoPoint>& points, TrialId id) {
    const auto order = brute_priority(points);
    const auto mine = std::find_if(points.begin(), points.end(), [&](const MoPoint& p) { return p.id == id; });
    REQUIRE(mine != points.end());
    for (std::size_t p = 0; p < order.size(); ++p)
        if (points[order[p]].losses == mine->losses && points[order[p]].feasible == mine->feasible) return p;
    FAIL("trial not recorded");
    return 0;
}

// Losses on a coarse grid, so that ties and duplicates happen.
std::vector<double> random_losses(std::mt19937_64& rng, std::size_t objectives) {
    std::vector<double> out;
    for (std::size_t k = 0; k < objectives; ++k) out.push_back(static_cast<double>(rng() % 12) / 4.0);
    return out;
}

IntermediateReport mo_report(const std::vector<double>& losses, bool feasible) {
    return IntermediateReport{losses.front(), losses, feasible};
}

Outcome mo_outcome(const std::vector<double>& losses, bool feasible, Resource reached) {
    Outcome o = Outcome::completed(losses.front(), reached);
    o.losses = losses;
    o.feasible = feasible;
    return o;
}

SearchSpace mo_asha_space() { return SearchSpace{ContinuousParameter("x", 0.0, 1.0)}; }

}  // namespace

TEST_CASE("priority_order matches a brute-force ranking on random point sets in 2-4 objectives") {
    std::mt19937_64 rng(3);
    for (int round = 0; round < 300; ++round) {
        const std::size_t d = 2 + static_cast<std::size_t>(round % 3);
        const std::size_t n = 1 + rng() % 40;
        const bool constrained = round % 2 == 1;
        std::vector<MoPoint> points;
        std::vector<std::vector<double>> xs;
        std::vector<bool> feasible;
        for (std::size_t i = 0; i < n; ++i) {
            points.push_back({static_cast<TrialId>(i), random_losses(rng, d), !constrained || rng() % 3 != 0});
            xs.push_back(points.back().losses);
            feasible.push_back(points.back().feasible);
        }
        CHECK(priority_order(xs, constrained ? feasible : std::vector<bool>{}) == brute_priority(points));
    }
}

TEST_CASE("crowding distance: the ends of a front are kept first, then the sparse parts") {
    // Four points on a line from (0, 3) to (3, 0); (1, 2) and (2, 1) are interior.
    const std::vector<std::vector<double>> pts{{0, 3}, {1, 2}, {2.5, 0.5}, {3, 0}};
    const auto d = crowding_distances(pts, {0, 1, 2, 3});
    CHECK(std::isinf(d[0]));
    CHECK(std::isinf(d[3]));
    CHECK(d[1] == doctest::Approx((2.5 - 0) / 3 + (3 - 0.5) / 3));
    CHECK(d[2] == doctest::Approx((3 - 1) / 3.0 + (2 - 0) / 3.0));
    // (1, 2) sits in the sparser part of the front: it goes before (2.5, 0.5).
    CHECK(priority_order(pts) == std::vector<std::size_t>{0, 3, 1, 2});
}

TEST_CASE("crowding distance: ties go to the earlier point, and a flat objective counts for nothing") {
    // Identical points have no ends: the order is the index order, the last arrival not second.
    const std::vector<std::vector<double>> same(5, std::vector<double>{0.5, 0.5});
    CHECK(priority_order(same) == std::vector<std::size_t>{0, 1, 2, 3, 4});
    // Two points at each end of both objectives: the earlier of each pair is the end kept first.
    const std::vector<std::vector<double>> pts{{0, 3}, {3, 0}, {0, 3}, {3, 0}, {1, 2}};
    const auto d = crowding_distances(pts, {0, 1, 2, 3, 4});
    CHECK(std::isinf(d[0]));
    CHECK(std::isinf(d[1]));
    CHECK(d[2] == doctest::Approx(1.0 / 3));
    CHECK(d[3] == doctest::Approx(2.0 / 3));
    CHECK(d[4] == doctest::Approx(2.0));
    CHECK(priority_order(pts) == std::vector<std::size_t>{0, 1, 4, 3, 2});
    // A flat objective beside a spread one: only the spread one has ends.
    const std::vector<std::vector<double>> flat{{1, 0}, {1, 2}, {1, 1}};
    const auto f = crowding_distances(flat, {0, 1, 2});
    CHECK(std::isinf(f[0]));
    CHECK(std::isinf(f[1]));
    CHECK(f[2] == doctest::Approx(1.0));
}

TEST_CASE("MO-ASHA, stop type: every decision matches a brute-force Pareto ranking of the rung") {
    for (const bool constrained : {false, true}) {
        for (const std::size_t objectives : {std::size_t{1}, std::size_t{2}, std::size_t{3}}) {
            if (objectives == 1 && !constrained) continue;  // ranked by loss: test_asha.cpp
            CAPTURE(objectives);
            CAPTURE(constrained);
            constexpr std::size_t eta = 3;
            ASHA asha({.min_resource = 1,
                       .max_resource = 27,
                       .reduction_factor = static_cast<int>(eta),
                       .type = HalvingType::Stop});
            REQUIRE(asha.supports_objectives(objectives));
            asha.start(mo_asha_space(), {.seed = 5, .max_trials = 300, .objectives = objectives,
                                         .constrained = constrained});
            const std::vector<Resource> rungs = asha.rung_resources();  // 1, 3, 9
            std::map<std::size_t, std::vector<MoPoint>> recorded;
            std::map<TrialId, std::size_t> next_rung;
            std::mt19937_64 rng(17 + objectives);
            std::vector<TrialId> running;
            std::size_t stops = 0, passes = 0, free_passes = 0, completed = 0;
            for (;;) {
                while (running.size() < 5) {
                    Suggestion s = asha.ask();
                    if (!s.runs()) break;
                    CHECK(s.budget == 27);
                    running.push_back(s.trial);
                    next_rung[s.trial] = 0;
                }
                if (running.empty()) break;
                const std::size_t pick = rng() % running.size();
                const TrialId id = running[pick];
                const std::size_t k = next_rung[id];
                const std::vector<double> losses = random_losses(rng, objectives);
                const bool feasible = !constrained || rng() % 4 != 0;
                if (k == rungs.size()) {  // past the last rung: it completes
                    CHECK(asha.report(id, 27, mo_report(losses, feasible)) == Decision::Continue);
                    asha.tell(id, mo_outcome(losses, feasible, 27));
                    CHECK(asha.take_decisions().empty());
                    running.erase(running.begin() + static_cast<std::ptrdiff_t>(pick));
                    ++completed;
                    continue;
                }
                auto& rung = recorded[k];
                rung.push_back({id, losses, feasible});
                const std::size_t m = rung.size(), q = m / eta;
                const bool expect_continue = q == 0 || brute_ahead(rung, id) < q;
                const Decision d = asha.report(id, rungs[k], mo_report(losses, feasible));
                CHECK(d == (expect_continue ? Decision::Continue : Decision::Stop));
                auto records = asha.take_decisions();
                REQUIRE(records.size() == 1);
                CHECK(records[0].peers == m);
                CHECK(std::isnan(records[0].threshold));  // no single value decides
                if (q == 0) {
                    ++free_passes;
                } else {
                    CHECK(records[0].reason.find("by Pareto priority") != std::string::npos);
                }
                if (d == Decision::Stop) {
                    CHECK(records[0].kind == Kind::Stop);
                    Outcome o = mo_outcome(losses, feasible, rungs[k]);
                    o.status = Outcome::Status::Stopped;
                    asha.tell(id, o);
                    CHECK(asha.take_decisions().empty());
                    running.erase(running.begin() + static_cast<std::ptrdiff_t>(pick));
                    ++stops;
                } else {
                    CHECK(records[0].kind == Kind::Promote);
                    ++passes;
                    ++next_rung[id];
                }
            }
            CHECK(recorded[0].size() == 300);
            CHECK(stops > 150);
            CHECK(passes > 100);
            CHECK(free_passes == 2 * rungs.size());  // the first eta - 1 at each rung
            CHECK(completed > 5);
        }
    }
}

TEST_CASE("MO-ASHA, promotion type: the promoted trial is the best-placed paused one, by brute force") {
    constexpr std::size_t eta = 3;
    constexpr Resource max_resource = 27;
    ASHA asha({.min_resource = 1, .max_resource = max_resource, .reduction_factor = static_cast<int>(eta),
               .type = HalvingType::Promotion, .fill_idle_workers = false});
    asha.start(mo_asha_space(), {.seed = 8, .max_trials = 400, .objectives = 2, .constrained = true});
    const std::vector<Resource> rungs = asha.rung_resources();  // 1, 3, 9
    std::map<std::size_t, std::vector<MoPoint>> recorded;
    std::map<std::size_t, std::set<TrialId>> waiting;
    std::map<TrialId, std::size_t> rung_of;
    std::mt19937_64 rng(23);

    // ask()'s expected answer: at the highest rung whose best-placed paused trial has fewer than
    // q trials strictly before it, that trial.
    auto expected_promotion = [&]() -> std::optional<std::pair<TrialId, std::size_t>> {
        for (std::size_t k = rungs.size(); k-- > 0;) {
            const auto& rung = recorded[k];
            const std::size_t q = rung.size() / eta;
            const auto order = brute_priority(rung);
            for (std::size_t p = 0; p < order.size(); ++p)
                if (const TrialId id = rung[order[p]].id; waiting[k].count(id)) {
                    if (brute_ahead(rung, id) < q) return std::pair{id, k};
                    break;
                }
        }
        return std::nullopt;
    };

    std::vector<TrialId> running;
    std::size_t promotions = 0, completed = 0, closed = 0;
    for (;;) {
        while (running.size() < 4) {
            auto want = expected_promotion();
            Suggestion s = asha.ask();
            auto records = asha.take_decisions();
            if (want) {
                REQUIRE(s.runs());
                CHECK(s.trial == want->first);
                CHECK(s.resume_from == rungs[want->second]);
                REQUIRE(records.size() == 1);
                CHECK(records[0].kind == Kind::Promote);
                CHECK(records[0].reason.find("by Pareto priority") != std::string::npos);
                waiting[want->second].erase(s.trial);
                rung_of[s.trial] = want->second + 1;
                ++promotions;
            } else if (s.runs()) {
                CHECK(s.resume_from == 0);
                CHECK(records.empty());
                rung_of[s.trial] = 0;
            } else {
                // The end: each trial left paused gets its Stop, saying how it was ranked.
                for (const auto& r : records) {
                    CHECK(r.kind == Kind::Stop);
                    CHECK(r.reason.ends_with(") by Pareto priority before the work ran out"));
                    ++closed;
                }
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
        const std::vector<double> losses = random_losses(rng, 2);
        const bool feasible = rng() % 4 != 0;
        asha.tell(id, mo_outcome(losses, feasible, reached));
        auto records = asha.take_decisions();
        if (k < rungs.size()) {
            REQUIRE(records.size() == 1);
            CHECK(records[0].kind == Kind::Pause);
            recorded[k].push_back({id, losses, feasible});
            waiting[k].insert(id);
        } else {
            CHECK(records.empty());
            ++completed;
        }
    }
    CHECK(recorded[0].size() == 400);
    CHECK(promotions >= 400 / 3);
    CHECK(completed >= 5);
    CHECK(closed > 0);
}

TEST_CASE("MO-ASHA with one objective and a constraint: a feasible trial goes before a better infeasible one") {
    ASHA asha({.min_resource = 1, .max_resource = 9, .reduction_factor = 3, .type = HalvingType::Stop});
    asha.start(mo_asha_space(), {.seed = 1, .max_trials = 10, .objectives = 1, .constrained = true});
    for (int i = 0; i < 3; ++i) REQUIRE(asha.ask().runs());
    // Trial 0 has the best loss but breaks a constraint; trial 1 is feasible and worse.
    CHECK(asha.report(0, 1, IntermediateReport{0.1, {}, false}) == Decision::Continue);  // free pass
    CHECK(asha.report(1, 1, IntermediateReport{0.5, {}, true}) == Decision::Continue);   // free pass
    // m = 3, q = 1: the one place goes to the feasible trial 1, not to the newcomer.
    CHECK(asha.report(2, 1, IntermediateReport{0.3, {}, false}) == Decision::Stop);
    // Another feasible trial better than trial 1: m = 4, q = 1, it takes the place.
    REQUIRE(asha.ask().runs());
    CHECK(asha.report(3, 1, IntermediateReport{0.4, {}, true}) == Decision::Continue);
}

TEST_CASE("MO-ASHA refuses a report that lacks an objective, naming the scheduler and the trial") {
    ASHA asha({.min_resource = 1, .max_resource = 9, .reduction_factor = 3, .type = HalvingType::Stop});
    asha.start(mo_asha_space(), {.seed = 1, .max_trials = 10, .objectives = 2});
    REQUIRE(asha.ask().runs());
    CHECK_THROWS_WITH_AS((void)asha.report(0, 1, 0.5),
                         doctest::Contains("ASHA ranks trials on 2 objectives, but trial 0 reported a single value"),
                         InvalidArgument);
    CHECK(asha.report(0, 1, IntermediateReport{0.5, {0.5, 1.0}, true}) == Decision::Continue);
}

TEST_CASE("asynchronous Hyperband ranks its rungs by Pareto priority, synchronous Hyperband takes one objective") {
    Hyperband sync({.min_resource = 1, .max_resource = 9, .eta = 3, .mode = HyperbandMode::Synchronous});
    CHECK_FALSE(sync.supports_objectives(2));
    Hyperband async({.min_resource = 1, .max_resource = 9, .eta = 3, .type = HalvingType::Stop, .brackets = 0});
    REQUIRE(async.supports_objectives(2));
    async.start(mo_asha_space(), {.seed = 2, .max_trials = 60, .objectives = 2});
    std::size_t pareto_records = 0;
    std::mt19937_64 rng(5);
    for (int i = 0; i < 60; ++i) {
        Suggestion s = async.ask();
        REQUIRE(s.runs());
        bool stopped = false;
        Resource step = 1;
        std::vector<double> losses;
        for (; step <= 9 && !stopped; ++step) {
            losses = random_losses(rng, 2);
            stopped = async.report(s.trial, step, mo_report(losses, true)) == Decision::Stop;
        }
        Outcome o = mo_outcome(losses, true, step - 1);
        if (stopped) o.status = Outcome::Status::Stopped;
        async.tell(s.trial, o);
        for (const auto& r : async.take_decisions())
            if (r.reason.find("by Pareto priority") != std::string::npos) ++pareto_records;
    }
    CHECK(pareto_records > 20);
}
