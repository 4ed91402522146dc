// SPDX-License-Identifier: MIT
#include <hypertune/json.hpp>
#include <hypertune/hypertune.hpp>
#include <hypertune/strategies/asha.hpp>

#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>

namespace ht = hypertune;
using namespace std::chrono_literals;

namespace {

ht::SearchSpace small_space() {
    return ht::SearchSpace{ht::ContinuousParameter("x", -5.0, 5.0), ht::IntegerParameter("k", 1, 10)};
}

double quadratic(const ht::Config& c) {
    double x = c.get<double>("x");
    return (x - 1.0) * (x - 1.0) + 0.1 * c.get<int>("k");
}

// Stops every trial whose loss is above `cut` at step 2: exercises the decision path without a
// real early-stopping strategy.
class CutAtStepTwo : public ht::Scheduler {
public:
    explicit CutAtStepTwo(double cut) : cut_(cut) {}
    std::string name() const override { return "CutAtStepTwo"; }
    std::optional<ht::Resource> max_resource() const override { return 10; }

protected:
    ht::Suggestion next(const ht::TrialBudget& budget) override { return start_new(budget, 10); }
    ht::Decision on_report(ht::TrialId id, ht::Resource step, double loss) override {
        if (step == 2 && loss > cut_) {
            decide({id, ht::DecisionRecord::Kind::Stop, -1, 0, step, loss, cut_, 1, "above the cut"});
            return ht::Decision::Stop;
        }
        return ht::Decision::Continue;
    }

private:
    double cut_;
};
static_assert(ht::Strategy<CutAtStepTwo>);

}  // namespace

TEST_CASE("the tuner runs max_jobs trials with a plain objective and finds a good one") {
    ht::Tuner tuner(small_space(), ht::RandomSearch(), {.max_jobs = 200, .max_parallel_jobs = 4, .seed = 3});
    auto result = tuner.fit(quadratic);
    CHECK(result.trials().size() == 200);
    CHECK(result.count(ht::TrialStatus::Completed) == 200);
    CHECK(result.stop_reason() == "max_jobs reached");
    const auto& best = result.best();
    for (const auto& t : result.trials()) CHECK(best.objective <= t.objective);
    CHECK(best.objective < 0.3);  // 200 random points on a 2-D bowl land near its minimum 0.1
    std::set<ht::TrialId> ids;
    for (const auto& t : result.trials()) ids.insert(t.id);
    CHECK(ids.size() == 200);
}

TEST_CASE("never more trials in flight than max_parallel_jobs, and all workers are used") {
    std::atomic<int> in_flight{0}, peak{0};
    ht::Tuner tuner(small_space(), ht::RandomSearch(), {.max_jobs = 24, .max_parallel_jobs = 3});
    auto result = tuner.fit([&](const ht::Config& c) {
        int now = ++in_flight;
        int seen = peak.load();
        while (now > seen && !peak.compare_exchange_weak(seen, now)) {}
        // Long enough that the run's own work (slower under a sanitizer on a loaded machine)
        // stays small beside it.
        std::this_thread::sleep_for(20ms);
        --in_flight;
        return quadratic(c);
    });
    CHECK(peak.load() == 3);
    std::set<std::size_t> workers;
    for (const auto& t : result.trials()) workers.insert(t.segments.at(0).worker);
    CHECK(workers.size() == 3);
    CHECK(result.cost().utilisation > 0.5);
}

TEST_CASE("the same seed gives the same configurations whatever the parallelism") {
    auto run = [](std::size_t parallel) {
        ht::Tuner tuner(small_space(), ht::RandomSearch(), {.max_jobs = 30, .max_parallel_jobs = parallel, .seed = 11});
        auto r = tuner.fit([](const ht::Config& c) {
            std::this_thread::sleep_for(std::chrono::microseconds(100 * c.get<int>("k")));  // finish out of order
            return quadratic(c);
        });
        std::map<ht::TrialId, std::string> by_id;
        for (const auto& t : r.trials()) by_id[t.id] = fmt::format("{}", t.config);
        return by_id;
    };
    CHECK(run(1) == run(4));
}

TEST_CASE("a failing objective marks its trial Failed with the reason, and the run goes on") {
    ht::SearchSpace space{ht::IntegerParameter("case", 0, 5)};
    ht::Tuner tuner(space, ht::GridSearch(), {.max_jobs = 6, .max_parallel_jobs = 2});
    auto result = tuner.fit([](const ht::Config& c, ht::Trial& trial) -> double {
        switch (c.get<int>("case")) {
            case 0: throw std::runtime_error("out of memory on worker 3");
            case 1: return std::nan("");
            case 2: return INFINITY;
            case 3: trial.report(1, std::nan("")); return 1.0;
            case 4:
                trial.report(2, 1.0);
                trial.report(1, 0.5);
                return 1.0;
            default: return 2.0;
        }
    });
    REQUIRE(result.trials().size() == 6);
    std::map<int, const ht::TrialRecord*> by_case;
    for (const auto& t : result.trials()) by_case[t.config.get<int>("case")] = &t;
    CHECK(by_case[0]->status == ht::TrialStatus::Failed);
    CHECK(by_case[0]->failure_reason == "the objective threw: out of memory on worker 3");
    CHECK(by_case[1]->failure_reason == "the objective returned nan");
    CHECK(by_case[2]->failure_reason == "the objective returned inf");
    CHECK(by_case[3]->failure_reason == "trial 3: reported a non-finite value (nan) at step 1");
    CHECK(by_case[4]->failure_reason == "trial 4: reported step 1 after step 2 (steps must increase)");
    CHECK(by_case[5]->status == ht::TrialStatus::Completed);
    CHECK(result.best().id == by_case[5]->id);
    CHECK(result.count(ht::TrialStatus::Failed) == 5);
    for (const auto& t : result.trials())
        if (t.status == ht::TrialStatus::Failed) CHECK(std::isnan(t.objective));
}

TEST_CASE("a report error is kept even when the objective swallows the exception") {
    ht::SearchSpace space{ht::IntegerParameter("k", 1, 1)};
    ht::Tuner tuner(space, ht::RandomSearch(), {.max_jobs = 1});
    auto result = tuner.fit([](const ht::Config&, ht::Trial& trial) {
        try {
            trial.report(1, INFINITY);
        } catch (const ht::InvalidArgument&) {
        }
        return 1.0;
    });
    CHECK(result.trials().at(0).status == ht::TrialStatus::Failed);
    CHECK(result.trials().at(0).failure_reason == "trial 0: reported a non-finite value (inf) at step 1");
}

TEST_CASE("failed trials are retried up to max_retries") {
    std::map<ht::TrialId, int> attempts;
    std::mutex mu;
    ht::Tuner tuner(small_space(), ht::RandomSearch(), {.max_jobs = 6, .max_parallel_jobs = 2, .max_retries = 2});
    auto result = tuner.fit([&](const ht::Config& c, ht::Trial& trial) {
        int n = 0;
        {
            std::lock_guard lk(mu);
            n = ++attempts[trial.id()];
        }
        trial.report(1, 5.0);
        if (trial.id() == 1 && n < 2) throw std::runtime_error("transient");
        if (trial.id() == 2) throw std::runtime_error("permanent");
        if (trial.id() == 3) throw std::runtime_error(n == 1 ? "out of GPU memory" : "nothing left to train");
        return quadratic(c);
    });
    std::map<ht::TrialId, const ht::TrialRecord*> by_id;
    for (const auto& t : result.trials()) by_id[t.id] = &t;
    CHECK(by_id[1]->status == ht::TrialStatus::Completed);
    CHECK(by_id[1]->retries == 1);
    CHECK(by_id[1]->curve.size() == 1);  // the failed attempt's curve is not kept twice
    CHECK(by_id[2]->status == ht::TrialStatus::Failed);
    CHECK(by_id[2]->retries == 2);
    CHECK(attempts[2] == 3);
    CHECK(by_id[2]->failure_reason == "the objective threw: permanent");
    CHECK(by_id[0]->retries == 0);
    // Retries that fail otherwise than the first attempt: the final reason keeps the cause.
    CHECK(by_id[3]->failure_reason == "the objective threw: nothing left to train (its first attempt failed otherwise: "
                                      "the objective threw: out of GPU memory)");
}

TEST_CASE("a trial the run's stop cut before its first report gets no advice to report") {
    // Stopped while the trainers were still setting up, each trial returned without a report, and
    // the result advised "call trial.report(step, value) after each resource unit" to a trainer
    // that reports every epoch it is let run.
    ht::Tuner tuner(small_space(), ht::ASHA({.max_resource = 9}),
                    {.max_jobs = 8, .max_parallel_jobs = 2, .progress = ht::ProgressBar::Never});
    std::atomic<int> setting_up{0};
    auto job = tuner.start([&](const ht::Config& c, ht::Trial& trial) {
        ++setting_up;
        while (!trial.should_stop()) std::this_thread::sleep_for(1ms);  // loading data until the stop
        double loss = quadratic(c);
        for (ht::Resource e = 1; e <= trial.budget() && !trial.should_stop(); ++e) trial.report(e, loss);
        return loss;
    });
    while (setting_up < 2) std::this_thread::sleep_for(1ms);
    job.stop();
    const ht::Result result = job.take_result();
    CHECK(result.stop_reason() == "stopped by user");
    REQUIRE(result.trials().size() == 2);
    for (const auto& t : result.trials()) CHECK(t.status == ht::TrialStatus::Stopped);
    for (const auto& w : result.setup().warnings) CHECK(w.find("reported no intermediate values") == std::string::npos);
}

