// SPDX-License-Identifier: MIT
// Fault injection at scale: every strategy runs thousands of trials on 8 workers while the objective
// throws, returns NaN, hangs past its time limit, reports garbage steps and values, overruns its
// budget or reports nothing, and another thread queries progress() all the time. At the end every
// trial id is accounted for exactly once with the status its fault implies, the counts add up, the
// best trial is the true best, every run that started ended, and memory grows only with the records.
//
// HYPERTUNE_STRESS_TRIALS sets the number of trials (default 10,000; 1,000 under a sanitizer).
// Bayesian runs 3% of it (300 by default): each of its suggestions fits a Gaussian process.
#include "fault_injection.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

namespace hs = hypertune::stress;

namespace {

std::size_t stress_trials() {
    if (const char* env = std::getenv("HYPERTUNE_STRESS_TRIALS"); env && *env) {
        auto n = std::strtoull(env, nullptr, 10);
        if (n >= 50) return n;
    }
#ifdef HYPERTUNE_STRESS_SANITIZED
    return 1000;
#else
    return 10000;
#endif
}

hs::StressOptions options_for(const hs::StrategyCase& c) {
    hs::StressOptions o;
    o.trials = c.bayesian ? std::max<std::size_t>(30, stress_trials() * 3 / 100) : stress_trials();
    o.parallel = 8;
    o.seed = 20240611;
    return o;
}

void show(const hs::StressRun& r) {
    MESSAGE(fmt::format("{}: {} trials ({} objective calls), {} completed, {} stopped, {} failed; {} progress queries; "
                        "{:.2f} s",
                        r.strategy, r.trials, r.calls, r.completed, r.stopped, r.failed, r.progress_queries,
                        r.wall_seconds));
}

void check_violations(const hs::StressRun& r) {
    for (const auto& v : r.violations) FAIL_CHECK((r.strategy + ": " + v));
    CHECK(r.violations.empty());
}

// Every failing fault must really have fired somewhere, or the run proves nothing about it.
void check_faults_fired(const hs::StressRun& r) {
    if (r.trials < 250) return;  // too few for every fault to be drawn
    for (auto f : hs::all_faults)
        if (hs::fails(f)) {
            CAPTURE(hs::to_string(f));
            CHECK(r.fired[static_cast<std::size_t>(f)] > 0);
        }
}

void stress(const std::string& name) {
    auto c = hs::strategy_case(name);
    auto run = hs::run_stress(c, options_for(c));
    show(run);
    check_violations(run);
    check_faults_fired(run);
    CHECK(run.trials == options_for(c).trials);
    CHECK(run.failed > 0);
    CHECK(run.completed > 0);
    CHECK(run.progress_queries > 0);
}

}  // namespace

TEST_CASE("fault injection: RandomSearch accounts for every trial under throws, NaN, timeouts and garbage reports") {
    stress("RandomSearch");
}

TEST_CASE("fault injection: GridSearch (maximising) accounts for every trial under faults") { stress("GridSearch"); }

TEST_CASE("fault injection: asynchronous Hyperband accounts for every trial and stops overruns") {
    stress("Hyperband async");
}

TEST_CASE("fault injection: synchronous Hyperband accounts for every trial through pauses and promotions") {
    stress("Hyperband sync");
}

TEST_CASE("fault injection: ASHA accounts for every trial and stops overruns") { stress("ASHA"); }

TEST_CASE("fault injection: MedianStopping(RandomSearch) (maximising) accounts for every trial under faults") {
    stress("MedianStopping(RandomSearch)");
}

TEST_CASE("fault injection: Bayesian accounts for every trial under faults (fewer trials: a suggestion costs ms)") {
    stress("Bayesian");
}

TEST_CASE("fault injection: stop() from another thread mid-run: nothing starts after it, every started trial is "
          "accounted for") {
    for (std::string name : {"RandomSearch", "ASHA", "Hyperband sync"}) {
        CAPTURE(name);
        auto c = hs::strategy_case(name);
        auto o = options_for(c);
        o.stop_after_started = o.trials / 3;
        auto run = hs::run_stress(c, o);
        show(run);
        REQUIRE(run.stop_called);
        check_violations(run);
        CHECK(run.trials >= o.stop_after_started);
        CHECK(run.trials < o.trials);
    }
}

TEST_CASE("fault injection: memory grows only with the records, and nothing leaks") {
    const std::size_t large = stress_trials();
    const std::size_t small = large / 5;
    for (std::string name : {"RandomSearch", "ASHA", "Hyperband sync", "MedianStopping(RandomSearch)"}) {
        CAPTURE(name);
        auto c = hs::strategy_case(name);
        std::vector<std::string> violations;
        auto growth = hs::measure_memory_growth(c, options_for(c), small, large, violations);
        MESSAGE(fmt::format("{}: per trial, {:.0f} B of records, {:.0f} B more held by the run, {:.1f} B never freed",
                            name, growth.records_bytes_per_trial, growth.retained_bytes_per_trial,
                            growth.leaked_bytes_per_trial));
        for (const auto& v : violations) FAIL_CHECK(v);
        // Records hold a curve of at most 12 points, a few decisions and segments: well under 16 KB.
        CHECK(growth.records_bytes_per_trial < 16 * 1024);
        // Beyond its records the run keeps an index entry and a few rung values per trial; a 32 KB
        // checkpoint kept per trial (or any per-trial leak of that order) is far above this bound.
        CHECK(growth.retained_bytes_per_trial < 4 * 1024);
        CHECK(growth.leaked_bytes_per_trial < 256);
    }
}

TEST_CASE("fault injection: the memory check notices a run that keeps 100 KB per trial") {
    // The same measurement as above, on a run whose objective keeps 100 KB per call until the run
    // ends: the check must see it, or the bound above proves nothing.
    auto c = hs::strategy_case("RandomSearch");
    auto o = options_for(c);
    o.retain_bytes_per_call = 100 * 1024;
    std::vector<std::string> violations;
    auto growth = hs::measure_memory_growth(c, o, 100, 500, violations);
    MESSAGE(fmt::format("a run keeping 100 KB per call: {:.0f} B held per trial beyond the records",
                        growth.retained_bytes_per_trial));
    CHECK(violations.empty());
    CHECK(growth.retained_bytes_per_trial >= 4 * 1024);
    CHECK(growth.retained_bytes_per_trial > 100 * 1024);  // every call keeps 100 KB, retries included
}
