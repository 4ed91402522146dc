// SPDX-License-Identifier: MIT
// The journal: attach (load_result) gives the run's own result; a run cut at any point (stop,
// a truncated file, kill -9) resumes with nothing completed lost or run twice; foreign or
// damaged journals are refused with the reason.
#include "../support/same_result.hpp"

#include <hypertune/journal.hpp>
#include <hypertune/json.hpp>
#include <hypertune/hypertune.hpp>
#include <hypertune/strategies/asha.hpp>
#include <hypertune/strategies/bayesian.hpp>
#include <hypertune/strategies/hyperband.hpp>

#include <doctest/doctest.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <tuple>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ht = hypertune;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

ht::SearchSpace journal_space() {
    return ht::SearchSpace{ht::ContinuousParameter("x", 0.0, 1.0), ht::IntegerParameter("k", 1, 5),
                           ht::CategoricalParameter("kind", {"a", "b"})};
}

double curve_loss_at(const ht::Config& c, ht::Resource r) {
    return std::abs(c.get<double>("x") - 0.3) + 0.01 * c.get<int>("k") +
           (c.get<std::string>("kind") == "b" ? 0.05 : 0.0) + 1.0 / static_cast<double>(r);
}

double journal_trainer(const ht::Config& c, ht::Trial& trial) {
    double loss = 0.0;
    for (ht::Resource r = trial.resumed_from() + 1; r <= trial.budget(); ++r) {
        trial.report(r, loss = curve_loss_at(c, r));
        if (trial.should_stop()) break;
    }
    return loss;
}

std::string temp_journal(const char* name) {
    auto path = (fs::temp_directory_path() / fmt::format("hypertune-{}-{}.jsonl", name, ::getpid())).string();
    fs::remove(path);
    return path;
}

std::vector<std::string> lines_of(const std::string& path) {
    std::ifstream in(path);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

void write_lines(const std::string& path, const std::vector<std::string>& lines, std::size_t n, const std::string& tail = "") {
    std::ofstream out(path, std::ios::trunc);
    for (std::size_t i = 0; i < n; ++i) out << lines[i] << '\n';
    out << tail;
}

// What must not change across a resume: each trial's configuration, status, value and resource.
std::map<ht::TrialId, std::string> outcome(const ht::Result& r) {
    std::map<ht::TrialId, std::string> out;
    for (const auto& t : r.trials())
        out[t.id] = fmt::format("{} {} {} {}", t.config, ht::to_string(t.status), t.objective, t.resource_used);
    return out;
}

ht::TunerOptions options(const std::string& journal, std::size_t jobs = 40, std::size_t parallel = 1) {
    return {.metric = "loss", .max_jobs = jobs, .max_parallel_jobs = parallel, .seed = 3,
            .progress = ht::ProgressBar::Never, .journal = journal};
}

ht::AnyStrategy asha() { return ht::ASHA({.min_resource = 1, .max_resource = 9}); }

// Runs `body` in a child process whose files cannot grow past 16 KB (a full disk: writes past it
// fail with EFBIG) and returns its exit code (7: it threw).
int exit_code_under_file_limit(const std::function<int()>& body) {
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        std::signal(SIGXFSZ, SIG_IGN);
        rlimit limit{16 * 1024, 16 * 1024};
        ::setrlimit(RLIMIT_FSIZE, &limit);
        int code = 7;
        try {
            code = body();
        } catch (...) {
        }
        ::_exit(code);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    REQUIRE(WIFEXITED(status));
    return WEXITSTATUS(status);
}

}  // namespace

TEST_CASE("load_result gives back the run's own result from its journal") {
    auto path = temp_journal("attach");
    ht::Tuner tuner(journal_space(), asha(), options(path, 40, 4));
    auto result = tuner.fit(journal_trainer);
    auto attached = ht::load_result(path);
    ht::testing::check_same_result(result, attached);
    CHECK(attached.to_csv() == result.to_csv());
    CHECK(attached.best().id == result.best().id);
    CHECK(attached.summary().substr(0, 200) == result.summary().substr(0, 200));
    CHECK(attached.stop_reason() == "max_jobs reached");
    CHECK(attached.setup().strategy == "ASHA-promotion-fill");
    CHECK(attached.setup().wall_seconds == doctest::Approx(result.setup().wall_seconds).epsilon(0.5));
    for (std::size_t i = 0; i < result.trials().size(); ++i) {
        CHECK(attached.trials()[i].decisions.size() == result.trials()[i].decisions.size());
        CHECK(attached.trials()[i].curve.size() == result.trials()[i].curve.size());
    }
    fs::remove(path);
}

TEST_CASE("a stopped run resumes from its journal and ends as if it had never stopped") {
    auto reference = ht::Tuner(journal_space(), asha(), options("")).fit(journal_trainer);
    auto path = temp_journal("resume");
    {
        ht::TunerOptions o = options(path);
        o.on_trial_end = nullptr;
        ht::Tuner tuner(journal_space(), asha(), o);
        std::atomic<ht::TuningJob*> handle{nullptr};
        auto job = tuner.start([&](const ht::Config& c, ht::Trial& trial) {
            if (trial.id() == 15)
                while (!trial.should_stop()) std::this_thread::sleep_for(1ms);  // wait for stop()
            return journal_trainer(c, trial);
        });
        while (job.progress().started < 16) std::this_thread::sleep_for(1ms);  // trial 15 is running
        job.stop();
        CHECK(job.wait().trials().size() == 16);
    }
    ht::Tuner again(journal_space(), asha(), options(path));
    auto resumed = again.fit(journal_trainer);
    // trial 15 was cut by stop(): it ended Stopped and is kept as it ended; the rest is identical
    auto expected = outcome(reference);
    auto got = outcome(resumed);
    CHECK(got.size() == expected.size());
    for (const auto& [id, what] : expected)
        if (id != 15) CHECK(got[id] == what);
    fs::remove(path);
}

TEST_CASE("a finished run resumed with a larger max_jobs goes on, for every scheduler, session after session") {
    // At the end of its budget a scheduler decides otherwise than with trials to come (the
    // promotion type stops the trials left paused; synchronous Hyperband promotes where it would
    // start new ones): the replay gives each session its own max_jobs, recorded in the journal.
    const std::vector<std::pair<std::string, std::function<ht::AnyStrategy()>>> strategies{
        {"ASHA", [] { return asha(); }},
        {"ASHA, no filling", [] { return ht::AnyStrategy(ht::ASHA({.min_resource = 1, .max_resource = 9,
                                                                    .fill_idle_workers = false})); }},
        {"ASHA, stop type", [] { return ht::AnyStrategy(ht::ASHA({.min_resource = 1, .max_resource = 9,
                                                                   .type = ht::HalvingType::Stop})); }},
        {"Hyperband", [] { return ht::AnyStrategy(ht::Hyperband({.min_resource = 1, .max_resource = 9})); }},
        {"Hyperband, synchronous",
         [] {
             return ht::AnyStrategy(
                 ht::Hyperband({.min_resource = 1, .max_resource = 9, .mode = ht::HyperbandMode::Synchronous}));
         }},
        {"MedianStopping(ASHA)", [] { return ht::AnyStrategy(ht::MedianStopping(ht::ASHA({.min_resource = 1, .max_resource = 9, .type = ht::HalvingType::Stop}))); }},
        {"RandomSearch", [] { return ht::AnyStrategy(ht::RandomSearch({.max_resource = 9})); }}};
    for (const auto& [name, make] : strategies) {
        CAPTURE(name);
        auto path = temp_journal("raise");
        const auto first = ht::Tuner(journal_space(), make(), options(path, 12)).fit(journal_trainer);
        REQUIRE(first.trials().size() == 12);
        for (std::size_t jobs : {std::size_t{20}, std::size_t{30}}) {
            CAPTURE(jobs);
            const auto more = ht::Tuner(journal_space(), make(), options(path, jobs)).fit(journal_trainer);
            CHECK(more.trials().size() == jobs);
            CHECK(more.stop_reason() == "max_jobs reached");
            // The first session's trials keep their configurations, and what they completed.
            for (std::size_t i = 0; i < first.trials().size(); ++i) {
                CHECK(more.trials()[i].config == first.trials()[i].config);
                if (first.trials()[i].status == ht::TrialStatus::Completed &&
                    more.trials()[i].status == ht::TrialStatus::Completed)
                    CHECK(more.trials()[i].resource_used >= first.trials()[i].resource_used);
            }
            ht::testing::check_same_result(more, ht::load_result(path));
        }
        fs::remove(path);
    }
}