TEST_CASE("stop() from another thread ends the run cleanly and keeps every completed trial") {
    ht::Tuner tuner(small_space(), ht::RandomSearch({.max_resource = 1000}),
                    {.max_jobs = 100000, .max_parallel_jobs = 4});
    std::atomic<int> finished{0};
    auto job = tuner.start([&](const ht::Config& c, ht::Trial& trial) {
        double v = quadratic(c);
        for (ht::Resource step = 1; step <= trial.budget(); ++step) {
            trial.report(step, v + 1.0 / static_cast<double>(step));
            if (trial.should_stop()) return v;
            if (step % 100 == 0) std::this_thread::sleep_for(1ms);
        }
        ++finished;
        return v;
    });
    while (job.progress().completed < 8) std::this_thread::sleep_for(1ms);
    job.stop();
    auto result = job.wait();
    CHECK(result.stop_reason() == "stopped by user");
    CHECK(job.finished());
    CHECK(result.count(ht::TrialStatus::Completed) == static_cast<std::size_t>(finished.load()));
    CHECK(result.count(ht::TrialStatus::Completed) >= 8);
    CHECK(result.count(ht::TrialStatus::Running) == 0);
    for (const auto& t : result.trials()) {
        CHECK((t.status == ht::TrialStatus::Completed || t.status == ht::TrialStatus::Stopped));
        CHECK(t.has_objective());
        if (t.status == ht::TrialStatus::Stopped) CHECK(t.resource_used < 1000);
    }
    CHECK(result.trials().size() < 100000);
}

TEST_CASE("on_trial_end hears the last word on every trial, also one the run's end stops while it waits for promotion") {
    // A paused trial's run ends Paused; the run's end (the scheduler closing its rungs, or stop())
    // stopped it later, and on_trial_end last said Paused.
    auto trainer = [](const ht::Config& c, ht::Trial& trial) {
        double loss = 0.0;
        for (ht::Resource e = trial.resumed_from() + 1; e <= trial.budget(); ++e) {
            trial.report(e, loss = quadratic(c) + 1.0 / static_cast<double>(e));
            trial.save_checkpoint("state");
            if (trial.should_stop()) break;
        }
        return loss;
    };
    for (const int which : {0, 1, 2}) {
        CAPTURE(which);
        std::mutex mu;
        std::map<ht::TrialId, ht::TrialStatus> last;
        std::size_t pauses = 0;
        std::atomic<ht::TuningJob*> handle{nullptr};
        ht::TunerOptions options{.max_jobs = which == 2 ? 40u : 7u, .max_parallel_jobs = 1,
                                 .progress = ht::ProgressBar::Never};
        options.on_trial_end = [&](const ht::TrialRecord& r) {
            std::lock_guard lk(mu);
            last[r.id] = r.status;
            // which 2: stop() once five trials wait, so the run's end cuts them
            if (r.status == ht::TrialStatus::Paused && ++pauses == 5 && which == 2)
                while (!handle.load()) std::this_thread::yield();
            if (which == 2 && pauses >= 5) handle.load()->stop();
        };
        ht::AnyStrategy strategy =
            which == 1 ? ht::AnyStrategy(ht::Hyperband({.min_resource = 1, .max_resource = 9,
                                                        .mode = ht::HyperbandMode::Synchronous}))
                       : ht::AnyStrategy(ht::ASHA({.min_resource = 1, .max_resource = 9}));
        ht::Tuner tuner(small_space(), std::move(strategy), options);
        auto job = tuner.start(trainer);
        handle = &job;
        const auto result = job.wait();
        CHECK(result.count(ht::TrialStatus::Stopped) > 0);
        for (const auto& t : result.trials()) {
            CAPTURE(t.id);
            REQUIRE(last.count(t.id) == 1);
            CHECK(last[t.id] == t.status);
        }
        if (which == 2) {
            CHECK(result.stop_reason() == "stopped by user");
            CHECK(std::any_of(result.trials().begin(), result.trials().end(), [](const ht::TrialRecord& t) {
                return t.failure_reason == "the run ended while the trial waited for promotion";
            }));
        }
    }
}

TEST_CASE("stop() from a callback, max_runtime, target and no-improvement end the run") {
    SUBCASE("callback") {
        std::atomic<ht::TuningJob*> handle{nullptr};
        ht::TunerOptions options{.max_jobs = 100000, .max_parallel_jobs = 2};
        options.on_trial_end = [&](const ht::TrialRecord& r) {
            if (auto* job = handle.load(); job && r.id >= 5) job->stop();
        };
        ht::Tuner tuner(small_space(), ht::RandomSearch(), options);
        auto job = tuner.start([](const ht::Config& c) {
            std::this_thread::sleep_for(100us);
            return quadratic(c);
        });
        handle = &job;
        auto result = job.wait();
        CHECK(result.stop_reason() == "stopped by user");
        CHECK(result.trials().size() < 100000);
    }
    SUBCASE("max_runtime") {
        ht::Tuner tuner(small_space(), ht::RandomSearch(),
                        {.max_jobs = 1000000, .max_parallel_jobs = 2, .max_runtime_seconds = 0.2});
        auto result = tuner.fit([](const ht::Config& c) {
            std::this_thread::sleep_for(2ms);
            return quadratic(c);
        });
        CHECK(result.stop_reason() == "max_runtime of 0.2s reached");
        CHECK(result.setup().wall_seconds < 2.0);
    }
    SUBCASE("max_runtime while every worker is inside a long trial") {
        // Trials of 10 s (1,000 steps of 10 ms): the deadline passes inside them, and they see it.
        const auto t0 = std::chrono::steady_clock::now();
        ht::Tuner tuner(small_space(), ht::RandomSearch({.max_resource = 1000}),
                        {.max_jobs = 4, .max_parallel_jobs = 2, .max_runtime_seconds = 0.2});
        auto result = tuner.fit([](const ht::Config& c, ht::Trial& trial) {
            double v = quadratic(c);
            for (ht::Resource step = 1; step <= trial.budget() && !trial.should_stop(); ++step) {
                std::this_thread::sleep_for(10ms);
                trial.report(step, v);
            }
            return v;
        });
        CHECK(std::chrono::steady_clock::now() - t0 < 5s);
        CHECK(result.stop_reason() == "max_runtime of 0.2s reached");
        REQUIRE(result.trials().size() == 2);
        for (const auto& t : result.trials()) {
            CHECK(t.status == ht::TrialStatus::Stopped);
            CHECK(t.resource_used < 1000);
        }
    }
    SUBCASE("stop() inside a trial that reports nothing: Stopped, not trained in full") {
        ht::Tuner tuner(small_space(), ht::RandomSearch({.max_resource = 10}), {.max_jobs = 1});
        std::atomic<bool> inside{false};
        auto job = tuner.start([&](const ht::Config& c, ht::Trial& trial) {
            inside = true;
            while (!trial.should_stop()) std::this_thread::sleep_for(1ms);  // trains, checking the stop
            return quadratic(c);
        });
        while (!inside) std::this_thread::sleep_for(1ms);
        job.stop();
        const auto& result = job.wait();
        REQUIRE(result.trials().size() == 1);
        CHECK(result.trials()[0].status == ht::TrialStatus::Stopped);
        CHECK(result.trials()[0].resource_used == 0);
        CHECK(result.count(ht::TrialStatus::Completed) == 0);  // so it is never best()
    }
    SUBCASE("target objective") {
        ht::Tuner tuner(small_space(), ht::RandomSearch(),
                        {.max_jobs = 100000, .seed = 5, .target_objective = 0.5});
        auto result = tuner.fit(quadratic);
        CHECK(result.best().objective <= 0.5);
        CHECK(result.stop_reason().starts_with("target objective 0.5 reached by trial "));
        CHECK(result.trials().back().objective <= 0.5);  // sequential: the last trial is the one
    }
    SUBCASE("no improvement") {
        ht::Tuner tuner(small_space(), ht::RandomSearch(), {.max_jobs = 100000, .max_trials_without_improvement = 3});
        auto result = tuner.fit([](const ht::Config&) { return 1.0; });
        CHECK(result.trials().size() == 4);  // the first sets the best, three more do not improve
        CHECK(result.stop_reason() == "no improvement above 1% in 3 trials");
    }
}

TEST_CASE("max_trial_seconds stops the trial that runs too long, and only that one") {
    // Trial 1 would take 100 steps of 20 ms (2 s); the others 100 steps at once.
    ht::TunerOptions options{.max_jobs = 4, .max_parallel_jobs = 2, .max_trial_seconds = 0.2, .max_retries = 2};
    const auto t0 = std::chrono::steady_clock::now();
    auto result = ht::Tuner(small_space(), ht::RandomSearch({.max_resource = 100}), options)
                      .fit([](const ht::Config& c, ht::Trial& trial) {
                          double loss = 0.0;
                          for (ht::Resource r = 1; r <= trial.budget(); ++r) {
                              if (trial.id() == 1) std::this_thread::sleep_for(20ms);
                              trial.report(r, loss = quadratic(c) + 1.0 / static_cast<double>(r));
                              if (trial.should_stop()) break;
                          }
                          return loss;
                      });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    REQUIRE(result.trials().size() == 4);
    for (const auto& t : result.trials()) {
        CAPTURE(t.id);
        CHECK(t.retries == 0);  // a stop is not a failure: no retry
        if (t.id != 1) {
            CHECK(t.status == ht::TrialStatus::Completed);
            CHECK(t.resource_used == 100);
            continue;
        }
        CHECK(t.status == ht::TrialStatus::Stopped);
        CHECK(t.resource_used >= 2);
        CHECK(t.resource_used < 100);
        CHECK(t.objective == doctest::Approx(quadratic(t.config) + 1.0 / static_cast<double>(t.resource_used)));
        CHECK(t.curve.size() == static_cast<std::size_t>(t.resource_used));
    }
    CHECK(seconds < 1.5);
    const auto& w = result.setup().warnings;
    CHECK(std::count_if(w.begin(), w.end(), [](const std::string& s) {
              return s.starts_with("trial 1 ran past max_trial_seconds = 0.2 s and was stopped at step ");
          }) == 1);
}

TEST_CASE("time limits beyond a clock's range mean no limit, not an overflow that ends the run or every trial") {
    // 1e10 s and more overflowed steady_clock's nanoseconds: the run ended at once, or every trial
    // was stopped at its first report.
    for (const double huge : {1e10, 1e300}) {
        CAPTURE(huge);
        ht::Tuner tuner(small_space(), ht::RandomSearch({.max_resource = 3}),
                        {.max_jobs = 3, .max_runtime_seconds = huge, .max_trial_seconds = huge});
        const auto result = tuner.fit([](const ht::Config& c, ht::Trial& trial) {
            for (ht::Resource s = 1; s <= trial.budget(); ++s) trial.report(s, c.get<double>("x"));
            return c.get<double>("x");
        });
        CHECK(result.count(ht::TrialStatus::Completed) == 3);
        CHECK(result.setup().warnings.empty());
    }
}

