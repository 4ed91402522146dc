// SPDX-License-Identifier: MIT
// Kill and resume, 20 times in a row: a child process tunes with a journal and is killed with SIGKILL
// in the middle of a trial; the next child resumes from the journal. Optionally the journal's last
// line is then cut at a random byte, as a crash in the middle of a write leaves it. After every kill
// the journal must hold a consistent run that lost no completed trial; at the end, with one worker,
// the trials (configurations, statuses, values) are those of an uninterrupted run with the same seed.
// The objective is the fault-injecting one, so failures, retries and overruns cross the kills too.
#include "fault_injection.hpp"

#include <hypertune/json.hpp>

#include <doctest/doctest.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ht = hypertune;
namespace hs = hypertune::stress;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr int kills_wanted = 20;
constexpr std::size_t trials = 150;  // far more than 20 short sessions get through

hs::FaultPlan plan() {
    hs::FaultPlan p;
    p.seed = 77;
    p.checkpoint_bytes = 64;
    p.step_delay = 300us;  // a trial takes a few ms: a kill lands in the middle of one
    return p;
}

ht::TunerOptions options(const hs::StrategyCase& c, const std::string& journal) {
    return {.metric = "loss", .direction = c.direction, .max_jobs = trials, .max_parallel_jobs = 1, .seed = 5,
            .max_retries = 1, .progress = ht::ProgressBar::Never, .journal = journal};
}

// What must survive the kills: each trial's configuration, status, value, resource and failure.
std::map<ht::TrialId, std::string> outcome(const ht::Result& r) {
    std::map<ht::TrialId, std::string> out;
    for (const auto& t : r.trials())
        out[t.id] = fmt::format("{} {} {} {} {}", t.config, ht::to_string(t.status), t.objective, t.resource_used,
                                t.failure_reason);
    return out;
}

// The trials that ran their full resource. (In a journal cut by a crash, a trial of synchronous
// Hyperband that ended a lower rung shows Completed until its Pause is on disk: that is not final.)
std::map<ht::TrialId, std::string> completed(const ht::Result& r) {
    std::map<ht::TrialId, std::string> out;
    for (const auto& t : r.trials())
        if (t.status == ht::TrialStatus::Completed && t.resource_used >= hs::stress_max_resource)
            out[t.id] = fmt::format("{} {}", t.config, t.objective);
    return out;
}

// Checks that two runs' trials are the same, naming the first few that differ.
void check_same_trials(const std::map<ht::TrialId, std::string>& got, const std::map<ht::TrialId, std::string>& want) {
    CHECK(got.size() == want.size());
    int shown = 0;
    for (const auto& [id, what] : want) {
        auto it = got.find(id);
        std::string have = it == got.end() ? std::string("(missing)") : it->second;
        if (have != what && shown++ < 10) FAIL_CHECK(fmt::format("trial {}: {} instead of {}", id, have, what));
    }
}

// Resource units trained, split by the trials that save a checkpoint at every step and have no
// injected fault (what the kill costs them is bounded) and the others.
struct StepCount {
    long checkpointing = 0;
    long others = 0;
};

// The byte a session writes per resource unit trained: 'c' for a checkpointing trial, 'o' otherwise.
char step_byte(const hs::FaultPlan& p, ht::TrialId id) {
    return p.checkpoints(id) && p.fault(id) == hs::Fault::None ? 'c' : 'o';
}

// A run's transient faults leave their marks in `<journal>.fired`, so that each process it is
// resumed in knows which fired (see FaultPlan::fired_marks).
std::string fired_marks(const std::string& journal) { return journal.empty() ? "" : journal + ".fired"; }

ht::Result run_uninterrupted(const hs::StrategyCase& c, const std::string& journal = "", StepCount* trained = nullptr) {
    auto p = plan();
    p.fired_marks = fired_marks(journal);
    if (trained)
        p.on_step = [&p, trained](ht::TrialId id, ht::Resource) {
            (step_byte(p, id) == 'c' ? trained->checkpointing : trained->others)++;
        };
    std::vector<hs::TrialTruth> truth(trials);
    ht::Tuner tuner(hs::stress_space(), c.make(trials), options(c, journal));
    return tuner.fit(hs::FaultyObjective(&p, &truth, c.direction));
}

