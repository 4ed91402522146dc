// SPDX-License-Identifier: MIT
// The Scheduler base class and the Sampler role: ids and the budget are the base's, a scheduler
// that breaks them gets a StrategyError naming it (standalone and through the tuner, without
// spinning), hooks have defaults, decisions reach the sampler and the sink in order, and every
// scheduler takes any sampler.

#include <hypertune/hypertune.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace ht = hypertune;

namespace {

ht::SearchSpace two_d() { return ht::SearchSpace{ht::ContinuousParameter("x", 0.0, 1.0), ht::IntegerParameter("n", 1, 4)}; }

// A custom scheduler that forgets the budget: it always starts the trial with the next id.
class IgnoresBudget : public ht::Scheduler {
public:
    std::string name() const override { return "IgnoresBudget"; }

protected:
    ht::Suggestion next(const ht::TrialBudget& budget) override {
        return ht::Suggestion::run(budget.next_id, ht::RandomSampler::sample(space(), 0, budget.next_id), 1);
    }
};

// A custom scheduler that counts its own ids, wrongly: it skips one.
class SkipsAnId : public ht::Scheduler {
public:
    std::string name() const override { return "SkipsAnId"; }

protected:
    ht::Suggestion next(const ht::TrialBudget& budget) override {
        return ht::Suggestion::run(budget.next_id + 1, ht::RandomSampler::sample(space(), 0, 0), 1);
    }
};

// A custom scheduler that starts trial 0 (budget 3 of max_resource 9), then breaks the contract in
// the way `how` names on every later suggestion.
class Misbehaves : public ht::Scheduler {
public:
    explicit Misbehaves(std::string how) : how_(std::move(how)) {}
    std::string name() const override { return "Misbehaves"; }
    std::optional<ht::Resource> max_resource() const override { return 9; }

protected:
    ht::Suggestion next(const ht::TrialBudget& b) override {
        if (b.next_id == 0) {
            auto s = start_new(b, 3);
            first_ = s.config;
            return s;
        }
        const ht::Config fresh = ht::RandomSampler::sample(space(), 5, b.next_id);
        if (how_ == "empty configuration") return ht::Suggestion::run(b.next_id, ht::Config{}, 3);
        if (how_ == "another space")
            return ht::Suggestion::run(
                b.next_id,
                ht::SearchSpace{ht::ContinuousParameter("y", 0.0, 1.0), ht::IntegerParameter("n", 1, 4)}.decode(
                    std::vector<double>{0.5, 0.5}),
                3);
        if (how_ == "budget 0") return ht::Suggestion::run(b.next_id, fresh, 0);
        if (how_ == "budget past max_resource") return ht::Suggestion::run(b.next_id, fresh, 10);
        if (how_ == "new trial resumed") return ht::Suggestion::run(b.next_id, fresh, 3, 1);
        if (how_ == "resumed at its budget") return ht::Suggestion::run(0, first_, 3, 3);
        if (how_ == "again, no further") return ht::Suggestion::run(0, first_, 3);
        if (how_ == "another configuration") return ht::Suggestion::run(0, fresh, 9, 3);
        if (how_ == "resumed past where it got to") return ht::Suggestion::run(0, first_, 9, 5);
        if (how_ == "a value outside the space") {  // a sampler of the user's own, building by hand
            auto layout = std::make_shared<const std::vector<ht::ParameterSpec>>(space().parameters());
            return ht::Suggestion::run(b.next_id, ht::Config(layout, {5.0, std::int64_t{2}}), 3);
        }
        if (how_ == "an integer out of range") {
            auto layout = std::make_shared<const std::vector<ht::ParameterSpec>>(space().parameters());
            return ht::Suggestion::run(b.next_id, ht::Config(layout, {0.5, std::int64_t{99}}), 3);
        }
        if (how_ == "a decision about a trial never handed out") {
            decide({.trial = b.next_id + 5, .kind = ht::DecisionRecord::Kind::Stop, .reason = "made up"});
            return start_new(b, 3);
        }
        return ht::Suggestion::run(0, first_, 9, 3);  // "while running": a promotion, too early
    }

private:
    std::string how_;
    ht::Config first_;
};

// A sampler that writes down every hook call it gets, in order.
class Recorder : public ht::Sampler {
public:
    explicit Recorder(std::vector<std::string>* log) : log_(log) {}
    std::string name() const override { return "Recorder"; }
    void start(const ht::SearchSpace& space, const ht::SamplerContext& ctx) override {
        space_ = space;
        std::string line = fmt::format("start seed {} levels", ctx.seed);
        for (auto r : ctx.levels) line += fmt::format(" {}", r);
        log_->push_back(std::move(line));
    }
    std::optional<ht::Config> sample(ht::TrialId id) override {
        log_->push_back("sample " + std::to_string(id));
        return ht::RandomSampler::sample(space_, 9, id);
    }
    void on_report(ht::TrialId id, ht::Resource step, double) override {
        log_->push_back("report " + std::to_string(id) + "@" + std::to_string(step));
    }
    void on_result(ht::TrialId id, const ht::Outcome&) override { log_->push_back("result " + std::to_string(id)); }
    void on_decision(const ht::DecisionRecord& d) override {
        log_->push_back(std::string(ht::to_string(d.kind)) + " " + std::to_string(d.trial));
    }

private:
    std::vector<std::string>* log_;
    ht::SearchSpace space_;
};

// A sampler with a finite supply: three configurations, then none.
class ThreeOnly : public ht::Sampler {
public:
    std::string name() const override { return "ThreeOnly"; }
    void start(const ht::SearchSpace& space, const ht::SamplerContext&) override { space_ = space; }
    std::optional<ht::Config> sample(ht::TrialId id) override {
        if (id >= 3) return std::nullopt;
        return ht::RandomSampler::sample(space_, 1, id);
    }

private:
    ht::SearchSpace space_;
};

}  // namespace