TEST_CASE("a journal cut at any line resumes to the uninterrupted run's trials") {
    for (auto strategy : {0, 1}) {
        auto make = [&] {
            return strategy == 0 ? asha()
                                 : ht::AnyStrategy(ht::Hyperband({.min_resource = 1, .max_resource = 9,
                                                                  .mode = ht::HyperbandMode::Synchronous}));
        };
        auto full_path = temp_journal("full");
        auto reference = ht::Tuner(journal_space(), make(), options(full_path, 20)).fit(journal_trainer);
        auto lines = lines_of(full_path);
        REQUIRE(lines.size() > 40);
        auto cut_path = temp_journal("cut");
        for (std::size_t cut : {std::size_t{1}, std::size_t{7}, lines.size() / 3, lines.size() / 2, lines.size() - 3}) {
            for (const std::string_view end : {"whole", "torn", "no newline"}) {
                CAPTURE(strategy);
                CAPTURE(cut);
                CAPTURE(end);
                // torn: the next line half-written, as a crash during write() leaves it; no newline:
                // the last line whole but for its '\n' (a partial write, an editor)
                const bool torn = end == "torn";
                if (end == "no newline") write_lines(cut_path, lines, cut - 1, lines[cut - 1]);
                else write_lines(cut_path, lines, cut, torn ? lines[cut].substr(0, lines[cut].size() / 2) : "");
                auto resumed = ht::Tuner(journal_space(), make(), options(cut_path, 20)).fit(journal_trainer);
                CHECK(outcome(resumed) == outcome(reference));
                bool warned = false;
                for (const auto& w : resumed.setup().warnings) warned = warned || w.find("truncated last line") != std::string::npos;
                CHECK(warned == torn);
                // and the journal now holds the whole run, on whole lines: attaching and resuming
                // again give the same trials
                CHECK(outcome(ht::load_result(cut_path)) == outcome(reference));
                CHECK(outcome(ht::Tuner(journal_space(), make(), options(cut_path, 20)).fit(journal_trainer)) ==
                      outcome(reference));
            }
        }
        fs::remove(full_path);
        fs::remove(cut_path);
    }
}

TEST_CASE("synchronous Hyperband over a grid smaller than max_jobs resumes its journal, cut at any line") {
    // Two workers: while the last grid point (k = 5) trains, the other worker asks and finds the
    // grid empty. That ask started nothing, so it is not in the journal: the rung must not close on
    // what it learnt (it did, at trial 5's end, and every resume of the journal past that end
    // diverged from the replay's decisions).
    const ht::SearchSpace space{ht::IntegerParameter("k", 0, 5)};
    auto make = [] {
        return ht::AnyStrategy(ht::Hyperband({.min_resource = 1, .max_resource = 9,
                                              .mode = ht::HyperbandMode::Synchronous},
                                             ht::GridSampler()));
    };
    auto trainer = [](const ht::Config& c, ht::Trial& trial) {
        const int k = c.get<int>("k");
        if (k == 5 && trial.budget() == 1) std::this_thread::sleep_for(100ms);
        double loss = 0.0;
        for (ht::Resource r = trial.resumed_from() + 1; r <= trial.budget(); ++r) {
            trial.report(r, loss = (k * 7 % 10) + 1.0 / static_cast<double>(r));
            if (trial.should_stop()) break;
        }
        return loss;
    };
    auto full_path = temp_journal("grid-full");
    const auto reference = ht::Tuner(space, make(), options(full_path, 7, 2)).fit(trainer);
    REQUIRE(reference.trials().size() == 6);
    REQUIRE(reference.stop_reason() == "strategy finished");
    const auto lines = lines_of(full_path);
    auto cut_path = temp_journal("grid-cut");
    for (std::size_t cut = 1; cut <= lines.size(); ++cut) {
        CAPTURE(cut);
        write_lines(cut_path, lines, cut);
        const auto resumed = ht::Tuner(space, make(), options(cut_path, 7, 2)).fit(trainer);
        CHECK(outcome(resumed) == outcome(reference));
        ht::testing::check_same_result(resumed, ht::load_result(cut_path));
    }
    fs::remove(full_path);
    fs::remove(cut_path);
}

TEST_CASE("a trial stopped for a report past max_resource, cut by a crash after the Stop, ends Completed as live") {
    // The trainer trains one step past its budget: the report past max_resource gets a Stop, and
    // the trial, trained in full, is Completed. A crash between the Stop and the trial's end
    // leaves the trial to the resume, which must end it the same way, not as stopped early.
    const auto overrunning = [](const ht::Config& c, ht::Trial& trial) {
        double loss = 0.0;
        for (ht::Resource r = trial.resumed_from() + 1; r <= trial.budget() + 1; ++r) {
            trial.report(r, loss = curve_loss_at(c, r));
            if (trial.should_stop()) break;
        }
        return loss;
    };
    const auto make = [] { return ht::ASHA({.min_resource = 1, .max_resource = 3, .type = ht::HalvingType::Stop}); };
    const auto full_path = temp_journal("overrun-full");
    const auto reference = ht::Tuner(journal_space(), make(), options(full_path, 6)).fit(overrunning);
    REQUIRE(reference.count(ht::TrialStatus::Completed) > 0);
    const auto lines = lines_of(full_path);
    const auto stop = std::find_if(lines.begin(), lines.end(),
                                   [](const std::string& l) { return l.find("exceeds max_resource 3") != std::string::npos; });
    REQUIRE(stop != lines.end());
    const auto cut_path = temp_journal("overrun-cut");
    write_lines(cut_path, lines, static_cast<std::size_t>(stop - lines.begin()) + 1);
    const auto resumed = ht::Tuner(journal_space(), make(), options(cut_path, 6)).fit(overrunning);
    CHECK(outcome(resumed) == outcome(reference));
    CHECK(outcome(ht::load_result(cut_path)) == outcome(reference));
    fs::remove(full_path);
    fs::remove(cut_path);
}

