// SPDX-License-Identifier: MIT
// Persisted checkpoints: with a journal, what a trial saves is on disk beside it when
// save_checkpoint() returns, so that a run resumed after a crash continues an in-flight trial from
// its last checkpoint, and a run resumed after a stop continues its paused trials from theirs. A
// crash is taken as the files show it: the journal and its checkpoint folder copied while a trial
// is in flight, which is what a kill at that moment leaves (kill -9 itself: tests/stress).

#include "../support/same_result.hpp"

#include <hypertune/hypertune.hpp>
#include <hypertune/strategies/asha.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <chrono>
#include <thread>
#include <variant>
#include <vector>

#include <unistd.h>

namespace ht = hypertune;
namespace fs = std::filesystem;

namespace {

std::string checkpoint_journal(const std::string& name) {
    auto path = (fs::temp_directory_path() / fmt::format("hypertune-ckpt-{}-{}.jsonl", name, ::getpid())).string();
    fs::remove(path);
    fs::remove_all(path + ".checkpoints");
    return path;
}

void remove_run(const std::string& journal) {
    fs::remove(journal);
    fs::remove_all(journal + ".checkpoints");
}

ht::SearchSpace checkpoint_space() {
    return ht::SearchSpace{ht::ContinuousParameter("x", -2.0, 2.0), ht::IntegerParameter("k", 1, 4)};
}

double checkpoint_loss(const ht::Config& c, ht::Resource step) {
    const double x = c.get<double>("x");
    return x * x + 0.1 * c.get<int>("k") + 1.0 / static_cast<double>(step);
}

// What one objective call saw and trained.
struct Call {
    ht::TrialId trial = 0;
    ht::Resource resumed_from = 0;
    std::string checkpoint;  // the bytes it started from ("" when none)
    std::vector<ht::Resource> trained;
};

// A trainer that saves "state after <step>" after every report and continues from its checkpoint.
// `after_save(trial, step)` runs after each save (the test takes its crash snapshot there).
class CheckpointingTrainer {
public:
    std::function<void(ht::TrialId, ht::Resource)> after_save;

    double operator()(const ht::Config& c, ht::Trial& t) {
        Call call{t.id(), t.resumed_from(), t.checkpoint().value_or(""), {}};
        if (t.resumed_from() > 0) CHECK(call.checkpoint == fmt::format("state after {}", t.resumed_from()));
        double loss = 0.0;
        for (ht::Resource s = t.resumed_from() + 1; s <= t.budget(); ++s) {
            call.trained.push_back(s);
            loss = checkpoint_loss(c, s);
            t.report(s, loss);
            if (t.should_stop()) break;
            t.save_checkpoint(fmt::format("state after {}", s));
            if (after_save) after_save(t.id(), s);
        }
        std::lock_guard lk(mu_);
        calls_.push_back(std::move(call));
        return loss;
    }

    [[nodiscard]] std::vector<Call> calls() const {
        std::lock_guard lk(mu_);
        return calls_;
    }

    // Steps trained, over every call.
    [[nodiscard]] std::size_t steps_trained() const {
        std::size_t n = 0;
        for (const auto& c : calls()) n += c.trained.size();
        return n;
    }

private:
    mutable std::mutex mu_;
    std::vector<Call> calls_;
};

// The journal and its checkpoint folder as they are now, under `copy`.
void snapshot(const std::string& journal, const std::string& copy) {
    remove_run(copy);
    fs::copy_file(journal, copy);
    if (fs::exists(journal + ".checkpoints"))
        fs::copy(journal + ".checkpoints", copy + ".checkpoints", fs::copy_options::recursive);
}

std::map<ht::TrialId, std::string> outcomes(const ht::Result& r) {
    std::map<ht::TrialId, std::string> out;
    for (const auto& t : r.trials())
        out[t.id] = fmt::format("{} {} {} {}", t.config, ht::to_string(t.status), t.objective, t.resource_used);
    return out;
}

ht::TunerOptions checkpoint_options(const std::string& journal, std::size_t jobs) {
    return {.max_jobs = jobs, .seed = 4, .progress = ht::ProgressBar::Never, .journal = journal};
}

}  // namespace

TEST_CASE("with a journal, a checkpoint is on disk when save_checkpoint returns, and goes when its trial ends") {
    const auto journal = checkpoint_journal("on-disk");
    const fs::path folder = journal + ".checkpoints";
    std::vector<std::string> seen;
    auto objective = [&](const ht::Config& c, ht::Trial& t) {
        const fs::path file = folder / fmt::format("trial-{}.ckpt", t.id());
        t.report(1, checkpoint_loss(c, 1));
        t.save_checkpoint(std::string("binary\0state\n", 13));
        std::ifstream in(file, std::ios::binary);
        seen.emplace_back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        CHECK_FALSE(fs::exists(file.string() + ".tmp"));
        t.report(2, checkpoint_loss(c, 2));
        return checkpoint_loss(c, 2);
    };
    const auto result = ht::Tuner(checkpoint_space(), ht::RandomSearch({.max_resource = 2}),
                                  checkpoint_options(journal, 3))
                            .fit(objective);
    CHECK(result.count(ht::TrialStatus::Completed) == 3);
    REQUIRE(seen.size() == 3);
    for (std::size_t i = 0; i < seen.size(); ++i)
        CHECK(seen[i] == fmt::format("hypertune-checkpoint 1 trial {} step 1 bytes 13\n", i) + std::string("binary\0state\n", 13));
    CHECK_FALSE(fs::exists(folder));  // every trial ended: nothing is kept
    remove_run(journal);
}

