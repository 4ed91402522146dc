// SPDX-License-Identifier: MIT
// Hyperband: the schedule, asynchronous mode (ASHA ladders per bracket) and synchronous mode (the
// paper's successive halving with barriers, pausing and resuming trials).

#include <hypertune/strategies/asha.hpp>
#include <hypertune/strategies/hyperband.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <vector>

using namespace hypertune;

namespace {

using Kind = DecisionRecord::Kind;

SearchSpace hb_space() { return SearchSpace{ContinuousParameter("x", 0.0, 1.0), IntegerParameter("depth", 1, 10)}; }

// A learning curve whose ranking changes with the resource: depth dominates early, x late.
double curve(const Config& c, Resource r) {
    double x = c.get<double>("x");
    double depth = static_cast<double>(c.get<std::int64_t>("depth"));
    return x + 0.1 * depth / static_cast<double>(r);
}

bool same_value(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }
bool same_decision(const DecisionRecord& a, const DecisionRecord& b) {
    return a.trial == b.trial && a.kind == b.kind && a.bracket == b.bracket && a.rung == b.rung &&
           a.resource == b.resource && same_value(a.loss, b.loss) && same_value(a.threshold, b.threshold) &&
           a.peers == b.peers && a.reason == b.reason;
}

struct Run {
    TrialId id;
    Config config;
    Resource budget;
    Resource resume_from;
};

struct Log {
    std::vector<Run> runs;                                // every Suggestion::run, in order
    std::vector<DecisionRecord> records;                  // every record, in order
    std::map<std::pair<TrialId, Resource>, double> told;  // (id, budget) -> loss told
    std::set<TrialId> failed;
    std::map<TrialId, Resource> stopped_at;  // the step whose report got Stop
    std::size_t waits = 0;
    bool done = false;
    std::size_t running_at_done = 0;  // trials still running when ask() first said Done
};

// Plays the tuner: holds up to `parallel` trials running and finishes a random one at a time (its
// reports, then tell()). parallel == 1 is a sequential runner. `fails(id)` makes a trial fail.
Log drive(
    Scheduler& hb, std::size_t parallel, std::uint64_t order_seed,
    const std::function<bool(TrialId)>& fails = [](TrialId) { return false; }) {
    Log log;
    std::vector<Run> running;
    std::mt19937_64 rng(order_seed);
    auto collect = [&] {
        for (auto& r : hb.take_decisions()) log.records.push_back(std::move(r));
    };
    while (true) {
        while (!log.done && running.size() < parallel) {
            Suggestion s = hb.ask();
            collect();
            if (s.kind == Suggestion::Kind::Run) {
                log.runs.push_back({s.trial, s.config, s.budget, s.resume_from});
                running.push_back(log.runs.back());
                continue;
            }
            if (s.kind == Suggestion::Kind::Wait) {
                REQUIRE_FALSE(running.empty());  // Wait with nothing running would end the tuner's run
                ++log.waits;
            } else {
                log.done = true;  // like the tuner: ask no more, finish what runs
                log.running_at_done = running.size();
            }
            break;
        }
        if (running.empty()) break;
        std::size_t pick = rng() % running.size();
        Run t = running[pick];
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(pick));
        if (fails(t.id)) {
            hb.tell(t.id, Outcome::failed(t.resume_from));
            log.failed.insert(t.id);
            collect();
            continue;
        }
        bool stopped = false;
        for (Resource step = t.resume_from + 1; step <= t.budget; ++step) {
            Decision d = hb.report(t.id, step, curve(t.config, step));
            collect();
            if (d == Decision::Stop) {
                log.stopped_at[t.id] = step;
                hb.tell(t.id, Outcome::stopped(curve(t.config, step), step));
                stopped = true;
                break;
            }
        }
        if (!stopped) {
            double loss = curve(t.config, t.budget);
            log.told[{t.id, t.budget}] = loss;
            hb.tell(t.id, Outcome::completed(loss, t.budget));
        }
        collect();
    }
    return log;
}

std::size_t count_kind(const Log& log, Kind k) {
    return static_cast<std::size_t>(
        std::count_if(log.records.begin(), log.records.end(), [&](const DecisionRecord& r) { return r.kind == k; }));
}

// Checks a synchronous run against the schedule: per bracket, the rung sizes `sizes[s][i]` (the
// schedule's n_i for full brackets), budgets, resumptions and that the promoted are the best.
void check_sync_run(const Hyperband& hb, const Log& log, const std::vector<std::vector<std::size_t>>& sizes) {
    const auto& schedule = hb.schedule();
    CHECK(log.done);
    CHECK(log.running_at_done == 0);  // synchronous: Done only once nothing is left
    std::map<TrialId, std::vector<const Run*>> by_id;
    for (const auto& r : log.runs) by_id[r.id].push_back(&r);

    // New trials: ids 0..N-1 in order, each starts at its bracket's first rung with no resume.
    std::size_t expected_new = 0;
    for (const auto& per_bracket : sizes)
        if (!per_bracket.empty()) expected_new += per_bracket[0];
    REQUIRE(by_id.size() == expected_new);
    CHECK(hb.trials_started() == expected_new);
    TrialId k = 0;
    for (const auto& [id, runs] : by_id) {
        CHECK(id == k++);
        int s = hb.bracket_of(id);
        REQUIRE(s >= 0);
        CHECK(runs[0]->resume_from == 0);
        CHECK(runs[0]->budget == schedule[static_cast<std::size_t>(s)].rungs[0].resource);
        CHECK(runs[0]->config == RandomSampler::sample(hb_space(), 17, id));
        // Resumptions: same id and configuration, the next rung's resource, resume from the last budget.
        for (std::size_t i = 1; i < runs.size(); ++i) {
            CHECK(runs[i]->config == runs[0]->config);
            CHECK(runs[i]->budget == schedule[static_cast<std::size_t>(s)].rungs[i].resource);
            CHECK(runs[i]->resume_from == runs[i - 1]->budget);
        }
    }

    for (int s = 0; s <= hb.s_max(); ++s) {
        const auto us = static_cast<std::size_t>(s);
        const auto& rungs = schedule[us].rungs;
        for (std::size_t i = 0; i < rungs.size(); ++i) {
            // Trials of bracket s run at rung i.
            std::vector<TrialId> at;
            for (const auto& [id, runs] : by_id)
                if (hb.bracket_of(id) == s && runs.size() > i) at.push_back(id);
            std::size_t expected = i < sizes[us].size() ? sizes[us][i] : 0;
            CAPTURE(s);
            CAPTURE(i);
            CHECK(at.size() == expected);
            if (i + 1 >= rungs.size() || at.empty()) continue;
            // The promoted are the best (by the loss told at rung i) of the trials that did not fail.
            std::vector<std::pair<double, TrialId>> ranked;
            for (TrialId id : at)
                if (!log.failed.count(id)) ranked.emplace_back(log.told.at({id, rungs[i].resource}), id);
            std::sort(ranked.begin(), ranked.end());
            std::set<TrialId> promoted;
            for (TrialId id : at)
                if (by_id.at(id).size() > i + 1) promoted.insert(id);
            std::size_t next = i + 1 < sizes[us].size() ? sizes[us][i + 1] : 0;
            REQUIRE(promoted.size() == next);
            for (std::size_t j = 0; j < ranked.size(); ++j)
                CHECK(promoted.count(ranked[j].second) == (j < next ? 1U : 0U));
        }
    }
}