TEST_CASE("a trainer's own epochs stopped by the median rule under a budget of 1 are Stopped, also resumed after the Stop") {
    // MedianStopping(RandomSearch()) runs each trial to a budget of 1, no resource in play, and a
    // trainer that counts its own epochs reports past it. A Stop there was taken for a Stop of a
    // trainer that overran its rung: the trial was Completed, counted for best() as trained in
    // full, and the run's "without early stopping" estimate scaled nothing. So was one that
    // reported one epoch more after its Stop (a command trainer's epoch under way at SIGTERM).
    for (const int late : {0, 1}) {
        CAPTURE(late);
        const auto own_epochs = [late](const ht::Config& c, ht::Trial& trial) {
            double loss = 0.0;
            int after_stop = 0;
            for (ht::Resource r = 1; r <= 12; ++r) {
                // Alike at epoch 1, apart after it: the rule stops trials past the budget of 1.
                trial.report(r, loss = 1.0 / static_cast<double>(r) +
                                       static_cast<double>(r - 1) * curve_loss_at(c, 1000));
                if (trial.should_stop() && after_stop++ == late) break;
            }
            return loss;
        };
        const auto make = [] { return ht::MedianStopping(ht::RandomSearch()); };
        const auto full_path = temp_journal("median-own-epochs");
        const auto reference = ht::Tuner(journal_space(), make(), options(full_path, 16)).fit(own_epochs);
        std::size_t told = 0;
        for (const auto& t : reference.trials()) {
            if (std::none_of(t.decisions.begin(), t.decisions.end(),
                             [](const ht::DecisionRecord& d) { return d.kind == ht::DecisionRecord::Kind::Stop; }))
                continue;
            ++told;
            CAPTURE(t.id);
            CHECK(t.status == ht::TrialStatus::Stopped);
            CHECK(t.resource_used > 1);
            CHECK(t.resource_used < 12);
        }
        REQUIRE(told > 0);
        CHECK(reference.count(ht::TrialStatus::Stopped) == told);
        CHECK(reference.count(ht::TrialStatus::Completed) == reference.trials().size() - told);
        CHECK(reference.cost().billable_seconds_without_early_stopping > reference.cost().billable_seconds);
        if (late == 0) {
            // A crash between the first Stop and its trial's end: the resume ends that trial as live.
            const auto lines = lines_of(full_path);
            const auto stop = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
                return l.find("worse than the median") != std::string::npos;
            });
            REQUIRE(stop != lines.end());
            const auto cut_path = temp_journal("median-own-epochs-cut");
            write_lines(cut_path, lines, static_cast<std::size_t>(stop - lines.begin()) + 1);
            const auto resumed = ht::Tuner(journal_space(), make(), options(cut_path, 16)).fit(own_epochs);
            CHECK(outcome(resumed) == outcome(reference));
            CHECK(outcome(ht::load_result(cut_path)) == outcome(reference));
            fs::remove(cut_path);
        }
        fs::remove(full_path);
    }
}

TEST_CASE("a run that ended on max_trials_without_improvement ends again at once, though a slow trial improved after") {
    // The criterion was met as the third quick trial ended; the slow trial 3, already running,
    // improved after it. The resume judged the trials in id order and only at the end, so the
    // slow trial's improvement reset the count and the run went on searching when run again.
    const auto path = temp_journal("no-improvement-again");
    std::atomic<int> calls{0};
    auto objective = [&](const ht::Config&, ht::Trial& t) {
        ++calls;
        std::this_thread::sleep_for(t.id() == 3 ? 300ms : 5ms);
        return t.id() == 3 ? 0.1 : 0.5;
    };
    ht::TunerOptions o{.max_jobs = 20, .max_parallel_jobs = 2, .seed = 1, .max_trials_without_improvement = 2,
                       .progress = ht::ProgressBar::Never, .journal = path};
    const ht::Result first = ht::Tuner(journal_space(), ht::RandomSearch(), o).fit(objective);
    REQUIRE(first.trials().size() == 4);
    CHECK(first.stop_reason() == "no improvement above 1% in 2 trials");
    const int ran = calls.load();
    const ht::Result again = ht::Tuner(journal_space(), ht::RandomSearch(), o).fit(objective);
    CHECK(again.trials().size() == 4);
    CHECK(calls.load() == ran);
    CHECK(again.stop_reason() == "no improvement above 1% in 2 trials");
    fs::remove(path);
}

TEST_CASE("a trial a crash cut while it ran, which the resumed run ends before running it again, was running") {
    // The resume ended at once (its target was met) and the trial in flight at the crash, which
    // waits to run again, got "the run ended while the trial waited for promotion".
    const auto full_path = temp_journal("cut-running-full");
    const auto cut_path = temp_journal("cut-running-cut");
    auto o = options(full_path, 30, 2);
    o.target_objective = 0.2;
    const auto trainer = [](const ht::Config& c, ht::Trial& t) {
        double v = 0.0;
        for (ht::Resource e = t.resumed_from() + 1; e <= t.budget(); ++e) {
            std::this_thread::sleep_for(5ms);
            v = c.get<double>("x") + 1.0 / static_cast<double>(e);
            t.report(e, v);
            t.save_checkpoint(std::to_string(e));
            if (t.should_stop()) break;
        }
        return v;
    };
    const auto make = [] { return ht::ASHA({.min_resource = 1, .max_resource = 9}); };
    const auto full = ht::Tuner(journal_space(), make(), o).fit(trainer);
    REQUIRE(full.stop_reason().starts_with("target objective 0.2 reached by trial "));
    // The crash: right after the trial that met the target ended.
    const auto lines = lines_of(full_path);
    const auto met = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
        return l.find("\"trial_ended\"") != std::string::npos && l.find("\"Completed\"") != std::string::npos &&
               l.find("\"resource\":9") != std::string::npos;
    });
    REQUIRE(met != lines.end());
    write_lines(cut_path, lines, static_cast<std::size_t>(met - lines.begin()) + 1);
    std::set<ht::TrialId> in_flight;
    const ht::Result at_crash = ht::load_result(cut_path);
    for (const auto& t : at_crash.trials())
        if (t.status == ht::TrialStatus::Running) in_flight.insert(t.id);
    REQUIRE(!in_flight.empty());  // the other worker was training
    o.journal = cut_path;
    const auto resumed = ht::Tuner(journal_space(), make(), o).fit(trainer);
    CHECK(resumed.stop_reason() == full.stop_reason());
    for (const auto& t : resumed.trials()) {
        if (!in_flight.contains(t.id)) continue;
        CAPTURE(t.id);
        CHECK(t.status == ht::TrialStatus::Stopped);
        CHECK(t.failure_reason == "the run ended while this trial was running");
    }
    for (const auto& p : {full_path, cut_path}) {
        fs::remove(p);
        fs::remove_all(p + ".checkpoints");
    }
}

TEST_CASE("a journal's first line cut by a crash starts the run afresh with a warning, but another file is refused untouched") {
    auto path = temp_journal("first-line");
    auto reference = ht::Tuner(journal_space(), asha(), options(path, 12)).fit(journal_trainer);
    const std::string first = lines_of(path).front();
    for (const std::size_t keep : {std::size_t{1}, std::size_t{12}, first.size() / 2, first.size() - 1}) {
        CAPTURE(keep);
        write_lines(path, {}, 0, first.substr(0, keep));
        // Reading it alone says what was dropped, not that the file is empty.
        const std::string why = fmt::format("journal '{}': dropped a truncated last line 1 ({} bytes), most likely "
                                            "cut by a crash while it was written; no complete line is left to load",
                                            path, keep);
        CHECK_THROWS_WITH_AS((void)ht::load_result(path), why.c_str(), ht::IoError);
        auto resumed = ht::Tuner(journal_space(), asha(), options(path, 12)).fit(journal_trainer);
        CHECK(outcome(resumed) == outcome(reference));
        REQUIRE(resumed.setup().warnings.size() == reference.setup().warnings.size() + 1);
        CHECK(resumed.setup().warnings.front() ==
              fmt::format("journal '{}': dropped a truncated last line 1 ({} bytes), most likely cut by a crash while "
                          "it was written",
                          path, keep));
    }
    // Notes, one line without a newline: not the start of a journal, so not written over.
    const std::string notes = "lr=0.01 depth=6  # my best settings";
    write_lines(path, {}, 0, notes);
    try {
        (void)ht::Tuner(journal_space(), asha(), options(path, 12));
        FAIL("a file that is not a journal was taken for one");
    } catch (const ht::IoError& e) {
        CHECK(std::string(e.what()).starts_with(fmt::format("journal '{}' line 1: not a journal (", path)));
        CHECK(std::string(e.what()).ends_with(R"(, and a journal's first line starts with {"event":"run_started"; )"
                                              "the tuner would write over this file: give it another path"));
    }
    CHECK(lines_of(path) == std::vector<std::string>{notes});
    fs::remove(path);
}