TEST_CASE("max_trial_seconds: an objective that reports nothing counts as trained in full unless it was told it was cut") {
    // It never looks at should_stop(): nothing tells whether it trained in full, so it counts so.
    ht::TunerOptions options{.max_jobs = 3, .max_trial_seconds = 0.05};
    auto blind = ht::Tuner(small_space(), ht::RandomSearch(), options).fit([](const ht::Config& c, ht::Trial& trial) {
        if (trial.id() == 0) std::this_thread::sleep_for(80ms);
        return quadratic(c);
    });
    REQUIRE(blind.trials().size() == 3);
    for (const auto& t : blind.trials()) CHECK(t.status == ht::TrialStatus::Completed);
    REQUIRE(blind.setup().warnings.size() == 1);
    CHECK(blind.setup().warnings[0] == "trial 0 ran past max_trial_seconds = 0.05 s without reporting, so it counts as "
                                       "trained in full: report each step and return once trial.should_stop() is set");
    // It returned when should_stop() said its time was up: cut short, as the limit meant.
    auto told = ht::Tuner(small_space(), ht::RandomSearch(), options).fit([](const ht::Config& c, ht::Trial& trial) {
        if (trial.id() == 0)
            while (!trial.should_stop()) std::this_thread::sleep_for(1ms);  // ends at the limit
        return quadratic(c);
    });
    REQUIRE(told.trials().size() == 3);
    CHECK(told.trials()[0].status == ht::TrialStatus::Stopped);
    CHECK(told.count(ht::TrialStatus::Completed) == 2);
    REQUIRE(told.setup().warnings.size() == 1);
    CHECK(told.setup().warnings[0] == "trial 0 ran past max_trial_seconds = 0.05 s and was stopped before it reported a "
                                      "step (it counts as cut short, not trained in full): report each step");
}

TEST_CASE("max_trial_seconds: the run's end counts the trials past it over every session of the run") {
    // One trial past the limit in each session: the end of the second says two, as a run of two
    // trials from the start would (the first session's trial is in the journal, not in memory).
    const auto journal =
        (std::filesystem::temp_directory_path() / fmt::format("hypertune-out-of-time-{}.jsonl", ::getpid())).string();
    std::filesystem::remove(journal);
    const auto slow = [](const ht::Config& c, ht::Trial&) {
        std::this_thread::sleep_for(80ms);
        return quadratic(c);
    };
    ht::TunerOptions options{.max_jobs = 1, .max_trial_seconds = 0.05, .journal = journal};
    const auto first = ht::Tuner(small_space(), ht::RandomSearch(), options).fit(slow);
    REQUIRE(first.setup().warnings.size() == 1);  // trial 0's own
    options.max_jobs = 2;
    const auto both = ht::Tuner(small_space(), ht::RandomSearch(), options).fit(slow);
    REQUIRE(both.trials().size() == 2);
    const std::vector<std::string> expected{first.setup().warnings[0],
                                            "2 trials ran past max_trial_seconds = 0.05 s"};
    CHECK(both.setup().warnings == expected);
    CHECK(ht::load_result(journal).setup().warnings == expected);
    std::filesystem::remove(journal);
}

TEST_CASE("a trainer that counts its own epochs under RandomSearch's budget of 1, cut by time or stop(), is Stopped") {
    // RandomSearch() runs each trial to a budget of 1, and a trainer that reports its own epochs
    // passes it at once: a trial cut at epoch 4 of 20 was Completed, counted for best() and met
    // the target objective, and the warning said it "went on to its budget".
    auto epochs = [](const ht::Config& c, ht::Trial& trial) {
        double v = 0.0;
        for (int e = 1; e <= 20 && !trial.should_stop(); ++e) {
            std::this_thread::sleep_for(10ms);
            v = c.get<double>("x") + 1.0 / e;
            trial.report(e, v);
        }
        return v;
    };
    ht::TunerOptions timed{.max_jobs = 3, .max_parallel_jobs = 1, .seed = 1, .max_trial_seconds = 0.035,
                           .target_objective = 10.0};  // any value meets it: only a trial trained in full may
    const ht::Result cut = ht::Tuner(small_space(), ht::RandomSearch(), timed).fit(epochs);
    REQUIRE(cut.trials().size() == 3);
    for (const auto& t : cut.trials()) {
        CAPTURE(t.id);
        CHECK(t.status == ht::TrialStatus::Stopped);
        CHECK(t.resource_used < 20);
    }
    CHECK(cut.stop_reason() == "max_jobs reached");
    REQUIRE(!cut.setup().warnings.empty());
    CHECK(cut.setup().warnings[0].starts_with("trial 0 ran past max_trial_seconds = 0.035 s and was stopped at step "));
    // A trial that trains its 20 epochs is Completed as before.
    const ht::Result full = ht::Tuner(small_space(), ht::RandomSearch(), {.max_jobs = 2, .seed = 1}).fit(epochs);
    for (const auto& t : full.trials()) CHECK(t.status == ht::TrialStatus::Completed);
    // stop(): the trial in flight is cut short.
    ht::Tuner tuner(small_space(), ht::RandomSearch(), {.max_jobs = 5, .max_parallel_jobs = 1, .seed = 1});
    std::atomic<int> first_reports{0};
    ht::TuningJob job = tuner.start([&](const ht::Config& c, ht::Trial& trial) {
        double v = 0.0;
        for (int e = 1; e <= 200 && !trial.should_stop(); ++e) {
            std::this_thread::sleep_for(5ms);
            v = c.get<double>("x") + 1.0 / e;
            trial.report(e, v);
            ++first_reports;
        }
        return v;
    });
    while (first_reports < 3) std::this_thread::sleep_for(1ms);
    job.stop();
    const ht::Result stopped = job.take_result();
    REQUIRE(stopped.trials().size() == 1);
    CHECK(stopped.trials()[0].status == ht::TrialStatus::Stopped);
}

TEST_CASE("max_runtime_seconds is the run's over its sessions: a run that ended on it ends again at once") {
    const auto journal = (std::filesystem::temp_directory_path() / fmt::format("hypertune-runtime-{}.jsonl", ::getpid())).string();
    std::filesystem::remove(journal);
    std::atomic<int> calls{0};
    auto objective = [&](const ht::Config& c) {
        ++calls;
        std::this_thread::sleep_for(20ms);
        return quadratic(c);
    };
    ht::TunerOptions o{.max_jobs = 1000, .max_parallel_jobs = 1, .seed = 2, .max_runtime_seconds = 0.3,
                       .journal = journal};
    const ht::Result first = ht::Tuner(small_space(), ht::RandomSearch(), o).fit(objective);
    CHECK(first.stop_reason() == "max_runtime of 0.3s reached");
    const int ran = calls.load();
    CHECK(ran > 0);
    // Each session used to start the limit afresh: every rerun of the program ran 0.3 s more.
    const ht::Result again = ht::Tuner(small_space(), ht::RandomSearch(), o).fit(objective);
    CHECK(again.stop_reason() == "max_runtime of 0.3s reached");
    CHECK(calls.load() == ran);
    CHECK(again.trials().size() == first.trials().size());
    // A larger limit gives the run what it adds.
    o.max_runtime_seconds = 0.6;
    const ht::Result longer = ht::Tuner(small_space(), ht::RandomSearch(), o).fit(objective);
    CHECK(calls.load() > ran);
    CHECK(longer.setup().wall_seconds < 1.2);
    std::filesystem::remove(journal);
    std::filesystem::remove(journal + ".lock");
}

TEST_CASE("max_trial_seconds: several trials out of time are counted in one warning at the end") {
    ht::TunerOptions options{.max_jobs = 3, .max_trial_seconds = 0.03};
    auto result = ht::Tuner(small_space(), ht::RandomSearch({.max_resource = 50}), options)
                      .fit([](const ht::Config& c, ht::Trial& trial) {
                          for (ht::Resource r = 1; r <= trial.budget() && !trial.should_stop(); ++r) {
                              std::this_thread::sleep_for(5ms);
                              trial.report(r, quadratic(c));
                          }
                          return quadratic(c);
                      });
    CHECK(result.count(ht::TrialStatus::Stopped) == 3);
    const auto& w = result.setup().warnings;
    REQUIRE(w.size() == 2);
    CHECK(w[0].starts_with("trial 0 ran past max_trial_seconds = 0.03 s and was stopped at step "));
    CHECK(w[1] == "3 trials ran past max_trial_seconds = 0.03 s");
}

TEST_CASE("max_trial_seconds passed during the unit that reaches the budget: the warning does not say the trial went on") {
    // The report of the budget (a rung) found the trial past its limit and got Stop; the trainer
    // returned at once, yet was told it "went on to its budget after a report was told to stop".
    ht::TunerOptions options{.max_jobs = 2, .max_parallel_jobs = 1, .max_trial_seconds = 0.02,
                             .progress = ht::ProgressBar::Never};
    const auto result = ht::Tuner(small_space(), ht::RandomSearch({.max_resource = 1}), options)
                            .fit([](const ht::Config& c, ht::Trial& trial) {
                                std::this_thread::sleep_for(40ms);  // the one unit outlasts the limit
                                trial.report(1, quadratic(c));
                                return quadratic(c);
                            });
    const auto& w = result.setup().warnings;
    REQUIRE(!w.empty());
    CHECK(w[0] == "trial 0 ran past max_trial_seconds = 0.02 s and reached its budget at the report that found it "
                  "past the limit (step 1: it trained in full)");
}