std::vector<std::string> lines_of(const std::string& path) {
    std::ifstream in(path);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

// True when the journal's last session (since run_started or run_resumed) has not ended.
bool session_open(const std::string& path) {
    bool open = false;
    for (const auto& line : lines_of(path)) {
        if (line.find("\"event\":\"run_started\"") != std::string::npos ||
            line.find("\"event\":\"run_resumed\"") != std::string::npos)
            open = true;
        if (line.find("\"event\":\"run_ended\"") != std::string::npos) open = false;
    }
    return open;
}

// Cuts the file at a random byte inside its last line, so that at least its first byte stays and
// at least its closing brace goes: a torn line that can never parse. True when the file then ends
// in a torn line: also when the kill, in the middle of a write, left one byte of a line, which
// cannot be cut again.
bool cut_last_line(const std::string& path, std::uint64_t random) {
    std::ifstream in(path, std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::size_t end = data.size();
    const bool torn = end > 0 && data[end - 1] != '\n';  // the kill tore it already
    if (!torn && end > 0) --end;  // the content of the last line ends here
    std::size_t start = data.rfind('\n', end == 0 ? 0 : end - 1);
    start = start == std::string::npos ? 0 : start + 1;
    if (end - start < 2) return torn;
    auto cut = start + 1 + random % (end - start - 1);
    return ::truncate(path.c_str(), static_cast<off_t>(cut)) == 0;
}

struct LoopFigures {
    int kills = 0;
    int mid_run = 0;
    int truncations = 0;
    int torn_lines_dropped = 0;
    StepCount trained;            // over the killed sessions
    int kills_in_checkpointing = 0;  // kills that cut a trial which saves a checkpoint at every step
};

// Runs the kill loop for one strategy; returns what it counted. Checks as it goes.
LoopFigures kill_loop(const hs::StrategyCase& c, bool cut, const std::string& path) {
    LoopFigures f;
    std::uint64_t rng = cut ? 0xc0ffee : 0xbeef;
    std::map<ht::TrialId, std::string> done_before;  // completed trials seen after an earlier kill
    for (int round = 0; round < kills_wanted; ++round) {
        CAPTURE(round);
        int fds[2];
        REQUIRE(::pipe(fds) == 0);
        rng = ht::detail::splitmix64(rng);
        const int ends_to_wait = 1 + static_cast<int>(rng % 4);
        pid_t child = ::fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            ::close(fds[0]);
            int code = 0;
            try {
                auto p = plan();
                p.fired_marks = fired_marks(path);
                p.on_step = [&p, fd = fds[1]](ht::TrialId id, ht::Resource) {
                    const char b = step_byte(p, id);
                    (void)!::write(fd, &b, 1);
                };
                std::vector<hs::TrialTruth> truth(trials);
                auto o = options(c, path);
                o.on_trial_end = [fd = fds[1]](const ht::TrialRecord&) { (void)!::write(fd, "e", 1); };
                ht::Tuner tuner(hs::stress_space(), c.make(trials), o);
                (void)tuner.fit(hs::FaultyObjective(&p, &truth, c.direction));
            } catch (const std::exception& e) {
                std::fprintf(stderr, "the resumed run failed: %s\n", e.what());
                code = 2;
            }
            ::_exit(code);
        }
        ::close(fds[1]);
        // Wait until this session has ended a few trials, then kill it in the middle of the next one.
        // Then a few resource units into the trials after it, so the kill lands deep in a trial.
        // Every other round then waits on for a step of a trial that checkpoints at every step, so
        // that kills land in such trials (the bound on the resource they redo is checked below)
        // whatever the timing: a sanitizer's pace once left none of the 20 kills there.
        const int steps_to_wait = 1 + static_cast<int>((rng >> 8) % 6);
        const bool wait_for_checkpointing = round % 2 == 0;
        int ends = 0, steps = 0;
        char last_step = 0;  // the kind of trial that trained last
        auto count = [&](char b) {
            if (b == 'e') ++ends;
            if (b == 'c') ++f.trained.checkpointing;
            if (b == 'o') ++f.trained.others;
            if (b != 'e') last_step = b;
        };
        char b = 0;
        while (ends < ends_to_wait || steps < steps_to_wait || (wait_for_checkpointing && last_step != 'c')) {
            if (::read(fds[0], &b, 1) <= 0) break;  // the child is gone: it finished or failed
            if (ends >= ends_to_wait && b != 'e') ++steps;
            count(b);
        }
        const bool waited = ends >= ends_to_wait && steps >= steps_to_wait;
        std::this_thread::sleep_for(std::chrono::microseconds(rng % 300));
        ::kill(child, SIGKILL);
        int status = 0;
        ::waitpid(child, &status, 0);
        while (::read(fds[0], &b, 1) > 0) count(b);  // what it trained until the kill
        ::close(fds[0]);
        if (last_step == 'c') ++f.kills_in_checkpointing;
        const bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
        if (killed) ++f.kills;
        if (killed && waited && session_open(path)) ++f.mid_run;
        if (!killed) CHECK_MESSAGE(false, "the child was not killed: exit status " << status);

        if (cut && cut_last_line(path, ht::detail::splitmix64(rng))) ++f.truncations;

        // What is on disk is a consistent run: no trial twice, no completed trial lost or changed.
        auto saved = ht::load_result(path);
        if (cut) {
            bool dropped = false;
            for (const auto& w : saved.setup().warnings)
                dropped = dropped || w.find("dropped a truncated last line") != std::string::npos;
            if (dropped) ++f.torn_lines_dropped;
        }
        std::set<ht::TrialId> ids;
        for (const auto& t : saved.trials()) CHECK(ids.insert(t.id).second);
        auto done = completed(saved);
        for (const auto& [id, what] : done_before) {
            CAPTURE(id);
            REQUIRE(done.count(id) == 1);
            CHECK(done[id] == what);
        }
        done_before = std::move(done);
    }
    return f;
}

void kill_and_resume(const std::string& name, bool cut) {
    auto c = hs::strategy_case(name);
    CAPTURE(name);
    CAPTURE(cut);
    StepCount once;
    auto reference = run_uninterrupted(c, "", &once);
    REQUIRE(reference.trials().size() == trials);
    REQUIRE(reference.count(ht::TrialStatus::Completed) > 0);
    REQUIRE(reference.count(ht::TrialStatus::Failed) > 0);

    auto path = (fs::temp_directory_path() /
                 fmt::format("hypertune-stress-kill-{}-{}-{}.jsonl", c.name.substr(0, 4), cut, ::getpid()))
                    .string();
    fs::remove(path);
    fs::remove_all(fired_marks(path));
    fs::create_directory(fired_marks(path));
    auto f = kill_loop(c, cut, path);
    MESSAGE(fmt::format("{}{}: {} kills, {} in the middle of a run, {} last lines cut, {} torn lines dropped on resume",
                        name, cut ? " (journal cut after each kill)" : "", f.kills, f.mid_run, f.truncations,
                        f.torn_lines_dropped));
    CHECK(f.kills == kills_wanted);
    CHECK(f.mid_run == kills_wanted);
    if (cut) {
        CHECK(f.truncations == kills_wanted);
        CHECK(f.torn_lines_dropped == kills_wanted);
    }

    // The last session runs to the end: the same trials as the run that was never interrupted.
    StepCount last;
    auto finished = run_uninterrupted(c, path, &last);
    CHECK(finished.trials().size() == trials);
    check_same_trials(completed(finished), completed(reference));
    check_same_trials(outcome(finished), outcome(reference));
    check_same_trials(outcome(ht::load_result(path)), outcome(reference));
    // Resource trained again because of the kills: a trial that saves a checkpoint at every step
    // redoes at most the step it was in (one worker: one trial in flight per kill; the reporting
    // interval is one unit), and one more when the cut tore the report of the step before (it
    // continues from the checkpoint before that one); the others start over from their last pause
    // or from scratch.
    const long redone_checkpointing = f.trained.checkpointing + last.checkpointing - once.checkpointing;
    const long redone_others = f.trained.others + last.others - once.others;
    const int kills_in_others = f.kills - f.kills_in_checkpointing;
    MESSAGE(fmt::format("{}: resource redone per kill: {:.2f} units for the {} kills in a trial that saves a checkpoint "
                        "at every step, {:.2f} for the {} others; an uninterrupted run trains {} + {} units",
                        name, static_cast<double>(redone_checkpointing) / std::max(1, f.kills_in_checkpointing),
                        f.kills_in_checkpointing, static_cast<double>(redone_others) / std::max(1, kills_in_others),
                        kills_in_others, once.checkpointing, once.others));
    CHECK(f.kills_in_checkpointing > 0);
    CHECK(redone_checkpointing >= 0);
    CHECK(redone_checkpointing <= f.kills_in_checkpointing * (cut ? 2 : 1));
    // Every trial ended exactly once in the journal, however often its run was cut (a promoted
    // trial of synchronous Hyperband ends once per rung it ran).
    std::map<ht::TrialId, int> ended, started_fresh;
    for (const auto& line : lines_of(path)) {
        auto e = nlohmann::json::parse(line);
        if (e["event"] == "trial_ended") ++ended[e["trial"].get<ht::TrialId>()];
        if (e["event"] == "trial_started" && !e.value("rerun", false)) ++started_fresh[e["trial"].get<ht::TrialId>()];
    }
    CHECK(ended.size() == trials);
    CHECK(ended == started_fresh);
    fs::remove(path);
    fs::remove_all(fired_marks(path));
}

}  // namespace

TEST_CASE("kill -9 twenty times: RandomSearch resumes each time and ends as the uninterrupted run") {
    kill_and_resume("RandomSearch", false);
}

TEST_CASE("kill -9 twenty times with the journal's last line cut: RandomSearch ends as the uninterrupted run") {
    kill_and_resume("RandomSearch", true);
}

TEST_CASE("kill -9 twenty times: ASHA resumes each time and ends as the uninterrupted run") {
    kill_and_resume("ASHA", false);
}

TEST_CASE("kill -9 twenty times with the journal's last line cut: ASHA ends as the uninterrupted run") {
    kill_and_resume("ASHA", true);
}

TEST_CASE("kill -9 twenty times with the journal's last line cut: synchronous Hyperband ends as the uninterrupted "
          "run") {
    kill_and_resume("Hyperband sync", true);
}