TEST_CASE("load_result on a journal cut while a trial ran: it shows Running at its last report, with a warning") {
    auto path = temp_journal("unended");
    (void)ht::Tuner(journal_space(), asha(), options(path, 12)).fit(journal_trainer);
    const auto lines = lines_of(path);
    // Cut after a trial's third report: it started, reported steps 1..3, and had not ended.
    std::size_t cut = 0;
    ht::TrialId running = 0;
    std::map<ht::TrialId, int> reports;
    for (std::size_t i = 0; i < lines.size() && cut == 0; ++i) {
        const auto event = nlohmann::json::parse(lines[i]);
        if (event.at("event") == "report" && ++reports[event.at("trial").get<ht::TrialId>()] == 3) {
            cut = i + 1;
            running = event.at("trial").get<ht::TrialId>();
        }
    }
    REQUIRE(cut > 0);
    write_lines(path, lines, cut);
    const ht::Result r = ht::load_result(path);
    const ht::TrialRecord* t = nullptr;
    for (const auto& rec : r.trials())
        if (rec.id == running) t = &rec;
    REQUIRE(t != nullptr);
    CHECK(t->status == ht::TrialStatus::Running);
    CHECK(t->resource_used == 3);
    CHECK(t->curve.size() == 3);
    // It trained until the journal's last event: that stretch is a segment, and in its elapsed and
    // billable time as in the segment (it was left out of both)
    double spans = 0.0;
    for (const auto& g : t->segments) spans += g.end - g.start;
    CHECK(spans > 0.0);
    CHECK(t->elapsed_seconds == doctest::Approx(spans));
    CHECK(t->billable_seconds == doctest::Approx(spans * t->instances));
    CHECK(r.cost().busy_seconds >= spans);
    // The summary's counts add up to the trials: those running or paused are "unfinished".
    const std::size_t unfinished = r.count(ht::TrialStatus::Running) + r.count(ht::TrialStatus::Paused);
    CHECK(r.summary().find(fmt::format("{} completed, {} stopped early, {} failed, {} unfinished",
                                       r.count(ht::TrialStatus::Completed), r.count(ht::TrialStatus::Stopped),
                                       r.count(ht::TrialStatus::Failed), unfinished)) != std::string::npos);
    REQUIRE_FALSE(r.setup().warnings.empty());
    CHECK(r.setup().warnings.back() ==
          fmt::format("journal '{}' ends without a run_ended event: its run was cut (a crash or a kill: no tuner "
                      "holds it now); the trials it was running show as InProgress (TrialStatus::Running) and those waiting for a promotion as "
                      "Paused (the same program, run again, resumes it)",
                      path));
    // Resumed, the run ends, and then it loads as finished.
    (void)ht::Tuner(journal_space(), asha(), options(path, 12)).fit(journal_trainer);
    const ht::Result done = ht::load_result(path);
    CHECK(done.count(ht::TrialStatus::Running) == 0);
    for (const auto& w : done.setup().warnings) CHECK(w.find("ends without a run_ended event") == std::string::npos);
    fs::remove(path);
}

TEST_CASE("load_result on the journal of a run still going says a tuner is writing it, not that it crashed") {
    auto path = temp_journal("still_going");
    std::vector<std::string> seen;  // load_result's last warning, from inside the run's own objective
    auto trainer = [&](const ht::Config& c, ht::Trial& trial) {
        const double value = journal_trainer(c, trial);
        if (seen.empty()) {
            const ht::Result now = ht::load_result(path);
            seen.push_back(now.setup().warnings.empty() ? std::string() : now.setup().warnings.back());
        }
        return value;
    };
    (void)ht::Tuner(journal_space(), asha(), options(path, 4)).fit(trainer);
    REQUIRE(seen.size() == 1);
    CHECK(seen[0] == fmt::format("journal '{}' ends without a run_ended event: a tuner is writing it now (its run is "
                                 "still going); the trials it was running show as InProgress (TrialStatus::Running) and those waiting for a "
                                 "promotion as Paused",
                                 path));
    fs::remove(path);
}

TEST_CASE("the finished program run again adds no trial when its run ended on a target or on no improvement") {
    // The completion criteria were not judged on the replayed trials: each run of the same program
    // went on searching (3 trials, then 4, then 9).
    for (const bool target : {true, false}) {
        CAPTURE(target);
        auto path = temp_journal(target ? "target" : "no_improvement");
        auto opts = [&] {
            ht::TunerOptions o = options(path, 40);
            if (target) o.target_objective = 0.5;
            else o.max_trials_without_improvement = 3;
            return o;
        };
        auto plain = [](const ht::Config& c) { return c.get<double>("x"); };
        const ht::Result first = ht::Tuner(journal_space(), ht::RandomSearch(), opts()).fit(plain);
        REQUIRE(first.trials().size() < 40);
        int calls = 0;
        const ht::Result again = ht::Tuner(journal_space(), ht::RandomSearch(), opts()).fit([&](const ht::Config& c) {
            ++calls;
            return c.get<double>("x");
        });
        CHECK(calls == 0);
        CHECK(again.trials().size() == first.trials().size());
        CHECK(again.stop_reason() == first.stop_reason());
        fs::remove(path);
    }
}

TEST_CASE("the finished program run again says what the run's end says once, not once a run of it") {
    auto path = temp_journal("warned-once");
    auto failing = [](const ht::Config&) -> double { throw std::runtime_error("boom"); };
    std::vector<std::string> warnings;
    for (int run = 0; run < 3; ++run) {
        CAPTURE(run);
        const ht::Result r = ht::Tuner(journal_space(), ht::RandomSearch(), options(path, 2)).fit(failing);
        warnings = r.setup().warnings;
        CHECK(std::count(warnings.begin(), warnings.end(),
                         "all 2 trials failed; the first, trial 0: the objective threw: boom") == 1);
        CHECK(ht::load_result(path).setup().warnings == warnings);
    }
    fs::remove(path);
}

TEST_CASE("the time between a crash and the resume is no wall time of the run, as after a clean end") {
    auto path = temp_journal("downtime");
    (void)ht::Tuner(journal_space(), asha(), options(path, 12)).fit(journal_trainer);
    const auto lines = lines_of(path);
    write_lines(path, lines, lines.size() / 2);  // cut: no run_ended, as after kill -9
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    const ht::Result r = ht::Tuner(journal_space(), asha(), options(path, 12)).fit(journal_trainer);
    // The run's own work takes milliseconds; the 1.2 s gap used to be counted (utilisation 3%).
    CHECK(r.setup().wall_seconds < 0.6);
    CHECK(ht::load_result(path).setup().wall_seconds == doctest::Approx(r.setup().wall_seconds));
    fs::remove(path);
}

