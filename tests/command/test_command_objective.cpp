// SPDX-License-Identifier: MIT
// CommandObjective: argument expansion, metrics, failures (missing program, exit status, signal,
// garbage, flood, hang, non-finite values), early stopping of the whole process group, logs, and
// concurrent trials through the real tuner.
//
// The trainers are this test executable itself, re-executed with HYPERTUNE_FAKE_TRAINER=<mode> in
// its environment (a constructor acts as the trainer before doctest's main runs), and /bin/sh
// scripts (used here as test programs only: CommandObjective never runs a shell).
#include <hypertune/command_objective.hpp>
#include <hypertune/hypertune.hpp>
#include <hypertune/strategies/asha.hpp>

#include <doctest/doctest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace ht = hypertune;
using namespace std::chrono_literals;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif

namespace {

// --- the fake trainer -----------------------------------------------------------------------------

std::string flag(int argc, char** argv, const std::string& name, const std::string& fallback) {
    for (int i = 1; i < argc; ++i)
        if (std::string_view(argv[i]).starts_with("--" + name + "=")) return argv[i] + name.size() + 3;
    return fallback;
}

// Writes `bytes` of `line_length`-byte lines, alternating stdout and stderr every megabyte, so that a
// reader that drains only one pipe would leave the trainer blocked on the other.
void flood(long long bytes, std::size_t line_length) {
    std::string line(line_length - 1, 'x');
    line += '\n';
    std::string block;
    while (block.size() < (1u << 20)) block += line;
    for (long long written = 0, k = 0; written < bytes; written += static_cast<long long>(block.size()), ++k) {
        const char* p = block.data();
        std::size_t left = block.size();
        while (left > 0) {
            auto n = ::write(k % 2 ? STDERR_FILENO : STDOUT_FILENO, p, left);
            if (n <= 0) _exit(9);
            p += n;
            left -= static_cast<std::size_t>(n);
        }
    }
}

int fake_trainer(const char* mode, int argc, char** argv) {
    std::string m = mode;
    if (m == "echo") {  // every argument on a line of its own, then a metric
        for (int i = 1; i < argc; ++i) std::printf("arg=%s\n", argv[i]);
        std::printf("loss=0.25\n");
    } else if (m == "curve") {  // validation_loss = (x - 0.3)^2 + 1/epoch
        double x = std::stod(flag(argc, argv, "x", "0.5"));
        int budget = std::stoi(flag(argc, argv, "budget", "3"));
        int sleep_ms = std::stoi(flag(argc, argv, "sleep-ms", "0"));
        // With --state-dir, the last epoch trained is kept there and training continues after it;
        // with --trained-log, "<trial> <epoch>" is appended there for every epoch trained.
        const std::string state_dir = flag(argc, argv, "state-dir", "");
        const std::string trained_log = flag(argc, argv, "trained-log", "");
        const std::string trial = flag(argc, argv, "trial", "0");
        // --min-epochs: it trains at least that many, whatever its budget (a trainer that overruns
        // its rung); --buffered: its output comes in one block at exit, as Python's into a pipe.
        const int min_epochs = std::stoi(flag(argc, argv, "min-epochs", "0"));
        const bool buffered = flag(argc, argv, "buffered", "") == "1";
        if (buffered) std::setvbuf(stdout, nullptr, _IOFBF, 1 << 16);
        int first = 1;
        if (!state_dir.empty())
            if (std::ifstream in(state_dir + "/epoch"); in && in >> first) ++first;
        // Already trained to the budget (the tuner was killed before it recorded the end): the
        // trainer prints its last result again, as a trainer that evaluates its checkpoint would.
        if (first > budget)
            std::printf("epoch=%d validation_loss=%.17g\n", budget, (x - 0.3) * (x - 0.3) + 1.0 / budget);
        for (int e = first; e <= std::max(budget, min_epochs); ++e) {
            if (sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
            if (!trained_log.empty()) std::ofstream(trained_log, std::ios::app) << trial << ' ' << e << '\n';
            std::printf("epoch=%d train_loss=%.6f validation_loss=%.17g\n", e, 2.0 / e, (x - 0.3) * (x - 0.3) + 1.0 / e);
            if (!buffered) std::fflush(stdout);
            if (!state_dir.empty()) {
                std::ofstream(state_dir + "/epoch.tmp") << e;
                std::filesystem::rename(state_dir + "/epoch.tmp", state_dir + "/epoch");
            }
        }
    } else if (m == "flood") {
        flood(std::stoll(flag(argc, argv, "bytes", "1000000")), std::stoul(flag(argc, argv, "line", "100")));
        std::printf("loss=1.5\n");
    } else {
        std::fprintf(stderr, "unknown fake trainer mode '%s'\n", mode);
        return 2;
    }
    std::fflush(stdout);
    return 0;
}

// glibc passes argc, argv and envp to constructors of the executable.
__attribute__((constructor)) void maybe_act_as_trainer(int argc, char** argv, char**) {
    if (const char* mode = std::getenv("HYPERTUNE_FAKE_TRAINER")) _exit(fake_trainer(mode, argc, argv));
}

// --- helpers --------------------------------------------------------------------------------------

std::string self_exe() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

// The options with the fake trainer's mode in the environment.
ht::CommandOptions fake_options(const std::string& mode, ht::CommandOptions options) {
    options.environment.push_back("HYPERTUNE_FAKE_TRAINER=" + mode);
    return options;
}

ht::CommandOptions loss_metric() { return {.metrics = {{"loss", "loss=(\\S+)"}}}; }

ht::SearchSpace space() {
    return ht::SearchSpace{ht::ContinuousParameter("x", 0.0, 1.0),
                           ht::CategoricalParameter("booster", {"gbtree", "; rm -rf ~", "$(touch pwned) `id` \"'\\ *"})};
}

ht::Config config(double x, const std::string& booster = "gbtree") { return space().make({x, booster}); }

// Runs `objective` on a trial of its own outside any tuner; returns the value or the error message.
struct Run {
    std::optional<double> value;
    std::string error;
    double seconds = 0.0;
};
Run run(const ht::CommandObjective& objective, ht::Trial& trial, const ht::Config& cfg = config(0.5)) {
    Run r;
    auto t0 = std::chrono::steady_clock::now();
    try {
        r.value = objective(cfg, trial);
    } catch (const ht::Error& e) {
        r.error = e.what();
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}
Run run(const ht::CommandObjective& objective, ht::Resource budget = 3) {
    ht::Trial trial(1, {}, budget);
    return run(objective, trial);
}

// Alive and not a zombie (a killed orphan may stay a zombie when pid 1 does not reap).
bool process_alive(pid_t pid) {
    if (::kill(pid, 0) != 0) return false;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string s((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    auto close = s.rfind(')');
    return close == std::string::npos || close + 2 >= s.size() || s[close + 2] != 'Z';
}

bool gone_within(pid_t pid, std::chrono::milliseconds limit) {
    for (auto waited = 0ms; waited < limit; waited += 10ms) {
        if (!process_alive(pid)) return true;
        std::this_thread::sleep_for(10ms);
    }
    return !process_alive(pid);
}

std::string log_dir(const std::string& name) {
    auto dir = std::filesystem::path(HYPERTUNE_TEST_BINARY_DIR) / "logs" / name;
    std::filesystem::remove_all(dir);
    return dir.string();
}

std::string read_file(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

long max_rss_kb() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

// One trial that the strategy stops once it reports `stop_at`.
class StopAt : public ht::Scheduler {
public:
    explicit StopAt(ht::Resource stop_at) : stop_at_(stop_at) {}
    std::string name() const override { return "StopAt"; }

protected:
    ht::Suggestion next(const ht::TrialBudget& budget) override {
        if (budget.next_id == 0) return ht::Suggestion::run(0, space().make({0.5, std::string("gbtree")}), 1000);
        return told_ ? ht::Suggestion::done() : ht::Suggestion::wait();
    }
    ht::Decision on_report(ht::TrialId, ht::Resource step, double) override {
        return step >= stop_at_ ? ht::Decision::Stop : ht::Decision::Continue;
    }
    void on_tell(ht::TrialId, const ht::Outcome&) override { told_ = true; }

private:
    ht::Resource stop_at_;
    bool told_ = false;
};

// Options reading `loss` and catching the line pid=<n> (a grandchild's pid) into `pid`.
ht::CommandOptions catch_pid(std::atomic<int>& pid) {
    ht::CommandOptions o{.metrics = {{"loss", "loss=(\\S+)"}, {"pid", "pid=(\\d+)"}}};
    o.on_metric = [&pid](const ht::MetricValue& v) {
        if (v.metric == "pid") pid = static_cast<int>(v.value);
    };
    return o;
}

// A sh script that starts `sleep 1000` in the background, prints its pid, then one epoch every 20 ms.
ht::CommandObjective endless_with_grandchild(const std::string& prelude, std::atomic<int>& grandchild,
                                             double grace) {
    ht::CommandOptions o = catch_pid(grandchild);
    o.step_regex = "epoch=(\\d+)";
    o.kill_grace_seconds = grace;
    return ht::CommandObjective({"/bin/sh", "-c",
                                 prelude + "sleep 1000 & echo pid=$!; i=1; "
                                           "while :; do echo \"epoch=$i loss=0.$i\"; i=$((i+1)); sleep 0.02; done"},
                                o);
}

}  // namespace

// --- construction and arguments -----------------------------------------------------------------

TEST_CASE("a metric regex without exactly one capture group is refused at construction, naming it") {
    auto refused = [](ht::CommandOptions o) {
        try {
            ht::CommandObjective({"train"}, std::move(o));
        } catch (const ht::InvalidArgument& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    auto none = refused({.metrics = {{"validation:loss", "loss=[0-9.]+"}}});
    CHECK(none.find("metric 'validation:loss'") != std::string::npos);
    CHECK(none.find("'loss=[0-9.]+'") != std::string::npos);
    CHECK(none.find("exactly one capture group") != std::string::npos);
    CHECK(refused({.metrics = {{"m", "(a)=(b)"}}}).find("it has 2") != std::string::npos);
    CHECK(refused({.metrics = {{"m", "(unclosed"}}}).find("invalid regex '(unclosed'") != std::string::npos);
    CHECK(refused({.metrics = {{"m", "m=(\\d+)"}}, .step_regex = "epoch=\\d+"}).find("step_regex") != std::string::npos);
    CHECK(refused({}).find("no metric definitions") != std::string::npos);
    CHECK(refused({.metrics = {{"m", "m=(1)"}, {"m", "n=(1)"}}}).find("'m' is defined twice") != std::string::npos);
    CHECK(refused({.metrics = {{"m", "m=(1)"}}, .objective_metric = "auc"}).find("'auc'") != std::string::npos);
    CHECK(refused({.metrics = {{"m", "m=(1)"}}, .timeout_seconds = -1}).find("timeout_seconds") != std::string::npos);
    CHECK(refused({.metrics = {{"m", "m=(1)"}}, .environment = {"NOVALUE"}}).find("NOVALUE") != std::string::npos);
    CHECK_THROWS_AS(ht::CommandObjective({}, loss_metric()), ht::InvalidArgument);
    CHECK_THROWS_WITH_AS(ht::CommandObjective({"train", "--x={x"}, loss_metric()),
                         doctest::Contains("does not open a placeholder"), ht::InvalidArgument);
    CHECK_THROWS_WITH_AS(ht::CommandObjective({"train", "x}"}, loss_metric()), doctest::Contains("unmatched '}'"),
                         ht::InvalidArgument);
}

TEST_CASE("placeholders expand to parameter values and trial fields, one argument each") {
    ht::CommandObjective objective({"echo", "--x={x}", "--booster={booster}", "{budget}/{resumed_from}/{trial_id}",
                                    "{{literal}}", "{x}{x}"},
                                   loss_metric());
    objective.check(space());
    ht::Trial trial(42, {}, 9, 3, std::string("ckpt"));
    auto argv = objective.arguments(config(0.125, "; rm -rf ~"), trial);
    CHECK(argv == std::vector<std::string>{"echo", "--x=0.125", "--booster=; rm -rf ~", "9/3/42", "{literal}",
                                           "0.1250.125"});
}

TEST_CASE("an unknown placeholder is refused by check() and on the first call, naming it") {
    ht::CommandObjective objective({"echo", "--gamma={gamma}"}, loss_metric());
    CHECK_THROWS_WITH_AS(objective.check(space()), doctest::Contains("unknown placeholder {gamma} in argument '--gamma={gamma}'"),
                         ht::InvalidArgument);
    ht::Trial trial(1, {}, 1);
    CHECK_THROWS_WITH_AS(objective(config(0.5), trial), doctest::Contains("{gamma}"), ht::InvalidArgument);
    ht::SearchSpace clash{ht::IntegerParameter("budget", 1, 5)};
    CHECK_THROWS_WITH_AS(ht::CommandObjective({"echo", "{budget}"}, loss_metric()).check(clash),
                         doctest::Contains("ambiguous"), ht::InvalidArgument);
}

// --- running ------------------------------------------------------------------------------------

TEST_CASE("values with shell syntax reach the trainer as one literal argument each, and the log has both streams") {
    auto dir = log_dir("literal");
    ht::CommandObjective objective({self_exe(), "--booster={booster}", "two words", ""},
                                   fake_options("echo", {.metrics = {{"loss", "^loss=(\\S+)$"}}, .log_dir = dir}));
    for (std::string hostile : {"; rm -rf ~", "$(touch pwned) `id` \"'\\ *"}) {
        ht::Trial trial(7, {}, 1);
        auto r = run(objective, trial, config(0.5, hostile));
        CHECK(r.error == "");
        CHECK(r.value == 0.25);
        auto log = read_file(std::filesystem::path(dir) / "trial-7.log");
        CHECK(log.find("\narg=--booster=" + hostile + "\narg=two words\n") != std::string::npos);
        CHECK(log.find("# hypertune: exited with status 0") != std::string::npos);
    }
    CHECK_FALSE(std::filesystem::exists("pwned"));
    // The log is appended to: two runs of trial 7, two headers.
    auto log = read_file(std::filesystem::path(dir) / "trial-7.log");
    std::size_t headers = 0;
    for (auto p = log.find("# hypertune: trial 7"); p != std::string::npos; p = log.find("# hypertune: trial 7", p + 1))
        ++headers;
    CHECK(headers == 2);
}

TEST_CASE("objective lines become reports at the step of the step regex, and other metrics reach on_metric") {
    std::mutex mu;
    std::map<std::string, std::vector<std::pair<ht::Resource, double>>> seen;
    ht::CommandOptions o{.metrics = {{"train:loss", "train_loss=(\\S+)"}, {"validation:loss", "validation_loss=(\\S+)"}},
                         .objective_metric = "validation:loss",
                         .step_regex = "epoch=(\\d+)"};
    o.on_metric = [&](const ht::MetricValue& v) {
        std::lock_guard lk(mu);
        seen[std::string(v.metric)].push_back({v.step, v.value});
    };
    ht::CommandObjective objective({self_exe(), "--x={x}", "--budget={budget}"}, fake_options("curve", o));
    ht::Trial trial(3, {}, 4);
    auto r = run(objective, trial, config(0.5));
    REQUIRE(r.error == "");
    CHECK(*r.value == doctest::Approx(0.04 + 0.25));
    CHECK(trial.reports() == 4);
    CHECK(trial.last_step() == 4);
    CHECK(seen["train:loss"].size() == 4);
    CHECK(seen["train:loss"][1] == std::pair<ht::Resource, double>{2, 1.0});
    CHECK(seen["validation:loss"].back().first == 4);

    SUBCASE("without a step regex, the step is the count of objective lines") {
        ht::CommandObjective counting({"/bin/sh", "-c", "echo 'loss=3'; echo noise; echo 'loss=2'"}, loss_metric());
        ht::Trial t(1, {}, 5);
        CHECK(run(counting, t).value == 2.0);
        CHECK(t.reports() == 2);
        CHECK(t.last_step() == 2);
    }
    SUBCASE("a step that does not increase is not reported but is the latest value") {
        ht::CommandObjective twice({"/bin/sh", "-c", "echo 'epoch=1 loss=3'; echo 'epoch=1 loss=2.5'"},
                                   {.metrics = {{"loss", "loss=(\\S+)"}}, .step_regex = "epoch=(\\d+)"});
        ht::Trial t(1, {}, 5);
        CHECK(run(twice, t).value == 2.5);
        CHECK(t.reports() == 1);
    }
    SUBCASE("a step below 1 fails the trial, as an in-process report of it does") {
        // A trainer counting its epochs from 0: epoch 0 was skipped as a repeat, silently, and
        // its trial's curve missed it (under Hyperband, warnings then blamed its checkpoints).
        ht::CommandObjective from_zero({"/bin/sh", "-c", "echo 'epoch=0 loss=3'; echo 'epoch=1 loss=2.5'"},
                                       {.metrics = {{"loss", "loss=(\\S+)"}}, .step_regex = "epoch=(\\d+)"});
        ht::Trial t(1, {}, 5);
        const auto failed = run(from_zero, t);
        CHECK(failed.error == "trial 1: the step regex 'epoch=(\\d+)' captured '0'; steps start at 1 (the units trained "
                              "so far: count the epochs from 1) (line: epoch=0 loss=3)");
        CHECK(t.reports() == 0);
    }
}

TEST_CASE("a program that is not found or not executable is refused at construction, naming it") {
    CHECK_THROWS_WITH_AS(ht::CommandObjective({"hypertune-no-such-trainer", "--x={x}"}, loss_metric()),
                         doctest::Contains("the program 'hypertune-no-such-trainer' is not found: no executable file "
                                           "of that name in PATH ("),
                         ht::InvalidArgument);
    CHECK_THROWS_WITH_AS(ht::CommandObjective({"./hypertune-no-such-trainer"}, loss_metric()),
                         doctest::Contains("the program './hypertune-no-such-trainer' cannot be run: No such file or "
                                           "directory"),
                         ht::InvalidArgument);
    auto dir = std::filesystem::path(log_dir("programs"));
    std::filesystem::create_directories(dir);
    auto script = dir / "train.sh";
    std::ofstream(script) << "#!/bin/sh\necho loss=0.5\n";
    std::filesystem::permissions(script, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    auto denied = fmt::format("the program '{}' cannot be run: Permission denied", script.string());
    CHECK_THROWS_WITH_AS(ht::CommandObjective({script.string()}, loss_metric()), doctest::Contains(denied.c_str()),
                         ht::InvalidArgument);
    CHECK_THROWS_WITH_AS(ht::CommandObjective({dir.string()}, loss_metric()), doctest::Contains("Is a directory"),
                         ht::InvalidArgument);
    // Found in PATH, or given as a path: accepted.
    CHECK_NOTHROW(ht::CommandObjective({"sh", "-c", "echo loss=1"}, loss_metric()));
    std::filesystem::permissions(script, std::filesystem::perms::owner_exec, std::filesystem::perm_options::add);
    CHECK_NOTHROW(ht::CommandObjective({script.string()}, loss_metric()));
    // A program given by a placeholder is only known per trial.
    CHECK_NOTHROW(ht::CommandObjective({"{x}"}, loss_metric()));
    // An executable file of `name` in `dir` holding `text`.
    auto executable = [&](const char* name, const std::string& text) {
        const auto path = dir / name;
        std::ofstream(path) << text;
        std::filesystem::permissions(path, std::filesystem::perms::owner_all);
        return path;
    };
    // An executable file that is neither a binary nor a "#!" script: posix_spawn cannot run it (a
    // shell would hand it to /bin/sh), and every trial failed on it.
    const auto bare = executable("bare.sh", "echo loss=0.5\n");
    const auto exec_format = fmt::format("the program '{}' cannot be run: Exec format error (neither a binary nor a "
                                         "script that starts with #!)",
                                         bare.string());
    CHECK_THROWS_WITH_AS(ht::CommandObjective({bare.string()}, loss_metric()), doctest::Contains(exec_format.c_str()),
                         ht::InvalidArgument);
    // A script whose interpreter cannot be run: each trial failed with "cannot run '<script>': No
    // such file or directory", naming the script, which is there. Windows line ends make the
    // interpreter "/bin/sh\r".
    const auto crlf = executable("crlf.sh", "#!/bin/sh\r\necho loss=0.5\r\n");
    const auto bad_line_ends = fmt::format("the program '{}' cannot be run: its interpreter '/bin/sh\\r' (the script's "
                                           "#! line) cannot be run: No such file or directory (the script has Windows "
                                           "line ends: convert it with dos2unix)",
                                           crlf.string());
    CHECK_THROWS_WITH_AS(ht::CommandObjective({crlf.string()}, loss_metric()), doctest::Contains(bad_line_ends.c_str()),
                         ht::InvalidArgument);
    const auto missing = executable("missing_interpreter.py", "#!  /hypertune/no/python3 -u\nprint('loss=0.5')\n");
    CHECK_THROWS_WITH_AS(ht::CommandObjective({missing.string()}, loss_metric()),
                         doctest::Contains("its interpreter '/hypertune/no/python3' (the script's #! line) cannot be "
                                           "run: No such file or directory"),
                         ht::InvalidArgument);
    // The same behind env, the usual Python line: every trial failed with env's status 127.
    const auto env_crlf = executable("env_crlf.sh", "#!/usr/bin/env sh\r\necho loss=0.5\r\n");
    CHECK_THROWS_WITH_AS(ht::CommandObjective({env_crlf.string()}, loss_metric()),
                         doctest::Contains("its interpreter 'sh\\r' (which '/usr/bin/env' runs, the script's #! line) "
                                           "is not found in PATH ("),
                         ht::InvalidArgument);
    CHECK_THROWS_WITH_AS(ht::CommandObjective({env_crlf.string()}, loss_metric()),
                         doctest::Contains("(the script has Windows line ends: convert it with dos2unix)"),
                         ht::InvalidArgument);
    const auto env_misspelt = executable("env_misspelt.py", "#!/usr/bin/env hypertune-no-such-python3\nprint('loss=0.5')\n");
    CHECK_THROWS_WITH_AS(ht::CommandObjective({env_misspelt.string()}, loss_metric()),
                         doctest::Contains("its interpreter 'hypertune-no-such-python3' (which '/usr/bin/env' runs"),
                         ht::InvalidArgument);
    // env with its options, or a program it finds, runs as before.
    for (const char* line : {"#!/usr/bin/env sh\n", "#!/usr/bin/env -S sh -e\n"}) {
        const auto fine = executable("env_fine.sh", std::string(line) + "echo loss=0.5\n");
        CHECK_NOTHROW(ht::CommandObjective({fine.string()}, loss_metric()));
    }
}

TEST_CASE("a log_dir that cannot hold logs is refused at construction, not by every trial") {
    auto dir = std::filesystem::path(log_dir("bad_log_dir"));
    std::filesystem::create_directories(dir);
    auto file = dir / "a-file";
    std::ofstream(file) << "not a folder\n";
    ht::CommandOptions o = loss_metric();
    o.log_dir = file.string();
    CHECK_THROWS_WITH_AS(ht::CommandObjective({"/bin/echo", "loss=1"}, o),
                         doctest::Contains(fmt::format("CommandObjective: log_dir '{}' cannot hold the trials' logs: ",
                                                       file.string())
                                               .c_str()),
                         ht::InvalidArgument);
    o.log_dir = (file / "below").string();
    CHECK_THROWS_AS(ht::CommandObjective({"/bin/echo", "loss=1"}, o), ht::InvalidArgument);
    o.log_dir = (dir / "new" / "logs").string();  // made when missing
    CHECK_NOTHROW(ht::CommandObjective({"/bin/echo", "loss=1"}, o));
    CHECK(std::filesystem::is_directory(dir / "new" / "logs"));
}

TEST_CASE("a program removed after construction fails the trial naming the program") {
    auto dir = std::filesystem::path(log_dir("removed"));
    std::filesystem::create_directories(dir);
    auto script = dir / "train.sh";
    std::ofstream(script) << "#!/bin/sh\necho loss=0.5\n";
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    ht::CommandObjective objective({script.string(), "--x={x}"}, loss_metric());
    CHECK(run(objective).value == 0.5);
    std::filesystem::remove(script);
    auto r = run(objective);
    CHECK(r.error == fmt::format("trial 1: cannot run '{}': No such file or directory", script.string()));
}

TEST_CASE("a non-zero exit fails the trial with the status and the last lines of stderr") {
    ht::CommandOptions o = loss_metric();
    o.tail_lines = 2;
    auto r = run(ht::CommandObjective(
        {"/bin/sh", "-c", "echo loss=0.5; echo one >&2; echo two >&2; echo three >&2; exit 3"}, o));
    CHECK(r.error.find("trial 1: '/bin/sh' exited with status 3; last 2 lines of stderr:\n  two\n  three") !=
          std::string::npos);
    // A NUL byte in the trainer's output is quoted as \0, not where the reason ends.
    auto nul = run(ht::CommandObjective({"/bin/sh", "-c", "printf 'bad \\000 byte, and after\\n' >&2; exit 1"}, o));
    CHECK(nul.error.ends_with("last 1 line of stderr:\n  bad \\0 byte, and after"));
}

TEST_CASE("death by a signal fails the trial naming the signal") {
    auto r = run(ht::CommandObjective({"/bin/sh", "-c", "echo loss=0.5; kill -SEGV $$"}, loss_metric()));
    CHECK(r.error.find("killed by signal 11 (SIGSEGV)") != std::string::npos);
}

TEST_CASE("garbage output fails the trial: no line matched the objective metric regex") {
    auto r = run(ht::CommandObjective({"/bin/sh", "-c", "echo hello; echo 'accuracy: high'"}, loss_metric()));
    CHECK(r.error.find("no line matched the objective metric regex 'loss=(\\S+)' (metric 'loss'); last 2 lines of "
                       "stdout:\n  hello\n  accuracy: high") != std::string::npos);
    CHECK(run(ht::CommandObjective({"/bin/true"}, loss_metric())).error.find("it printed nothing") != std::string::npos);
    // Run on from a step (a promotion, or a rerun after a crash), printing nothing says why it may.
    ht::Trial resumed(4, {}, 3, 2);
    CHECK(run(ht::CommandObjective({"/bin/true"}, loss_metric()), resumed).error ==
          "trial 4: '/bin/true': no line matched the objective metric regex 'loss=(\\S+)' (metric 'loss'); it printed "
          "nothing (it ran on from step 2 of its budget of 3: a trainer that finds nothing left to train prints "
          "nothing; let it print the metric of the state it holds, and each epoch's line before it saves that "
          "epoch's state)");
}

TEST_CASE("an objective value that is not a finite number fails the trial, and other metrics skip it") {
    auto r = run(ht::CommandObjective({"/bin/sh", "-c", "echo loss=0.5; echo loss=nan; sleep 5"}, loss_metric()));
    CHECK(r.error.find("the objective metric 'loss' captured 'nan', not a finite number (line: loss=nan)") !=
          std::string::npos);
    CHECK(r.seconds < 3.0);  // the trainer was killed, not waited for
    CHECK(run(ht::CommandObjective({"/bin/sh", "-c", "echo loss=0.5,"}, loss_metric())).error.find("'0.5,'") !=
          std::string::npos);
    auto other = run(ht::CommandObjective({"/bin/sh", "-c", "echo acc=inf; echo loss=0.5"},
                                          {.metrics = {{"loss", "loss=(\\S+)"}, {"acc", "acc=(\\S+)"}}}));
    CHECK(other.value == 0.5);
    // The usual regex, which cannot capture "nan": the diverged trial fails all the same, where it
    // kept its last finite value (0.5, Completed) before.
    const ht::CommandOptions numeric{.metrics = {{"loss", R"(loss=([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?))"}}};
    for (const char* diverged : {"loss=nan", "loss=-inf", "loss= NaN", "loss=Infinity"}) {
        CAPTURE(diverged);
        auto nan_run = run(ht::CommandObjective({"/bin/sh", "-c", fmt::format("echo loss=0.5; echo '{}'", diverged)}, numeric));
        CHECK_FALSE(nan_run.value.has_value());
        CHECK(nan_run.error.find("the objective metric 'loss' reads") != std::string::npos);
        CHECK(nan_run.error.find("not a finite number") != std::string::npos);
    }
    // Too small for a double is 0 (it failed as "not a finite number"); too large stays refused.
    CHECK(run(ht::CommandObjective({"/bin/echo", "loss=1e-400"}, numeric)).value == 0.0);
    CHECK(run(ht::CommandObjective({"/bin/echo", "loss=-2.5E-999"}, numeric)).value == 0.0);
    CHECK(run(ht::CommandObjective({"/bin/echo", "loss=1e400"}, numeric)).error.find("not a finite number") !=
          std::string::npos);
    // A word that starts like one is not a value ("loss=nano-seconds"), nor is it the metric.
    CHECK(run(ht::CommandObjective({"/bin/sh", "-c", "echo loss=0.5; echo loss=information"}, numeric)).value == 0.5);
}

TEST_CASE("a decimal comma or a number the regex stops inside fails the trial, naming metric, text and line") {
    // The regex the README once gave, on a trainer that prints a decimal comma: it captures "0",
    // which was taken as the objective 0 (the best of a minimised run).
    const ht::CommandOptions readme{.metrics = {{"validation:loss", R"(validation_loss=([0-9.eE+-]+))"}}};
    auto comma = run(ht::CommandObjective({"/bin/sh", "-c", "echo epoch=1 validation_loss=0,731 ok"}, readme));
    CHECK_FALSE(comma.value.has_value());
    CHECK(comma.error.find("the objective metric 'validation:loss' captured '0', but the number goes on after it") !=
          std::string::npos);
    CHECK(comma.error.find("(line: epoch=1 validation_loss=0,731 ok)") != std::string::npos);
    // Regexes that stop before a decimal point, a digit or an exponent.
    for (const char* line : {"loss=0.731", "loss=12345", "loss=5e-3", "loss=5E3", "loss=0x1p-2"}) {
        CAPTURE(line);
        auto r = run(ht::CommandObjective({"/bin/echo", line}, {.metrics = {{"loss", R"(loss=(\d))"}}}));
        CHECK(r.error.find("but the number goes on after it") != std::string::npos);
    }
    // A hexadecimal number (printf's %a) is not the 0 it starts with, signed or not.
    CHECK(run(ht::CommandObjective({"/bin/echo", "loss=-0X1.8p+1"}, {.metrics = {{"loss", R"(loss=([-+]?[0-9.]+))"}}}))
              .error.find("captured '-0', but the number goes on after it") != std::string::npos);
    // What follows a whole number is not refused: a comma before a space, a full stop, a unit.
    for (const char* line : {"loss=0.731, acc=0.9", "loss=0.731.", "loss=0.731ms", "loss=0.731e", "loss=0.731x2"}) {
        CAPTURE(line);
        auto r = run(ht::CommandObjective(
            {"/bin/echo", line}, {.metrics = {{"loss", R"(loss=([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?))"}}}));
        CHECK(r.error == "");
        CHECK(r.value == 0.731);
    }
    // A regex that matches the ',' after its group says that ',' separates values there.
    for (const char* line : {"row=3,0.731,0.9", "row=3,0.731,x"}) {
        CAPTURE(line);
        auto fields = run(ht::CommandObjective({"/bin/echo", line}, {.metrics = {{"loss", R"(row=\d+,([0-9.]+),)"}}}));
        CHECK(fields.error == "");
        CHECK(fields.value == 0.731);
    }
    CHECK(run(ht::CommandObjective({"/bin/echo", "row=3,0.731,0.9"}, {.metrics = {{"loss", R"(row=\d+,([0-9.]+))"}}}))
              .error.find("a separator such as ',' can be matched by the regex after the group") != std::string::npos);
    // Another metric cut the same way is skipped, not reported.
    std::vector<double> seen;
    ht::CommandOptions o{.metrics = {{"loss", "loss=(\\S+)"}, {"acc", "acc=([0-9.]+)"}}};
    o.on_metric = [&](const ht::MetricValue& v) {
        if (v.metric == "acc") seen.push_back(v.value);
    };
    CHECK(run(ht::CommandObjective({"/bin/sh", "-c", "echo acc=0,9; echo acc=0.8; echo loss=0.5"}, o)).value == 0.5);
    CHECK(seen == std::vector<double>{0.8});
}

TEST_CASE("through the tuner, a trial whose metric has a decimal comma fails and never ranks as best") {
    // x < 0.5 prints its loss with a decimal comma ("0,0..."), which the regex would read as 0.
    ht::CommandObjective objective(
        {"/bin/sh", "-c", "if [ \"$1\" = low ]; then echo validation_loss=0,01; else echo validation_loss=0.9; fi",
         "sh", "{booster}"},
        {.metrics = {{"validation:loss", R"(validation_loss=([0-9.eE+-]+))"}}});
    ht::SearchSpace s{ht::CategoricalParameter("booster", {"low", "high"})};
    ht::Tuner tuner(s, ht::GridSearch(), {.metric = "validation:loss", .max_jobs = 2, .progress = ht::ProgressBar::Never});
    auto result = tuner.fit(objective);
    REQUIRE(result.trials().size() == 2);
    for (const auto& t : result.trials()) {
        CAPTURE(t.config);
        bool low = t.config.get<std::string>("booster") == "low";
        CHECK(t.status == (low ? ht::TrialStatus::Failed : ht::TrialStatus::Completed));
        if (low) CHECK(t.failure_reason.find("captured '0', but the number goes on after it") != std::string::npos);
    }
    CHECK(result.best().objective == 0.9);
}

TEST_CASE("metrics(): a command's metrics become the objectives and constraint of a run") {
    // The trainer prints its accuracy per epoch (the objective metric, reported) and, at the end,
    // its time per epoch and a train loss that only goes to the log.
    ht::CommandObjective objective(
        {"/bin/sh", "-c",
         "echo \"epoch=1 accuracy=0.5\"; echo \"epoch=2 accuracy=$1\"; echo \"seconds_per_epoch=$2\"; "
         "echo train_loss=0.1; if [ \"$2\" = 50 ]; then echo \"seconds_per_epoch=oops\"; fi",
         "sh", "{acc}", "{spe}"},
        {.metrics = {{"accuracy", R"(accuracy=([0-9.]+))"},
                     {"seconds_per_epoch", R"(seconds_per_epoch=([0-9.]+))"},
                     {"train_loss", R"(train_loss=([0-9.]+))"}},
         .step_regex = R"(epoch=(\d+))"});
    ht::SearchSpace space{ht::CategoricalParameter("acc", {"0.7", "0.9"}), ht::CategoricalParameter("spe", {"20", "50"})};
    ht::TunerOptions o;
    o.objectives = {{"accuracy", ht::Direction::Maximize}};
    o.constraints = {ht::Constraint::at_most("seconds_per_epoch", 30.0)};
    o.max_jobs = 4;
    o.progress = ht::ProgressBar::Never;
    auto result = ht::Tuner(space, ht::GridSearch(), o).fit([&](const ht::Config& c, ht::Trial& t) {
        return objective.metrics(c, t);
    });
    REQUIRE(result.trials().size() == 4);
    for (const auto& t : result.trials()) {
        CAPTURE(t.config);
        CHECK(t.status == ht::TrialStatus::Completed);
        CHECK(t.curve.size() == 2);  // the accuracy lines, reported at epochs 1 and 2
        CHECK(t.objective == std::stod(t.config.get<std::string>("acc")));
        // "oops" is skipped: the earlier value stands.
        CHECK(*result.metric(t, "seconds_per_epoch") == std::stod(t.config.get<std::string>("spe")));
        CHECK(t.feasible == (t.config.get<std::string>("spe") == "20"));
    }
    CHECK(result.best().objective == 0.9);
    CHECK(result.best().config.get<std::string>("spe") == "20");

    // A constrained metric no line matched leaves the trial infeasible, and a warning names it.
    o.constraints = {ht::Constraint::at_most("memory_gb", 8.0)};
    o.max_jobs = 1;
    auto missing = ht::Tuner(space, ht::GridSearch(), o).fit([&](const ht::Config& c, ht::Trial& t) {
        return objective.metrics(c, t);
    });
    CHECK(missing.trials().at(0).status == ht::TrialStatus::Completed);
    CHECK_FALSE(missing.trials().at(0).feasible);
    CHECK(std::any_of(missing.setup().warnings.begin(), missing.setup().warnings.end(), [](const std::string& w) {
        return w.find("returned no value for the constrained metric 'memory_gb'") != std::string::npos;
    }));
}

TEST_CASE("metrics(): every report carries each metric, so MO-ASHA ranks a command on all its objectives") {
    // Per epoch, one line with both objectives: accuracy (the objective metric) and cost.
    ht::CommandObjective objective(
        {"/bin/sh", "-c",
         "e=1; while [ $e -le $3 ]; do echo \"cost=$(( $e * $2 )) accuracy=0.$1$e\"; e=$(( e + 1 )); done", "sh",
         "{a}", "{c}", "{budget}"},
        {.metrics = {{"accuracy", R"(accuracy=([0-9.]+))"}, {"cost", R"(cost=([0-9]+))"}}});
    ht::SearchSpace space{ht::IntegerParameter("a", 1, 8), ht::IntegerParameter("c", 1, 9)};
    ht::TunerOptions o;
    o.objectives = {{"accuracy", ht::Direction::Maximize}, {"cost", ht::Direction::Minimize}};
    o.max_jobs = 18;
    o.seed = 4;
    o.progress = ht::ProgressBar::Never;
    auto result = ht::Tuner(space, ht::ASHA({.min_resource = 1, .max_resource = 9}), o)
                      .fit([&](const ht::Config& c, ht::Trial& t) { return objective.metrics(c, t); });
    REQUIRE(result.trials().size() == 18);
    std::size_t pareto = 0;
    for (const auto& t : result.trials()) {
        CAPTURE(t.config);
        CHECK(t.status != ht::TrialStatus::Failed);
        CHECK(*result.metric(t, "cost") == static_cast<double>(t.resource_used) * t.config.get<std::int64_t>("c"));
        for (const auto& d : t.decisions)
            if (d.reason.find("by Pareto priority") != std::string::npos) ++pareto;
    }
    CHECK(result.count(ht::TrialStatus::Stopped) > 0);
    CHECK(pareto > 5);
}

TEST_CASE("a trainer that hangs is killed at the timeout and the trial fails") {
    auto r = run(ht::CommandObjective({"/bin/sleep", "1000"},
                                      {.metrics = {{"loss", "loss=(\\S+)"}}, .timeout_seconds = 0.3, .kill_grace_seconds = 0.2}));
    CHECK(r.error.find("'/bin/sleep' timed out after 0.3 s and was killed") != std::string::npos);
    CHECK(r.seconds >= 0.3);
    CHECK(r.seconds < 2.0);
}

TEST_CASE("a value where a line longer than max_line_bytes was cut fails the trial, but a whole one before the cut counts") {
    const ht::CommandOptions o{.metrics = {{"loss", R"(loss=([0-9.]+))"}, {"acc", R"(acc=([0-9.]+))"}},
                               .step_regex = R"(epoch=(\d+))",
                               .max_line_bytes = 64};
    const std::string pad(50, 'x');
    // "loss=0.987654" cut after "loss=0": read, it would be the objective 0, the best of the run.
    auto cut = run(ht::CommandObjective({"/bin/echo", "epoch=1 " + pad + "loss=0.987654"}, o));
    CHECK_FALSE(cut.value.has_value());
    CHECK(cut.error == ("trial 1: the objective metric 'loss' captured '0' where the line was cut at "
                              "max_line_bytes (64 bytes), so the number may go on past the cut: print it on a "
                              "shorter line, or raise CommandOptions::max_line_bytes"));
    // The step regex too: "epoch=12345" cut after "epoch=1".
    auto step = run(ht::CommandObjective({"/bin/sh", "-c", "echo " + pad + "llllll epoch=12345; echo loss=0.5"}, o));
    CHECK(step.error.find("the step regex 'epoch=(\\d+)' captured '1' where the line was cut") != std::string::npos);
    // Another metric cut so is skipped; a value that ends before the cut is whole, and read.
    std::vector<double> acc;
    ht::CommandOptions seen = o;
    seen.on_metric = [&](const ht::MetricValue& v) {
        if (v.metric == "acc") acc.push_back(v.value);
    };
    auto whole = run(ht::CommandObjective(
        {"/bin/sh", "-c", "echo epoch=1 loss=0.25 " + pad + "acc=0.91; echo epoch=2 acc=0.93 loss=0.2 " + pad}, seen));
    CHECK(whole.error == "");
    CHECK(whole.value == 0.2);
    CHECK(acc == std::vector<double>{0.93});
    // A metric past the cut is never read: the message says lines were cut.
    auto past = run(ht::CommandObjective({"/bin/echo", "epoch=1 " + pad + pad + "loss=0.5"}, o));
    CHECK(past.error.find("no line matched the objective metric regex 'loss=([0-9.]+)' (metric 'loss') (1 line was "
                          "longer than max_line_bytes (64 bytes) and cut, and a metric past the cut is not read: "
                          "raise CommandOptions::max_line_bytes)") != std::string::npos);
}

TEST_CASE("a timeout meant as never (1e10 s) does not overflow the clock into the past") {
    // It did: every trial failed at once as timed out after 10000000000 s.
    auto r = run(ht::CommandObjective({"/bin/echo", "loss=0.5"}, {.metrics = {{"loss", "loss=(\\S+)"}},
                                                                   .timeout_seconds = 1e10,
                                                                   .kill_grace_seconds = 1e10}));
    CHECK(r.error == "");
    CHECK(r.value == 0.5);
}

TEST_CASE("a flood of output neither deadlocks nor grows memory") {
    const long long mb = sanitized ? 20 : 100;
    auto dir = log_dir("flood");
    long rss_before = max_rss_kb();
    SUBCASE("long lines on both streams") {
        ht::CommandObjective objective({self_exe(), fmt::format("--bytes={}", mb << 20), "--line=1000"},
                                       fake_options("flood", loss_metric()));
        auto r = run(objective);
        CHECK(r.error == "");
        CHECK(r.value == 1.5);
        MESSAGE(fmt::format("{} MB of 1000-byte lines read in {:.2f} s", mb, r.seconds));
    }
    SUBCASE("short lines") {
        ht::CommandObjective objective({self_exe(), fmt::format("--bytes={}", (mb / 10) << 20), "--line=20"},
                                       fake_options("flood", loss_metric()));
        auto r = run(objective);
        CHECK(r.value == 1.5);
        MESSAGE(fmt::format("{} MB of 20-byte lines read in {:.2f} s", mb / 10, r.seconds));
    }
    SUBCASE("one endless line is cut, and the cut shows in the log") {
        ht::CommandObjective objective(
            {"/bin/sh", "-c", "head -c 30000000 /dev/zero | tr '\\0' x; echo; echo loss=2 >&2; exit 1"},
            {.metrics = {{"loss", "loss=(\\S+)"}}, .log_dir = dir, .max_line_bytes = 1000});
        ht::Trial trial(5, {}, 1);
        auto r = run(objective, trial);
        CHECK(r.error.find("exited with status 1; last 1 line of stderr:\n  loss=2") != std::string::npos);
        auto log = read_file(std::filesystem::path(dir) / "trial-5.log");
        CHECK(log.size() < 5000);
        CHECK(log.find(std::string(1000, 'x') + " [line cut]\n") != std::string::npos);
    }
    if (!sanitized) CHECK(max_rss_kb() - rss_before < 30 * 1024);
}

TEST_CASE("should_stop ends the whole process group: SIGTERM, and SIGKILL after the grace") {
    for (bool ignores_term : {false, true}) {
        CAPTURE(ignores_term);
        std::atomic<int> grandchild{0};
        auto objective = endless_with_grandchild(ignores_term ? "trap '' TERM; " : "", grandchild, 0.3);
        ht::Tuner tuner(space(), StopAt(3), {.max_jobs = 1, .progress = ht::ProgressBar::Never});
        auto t0 = std::chrono::steady_clock::now();
        auto result = tuner.fit(objective);
        double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        REQUIRE(result.trials().size() == 1);
        const auto& t = result.trials()[0];
        CHECK(t.failure_reason == "");
        CHECK(t.status == ht::TrialStatus::Stopped);
        if (!ignores_term) {
            CHECK(t.objective == doctest::Approx(0.3));
            CHECK(t.resource_used == 3);
        } else {
            // What it trained during the grace counts (the resource was spent), and is said.
            CHECK(t.resource_used > 3);
            CHECK(t.objective == doctest::Approx(static_cast<double>(t.resource_used) / 100.0));
            const auto& w = result.setup().warnings;
            CHECK(std::any_of(w.begin(), w.end(), [&](const std::string& text) {
                return text.starts_with(fmt::format("trial 0 went on to step {} after StopAt told it to stop at step 3",
                                                    t.resource_used)) &&
                       text.find("(a command: print each step's line as the step ends, flushed, and exit on "
                                 "SIGTERM)") != std::string::npos;
            }));
        }
        REQUIRE(grandchild.load() > 0);
        CHECK(gone_within(grandchild.load(), 500ms));
        if (ignores_term) CHECK(seconds >= 0.3);  // waited for the grace, then SIGKILL
        CHECK(seconds < 3.0);
    }
}

TEST_CASE("max_trial_seconds stops a command trainer as a scheduler's stop would, keeping its last value") {
    // 50 epochs of 100 ms (5 s) against a limit of 1 s (the trainer's start counts).
    ht::CommandObjective objective({self_exe(), "--x={x}", "--budget={budget}", "--sleep-ms=100"},
                                   fake_options("curve", {.metrics = {{"validation:loss", "validation_loss=(\\S+)"}},
                                                          .step_regex = "epoch=(\\d+)"}));
    ht::Tuner tuner(space(), ht::RandomSearch({.max_resource = 50}),
                    {.metric = "validation:loss", .max_jobs = 1, .max_trial_seconds = 1.0,
                     .progress = ht::ProgressBar::Never});
    auto result = tuner.fit(objective);
    REQUIRE(result.trials().size() == 1);
    const auto& t = result.trials()[0];
    CHECK(t.failure_reason == "");
    CHECK(t.status == ht::TrialStatus::Stopped);
    CHECK(t.resource_used >= 2);
    CHECK(t.resource_used < 50);
    const double x = t.config.get<double>("x");
    CHECK(t.objective == doctest::Approx((x - 0.3) * (x - 0.3) + 1.0 / static_cast<double>(t.resource_used)));
    CHECK(t.elapsed_seconds < 3.0);
}

TEST_CASE("a trainer stopped before its first value says whether it printed anything, and the lines it did") {
    // A Python trainer without -u or flush=True prints nothing until it exits: cut by
    // max_trial_seconds, its trial failed with a reason that did not point at the buffering.
    auto cut = [](const std::string& script) {
        ht::Tuner tuner(space(), ht::RandomSearch(), {.max_jobs = 1, .max_trial_seconds = 0.3, .progress = ht::ProgressBar::Never});
        return tuner.fit(ht::CommandObjective({"/bin/sh", "-c", script}, loss_metric())).trials().at(0);
    };
    const auto silent = cut("exec sleep 30");
    CHECK(silent.status == ht::TrialStatus::Failed);
    CHECK(silent.failure_reason.find("was stopped before it printed a value of the objective metric 'loss'; it printed "
                                     "nothing before the stop: a trainer whose output is buffered (Python without -u "
                                     "or flush=True, C stdio on a pipe) shows its lines only as it exits") !=
          std::string::npos);
    const auto talking = cut("echo loading data >&2; exec sleep 30");
    CHECK(talking.status == ht::TrialStatus::Failed);
    CHECK(talking.failure_reason.find("was stopped before it printed a value of the objective metric 'loss'; last 1 line "
                                      "of stderr:\n  loading data") != std::string::npos);
}

TEST_CASE("what the trainer leaves running when it exits is killed, without waiting for it") {
    std::atomic<int> grandchild{0};
    // The background sleep keeps the pipes open: end of file never comes on its own.
    auto r = run(ht::CommandObjective({"/bin/sh", "-c", "sleep 1000 & echo pid=$!; echo loss=0.75"}, catch_pid(grandchild)));
    CHECK(r.value == 0.75);
    CHECK(r.seconds < 1.5);
    REQUIRE(grandchild.load() > 0);
    CHECK(gone_within(grandchild.load(), 500ms));
}

TEST_CASE("concurrent trials through the tuner: 4 workers, ASHA, the fake trainer's exact values") {
    std::atomic<int> metrics{0};
    ht::CommandOptions o{.metrics = {{"validation:loss", "validation_loss=(\\S+)"}}, .step_regex = "epoch=(\\d+)"};
    o.on_metric = [&](const ht::MetricValue&) { ++metrics; };
    ht::CommandObjective objective({self_exe(), "--x={x}", "--budget={budget}", "--sleep-ms=2", "--booster={booster}"},
                                   fake_options("curve", o));
    ht::Tuner tuner(space(), ht::ASHA({.min_resource = 1, .max_resource = 9}),
                    {.metric = "validation:loss", .max_jobs = sanitized ? 12 : 24, .max_parallel_jobs = 4, .seed = 3,
                     .progress = ht::ProgressBar::Never});
    auto t0 = std::chrono::steady_clock::now();
    auto result = tuner.fit(objective);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::size_t stopped = 0;
    ht::Resource resource = 0;
    for (const auto& t : result.trials()) {
        CAPTURE(t.id);
        CHECK(t.failure_reason == "");
        CHECK(t.status != ht::TrialStatus::Failed);
        double x = t.config.get<double>("x");
        CHECK(t.objective == doctest::Approx((x - 0.3) * (x - 0.3) + 1.0 / static_cast<double>(t.resource_used)));
        stopped += t.status == ht::TrialStatus::Stopped;
        resource += t.resource_used;
    }
    CHECK(stopped > 0);
    CHECK(metrics.load() >= static_cast<int>(resource));
    MESSAGE(fmt::format("{} trials ({} stopped early) in {:.2f} s on 4 workers", result.trials().size(), stopped, seconds));
}

TEST_CASE("{checkpoint_dir}: a paused trainer keeps its state in its folder and a promoted one continues from it") {
    ht::CommandOptions o{.metrics = {{"validation:loss", "validation_loss=(\\S+)"}}, .step_regex = "epoch=(\\d+)"};
    const auto dir = std::filesystem::path(log_dir("checkpoint_dir"));
    std::filesystem::create_directories(dir);
    const std::string trained_log = (dir / "trained.txt").string();
    ht::CommandObjective objective({self_exe(), "--x={x}", "--budget={budget}", "--trial={trial_id}",
                                    "--state-dir={checkpoint_dir}", "--trained-log=" + trained_log},
                                   fake_options("curve", o));
    std::vector<std::string> folders;
    ht::TunerOptions options{.metric = "validation:loss", .max_jobs = 12, .max_parallel_jobs = 2, .seed = 5,
                             .progress = ht::ProgressBar::Never};
    std::mutex mu;
    auto with_folder = [&](const ht::Config& c, ht::Trial& t) {
        {
            std::lock_guard lk(mu);
            folders.push_back(t.checkpoint_dir());
        }
        return objective(c, t);
    };
    ht::Tuner tuner(space(), ht::ASHA({.min_resource = 1, .max_resource = 9, .type = ht::HalvingType::Promotion}),
                    options);
    const auto result = tuner.fit(with_folder);
    std::map<ht::TrialId, std::vector<int>> trained;
    {
        std::ifstream in(trained_log);
        ht::TrialId id = 0;
        for (int e = 0; in >> id >> e;) trained[id].push_back(e);
    }
    std::size_t promoted = 0;
    for (const auto& t : result.trials()) {
        CAPTURE(t.id);
        CHECK(t.status != ht::TrialStatus::Failed);
        promoted += t.segments.size() > 1;
        // Every epoch trained once, across the pauses: 1, 2, ..., resource_used.
        const auto& epochs = trained[t.id];
        REQUIRE(epochs.size() == static_cast<std::size_t>(t.resource_used));
        for (std::size_t i = 0; i < epochs.size(); ++i) CHECK(epochs[i] == static_cast<int>(i + 1));
        double x = t.config.get<double>("x");
        CHECK(t.objective == doctest::Approx((x - 0.3) * (x - 0.3) + 1.0 / static_cast<double>(t.resource_used)));
    }
    CHECK(promoted > 0);
    REQUIRE(!folders.empty());
    for (const auto& f : folders) CHECK_FALSE(std::filesystem::exists(f));  // gone with their trials

    // The placeholder without a tuner: a clear error, no trainer started.
    ht::Trial alone(3, {}, 2);
    CHECK_THROWS_WITH_AS(objective.arguments(config(0.5), alone),
                         "trial 3: checkpoint_dir() is only available while a Tuner runs the trial", ht::Error);
}

// The lines of the trained-epochs log ("<trial> <epoch>"), in order.
std::vector<std::pair<ht::TrialId, int>> trained_epochs(const std::string& log) {
    std::vector<std::pair<ht::TrialId, int>> out;
    std::ifstream in(log);
    ht::TrialId id = 0;
    for (int e = 0; in >> id >> e;) out.emplace_back(id, e);
    return out;
}

TEST_CASE("{checkpoint_dir}: lines a trainer prints after its stop count, so a promotion resumes where its folder is") {
    // The trainer trains 3 epochs whatever its budget and writes its lines in one block at exit:
    // at the first rung (budget 1) its report of epoch 2 gets a Stop, and its epoch 3, trained and
    // saved in its folder, comes after it. Dropped, the record would end at 2 and a promotion
    // resume from 2 with the folder at 3 (a trainer with nothing to train prints nothing: it fails).
    ht::CommandOptions o{.metrics = {{"validation:loss", "validation_loss=(\\S+)"}}, .step_regex = "epoch=(\\d+)"};
    const auto dir = std::filesystem::path(log_dir("overrun_buffered"));
    std::filesystem::create_directories(dir);
    const std::string trained_log = (dir / "trained.txt").string();
    ht::CommandObjective objective({self_exe(), "--x={x}", "--budget={budget}", "--trial={trial_id}",
                                    "--state-dir={checkpoint_dir}", "--trained-log=" + trained_log,
                                    "--min-epochs=3", "--buffered=1"},
                                   fake_options("curve", o));
    ht::Tuner tuner(space(), ht::ASHA({.min_resource = 1, .max_resource = 9, .type = ht::HalvingType::Promotion}),
                    {.metric = "validation:loss", .max_jobs = 9, .max_parallel_jobs = 2, .seed = 5,
                     .progress = ht::ProgressBar::Never});
    const auto result = tuner.fit(objective);
    std::map<ht::TrialId, std::vector<int>> trained;
    for (const auto& [id, e] : trained_epochs(trained_log)) trained[id].push_back(e);
    std::size_t past = 0;
    for (const auto& t : result.trials()) {
        CAPTURE(t.id);
        CHECK(t.status != ht::TrialStatus::Failed);
        CHECK(t.failure_reason == "");
        const auto& epochs = trained[t.id];  // each once, across the pauses
        REQUIRE(epochs.size() == static_cast<std::size_t>(t.resource_used));
        for (std::size_t i = 0; i < epochs.size(); ++i) CHECK(epochs[i] == static_cast<int>(i + 1));
        for (const auto& d : t.decisions)
            if (d.kind == ht::DecisionRecord::Kind::Promote) {
                // From where its folder is (past rung 3 already), by the rule or to fill a worker.
                CHECK(d.reason.find(": resumes from 3 to 9") != std::string::npos);
                ++past;
            }
    }
    CHECK(past > 0);
}

TEST_CASE("kill -9 with a command trainer: a resumed trial continues from its {checkpoint_dir}, one epoch redone per "
          "kill at most") {
    const int kills_wanted = sanitized ? 4 : 10;
    const auto dir = std::filesystem::path(log_dir("command_kill"));
    std::filesystem::create_directories(dir);
    const std::string journal = (dir / "run.jsonl").string();
    auto objective = [&](const std::string& log) {
        return ht::CommandObjective({self_exe(), "--x={x}", "--budget={budget}", "--trial={trial_id}", "--sleep-ms=4",
                                     "--state-dir={checkpoint_dir}", "--trained-log=" + log},
                                    fake_options("curve", {.metrics = {{"validation:loss", "validation_loss=(\\S+)"}},
                                                           .step_regex = "epoch=(\\d+)"}));
    };
    auto options = [&](const std::string& j) {
        return ht::TunerOptions{.metric = "validation:loss", .max_jobs = 8, .seed = 6,
                                .progress = ht::ProgressBar::Never, .journal = j};
    };
    auto tuner = [&](const std::string& j) { return ht::Tuner(space(), ht::RandomSearch({.max_resource = 9}), options(j)); };

    const std::string reference_log = (dir / "reference.txt").string();
    const ht::Result reference = tuner("").fit(objective(reference_log));
    const auto reference_epochs = trained_epochs(reference_log).size();
    REQUIRE(reference_epochs == 8 * 9);

    const std::string log = (dir / "trained.txt").string();
    int kills = 0;
    std::uint64_t rng = 12345;
    for (int round = 0; round < kills_wanted; ++round) {
        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
        const std::size_t epochs_before = trained_epochs(log).size();
        const pid_t child = ::fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            try {
                (void)tuner(journal).fit(objective(log));
            } catch (...) {
                ::_exit(2);
            }
            ::_exit(0);
        }
        // Kill it a few epochs in (each takes 4 ms), at a random moment inside an epoch.
        const std::size_t epochs_to_wait = 2 + (rng >> 33) % 6;
        for (int waited = 0; trained_epochs(log).size() < epochs_before + epochs_to_wait && waited < 5000; ++waited)
            std::this_thread::sleep_for(1ms);
        std::this_thread::sleep_for(std::chrono::microseconds((rng >> 20) % 4000));
        ::kill(child, SIGKILL);
        int status = 0;
        ::waitpid(child, &status, 0);
        kills += WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
        // The orphaned trainer is killed with the tuner (its parent-death signal).
        std::this_thread::sleep_for(sanitized ? 300ms : 30ms);
    }
    CHECK(kills == kills_wanted);
    const ht::Result finished = tuner(journal).fit(objective(log));
    REQUIRE(finished.trials().size() == reference.trials().size());
    for (std::size_t i = 0; i < finished.trials().size(); ++i) {
        CAPTURE(i);
        CHECK(finished.trials()[i].config == reference.trials()[i].config);
        CHECK(finished.trials()[i].status == ht::TrialStatus::Completed);
        CHECK(finished.trials()[i].objective == reference.trials()[i].objective);
    }
    // Every epoch of every trial trained at least once; redone: what the kills cost.
    const auto epochs = trained_epochs(log);
    std::map<ht::TrialId, std::set<int>> distinct;
    for (const auto& [id, e] : epochs) distinct[id].insert(e);
    for (const auto& [id, set] : distinct) CHECK(set.size() == 9);
    const long redone = static_cast<long>(epochs.size()) - static_cast<long>(reference_epochs);
    MESSAGE(fmt::format("command trainer, {} kills: {} epochs trained against {} uninterrupted: {:.2f} redone per kill",
                        kills, epochs.size(), reference_epochs, static_cast<double>(redone) / std::max(1, kills)));
    CHECK(redone >= 0);
    CHECK(redone <= kills);
    CHECK_FALSE(std::filesystem::exists(journal + ".checkpoints"));  // the run ended: nothing left
}

TEST_CASE("a trainer does not outlive a tuner killed with SIGKILL, even one that writes no line") {
    // An orphaned trainer died only at its next line (SIGPIPE); one that writes none for a while (a
    // Python trainer: CPython ignores SIGPIPE, logging swallows the failed write, a buffered stdout
    // writes at the end) trained on into the checkpoint folder that the resumed run gave the
    // trial's next run. It now gets SIGKILL when the tuner dies (Linux's parent-death signal).
    const auto dir = std::filesystem::path(log_dir("command_orphan"));
    std::filesystem::create_directories(dir);
    const std::string pid_file = (dir / "trainer.pid").string();
    const pid_t tuner = ::fork();
    REQUIRE(tuner >= 0);
    if (tuner == 0) {
        try {
            ht::Tuner t(space(), ht::RandomSearch(), {.max_jobs = 1, .progress = ht::ProgressBar::Never});
            (void)t.fit(ht::CommandObjective(
                {"/bin/sh", "-c", "trap '' PIPE; echo $$ > " + pid_file + ".part; mv " + pid_file + ".part " + pid_file +
                                      "; exec sleep 30"},
                loss_metric()));
        } catch (...) {
        }
        ::_exit(0);
    }
    pid_t trainer = 0;
    for (int waited = 0; trainer == 0 && waited < 10000; waited += 5) {
        std::ifstream in(pid_file);
        if (!(in >> trainer)) trainer = 0;
        std::this_thread::sleep_for(5ms);
    }
    ::kill(tuner, SIGKILL);
    ::waitpid(tuner, nullptr, 0);
    REQUIRE(trainer > 0);
    CHECK(gone_within(trainer, 2000ms));
    if (process_alive(trainer)) ::kill(-trainer, SIGKILL);
}

TEST_CASE("a trivial command run many times gives the same value every time") {
    // Its cost per trial is measured in bench/bench_command_objective.cpp, not asserted here.
    ht::CommandObjective objective({"/bin/echo", "loss={x}"}, loss_metric());
    const int n = sanitized ? 20 : 100;
    for (int i = 0; i < n; ++i) {
        ht::Trial trial(static_cast<ht::TrialId>(i), {}, 1);
        CHECK(objective(config(0.5), trial) == 0.5);
    }
}

TEST_CASE("a run whose metric names another of the command's metrics than the one it returns is refused, naming both") {
    // The trainer prints loss and acc; the objective returns its first definition (loss), and a run
    // that maximised "acc" optimised the loss under that name (its best "acc" the largest loss).
    const ht::CommandOptions two{.metrics = {{"loss", "loss=(\\S+)"}, {"acc", "acc=(\\S+)"}}};
    const ht::CommandObjective objective({"/bin/sh", "-c", "echo loss={x} acc=0.5"}, two);
    CHECK(objective.objective_metric() == "loss");
    CHECK(objective.metric_names() == std::vector<std::string>{"loss", "acc"});
    ht::Tuner wrong(space(), ht::RandomSearch(), {.metric = "acc", .direction = ht::Direction::Maximize, .max_jobs = 2});
    CHECK_THROWS_WITH_AS((void)wrong.fit(objective),
                         "Tuner: the run's metric is 'acc' (TunerOptions::metric), but the objective returns its metric "
                         "'loss' (CommandOptions::objective_metric, else the first definition): set .objective_metric = "
                         "\"acc\", or name 'loss' as the run's metric",
                         ht::InvalidArgument);
    // Named as the objective metric, or the run's metric left unnamed or named as returned: it runs.
    ht::CommandOptions acc = two;
    acc.objective_metric = "acc";
    CHECK(ht::Tuner(space(), ht::RandomSearch(), {.metric = "acc", .max_jobs = 2})
              .fit(ht::CommandObjective({"/bin/sh", "-c", "echo loss={x} acc=0.5"}, acc))
              .best()
              .objective == 0.5);
    CHECK(ht::Tuner(space(), ht::RandomSearch(), {.max_jobs = 2}).fit(objective).count(ht::TrialStatus::Completed) == 2);
    CHECK(ht::Tuner(space(), ht::RandomSearch(), {.metric = "loss", .max_jobs = 2}).fit(objective).count(
              ht::TrialStatus::Completed) == 2);
}