TEST_CASE("options are checked before any trial runs") {
    auto space = small_space();
    CHECK_THROWS_WITH_AS(ht::Tuner(space, ht::RandomSearch(), {.max_jobs = 0}),
                         "TunerOptions: max_jobs must be >= 1, got 0", ht::InvalidArgument);
    CHECK_THROWS_WITH_AS(ht::Tuner(space, ht::RandomSearch(), {.max_parallel_jobs = 0}),
                         "TunerOptions: max_parallel_jobs must be >= 1, got 0", ht::InvalidArgument);
    CHECK_THROWS_WITH_AS(ht::Tuner(space, ht::RandomSearch(), {.max_trial_seconds = -1.0}),
                         "TunerOptions: max_trial_seconds must be finite and >= 0, got -1", ht::InvalidArgument);
    CHECK_THROWS_WITH_AS(ht::Tuner(space, ht::RandomSearch(), {.max_trial_seconds = std::nan("")}),
                         "TunerOptions: max_trial_seconds must be finite and >= 0, got nan", ht::InvalidArgument);
    CHECK_THROWS_WITH_AS(ht::Tuner(space, ht::RandomSearch(), {.max_retries = -1}),
                         "TunerOptions: max_retries must be >= 0, got -1", ht::InvalidArgument);
    CHECK_THROWS_WITH_AS(ht::Tuner(space, ht::RandomSearch(), {.instances_per_trial = 0}),
                         "TunerOptions: instances_per_trial must be >= 1, got 0", ht::InvalidArgument);
    // A metric name is journaled: one that is not UTF-8 read back as another, and the run could not resume.
    CHECK_THROWS_WITH_AS(ht::Tuner(space, ht::RandomSearch(), {.metric = "loss\xE9"}),
                         "TunerOptions: objective 'loss\xE9': the name is not valid UTF-8", ht::InvalidArgument);
    // It is printed on lines of the summary, the progress line, the CSV and the report.
    CHECK_THROWS_WITH_AS(ht::Tuner(space, ht::RandomSearch(), {.metric = "validation\nloss"}),
                         "TunerOptions: objective 'validation\\x0aloss': the name has a control character (0x0a at "
                         "byte 10)",
                         ht::InvalidArgument);
    ht::TunerOptions tabbed;
    tabbed.constraints = {ht::Constraint::at_most("memory\tGB", 8.0)};
    CHECK_THROWS_WITH_AS(ht::Tuner(space, ht::RandomSearch(), tabbed),
                         "TunerOptions: constraint metric 'memory\\x09GB': the name has a control character (0x09 at "
                         "byte 6)",
                         ht::InvalidArgument);
    CHECK_THROWS_WITH_AS(ht::Tuner(ht::SearchSpace{}, ht::RandomSearch()), "SearchSpace: no parameters",
                         ht::InvalidArgument);
    CHECK_THROWS_WITH_AS(ht::Tuner(space, ht::GridSearch()),
                         "grid: ContinuousParameter 'x' needs a number of grid points (GridSearchOptions::points, or "
        "GridSampler({{\"x\", n}}))",
                         ht::InvalidArgument);
    ht::Tuner once(space, ht::RandomSearch(), {.max_jobs = 1});
    (void)once.fit(quadratic);
    CHECK_THROWS_WITH_AS((void)once.fit(quadratic), "Tuner: this tuner has already run (or was moved from); make a new one", ht::Error);
    // A moved-from tuner is refused alike, not run on a moved-from strategy; the one it moved to runs.
    ht::Tuner from(space, ht::RandomSearch(), {.max_jobs = 2});
    ht::Tuner to(std::move(from));
    CHECK_THROWS_WITH_AS((void)from.fit(quadratic), "Tuner: this tuner has already run (or was moved from); make a new one", ht::Error);  // NOLINT(bugprone-use-after-move)
    ht::Tuner assigned(space, ht::RandomSearch(), {.max_jobs = 1});
    assigned = std::move(to);
    CHECK_THROWS_AS((void)to.fit(quadratic), ht::Error);  // NOLINT(bugprone-use-after-move)
    CHECK(assigned.fit(quadratic).trials().size() == 2);
    // A moved-from job says so instead of following a null pointer; the one it moved to works.
    ht::TuningJob job = ht::Tuner(space, ht::RandomSearch(), {.max_jobs = 1}).start(quadratic);
    ht::TuningJob moved = std::move(job);
    CHECK_THROWS_WITH_AS((void)job.finished(), "TuningJob: this job was moved from; use the one it was moved to",  // NOLINT(bugprone-use-after-move)
                         ht::Error);
    CHECK_THROWS_AS(job.stop(), ht::Error);  // NOLINT(bugprone-use-after-move)
    CHECK(moved.wait().trials().size() == 1);
}

TEST_CASE("waiting for the run from the objective is refused by name, not a hang") {
    // With two workers, job.wait() from a trial waited for ever (the run waits for that thread);
    // with one, it failed with a bare "Resource deadlock avoided".
    for (const std::size_t workers : {1u, 2u}) {
        CAPTURE(workers);
        std::atomic<ht::TuningJob*> handle{nullptr};
        ht::Tuner tuner(small_space(), ht::RandomSearch(), {.max_jobs = 3, .max_parallel_jobs = workers});
        ht::TuningJob job = tuner.start([&](const ht::Config& c, ht::Trial& trial) {
            while (handle.load() == nullptr) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            if (trial.id() == 1) (void)handle.load()->wait();
            return c.get<double>("x");
        });
        handle = &job;
        const ht::Result& r = job.wait();
        REQUIRE(r.trials().size() == 3);
        CHECK(r.trials()[1].status == ht::TrialStatus::Failed);
        CHECK(r.trials()[1].failure_reason.find("TuningJob::wait() called from the objective or a trial callback, on "
                                                "one of the run's worker threads") != std::string::npos);
    }
}

TEST_CASE("the run state's best is a Completed trial: one paused at a rung leaves it, as in Result::best()") {
    // The loss rises with training, so a trial paused at rung 0 looks better than any that ran to
    // the end; it stayed RunState::best() (and the progress line's best) after its Pause.
    std::optional<ht::TrialId> at_end;
    ht::TunerOptions o{.max_jobs = 20, .seed = 3};
    o.on_event = [&](const ht::RunEvent& e, const ht::RunState& state) {
        if (std::holds_alternative<ht::RunEnded>(e)) at_end = state.best();
    };
    ht::Tuner tuner(small_space(), ht::ASHA({.min_resource = 1, .max_resource = 9}), o);
    const auto result = tuner.fit([](const ht::Config& c, ht::Trial& trial) {
        double v = 0.0;
        for (ht::Resource s = trial.resumed_from() + 1; s <= trial.budget(); ++s) {
            v = c.get<double>("x") + 0.1 * static_cast<double>(s);
            trial.report(s, v);
            if (trial.should_stop()) break;
        }
        return v;
    });
    REQUIRE(result.has_best());
    REQUIRE(at_end.has_value());
    CHECK(*at_end == result.best().id);
    CHECK(result.best().status == ht::TrialStatus::Completed);
}

TEST_CASE("maximize: the best is the largest, strategies see the negated loss") {
    ht::Tuner tuner(small_space(), ht::RandomSearch(),
                    {.metric = "validation:auc", .direction = ht::Direction::Maximize, .max_jobs = 50});
    auto result = tuner.fit([](const ht::Config& c) { return -quadratic(c); });
    for (const auto& t : result.trials()) CHECK(result.best().objective >= t.objective);
    CHECK(result.summary().find("Maximize validation:auc") != std::string::npos);
}

TEST_CASE("early stopping: decisions are recorded, cost is estimated without early stopping") {
    ht::Tuner tuner(small_space(), CutAtStepTwo(5.0),
                    {.max_jobs = 40, .max_parallel_jobs = 2, .seed = 2, .instances_per_trial = 3});
    auto result = tuner.fit([](const ht::Config& c, ht::Trial& trial) {
        double v = quadratic(c);
        for (ht::Resource step = 1; step <= trial.budget(); ++step) {
            // Long enough that scheduling jitter on a loaded machine does not blur the time per
            // step the estimate without early stopping scales up.
            std::this_thread::sleep_for(1ms);
            trial.report(step, v);
            if (trial.should_stop()) break;
        }
        return v;
    });
    std::size_t stopped = 0;
    for (const auto& t : result.trials()) {
        CHECK(t.billable_seconds == doctest::Approx(3.0 * t.elapsed_seconds));
        if (t.objective > 5.0) {
            ++stopped;
            CHECK(t.status == ht::TrialStatus::Stopped);
            CHECK(t.resource_used == 2);
            CHECK(t.curve.size() == 2);
            REQUIRE(t.decisions.size() == 1);
            CHECK(t.decisions[0].kind == ht::DecisionRecord::Kind::Stop);
            CHECK(t.decisions[0].threshold == 5.0);
        } else {
            CHECK(t.status == ht::TrialStatus::Completed);
            CHECK(t.resource_used == 10);
            CHECK(t.decisions.empty());
        }
    }
    REQUIRE(stopped > 5);
    auto cost = result.cost();
    CHECK(cost.full_resource == 10);
    // each stopped trial ran 2 of 10 units: without early stopping it would have run 5x as long
    // (its time per unit times 10). Checked against the records, not against the clock: on a
    // loaded machine the time per unit varies too much for a ratio of sums to mean anything.
    double without = 0.0;
    for (const auto& t : result.trials())
        without += 3.0 * (t.status == ht::TrialStatus::Stopped ? t.elapsed_seconds / 2.0 * 10.0 : t.elapsed_seconds);
    CHECK(cost.billable_seconds_without_early_stopping == doctest::Approx(without));
    CHECK(cost.billable_seconds_without_early_stopping > cost.billable_seconds);
    CHECK(result.summary().find("early-stopping decisions:") != std::string::npos);
    CHECK(result.summary().find("Stop at rung 0 (resource 2)") != std::string::npos);
    auto json = result.to_json();
    bool found = false;
    for (const auto& t : json["trials"])
        for (const auto& d : t["decisions"]) found = found || d["explanation"].get<std::string>().find("above the cut") != std::string::npos;
    CHECK(found);
}

