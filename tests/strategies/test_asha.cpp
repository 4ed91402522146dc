// SPDX-License-Identifier: MIT
// ASHA and the rung bookkeeping it shares with asynchronous Hyperband (detail/rungs.hpp).

#include <hypertune/detail/live_trials.hpp>
#include <hypertune/detail/split_heap.hpp>
#include <hypertune/strategies/asha.hpp>
#include <hypertune/strategies/hyperband.hpp>
#include <hypertune/strategies/median_stopping.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

using namespace hypertune;

namespace {

SearchSpace asha_space() { return SearchSpace{ContinuousParameter("x", 0.0, 1.0), IntegerParameter("depth", 1, 10)}; }

using Kind = DecisionRecord::Kind;

// Reports `loss` for `id` at `step` and returns the decision with the records it produced.
struct Step {
    Decision decision;
    std::vector<DecisionRecord> records;
};
Step report(ASHA& asha, TrialId id, Resource step, double loss) {
    Decision d = asha.report(id, step, loss);
    return {d, asha.take_decisions()};
}

bool same_double(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }
bool same_record(const DecisionRecord& a, const DecisionRecord& b) {
    return a.trial == b.trial && a.kind == b.kind && a.bracket == b.bracket && a.rung == b.rung &&
           a.resource == b.resource && same_double(a.loss, b.loss) && same_double(a.threshold, b.threshold) &&
           a.peers == b.peers && a.reason == b.reason;
}

}  // namespace

TEST_CASE("ASHA validates its options and names them in the message") {
    CHECK_THROWS_WITH_AS(ASHA({.min_resource = 0}), doctest::Contains("ASHA: min_resource must be >= 1, got 0"),
                         InvalidArgument);
    CHECK_THROWS_WITH_AS(ASHA({.min_resource = 9, .max_resource = 9}),
                         doctest::Contains("ASHA: max_resource must be > min_resource, got max_resource = 9"),
                         InvalidArgument);
    CHECK_THROWS_WITH_AS(ASHA({.min_resource = 10, .max_resource = 3}), doctest::Contains("min_resource = 10"),
                         InvalidArgument);
    CHECK_THROWS_WITH_AS(ASHA({.reduction_factor = 1}), doctest::Contains("ASHA: reduction_factor must be >= 2, got 1"),
                         InvalidArgument);
    CHECK_NOTHROW(ASHA({.min_resource = 1, .max_resource = 2, .reduction_factor = 2}));
}

TEST_CASE("ASHA rung levels are min_resource * factor^k up to max_resource / factor") {
    CHECK(ASHA().rung_resources() == std::vector<Resource>{1, 3, 9, 27});  // 27 * 3 = 81: kept
    CHECK(ASHA({.min_resource = 1, .max_resource = 27}).rung_resources() == std::vector<Resource>{1, 3, 9});
    // 27 of 30 would judge trials on their last three units' noise: no rung within a factor of the end.
    CHECK(ASHA({.min_resource = 1, .max_resource = 30, .type = HalvingType::Stop}).rung_resources() ==
          std::vector<Resource>{1, 3, 9});
    CHECK(ASHA({.min_resource = 1, .max_resource = 30}).rung_resources() == std::vector<Resource>{1, 3, 9});
    CHECK(ASHA({.min_resource = 2, .max_resource = 100, .reduction_factor = 4, .type = HalvingType::Stop})
              .rung_resources() == std::vector<Resource>{2, 8});  // 32 * 4 > 100
    CHECK(ASHA({.min_resource = 2, .max_resource = 128, .reduction_factor = 4}).rung_resources() ==
          std::vector<Resource>{2, 8, 32});
    // The grace period is a rung however close it is to max_resource.
    CHECK(ASHA({.min_resource = 5, .max_resource = 6, .type = HalvingType::Stop}).rung_resources() ==
          std::vector<Resource>{5});
    CHECK(ASHA({.min_resource = 1, .max_resource = 2, .reduction_factor = 2}).rung_resources() ==
          std::vector<Resource>{1});
    // No overflow near the top of the range.
    auto big = ASHA({.min_resource = 1,
                     .max_resource = std::int64_t{1} << 62,
                     .reduction_factor = 2,
                     .type = HalvingType::Stop})
                   .rung_resources();
    CHECK(big.size() == 62);
    CHECK(big.back() == std::int64_t{1} << 61);
    ASHA a({.type = HalvingType::Stop});
    CHECK(a.name() == "ASHA");
    CHECK(a.max_resource() == 81);
}