std::vector<std::vector<std::size_t>> full_sizes(const Hyperband& hb) {
    std::vector<std::vector<std::size_t>> sizes;
    for (const auto& b : hb.schedule()) {
        sizes.emplace_back();
        for (const auto& r : b.rungs) sizes.back().push_back(r.configurations);
    }
    return sizes;
}

}  // namespace

TEST_CASE("Hyperband schedule at the largest max_resource: every rung keeps at least one configuration") {
    // (s_max + 1) * eta^s overflowed 64 bits for the largest brackets and saturated: brackets
    // s = 59..62 of (1, 2^63 - 1, 2) kept 0 configurations at their later rungs.
    for (const int eta : {2, 3, 7}) {
        CAPTURE(eta);
        Hyperband hb({.min_resource = 1, .max_resource = std::numeric_limits<Resource>::max(), .eta = eta,
                      .brackets = 0});
        for (const auto& b : hb.schedule()) {
            CAPTURE(b.s);
            REQUIRE(b.rungs.size() == static_cast<std::size_t>(b.s) + 1);
            CHECK(b.rungs.back().configurations >= 1);
            CHECK(b.rungs.back().resource == std::numeric_limits<Resource>::max());
            std::uint64_t power = 1;  // eta^i
            for (std::size_t i = 1; i < b.rungs.size(); ++i) {
                power *= static_cast<std::uint64_t>(eta);
                CHECK(b.rungs[i].configurations == b.rungs[0].configurations / power);  // n_i = floor(n / eta^i)
                CHECK(b.rungs[i].resource > b.rungs[i - 1].resource);
            }
        }
    }
}

TEST_CASE("Hyperband schedule for (1, 81, 3) is the paper's table") {
    Hyperband hb({.min_resource = 1, .max_resource = 81, .eta = 3, .type = HalvingType::Stop, .brackets = 0});
    using R = HyperbandRung;
    const std::vector<HyperbandBracket> expected = {
        {0, {R{5, 81}}},
        {1, {R{8, 27}, R{2, 81}}},
        {2, {R{15, 9}, R{5, 27}, R{1, 81}}},
        {3, {R{34, 3}, R{11, 9}, R{3, 27}, R{1, 81}}},
        {4, {R{81, 1}, R{27, 3}, R{9, 9}, R{3, 27}, R{1, 81}}},
    };
    CHECK(hb.s_max() == 4);
    CHECK(hb.schedule() == expected);
    CHECK(Hyperband().schedule() == expected);  // the defaults are AMT's
}

TEST_CASE("Hyperband schedule with a max_resource that is not a power of eta") {
    Hyperband hb({.min_resource = 1, .max_resource = 30, .type = HalvingType::Stop, .brackets = 0});
    using R = HyperbandRung;
    // s_max = 3 (27 <= 30 < 81); resources 30 / 3^(s-i) rounded: 1.11 -> 1, 3.33 -> 3, 10, 30.
    const std::vector<HyperbandBracket> expected = {
        {0, {R{4, 30}}},
        {1, {R{6, 10}, R{2, 30}}},
        {2, {R{12, 3}, R{4, 10}, R{1, 30}}},
        {3, {R{27, 1}, R{9, 3}, R{3, 10}, R{1, 30}}},
    };
    CHECK(hb.schedule() == expected);

    // The invariants over many option sets: integer s_max, increasing integer resources from at least
    // min_resource to exactly max_resource, n_i = floor(n / eta^i) >= 1.
    for (Resource min_r : {1, 2, 3, 5, 7}) {
        for (Resource max_r : {8, 10, 30, 64, 81, 100, 243, 1000, 1001}) {
            if (max_r <= min_r) continue;
            for (int eta : {2, 3, 4, 5}) {
                CAPTURE(min_r);
                CAPTURE(max_r);
                CAPTURE(eta);
                const HyperbandOptions o{.min_resource = min_r,
                                         .max_resource = max_r,
                                         .eta = eta,
                                         .type = HalvingType::Stop,
                                         .brackets = 0};
                if (min_r * eta > max_r) {  // s_max = 0: no rung below max_resource, refused
                    CHECK_THROWS_WITH_AS(Hyperband{o}, doctest::Contains("min_resource * eta must be <= max_resource"),
                                         InvalidArgument);
                    continue;
                }
                Hyperband h(o);
                int s_max = h.s_max();
                Resource p = min_r;
                for (int s = 0; s < s_max; ++s) p *= eta;
                CHECK(p <= max_r);
                CHECK(p * eta > max_r);
                REQUIRE(h.schedule().size() == static_cast<std::size_t>(s_max) + 1);
                for (int s = 0; s <= s_max; ++s) {
                    const auto& b = h.schedule()[static_cast<std::size_t>(s)];
                    CHECK(b.s == s);
                    REQUIRE(b.rungs.size() == static_cast<std::size_t>(s) + 1);
                    CHECK(b.rungs.front().resource >= min_r);
                    CHECK(b.rungs.back().resource == max_r);
                    std::size_t n = b.rungs.front().configurations;
                    double expected_n = std::ceil(static_cast<double>(s_max + 1) / (s + 1) * std::pow(eta, s) - 1e-9);
                    CHECK(static_cast<double>(n) == expected_n);
                    std::size_t divisor = 1;
                    for (std::size_t i = 0; i < b.rungs.size(); ++i) {
                        CHECK(b.rungs[i].configurations == n / divisor);
                        CHECK(b.rungs[i].configurations >= 1);
                        if (i > 0) CHECK(b.rungs[i].resource > b.rungs[i - 1].resource);
                        divisor *= static_cast<std::size_t>(eta);
                    }
                }
            }
        }
    }
}