TEST_CASE("median stopping over random search's budget of 1: the full resource is the epochs a completed trial trained") {
    // A trainer that reports 10 epochs under MedianStopping(RandomSearch()): no resource is in
    // play (a budget of 1), so the full resource was 1 and the estimate without early stopping
    // equalled the cost, though most trials were stopped after 1 epoch of 10.
    const auto result = ht::Tuner(small_space(), ht::MedianStopping(ht::RandomSearch(), {.min_trials = 2}),
                                  {.max_jobs = 12, .max_parallel_jobs = 1, .progress = ht::ProgressBar::Never})
                            .fit([](const ht::Config& c, ht::Trial& trial) {
                                double v = 0.0;
                                for (ht::Resource e = 1; e <= 10 && !trial.should_stop(); ++e)
                                    trial.report(e, v = quadratic(c) + 1.0 / static_cast<double>(e));
                                return v;
                            });
    const auto cost = result.cost();
    CHECK(cost.full_resource == 10);
    std::size_t early = 0;
    double without = 0.0;
    for (const auto& t : result.trials()) {
        const bool stopped = ht::Result::stopped_early(t);
        early += stopped ? 1 : 0;
        without += stopped ? t.billable_seconds / static_cast<double>(t.resource_used) * 10.0 : t.billable_seconds;
    }
    REQUIRE(early > 0);
    CHECK(cost.billable_seconds_without_early_stopping == doctest::Approx(without));
    CHECK(cost.billable_seconds_without_early_stopping > cost.billable_seconds);
}

TEST_CASE("trials cut by the run's deadline are not early stopping: the estimate without it does not scale them") {
    // Random search stops nothing; max_runtime_seconds cut its trials, and the report showed "2.0x
    // less with early stopping".
    ht::Tuner tuner(small_space(), ht::RandomSearch({.max_resource = 10}),
                    {.max_jobs = 4, .max_parallel_jobs = 2, .max_runtime_seconds = 0.05});
    const auto result = tuner.fit([](const ht::Config& c, ht::Trial& trial) {
        for (ht::Resource s = 1; s <= trial.budget(); ++s) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            trial.report(s, c.get<double>("x"));
            if (trial.should_stop()) break;
        }
        return c.get<double>("x");
    });
    REQUIRE(result.count(ht::TrialStatus::Stopped) > 0);
    const auto cost = result.cost();
    CHECK(cost.billable_seconds_without_early_stopping == doctest::Approx(cost.billable_seconds));
}

TEST_CASE("progress and callbacks see every trial") {
    std::atomic<int> starts{0}, ends{0};
    ht::TunerOptions options{.max_jobs = 20, .max_parallel_jobs = 2};
    options.on_trial_start = [&](const ht::TrialRecord& r) {
        CHECK(r.status == ht::TrialStatus::Running);
        ++starts;
    };
    options.on_trial_end = [&](const ht::TrialRecord& r) {
        CHECK(r.status == ht::TrialStatus::Completed);
        ++ends;
    };
    ht::Tuner tuner(small_space(), ht::RandomSearch(), options);
    auto job = tuner.start(quadratic);
    auto result = job.wait();
    auto p = job.progress();
    CHECK(p.finished);
    CHECK(p.completed == 20);
    CHECK(p.started == 20);
    CHECK(p.running == 0);
    REQUIRE(p.best.has_value());
    CHECK(*p.best == result.best().objective);
    CHECK(starts == 20);
    CHECK(ends == 20);
    // A finished run's elapsed time is its length: it does not go on growing.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(job.progress().elapsed_seconds == p.elapsed_seconds);
    CHECK(p.elapsed_seconds <= result.setup().wall_seconds + 0.01);
}

TEST_CASE("progress() counts the trials paused at a rung, so that its counts add up to the trials started") {
    // Promotion-type ASHA pauses every trial that reaches a rung; progress() left them out, and
    // read "started 35, running 2, completed 0, stopped 0" with 33 waiting for a promotion.
    std::atomic<bool> seen{false};
    ht::Tuner tuner(small_space(), ht::ASHA({.min_resource = 1, .max_resource = 9}),
                    {.max_jobs = 30, .max_parallel_jobs = 1, .seed = 4, .progress = ht::ProgressBar::Never});
    auto job = tuner.start([&](const ht::Config& c, ht::Trial& trial) {
        if (trial.id() == 12)
            while (!seen) std::this_thread::sleep_for(1ms);  // held while the test reads progress()
        double v = 0.0;
        for (ht::Resource r = trial.resumed_from() + 1; r <= trial.budget(); ++r) {
            trial.report(r, v = quadratic(c) + 1.0 / static_cast<double>(r));
            if (trial.should_stop()) break;
        }
        return v;
    });
    while (job.progress().started < 13) std::this_thread::sleep_for(1ms);
    const ht::Progress p = job.progress();
    seen = true;
    CHECK(p.paused > 0);
    CHECK(p.running == 1);
    CHECK(p.started == p.running + p.paused + p.completed + p.stopped + p.failed);
    const ht::Result r = job.take_result();
    const ht::Progress end = job.progress();
    CHECK(end.paused == 0);
    CHECK(end.stopped == r.count(ht::TrialStatus::Stopped));
    CHECK(end.started == end.completed + end.stopped + end.failed);
}

TEST_CASE("a promoted trial's start callback comes after the end callback of its previous run") {
    // Promotion-type ASHA on four workers promotes paused trials while other workers are still
    // ending theirs: each trial's callbacks must alternate start, end, start, end (and one more end
    // when a trial left paused is stopped where it waits).
    std::map<ht::TrialId, int> running;  // the callbacks run one at a time
    std::map<ht::TrialId, bool> paused;
    std::vector<std::string> out_of_order;
    ht::TunerOptions options{.max_jobs = 200, .max_parallel_jobs = 4, .seed = 9};
    options.on_trial_start = [&](const ht::TrialRecord& r) {
        if (running[r.id]++ != 0) out_of_order.push_back(fmt::format("trial {} started while running", r.id));
        paused[r.id] = false;
    };
    options.on_trial_end = [&](const ht::TrialRecord& r) {
        const bool closing = std::exchange(paused[r.id], r.status == ht::TrialStatus::Paused);
        if (closing && r.status != ht::TrialStatus::Stopped)
            out_of_order.push_back(fmt::format("trial {} ended again as {}", r.id, ht::to_string(r.status)));
        if (!closing && --running[r.id] != 0)
            out_of_order.push_back(fmt::format("trial {} ended while not running", r.id));
        // A slow callback: the workers queue up behind it, which is where the order was lost.
        std::this_thread::sleep_for(std::chrono::microseconds(300));
    };
    ht::Tuner tuner(small_space(), ht::ASHA({.min_resource = 1, .max_resource = 27}), options);
    auto result = tuner.fit([](const ht::Config& c, ht::Trial& trial) {
        double loss = 0.0;
        for (ht::Resource step = trial.resumed_from() + 1; step <= trial.budget() && !trial.should_stop(); ++step)
            trial.report(step, loss = quadratic(c) + 1.0 / static_cast<double>(step));
        return loss;
    });
    std::size_t promotions = 0;
    for (const auto& t : result.trials())
        for (const auto& d : t.decisions) promotions += d.kind == ht::DecisionRecord::Kind::Promote;
    CHECK(promotions > 20);
    CHECK(out_of_order.empty());
    if (!out_of_order.empty()) MESSAGE(out_of_order.front());
}

TEST_CASE("after take_result() the job refuses the calls that would read the result it handed over") {
    ht::Tuner tuner(small_space(), ht::RandomSearch(), {.max_jobs = 12, .max_parallel_jobs = 2});
    auto job = tuner.start(quadratic);
    const ht::Result result = job.take_result();
    CHECK(result.trials().size() == 12);
    for (const char* call : {"wait", "take_result", "result_so_far"}) {
        CAPTURE(call);
        const std::string want = fmt::format(
            "TuningJob::{}() after take_result(), which handed the result over: use the Result it returned", call);
        try {
            if (std::string_view(call) == "wait") (void)job.wait();
            else if (std::string_view(call) == "take_result") (void)job.take_result();
            else (void)job.result_so_far();
            FAIL("an empty result was given instead of an error");
        } catch (const ht::Error& e) {
            CHECK(std::string(e.what()) == want);
        }
    }
    const ht::Progress p = job.progress();
    CHECK(p.finished);
    CHECK(p.started == 12);
    CHECK(p.completed == 12);
}

TEST_CASE("a callback that throws ends the run with the reason, keeping what completed") {
    ht::TunerOptions options{.max_jobs = 50};
    options.on_trial_end = [](const ht::TrialRecord& r) {
        if (r.id == 3) throw std::runtime_error("disk full");
    };
    ht::Tuner tuner(small_space(), ht::RandomSearch(), options);
    auto result = tuner.fit(quadratic);
    CHECK(result.stop_reason() == "on_trial_end threw for trial 3: disk full");
    CHECK(result.count(ht::TrialStatus::Completed) == 4);

    ht::TunerOptions starting{.max_jobs = 50};
    starting.on_trial_start = [](const ht::TrialRecord& r) {
        if (r.id == 2) throw 42;
    };
    auto started = ht::Tuner(small_space(), ht::RandomSearch(), starting).fit(quadratic);
    CHECK(started.stop_reason() == "on_trial_start threw a non-standard exception for trial 2");
}