TEST_CASE("ASHA stops exactly the trials outside the top 1/eta of each rung") {
    ASHA asha(
        {.min_resource = 1, .max_resource = 9, .reduction_factor = 3, .type = HalvingType::Stop});  // rungs 1 and 3
    asha.start(asha_space(), {.seed = 7, .max_trials = 0});
    for (TrialId k = 0; k < 9; ++k) {
        auto s = asha.ask();
        REQUIRE(s.runs());
        CHECK(s.trial == k);
        CHECK(s.budget == 9);
        CHECK(s.resume_from == 0);
    }

    // Rung 0 (resource 1). With m losses recorded, q = floor(m / 3) may continue; the first two always do.
    struct Expect {
        TrialId id;
        double loss;
        Decision decision;
        double threshold;  // NaN: no cut-off yet
    };
    const double none = std::numeric_limits<double>::quiet_NaN();
    const std::vector<Expect> rung0 = {
        {0, 5.0, Decision::Continue, none},  // m=1
        {1, 4.0, Decision::Continue, none},  // m=2
        {2, 6.0, Decision::Stop, 4.0},       // m=3, q=1: {4,5,6}, must be <= 4
        {3, 1.0, Decision::Continue, 1.0},   // m=4, q=1
        {4, 3.0, Decision::Stop, 1.0},       // m=5, q=1
        {5, 2.0, Decision::Continue, 2.0},   // m=6, q=2: {1,2,...}
        {6, 2.0, Decision::Continue, 2.0},   // m=7, q=2: {1,2,2,...}: a tie goes to the trial
        {7, 2.5, Decision::Stop, 2.0},       // m=8, q=2
        {8, 1.5, Decision::Continue, 2.0},   // m=9, q=3: the 3rd smallest of {1,1.5,2,2,2.5,3,4,5,6}
    };
    for (std::size_t i = 0; i < rung0.size(); ++i) {
        const auto& e = rung0[i];
        CAPTURE(e.id);
        auto r = report(asha, e.id, 1, e.loss);
        CHECK(r.decision == e.decision);
        REQUIRE(r.records.size() == 1);
        const auto& rec = r.records[0];
        CHECK(rec.trial == e.id);
        CHECK(rec.kind == (e.decision == Decision::Stop ? Kind::Stop : Kind::Promote));
        CHECK(rec.bracket == -1);
        CHECK(rec.rung == 0);
        CHECK(rec.resource == 1);
        CHECK(rec.loss == e.loss);
        CHECK(rec.peers == i + 1);
        CHECK(same_double(rec.threshold, e.threshold));
        CHECK_FALSE(rec.reason.empty());
    }

    // A stopped trial stays stopped, without new records.
    CHECK(report(asha, 2, 2, 0.0).decision == Decision::Stop);
    CHECK(asha.take_decisions().empty());

    // Before rung 1 (resource 3): no decision, nothing promoted.
    for (TrialId id : {0, 1, 3, 5, 6, 8}) {
        auto r = report(asha, id, 2, 0.1);
        CHECK(r.decision == Decision::Continue);
        CHECK(r.records.empty());
    }
    // Rung 1: 3 continues (m=1), 5 continues (m=2), 0 is stopped (m=3, cut-off 0.5), 1 continues (0.4 is best).
    auto r3 = report(asha, 3, 3, 0.5);
    auto r5 = report(asha, 5, 3, 0.7);
    auto r0 = report(asha, 0, 3, 0.9);
    auto r1 = report(asha, 1, 3, 0.4);
    CHECK(r3.decision == Decision::Continue);
    CHECK(r5.decision == Decision::Continue);
    CHECK(r0.decision == Decision::Stop);
    CHECK(r1.decision == Decision::Continue);
    REQUIRE(r0.records.size() == 1);
    CHECK(r0.records[0].rung == 1);
    CHECK(r0.records[0].resource == 3);
    CHECK(r0.records[0].threshold == 0.5);
    CHECK(r0.records[0].peers == 3);
    REQUIRE(r1.records.size() == 1);
    CHECK(r1.records[0].kind == Kind::Promote);
    CHECK(r1.records[0].threshold == 0.4);

    // Past the last rung nothing is judged until max_resource; beyond it, Stop with the reason.
    for (Resource step = 4; step <= 9; ++step) CHECK(report(asha, 1, step, 0.3).decision == Decision::Continue);
    CHECK(asha.take_decisions().empty());
    auto beyond = report(asha, 3, 10, 0.3);
    CHECK(beyond.decision == Decision::Stop);
    REQUIRE(beyond.records.size() == 1);
    CHECK(beyond.records[0].kind == Kind::Stop);
    CHECK(beyond.records[0].resource == 10);
    CHECK(beyond.records[0].reason.find("exceeds max_resource 9") != std::string::npos);
}