TEST_CASE("a run cut by a crash during a retry has only the retries it had left when resumed") {
    auto path = temp_journal("retry-cut");
    std::atomic<int> calls{0};
    std::string cause = "out of memory";
    const auto always_fails = [&](const ht::Config&, ht::Trial& trial) -> double {
        ++calls;
        trial.report(1, 0.5);
        throw std::runtime_error(cause);
    };
    auto o = options(path, 1);
    o.max_retries = 1;
    (void)ht::Tuner(journal_space(), ht::RandomSearch(), o).fit(always_fails);
    CHECK(calls == 2);
    // Cut after the first attempt's retry was journaled, as a crash during the retry leaves it.
    const auto lines = lines_of(path);
    std::size_t retried = 0;
    while (retried < lines.size() && lines[retried].find("\"event\":\"trial_retried\"") == std::string::npos)
        ++retried;
    REQUIRE(retried < lines.size());
    write_lines(path, lines, retried + 1);
    calls = 0;
    const ht::Result r = ht::Tuner(journal_space(), ht::RandomSearch(), o).fit(always_fails);
    CHECK(calls == 1);  // the retry, not two more attempts
    REQUIRE(r.trials().size() == 1);
    CHECK(r.trials()[0].status == ht::TrialStatus::Failed);
    CHECK(r.trials()[0].retries == 1);
    CHECK(r.trials()[0].failure_reason == "the objective threw: out of memory");
    ht::testing::check_same_result(r, ht::load_result(path));
    // The retry after the crash fails otherwise: the final reason keeps the first session's cause.
    write_lines(path, lines, retried + 1);
    cause = "disk full";
    const ht::Result other = ht::Tuner(journal_space(), ht::RandomSearch(), o).fit(always_fails);
    REQUIRE(other.trials().size() == 1);
    CHECK(other.trials()[0].failure_reason ==
          "the objective threw: disk full (its first attempt failed otherwise: the objective threw: out of memory)");
    ht::testing::check_same_result(other, ht::load_result(path));
    fs::remove(path);
}

TEST_CASE("a trainer cut after its last report, its state kept in its checkpoint folder, ends on resume without a call") {
    // As CommandObjective's {checkpoint_dir} trainers do: the state after each epoch in the
    // folder, and an epoch loop that starts after it. Called at its budget, such a trainer has
    // nothing to train and no value to give (a command prints nothing and fails).
    auto path = temp_journal("folder-end");
    std::atomic<int> calls{0};
    const auto trainer = [&](const ht::Config& c, ht::Trial& trial) {
        ++calls;
        const std::string state = trial.checkpoint_dir() + "/state";
        ht::Resource start = 0;
        std::ifstream(state) >> start;
        if (start >= trial.budget()) throw std::runtime_error("nothing left to train, no value to give");
        double loss = 0.0;
        for (ht::Resource r = start + 1; r <= trial.budget(); ++r) {
            loss = curve_loss_at(c, r);
            std::ofstream(state) << r;
            trial.report(r, loss);
        }
        return loss;
    };
    const auto reference = ht::Tuner(journal_space(), ht::RandomSearch({.max_resource = 3}), options(path, 3)).fit(trainer);
    REQUIRE(reference.count(ht::TrialStatus::Completed) == 3);
    // Cut after trial 1's report at step 3, its state saved: the crash came before its end.
    const auto lines = lines_of(path);
    std::size_t last_report = 0;
    for (std::size_t i = 0; i < lines.size(); ++i)
        if (lines[i].find("\"event\":\"report\"") != std::string::npos &&
            lines[i].find("\"trial\":1,") != std::string::npos && lines[i].find("\"step\":3,") != std::string::npos)
            last_report = i;
    REQUIRE(last_report > 0);
    write_lines(path, lines, last_report + 1);
    fs::create_directories(path + ".checkpoints/trial-1");
    std::ofstream(path + ".checkpoints/trial-1/state") << 3;
    calls = 0;
    const auto resumed = ht::Tuner(journal_space(), ht::RandomSearch({.max_resource = 3}), options(path, 3)).fit(trainer);
    CHECK(calls == 1);  // trial 2 alone
    CHECK(outcome(resumed) == outcome(reference));
    CHECK(resumed.trials()[1].status == ht::TrialStatus::Completed);
    CHECK(resumed.trials()[1].resource_used == 3);
    ht::testing::check_same_result(resumed, ht::load_result(path));
    CHECK_FALSE(fs::exists(path + ".checkpoints"));
    fs::remove(path);
}

TEST_CASE("a trial past max_trial_seconds that fails is not retried, and the warning says it failed") {
    auto o = options("", 1);
    o.max_trial_seconds = 0.05;
    o.max_retries = 2;
    std::atomic<int> calls{0};
    const auto r = ht::Tuner(journal_space(), ht::RandomSearch(), o).fit([&](const ht::Config&, ht::Trial& trial) -> double {
        ++calls;
        while (!trial.should_stop()) std::this_thread::sleep_for(1ms);
        throw std::runtime_error("stopped before it had a value");
    });
    CHECK(calls == 1);
    REQUIRE(r.trials().size() == 1);
    CHECK(r.trials()[0].status == ht::TrialStatus::Failed);
    CHECK(r.trials()[0].retries == 0);
    REQUIRE(r.setup().warnings.size() == 2);
    CHECK(r.setup().warnings[0] ==
          "trial 0 ran past max_trial_seconds = 0.05 s and then failed (a trial past the limit is not retried)");
    CHECK(r.setup().warnings[1] == "all 1 trials failed; the first, trial 0: the objective threw: stopped before it "
                                   "had a value (after it ran past max_trial_seconds = 0.05 s)");
}

TEST_CASE("the time a trial trained before a crash is billed: its cut segment ends at the last event journaled") {
    auto path = temp_journal("cut-segment");
    auto o = options(path, 4);
    o.instances_per_trial = 3;
    const auto slow = [](const ht::Config& c, ht::Trial& trial) {
        double loss = 0.0;
        for (ht::Resource r = trial.resumed_from() + 1; r <= trial.budget(); ++r) {
            std::this_thread::sleep_for(20ms);
            trial.report(r, loss = curve_loss_at(c, r));
        }
        return loss;
    };
    (void)ht::Tuner(journal_space(), ht::RandomSearch({.max_resource = 3}), o).fit(slow);
    // Cut after trial 1's second report, as kill -9 leaves it.
    const auto lines = lines_of(path);
    std::size_t cut = 0;
    for (std::size_t i = 0; i < lines.size() && cut == 0; ++i)
        if (lines[i].find("\"event\":\"report\"") != std::string::npos &&
            lines[i].find("\"trial\":1,") != std::string::npos && lines[i].find("\"step\":2,") != std::string::npos)
            cut = i + 1;
    REQUIRE(cut > 0);
    write_lines(path, lines, cut);
    const ht::Result r = ht::Tuner(journal_space(), ht::RandomSearch({.max_resource = 3}), o).fit(slow);
    const ht::TrialRecord& t = r.trials().at(1);
    REQUIRE(t.segments.size() == 2);
    // Two steps of 20 ms before the crash, three after it: all billed, three instances each.
    CHECK(t.segments[0].end - t.segments[0].start >= 0.035);
    CHECK(t.elapsed_seconds >= 0.035 + 0.055);
    CHECK(t.billable_seconds == doctest::Approx(3.0 * t.elapsed_seconds));
    CHECK(r.cost().busy_seconds >= 4 * 0.055 + 0.035);
    ht::testing::check_same_result(r, ht::load_result(path));
    fs::remove(path);
}

TEST_CASE("a run resumed with fewer workers counts each session's own workers in its utilisation") {
    auto path = temp_journal("workers");
    const auto sleepy = [](const ht::Config& c, ht::Trial&) {
        std::this_thread::sleep_for(30ms);
        return c.get<double>("x");
    };
    const ht::Result first = ht::Tuner(journal_space(), ht::RandomSearch(), options(path, 8, 4)).fit(sleepy);
    const ht::Result r = ht::Tuner(journal_space(), ht::RandomSearch(), options(path, 10, 1)).fit(sleepy);
    const ht::CostSummary c = r.cost();
    // Eight trials on four workers, then two on one: counted as one worker throughout, the busy
    // time of the first session gave a utilisation of about 2.5.
    CHECK(c.busy_seconds > 0.29);
    CHECK(c.utilisation <= 1.0);
    CHECK(c.utilisation > 0.5);
    CHECK(c.worker_seconds > c.wall_seconds + 2.0 * first.cost().wall_seconds);
    CHECK(c.worker_seconds < 4.0 * c.wall_seconds);
    CHECK(r.setup().max_parallel_jobs == 4);
    CHECK(r.summary().find("wall time (up to 4 parallel)") != std::string::npos);
    CHECK(first.summary().find("wall time (4 parallel)") != std::string::npos);
    ht::testing::check_same_result(r, ht::load_result(path));
    fs::remove(path);
}