TEST_CASE("a failure while the run is stopping already is kept as a warning, not lost") {
    ht::TunerOptions options{.max_jobs = 10, .max_parallel_jobs = 2, .target_objective = 0.5};
    options.on_trial_end = [](const ht::TrialRecord& r) {
        if (r.id == 1) throw std::runtime_error("disk full at the end");
    };
    ht::Tuner tuner(small_space(), ht::RandomSearch(), options);
    std::atomic<bool> second_started{false};
    auto result = tuner.fit([&](const ht::Config&, ht::Trial& trial) {
        if (trial.id() == 0) {  // reaches the target while trial 1 runs
            while (!second_started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            return 0.0;
        }
        second_started = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        return 1.0;
    });
    CHECK(result.stop_reason() == "target objective 0.5 reached by trial 0");
    const auto& w = result.setup().warnings;
    CHECK(std::find(w.begin(), w.end(), "on_trial_end threw for trial 1: disk full at the end") != w.end());
}

namespace {

// What `run` writes to stderr, as a terminal shows it: a carriage return goes back to the line's
// start and later characters overwrite, a newline starts a new line; trailing spaces dropped.
template <class F>
std::vector<std::string> stderr_as_terminal(F run) {
    const auto path = std::filesystem::temp_directory_path() / fmt::format("hypertune_stderr_{}.txt", ::getpid());
    std::fflush(stderr);
    const int saved = ::dup(STDERR_FILENO);
    const int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(saved >= 0);
    REQUIRE(file >= 0);
    ::dup2(file, STDERR_FILENO);
    ::close(file);
    run();
    std::fflush(stderr);
    ::dup2(saved, STDERR_FILENO);
    ::close(saved);
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::filesystem::remove(path);
    std::vector<std::string> lines(1);
    std::size_t column = 0;
    for (char ch : bytes) {
        if (ch == '\r') {
            column = 0;
        } else if (ch == '\n') {
            lines.emplace_back();
            column = 0;
        } else {
            std::string& line = lines.back();
            if (column < line.size()) line[column] = ch;
            else line.push_back(ch);
            ++column;
        }
    }
    for (auto& line : lines) line.erase(line.find_last_not_of(' ') + 1);
    std::erase_if(lines, [](const std::string& l) { return l.empty(); });
    return lines;
}

}  // namespace

TEST_CASE("the progress line: what a callback prints is a line of its own, no old text is left, the last line counts every trial") {
    ht::TunerOptions options{.max_jobs = 6, .progress = ht::ProgressBar::Always};
    options.on_trial_end = [](const ht::TrialRecord& r) { std::fprintf(stderr, "trial %d done\n", static_cast<int>(r.id)); };
    ht::Result result;
    const auto lines = stderr_as_terminal([&] {
        result = ht::Tuner(small_space(), ht::RandomSearch(), options).fit([](const ht::Config&, ht::Trial& trial) {
            std::this_thread::sleep_for(120ms);  // past the line's 0.1 s between redraws
            // A best that gets shorter as text: 1.23457e-05, then -1, -2...
            return trial.id() == 0 ? 1.23456789e-05 : -static_cast<double>(trial.id());
        });
    });
    REQUIRE(lines.size() == 7);
    for (std::size_t i = 0; i < 6; ++i) CHECK(lines[i] == fmt::format("trial {} done", i));  // "[hypertune] ...trial 0 done" before
    CHECK(lines.back().starts_with("[hypertune] 6/6 trials, 0 running, 0 failed, best -5 (trial 5), "));
    CHECK(lines.back().ends_with("ms"));  // nothing of a longer line before ("... 451.6ms   50.7ms")

    // Trials left paused at a rung end with the run: the last line counts them, as the result does
    // (it said 2/40 for 29 trials). Promotion-type ASHA pauses most trials at the first rung.
    ht::Result paused;
    ht::TunerOptions stopping{.max_jobs = 40, .max_parallel_jobs = 2, .progress = ht::ProgressBar::Always};
    const auto last = stderr_as_terminal([&] {
        ht::Tuner tuner(small_space(), ht::ASHA({.max_resource = 27}), stopping);
        auto job = tuner.start([&](const ht::Config& c, ht::Trial& trial) {
            for (ht::Resource s = trial.resumed_from() + 1; s <= trial.budget(); ++s) {
                trial.report(s, quadratic(c) + 1.0 / static_cast<double>(s));
                if (trial.should_stop()) break;
                std::this_thread::sleep_for(2ms);
            }
            return quadratic(c);
        });
        while (job.progress().completed + job.progress().stopped < 8) std::this_thread::sleep_for(1ms);
        job.stop();  // trials paused at their rungs end with the run
        paused = job.take_result();
    }).back();
    CHECK(last.starts_with(fmt::format("[hypertune] {}/40 trials, 0 running, ", paused.trials().size())));
}

TEST_CASE("a failure while the run ends of itself (trials still running, nothing left to start) is kept as a warning") {
    // Trial 0 ends first and its worker finds max_jobs reached; the last trial's callback and
    // observer then throw: the result said "max_jobs reached" with no warning at all.
    for (const bool observer : {false, true}) {
        CAPTURE(observer);
        ht::TunerOptions options{.max_jobs = 2, .max_parallel_jobs = 2, .progress = ht::ProgressBar::Never};
        if (observer)
            options.on_event = [](const ht::RunEvent& e, const ht::RunState&) {
                if (const auto* ended = std::get_if<ht::TrialEnded>(&e); ended && ended->trial == 1)
                    throw std::runtime_error("observer failed");
            };
        else
            options.on_trial_end = [](const ht::TrialRecord& r) {
                if (r.id == 1) throw std::runtime_error("callback failed");
            };
        ht::Tuner tuner(small_space(), ht::RandomSearch(), options);
        auto result = tuner.fit([](const ht::Config&, ht::Trial& trial) {
            if (trial.id() == 1) std::this_thread::sleep_for(std::chrono::milliseconds(200));
            return 1.0;
        });
        CHECK(result.stop_reason() == "max_jobs reached");
        CHECK(result.count(ht::TrialStatus::Completed) == 2);
        const auto& w = result.setup().warnings;
        CHECK(std::find(w.begin(), w.end(),
                        observer ? "the on_event observer threw: observer failed"
                                 : "on_trial_end threw for trial 1: callback failed") != w.end());
    }
}

TEST_CASE("a scheduler that stops a trial without recording why is warned about, once") {
    class SilentCut : public ht::Scheduler {
    public:
        std::string name() const override { return "SilentCut"; }
        std::optional<ht::Resource> max_resource() const override { return 10; }

    protected:
        ht::Suggestion next(const ht::TrialBudget& budget) override { return start_new(budget, 10); }
        ht::Decision on_report(ht::TrialId, ht::Resource step, double) override {
            return step == 2 ? ht::Decision::Stop : ht::Decision::Continue;
        }
    };
    const auto trainer = [](const ht::Config& c, ht::Trial& trial) {
        double loss = 0.0;
        for (ht::Resource step = 1; step <= trial.budget() && !trial.should_stop(); ++step)
            trial.report(step, loss = quadratic(c));
        return loss;
    };
    const auto silent = ht::Tuner(small_space(), SilentCut(), {.max_jobs = 4}).fit(trainer);
    CHECK(silent.count(ht::TrialStatus::Stopped) == 4);
    CHECK(silent.setup().warnings ==
          std::vector<std::string>{"SilentCut stopped trial 0 at step 2 without recording why: the result shows it "
                                   "Stopped with no decision (a custom scheduler records one with decide() before it "
                                   "returns Stop)"});
    // One that records its stops says nothing.
    const auto explained = ht::Tuner(small_space(), CutAtStepTwo(-1.0), {.max_jobs = 4}).fit(trainer);
    CHECK(explained.count(ht::TrialStatus::Stopped) == 4);
    CHECK(explained.setup().warnings.empty());
    // A trial that goes on after its recorded Stop hears Stop again at each report: that is the
    // ignored stop's warning alone, not also one that the scheduler gave no reason.
    const auto ignores_stops = [](const ht::Config& c, ht::Trial& trial) {
        for (ht::Resource step = 1; step <= trial.budget(); ++step)
            trial.report(step, quadratic(c) + 1.0 / static_cast<double>(step));
        return quadratic(c);
    };
    const auto ignoring =
        ht::Tuner(small_space(), ht::ASHA({.min_resource = 1, .max_resource = 9, .type = ht::HalvingType::Stop}),
                  {.max_jobs = 8})
            .fit(ignores_stops);
    // Where several went on, a last warning counts them: one name did not say that early stopping
    // saved nothing on any of them.
    std::size_t went_on = 0;
    for (const auto& t : ignoring.trials())
        for (const auto& d : t.decisions)
            if (d.kind == ht::DecisionRecord::Kind::Stop && d.resource < t.resource_used) {
                ++went_on;
                break;
            }
    REQUIRE(went_on > 1);
    REQUIRE(ignoring.setup().warnings.size() == 2);
    CHECK(ignoring.setup().warnings.front().find("after ASHA told it to stop at step") != std::string::npos);
    CHECK(ignoring.setup().warnings.back() ==
          fmt::format("{} trials went on training after ASHA told them to stop; what they trained after the stop was "
                      "spent all the same",
                      went_on));
    // ASHA-wait holds a trial with Stop at the report and records the hold (a Pause) when told the
    // run ended: explained, so nothing to warn about (it warned on every run).
    const auto waiting =
        ht::Tuner(small_space(),
                  ht::ASHA({.min_resource = 1, .max_resource = 9, .type = ht::HalvingType::Stop, .wait_for_peers = true}),
                  {.max_jobs = 9})
            .fit(trainer);
    CHECK(waiting.count(ht::TrialStatus::Completed) > 0);
    CHECK(waiting.setup().warnings.empty());
    // A trial held so that ignores it and trains to its budget is Completed: the ignored stop is
    // named, and no warning says the result shows it Stopped.
    const auto held_but_going_on =
        ht::Tuner(small_space(),
                  ht::ASHA({.min_resource = 1, .max_resource = 9, .type = ht::HalvingType::Stop, .wait_for_peers = true}),
                  {.max_jobs = 4})
            .fit(ignores_stops);
    REQUIRE(held_but_going_on.setup().warnings.size() == 1);
    CHECK(held_but_going_on.setup().warnings.front().find("after ASHA-wait told it to stop at step") != std::string::npos);
}

TEST_CASE("a promoted trial's runs past max_trial_seconds count it once, and a report before its resume step says so") {
    // 3 trials, each run (first, then two promotions) past the limit: the warning said 9 trials.
    const auto slow = ht::Tuner(small_space(), ht::ASHA({.min_resource = 1, .max_resource = 9, .reduction_factor = 3}),
                                {.max_jobs = 3, .max_trial_seconds = 0.02})
                          .fit([](const ht::Config&, ht::Trial& t) {
                              while (!t.should_stop()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
                              return 1.0;
                          });
    const auto& w = slow.setup().warnings;
    CHECK(std::count_if(w.begin(), w.end(), [](const std::string& x) { return x.find("trials ran past") != std::string::npos; }) == 1);
    CHECK(std::find(w.begin(), w.end(), "3 trials ran past max_trial_seconds = 0.02 s") != w.end());
    // A promoted trial that reports from step 1 again: the message names the step it resumed from.
    const auto again = ht::Tuner(small_space(), ht::ASHA({.min_resource = 1, .max_resource = 9, .reduction_factor = 3}),
                                 {.max_jobs = 6})
                           .fit([](const ht::Config& c, ht::Trial& t) {
                               for (ht::Resource s = 1; s <= t.budget(); ++s) {
                                   t.report(s, quadratic(c));
                                   t.save_checkpoint("state");
                                   if (t.should_stop()) break;
                               }
                               return quadratic(c);
                           });
    std::size_t named = 0;
    for (const auto& t : again.trials())
        named += t.failure_reason.find("but this run of it resumed from step 1 (resumed_from()): train and report the "
                                       "steps after it") != std::string::npos;
    CHECK(named > 0);
}

TEST_CASE("an absurd max_parallel_jobs is refused by name, and no more workers start than max_jobs") {
    CHECK_THROWS_WITH_AS(ht::Tuner(small_space(), ht::RandomSearch(), {.max_jobs = 20, .max_parallel_jobs = 1000000}),
                         "TunerOptions: max_parallel_jobs must be <= 1024 (one thread each), got 1000000",
                         ht::InvalidArgument);
    CHECK_THROWS_AS(ht::Tuner(small_space(), ht::RandomSearch(), {.max_jobs = 20, .max_parallel_jobs = 10000}),
                    ht::InvalidArgument);
    ht::Tuner tuner(small_space(), ht::RandomSearch(), {.max_jobs = 20, .max_parallel_jobs = 500});
    CHECK(tuner.options().max_parallel_jobs == 20);
    auto result = tuner.fit(quadratic);
    CHECK(result.count(ht::TrialStatus::Completed) == 20);
    CHECK(result.setup().max_parallel_jobs == 20);
}

TEST_CASE("an objective that ignores should_stop() is warned about, and a trial that ran its full budget is Completed") {
    // CutAtStepTwo stops trials whose loss at step 2 is above the cut; this objective never looks.
    ht::Tuner tuner(small_space(), CutAtStepTwo(1.0), {.max_jobs = 30, .max_parallel_jobs = 2, .seed = 4});
    auto result = tuner.fit([](const ht::Config& c, ht::Trial& trial) {
        double loss = 0.0;
        for (ht::Resource step = 1; step <= trial.budget(); ++step) trial.report(step, loss = quadratic(c));
        return loss;
    });
    std::size_t told_to_stop = 0;
    for (const auto& t : result.trials()) {
        if (t.decisions.empty()) continue;
        ++told_to_stop;
        CHECK(t.status == ht::TrialStatus::Completed);  // it trained to its budget all the same
        CHECK(t.resource_used == 10);
    }
    REQUIRE(told_to_stop > 0);
    CHECK(result.count(ht::TrialStatus::Stopped) == 0);
    const auto& w = result.setup().warnings;
    REQUIRE(w.size() == 1 + (told_to_stop > 1 ? 1 : 0));
    CHECK(w.front().find("after CutAtStepTwo told it to stop at step 2: check trial.should_stop()") != std::string::npos);
    if (told_to_stop > 1)
        CHECK(w.back() == fmt::format("{} trials went on training after CutAtStepTwo told them to stop; what they "
                                      "trained after the stop was spent all the same",
                                      told_to_stop));
}

TEST_CASE("a trainer that reports past its budget under run-to-completion is named once, and the full resource stays max_resource") {
    auto past = [](ht::Resource steps) {
        return [steps](const ht::Config& c, ht::Trial& trial) {
            double loss = 0.0;
            for (ht::Resource step = 1; step <= steps && !trial.should_stop(); ++step) trial.report(step, loss = quadratic(c));
            return loss;
        };
    };
    auto result = ht::Tuner(small_space(), ht::RandomSearch({.max_resource = 5}), {.max_jobs = 3}).fit(past(8));
    REQUIRE(result.setup().warnings.size() == 1);
    CHECK(result.setup().warnings.front() ==
          "trial 0 reported step 6 past its budget of 5, and RandomSearch let it go on: the trainer should train up to "
          "trial.budget() and return (the resource it used counts)");
    for (const auto& t : result.trials()) {
        CHECK(t.status == ht::TrialStatus::Completed);  // nothing stops it: it ran as its trainer chose
        CHECK(t.resource_used == 8);
    }
    CHECK(result.cost().resource_used == 24);
    CHECK(result.cost().full_resource == 5);  // what one trial has when nothing stops it, not the overrun
    // RandomSearch's default budget of 1 puts no resource in play: per-epoch reports are the usual
    // case there, and nothing is said.
    CHECK(ht::Tuner(small_space(), ht::RandomSearch(), {.max_jobs = 3}).fit(past(8)).setup().warnings.empty());
}

TEST_CASE("a trainer that overruns its budget under a multi-fidelity scheduler trained in full: Completed, not stopped early, and named") {
    // Four epochs whatever the budget (3): the scheduler stops the report of step 4, which ended
    // trials that had trained in full as "stopped early", with no warning.
    auto overrun = [](const ht::Config& c, ht::Trial& trial) {
        double loss = 0.0;
        for (ht::Resource e = trial.resumed_from() + 1; e <= 4; ++e) {
            trial.report(e, loss = quadratic(c) + 1.0 / static_cast<double>(e));
            if (trial.should_stop()) break;
        }
        return loss;
    };
    for (const int which : {0, 1, 2}) {
        CAPTURE(which);
        ht::AnyStrategy strategy =
            which == 0   ? ht::AnyStrategy(ht::ASHA({.min_resource = 1, .max_resource = 3, .type = ht::HalvingType::Stop}))
            : which == 1 ? ht::AnyStrategy(ht::ASHA({.min_resource = 1, .max_resource = 3}))
                         : ht::AnyStrategy(ht::Hyperband({.min_resource = 1, .max_resource = 3,
                                                          .mode = ht::HyperbandMode::Synchronous}));
        const std::string name = strategy.name();
        const auto result = ht::Tuner(small_space(), std::move(strategy), {.max_jobs = 12, .max_parallel_jobs = 1,
                                                                           .progress = ht::ProgressBar::Never})
                                .fit(overrun);
        std::size_t overran = 0;
        for (const auto& t : result.trials()) {
            CAPTURE(t.id);
            if (t.curve.empty() || t.curve.back().step <= 3) continue;  // stopped at a rung, or waiting
            ++overran;
            CHECK(t.status == ht::TrialStatus::Completed);
            CHECK_FALSE(ht::Result::stopped_early(t));
            CHECK(t.resource_used == 4);  // what it trained counts
        }
        CHECK(overran > 0);
        CHECK(result.has_best());
        CHECK(result.best().resource_used >= 3);
        CHECK(result.cost().full_resource == 3);
        const auto& w = result.setup().warnings;
        CHECK(std::count_if(w.begin(), w.end(), [&](const std::string& m) {
                  return m.find("past its budget of") != std::string::npos &&
                         m.find(name + " told it to stop: the trainer should train up to trial.budget() and return") !=
                             std::string::npos;
              }) == 1);
    }
}

TEST_CASE("a trial stopped by the strategy at its last step trained in full: it is Completed and best() can pick it") {
    // The median rule judges the final report too; trial 1's last value is better than trial 0's,
    // but its running average is above the median of trial 0's, so the rule says stop at step 5 of 5.
    ht::Tuner tuner(small_space(), ht::MedianStopping(ht::RandomSearch({.max_resource = 5}), {.min_trials = 1}),
                    {.max_jobs = 2});
    const auto result = tuner.fit([](const ht::Config&, ht::Trial& trial) {
        const double last = trial.id() == 0 ? 3.0 : 1.0;
        for (ht::Resource s = 1; s <= 5; ++s) {
            trial.report(s, s < 5 ? 0.1 : last);
            if (trial.should_stop()) break;
        }
        return last;
    });
    REQUIRE(result.trials().size() == 2);
    CHECK(result.trials()[0].decisions.empty());
    REQUIRE(result.trials()[1].decisions.size() == 1);  // the decision stays on record
    CHECK(result.trials()[1].decisions[0].resource == 5);
    CHECK(result.describe(result.trials()[1].decisions[0]).starts_with("Stop at step 5: objective 1 vs threshold 0.68 over 1 peer (worse than the median of the running averages of 1 other trial at step 5)"));
    CHECK(result.trials()[1].status == ht::TrialStatus::Completed);  // it was Stopped, and left out of best()
    CHECK(result.trials()[1].resource_used == 5);
    CHECK(result.best().id == 1);
    // With a budget of 1 (no resource in play, a trainer reports every epoch), a stop at step 1 is
    // an early stop like any other.
    ht::Tuner epochs(small_space(), ht::MedianStopping(ht::RandomSearch{}, {.min_trials = 1}), {.max_jobs = 2});
    const auto cut = epochs.fit([](const ht::Config&, ht::Trial& trial) {
        double v = 0.0;
        for (ht::Resource s = 1; s <= 5; ++s) {
            v = trial.id() == 0 ? 0.1 : 1.0;
            trial.report(s, v);
            if (trial.should_stop()) break;
        }
        return v;
    });
    CHECK(cut.trials()[1].status == ht::TrialStatus::Stopped);
    CHECK(cut.trials()[1].resource_used == 1);
}

TEST_CASE("an objective that returns once told to stop is Stopped with no warning") {
    ht::Tuner tuner(small_space(), CutAtStepTwo(1.0), {.max_jobs = 30, .max_parallel_jobs = 2, .seed = 4});
    auto result = tuner.fit([](const ht::Config& c, ht::Trial& trial) {
        double loss = 0.0;
        for (ht::Resource step = 1; step <= trial.budget() && !trial.should_stop(); ++step)
            trial.report(step, loss = quadratic(c));
        return loss;
    });
    CHECK(result.count(ht::TrialStatus::Stopped) > 0);
    for (const auto& t : result.trials())
        if (t.status == ht::TrialStatus::Stopped) CHECK(t.resource_used == 2);
    CHECK(result.setup().warnings.empty());
}

TEST_CASE("a Trial used after its objective returned: report() names the trial, should_stop() is true") {
    // One worker, so trial 0's objective has returned before trial 1's starts; the objective keeps
    // the previous trial as a thread left behind would. Before the Trial outlived its call, this
    // read a destroyed object (AddressSanitizer: stack-use-after-scope).
    ht::Trial* previous = nullptr;
    std::vector<std::string> late_errors;
    std::vector<bool> late_stops;
    ht::Tuner tuner(small_space(), ht::RandomSearch(), {.max_jobs = 3, .max_parallel_jobs = 1, .seed = 2});
    auto result = tuner.fit([&](const ht::Config& c, ht::Trial& trial) {
        if (previous) {
            late_stops.push_back(previous->should_stop());
            try {
                previous->report(previous->last_step() + 1, 0.5);
            } catch (const ht::Error& e) {
                late_errors.emplace_back(e.what());
            }
        }
        trial.report(1, quadratic(c));
        previous = &trial;
        return quadratic(c);
    });
    CHECK(result.count(ht::TrialStatus::Completed) == 3);
    CHECK(late_stops == std::vector<bool>{true, true});
    REQUIRE(late_errors.size() == 2);
    CHECK(late_errors[0] ==
          "trial 0: report(step 2) called after its objective returned; a Trial is only usable during the objective "
          "call that received it");
    CHECK(late_errors[1].find("trial 1: report(step 2)") == 0);
    // The late reports reached neither the run nor the records.
    for (const auto& t : result.trials()) CHECK(t.curve.size() == 1);
}

TEST_CASE("what a trial trained is counted as it reported: a failure with no report trained nothing, a short return is warned about") {
    ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0)};
    const ht::TunerOptions options{.max_jobs = 4, .seed = 2, .progress = ht::ProgressBar::Never};
    // Failures: nothing reported, nothing counted (it was the budget, 50 a trial).
    auto failed = ht::Tuner(space, ht::RandomSearch({.max_resource = 50}), options)
                      .fit([](const ht::Config&, ht::Trial&) -> double { throw std::runtime_error("no GPU"); });
    CHECK(failed.count(ht::TrialStatus::Failed) == 4);
    for (const auto& t : failed.trials()) CHECK(t.resource_used == 0);
    CHECK(failed.cost().resource_used == 0);
    // Every trial failed: one warning says so, with the first one's reason.
    CHECK(failed.setup().warnings == std::vector<std::string>{"all 4 trials failed; the first, trial 0: the objective "
                                                               "threw: no GPU"});
    // A reason that names its trial already is not given the name twice.
    auto nan = ht::Tuner(space, ht::RandomSearch({.max_resource = 2}), options).fit([](const ht::Config&, ht::Trial& trial) {
        trial.report(1, std::nan(""));
        return 1.0;
    });
    REQUIRE(nan.setup().warnings.size() == 1);
    CHECK(nan.setup().warnings.front().starts_with("all 4 trials failed; the first, trial 0: reported a non-finite"));
    // A trainer that stops at step 2 of its budget 9 without being told: counted to its budget
    // (as one that reports less often is), and warned about once.
    auto short_return = ht::Tuner(space, ht::RandomSearch({.max_resource = 9}), options)
                            .fit([](const ht::Config& c, ht::Trial& trial) {
                                trial.report(1, c.get<double>("x"));
                                trial.report(2, c.get<double>("x"));
                                return c.get<double>("x");
                            });
    for (const auto& t : short_return.trials()) CHECK(t.resource_used == 9);
    CHECK(short_return.setup().warnings ==
          std::vector<std::string>{"trial 0 returned after reporting step 2 of its budget 9 without being told to "
                                   "stop, and counts as trained to its budget: right for a trainer that reports less "
                                   "often than every unit, but one that stops early (a loop that ignores "
                                   "trial.budget(), a command without {budget}) trains less than the tuner counts"});
    // Reaching its budget, no warning.
    auto full = ht::Tuner(space, ht::RandomSearch({.max_resource = 3}), options).fit([](const ht::Config& c, ht::Trial& trial) {
        for (ht::Resource s = 1; s <= trial.budget(); ++s) trial.report(s, c.get<double>("x"));
        return c.get<double>("x");
    });
    CHECK(full.setup().warnings.empty());
}