TEST_CASE("ASHA ignores repeated steps and judges a trial that skips rungs at the highest one reached") {
    ASHA asha(
        {.min_resource = 1, .max_resource = 27, .reduction_factor = 3, .type = HalvingType::Stop});  // rungs 1, 3, 9
    asha.start(asha_space(), {.seed = 1});
    for (int k = 0; k < 3; ++k) (void)asha.ask();
    auto first = report(asha, 0, 1, 1.0);
    CHECK(first.records.size() == 1);
    // Same step again, and an older one: ignored.
    CHECK(report(asha, 0, 1, 9.0).records.empty());
    CHECK(report(asha, 0, 0, 9.0).records.empty());
    // Trial 1 reports first at step 10: judged at rung 2 (resource 9) only.
    auto skip = report(asha, 1, 10, 2.0);
    CHECK(skip.decision == Decision::Continue);
    REQUIRE(skip.records.size() == 1);
    CHECK(skip.records[0].rung == 2);
    CHECK(skip.records[0].resource == 9);
    CHECK(skip.records[0].peers == 1);
    // Trial 0 then reaches rung 1 (resource 3) and rung 2: each judged once, against its own rung.
    auto at3 = report(asha, 0, 3, 0.9);
    REQUIRE(at3.records.size() == 1);
    CHECK(at3.records[0].rung == 1);
    CHECK(at3.records[0].peers == 1);  // trial 1 recorded nothing at rung 1
    auto at9 = report(asha, 0, 9, 0.8);
    REQUIRE(at9.records.size() == 1);
    CHECK(at9.records[0].rung == 2);
    CHECK(at9.records[0].peers == 2);
    // Reports from trials never handed out are refused, naming the trial.
    CHECK_THROWS_WITH_AS((void)asha.report(99, 1, 0.0),
                         "strategy 'ASHA': report() for trial 99, which ask() never handed out (the next new trial's "
                         "id is 3)",
                         StrategyError);
    CHECK(asha.take_decisions().empty());
}