TEST_CASE("kill -9 at random moments: every resume keeps what completed and nothing runs twice") {
    auto reference = ht::Tuner(journal_space(), asha(), options("", 30)).fit(journal_trainer);
    auto path = temp_journal("kill");
    auto slow_trainer = [](const ht::Config& c, ht::Trial& trial) {
        double loss = 0.0;
        for (ht::Resource r = 1; r <= trial.budget(); ++r) {
            std::this_thread::sleep_for(2ms);
            trial.report(r, loss = curve_loss_at(c, r));
            if (trial.should_stop()) break;
        }
        return loss;
    };
    std::size_t kills = 0;
    std::uint64_t rng = 12345;
    bool finished_alone = false;
    for (int round = 0; round < 60 && !finished_alone; ++round) {
        pid_t child = ::fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            try {
                ht::Tuner tuner(journal_space(), asha(), options(path, 30));
                (void)tuner.fit(slow_trainer);
            } catch (...) {
                ::_exit(2);
            }
            ::_exit(0);
        }
        rng = ht::detail::splitmix64(rng);
        std::this_thread::sleep_for(std::chrono::milliseconds(5 + rng % 20));
        ::kill(child, SIGKILL);
        int status = 0;
        ::waitpid(child, &status, 0);
        if (WIFSIGNALED(status)) ++kills;
        else {
            CHECK(WEXITSTATUS(status) == 0);
            finished_alone = true;
        }
        // what is on disk is always a consistent run: no trial twice, every ended trial whole (a
        // child killed before its first line leaves no journal, or one with no event: nothing to
        // attach to)
        if (!fs::exists(path) || ht::detail::read_journal(path).events.empty()) continue;
        auto partial = ht::load_result(path);
        std::set<ht::TrialId> ids;
        for (const auto& t : partial.trials()) CHECK(ids.insert(t.id).second);
    }
    CHECK(kills >= 5);
    auto finished = ht::Tuner(journal_space(), asha(), options(path, 30)).fit(journal_trainer);
    CHECK(outcome(finished) == outcome(reference));
    fs::remove(path);
}

TEST_CASE("a strategy's settings are journaled, and a resume with one changed names it") {
    // What each strategy records beyond its name: its options, then its sampler's, named after it.
    const ht::Settings median = ht::MedianStopping(ht::ASHA({.max_resource = 9, .type = ht::HalvingType::Stop}), {.min_trials = 4}).settings();
    REQUIRE(median.size() >= 4);
    CHECK(median[0] == std::pair<std::string, std::string>{"min_trials", "4"});
    CHECK(median[1] == std::pair<std::string, std::string>{"grace_steps", "1"});
    CHECK(median[2] == std::pair<std::string, std::string>{"min_resource", "1"});
    CHECK(median[3] == std::pair<std::string, std::string>{"reduction_factor", "3"});
    const ht::Settings grid = ht::GridSearch({.points = {{"x", 4}, {"k", 3}}}).settings();
    CHECK(grid == ht::Settings{{"Grid.points", "k=3, x=4"}});
    const ht::Settings hyperband = ht::Hyperband({.max_resource = 27, .mode = ht::HyperbandMode::Synchronous}).settings();
    CHECK(std::count(hyperband.begin(), hyperband.end(), std::pair<std::string, std::string>{"mode", "synchronous"}) == 1);
    CHECK(ht::RandomSearch().settings().empty());

    struct Case {
        const char* name;
        std::function<ht::AnyStrategy(bool changed)> make;
        const char* message;
    };
    const std::vector<Case> cases{
        {"MedianStopping",
         [](bool changed) {
             return ht::AnyStrategy(ht::MedianStopping(ht::RandomSearch({.max_resource = 9}), {.min_trials = changed ? 3u : 5u}));
         },
         "its MedianStopping(RandomSearch) min_trials is 5, this tuner's is 3"},
        {"GridSearch",
         [](bool changed) {
             return ht::AnyStrategy(ht::GridSearch({.points = {{"x", changed ? 5u : 4u}}, .max_resource = 9}));
         },
         "its GridSearch Grid.points is x=4, this tuner's is x=5"},
        {"Bayesian",
         [](bool changed) {
             return ht::AnyStrategy(ht::Bayesian({.candidates = changed ? 128u : 64u, .max_resource = 9}));
         },
         "its Bayesian GP.candidates is 64, this tuner's is 128"},
        {"Hyperband",  // synchronous and asynchronous stop-type Hyperband have the same name
         [](bool changed) {
             return ht::AnyStrategy(ht::Hyperband({.max_resource = 9,
                                                   .mode = changed ? ht::HyperbandMode::Asynchronous
                                                                   : ht::HyperbandMode::Synchronous,
                                                   .type = changed ? ht::HalvingType::Stop : ht::HalvingType::Promotion,
                                                   .brackets = 3}));
         },
         "its Hyperband mode is synchronous, this tuner's is asynchronous"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.name);
        auto path = temp_journal((std::string("settings-") + c.name).c_str());
        (void)ht::Tuner(journal_space(), c.make(false), options(path, 4)).fit(journal_trainer);
        CHECK_THROWS_WITH_AS(ht::Tuner(journal_space(), c.make(true), options(path, 6)), doctest::Contains(c.message),
                             ht::InvalidArgument);
        CHECK(ht::Tuner(journal_space(), c.make(false), options(path, 6)).fit(journal_trainer).trials().size() == 6);
        fs::remove(path);
    }
}