TEST_CASE("a first report at step 0 fails its trial, saying that steps start at 1") {
    ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0)};
    auto r = ht::Tuner(space, ht::RandomSearch({.max_resource = 3}), {.max_jobs = 1, .progress = ht::ProgressBar::Never})
                 .fit([](const ht::Config& c, ht::Trial& trial) {
                     trial.report(0, c.get<double>("x"));
                     return c.get<double>("x");
                 });
    REQUIRE(r.trials().size() == 1);
    CHECK(r.trials()[0].failure_reason ==
          "trial 0: reported step 0; steps start at 1 (the units trained so far: epochs, boosting rounds)");
}

TEST_CASE("a retried trial begins with an empty checkpoint folder: what the failed attempt left there is gone") {
    ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0)};
    std::atomic<int> calls{0};
    std::vector<std::string> seen;  // the folder's files at each call's start (one worker)
    auto r = ht::Tuner(space, ht::RandomSearch({.max_resource = 3}),
                       {.max_jobs = 1, .max_retries = 1, .progress = ht::ProgressBar::Never})
                 .fit([&](const ht::Config& c, ht::Trial& trial) {
                     const std::filesystem::path folder = trial.checkpoint_dir();
                     std::string files;
                     for (const auto& e : std::filesystem::directory_iterator(folder)) files += e.path().filename().string();
                     seen.push_back(files);
                     std::ofstream(folder / "epoch") << "2";  // then the trainer dies
                     if (calls++ == 0) throw std::runtime_error("node lost");
                     for (ht::Resource s = 1; s <= trial.budget(); ++s) trial.report(s, c.get<double>("x"));
                     return c.get<double>("x");
                 });
    CHECK(seen == std::vector<std::string>{"", ""});
    REQUIRE(r.trials().size() == 1);
    CHECK(r.trials()[0].status == ht::TrialStatus::Completed);
    CHECK(r.trials()[0].retries == 1);
    CHECK(r.trials()[0].curve.size() == 3);
}