TEST_CASE("the threads of a data-parallel trainer may save checkpoints and report at once: they take turns") {
    // Four workers of one trial each save a checkpoint of every step, at the same time, to the one
    // file of the trial (a write, an fsync and a rename each): none is lost to another's rename.
    // Two of them report each step: one report counts, the other is refused, naming the step.
    const auto journal = checkpoint_journal("threads");
    std::atomic<int> refused{0};
    auto objective = [&](const ht::Config& c, ht::Trial& t) {
        for (ht::Resource step = 1; step <= 3; ++step) {
            std::vector<std::thread> workers;
            for (int w = 0; w < 4; ++w)
                workers.emplace_back([&, w] {
                    if (w < 2) try {
                            t.report(step, checkpoint_loss(c, step));
                        } catch (const ht::InvalidArgument& e) {
                            CHECK(std::string(e.what()).find(fmt::format("reported step {} after step {} (steps must "
                                                                         "increase)", step, step)) != std::string::npos);
                            ++refused;
                        }
                    t.save_checkpoint(fmt::format("step {} worker {}", step, w), step);
                });
            for (auto& w : workers) w.join();
            if (!t.failure().empty()) break;  // the refused report failed the trial
        }
        return checkpoint_loss(c, 3);
    };
    const auto result = ht::Tuner(checkpoint_space(), ht::RandomSearch({.max_resource = 3}),
                                  checkpoint_options(journal, 2))
                            .fit(objective);
    CHECK(result.setup().stop_reason == "max_jobs reached");  // no checkpoint write stopped the run
    CHECK(result.count(ht::TrialStatus::Failed) == 2);
    CHECK(refused == 2);
    for (const auto& t : result.trials())
        CHECK(t.failure_reason == fmt::format("trial {}: reported step 1 after step 1 (steps must increase)", t.id));
    remove_run(journal);
}