TEST_CASE("Hyperband validates its options and names them in the message") {
    CHECK_THROWS_WITH_AS(Hyperband({.min_resource = 0}),
                         doctest::Contains("Hyperband: min_resource must be >= 1, got 0"), InvalidArgument);
    CHECK_THROWS_WITH_AS(Hyperband({.min_resource = -3}), doctest::Contains("got -3"), InvalidArgument);
    CHECK_THROWS_WITH_AS(
        Hyperband({.min_resource = 5, .max_resource = 5}),
        doctest::Contains("Hyperband: max_resource must be > min_resource, got max_resource = 5 and min_resource = 5"),
        InvalidArgument);
    CHECK_THROWS_WITH_AS(Hyperband({.eta = 1}), doctest::Contains("Hyperband: eta must be >= 2, got 1"),
                         InvalidArgument);
    CHECK_NOTHROW(Hyperband({.min_resource = 1, .max_resource = 2, .eta = 2}));
    CHECK_THROWS_AS(Hyperband().start(SearchSpace{}, {}), InvalidArgument);
    // The synchronous mode pauses and promotes at its barriers: the asynchronous rules do not apply.
    CHECK_THROWS_WITH_AS(Hyperband({.mode = HyperbandMode::Synchronous, .type = HalvingType::Stop}),
                         doctest::Contains("Hyperband: type = HalvingType::Stop is for the asynchronous mode"),
                         InvalidArgument);
    CHECK_THROWS_WITH_AS(Hyperband({.mode = HyperbandMode::Synchronous, .fill_idle_workers = true}),
                         doctest::Contains("Hyperband: fill_idle_workers is for the asynchronous mode"),
                         InvalidArgument);
}

TEST_CASE(
    "Hyperband and ASHA default to the promotion type, asynchronous Hyperband to two brackets, and the names say so") {
    CHECK(HyperbandOptions{}.type == HalvingType::Promotion);
    CHECK(AshaOptions{}.type == HalvingType::Promotion);
    CHECK(Hyperband().name() == "Hyperband-promotion-fill-brackets=2");
    CHECK(Hyperband({.brackets = 0}).name() == "Hyperband-promotion-fill");
    CHECK(Hyperband({.fill_idle_workers = false, .brackets = 0}).name() == "Hyperband-promotion");
    CHECK(Hyperband({.type = HalvingType::Stop}).name() == "Hyperband-brackets=2");
    CHECK(Hyperband({.type = HalvingType::Stop, .brackets = 0}).name() == "Hyperband");
    CHECK(Hyperband({.mode = HyperbandMode::Synchronous}).name() == "Hyperband");
    CHECK(Hyperband({.mode = HyperbandMode::Synchronous, .brackets = 2}).name() == "Hyperband-brackets=2");
    // (1, 81, 3) has five brackets: the asynchronous mode runs s = 4 and 3 unless told otherwise,
    // the synchronous mode all five; with two brackets in all, both.
    CHECK(Hyperband().brackets() == 2);
    CHECK(Hyperband().lowest_bracket() == 3);
    CHECK(Hyperband({.brackets = 0}).brackets() == 5);
    CHECK(Hyperband({.mode = HyperbandMode::Synchronous}).brackets() == 5);
    CHECK(Hyperband({.min_resource = 1, .max_resource = 3, .eta = 3}).brackets() == 2);
    CHECK(Hyperband({.min_resource = 1, .max_resource = 3, .eta = 3}).name() == "Hyperband-promotion-fill");
    // One bracket would be a single rung at max_resource: no early stopping at all, so refused.
    CHECK_THROWS_WITH_AS(Hyperband({.min_resource = 1, .max_resource = 2, .eta = 3}),
                         "Hyperband: min_resource 1 and max_resource 2 with eta 3 leave no rung below max_resource, "
                         "so every trial would run to the end (random search by another name); min_resource * eta "
                         "must be <= max_resource",
                         InvalidArgument);
    CHECK(ASHA().name() == "ASHA-promotion-fill");
    CHECK(ASHA({.type = HalvingType::Stop}).name() == "ASHA");  // no fill to refuse: unset
    CHECK(ASHA({.type = HalvingType::Stop}).name() == "ASHA");
    // wait_for_peers is a rule of the stop type: with the default it names the type to choose.
    CHECK_THROWS_WITH_AS(ASHA({.wait_for_peers = true}), doctest::Contains("wait_for_peers is a rule of the stop type"),
                         InvalidArgument);
}

TEST_CASE("Hyperband is a Strategy that explains its decisions and knows its max_resource") {
    static_assert(Strategy<Hyperband>);
    AnyStrategy any(Hyperband({.min_resource = 1, .max_resource = 30, .type = HalvingType::Stop, .brackets = 0}));
    CHECK(any.name() == "Hyperband");
    CHECK(any.max_resource() == 30);
    any.start(hb_space(), {.seed = 1, .max_trials = 2});
    auto s = any.ask();
    CHECK(s.runs());
    CHECK(s.budget == 30);
}

TEST_CASE("asynchronous Hyperband assigns brackets by smooth weighted round-robin on n(s)") {
    Hyperband hb({.type = HalvingType::Stop, .brackets = 0});  // (1, 81, 3), asynchronous
    hb.start(hb_space(), {.seed = 5, .max_trials = 0});
    std::vector<int> brackets;
    for (int k = 0; k < 286; ++k) {
        auto s = hb.ask();
        REQUIRE(s.runs());
        CHECK(s.trial == static_cast<TrialId>(k));
        CHECK(s.budget == 81);  // stop-based: every trial gets the full resource
        CHECK(s.resume_from == 0);
        CHECK(s.config == RandomSampler::sample(hb_space(), 5, s.trial));
        brackets.push_back(hb.bracket_of(s.trial));
    }
    CHECK(std::vector<int>(brackets.begin(), brackets.begin() + 9) == std::vector<int>{4, 3, 4, 2, 4, 3, 4, 4, 1});
    for (int round = 0; round < 2; ++round) {
        std::map<int, int> count;
        for (int k = round * 143; k < (round + 1) * 143; ++k) ++count[brackets[static_cast<std::size_t>(k)]];
        CHECK(count == std::map<int, int>{{0, 5}, {1, 8}, {2, 15}, {3, 34}, {4, 81}});
    }
    CHECK(hb.bracket_of(286) == -1);
    // Ties go to the larger s: (1, 2, 2) has n = 2 for both brackets.
    Hyperband tied({.min_resource = 1, .max_resource = 2, .eta = 2, .type = HalvingType::Stop, .brackets = 0});
    tied.start(hb_space(), {.seed = 5});
    std::vector<int> tied_brackets;
    for (int k = 0; k < 4; ++k) tied_brackets.push_back(tied.bracket_of(tied.ask().trial));
    CHECK(tied_brackets == std::vector<int>{1, 0, 1, 0});
    // The assignment does not depend on the seed.
    Hyperband other({.type = HalvingType::Stop, .brackets = 0});
    other.start(hb_space(), {.seed = 99, .max_trials = 0});
    for (int k = 0; k < 50; ++k) CHECK(other.bracket_of(other.ask().trial) == brackets[static_cast<std::size_t>(k)]);
}