TEST_CASE("the cost's resource total saturates instead of overflowing on absurd steps") {
    ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0)};
    auto r = ht::Tuner(space, ht::RandomSearch({.max_resource = 3}), {.max_jobs = 3, .progress = ht::ProgressBar::Never})
                 .fit([](const ht::Config& c, ht::Trial& trial) {
                     trial.report(1, c.get<double>("x"));
                     trial.report(std::numeric_limits<ht::Resource>::max(), c.get<double>("x"));
                     return c.get<double>("x");
                 });
    CHECK(r.cost().resource_used == std::numeric_limits<ht::Resource>::max());
}

TEST_CASE("a job waited for, or taken, from two threads at once: both waits return, one take succeeds") {
    // Both threads joined the same worker threads (undefined: it hung); both takes passed the
    // check and the second moved out of an empty result (a crash).
    for (int round = 0; round < 20; ++round) {
        CAPTURE(round);
        ht::Tuner tuner(small_space(), ht::RandomSearch(), {.max_jobs = 4, .max_parallel_jobs = 2});
        auto job = tuner.start([](const ht::Config& c) {
            std::this_thread::sleep_for(2ms);
            return quadratic(c);
        });
        std::atomic<std::size_t> seen{0};
        std::thread other([&] { seen += job.wait().trials().size(); });
        seen += job.wait().trials().size();
        other.join();
        CHECK(seen == 8);
        std::atomic<int> taken{0}, refused{0};
        auto take = [&] {
            try {
                taken += job.take_result().trials().size() == 4 ? 1 : 0;
            } catch (const ht::Error& e) {
                refused += std::string_view(e.what()).starts_with("TuningJob::take_result() after take_result()") ? 1 : 0;
            }
        };
        std::thread second(take);
        take();
        second.join();
        CHECK(taken == 1);
        CHECK(refused == 1);
    }
}

TEST_CASE("a trial that fails once the run is stopping is not retried: nothing new starts after a stop") {
    // max_runtime_seconds passes inside the first call; each retry was a new call, six in all.
    std::atomic<int> calls{0};
    const auto result = ht::Tuner(small_space(), ht::RandomSearch(),
                                  {.max_jobs = 10, .max_parallel_jobs = 1, .max_runtime_seconds = 0.05, .max_retries = 5,
                                   .progress = ht::ProgressBar::Never})
                            .fit([&](const ht::Config&, ht::Trial&) -> double {
                                ++calls;
                                std::this_thread::sleep_for(100ms);
                                throw std::runtime_error("out of memory");
                            });
    CHECK(calls == 1);
    CHECK(result.stop_reason() == "max_runtime of 0.05s reached");
    REQUIRE(result.trials().size() == 1);
    CHECK(result.trials()[0].status == ht::TrialStatus::Failed);
}

TEST_CASE("a trial that reports nothing and returns when told its time is up was cut, not trained in full") {
    // It counted as Completed at its full budget, became the best and met the target.
    const auto result =
        ht::Tuner(small_space(), ht::RandomSearch({.max_resource = 10}),
                  {.max_jobs = 3, .max_parallel_jobs = 1, .max_trial_seconds = 0.02, .target_objective = 0.5,
                   .progress = ht::ProgressBar::Never})
            .fit([](const ht::Config&, ht::Trial& trial) {
                int epochs = 1;
                for (; epochs < 1000 && !trial.should_stop(); ++epochs) std::this_thread::sleep_for(1ms);
                return 1.0 / epochs;
            });
    CHECK(result.trials().size() == 3);
    CHECK(result.stop_reason() == "max_jobs reached");
    for (const auto& t : result.trials()) {
        CHECK(t.status == ht::TrialStatus::Stopped);
        CHECK(t.resource_used == 0);
    }
    REQUIRE(!result.setup().warnings.empty());
    CHECK(result.setup().warnings.front().ends_with(
        " and was stopped before it reported a step (it counts as cut short, not trained in full): report each step"));
}