TEST_CASE("after a crash, the trial in flight continues from its last persisted checkpoint, and the run ends as an "
          "uninterrupted one") {
    const auto journal = checkpoint_journal("crash");
    const auto crashed = checkpoint_journal("crash-copy");
    const auto options = [](const std::string& j) { return checkpoint_options(j, 6); };
    const auto strategy = [] { return ht::RandomSearch({.max_resource = 8}); };

    // The uninterrupted run; the crash is taken at trial 2, after its checkpoint at step 5.
    CheckpointingTrainer straight;
    bool taken = false;
    straight.after_save = [&](ht::TrialId id, ht::Resource step) {
        if (id == 2 && step == 5 && !taken) {
            snapshot(journal, crashed);
            taken = true;
        }
    };
    const ht::Result reference = ht::Tuner(checkpoint_space(), strategy(), options(journal)).fit(std::ref(straight));
    REQUIRE(taken);
    CHECK_FALSE(fs::exists(journal + ".checkpoints"));

    // Resumes the crashed copy, which must end as the uninterrupted run; trial 2, in flight at the
    // crash, is the first to run. Gives the result and the first call.
    CheckpointingTrainer resumed;
    auto resume = [&](ht::Result& r) {
        r = ht::Tuner(checkpoint_space(), strategy(), options(crashed)).fit(std::ref(resumed));
        CHECK(outcomes(r) == outcomes(reference));
        const auto calls = resumed.calls();
        REQUIRE(!calls.empty());
        CHECK(calls.front().trial == 2);
        return calls.front();
    };
    auto warned = [](const ht::Result& r, const std::string& what, const std::string& then) {
        for (const auto& w : r.setup().warnings)
            if (w.find("trial 2's checkpoint") != std::string::npos && w.find(what) != std::string::npos &&
                w.find(then) != std::string::npos)
                return true;
        return false;
    };
    const fs::path folder = crashed + ".checkpoints";
    ht::Result r;

    SUBCASE("the checkpoint is read back") {
        const Call first = resume(r);
        CHECK(first.resumed_from == 5);
        CHECK(first.trained == std::vector<ht::Resource>{6, 7, 8});
        // Nothing redone: every step of the run was trained exactly once over both sessions
        // (the first session had trained trials 0 and 1, and trial 2 up to step 5).
        CHECK(resumed.steps_trained() + 2 * 8 + 5 == straight.steps_trained());
        CHECK(r.trials()[2].curve.size() == 8);
        CHECK(r.setup().warnings.empty());
        CHECK_FALSE(fs::exists(folder));
    }
    SUBCASE("a torn checkpoint file is refused, named in a warning; the trial continues from the one before") {
        const fs::path file = folder / "trial-2.ckpt";
        REQUIRE(fs::exists(file));
        fs::resize_file(file, fs::file_size(file) - 1);
        const Call first = resume(r);
        CHECK(first.resumed_from == 4);
        CHECK(first.trained == std::vector<ht::Resource>{5, 6, 7, 8});
        CHECK(warned(r, file.string(), "the trial continued from the checkpoint before it"));
    }
    SUBCASE("a checkpoint whose header claims more bytes than its file has is refused before anything is read") {
        const fs::path file = folder / "trial-2.ckpt";
        std::string bytes;
        {
            std::ifstream in(file, std::ios::binary);
            bytes.assign((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        }
        const auto at = bytes.find("bytes ");
        REQUIRE(at != std::string::npos);
        bytes.replace(at, bytes.find('\n') - at, "bytes 1000000000000000");
        std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
        CHECK(resume(r).resumed_from == 4);
        CHECK(warned(r, "its length is not the 1000000000000000 bytes its header says", "the checkpoint before it"));
    }
    SUBCASE("with the journal's last report lost, the trial continues from the checkpoint that report precedes") {
        // Cut the journal before trial 2's report of step 5: its checkpoint of step 5 is past what
        // was judged; the one of step 4 is used, and step 5 is trained again.
        std::vector<std::string> lines;
        {
            std::ifstream in(crashed);
            for (std::string line; std::getline(in, line);) lines.push_back(line);
        }
        REQUIRE(lines.back().find("\"step\":5") != std::string::npos);
        lines.pop_back();
        {
            std::ofstream out(crashed, std::ios::trunc);
            for (const auto& l : lines) out << l << '\n';
        }
        CHECK(resume(r).resumed_from == 4);
        CHECK(r.setup().warnings.empty());
    }
    SUBCASE("both checkpoint files torn: named in a warning, and the trial starts over") {
        for (const char* name : {"trial-2.ckpt", "trial-2.prev.ckpt"}) {
            REQUIRE(fs::exists(folder / name));
            fs::resize_file(folder / name, fs::file_size(folder / name) - 1);
        }
        CHECK(resume(r).resumed_from == 0);
        CHECK(warned(r, "cannot be used", "the trial started over"));
    }
    remove_run(journal);
    remove_run(crashed);
}

TEST_CASE("paused trials of a stopped run continue from their persisted checkpoints when it is resumed, through a "
          "symbolic link to its journal too") {
  for (const bool through_link : {false, true}) {
    CAPTURE(through_link);
    const auto journal = checkpoint_journal(through_link ? "paused-link" : "paused");
    const std::string link = journal + ".link";
    fs::remove(link);
    if (through_link) fs::create_symlink(journal, link);  // dangling until the run writes the journal
    const fs::path folder = journal + ".checkpoints";
    auto promotion = [] {
        return ht::ASHA({.min_resource = 1, .max_resource = 9, .reduction_factor = 3, .type = ht::HalvingType::Promotion});
    };
    std::size_t kept_between = 0;
    {
        std::atomic<ht::TuningJob*> handle{nullptr};
        std::size_t paused_ends = 0;  // callbacks run one at a time
        ht::TunerOptions first = checkpoint_options(journal, 30);
        first.on_trial_end = [&](const ht::TrialRecord& r) {
            if (r.status != ht::TrialStatus::Paused || ++paused_ends != 6) return;
            while (handle.load() == nullptr) std::this_thread::yield();
            handle.load()->stop();
        };
        CheckpointingTrainer trainer;
        ht::Tuner tuner(checkpoint_space(), promotion(), first);
        auto job = tuner.start(std::ref(trainer));
        handle = &job;
        REQUIRE(job.wait().stop_reason() == "stopped by user");
    }  // the first run and all it held in memory are gone
    REQUIRE(fs::is_directory(folder));
    for (const auto& entry : fs::directory_iterator(folder)) kept_between += entry.path().extension() == ".ckpt";
    CHECK(kept_between >= 1);

    CheckpointingTrainer trainer;  // CHECKs that a resumed call got "state after <resumed_from>"
    const ht::Result r = ht::Tuner(checkpoint_space(), promotion(), checkpoint_options(through_link ? link : journal, 30))
                             .fit(std::ref(trainer));
    std::size_t continued = 0;
    for (const auto& c : trainer.calls()) continued += c.resumed_from > 0;
    CHECK(continued >= 1);
    // Every step of every trial trained once: no promoted trial started over.
    std::map<ht::TrialId, std::vector<ht::Resource>> steps;
    for (const auto& t : r.trials())
        for (const auto& p : t.curve) steps[t.id].push_back(p.step);
    for (const auto& [id, s] : steps)
        for (std::size_t i = 0; i < s.size(); ++i) CHECK(s[i] == static_cast<ht::Resource>(i + 1));
    // What is left on disk: the checkpoints of the trials still paused when the run ended, no more.
    std::size_t still_paused = 0;
    for (const auto& t : r.trials())
        still_paused += t.failure_reason == "the run ended while the trial waited for promotion";
    std::size_t left = 0;
    if (fs::exists(folder))
        for (const auto& entry : fs::directory_iterator(folder)) left += entry.path().extension() == ".ckpt";
    CHECK(left == still_paused);
    CHECK_FALSE(fs::exists(link + ".checkpoints"));  // the link's run kept them beside the journal itself
    remove_run(journal);
    fs::remove(link);
  }
}

TEST_CASE("trials left paused when stop() cuts a promotion-type run are cut short, not stopped early") {
    // ASHA never judged them: the run's end came first. The estimate without early stopping used to
    // scale each to the full resource, and the summary counted them as stopped early.
    const auto journal = checkpoint_journal("cut-paused");
    std::atomic<ht::TuningJob*> handle{nullptr};
    std::size_t paused_ends = 0;  // callbacks run one at a time
    ht::TunerOptions options = checkpoint_options(journal, 30);
    options.on_trial_end = [&](const ht::TrialRecord& r) {
        if (r.status != ht::TrialStatus::Paused || ++paused_ends != 5) return;
        while (handle.load() == nullptr) std::this_thread::yield();
        handle.load()->stop();
    };
    ht::Tuner tuner(checkpoint_space(), ht::ASHA({.min_resource = 1, .max_resource = 9, .reduction_factor = 3,
                                                  .type = ht::HalvingType::Promotion}),
                    options);
    auto job = tuner.start([](const ht::Config& c, ht::Trial& trial) {
        for (ht::Resource s = trial.resumed_from() + 1; s <= trial.budget(); ++s) {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            trial.report(s, checkpoint_loss(c, s));
            if (trial.should_stop()) return checkpoint_loss(c, s);
        }
        return checkpoint_loss(c, trial.budget());
    });
    handle = &job;
    const ht::Result live = job.wait();
    REQUIRE(live.stop_reason() == "stopped by user");
    for (const ht::Result& r : {live, ht::load_result(journal)}) {
        std::size_t cut = 0, early = 0;
        double scaled = 0.0, scaled_all = 0.0;  // the estimate, and what scaling every Stopped trial gave
        for (const auto& t : r.trials()) {
            const double full = t.elapsed_seconds / static_cast<double>(t.resource_used) * 9.0;
            const bool is_cut = t.failure_reason == "the run ended while the trial waited for promotion";
            if (is_cut) {
                ++cut;
                CHECK(t.status == ht::TrialStatus::Stopped);
                CHECK_FALSE(ht::Result::stopped_early(t));
                REQUIRE_FALSE(t.decisions.empty());
                CHECK(t.decisions.back().kind == ht::DecisionRecord::Kind::Pause);
                CHECK(t.resource_used < 9);
            }
            early += ht::Result::stopped_early(t);
            scaled += ht::Result::stopped_early(t) ? full : t.elapsed_seconds;
            scaled_all += t.status == ht::TrialStatus::Stopped ? full : t.elapsed_seconds;
        }
        REQUIRE(cut >= 1);
        CHECK(r.count(ht::TrialStatus::Stopped) == early + cut);
        CHECK(r.cost().billable_seconds_without_early_stopping == doctest::Approx(scaled));
        CHECK(r.cost().billable_seconds_without_early_stopping < scaled_all);
        CHECK(r.summary().find(fmt::format("{} completed, {} stopped early, {} cut short, 0 failed",
                                           r.count(ht::TrialStatus::Completed), early, cut)) != std::string::npos);
    }
    remove_run(journal);
}

TEST_CASE("a checkpoint folder removed during the run comes back, and a file in its place is refused before any trial") {
    const auto journal = checkpoint_journal("removed");
    const fs::path folder = journal + ".checkpoints";
    std::atomic<bool> removed{false};
    CheckpointingTrainer trainer;
    trainer.after_save = [&](ht::TrialId, ht::Resource) {
        if (!removed.exchange(true)) fs::remove_all(folder);  // a clean-up job, say
    };
    auto asha = [] { return ht::ASHA({.min_resource = 1, .max_resource = 9, .reduction_factor = 3}); };
    const ht::Result r = ht::Tuner(checkpoint_space(), asha(), checkpoint_options(journal, 12)).fit(std::ref(trainer));
    CHECK(removed.load());
    for (const auto& t : r.trials()) CHECK_MESSAGE(t.status != ht::TrialStatus::Failed, t.failure_reason);
    remove_run(journal);

    { std::ofstream(folder) << "not a folder"; }
    try {
        (void)ht::Tuner(checkpoint_space(), asha(), checkpoint_options(journal, 12)).fit(std::ref(trainer));
        FAIL("a file in the checkpoint folder's place was accepted");
    } catch (const ht::IoError& e) {
        CHECK(std::string(e.what()) == fmt::format("checkpoint folder '{}': exists and is not a folder; the journal "
                                                   "keeps its trials' checkpoints there: move it away",
                                                   folder.string()));
    }
    CHECK_FALSE(fs::exists(journal));  // refused before any file was made (an empty journal was left before)
    CHECK_FALSE(fs::exists(journal + ".lock"));
    fs::remove(folder);
    remove_run(journal);
}

TEST_CASE("a trial folder that cannot be made stops the run at the first trial, instead of failing every one") {
    const auto journal = checkpoint_journal("folder-refused");
    const fs::path folder = journal + ".checkpoints";
    fs::create_directories(folder);
    { std::ofstream(folder / "trial-1") << "in the way"; }  // trial 1's folder cannot be made
    std::atomic<int> calls{0};
    const ht::Result r =
        ht::Tuner(checkpoint_space(), ht::RandomSearch(), {.max_jobs = 6, .max_parallel_jobs = 1, .journal = journal})
            .fit([&](const ht::Config& c, ht::Trial& t) {
                ++calls;
                (void)t.checkpoint_dir();
                return checkpoint_loss(c, 1);
            });
    CHECK(calls == 2);  // trials 2 to 5 were not spent on the same failure
    REQUIRE(r.trials().size() == 2);
    CHECK(r.trials()[0].status == ht::TrialStatus::Completed);
    CHECK(r.stop_reason().starts_with(fmt::format("trial 1: cannot create checkpoint folder '{}': ",
                                                  (fs::absolute(folder) / "trial-1").string())));
    CHECK(r.stop_reason().ends_with("; the run stops rather than fail every trial the same way"));
    remove_run(journal);
}

TEST_CASE("checkpoint_dir(): one folder per trial, kept while the trial may run again, gone when it ends") {
    std::vector<std::string> folders;
    std::map<ht::TrialId, std::vector<ht::Resource>> trained;
    std::mutex mu;
    std::optional<fs::perms> run_folder_perms;
    auto objective = [&](const ht::Config& c, ht::Trial& t) {
        const fs::path dir = t.checkpoint_dir();
        CHECK(fs::is_directory(dir));
        {
            std::lock_guard lk(mu);
            if (!run_folder_perms) run_folder_perms = fs::status(dir.parent_path()).permissions();
        }
        CHECK(t.checkpoint_dir() == dir.string());  // the same folder every time
        const fs::path state = dir / "epoch";
        ht::Resource from = 0;
        if (std::ifstream in(state); in) in >> from;  // a promoted trial finds where it paused
        double loss = 0.0;
        std::vector<ht::Resource> steps;
        for (ht::Resource s = from + 1; s <= t.budget(); ++s) {
            steps.push_back(s);
            loss = checkpoint_loss(c, s);
            t.report(s, loss);
            std::ofstream(state) << s;
            if (t.should_stop()) break;
        }
        std::lock_guard lk(mu);
        folders.push_back(dir.string());
        auto& all = trained[t.id()];
        all.insert(all.end(), steps.begin(), steps.end());
        return loss;
    };
    auto promotion = ht::ASHA({.min_resource = 1, .max_resource = 9, .reduction_factor = 3, .type = ht::HalvingType::Promotion});
    const ht::Result r = ht::Tuner(checkpoint_space(), promotion, {.max_jobs = 12, .seed = 2}).fit(objective);
    REQUIRE(!folders.empty());
    std::size_t promoted = 0;
    for (const auto& t : r.trials()) {
        CAPTURE(t.id);
        promoted += t.segments.size() > 1;
        // Each step trained once, however often the trial was paused and promoted.
        const auto& s = trained[t.id];
        REQUIRE(s.size() == static_cast<std::size_t>(t.resource_used));
        for (std::size_t i = 0; i < s.size(); ++i) CHECK(s[i] == static_cast<ht::Resource>(i + 1));
    }
    CHECK(promoted > 0);
    // The run's temporary folder is mkdtemp's: a name no one can guess and only this user may
    // enter. One named after the process id was taken over by a later process with the same id,
    // whose trainers found an old run's state in their folders.
    const std::string run_folder = fs::path(folders.front()).parent_path().filename().string();
    CHECK(run_folder.starts_with("hypertune-checkpoints-"));
    CHECK(run_folder.size() == std::string("hypertune-checkpoints-").size() + 6);
    REQUIRE(run_folder_perms.has_value());
    CHECK(*run_folder_perms == fs::perms::owner_all);
    for (const auto& f : folders) CHECK_FALSE(fs::exists(f));  // without a journal, nothing outlives the run
    CHECK_FALSE(fs::exists(fs::path(folders.front()).parent_path()));

    ht::Trial alone(7, {}, 3);
    CHECK_THROWS_WITH_AS((void)alone.checkpoint_dir(), "trial 7: checkpoint_dir() is only available while a Tuner runs the trial",
                         ht::Error);
    CHECK(std::none_of(r.setup().warnings.begin(), r.setup().warnings.end(), [](const std::string& w) {
        return w.find("did not continue from its checkpoint folder") != std::string::npos;
    }));
}

TEST_CASE("trials that train again, some for want of a checkpoint and some for a removed folder: each cause is warned about once") {
    std::set<ht::TrialId> seen;
    std::set<ht::TrialId> restarted;
    std::mutex mu;
    // Even trials keep their state in a folder they then remove; odd ones keep none at all.
    auto objective = [&](const ht::Config& c, ht::Trial& t) {
        const bool folder = t.id() % 2 == 0;
        {
            std::lock_guard lk(mu);
            if (!seen.insert(t.id()).second) restarted.insert(t.id());  // promoted, and nothing to continue from
        }
        double loss = 0.0;
        for (ht::Resource s = 1; s <= t.budget(); ++s) {
            t.report(s, loss = checkpoint_loss(c, s));
            if (t.should_stop()) break;
        }
        if (folder) fs::remove_all(t.checkpoint_dir());
        return loss;
    };
    auto promotion = ht::ASHA({.min_resource = 1, .max_resource = 9, .reduction_factor = 3, .type = ht::HalvingType::Promotion});
    const ht::Result r = ht::Tuner(checkpoint_space(), promotion, {.max_jobs = 16, .seed = 2}).fit(objective);
    REQUIRE(std::any_of(restarted.begin(), restarted.end(), [](ht::TrialId id) { return id % 2 == 0; }));
    REQUIRE(std::any_of(restarted.begin(), restarted.end(), [](ht::TrialId id) { return id % 2 == 1; }));
    auto count = [&](const std::string& text) {
        return std::count_if(r.setup().warnings.begin(), r.setup().warnings.end(),
                             [&](const std::string& w) { return w.find(text) != std::string::npos; });
    };
    CHECK(count("saved no checkpoint, so it trained again from the start") == 1);
    CHECK(count("the trainer did not continue from its checkpoint folder") == 1);
}

TEST_CASE("checkpoint_dir(): a trainer that removes its folder, so promoted trials train again, is warned about once") {
    std::atomic<int> restarted{0};
    std::set<ht::TrialId> seen;
    std::mutex mu;
    auto objective = [&](const ht::Config& c, ht::Trial& t) {
        const fs::path dir = t.checkpoint_dir();
        const fs::path state = dir / "epoch";
        ht::Resource from = 0;
        if (std::ifstream in(state); in) in >> from;
        {
            std::lock_guard lk(mu);
            if (!seen.insert(t.id()).second && from == 0) ++restarted;  // promoted, and nothing to continue from
        }
        double loss = 0.0;
        for (ht::Resource s = from + 1; s <= t.budget(); ++s) {
            t.report(s, loss = checkpoint_loss(c, s));
            std::ofstream(state) << s;
            if (t.should_stop()) break;
        }
        fs::remove_all(dir);  // as a trainer that cleans up after itself would
        return loss;
    };
    auto promotion = ht::ASHA({.min_resource = 1, .max_resource = 9, .reduction_factor = 3, .type = ht::HalvingType::Promotion});
    const ht::Result r = ht::Tuner(checkpoint_space(), promotion, {.max_jobs = 12, .seed = 2}).fit(objective);
    REQUIRE(restarted.load() > 0);
    const auto warned = std::count_if(r.setup().warnings.begin(), r.setup().warnings.end(), [](const std::string& w) {
        return w.find("its first report was step 1: the trainer did not continue from its checkpoint folder") !=
               std::string::npos;
    });
    CHECK(warned == 1);
}

TEST_CASE("a trainer that saves a step's state before reporting it names the step and continues from it, and unnamed it is warned about") {
    auto asha = [] {
        return ht::ASHA({.min_resource = 1, .max_resource = 9, .reduction_factor = 3, .type = ht::HalvingType::Promotion});
    };
    for (const bool names_step : {true, false}) {
        CAPTURE(names_step);
        std::mutex mu;
        std::map<ht::TrialId, std::vector<ht::Resource>> trained;  // every epoch trained, per trial
        std::size_t mismatched = 0;  // resumed_from() differs from the epochs in the checkpoint
        const ht::Result r =
            ht::Tuner(checkpoint_space(), asha(), checkpoint_options("", 27)).fit([&](const ht::Config& c, ht::Trial& t) {
                ht::Resource epochs = t.checkpoint() ? std::stoll(*t.checkpoint()) : 0;
                std::vector<ht::Resource> mine;
                {
                    std::lock_guard lk(mu);
                    mismatched += t.checkpoint().has_value() && epochs != t.resumed_from();
                }
                double loss = 0.0;
                for (ht::Resource e = t.resumed_from() + 1; e <= t.budget(); ++e) {
                    epochs = e;
                    mine.push_back(e);
                    loss = checkpoint_loss(c, e);
                    // The state of epoch e, saved before e is reported.
                    if (names_step) t.save_checkpoint(std::to_string(epochs), e);
                    else t.save_checkpoint(std::to_string(epochs));
                    t.report(e, loss);
                    if (t.should_stop()) break;
                }
                std::lock_guard lk(mu);
                auto& all = trained[t.id()];
                all.insert(all.end(), mine.begin(), mine.end());
                return loss;
            });
        std::size_t promoted = 0;
        for (const auto& t : r.trials())
            for (const auto& d : t.decisions) promoted += d.kind == ht::DecisionRecord::Kind::Promote;
        REQUIRE(promoted > 0);
        bool warned = false;
        for (const auto& w : r.setup().warnings)
            warned = warned || w.find("but its checkpoint was saved before its first report, at step 0") != std::string::npos;
        if (names_step) {
            // Each epoch trained once, and each trial continued from the epoch its state was at.
            CHECK(mismatched == 0);
            for (const auto& [id, epochs] : trained)
                for (std::size_t i = 0; i < epochs.size(); ++i) CHECK(epochs[i] == static_cast<ht::Resource>(i + 1));
            CHECK_FALSE(warned);
        } else {
            // Taken as the state of the step reported before it: promoted from rung 1, a trial
            // has no checkpoint past step 0 and starts over, which the warning explains.
            CHECK(warned);
        }
    }
    ht::Trial trial(3, {}, 9);
    trial.report(1, 0.5);
    CHECK_THROWS_WITH_AS(trial.save_checkpoint("state", 3),
                         "trial 3: save_checkpoint(bytes, 3): a checkpoint holds the state of the last step reported "
                         "(1) or of the next one (2)",
                         ht::InvalidArgument);
}

TEST_CASE("checkpoint_dir() is an absolute path, also for a journal given by a relative one") {
    const std::string journal = fmt::format("hypertune-ckpt-relative-{}.jsonl", ::getpid());  // in the working directory
    remove_run(journal);
    std::vector<std::string> folders;
    (void)ht::Tuner(checkpoint_space(), ht::RandomSearch({.max_resource = 2}), checkpoint_options(journal, 2))
        .fit([&](const ht::Config& c, ht::Trial& t) {
            folders.push_back(t.checkpoint_dir());
            return checkpoint_loss(c, 1);
        });
    REQUIRE(folders.size() == 2);
    for (const auto& f : folders) {
        CHECK(fs::path(f).is_absolute());
        CHECK(fs::path(f).parent_path() == fs::absolute(journal + ".checkpoints"));
    }
    remove_run(journal);
}

TEST_CASE("a thread the objective left behind saving checkpoints as it returns is either in time or refused") {
    // The late call's check and its write raced with the run taking the checkpoint (ThreadSanitizer
    // saw the race on the checkpoint's string). A call under way now ends before the run reads the
    // trial, and counts as the trial's last; a later one throws. Every checkpoint a promoted trial
    // gets is whole: the leftover's "late", or a step the trial saved.
    std::atomic<int> torn{0}, refused{0};
    std::vector<std::thread> leftovers;
    std::mutex leftovers_mu;
    ht::TunerOptions o{.max_jobs = 60, .seed = 2, .progress = ht::ProgressBar::Never};
    // Trials live until fit() returns: the leftovers (each gone at its first refused call) are
    // joined when the run ends, before that.
    o.on_event = [&](const ht::RunEvent& e, const ht::RunState&) {
        if (!std::holds_alternative<ht::RunEnded>(e)) return;
        std::lock_guard lk(leftovers_mu);
        for (auto& th : leftovers) th.join();
    };
    const auto r = ht::Tuner(checkpoint_space(),
                             ht::ASHA({.min_resource = 1, .max_resource = 9, .reduction_factor = 3,
                                       .type = ht::HalvingType::Promotion}),
                             o)
                       .fit([&](const ht::Config& c, ht::Trial& t) {
                           if (const auto& got = t.checkpoint();
                               got && *got != "late" && *got != std::to_string(t.resumed_from()))
                               ++torn;
                           double v = 0.0;
                           for (ht::Resource s = t.resumed_from() + 1; s <= t.budget(); ++s) {
                               v = checkpoint_loss(c, s);
                               t.report(s, v);
                               t.save_checkpoint(std::to_string(s));
                               if (t.should_stop()) break;
                           }
                           auto go = std::make_shared<std::atomic<bool>>(false);
                           {
                               std::lock_guard lk(leftovers_mu);
                               leftovers.emplace_back([&t, go, &refused] {
                                   while (!go->load()) {
                                   }
                                   for (;;) try {
                                           t.save_checkpoint("late");
                                       } catch (const ht::Error&) {
                                           ++refused;
                                           return;
                                       }
                               });
                           }
                           go->store(true);
                           return v;
                       });
    CHECK(r.trials().size() == 60);
    CHECK(torn.load() == 0);
    CHECK(refused.load() == static_cast<int>(leftovers.size()));  // every one refused in the end
}

TEST_CASE("a report under way as its objective returns is waited for to its end, before the run can free the trial") {
    // A thread the objective left behind reports; an observer holds that report (under the run's
    // lock) while the objective returns. end() returned once the report let go of its count, while
    // it still notified and gave up its turn: ThreadSanitizer saw the run free the Trial under it
    // (the run's destructor against Trial::Underway's). Also a late resources_acquired(): ignored,
    // it billed the trial as waiting until that moment, racing with the run reading the time.
    std::atomic<bool> holding{false};
    ht::TunerOptions o{.max_jobs = 2, .max_parallel_jobs = 1, .seed = 1, .progress = ht::ProgressBar::Never};
    o.on_event = [&](const ht::RunEvent& e, const ht::RunState&) {
        if (!std::holds_alternative<ht::TrialReported>(e)) return;
        holding = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    };
    std::vector<std::thread> leftovers;
    std::atomic<int> counted{0};
    const auto r = ht::Tuner(checkpoint_space(), ht::RandomSearch({.max_resource = 3}), o)
                       .fit([&](const ht::Config&, ht::Trial& t) {
                           holding = false;
                           leftovers.emplace_back([&t, &counted] {
                               t.report(1, 0.5);  // under way as the objective returns: counted
                               ++counted;
                               t.resources_acquired();  // after it: ignored
                           });
                           const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
                           while (!holding && std::chrono::steady_clock::now() < until) std::this_thread::yield();
                           return 0.5;
                       });
    for (auto& th : leftovers) th.join();
    CHECK(counted == 2);
    for (const auto& t : r.trials()) {
        CHECK(t.curve.size() == 1);
        CHECK(t.waited_seconds == 0.0);  // it never called resources_acquired() in time
    }
}

TEST_CASE("a promoted trial that keeps its state in its folder and fails is retried from there: its curve keeps what it trained") {
    // The failed attempt trained steps 4 and 5 into the folder; the retry went on from 5, and the
    // curve lost 4 and 5 (1 2 3 6 7 8 9). A retry that starts over instead replaces them.
    for (const bool starts_over : {false, true}) {
        CAPTURE(starts_over);
        const std::string journal = (fs::temp_directory_path() /
                                     fmt::format("hypertune_folder_retry_{}_{}.jsonl", ::getpid(), starts_over))
                                        .string();
        remove_run(journal);
        std::mutex mu;
        std::set<ht::TrialId> failed_once;
        auto trainer = [&](const ht::Config& c, ht::Trial& trial) {
            ht::Resource from = 0;
            std::ifstream(trial.checkpoint_dir() + "/state") >> from;
            bool retry = false;
            {
                std::lock_guard lk(mu);
                retry = failed_once.count(trial.id()) > 0;
            }
            if (starts_over && retry) from = 0;
            double loss = 0.0;
            for (ht::Resource s = from + 1; s <= trial.budget(); ++s) {
                trial.report(s, loss = checkpoint_loss(c, s));
                std::ofstream(trial.checkpoint_dir() + "/state") << s;
                if (s == 5) {
                    std::lock_guard lk(mu);
                    if (failed_once.insert(trial.id()).second) throw std::runtime_error("CUDA out of memory");
                }
                if (trial.should_stop()) break;
            }
            return loss;
        };
        const ht::Result r = ht::Tuner(checkpoint_space(), ht::ASHA({.min_resource = 1, .max_resource = 9}),
                                       {.max_jobs = 9, .max_parallel_jobs = 1, .seed = 3, .max_retries = 1,
                                        .progress = ht::ProgressBar::Never, .journal = journal})
                                 .fit(trainer);
        std::size_t retried = 0;
        for (const auto& t : r.trials()) {
            CAPTURE(t.id);
            std::vector<ht::Resource> steps;
            for (const auto& p : t.curve) steps.push_back(p.step);
            std::vector<ht::Resource> each(steps.empty() ? 0 : static_cast<std::size_t>(steps.back()));
            for (std::size_t i = 0; i < each.size(); ++i) each[i] = static_cast<ht::Resource>(i + 1);
            CHECK(steps == each);  // every step once, none lost
            if (t.retries > 0) {
                ++retried;
                CHECK(t.status == ht::TrialStatus::Completed);
                CHECK(steps.back() == 9);
            }
        }
        CHECK(retried > 0);
        ht::testing::check_same_result(r, ht::load_result(journal));
        remove_run(journal);
    }
}