TEST_CASE("a journal from another run, or a damaged one, is refused with the reason") {
    auto path = temp_journal("foreign");
    (void)ht::Tuner(journal_space(), asha(), options(path, 5)).fit(journal_trainer);
    ht::SearchSpace other{ht::ContinuousParameter("x", 0.0, 2.0), ht::IntegerParameter("k", 1, 5),
                          ht::CategoricalParameter("kind", {"a", "b"})};
    CHECK_THROWS_WITH_AS(ht::Tuner(other, asha(), options(path, 5)),
                         doctest::Contains("belongs to another search space: parameter 'x' differs"), ht::InvalidArgument);
    CHECK_THROWS_WITH_AS(ht::Tuner(journal_space(), ht::RandomSearch(), options(path, 5)),
                         doctest::Contains("its strategy is ASHA-promotion-fill, this tuner's is RandomSearch"),
                         ht::InvalidArgument);
    {  // a journal of the stop type, the default before, resumed with today's default: the error names the fix
        auto stop_path = temp_journal("stop-type");
        (void)ht::Tuner(journal_space(),
                        ht::ASHA({.min_resource = 1, .max_resource = 9, .type = ht::HalvingType::Stop}),
                        options(stop_path, 5))
            .fit(journal_trainer);
        CHECK_THROWS_WITH_AS(ht::Tuner(journal_space(), asha(), options(stop_path, 5)),
                             doctest::Contains("its strategy is ASHA, this tuner's is ASHA-promotion-fill (its rungs are "
                                               "of the stop type: resume it with .type = ht::HalvingType::Stop)"),
                             ht::InvalidArgument);
        fs::remove(stop_path);
    }
    {  // a journal of the promotion type without filling, the default before, resumed with today's default
        auto unfilled_path = temp_journal("unfilled");
        (void)ht::Tuner(journal_space(), ht::ASHA({.min_resource = 1, .max_resource = 9, .fill_idle_workers = false}),
                        options(unfilled_path, 5))
            .fit(journal_trainer);
        CHECK_THROWS_WITH_AS(ht::Tuner(journal_space(), asha(), options(unfilled_path, 5)),
                             doctest::Contains("its strategy is ASHA-promotion, this tuner's is ASHA-promotion-fill (it "
                                               "ran without filling idle workers: resume it with .fill_idle_workers = "
                                               "false)"),
                             ht::InvalidArgument);
        fs::remove(unfilled_path);
    }
    auto reseeded = options(path, 5);
    reseeded.seed = 4;
    CHECK_THROWS_WITH_AS(ht::Tuner(journal_space(), asha(), reseeded), doctest::Contains("its seed is 3, this tuner's is 4"),
                         ht::InvalidArgument);
    CHECK_THROWS_WITH_AS(ht::Tuner(journal_space(), ht::ASHA({.min_resource = 1, .max_resource = 27}), options(path, 5)),
                         doctest::Contains("its max_resource is 9, this tuner's is 27"), ht::InvalidArgument);
    // the options the strategy's name does not show are its settings, journaled and compared
    CHECK_THROWS_WITH_AS(
        ht::Tuner(journal_space(), ht::ASHA({.min_resource = 1, .max_resource = 9, .reduction_factor = 2}), options(path, 5)),
        doctest::Contains(fmt::format("journal '{}' belongs to another run: its ASHA-promotion-fill reduction_factor is 3, "
                                      "this tuner's is 2; a run resumes with the options it began with",
                                      path)
                              .c_str()),
        ht::InvalidArgument);
    CHECK_THROWS_WITH_AS(
        ht::Tuner(journal_space(), ht::ASHA({.min_resource = 3, .max_resource = 9}), options(path, 5)),
        doctest::Contains("its ASHA-promotion-fill min_resource is 1, this tuner's is 3"), ht::InvalidArgument);
    {  // a journal from before settings were recorded: replaying notices that the decisions differ
        auto old_path = temp_journal("no-settings");
        auto old_lines = lines_of(path);
        const auto at = old_lines[0].find(",\"settings\":");
        REQUIRE(at != std::string::npos);
        old_lines[0] = old_lines[0].substr(0, at) + "}";
        write_lines(old_path, old_lines, old_lines.size());
        CHECK_THROWS_WITH_AS(
            (void)ht::Tuner(journal_space(), ht::ASHA({.min_resource = 1, .max_resource = 9, .reduction_factor = 2}),
                            options(old_path, 5))
                .fit(journal_trainer),
            doctest::Contains("resuming diverged"), ht::InvalidArgument);
        // and with the same options it resumes as ever
        CHECK(ht::Tuner(journal_space(), asha(), options(old_path, 6)).fit(journal_trainer).trials().size() == 6);
        fs::remove(old_path);
    }

    CHECK_THROWS_WITH_AS((void)ht::Tuner(journal_space(), asha(), options(path, 2)).fit(journal_trainer),
                         doctest::Contains("holds more trials than max_jobs = 2"), ht::InvalidArgument);
    auto lines = lines_of(path);
    lines[3] = "{\"event\": \"report\", broken";
    write_lines(path, lines, lines.size());
    CHECK_THROWS_WITH_AS(ht::Tuner(journal_space(), asha(), options(path, 5)), doctest::Contains("line 4"), ht::IoError);
    CHECK_THROWS_WITH_AS((void)ht::load_result(path), doctest::Contains("line 4"), ht::IoError);
    lines[0] = R"({"event":"run_started","format":99})";
    write_lines(path, lines, 1);
    CHECK_THROWS_WITH_AS((void)ht::load_result(path), doctest::Contains("format version 99 is not one of the supported 1 to 2"),
                         ht::IoError);
    // A negative version, a real number and a number past 64 bits are refused the same way.
    for (const char* version : {"-1", "2.0", "18446744073709551615", "\"2\""}) {
        lines[0] = fmt::format(R"({{"event":"run_started","format":{}}})", version);
        write_lines(path, lines, 1);
        const auto expected = fmt::format("format version {} is not one of the supported 1 to 2", version);
        CHECK_THROWS_WITH_AS((void)ht::load_result(path), doctest::Contains(expected.c_str()), ht::IoError);
    }
    fs::remove(path);
    CHECK_THROWS_WITH_AS(ht::Tuner(journal_space(), asha(), options("/nonexistent-dir/run.jsonl", 5)),
                         doctest::Contains("journal '/nonexistent-dir/run.jsonl': cannot write"), ht::IoError);
    // Two journals joined into one file are refused at the second run's first line.
    {
        auto one = temp_journal("joined-one");
        (void)ht::Tuner(journal_space(), asha(), options(one, 3)).fit(journal_trainer);
        auto run = lines_of(one);
        auto joined = run;
        joined.insert(joined.end(), run.begin(), run.end());
        write_lines(path, joined, joined.size());
        const auto expected = fmt::format("journal '{}' line {}: a second run_started: a journal holds one run (were two "
                                          "journals joined into one file?)",
                                          path, run.size() + 1);
        CHECK_THROWS_WITH_AS((void)ht::load_result(path), expected.c_str(), ht::IoError);
        CHECK_THROWS_WITH_AS((void)ht::Tuner(journal_space(), asha(), options(path, 3)).fit(journal_trainer),
                             expected.c_str(), ht::IoError);
        fs::remove(one);
        fs::remove(path);
    }
    // A line repeated or moved (a merge, an edit by hand): refused at that line, not taken as a
    // curve with a step twice or a second end whose value wins.
    {
        auto one = temp_journal("repeated-line");
        auto three_steps = [] { return ht::AnyStrategy(ht::RandomSearch({.max_resource = 3})); };
        (void)ht::Tuner(journal_space(), three_steps(), options(one, 3)).fit(journal_trainer);
        const auto run = lines_of(one);
        auto first_of = [&](std::string_view kind, std::size_t from = 0) {
            for (std::size_t i = from; i < run.size(); ++i)
                if (run[i].find(fmt::format("\"event\":\"{}\"", kind)) != std::string::npos) return i;
            FAIL("no such line");
            return run.size();
        };
        const std::size_t report = first_of("report"), second_report = first_of("report", report + 1),
                          ended = first_of("trial_ended");
        REQUIRE(second_report == report + 1);  // the same trial's steps 1 and 2
        for (const auto& [what, at, line] :
             {std::tuple{std::string("a report repeated"), report + 1, run[report]},
              std::tuple{std::string("reports swapped"), second_report, run[report]},
              std::tuple{std::string("an end repeated"), ended + 1, run[ended]}}) {
            CAPTURE(what);
            auto damaged = run;  // `at`: where the line it cannot take lands
            if (what == "reports swapped") std::swap(damaged[report], damaged[second_report]);
            else damaged.insert(damaged.begin() + static_cast<std::ptrdiff_t>(at), line);
            write_lines(path, damaged, damaged.size());
            const std::string where = fmt::format("journal '{}' line {}: trial ", path, at + 1);
            CHECK_THROWS_WITH_AS((void)ht::load_result(path), doctest::Contains(where.c_str()), ht::IoError);
            CHECK_THROWS_WITH_AS((void)ht::load_result(path), doctest::Contains("(a line repeated or out of order?)"),
                                 ht::IoError);
            CHECK_THROWS_WITH_AS((void)ht::Tuner(journal_space(), three_steps(), options(path, 3)).fit(journal_trainer),
                                 doctest::Contains(where.c_str()), ht::IoError);
        }
        fs::remove(one);
        fs::remove(path);
    }
    // A directory is not an empty journal: it is named as what it is.
    const std::string folder = fs::temp_directory_path().string();
    CHECK_THROWS_WITH_AS((void)ht::load_result(folder), fmt::format("journal '{}': cannot read: Is a directory", folder).c_str(),
                         ht::IoError);
    CHECK_THROWS_WITH_AS((void)ht::WarmStart::from_journals({folder}),
                         doctest::Contains(fmt::format("journal '{}': cannot read: Is a directory", folder).c_str()),
                         ht::IoError);
}