TEST_CASE("asynchronous Hyperband judges a trial only at the rungs of its bracket") {
    Hyperband hb({.type = HalvingType::Stop, .brackets = 0});
    hb.start(hb_space(), {.seed = 5, .max_trials = 9});
    std::vector<TrialId> ids;
    for (int k = 0; k < 9; ++k) ids.push_back(hb.ask().trial);
    CHECK(hb.ask().kind == Suggestion::Kind::Done);
    // Trial 3 is in bracket 2: rungs 9 and 27.
    REQUIRE(hb.bracket_of(3) == 2);
    for (Resource step = 1; step < 9; ++step) CHECK(hb.report(3, step, 1.0) == Decision::Continue);
    CHECK(hb.take_decisions().empty());
    CHECK(hb.report(3, 9, 1.0) == Decision::Continue);
    auto at9 = hb.take_decisions();
    REQUIRE(at9.size() == 1);
    CHECK(at9[0].kind == Kind::Promote);
    CHECK(at9[0].bracket == 2);
    CHECK(at9[0].rung == 0);
    CHECK(at9[0].resource == 9);
    CHECK(at9[0].peers == 1);
    // Trial 8 is in bracket 1: its only rung is 27; bracket rungs are separate, so it is first there.
    REQUIRE(hb.bracket_of(8) == 1);
    for (Resource step = 1; step < 27; ++step) CHECK(hb.report(8, step, 5.0) == Decision::Continue);
    CHECK(hb.take_decisions().empty());
    CHECK(hb.report(8, 27, 5.0) == Decision::Continue);
    auto at27 = hb.take_decisions();
    REQUIRE(at27.size() == 1);
    CHECK(at27[0].bracket == 1);
    CHECK(at27[0].resource == 27);
    // Trial 1 (bracket 3) is not judged at resource 1; trial 0 (bracket 4) is.
    REQUIRE(hb.bracket_of(0) == 4);
    REQUIRE(hb.bracket_of(1) == 3);
    CHECK(hb.report(1, 1, 1.0) == Decision::Continue);
    CHECK(hb.take_decisions().empty());
    CHECK(hb.report(0, 1, 1.0) == Decision::Continue);
    CHECK(hb.take_decisions().at(0).resource == 1);
    // No step beyond max_resource.
    CHECK(hb.report(8, 82, 5.0) == Decision::Stop);
    auto beyond = hb.take_decisions();
    REQUIRE(beyond.size() == 1);
    CHECK(beyond[0].kind == Kind::Stop);
    CHECK(beyond[0].bracket == 1);
    CHECK(beyond[0].reason.find("exceeds max_resource 81") != std::string::npos);
}

TEST_CASE("asynchronous Hyperband stops the worse trials with thresholds and peers filled") {
    Hyperband hb({.type = HalvingType::Stop, .brackets = 0});
    auto log = [&] {
        hb.start(hb_space(), {.seed = 17, .max_trials = 600});
        return drive(hb, 4, 3);
    }();
    CHECK(log.done);
    CHECK(log.runs.size() == 600);  // no resumptions in asynchronous mode
    std::size_t stops = 0, promotes = 0;
    for (const auto& r : log.records) {
        CAPTURE(r.reason);
        CHECK(r.bracket == hb.bracket_of(r.trial));
        const auto& rungs = hb.schedule()[static_cast<std::size_t>(r.bracket)].rungs;
        REQUIRE(r.rung >= 0);
        REQUIRE(static_cast<std::size_t>(r.rung) + 1 < rungs.size());
        CHECK(r.resource == rungs[static_cast<std::size_t>(r.rung)].resource);
        CHECK(r.peers >= 1);
        CHECK_FALSE(r.reason.empty());
        if (r.kind == Kind::Stop) {
            ++stops;
            CHECK(r.peers >= 3);
            CHECK(r.loss > r.threshold);
        } else {
            REQUIRE(r.kind == Kind::Promote);
            ++promotes;
            if (r.peers >= 3)
                CHECK(r.loss <= r.threshold);
            else
                CHECK(std::isnan(r.threshold));
        }
    }
    CHECK(stops > 300);
    CHECK(promotes > 100);
    // Every Stop record is the report that got Stop (trials report every step), and nothing else stopped.
    std::map<TrialId, Resource> stop_records;
    for (const auto& r : log.records)
        if (r.kind == Kind::Stop) stop_records[r.trial] = r.resource;
    CHECK(stop_records == log.stopped_at);
    for (const auto& [id, resource] : stop_records) CHECK(log.told.count({id, 81}) == 0);
}

TEST_CASE("asynchronous Hyperband is deterministic for a seed and call order") {
    auto run = [](std::uint64_t seed) {
        Hyperband hb({.min_resource = 1, .max_resource = 27, .type = HalvingType::Stop, .brackets = 0});
        hb.start(hb_space(), {.seed = seed, .max_trials = 200});
        return drive(hb, 3, 8);
    };
    auto a = run(17), b = run(17);
    REQUIRE(a.records.size() == b.records.size());
    for (std::size_t i = 0; i < a.records.size(); ++i) CHECK(same_decision(a.records[i], b.records[i]));
}