TEST_CASE("a scheduler that starts a trial beyond the budget gets a StrategyError naming it") {
    IgnoresBudget s;
    s.start(two_d(), {.seed = 1, .max_trials = 2});
    CHECK(s.ask().trial == 0);
    CHECK(s.ask().trial == 1);
    CHECK_THROWS_WITH_AS(s.ask(),
                         "strategy 'IgnoresBudget' suggested new trial 2 beyond the budget of 2 new trials (max_jobs); "
                         "a scheduler may start a new trial only while TrialBudget::allows_new()",
                         ht::StrategyError);
    CHECK(s.trials_started() == 2);
}

TEST_CASE("a scheduler that names a trial never handed out gets a StrategyError") {
    SkipsAnId s;
    s.start(two_d(), {});
    CHECK_THROWS_WITH_AS(s.ask(), "strategy 'SkipsAnId' suggested trial 1, which was never started; the next new trial's id is 0",
                         ht::StrategyError);
}

TEST_CASE("ask, report or tell before start, or for a trial never handed out, is a StrategyError naming the strategy") {
    // Each built-in strategy, used directly (no tuner): a crash or a made-up trial before.
    std::vector<ht::AnyStrategy> strategies;
    strategies.emplace_back(ht::RandomSearch{});
    strategies.emplace_back(ht::ASHA{});
    strategies.emplace_back(ht::Hyperband{});
    strategies.emplace_back(ht::Hyperband({.mode = ht::HyperbandMode::Synchronous}));
    strategies.emplace_back(ht::MedianStopping(ht::RandomSearch{}));
    for (auto& s : strategies) {
        CAPTURE(s.name());
        const std::string before = fmt::format("strategy '{}': ask() before start(space, context)", s.name());
        CHECK_THROWS_WITH_AS((void)s.ask(), doctest::Contains(before.c_str()), ht::StrategyError);
        CHECK_THROWS_WITH_AS(s.tell(0, ht::Outcome::completed(1.0, 1)), doctest::Contains("tell() before start"),
                             ht::StrategyError);
        s.start(two_d(), {.max_trials = 4});
        const ht::Suggestion first = s.ask();
        REQUIRE(first.runs());
        const std::string unknown = fmt::format("report() for trial {}, which ask() never handed out", first.trial + 1);
        CHECK_THROWS_WITH_AS((void)s.report(first.trial + 1, 1, 0.5), doctest::Contains(unknown.c_str()),
                             ht::StrategyError);
        CHECK(s.report(first.trial, 1, 0.5) != ht::Decision::Stop);  // its own trial is judged as before
        // Once its run has ended, neither a report nor a second tell reaches the scheduler, which
        // took both in silence (it judged a trial it had recorded, paused or forgotten).
        s.tell(first.trial, ht::Outcome::completed(0.5, 1));
        const std::string ended = fmt::format("strategy '{}': {{}}() for trial {}, which is not running: its run ended "
                                              "with tell(), and only ask() runs it again",
                                              s.name(), first.trial);
        CHECK_THROWS_WITH_AS((void)s.report(first.trial, 2, 0.4),
                             doctest::Contains(fmt::format(fmt::runtime(ended), "report").c_str()), ht::StrategyError);
        CHECK_THROWS_WITH_AS(s.tell(first.trial, ht::Outcome::completed(0.4, 1)),
                             doctest::Contains(fmt::format(fmt::runtime(ended), "tell").c_str()), ht::StrategyError);
    }
}

TEST_CASE("a scheduler that answers Wait with nothing running ends the run with a warning, not as finished") {
    class WaitsForNothing : public ht::Scheduler {
    public:
        std::string name() const override { return "WaitsForNothing"; }

    protected:
        ht::Suggestion next(const ht::TrialBudget& b) override {
            return b.next_id < 2 ? start_new(b, 1) : ht::Suggestion::wait();
        }
    };
    auto result = ht::Tuner(two_d(), WaitsForNothing{}, {.max_jobs = 5}).fit([](const ht::Config& c) {
        return c.get<double>("x");
    });
    CHECK(result.trials().size() == 2);
    CHECK(result.stop_reason() == "strategy 'WaitsForNothing' answered Wait with no trial running");
    REQUIRE(result.setup().warnings.size() == 1);
    CHECK(result.setup().warnings.front() ==
          "strategy 'WaitsForNothing' answered Wait with no trial running, so nothing could end the wait and the run "
          "ended after 2 trials; a scheduler with nothing left to run answers Done");
}

TEST_CASE("a scheduler built without a sampler that starts a new trial gets a StrategyError, not a crash") {
    class NoSampler : public ht::Scheduler {
    public:
        NoSampler() : Scheduler(ht::AnySampler{}) {}
        std::string name() const override { return "NoSampler"; }

    protected:
        ht::Suggestion next(const ht::TrialBudget& b) override { return start_new(b, 1); }
    };
    NoSampler s;
    s.start(two_d(), {});
    CHECK_THROWS_WITH_AS(s.ask(), "strategy 'NoSampler' has no sampler to start a new trial with", ht::StrategyError);
}