TEST_CASE("ASHA counts a final loss told without reports, and excludes failed trials") {
    ASHA asha({.min_resource = 1, .max_resource = 9, .reduction_factor = 3, .type = HalvingType::Stop});
    asha.start(asha_space(), {.seed = 3, .max_trials = 8});
    for (int k = 0; k < 8; ++k) REQUIRE(asha.ask().runs());
    CHECK(asha.ask().kind == Suggestion::Kind::Done);  // max_trials reached

    CHECK(report(asha, 0, 1, 1.0).decision == Decision::Continue);
    CHECK(report(asha, 1, 1, 2.0).decision == Decision::Continue);
    // Trial 2 never reports; it returns after resource 1 with loss 0.5: recorded at rung 0, no record.
    asha.tell(2, Outcome::completed(0.5, 1));
    CHECK(asha.take_decisions().empty());
    // Trial 3 fails at resource 1: not counted at the rung.
    asha.tell(3, Outcome::failed(1));
    // Trial 6 completes without having reached any rung resource: not counted either.
    asha.tell(6, Outcome::completed(0.1, 0));
    // Trial 4: 4 losses recorded now {0.5, 1, 2, 3}: q = 1, cut-off 0.5 -> stopped.
    auto r4 = report(asha, 4, 1, 3.0);
    CHECK(r4.decision == Decision::Stop);
    REQUIRE(r4.records.size() == 1);
    CHECK(r4.records[0].peers == 4);
    CHECK(r4.records[0].threshold == 0.5);
    // A NaN report ranks as the worst value.
    auto r5 = report(asha, 5, 1, std::numeric_limits<double>::quiet_NaN());
    CHECK(r5.decision == Decision::Stop);
    CHECK(r5.records.at(0).peers == 5);
    // A report after tell() is refused: the trial's run is over.
    asha.tell(0, Outcome::completed(0.2, 9));
    CHECK_THROWS_AS((void)asha.report(0, 10, 0.1), StrategyError);
}

TEST_CASE("ASHA decisions match a brute-force ranking over many interleaved trials") {
    constexpr int eta = 3;
    ASHA asha({.min_resource = 1, .max_resource = 81, .reduction_factor = eta, .type = HalvingType::Stop});
    asha.start(asha_space(), {.seed = 11, .max_trials = 3000});
    const std::vector<Resource> rungs = asha.rung_resources();
    std::map<Resource, std::vector<double>> recorded;  // brute force: every loss recorded per rung
    std::mt19937_64 rng(5);
    std::normal_distribution<double> noise(0.0, 0.05);

    struct Running {
        TrialId id;
        double quality;
        Resource step;
        Resource previous;
    };
    std::vector<Running> running;
    std::size_t decisions = 0, stops = 0;
    bool done = false;
    while (!done || !running.empty()) {
        while (!done && running.size() < 8) {
            auto s = asha.ask();
            if (!s.runs()) {
                done = true;
                break;
            }
            running.push_back({s.trial, s.config.get<double>("x"), 0, 0});
        }
        if (running.empty()) break;
        std::size_t pick = rng() % running.size();
        Running& t = running[pick];
        t.previous = t.step;
        t.step += 1 + static_cast<Resource>(rng() % 2);  // steps of 1 or 2: some rungs are skipped
        t.step = std::min<Resource>(t.step, 81);
        double loss = t.quality + 1.0 / static_cast<double>(t.step) + noise(rng);
        Decision d = asha.report(t.id, t.step, loss);
        auto records = asha.take_decisions();
        // The trial is judged at the highest rung it newly reached, if any.
        Resource judged = 0;
        for (Resource r : rungs)
            if (r <= t.step && r > t.previous) judged = r;
        if (judged == 0) {
            CHECK(d == Decision::Continue);
            CHECK(records.empty());
        } else {
            REQUIRE(records.size() == 1);
            const auto& rec = records[0];
            CHECK(rec.resource == judged);
            auto& values = recorded[rec.resource];
            values.push_back(loss);
            std::vector<double> sorted = values;
            std::sort(sorted.begin(), sorted.end());
            const std::size_t m = sorted.size();
            const std::size_t q = m / eta;
            const bool keep = q == 0 || loss <= sorted[q - 1];
            CHECK(rec.peers == m);
            CHECK(d == (keep ? Decision::Continue : Decision::Stop));
            if (q > 0) CHECK(rec.threshold == sorted[q - 1]);
            ++decisions;
            if (!keep) ++stops;
        }
        if (d == Decision::Stop || t.step >= 81) {
            asha.tell(t.id, d == Decision::Stop ? Outcome::stopped(loss, t.step) : Outcome::completed(loss, t.step));
            running.erase(running.begin() + static_cast<std::ptrdiff_t>(pick));
        }
    }
    CHECK(decisions > 3000);
    CHECK(stops > 2000);  // about 2/3 of the trials stop at each rung
}