TEST_CASE("synchronous Hyperband pauses at the barrier, then promotes the best and stops the rest") {
    // (1, 9, 3): bracket 2 = (9, 1) (3, 3) (1, 9); bracket 1 = (5, 3) (1, 9); bracket 0 = (3, 9).
    Hyperband hb({.min_resource = 1, .max_resource = 9, .eta = 3, .mode = HyperbandMode::Synchronous});
    hb.start(hb_space(), {.seed = 2, .max_trials = 9});
    std::vector<Config> configs;
    for (TrialId k = 0; k < 9; ++k) {
        auto s = hb.ask();
        REQUIRE(s.runs());
        CHECK(s.trial == k);
        CHECK(s.budget == 1);
        CHECK(s.resume_from == 0);
        CHECK(hb.bracket_of(k) == 2);
        configs.push_back(s.config);
    }
    CHECK(hb.ask().kind == Suggestion::Kind::Wait);  // max_trials reached, trials running
    CHECK(hb.take_decisions().empty());

    const std::vector<double> loss = {0.9, 0.1, 0.8, 0.3, 0.7, 0.6, 0.2, 0.5, 0.4};  // best: 1, 6, 3
    // A trial reporting past its rung's budget is stopped there (its tell still counts).
    CHECK(hb.report(0, 1, loss[0]) == Decision::Continue);
    CHECK(hb.report(0, 2, loss[0]) == Decision::Stop);
    CHECK(hb.take_decisions().empty());
    hb.tell(0, Outcome::stopped(loss[0], 2));
    for (TrialId k = 1; k < 8; ++k) hb.tell(k, Outcome::completed(loss[k], 1));
    auto paused = hb.take_decisions();
    REQUIRE(paused.size() == 8);
    for (TrialId k = 0; k < 8; ++k) {
        CHECK(paused[k].trial == k);
        CHECK(paused[k].kind == Kind::Pause);
        CHECK(paused[k].bracket == 2);
        CHECK(paused[k].rung == 0);
        CHECK(paused[k].resource == 1);
        CHECK(paused[k].loss == loss[k]);
    }
    CHECK(paused[7].reason.find("waits for 1 more of 9") != std::string::npos);
    CHECK(hb.ask().kind == Suggestion::Kind::Wait);  // trial 8 still running

    hb.tell(8, Outcome::completed(loss[8], 1));
    auto barrier = hb.take_decisions();
    REQUIRE(barrier.size() == 7);  // the Pause of trial 8, then 6 Stops
    CHECK(barrier[0].kind == Kind::Pause);
    std::set<TrialId> stopped;
    for (std::size_t i = 1; i < barrier.size(); ++i) {
        CHECK(barrier[i].kind == Kind::Stop);
        CHECK(barrier[i].threshold == 0.3);  // the worst promoted loss
        CHECK(barrier[i].peers == 9);        // the rung size
        CHECK(barrier[i].loss > 0.3);
        stopped.insert(barrier[i].trial);
    }
    CHECK(stopped == std::set<TrialId>{0, 2, 4, 5, 7, 8});

    // Promotions come best first, each with a Promote record.
    for (TrialId expected : {1, 6, 3}) {
        auto s = hb.ask();
        REQUIRE(s.runs());
        CHECK(s.trial == expected);
        CHECK(s.config == configs[expected]);
        CHECK(s.budget == 3);
        CHECK(s.resume_from == 1);
        auto rec = hb.take_decisions();
        REQUIRE(rec.size() == 1);
        CHECK(rec[0].kind == Kind::Promote);
        CHECK(rec[0].trial == expected);
        CHECK(rec[0].rung == 0);
        CHECK(rec[0].resource == 1);
        CHECK(rec[0].loss == loss[expected]);
        CHECK(rec[0].threshold == 0.3);
        CHECK(rec[0].peers == 9);
    }
    CHECK(hb.ask().kind == Suggestion::Kind::Wait);
    // Rung 1: trial 6 fails, 3 beats 1; only 3 goes on to the last rung.
    hb.tell(6, Outcome::failed(2));
    hb.tell(1, Outcome::completed(0.25, 3));
    hb.tell(3, Outcome::completed(0.15, 3));
    auto rung1 = hb.take_decisions();
    std::vector<std::tuple<TrialId, Kind>> kinds;
    for (const auto& r : rung1) kinds.emplace_back(r.trial, r.kind);
    CHECK(kinds == std::vector<std::tuple<TrialId, Kind>>{{1, Kind::Pause}, {3, Kind::Pause}, {1, Kind::Stop}});
    CHECK(rung1.back().threshold == 0.15);
    CHECK(rung1.back().peers == 3);
    auto last = hb.ask();
    REQUIRE(last.runs());
    CHECK(last.trial == 3);
    CHECK(last.budget == 9);
    CHECK(last.resume_from == 3);
    CHECK(hb.ask().kind == Suggestion::Kind::Wait);
    // At the last rung a step beyond max_resource is refused with a record.
    CHECK(hb.report(3, 4, 0.1) == Decision::Continue);
    CHECK(hb.report(3, 10, 0.1) == Decision::Stop);
    auto beyond = hb.take_decisions();
    REQUIRE(beyond.size() == 2);  // the Promote of trial 3, then the Stop
    CHECK(beyond[1].kind == Kind::Stop);
    CHECK(beyond[1].reason.find("exceeds max_resource 9") != std::string::npos);
    hb.tell(3, Outcome::stopped(0.1, 10));
    CHECK(hb.take_decisions().empty());  // the last rung: no pause
    CHECK(hb.ask().kind == Suggestion::Kind::Done);
    CHECK(hb.ask().kind == Suggestion::Kind::Done);
    CHECK(hb.trials_started() == 9);
}

TEST_CASE("synchronous Hyperband promotes only survivors, breaks ties by trial id, and ends brackets cleanly") {
    const HyperbandOptions small{.min_resource = 1, .max_resource = 9, .eta = 3, .mode = HyperbandMode::Synchronous};
    auto start_rung0 = [&](Hyperband& hb) {
        hb.start(hb_space(), {.seed = 2, .max_trials = 9});
        for (int k = 0; k < 9; ++k) REQUIRE(hb.ask().runs());
    };
    SUBCASE("eight of nine fail: the one survivor goes all the way") {
        Hyperband hb(small);
        start_rung0(hb);
        for (TrialId k = 0; k < 8; ++k) hb.tell(k, Outcome::failed(0));
        CHECK(hb.take_decisions().empty());  // failed trials are not paused
        hb.tell(8, Outcome::completed(1.0, 1));
        auto s = hb.ask();
        REQUIRE(s.runs());
        CHECK(s.trial == 8);
        CHECK(s.budget == 3);
        CHECK(hb.ask().kind == Suggestion::Kind::Wait);
        hb.tell(8, Outcome::completed(0.5, 3));
        s = hb.ask();
        REQUIRE(s.runs());
        CHECK(s.trial == 8);
        CHECK(s.budget == 9);
        CHECK(s.resume_from == 3);
        hb.tell(8, Outcome::completed(0.2, 9));
        CHECK(hb.ask().kind == Suggestion::Kind::Done);
    }
    SUBCASE("all fail: the bracket ends without promotions") {
        Hyperband hb(small);
        start_rung0(hb);
        for (TrialId k = 0; k < 9; ++k) hb.tell(k, Outcome::failed(0));
        CHECK(hb.take_decisions().empty());
        CHECK(hb.ask().kind == Suggestion::Kind::Done);
    }
    SUBCASE("equal losses: the smaller ids are promoted") {
        Hyperband hb(small);
        start_rung0(hb);
        for (TrialId k = 9; k-- > 0;) hb.tell(k, Outcome::completed(1.0, 1));  // told in reverse order
        for (TrialId expected : {0, 1, 2}) CHECK(hb.ask().trial == expected);
    }
}