TEST_CASE("the tuner ends a run whose scheduler ignores the budget, with the error as its reason and nothing lost") {
    const auto t0 = std::chrono::steady_clock::now();
    ht::Tuner tuner(two_d(), IgnoresBudget{}, {.max_jobs = 5, .max_parallel_jobs = 2});
    auto result = tuner.fit([](const ht::Config& c) { return c.get<double>("x"); });
    CHECK(result.trials().size() == 5);
    CHECK(result.count(ht::TrialStatus::Completed) == 5);
    CHECK(result.stop_reason().find("strategy 'IgnoresBudget' suggested new trial 5 beyond the budget of 5") == 0);
    // No spin: it ends as soon as the budget is broken (a generous bound; a spin never ends).
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60));
}

TEST_CASE("the tuner refuses a suggestion it cannot carry out, naming the scheduler, before it runs") {
    const std::map<std::string, std::string> expected{
        {"empty configuration", "suggested trial 1 with a configuration of another search space: its parameters are "
                                "none, this run's are 'x', 'n'; a configuration comes from the sampler, or from the "
                                "trial's record"},
        // as many parameters as the run's, named otherwise: the count alone said nothing
        {"another space", "suggested trial 1 with a configuration of another search space: its parameters are 'y', "
                          "'n', this run's are 'x', 'n'; a configuration comes from the sampler, or from the trial's "
                          "record"},
        {"budget 0", "suggested trial 1 with budget 0: a budget is at least 1 and at most max_resource = 9"},
        {"budget past max_resource", "suggested trial 1 with budget 10: a budget is at least 1 and at most max_resource = 9"},
        {"new trial resumed", "suggested trial 1 to resume from 1, but it is a new trial: a new trial starts from 0"},
        {"resumed at its budget", "suggested trial 0 to resume from 3 with budget 3: a trial resumes from 0 up to below "
                                  "its budget"},
        {"again, no further", "suggested trial 0 again with budget 3 from 0, no further than its last run (budget 3 "
                              "from 0): a trial runs again only to go further"},
        {"another configuration", "suggested trial 0 again with another configuration than it ran with: a trial keeps "
                                  "its configuration"},
        {"while running", "suggested trial 0 while it is running: a trial runs on one worker at a time"},
        // These three used to run: steps 4 and 5 neither trained nor reported; x = 5 on [0, 1] and
        // n = 99 on [1, 4] handed to the objective.
        {"resumed past where it got to", "suggested trial 0 to resume from 5, past where it got to (3): a trial "
                                         "resumes from a step it reached"},
        {"a value outside the space", "suggested trial 1 with a configuration the search space does not allow: "
                                      "ContinuousParameter 'x': 5 is outside [0, 1]"},
        {"an integer out of range", "suggested trial 1 with a configuration the search space does not allow: "
                                "IntegerParameter 'n': 99 is outside [1, 4]"}};
    for (const auto& [how, message] : expected) {
        CAPTURE(how);
        // Two workers for the running case, whose trial 0 runs until the run stops; one for the
        // rest, so trial 0 has ended when the scheduler names it again.
        const bool running = how == "while running";
        ht::Tuner tuner(two_d(), Misbehaves(how), {.max_jobs = 5, .max_parallel_jobs = running ? 2u : 1u});
        std::atomic<int> calls{0};
        auto result = tuner.fit([&](const ht::Config& c, ht::Trial& trial) {
            ++calls;
            while (running && !trial.should_stop()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            return c.get<double>("x");
        });
        CHECK(result.stop_reason() == "strategy 'Misbehaves' " + message);
        CHECK(calls == 1);  // nothing ran for the broken suggestion, nothing ran twice
        REQUIRE(result.trials().size() == 1);
        CHECK(result.trials()[0].segments.size() == 1);
    }
}

// Runs trial 0 to 3 of 9, then runs it again from 3 to 9; with `pause`, it records a Pause for it
// when its first run ends, as a scheduler that means to continue a trial does.
class RunsAgain : public ht::Scheduler {
public:
    explicit RunsAgain(bool pause) : pause_(pause) {}
    std::string name() const override { return "RunsAgain"; }
    std::optional<ht::Resource> max_resource() const override { return 9; }

protected:
    ht::Suggestion next(const ht::TrialBudget& b) override {
        if (b.next_id == 0) {
            ht::Suggestion first = start_new(b, 3);
            config_ = first.config;
            return first;
        }
        if (ended_ && !again_) {
            again_ = true;
            return ht::Suggestion::run(0, config_, 9, 3);
        }
        return again_ && finished_ ? ht::Suggestion::done() : ht::Suggestion::wait();
    }
    void on_tell(ht::TrialId id, const ht::Outcome&) override {
        if (!ended_ && pause_) decide({.trial = id, .kind = ht::DecisionRecord::Kind::Pause, .reason = "to go on"});
        finished_ = ended_;
        ended_ = true;
    }

private:
    bool pause_;
    bool ended_ = false, again_ = false, finished_ = false;
    ht::Config config_;
};

TEST_CASE("a trial run again without a Pause lost its checkpoint at its end: the warning says so, not that it saved none") {
    for (const bool pause : {false, true}) {
        CAPTURE(pause);
        ht::Tuner tuner(two_d(), RunsAgain(pause), {.max_jobs = 1});
        std::vector<ht::Resource> first_steps;
        const auto result = tuner.fit([&](const ht::Config&, ht::Trial& trial) {
            const ht::Resource from = trial.checkpoint() ? std::stoll(*trial.checkpoint()) : 0;
            first_steps.push_back(from + 1);
            for (ht::Resource s = from + 1; s <= trial.budget(); ++s) {
                trial.report(s, 1.0 / static_cast<double>(s));
                trial.save_checkpoint(std::to_string(s));
            }
            return 1.0 / static_cast<double>(trial.budget());
        });
        REQUIRE(first_steps.size() == 2);
        const auto& w = result.setup().warnings;
        const bool warned = std::any_of(w.begin(), w.end(), [](const std::string& s) {
            return s.find("its checkpoint was removed when its run ended, as the trial was not paused") != std::string::npos &&
                   s.find("records a Pause decision for it when its run ends") != std::string::npos;
        });
        CHECK(warned == !pause);
        CHECK(first_steps[1] == (pause ? 4 : 1));  // with the Pause it continued from its checkpoint
    }
}

TEST_CASE("a decision about a trial never handed out is a StrategyError naming the strategy, not dropped") {
    ht::Tuner tuner(two_d(), Misbehaves("a decision about a trial never handed out"), {.max_jobs = 5});
    const auto result = tuner.fit([](const ht::Config& c) { return c.get<double>("x"); });
    CHECK(result.stop_reason() == "strategy 'Misbehaves' decided about trial 6, which ask() never handed out (the "
                                  "next new trial's id is 1); a decision names a trial the strategy started");
    CHECK(result.count(ht::TrialStatus::Completed) == 1);  // what ran before is kept
}

TEST_CASE("the sampler hears every report, result and decision, after the scheduler's decision") {
    std::vector<std::string> log;
    ht::ASHA asha({.min_resource = 1, .max_resource = 9, .reduction_factor = 3, .type = ht::HalvingType::Stop},
                  Recorder(&log));
    CHECK(asha.name() == "Recorder(ASHA)");
    asha.start(two_d(), {.seed = 4, .max_trials = 4});
    for (int k = 0; k < 3; ++k) CHECK(asha.ask().runs());
    (void)asha.report(0, 1, 0.1);
    (void)asha.report(1, 1, 0.2);
    CHECK(asha.report(2, 1, 0.9) == ht::Decision::Stop);  // third at the rung, outside the top third
    asha.tell(2, ht::Outcome::stopped(0.9, 1));
    const std::vector<std::string> expected{"start seed 4 levels 1 3 9", "sample 0", "sample 1", "sample 2",
                                            "Promote 0", "report 0@1", "Promote 1", "report 1@1",
                                            "Stop 2", "report 2@1", "result 2"};
    CHECK(log == expected);
    auto decisions = asha.take_decisions();
    REQUIRE(decisions.size() == 3);
    CHECK(decisions[2].kind == ht::DecisionRecord::Kind::Stop);
    CHECK(asha.take_decisions().empty());
}

TEST_CASE("under MedianStopping the wrapped scheduler's sampler hears the median rule's stops too") {
    // MedianStopping has no sampler of its own: its stops went to that empty slot, and the
    // sampler that chose the configurations never heard of them.
    std::vector<std::string> log;
    ht::MedianStopping median(ht::RunToCompletion(9, Recorder(&log)), {.min_trials = 2});
    median.start(two_d(), {.seed = 4, .max_trials = 3});
    for (int k = 0; k < 3; ++k) CHECK(median.ask().runs());
    (void)median.report(0, 1, 0.1);
    (void)median.report(1, 1, 0.2);
    CHECK(median.report(2, 1, 0.9) == ht::Decision::Stop);  // worse than the median of the other two
    const auto decisions = median.take_decisions();
    REQUIRE(decisions.size() == 1);
    CHECK(std::find(log.begin(), log.end(), "Stop 2") != log.end());
}

TEST_CASE("a scheduler given a sink leaves its decisions there, in the order made") {
    ht::DecisionSink sink;
    ht::MedianStopping ms(ht::ASHA({.min_resource = 1, .max_resource = 9, .type = ht::HalvingType::Stop}),
                          {.min_trials = 1});
    ms.start(two_d(), {.seed = 2, .decisions = &sink});
    for (int k = 0; k < 3; ++k) CHECK(ms.ask().runs());
    (void)ms.report(0, 1, 0.1);  // ASHA: Promote (free pass); median: no peers yet
    (void)ms.report(1, 2, 0.5);  // ASHA: Promote (judged at resource 1); median: no one at step 2
    (void)ms.report(0, 2, 0.6);  // median: worse than trial 1's 0.5 at step 2 -> Stop
    auto records = sink.take();  // they went to the context's sink, wrapped scheduler's and all
    CHECK(ms.take_decisions().empty());  // which take_decisions() drains
    REQUIRE(records.size() == 3);
    CHECK(records[0].trial == 0);
    CHECK(records[1].trial == 1);
    CHECK(records[2].kind == ht::DecisionRecord::Kind::Stop);
    CHECK(records[2].trial == 0);
    CHECK(records[2].reason.find("median") != std::string::npos);
}

TEST_CASE("every scheduler takes any sampler, and a sampler that runs dry ends the run") {
    for (int which = 0; which < 3; ++which) {
        CAPTURE(which);
        ht::AnyStrategy s =
            which == 0   ? ht::AnyStrategy(ht::RunToCompletion(5, ThreeOnly{}))
            : which == 1 ? ht::AnyStrategy(ht::ASHA({.max_resource = 9, .type = ht::HalvingType::Stop}, ThreeOnly{}))
                         : ht::AnyStrategy(ht::Hyperband(
                               {.max_resource = 9, .type = ht::HalvingType::Stop, .brackets = 0}, ThreeOnly{}));
        s.start(two_d(), {.seed = 1, .max_trials = 100});
        for (ht::TrialId k = 0; k < 3; ++k) {
            auto run = s.ask();
            REQUIRE(run.runs());
            CHECK(run.trial == k);
            s.tell(k, ht::Outcome::completed(1.0, 9));
        }
        CHECK(s.ask().kind == ht::Suggestion::Kind::Done);
    }
    CHECK(ht::RunToCompletion(5, ThreeOnly{}).name() == "RunToCompletion(ThreeOnly)");
    CHECK(ht::Hyperband({.type = ht::HalvingType::Stop, .brackets = 0}, ThreeOnly{}).name() == "ThreeOnly(Hyperband)");
}

TEST_CASE("synchronous Hyperband cuts its bracket where a finite sampler runs dry, and still promotes") {
    ht::Hyperband hb({.min_resource = 1, .max_resource = 9, .eta = 3, .mode = ht::HyperbandMode::Synchronous},
                     ThreeOnly{});
    hb.start(two_d(), {.seed = 1});
    for (ht::TrialId k = 0; k < 3; ++k) REQUIRE(hb.ask().runs());
    CHECK(hb.ask().kind == ht::Suggestion::Kind::Wait);  // the rung waits for its three trials
    for (ht::TrialId k = 0; k < 3; ++k) hb.tell(k, ht::Outcome::completed(static_cast<double>(k), 1));
    auto promoted = hb.ask();  // floor(3 / 3) = 1 of them goes on: the best, trial 0
    REQUIRE(promoted.runs());
    CHECK(promoted.trial == 0);
    CHECK(promoted.resume_from == 1);
}

TEST_CASE("min_rung_results: when the sampler runs dry before the budget, the rungs promote from eta results") {
    // Three configurations in all: the first rung never holds 9 results, and it need not.
    ht::ASHA asha({.max_resource = 9, .fill_idle_workers = false, .min_rung_results = 9}, ThreeOnly{});
    asha.start(two_d(), {.seed = 1, .max_trials = 100});
    for (ht::TrialId k = 0; k < 3; ++k) {
        auto run = asha.ask();
        REQUIRE(run.runs());
        asha.tell(k, ht::Outcome::completed(static_cast<double>(k), 1));
    }
    auto promoted = asha.ask();  // floor(3 / 3) = 1 goes on: the best, trial 0
    REQUIRE(promoted.runs());
    CHECK(promoted.trial == 0);
    CHECK(promoted.resume_from == 1);
}

TEST_CASE("hooks have defaults: a scheduler of a few lines runs through the tuner") {
    class RunTen : public ht::Scheduler {
    public:
        std::string name() const override { return "RunTen"; }

    protected:
        ht::Suggestion next(const ht::TrialBudget& b) override { return start_new(b, 10); }
    };
    ht::Tuner tuner(two_d(), RunTen{}, {.max_jobs = 7, .max_parallel_jobs = 3, .seed = 1});
    auto result = tuner.fit([](const ht::Config& c, ht::Trial& t) {
        CHECK(t.budget() == 10);
        return c.get<double>("x");
    });
    CHECK(result.count(ht::TrialStatus::Completed) == 7);
    CHECK(result.stop_reason() == "max_jobs reached");
    CHECK(result.setup().warnings.empty());
}

TEST_CASE("a sampler of the user's own that throws in start() is named with the strategy, as in ask()") {
    class Breaks : public ht::Sampler {
    public:
        std::string name() const override { return "Breaks"; }
        void start(const ht::SearchSpace&, const ht::SamplerContext&) override { throw std::runtime_error("no data"); }
        std::optional<ht::Config> sample(ht::TrialId) override { return std::nullopt; }
    };
    ht::ASHA asha({.max_resource = 9}, Breaks{});
    const std::string name = asha.name();
    CHECK_THROWS_WITH_AS(ht::Tuner(two_d(), std::move(asha), {.max_jobs = 3}),
                         ("strategy '" + name + "' failed in start(): no data").c_str(), ht::StrategyError);
    // The library's own errors keep their wording.
    CHECK_THROWS_WITH_AS(ht::Tuner(two_d(), ht::GridSearch(), {.max_jobs = 3}),
                         "grid: ContinuousParameter 'x' needs a number of grid points (GridSearchOptions::points, or "
        "GridSampler({{\"x\", n}}))",
                         ht::InvalidArgument);
}

// Runs trials to their full 9 units, one at a time, and makes the decision `how` names about
// trial 1, which that trial's state does not allow.
class DecidesWrongly : public ht::Scheduler {
public:
    explicit DecidesWrongly(std::string how) : how_(std::move(how)) {}
    std::string name() const override { return "DecidesWrongly"; }
    std::optional<ht::Resource> max_resource() const override { return 9; }

protected:
    using Kind = ht::DecisionRecord::Kind;
    ht::Suggestion next(const ht::TrialBudget& b) override {
        if (b.next_id == 2) {
            if (how_ == "Pause after its run") decide({.trial = 1, .kind = Kind::Pause, .resource = 9, .reason = "as the test asks"});
            if (how_ == "Stop after its run") decide({.trial = 1, .kind = Kind::Stop, .resource = 9, .reason = "as the test asks"});
            if (how_ == "Promote, never paused") decide({.trial = 1, .kind = Kind::Promote, .resource = 9, .reason = "as the test asks"});
            if (how_ == "about the next trial, then done") {
                decide({.trial = 2, .kind = Kind::Stop, .reason = "as the test asks"});
                return ht::Suggestion::done();
            }
            if (how_ == "run again after a Stop") return ht::Suggestion::run(1, config1_, 9, 2);
        }
        ht::Suggestion s = start_new(b, 9);
        if (b.next_id == 1) config1_ = s.config;
        return s;
    }
    ht::Decision on_report(ht::TrialId id, ht::Resource step, double) override {
        if (id != 1 || step != 2) return ht::Decision::Continue;
        if (how_ != "Stop twice" && how_ != "Stop, told to continue" && how_ != "run again after a Stop")
            return ht::Decision::Continue;
        decide({.trial = 1, .kind = Kind::Stop, .resource = 2, .reason = "as the test asks"});
        if (how_ == "Stop twice") decide({.trial = 1, .kind = Kind::Stop, .resource = 2, .reason = "as the test asks"});
        return how_ == "Stop, told to continue" ? ht::Decision::Continue : ht::Decision::Stop;
    }
    void on_tell(ht::TrialId id, const ht::Outcome&) override {
        if (id == 1 && how_ == "Pause at max_resource") decide({.trial = 1, .kind = Kind::Pause, .resource = 9, .reason = "as the test asks"});
    }

private:
    std::string how_;
    ht::Config config1_;
};

TEST_CASE("a decision the trial's state does not allow ends the run with a StrategyError, and no record is rewritten") {
    // Each used to be taken as it came: a Pause of a trial that had completed its full budget made
    // it Stopped at the run's end ("waited for promotion") and best() another trial; a Stop or a
    // Promote of a finished trial stayed in its record; a decision about the next id, followed by
    // Done, was dropped; a stopped trial ran again from scratch.
    const std::map<std::string, std::string> expected{
        {"Pause after its run", "decided Pause for trial 1, which had completed already (at resource 9): a Pause "
                                "parks a trial as its run ends (on its report or when told of its end), to promote "
                                "it later"},
        {"Stop after its run", "decided Stop for trial 1, which had completed already (at resource 9): a Stop ends a "
                               "running or paused trial"},
        {"Promote, never paused", "decided Promote for trial 1, which was never paused: a Promote resumes a paused "
                                  "trial"},
        {"about the next trial, then done", "decided Stop for trial 2, which has not started: a decision names a "
                                            "trial the strategy handed out (a suggestion it returned)"},
        {"Pause at max_resource", "decided Pause for trial 1 at resource 9, which is max_resource = 9: a trial that "
                                  "trained in full has nothing to be promoted to"},
        {"Stop twice", "decided Stop for trial 1 at resource 2 twice: record a decision once"},
        {"Stop, told to continue", "decided Stop for trial 1 at step 2 but told it to continue: report() returns "
                                   "Decision::Stop with a Stop it records"},
        {"run again after a Stop", "suggested trial 1 again after it stopped it at resource 2: a Stop is final (its "
                                   "checkpoint is gone); a scheduler pauses a trial it may run again"}};
    for (const auto& [how, message] : expected) {
        CAPTURE(how);
        ht::Tuner tuner(two_d(), DecidesWrongly(how), {.max_jobs = 4, .max_parallel_jobs = 1});
        const auto result = tuner.fit([](const ht::Config& c, ht::Trial& trial) {
            for (ht::Resource s = 1; s <= trial.budget() && !trial.should_stop(); ++s) trial.report(s, c.get<double>("x"));
            return c.get<double>("x");
        });
        CHECK(result.stop_reason() == "strategy 'DecidesWrongly' " + message);
        // What ran is kept. A decision made in next() is checked once the trial next() returned
        // has started (a promotion's decision is journaled after its trial's start): that trial
        // stops at once, cut short by the run's end.
        const bool in_next = how == "Pause after its run" || how == "Stop after its run" || how == "Promote, never paused";
        REQUIRE(result.trials().size() == (in_next ? 3u : 2u));
        if (in_next) CHECK(result.trials()[2].resource_used == 0);
        const ht::TrialRecord& one = result.trials()[1];
        const bool stopped_at_2 = how == "Stop twice" || how == "run again after a Stop" || how == "Stop, told to continue";
        CHECK(one.status == (stopped_at_2 ? ht::TrialStatus::Stopped : ht::TrialStatus::Completed));
        CHECK(one.resource_used == (stopped_at_2 ? 2 : 9));
        CHECK(one.segments.size() == 1);  // not run again
        // Only decisions the trial's state allowed are in its record.
        CHECK(one.decisions.size() == (stopped_at_2 ? 1u : 0u));
        const auto best = std::min_element(result.trials().begin(), result.trials().end(), [](const auto& a, const auto& b) {
            return a.objective < b.objective;
        });
        if (!stopped_at_2) CHECK(result.best().id == best->id);
    }
}

TEST_CASE("a Stop a scheduler records for another running trial reaches that trial at its next report") {
    // Recorded from trial 1's report while trial 0 ran on the other worker: the tuner took it,
    // and trial 0 never heard of it, trained its full budget and ended Completed with the Stop
    // on record.
    class StopsTheOther : public ht::Scheduler {
    public:
        std::string name() const override { return "StopsTheOther"; }
        std::optional<ht::Resource> max_resource() const override { return 40; }

    protected:
        ht::Suggestion next(const ht::TrialBudget& b) override { return start_new(b, 40); }
        ht::Decision on_report(ht::TrialId id, ht::Resource step, double loss) override {
            if (id == 1 && step == 3) decide({0, ht::DecisionRecord::Kind::Stop, -1, 0, step, loss, 0, 0, "from trial 1"});
            return ht::Decision::Continue;
        }
    };
    std::atomic<bool> zero_reported{false}, one_reported{false};
    auto wait_for = [](const std::atomic<bool>& flag) {
        while (!flag) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    };
    const ht::Result r = ht::Tuner(two_d(), StopsTheOther{}, {.max_jobs = 2, .max_parallel_jobs = 2, .seed = 1})
                             .fit([&](const ht::Config&, ht::Trial& t) {
                                 double loss = 0.0;
                                 for (ht::Resource e = 1; e <= t.budget() && !t.should_stop(); ++e) {
                                     // Trial 0 reports step 1, then waits for trial 1's Stop before its
                                     // second report; trial 1 makes that Stop only after trial 0's first
                                     // report (a slow machine ran trial 1 to step 3 before it).
                                     if (t.id() == 0 && e == 2) wait_for(one_reported);
                                     if (t.id() == 1 && e == 3) wait_for(zero_reported);
                                     t.report(e, loss = 1.0 / static_cast<double>(e));
                                     if (t.id() == 0 && e == 1) zero_reported = true;
                                     if (t.id() == 1 && e == 3) one_reported = true;
                                 }
                                 return loss;
                             });
    REQUIRE(r.trials().size() == 2);
    CHECK(r.trials()[0].status == ht::TrialStatus::Stopped);
    CHECK(r.trials()[0].resource_used == 2);
    CHECK(r.trials()[1].status == ht::TrialStatus::Completed);
    CHECK(r.status_counts().starts_with("1 completed, 1 stopped early"));
}

TEST_CASE("a sampler's InvalidArgument in on_report() ends the run naming the strategy, failing no trial") {
    // InvalidArgument from the report path was taken for the report's own fault: every trial
    // failed with the sampler's message (a Config::get of a misspelt name), naming no strategy.
    class Misspells : public ht::Sampler {
    public:
        std::string name() const override { return "Misspells"; }
        void start(const ht::SearchSpace& s, const ht::SamplerContext& c) override {
            space_ = s;
            seed_ = c.seed;
        }
        std::optional<ht::Config> sample(ht::TrialId id) override {
            return configs_[id] = ht::RandomSampler::sample(space_, seed_, id);
        }
        void on_report(ht::TrialId id, ht::Resource, double) override { (void)configs_.at(id).get<double>("learning_rate"); }

    private:
        ht::SearchSpace space_;
        std::uint64_t seed_ = 0;
        std::map<ht::TrialId, ht::Config> configs_;
    };
    ht::ASHA asha({.max_resource = 9}, Misspells{});
    const std::string name = asha.name();
    const ht::Result r =
        ht::Tuner(two_d(), std::move(asha), {.max_jobs = 5, .seed = 1, .max_retries = 1}).fit([](const ht::Config&, ht::Trial& t) {
            double loss = 0.0;
            for (ht::Resource e = 1; e <= t.budget() && !t.should_stop(); ++e) t.report(e, loss = 1.0 / static_cast<double>(e));
            return loss;
        });
    CHECK(r.stop_reason() ==
          "strategy '" + name + "' failed in report(): sampler 'Misspells' failed in on_report(): Config: unknown "
          "parameter 'learning_rate' (known: 'x', 'n')");
    CHECK(r.count(ht::TrialStatus::Failed) == 0);
}

TEST_CASE("a sampler that throws after its scheduler decided: the decision stands, the sampler is named, the journal resumes") {
    // Its scheduler paused trial 1 at rung 1 before the sampler threw in on_result(): the Pause was
    // left behind, trial 1 was recorded Completed after 1 of 9 units (and was best()), and with more
    // workers the Pause was later taken for another trial's, so that the journal could not resume.
    struct Fails {
        bool in_result = false;
        bool in_sample = false;
    };
    class Flaky : public ht::Sampler {
    public:
        explicit Flaky(Fails fails) : fails_(fails) {}
        std::string name() const override { return "Flaky"; }
        void start(const ht::SearchSpace& s, const ht::SamplerContext& c) override {
            space_ = s;
            seed_ = c.seed;
        }
        std::optional<ht::Config> sample(ht::TrialId id) override {
            if (fails_.in_sample && id == 2) throw std::runtime_error("no configuration for trial 2");
            return ht::RandomSampler::sample(space_, seed_, id);
        }
        void on_result(ht::TrialId id, const ht::Outcome&) override {
            if (fails_.in_result && id == 1) throw std::runtime_error("bug in on_result");
        }

    private:
        Fails fails_;
        ht::SearchSpace space_;
        std::uint64_t seed_ = 0;
    };
    auto objective = [](const ht::Config& c, ht::Trial& t) {
        double loss = 0.0;
        for (ht::Resource e = 1; e <= t.budget() && !t.should_stop(); ++e)
            t.report(e, loss = c.get<double>("x") + 1.0 / static_cast<double>(e));
        return loss;
    };
    const auto path =
        (std::filesystem::temp_directory_path() / fmt::format("hypertune-sampler-throws-{}.jsonl", ::getpid())).string();
    std::filesystem::remove(path);
    const ht::TunerOptions options{.max_jobs = 8, .max_parallel_jobs = 1, .seed = 3, .journal = path};
    auto asha = [](Fails fails) { return ht::ASHA({.max_resource = 9, .fill_idle_workers = false}, Flaky(fails)); };
    const std::string name = asha({}).name();

    const ht::Result failed = ht::Tuner(two_d(), asha({.in_result = true}), options).fit(objective);
    CHECK(failed.stop_reason() == "strategy '" + name + "' failed in tell(): sampler 'Flaky' failed in on_result(): bug in on_result");
    REQUIRE(failed.trials().size() == 2);
    const ht::TrialRecord& one = failed.trials()[1];
    CHECK(one.resource_used == 1);
    CHECK(one.status != ht::TrialStatus::Completed);  // paused at its rung, as decided
    REQUIRE_FALSE(one.decisions.empty());
    CHECK(one.decisions.front().kind == ht::DecisionRecord::Kind::Pause);
    // No trial trained its 9 units: the best is the better of the two at rung 1, not trial 1 for
    // having "completed".
    CHECK(failed.best().objective == std::min(failed.trials()[0].objective, one.objective));
    for (const auto& w : failed.setup().warnings) CHECK(w.find("which had completed already") == std::string::npos);

    // Fixed, the same program resumes the journal and ends as a run that never failed.
    const ht::Result resumed = ht::Tuner(two_d(), asha({}), options).fit(objective);
    std::filesystem::remove(path);
    const ht::Result clean = ht::Tuner(two_d(), asha({}), options).fit(objective);
    std::filesystem::remove(path);
    REQUIRE(resumed.trials().size() == clean.trials().size());
    for (std::size_t i = 0; i < clean.trials().size(); ++i) {
        CAPTURE(i);
        CHECK(resumed.trials()[i].status == clean.trials()[i].status);
        CHECK(resumed.trials()[i].resource_used == clean.trials()[i].resource_used);
        CHECK(resumed.trials()[i].decisions.size() == clean.trials()[i].decisions.size());
    }

    // A sampler that throws in sample() is named too.
    const ht::Result no_config = ht::Tuner(two_d(), asha({.in_sample = true}), {.max_jobs = 8, .seed = 3}).fit(objective);
    CHECK(no_config.stop_reason() ==
          "strategy '" + name + "' failed in ask(): sampler 'Flaky' failed in sample(): no configuration for trial 2");
}

TEST_CASE("a retry's reports of the steps its failed attempt reported are not judged again, live or resumed") {
    // They reached the scheduler and the sampler twice: a scheduler of the user's that counts
    // first reports counted the retried trial's twice, and decided otherwise than with no failure.
    struct Seen {
        std::map<std::pair<ht::TrialId, ht::Resource>, int> scheduler, sampler;
    };
    class CountingSampler : public ht::Sampler {
    public:
        explicit CountingSampler(Seen* seen) : seen_(seen) {}
        std::string name() const override { return "Counting"; }
        void start(const ht::SearchSpace& s, const ht::SamplerContext& c) override {
            space_ = s;
            seed_ = c.seed;
        }
        std::optional<ht::Config> sample(ht::TrialId id) override { return ht::RandomSampler::sample(space_, seed_, id); }
        void on_report(ht::TrialId id, ht::Resource step, double) override { ++seen_->sampler[{id, step}]; }

    private:
        Seen* seen_;
        ht::SearchSpace space_;
        std::uint64_t seed_ = 0;
    };
    class Counting : public ht::Scheduler {
    public:
        explicit Counting(Seen* seen) : Scheduler(CountingSampler(seen)), seen_(seen) {}
        std::string name() const override { return "Counting"; }
        std::optional<ht::Resource> max_resource() const override { return 4; }

    protected:
        ht::Suggestion next(const ht::TrialBudget& b) override { return start_new(b, 4); }
        ht::Decision on_report(ht::TrialId id, ht::Resource step, double) override {
            ++seen_->scheduler[{id, step}];
            return ht::Decision::Continue;
        }

    private:
        Seen* seen_;
    };
    const auto journal =
        (std::filesystem::temp_directory_path() / fmt::format("hypertune-retry-judged-{}.jsonl", ::getpid())).string();
    std::filesystem::remove(journal);
    std::atomic<bool> failed{false};
    auto trainer = [&](const ht::Config&, ht::Trial& t) {
        double loss = 0.0;
        for (ht::Resource e = 1; e <= t.budget() && !t.should_stop(); ++e) {
            if (t.id() == 1 && e == 3 && !failed.exchange(true)) throw std::runtime_error("transient failure");
            t.report(e, loss = 1.0 / static_cast<double>(e) + 0.1 * static_cast<double>(t.id()));
        }
        return loss;
    };
    const ht::TunerOptions options{.max_jobs = 3, .seed = 1, .max_retries = 1, .progress = ht::ProgressBar::Never,
                                   .journal = journal};
    Seen live;
    const ht::Result r = ht::Tuner(two_d(), Counting(&live), options).fit(trainer);
    REQUIRE(r.trials().size() == 3);
    CHECK(r.trials()[1].retries == 1);
    CHECK(r.trials()[1].curve.size() == 4);  // the retry's curve
    for (const auto& [key, n] : live.scheduler) {
        CAPTURE(key.first);
        CAPTURE(key.second);
        CHECK(n == 1);
        CHECK(live.sampler[key] == 1);
    }
    CHECK(live.scheduler.size() == 12);
    // The replay gives the strategy what the live run gave it: the finished run ends again at once.
    Seen replayed;
    const ht::Result again = ht::Tuner(two_d(), Counting(&replayed), options).fit(trainer);
    CHECK(again.trials().size() == 3);
    CHECK(replayed.scheduler == live.scheduler);
    CHECK(replayed.sampler == live.sampler);
    std::filesystem::remove(journal);
}
