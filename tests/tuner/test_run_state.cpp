// SPDX-License-Identifier: MIT
// RunState, the one reducer of a run's events: the live result and load_result() of its journal
// agree field by field for every strategy and fault; a format-1 journal (written before the
// reducer, without trial_retried) still loads to the result its own version gave; replay after a
// stop and after a crash ends in the same records as the live run.

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <hypertune/hypertune.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <typeinfo>
#include <variant>
#include <vector>

#include "../support/same_result.hpp"

namespace ht = hypertune;
namespace fs = std::filesystem;

namespace {

std::string temp_journal(const std::string& name) {
    auto path = (fs::temp_directory_path() / fmt::format("hypertune-state-{}-{}.jsonl", name, ::getpid())).string();
    fs::remove(path);
    return path;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

ht::SearchSpace state_space() {
    return ht::SearchSpace{ht::ContinuousParameter("x", -2.0, 2.0), ht::IntegerParameter("k", 1, 5),
                           ht::CategoricalParameter("kind", {"a", "b"})};
}

// Reports every step; k = 4 always fails; with `flaky`, k = 5 fails on every other attempt (per
// worker thread) after two reports, which a retry forgets; kind "b" with x > 0 ignores should_stop().
double train(const ht::Config& c, ht::Trial& t, bool flaky_k5) {
    static thread_local int attempts = 0;
    const double x = c.get<double>("x");
    const int k = c.get<int>("k");
    if (k == 4) throw std::runtime_error("k=4 always fails");
    const bool flaky = flaky_k5 && k == 5 && (attempts++ % 2 == 0);
    const bool stubborn = c.get<std::string>("kind") == "b" && x > 0;
    double loss = 0.0;
    for (ht::Resource s = t.resumed_from() + 1; s <= t.budget(); ++s) {
        loss = x * x + 1.0 / static_cast<double>(s);
        t.report(s, loss);
        if (flaky && s == t.resumed_from() + 2) throw std::runtime_error("flaky");
        if (t.should_stop() && !stubborn) break;
    }
    return loss;
}

double state_trainer(const ht::Config& c, ht::Trial& t) { return train(c, t, true); }
double steady_trainer(const ht::Config& c, ht::Trial& t) { return train(c, t, false); }

ht::AnyStrategy make(int which) {
    switch (which) {
        case 0: return ht::RandomSearch({.max_resource = 5});
        case 1: return ht::Hyperband({.min_resource = 1, .max_resource = 9, .eta = 3});
        case 2: return ht::Hyperband({.min_resource = 1, .max_resource = 9, .eta = 3, .mode = ht::HyperbandMode::Synchronous});
        case 3: return ht::ASHA({.min_resource = 1, .max_resource = 9});
        case 5:
            return ht::ASHA({.min_resource = 1, .max_resource = 9, .type = ht::HalvingType::Stop});
        default: return ht::MedianStopping(ht::RandomSearch({.max_resource = 6}), {.min_trials = 2});
    }
}

}  // namespace

TEST_CASE("the live result equals load_result of its journal, field by field, for every strategy and fault") {
    for (int which = 0; which < 6; ++which)
        for (std::size_t workers : {1u, 3u}) {
            CAPTURE(which);
            CAPTURE(workers);
            const auto path = temp_journal(fmt::format("live-{}-{}", which, workers));
            ht::Tuner tuner(state_space(), make(which),
                            {.metric = "loss", .max_jobs = 30, .max_parallel_jobs = workers, .seed = 3,
                             .max_retries = 1, .instances_per_trial = 2, .journal = path});
            const ht::Result live = tuner.fit(state_trainer);
            CHECK(live.count(ht::TrialStatus::Failed) > 0);
            ht::testing::check_same_result(live, ht::load_result(path));
            fs::remove(path);
        }
}

TEST_CASE("a retried trial forgets the failed attempt's reports, in the live run and in the journal alike") {
    const auto path = temp_journal("retry");
    ht::SearchSpace only_k5{ht::ContinuousParameter("x", 0.5, 0.6), ht::IntegerParameter("k", 5, 5),
                            ht::CategoricalParameter("kind", {"a"})};
    ht::Tuner tuner(only_k5, ht::RandomSearch({.max_resource = 4}),
                    {.max_jobs = 4, .seed = 1, .max_retries = 1, .journal = path});
    const ht::Result live = tuner.fit(state_trainer);
    std::size_t retried = 0;
    for (const auto& t : live.trials()) {
        if (t.retries == 0) continue;
        ++retried;
        REQUIRE(t.curve.size() == 4);  // steps 1..4 of the attempt that succeeded, not 1, 2 again
        for (std::size_t k = 0; k < 4; ++k) CHECK(t.curve[k].step == static_cast<ht::Resource>(k + 1));
    }
    CHECK(retried > 0);
    CHECK(read_file(path).find("\"event\":\"trial_retried\"") != std::string::npos);
    ht::testing::check_same_result(live, ht::load_result(path));
    fs::remove(path);
}

TEST_CASE("a journal written in format 1 loads to the result its own version gave") {
    const std::string dir = HYPERTUNE_TEST_SOURCE_DIR "/data/journal_format1";
    const ht::Result loaded = ht::load_result(dir + "/format1.jsonl");
    CHECK(loaded.trials().size() == 20);
    CHECK(loaded.setup().strategy == "Hyperband");
    CHECK(loaded.to_csv() == read_file(dir + "/format1.csv"));
}

TEST_CASE("a run resumed after a stop ends with the records load_result gives, and with the uninterrupted trials") {
    const auto path = temp_journal("resume");
    const auto straight_path = temp_journal("straight");
    auto options = [](const std::string& p, std::size_t jobs) {
        return ht::TunerOptions{.metric = "loss", .max_jobs = jobs, .seed = 9, .max_retries = 1, .journal = p};
    };
    const ht::Result straight = ht::Tuner(state_space(), make(2), options(straight_path, 30)).fit(steady_trainer);
    // First session: stopped once trials ended 12 times (a promoted trial ends once per rung), between two trials (the one worker calls
    // on_trial_end before it asks for the next), so no trial is cut by the stop: a trial cut by
    // stop() ends Stopped and stays so (see the journal tests). Second: resumed to the end.
    {
        std::atomic<ht::TuningJob*> handle{nullptr};
        std::size_t ended = 0;  // callbacks are called one at a time
        ht::TunerOptions first_options = options(path, 30);
        first_options.on_trial_end = [&](const ht::TrialRecord&) {
            if (++ended != 12) return;
            while (handle.load() == nullptr) std::this_thread::yield();
            handle.load()->stop();
        };
        ht::Tuner first(state_space(), make(2), first_options);
        auto job = first.start(steady_trainer);
        handle = &job;
        const ht::Result& stopped = job.wait();
        REQUIRE(stopped.stop_reason() == "stopped by user");
        REQUIRE(stopped.trials().size() < straight.trials().size());
    }  // the first session lets go of the journal's lock
    const ht::Result resumed = ht::Tuner(state_space(), make(2), options(path, 30)).fit(steady_trainer);
    ht::testing::check_same_result(resumed, ht::load_result(path));
    REQUIRE(resumed.trials().size() == straight.trials().size());
    for (std::size_t i = 0; i < straight.trials().size(); ++i) {
        CHECK(resumed.trials()[i].config == straight.trials()[i].config);
        CHECK(resumed.trials()[i].status == straight.trials()[i].status);
    }
    fs::remove(path);
    fs::remove(straight_path);
}

TEST_CASE("on_event sees every event in order, with the state it was applied to, and a throwing observer stops the run") {
    std::vector<std::string> kinds;
    std::set<ht::TrialId> ended_seen;  // a paused trial ends each of its runs
    ht::TunerOptions options{.max_jobs = 12, .max_parallel_jobs = 3, .seed = 2};
    options.on_event = [&](const ht::RunEvent& e, const ht::RunState& state) {
        kinds.push_back(std::visit([](const auto& x) { return std::string(typeid(x).name()); }, e));
        if (const auto* end = std::get_if<ht::TrialEnded>(&e)) {
            ended_seen.insert(end->trial);
            CHECK(state.record(end->trial).status == end->status);  // already applied
        }
    };
    const ht::Result r = ht::Tuner(state_space(), make(3), options).fit(steady_trainer);
    REQUIRE(kinds.size() > 2);
    CHECK(kinds.front() == typeid(ht::RunStarted).name());
    CHECK(kinds.back() == typeid(ht::RunEnded).name());
    CHECK(ended_seen.size() == r.trials().size());

    ht::TunerOptions throwing{.max_jobs = 50, .seed = 2};
    throwing.on_event = [](const ht::RunEvent& e, const ht::RunState&) {
        if (const auto* end = std::get_if<ht::TrialEnded>(&e); end && end->trial == 3) throw std::runtime_error("full");
    };
    const ht::Result stopped = ht::Tuner(state_space(), make(0), throwing).fit(steady_trainer);
    CHECK(stopped.stop_reason() == "the on_event observer threw: full");
    CHECK(stopped.trials().size() == 4);
}

TEST_CASE("on_event may stop the job, and a call that would wait for the run's lock is refused, not a hang") {
    ht::TunerOptions options{.max_jobs = 50, .seed = 2};  // one worker: trial 3 is the fourth to end
    std::atomic<ht::TuningJob*> job{nullptr};
    std::string refused;
    options.on_event = [&](const ht::RunEvent& e, const ht::RunState&) {
        const auto* end = std::get_if<ht::TrialEnded>(&e);
        if (end == nullptr || end->trial != 3) return;
        while (job.load() == nullptr) std::this_thread::yield();
        try {
            (void)job.load()->progress();
        } catch (const ht::Error& x) {
            refused = x.what();
        }
        job.load()->stop();
    };
    ht::Tuner tuner(state_space(), make(0), options);
    ht::TuningJob started = tuner.start(steady_trainer);
    job = &started;
    const ht::Result& r = started.wait();
    CHECK(refused == "TuningJob::progress() called from on_event, which runs under the run's lock: it would wait for "
                     "ever; read the RunState on_event is given (stop() may be called there)");
    CHECK(r.stop_reason() == "stopped by user");
    CHECK(r.trials().size() == 4);
}