TEST_CASE("synchronous Hyperband never runs a trial trained to max_resource again, and ranks its loss at later rungs") {
    // An objective that cannot see its budget trains in full: the tuner tells its outcome at
    // max_resource. Such a trial is over (no Pause), yet its loss still ranks at its bracket's rungs.
    // (1, 9, 3): bracket 2 = (9, 1) (3, 3) (1, 9).
    Hyperband hb({.min_resource = 1, .max_resource = 9, .eta = 3, .mode = HyperbandMode::Synchronous});
    hb.start(hb_space(), {.seed = 2, .max_trials = 9});
    for (TrialId k = 0; k < 9; ++k) REQUIRE(hb.ask().runs());
    SUBCASE("every trial trained in full: the bracket ends at its first barrier, with no record") {
        for (TrialId k = 0; k < 9; ++k) hb.tell(k, Outcome::completed(1.0 - 0.1 * static_cast<double>(k), 9));
        CHECK(hb.take_decisions().empty());
        CHECK(hb.ask().kind == Suggestion::Kind::Done);
    }
    SUBCASE("mixed: the full trial holds its rank, the others are promoted around it and run") {
        // Trial 4 trained in full (loss 0.2); 1 and 6 are next best at resource 1.
        const std::vector<double> loss = {0.9, 0.3, 0.8, 0.6, 0.2, 0.7, 0.4, 0.5, 0.95};
        for (TrialId k = 0; k < 9; ++k) hb.tell(k, Outcome::completed(loss[k], k == 4 ? 9 : 1));
        auto barrier = hb.take_decisions();
        std::set<TrialId> paused, stopped;
        for (const auto& d : barrier) (d.kind == Kind::Pause ? paused : stopped).insert(d.trial);
        CHECK(paused == std::set<TrialId>{0, 1, 2, 3, 5, 6, 7, 8});  // not 4: it is over
        CHECK(stopped == std::set<TrialId>{0, 2, 3, 5, 7, 8});
        std::vector<TrialId> resumed;
        for (int i = 0; i < 2; ++i) {
            auto s = hb.ask();
            REQUIRE(s.runs());
            CHECK(s.budget == 3);
            resumed.push_back(s.trial);
        }
        CHECK(resumed == std::vector<TrialId>{1, 6});  // trial 4 holds the third place without running
        CHECK(hb.ask().kind == Suggestion::Kind::Wait);
        hb.tell(1, Outcome::completed(0.25, 3));
        hb.tell(6, Outcome::completed(0.1, 3));  // beats trial 4's 0.2
        auto s = hb.ask();
        REQUIRE(s.runs());
        CHECK(s.trial == 6);
        CHECK(s.budget == 9);
        hb.tell(6, Outcome::completed(0.05, 9));
        CHECK(hb.ask().kind == Suggestion::Kind::Done);
    }
}

TEST_CASE("synchronous Hyperband starts the next bracket instead of idling at a barrier") {
    Hyperband hb({.min_resource = 1, .max_resource = 9, .eta = 3, .mode = HyperbandMode::Synchronous});
    hb.start(hb_space(), {.seed = 2, .max_trials = 0});
    for (int k = 0; k < 9; ++k) REQUIRE(hb.ask().runs());
    auto s = hb.ask();  // bracket 2 waits at its first barrier: bracket 1 starts
    REQUIRE(s.runs());
    CHECK(s.trial == 9);
    CHECK(hb.bracket_of(9) == 1);
    CHECK(s.budget == 3);
    // Bracket 2's promotions have priority over new trials of bracket 1 once its barrier is passed.
    for (TrialId k = 0; k < 9; ++k) hb.tell(k, Outcome::completed(static_cast<double>(k), 1));
    auto next = hb.ask();
    REQUIRE(next.runs());
    CHECK(next.trial == 0);
    CHECK(next.resume_from == 1);
}

namespace {

std::set<std::tuple<TrialId, Resource, Resource>> suggestion_set(const Log& log) {
    std::set<std::tuple<TrialId, Resource, Resource>> out;
    for (const auto& r : log.runs) out.emplace(r.id, r.budget, r.resume_from);
    return out;
}

const HyperbandOptions sync_options{
    .min_resource = 1, .max_resource = 81, .eta = 3, .mode = HyperbandMode::Synchronous};

// Starts `hb` without a budget of trials and completes every suggestion at once, in order, until
// `trials` new trials have started.
void complete_in_order(Hyperband& hb, std::uint64_t seed, std::size_t trials) {
    hb.start(hb_space(), {.seed = seed, .max_trials = 0});
    while (hb.trials_started() < trials) {
        auto s = hb.ask();
        REQUIRE(s.runs());
        hb.tell(s.trial, Outcome::completed(curve(s.config, s.budget), s.budget));
    }
}

}  // namespace