TEST_CASE("a journal whose parameters come in another order is refused, naming both orders") {
    auto path = temp_journal("reordered");
    (void)ht::Tuner(journal_space(), asha(), options(path, 5)).fit(journal_trainer);
    ht::SearchSpace reordered{ht::IntegerParameter("k", 1, 5), ht::ContinuousParameter("x", 0.0, 1.0),
                              ht::CategoricalParameter("kind", {"a", "b"})};
    CHECK_THROWS_WITH_AS(ht::Tuner(reordered, asha(), options(path, 5)),
                         doctest::Contains("belongs to another search space: the same parameters in another order: the "
                                           "journal has 'x', 'k', 'kind' and this search space has 'k', 'x', 'kind'"),
                         ht::InvalidArgument);
    // Other differences are still named parameter by parameter.
    using ht::detail::space_difference;
    auto json_of = [](const ht::SearchSpace& s) { return ht::detail::space_json(s); };
    CHECK(space_difference(json_of(journal_space()), json_of(journal_space())) == "");
    ht::SearchSpace fewer{ht::ContinuousParameter("x", 0.0, 1.0), ht::IntegerParameter("k", 1, 5)};
    CHECK(space_difference(json_of(journal_space()), json_of(fewer)) ==
          "the journal's parameter 'kind' is not in this search space");
    ht::SearchSpace renamed{ht::ContinuousParameter("x", 0.0, 1.0), ht::IntegerParameter("n", 1, 5),
                            ht::CategoricalParameter("kind", {"a", "b"})};
    CHECK(space_difference(json_of(journal_space()), json_of(renamed)).starts_with("parameter 'k' differs"));
    fs::remove(path);
}

TEST_CASE("a full disk stops the run cleanly, and what reached the journal is a consistent run") {
    auto path = temp_journal("full-disk");
    CHECK(exit_code_under_file_limit([&] {
              auto result = ht::Tuner(journal_space(), asha(), options(path, 1000)).fit(journal_trainer);
              if (result.stop_reason().find("': cannot write: ") == std::string::npos) return 3;
              if (result.trials().size() >= 1000) return 4;  // it did stop early
              if (result.count(ht::TrialStatus::Completed) == 0) return 5;
              return 0;
          }) == 0);
    auto saved = ht::load_result(path);
    CHECK(!saved.trials().empty());
    std::set<ht::TrialId> ids;
    for (const auto& t : saved.trials()) CHECK(ids.insert(t.id).second);
    // and the run resumes from what was saved (no limit now)
    auto resumed = ht::Tuner(journal_space(), asha(), options(path, 60)).fit(journal_trainer);
    CHECK(resumed.trials().size() == 60);
    fs::remove(path);
}

TEST_CASE("a checkpoint the disk cannot take stops the run cleanly, and fails no trial") {
    // Checkpoints of 64 KB under a 16 KB file-size limit (a full disk for the checkpoints alone,
    // the journal's lines fit): every save threw into the objective, so every trial failed for
    // good and the run spent its budget on them.
    auto path = temp_journal("full-checkpoints");
    auto trainer = [](const ht::Config& c, ht::Trial& trial) {
        double loss = 0.0;
        for (ht::Resource e = trial.resumed_from() + 1; e <= trial.budget(); ++e) {
            trial.report(e, loss = c.get<double>("x") + 1.0 / static_cast<double>(e));
            trial.save_checkpoint(std::string(64 * 1024, 'c'));
            if (trial.should_stop()) break;
        }
        return loss;
    };
    CHECK(exit_code_under_file_limit([&] {
              auto result = ht::Tuner(journal_space(), asha(), options(path, 30)).fit(trainer);
              if (result.stop_reason().find("cannot write") == std::string::npos) return 3;
              if (result.stop_reason().find("the run stops with what was saved") == std::string::npos) return 4;
              if (result.count(ht::TrialStatus::Failed) != 0) return 5;
              if (result.trials().size() >= 30) return 6;
              return 0;
          }) == 0);
    // with room again, the run resumes and goes to its end, no trial failed
    auto resumed = ht::Tuner(journal_space(), asha(), options(path, 30)).fit(trainer);
    CHECK(resumed.trials().size() == 30);
    CHECK(resumed.count(ht::TrialStatus::Failed) == 0);
    fs::remove_all(path + ".checkpoints");
    fs::remove(path);
}

TEST_CASE("a static bool is a bool in a loaded run and in the trials a resume runs again") {
    // The journal writes it as 1 with its declared type; read back as an integer, get<bool> threw,
    // and a trial in flight at a crash failed when the resume ran it again.
    const auto path = temp_journal("static-bool");
    ht::SearchSpace space{ht::IntegerParameter("depth", 1, 10)};
    const auto gpu = space.add(ht::StaticParameter("use_gpu", true));
    auto objective = [&](const ht::Config& c) { return c[gpu] ? static_cast<double>(c.get<int>("depth")) : 100.0; };
    (void)ht::Tuner(space, ht::RandomSearch(), options(path, 3)).fit(objective);
    CHECK(ht::load_result(path).best().config.get<bool>("use_gpu"));
    // the journal cut after trial 2 started: the resume runs it again with the journal's configuration
    auto lines = lines_of(path);
    std::size_t cut = 0;
    for (std::size_t i = 0; i < lines.size(); ++i)
        if (lines[i].find("\"trial_started\"") != std::string::npos && lines[i].find("\"trial\":2") != std::string::npos)
            cut = i + 1;
    REQUIRE(cut > 0);
    write_lines(path, lines, cut);
    const ht::Result resumed = ht::Tuner(space, ht::RandomSearch(), options(path, 3)).fit(objective);
    REQUIRE(resumed.trials().size() == 3);
    for (const auto& t : resumed.trials()) {
        CHECK_MESSAGE(t.status == ht::TrialStatus::Completed, t.failure_reason);
        CHECK(t.config.get<bool>("use_gpu"));
    }
    fs::remove(path);
}

TEST_CASE("a failure whose text is not UTF-8 reads the same in the live result and in load_result") {
    // The journal writes text as valid UTF-8 (a stray byte becomes U+FFFD); the live record kept
    // the raw bytes, so the two results, their summaries and warnings differed.
    const auto path = temp_journal("latin1-failure");
    const ht::Result live = ht::Tuner(journal_space(), ht::RandomSearch(), options(path, 2))
                                .fit([](const ht::Config&) -> double { throw std::runtime_error("caf\xe9 au lait"); });
    const ht::Result loaded = ht::load_result(path);
    REQUIRE(live.trials().size() == 2);
    for (std::size_t i = 0; i < 2; ++i) {
        CHECK(live.trials()[i].failure_reason == loaded.trials()[i].failure_reason);
        CHECK(live.trials()[i].failure_reason.find("caf\xef\xbf\xbd au lait") != std::string::npos);
    }
    CHECK(live.summary() == loaded.summary());
    CHECK(live.setup().warnings == loaded.setup().warnings);
    fs::remove(path);
}