TEST_CASE("ASHA is deterministic for a seed and its configurations depend only on (seed, trial id)") {
    auto run = [](std::uint64_t seed) {
        ASHA asha({.min_resource = 1, .max_resource = 27, .type = HalvingType::Stop});
        asha.start(asha_space(), {.seed = seed, .max_trials = 40});
        std::vector<DecisionRecord> all;
        std::vector<Config> configs;
        while (true) {
            auto s = asha.ask();
            if (!s.runs()) break;
            configs.push_back(s.config);
            double x = s.config.get<double>("x");
            Resource step = 1;
            for (; step <= 27; ++step)
                if (asha.report(s.trial, step, x + 1.0 / static_cast<double>(step)) == Decision::Stop) break;
            asha.tell(s.trial, Outcome::completed(x, std::min<Resource>(step, 27)));
            for (auto& r : asha.take_decisions()) all.push_back(std::move(r));
        }
        return std::pair{all, configs};
    };
    auto [a, ca] = run(42);
    auto [b, cb] = run(42);
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(same_record(a[i], b[i]));
    CHECK(ca == cb);
    auto space = asha_space();
    for (std::size_t k = 0; k < ca.size(); ++k) CHECK(ca[k] == RandomSampler::sample(space, 42, k));
    auto [c, cc] = run(43);
    CHECK_FALSE(cc == ca);
}

TEST_CASE("SplitHeap keeps the k-th smallest value and the median") {
    detail::SplitHeap h;
    std::vector<double> values;
    std::mt19937_64 rng(9);
    std::uniform_real_distribution<double> u(0.0, 10.0);
    for (int i = 0; i < 500; ++i) {
        double x = i % 7 == 0 ? 5.0 : u(rng);  // with ties
        h.insert(x);
        values.push_back(x);
        std::vector<double> sorted = values;
        std::sort(sorted.begin(), sorted.end());
        std::size_t k = sorted.size() / 3;
        h.set_lower_size(k);
        if (k > 0) CHECK(h.lower_max() == sorted[k - 1]);
        double median = sorted.size() % 2 ? sorted[sorted.size() / 2]
                                          : 0.5 * (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]);
        CHECK(h.median() == doctest::Approx(median));
    }
}

TEST_CASE("LiveTrials finds what a map of the live trials would, whatever the order of ids") {
    // The schedulers' per-trial table (detail/live_trials.hpp) against std::map: ids mostly
    // increasing as the runner hands them out, some older, some never added, erased in any order.
    detail::LiveTrials<int> table;
    std::map<TrialId, int> model;
    std::mt19937_64 rng(11);
    TrialId next = 0;
    for (int step = 0; step < 20000; ++step) {
        const auto roll = rng() % 10;
        if (roll < 4) {
            const TrialId id = roll == 0 && next > 5 ? next - 1 - rng() % 5 : next++;  // now and then an older id
            const int value = static_cast<int>(rng() % 1000);
            table.insert(id, value);
            model[id] = value;
        } else if (!model.empty() && roll < 8) {
            auto it = model.begin();
            std::advance(it, static_cast<std::ptrdiff_t>(rng() % std::min<std::size_t>(model.size(), 12)));
            table.erase(it->first);
            model.erase(it);
        } else {
            table.erase(next + 100);  // never added: nothing happens
        }
        REQUIRE(table.size() == model.size());
        for (TrialId id = next > 40 ? next - 40 : 0; id < next + 2; ++id) {
            auto it = model.find(id);
            const int* found = table.find(id);
            REQUIRE((found != nullptr) == (it != model.end()));
            if (found) REQUIRE(*found == it->second);
        }
    }
    // An older id than the whole window, after everything was forgotten, and at() on a missing id.
    for (const auto& [id, value] : model) table.erase(id);
    CHECK(table.size() == 0);
    table.insert(7, 1);
    table.insert(3, 2);
    CHECK(table.at(3) == 2);
    CHECK(table.at(7) == 1);
    CHECK(table.find(5) == nullptr);
    CHECK_THROWS_AS((void)table.at(5), std::out_of_range);
    // An id far past the window is refused, not allocated for.
    CHECK_THROWS_AS(table.insert(TrialId{1} << 40, 3), std::out_of_range);
    CHECK(table.size() == 2);
}