TEST_CASE("synchronous Hyperband follows the schedule exactly, sequentially and in parallel") {
    Hyperband seq(sync_options);
    seq.start(hb_space(), {.seed = 17, .max_trials = 143});  // exactly one Hyperband iteration
    Log a = drive(seq, 1, 0);
    CHECK(a.done);
    CHECK(a.waits == 0);  // one worker never waits: each barrier is passed by its last tell()
    check_sync_run(seq, a, full_sizes(seq));
    // Brackets run s = 4..0 and take consecutive ids.
    CHECK(seq.bracket_of(0) == 4);
    CHECK(seq.bracket_of(80) == 4);
    CHECK(seq.bracket_of(81) == 3);
    CHECK(seq.bracket_of(114) == 3);
    CHECK(seq.bracket_of(115) == 2);
    CHECK(seq.bracket_of(130) == 1);
    CHECK(seq.bracket_of(138) == 0);
    CHECK(seq.bracket_of(142) == 0);
    CHECK(seq.ask().kind == Suggestion::Kind::Done);

    std::size_t pauses = 0, promotes = 0, stops = 0;
    for (const auto& b : seq.schedule())
        for (std::size_t i = 0; i + 1 < b.rungs.size(); ++i) {
            pauses += b.rungs[i].configurations;
            promotes += b.rungs[i + 1].configurations;
            stops += b.rungs[i].configurations - b.rungs[i + 1].configurations;
        }
    CHECK(count_kind(a, Kind::Pause) == pauses);
    CHECK(count_kind(a, Kind::Promote) == promotes);
    CHECK(count_kind(a, Kind::Stop) == stops);
    for (const auto& r : a.records) {
        CHECK(r.bracket == seq.bracket_of(r.trial));
        if (r.kind != Kind::Pause) CHECK(r.peers >= 1);
        if (r.kind == Kind::Stop) CHECK(r.loss >= r.threshold);
        if (r.kind == Kind::Promote) CHECK(r.loss <= r.threshold);
    }

    for (std::size_t parallel : {4U, 16U}) {
        for (std::uint64_t order : {1U, 2U}) {
            CAPTURE(parallel);
            CAPTURE(order);
            Hyperband par(sync_options);
            par.start(hb_space(), {.seed = 17, .max_trials = 143});
            Log b = drive(par, parallel, order);
            CHECK(b.done);
            check_sync_run(par, b, full_sizes(par));
            // Whatever the parallelism and the order trials finish in: the same trials, configurations,
            // brackets, promotions and budgets.
            CHECK(suggestion_set(b) == suggestion_set(a));
            for (TrialId id = 0; id < 143; ++id) CHECK(par.bracket_of(id) == seq.bracket_of(id));
            if (parallel == 16) {
                // Bracket 3 starts while bracket 4 waits at a barrier.
                auto first3 =
                    std::find_if(b.runs.begin(), b.runs.end(), [&](const Run& r) { return par.bracket_of(r.id) == 3; });
                auto last4 = std::find_if(b.runs.rbegin(), b.runs.rend(),
                                          [&](const Run& r) { return par.bracket_of(r.id) == 4; });
                CHECK(first3 - b.runs.begin() < b.runs.rend() - last4 - 1);
            }
        }
    }
}

TEST_CASE("synchronous Hyperband truncates the last bracket when max_trials runs out") {
    SUBCASE("30 trials: part of bracket 4 only") {
        Hyperband hb(sync_options);
        hb.start(hb_space(), {.seed = 17, .max_trials = 30});
        Log log = drive(hb, 4, 7);
        CHECK(log.done);
        check_sync_run(hb, log, {{}, {}, {}, {}, {30, 10, 3, 1, 1}});
    }
    SUBCASE("100 trials: bracket 4, then 19 of bracket 3") {
        Hyperband hb(sync_options);
        hb.start(hb_space(), {.seed = 17, .max_trials = 100});
        Log log = drive(hb, 3, 7);
        CHECK(log.done);
        check_sync_run(hb, log, {{}, {}, {}, {19, 6, 2, 1}, {81, 27, 9, 3, 1}});
    }
    SUBCASE("1 trial") {
        Hyperband hb(sync_options);
        hb.start(hb_space(), {.seed = 17, .max_trials = 1});
        Log log = drive(hb, 2, 7);
        CHECK(log.done);
        check_sync_run(hb, log, {{}, {}, {}, {}, {1, 1, 1, 1, 1}});
    }
}

TEST_CASE("synchronous Hyperband ranks failed trials last and never promotes them") {
    Hyperband hb(sync_options);
    hb.start(hb_space(), {.seed = 17, .max_trials = 143});
    auto fails = [](TrialId id) { return id % 7 == 3; };
    Log log = drive(hb, 5, 11, fails);
    CHECK(log.done);
    // Expected rung sizes: failed trials fail at rung 0, so rung 1 keeps min(n_1, survivors).
    std::vector<std::vector<std::size_t>> sizes;
    for (const auto& b : hb.schedule()) {
        std::size_t failed = 0;
        for (TrialId id = 0; id < 143; ++id)
            if (hb.bracket_of(id) == b.s && fails(id)) ++failed;
        sizes.emplace_back();
        std::size_t alive = b.rungs[0].configurations - failed;
        sizes.back().push_back(b.rungs[0].configurations);
        for (std::size_t i = 1; i < b.rungs.size(); ++i)
            sizes.back().push_back(std::min(b.rungs[i].configurations, i == 1 ? alive : b.rungs[i].configurations));
    }
    check_sync_run(hb, log, sizes);
    for (const auto& r : log.runs)
        if (fails(r.id)) CHECK(r.resume_from == 0);
    // A failed trial gets neither pause, stop nor promotion.
    CHECK(std::none_of(log.records.begin(), log.records.end(), [&](const auto& r) { return fails(r.trial); }));
    CHECK(log.failed.size() == 20);  // ids 3, 10, ..., 136
}

TEST_CASE("synchronous Hyperband is deterministic for a seed and call order") {
    auto run = [](std::uint64_t seed) {
        Hyperband hb(sync_options);
        hb.start(hb_space(), {.seed = seed, .max_trials = 143});
        return drive(hb, 4, 21);
    };
    Log a = run(17), b = run(17);
    REQUIRE(a.records.size() == b.records.size());
    for (std::size_t i = 0; i < a.records.size(); ++i) CHECK(same_decision(a.records[i], b.records[i]));
    REQUIRE(a.runs.size() == b.runs.size());
    for (std::size_t i = 0; i < a.runs.size(); ++i) {
        CHECK(a.runs[i].id == b.runs[i].id);
        CHECK(a.runs[i].config == b.runs[i].config);
        CHECK(a.runs[i].budget == b.runs[i].budget);
    }
    Log c = run(18);
    CHECK_FALSE(c.runs[0].config == a.runs[0].config);
}

TEST_CASE("synchronous Hyperband without max_trials repeats its iterations") {
    Hyperband hb(sync_options);
    complete_in_order(hb, 3, 300);
    CHECK(hb.bracket_of(142) == 0);
    CHECK(hb.bracket_of(143) == 4);
    CHECK(hb.bracket_of(223) == 4);
    CHECK(hb.bracket_of(224) == 3);
}

TEST_CASE("asynchronous Hyperband, promotion type: each bracket's trials start at its first rung and wait there") {
    // The default type, so the synchronous mode takes it too (it always pauses and promotes).
    CHECK_NOTHROW(Hyperband({.mode = HyperbandMode::Synchronous, .type = HalvingType::Promotion}));
    Hyperband hb({.min_resource = 1, .max_resource = 9, .eta = 3, .type = HalvingType::Promotion,
                  .fill_idle_workers = false, .brackets = 0});
    CHECK(hb.name() == "Hyperband-promotion");
    hb.start(hb_space(), {.seed = 5, .max_trials = 40});
    // Brackets by the same round-robin as the stop type; budgets are the brackets' first rungs:
    // s = 2 -> 1, s = 1 -> 3, s = 0 -> 9 (no rung: it runs to max_resource at once).
    std::map<int, std::vector<TrialId>> by_bracket;
    for (int k = 0; k < 12; ++k) {
        Suggestion s = hb.ask();
        REQUIRE(s.runs());
        const int b = hb.bracket_of(s.trial);
        CHECK(s.budget == std::vector<Resource>{9, 3, 1}[static_cast<std::size_t>(b)]);
        by_bracket[b].push_back(s.trial);
    }
    REQUIRE(by_bracket[2].size() >= 3);
    // Three trials of bracket 2 end their first rung: the best is promoted to 3, from 1.
    const std::vector<TrialId> firsts(by_bracket[2].begin(), by_bracket[2].begin() + 3);
    const double losses[] = {0.7, 0.4, 0.6};
    for (std::size_t i = 0; i < 3; ++i) hb.tell(firsts[i], Outcome::completed(losses[i], 1));
    auto paused = hb.take_decisions();
    REQUIRE(paused.size() == 3);
    for (const auto& d : paused) {
        CHECK(d.kind == Kind::Pause);
        CHECK(d.bracket == 2);
    }
    Suggestion p = hb.ask();
    REQUIRE(p.runs());
    CHECK(p.trial == firsts[1]);
    CHECK(p.resume_from == 1);
    CHECK(p.budget == 3);
    auto promoted = hb.take_decisions();
    REQUIRE(promoted.size() == 1);
    CHECK(promoted[0].kind == Kind::Promote);
    CHECK(promoted[0].bracket == 2);
    // A bracket-0 trial completes at max_resource: it is over, nothing pauses.
    hb.tell(by_bracket[0].front(), Outcome::completed(0.5, 9));
    CHECK(hb.take_decisions().empty());
}

TEST_CASE("Hyperband with brackets = k runs only the k most aggressive brackets, in either mode") {
    CHECK_THROWS_WITH_AS(Hyperband({.min_resource = 1, .max_resource = 30, .type = HalvingType::Stop, .brackets = 5}),
                         doctest::Contains("Hyperband: brackets = 5, but min_resource 1, max_resource 30 and eta 3 "
                                           "give 4 brackets (s = 0..3); use 1..4, or 0 for all"),
                         InvalidArgument);
    CHECK_THROWS_WITH_AS(Hyperband({.type = HalvingType::Stop, .brackets = -1}),
                         doctest::Contains("Hyperband: brackets = -1"), InvalidArgument);
    CHECK(Hyperband({.type = HalvingType::Stop, .brackets = 5}).name() ==
          "Hyperband");  // all five of (1, 81, 3), as 0 says
    CHECK(Hyperband({.type = HalvingType::Stop, .brackets = 5}).lowest_bracket() == 0);

    SUBCASE("asynchronous: the round-robin weighs the brackets that run, n(4) = 81 and n(3) = 34") {
        Hyperband hb({.type = HalvingType::Promotion, .brackets = 2});
        CHECK(hb.name() == "Hyperband-promotion-fill-brackets=2");
        CHECK(hb.lowest_bracket() == 3);
        hb.start(hb_space(), {.seed = 5, .max_trials = 0});
        std::map<int, int> count;
        for (int k = 0; k < 230; ++k) {
            auto s = hb.ask();
            REQUIRE(s.runs());
            const int b = hb.bracket_of(s.trial);
            ++count[b];
            CHECK(s.budget == hb.schedule()[static_cast<std::size_t>(b)].rungs[0].resource);  // 1 or 3
        }
        CHECK(count == std::map<int, int>{{3, 68}, {4, 162}});
    }
    SUBCASE("synchronous: the iterations go s = 4, 3, 4, 3, ... and follow the schedule") {
        HyperbandOptions o = sync_options;
        o.brackets = 2;
        Hyperband seq(o);
        CHECK(seq.name() == "Hyperband-brackets=2");
        seq.start(hb_space(), {.seed = 17, .max_trials = 115});  // brackets 4 and 3, once each
        Log a = drive(seq, 4, 1);
        auto sizes = full_sizes(seq);
        for (std::size_t s = 0; s < 3; ++s) sizes[s].clear();
        check_sync_run(seq, a, sizes);
        CHECK(seq.bracket_of(80) == 4);
        CHECK(seq.bracket_of(81) == 3);
        CHECK(seq.bracket_of(114) == 3);

        Hyperband again(o);
        complete_in_order(again, 3, 240);
        CHECK(again.bracket_of(115) == 4);
        CHECK(again.bracket_of(195) == 4);
        CHECK(again.bracket_of(196) == 3);
        CHECK(again.bracket_of(230) == 4);
    }
    SUBCASE("brackets = 1 decides as ASHA on the same rungs") {
        // Bracket 4 of (1, 81, 3) has rungs 1, 3, 9, 27: ASHA's for 1..81 with factor 3.
        Hyperband hb({.type = HalvingType::Stop, .brackets = 1});
        ASHA asha({.min_resource = 1, .max_resource = 81, .reduction_factor = 3, .type = HalvingType::Stop});
        hb.start(hb_space(), {.seed = 11, .max_trials = 60});
        asha.start(hb_space(), {.seed = 11, .max_trials = 60});
        const auto from_hb = drive(hb, 1, 0).records;
        const auto from_asha = drive(asha, 1, 0).records;
        REQUIRE(from_hb.size() == from_asha.size());
        CHECK(from_hb.size() > 60);  // a record per trial and rung it reached
        std::size_t stops = 0;
        for (std::size_t i = 0; i < from_hb.size(); ++i) {
            CAPTURE(i);
            CHECK(from_hb[i].bracket == 4);
            DecisionRecord relabelled = from_hb[i];
            relabelled.bracket = from_asha[i].bracket;
            CHECK(same_decision(relabelled, from_asha[i]));
            stops += from_hb[i].kind == Kind::Stop;
        }
        CHECK(stops >= 30);
    }
}