TEST_CASE("A copy of ASHA or Hyperband holds rungs of its own, and one moved from stays usable") {
    // The rungs sit behind a pointer (detail/boxed.hpp): a copy that shared them would let one
    // scheduler's reports decide the other's trials.
    const auto check = [](auto original) {
        original.start(asha_space(), {.seed = 5});
        for (int k = 0; k < 3; ++k) REQUIRE(original.ask().runs());
        (void)original.report(0, 1, 1.0);
        (void)original.report(1, 1, 2.0);
        (void)original.take_decisions();
        auto copy = original;
        // Trial 2 reaches rung 0 in both, third there, judged on the top third of 3 losses.
        CHECK(copy.report(2, 1, 0.1) == Decision::Continue);  // the best of {1, 2, 0.1}
        CHECK(original.report(2, 1, 3.0) == Decision::Stop);  // the worst of {1, 2, 3}: not 0.1 seen
        const auto copy_records = copy.take_decisions();
        REQUIRE(copy_records.size() == 1);
        CHECK(copy_records[0].peers == 3);
        auto moved_to = std::move(copy);
        CHECK(moved_to.report(2, 3, 0.1) == Decision::Continue);
        copy = moved_to;  // the one moved from takes a value again, and runs on
        CHECK(copy.ask().runs());
        auto& same = copy;
        copy = std::move(same);  // a self-move keeps its schedule
        CHECK(copy.ask().runs());
    };
    check(ASHA({.min_resource = 1, .max_resource = 27, .reduction_factor = 3, .type = HalvingType::Stop}));
    check(Hyperband({.min_resource = 1, .max_resource = 27, .eta = 3, .type = HalvingType::Stop, .brackets = 1}));
}

TEST_CASE("a copy of a started MedianStopping records its inner scheduler's decisions, not the original's") {
    // The inner scheduler was started with the wrapper's sink: a copy must not send to the
    // original (which may be gone by then).
    MedianStopping<ASHA> original(
        ASHA({.min_resource = 1, .max_resource = 27, .reduction_factor = 3, .type = HalvingType::Stop}));
    original.start(asha_space(), {.seed = 5});
    for (int k = 0; k < 3; ++k) REQUIRE(original.ask().runs());
    (void)original.report(0, 1, 1.0);
    (void)original.report(1, 1, 2.0);
    (void)original.take_decisions();
    {
        auto copy = std::make_unique<MedianStopping<ASHA>>(original);
        CHECK(copy->report(2, 1, 3.0) == Decision::Stop);  // ASHA's rung: the worst of {1, 2, 3}
        const auto records = copy->take_decisions();
        REQUIRE(records.size() == 1);
        CHECK(records[0].kind == Kind::Stop);
        CHECK(records[0].trial == 2);
        CHECK(original.take_decisions().empty());
    }
    CHECK(original.report(2, 1, 0.5) == Decision::Continue);  // its own rung, untouched by the copy
    CHECK(original.take_decisions().size() == 1);
}
