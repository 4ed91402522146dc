// SPDX-License-Identifier: MIT
#pragma once
// CommandObjective: an objective that runs an external trainer command for each trial and reads
// its metrics from its output, as SageMaker AMT's metric definitions do. Any launcher (mpirun,
// torchrun, a Python script) becomes one trial:
//
//   ht::CommandObjective objective(
//       {"mpirun", "-n", "3", "./train", "--eta={eta}", "--max-depth={max_depth}", "--epochs={budget}"},
//       {.metrics = {{"validation:loss", R"(validation_loss=([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?))"}},
//        .step_regex = R"(epoch=(\d+))"});
//   objective.check(space);  // unknown placeholders are refused before any trial runs
//   tuner.fit(objective);
//
// Behaviour, in the order a trial goes through it:
// - Arguments: each argument of the template is expanded on its own. {name} is a parameter's value
//   (hypertune::format_value), {budget}, {resumed_from} and {trial_id} come from the Trial;
//   {checkpoint_dir} is the trial's own folder (Trial::checkpoint_dir): the trainer saves its state
//   there and, when it finds state at start, continues from it (after a pause, or with a journal
//   after a crash), as SageMaker's checkpoint path works; "{{" and "}}" are literal braces. The
//   command is started with posix_spawnp (PATH lookup), never through a shell, so every value
//   reaches the trainer as exactly one argument, whatever characters it holds.
//   The constructor already checks that the program exists and is executable (looked up in PATH
//   when it has no '/', relative to the working directory when it has one), unless the program is
//   itself a placeholder.
//   stdin is /dev/null; signal mask and dispositions are reset; options.environment is added to the
//   host's environment. The trainer runs in a process group of its own.
// - Output: stdout and stderr are read as they come (poll on both, so neither can fill up and block
//   the trainer). A line ends at '\n' or '\r' (progress bars); empty lines are skipped; a line longer
//   than max_line_bytes is cut there (the rest is dropped, memory stays bounded whatever is printed).
// - Metrics: every line of both streams is searched (std::regex_search, ECMAScript) with each
//   metric's regex, which must have exactly one capture group. A match of the objective metric
//   becomes trial.report(step, value): step is the last integer captured by step_regex (on this line
//   or an earlier one) or, without step_regex or before its first match, the number of objective
//   matches so far. A match whose step does not exceed the last reported one (an epoch printed twice,
//   or a resumed trial replaying epochs) is not reported but still becomes the latest value. The
//   objective returns the latest value. An objective capture that is not a finite number ("nan",
//   "inf", "0.5,") fails the trial, as Trial::report does in-process; so does a capture that stops
//   inside a number, where the line goes on with a digit, or with '.', ',' or an exponent and then
//   a digit: "validation_loss=0,731" read with [0-9.eE+-]+ captures "0" (a decimal comma), and a
//   misread value must not become the best trial. (Unless the regex goes on past its group: what
//   it matches there, say a ',' between values, is what the user said comes next.) Other metrics
//   with such a value are skipped. Every metric value (objective included) goes to options.on_metric if set, with
//   the step current at its line.
// - Early stopping: when trial.should_stop() becomes true (checked after each report and at least
//   every 100 ms) the whole process group gets SIGTERM, then SIGKILL kill_grace_seconds later; the
//   objective returns the latest value (the trial ends Stopped, not Failed).
// - End: when the trainer exits, whatever it left running in its process group is killed (SIGKILL),
//   and its remaining output is read for at most 1 s. A non-zero exit status, a death by signal, no
//   objective line at all or the per-trial timeout (options.timeout_seconds: SIGTERM, then SIGKILL
//   after the grace) fail the trial: hypertune::Error naming the program, the status or signal, and
//   the last tail_lines lines of stderr (of stdout when stderr was empty).
// - Logs: with options.log_dir set, trial-<id>.log there gets both streams interleaved, unprefixed,
//   in the order they were read, between "# hypertune: ..." header and footer lines (command,
//   exit status, failure reason). Files are appended to, so a retried or resumed trial keeps its
//   earlier runs.
// - Threads: operator() is const and keeps all state of a trial on its own stack, so several trials
//   may run at once on the tuner's workers. It installs no signal handler and waits only for its own
//   child's pid. on_metric calls are serialised. A host that ignores SIGCHLD loses exit statuses
//   (the kernel reaps children): a trainer is then taken to have exited with status 0.
//   Processes that leave the trainer's process group (setsid, setpgid) are not tracked.

#include <hypertune/config.hpp>
#include <hypertune/error.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/strategy.hpp>
#include <hypertune/trial.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace hypertune {

/// A metric read from the trainer's output: `regex` must have exactly one capture group, the value.
struct MetricDefinition {
    std::string name{};
    std::string regex{};
};

/// One value of a metric, as CommandOptions::on_metric receives it.
struct MetricValue {
    TrialId trial = 0;
    std::string_view metric{};
    Resource step = 0;
    double value = 0.0;
};

struct CommandOptions {
    std::vector<MetricDefinition> metrics{};  ///< at least one
    std::string objective_metric{};           ///< a name from `metrics`; empty: the first one
    std::string step_regex{};                 ///< one capture group (an integer); empty: count objective lines
    double timeout_seconds = 0.0;             ///< per trial run; 0: none
    double kill_grace_seconds = 5.0;          ///< between SIGTERM and SIGKILL
    std::string log_dir{};                    ///< empty: no log files
    std::vector<std::string> environment{};   ///< NAME=value, added to (or replacing in) the host's environment
    std::size_t tail_lines = 10;              ///< lines of stderr quoted in a failure reason
    std::size_t max_line_bytes = 4096;        ///< longer lines are cut
    /// Every metric value read (objective included), from the trial's worker thread; calls are serialised.
    std::function<void(const MetricValue&)> on_metric{};
};

namespace detail::command {

using Clock = std::chrono::steady_clock;

inline std::string errno_text(int err) { return std::error_code(err, std::generic_category()).message(); }

/// Shell-like quoting, only to show a command in logs and messages.
inline std::string quote(std::string_view arg) {
    bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_-+=.,/:@%").find(c) != std::string_view::npos;
    });
    if (plain) return std::string(arg);
    std::string out = "'";
    for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

inline std::string join_quoted(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& a : argv) {
        if (!out.empty()) out += ' ';
        out += quote(a);  // appended, not `" " + quote(a)`: GCC 12 warns (-Wrestrict) on that at -O2
    }
    return out;
}

inline std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

/// The whole of `text` (trimmed, an optional '+') as a T, or nothing.
template <class T>
std::optional<T> parse_number(std::string_view text) {
    text = trim(text);
    if (!text.empty() && text.front() == '+') {
        text.remove_prefix(1);
        if (!text.empty() && text.front() == '-') return std::nullopt;  // from_chars would read "+-1" as -1
    }
    T v{};
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
    return v;
}

/// True when `capture` (a view into `line`) stops inside a number: the line goes on with a digit,
/// or with '.', ',' or an exponent and then a digit. "validation_loss=0,731" read with the regex
/// validation_loss=([0-9.eE+-]+) captures "0"; that is a decimal comma, not the value 0.
[[nodiscard]] inline bool stops_inside_number(std::string_view line, std::string_view capture) {
    if (capture.empty() || capture.data() < line.data() || capture.data() + capture.size() > line.data() + line.size())
        return false;
    auto rest = line.substr(static_cast<std::size_t>(capture.data() - line.data()) + capture.size());
    auto digit = [&](std::size_t i) { return i < rest.size() && rest[i] >= '0' && rest[i] <= '9'; };
    if (rest.empty()) return false;
    if (digit(0)) return true;
    if ((rest[0] == '.' || rest[0] == ',') && digit(1)) return true;
    if (rest[0] == 'e' || rest[0] == 'E') return digit(1) || (rest.size() > 1 && (rest[1] == '+' || rest[1] == '-') && digit(2));
    return false;
}

/// Checks what posix_spawnp will run: `program` itself when it holds a '/', otherwise the first
/// executable file of that name in the directories of PATH (as posix_spawnp looks it up: the
/// host's PATH, "/bin:/usr/bin" when unset, an empty entry meaning the working directory).
/// Throws InvalidArgument naming the program and why it cannot be run.
inline void require_runnable(const std::string& program) {
    // 0 when `path` is an executable file, else the reason (an errno value).
    auto runnable = [](const std::string& path) {
        struct stat st{};
        if (::stat(path.c_str(), &st) != 0) return errno;
        if (S_ISDIR(st.st_mode)) return EISDIR;
        return ::access(path.c_str(), X_OK) == 0 ? 0 : errno;
    };
    if (program.find('/') != std::string::npos) {
        if (int err = runnable(program); err != 0)
            throw InvalidArgument(fmt::format("CommandObjective: the program '{}' cannot be run: {}", program,
                                              errno_text(err)));
        return;
    }
    const char* env = std::getenv("PATH");
    std::string search = env ? env : "/bin:/usr/bin";
    std::string not_executable;
    for (std::size_t from = 0; from <= search.size();) {
        auto to = std::min(search.find(':', from), search.size());
        std::string dir = search.substr(from, to - from);
        std::string candidate = (dir.empty() ? std::string(".") : dir) + '/' + program;
        int err = runnable(candidate);
        if (err == 0) return;
        if (err != ENOENT && err != ENOTDIR && not_executable.empty())
            not_executable = fmt::format(" ('{}' is there but cannot be run: {})", candidate, errno_text(err));
        from = to + 1;
    }
    throw InvalidArgument(fmt::format("CommandObjective: the program '{}' is not found: no executable file of that "
                                      "name in PATH ({}){}",
                                      program, search, not_executable));
}

inline std::string signal_name(int sig) {
    static constexpr std::array<std::pair<int, std::string_view>, 15> names{{
        {SIGHUP, "SIGHUP"}, {SIGINT, "SIGINT"}, {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"}, {SIGTRAP, "SIGTRAP"},
        {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"}, {SIGFPE, "SIGFPE"}, {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"},
        {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"}, {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},
    }};
    for (const auto& [n, name] : names)
        if (n == sig) return fmt::format("{} ({})", sig, name);
    return std::to_string(sig);
}

/// A compiled metric regex with exactly one capture group.
class Pattern {
public:
    Pattern(std::string_view what, std::string source) : source_(std::move(source)) {
        if (has_oversized_number(source_))
            throw InvalidArgument(fmt::format("CommandObjective: {}: regex '{}': a repeat count or back-reference "
                                              "has more than 9 digits",
                                              what, source_));
        try {
            re_ = std::regex(source_, std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
            throw InvalidArgument(fmt::format("CommandObjective: {}: invalid regex '{}': {}", what, source_, e.what()));
        }
        if (re_.mark_count() != 1)
            throw InvalidArgument(fmt::format("CommandObjective: {}: regex '{}' must have exactly one capture group "
                                              "(the value), it has {}",
                                              what, source_, re_.mark_count()));
        literal_ = required_prefix(source_);
    }

    /// The captured text when `line` matches. With `ends_match`, also whether the capture ends
    /// where the whole match does (nothing after it in the regex consumed any text).
    [[nodiscard]] std::optional<std::string_view> capture(std::string_view line, bool* ends_match = nullptr) const {
        // std::regex is slow (microseconds per line); a literal the match must contain skips most lines.
        if (!literal_.empty() && line.find(literal_) == std::string_view::npos) return std::nullopt;
        std::cmatch m;
        if (!std::regex_search(line.data(), line.data() + line.size(), m, re_)) return std::nullopt;
        if (ends_match) *ends_match = m[1].matched && m[1].second == m[0].second;
        if (!m[1].matched) return std::string_view{};
        return std::string_view(m[1].first, static_cast<std::size_t>(m[1].length()));
    }

    [[nodiscard]] const std::string& source() const noexcept { return source_; }

private:
    // libstdc++ 12 overflows a long (undefined behaviour) on a repeat count or back-reference of 19
    // digits; none of more than 9 makes sense in a metric regex.
    static bool has_oversized_number(std::string_view re) {
        auto digits_from = [&](std::size_t i) {
            std::size_t n = 0;
            while (i + n < re.size() && re[i + n] >= '0' && re[i + n] <= '9') ++n;
            return n;
        };
        for (std::size_t i = 0; i < re.size(); ++i) {
            if (re[i] == '\\') {
                if (digits_from(i + 1) > 9) return true;
                ++i;
            } else if (re[i] == '{') {
                for (auto j = i + 1; j < re.size() && re[j] != '}'; ++j)
                    if (digits_from(j) > 9) return true;
            }
        }
        return false;
    }

    // The literal characters the regex starts with; every match contains them. Empty when unsure.
    static std::string required_prefix(std::string_view re) {
        if (re.find('|') != std::string_view::npos) return {};
        std::string out;
        for (char c : re) {
            if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) {
                if ((c == '?' || c == '*' || c == '{') && !out.empty()) out.pop_back();  // the last one is optional
                break;
            }
            out += c;
        }
        return out;
    }

    std::string source_;
    std::regex re_;
    std::string literal_;
};

/// One argument of the command template: literal text and placeholders.
struct ArgumentTemplate {
    struct Piece {
        bool placeholder = false;
        std::string text;  // the literal, or the placeholder's name
    };
    std::vector<Piece> pieces;
    std::string source;
};

inline ArgumentTemplate parse_argument(std::string source) {
    ArgumentTemplate arg;
    std::string literal;
    for (std::size_t i = 0; i < source.size(); ++i) {
        char c = source[i];
        bool doubled = i + 1 < source.size() && source[i + 1] == c;
        if ((c == '{' || c == '}') && doubled) {
            literal += c;
            ++i;
        } else if (c == '{') {
            auto close = source.find('}', i);
            std::string name = close == std::string::npos ? std::string() : source.substr(i + 1, close - i - 1);
            if (name.empty() || name.find('{') != std::string::npos)
                throw InvalidArgument(fmt::format("CommandObjective: argument '{}': '{{' at {} does not open a "
                                                  "placeholder {{name}} (write '{{{{' for a literal brace)",
                                                  source, i));
            if (!literal.empty()) arg.pieces.push_back({false, std::move(literal)});
            literal.clear();
            arg.pieces.push_back({true, std::move(name)});
            i = close;
        } else if (c == '}') {
            throw InvalidArgument(fmt::format("CommandObjective: argument '{}': unmatched '}}' at {} (write '}}}}' "
                                              "for a literal brace)",
                                              source, i));
        } else {
            literal += c;
        }
    }
    if (!literal.empty()) arg.pieces.push_back({false, std::move(literal)});
    arg.source = std::move(source);
    return arg;
}

inline constexpr std::array<std::string_view, 4> builtin_placeholders{"budget", "resumed_from", "trial_id",
                                                                      "checkpoint_dir"};

/// A file descriptor closed on destruction.
class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : fd_(fd) {}
    Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    Fd& operator=(Fd&& o) noexcept {
        if (this != &o) {
            reset();
            fd_ = std::exchange(o.fd_, -1);
        }
        return *this;
    }
    ~Fd() { reset(); }
    void reset() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }
    [[nodiscard]] int get() const noexcept { return fd_; }
    [[nodiscard]] bool open() const noexcept { return fd_ >= 0; }

private:
    int fd_ = -1;
};

/// A pipe whose ends are close-on-exec, so that trainers started by other threads never inherit
/// them (an inherited write end would keep the pipe from ever reaching end of file).
struct Pipe {
    Fd read, write;
    Pipe() {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0) throw Error(fmt::format("CommandObjective: pipe2: {}", errno_text(errno)));
        read = Fd(fds[0]);
        write = Fd(fds[1]);
    }
};

/// The trainer process, leader of its own process group. Destroying it kills the group and reaps.
class ChildProcess {
public:
    ChildProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env, int out_fd, int err_fd) {
        posix_spawn_file_actions_t actions;
        posix_spawnattr_t attr;
        posix_spawn_file_actions_init(&actions);
        posix_spawnattr_init(&attr);
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
        posix_spawn_file_actions_adddup2(&actions, err_fd, STDERR_FILENO);
        // Own process group (so the whole group can be signalled); nothing blocked or ignored that
        // the host happens to block or ignore (a trainer that cannot see SIGTERM cannot stop cleanly).
        sigset_t none, all;
        sigemptyset(&none);
        sigfillset(&all);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        posix_spawnattr_setpgroup(&attr, 0);
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setsigdefault(&attr, &all);

        auto c_strings = [](const std::vector<std::string>& v) {
            std::vector<char*> out;
            for (const auto& s : v) out.push_back(const_cast<char*>(s.c_str()));
            out.push_back(nullptr);
            return out;
        };
        auto c_argv = c_strings(argv);
        auto c_env = c_strings(env);
        int err = ::posix_spawnp(&pid_, argv[0].c_str(), &actions, &attr, c_argv.data(), c_env.data());
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attr);
        if (err != 0) {
            pid_ = -1;
            throw Error(fmt::format("cannot run '{}': {}", argv[0], errno_text(err)));
        }
    }

    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    ~ChildProcess() {
        if (pid_ <= 0 || reaped_) return;
        signal_group(SIGKILL);
        reap();
    }

    // Only before the leader is reaped: until then its pid (the group id) cannot be reused.
    void signal_group(int sig) const {
        if (pid_ > 0 && !reaped_) ::kill(-pid_, sig);
    }

    /// True once the leader has exited; it stays a zombie (not reaped) so the group id stays ours.
    [[nodiscard]] bool exited() const {
        siginfo_t info{};
        if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
            return errno == ECHILD;  // reaped by the kernel: the host ignores SIGCHLD
        return info.si_pid != 0;
    }

    /// Waits for the leader and returns its wait status (0 when the host ignores SIGCHLD).
    int reap() {
        int status = 0;
        while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        reaped_ = true;
        return status;
    }

private:
    pid_t pid_ = -1;
    bool reaped_ = false;
};

/// Splits a byte stream into lines, keeping at most max_bytes of each.
class LineSplitter {
public:
    explicit LineSplitter(std::size_t max_bytes) : max_(max_bytes) {}

    /// Calls on_line(text, truncated) for every line completed by `chunk`.
    template <class F>
    void feed(std::string_view chunk, F&& on_line) {
        while (!chunk.empty()) {
            auto end = chunk.find_first_of("\r\n");
            auto piece = chunk.substr(0, end);
            auto room = max_ - std::min(max_, line_.size());
            if (piece.size() > room) truncated_ = true;
            line_.append(piece.substr(0, room));
            if (end == std::string_view::npos) return;
            emit(on_line);
            chunk.remove_prefix(end + 1);
        }
    }

    /// The last line, when the stream ended without a newline.
    template <class F>
    void finish(F&& on_line) {
        emit(on_line);
    }

private:
    template <class F>
    void emit(F& on_line) {
        if (!line_.empty()) on_line(std::string_view(line_), truncated_);
        line_.clear();
        truncated_ = false;
    }

    std::size_t max_;
    std::string line_;
    bool truncated_ = false;
};

/// trial-<id>.log in the log directory, or nothing.
class TrialLog {
public:
    TrialLog(const std::string& dir, TrialId id) {
        if (dir.empty()) return;
        std::error_code ec;
        std::filesystem::create_directories(dir, ec);
        auto path = std::filesystem::path(dir) / fmt::format("trial-{}.log", id);
        file_ = std::fopen(path.c_str(), "ae");  // 'e': close-on-exec, not inherited by other trials' trainers
        if (!file_) throw IoError(fmt::format("CommandObjective: cannot open log file '{}': {}", path.string(),
                                              errno_text(errno)));
    }
    TrialLog(const TrialLog&) = delete;
    TrialLog& operator=(const TrialLog&) = delete;
    ~TrialLog() {
        if (file_) std::fclose(file_);
    }

    void line(std::string_view text, bool truncated) {
        if (!file_) return;
        std::fwrite(text.data(), 1, text.size(), file_);
        std::fputs(truncated ? " [line cut]\n" : "\n", file_);
    }
    void note(std::string_view text) {
        if (!file_) return;
        fmt::print(file_, "# hypertune: {}\n", text);
        flush();
    }
    void flush() {
        if (file_) std::fflush(file_);
    }

private:
    std::FILE* file_ = nullptr;
};

/// What a CommandObjective is made of, shared (immutable) by all copies and trials.
struct Spec {
    std::vector<ArgumentTemplate> command;
    CommandOptions options;
    std::vector<Pattern> metrics;
    std::size_t objective = 0;
    std::optional<Pattern> step;
    mutable std::mutex callback_mu;
};

/// One run of the trainer for one trial.
class CommandRun {
public:
    CommandRun(const Spec& spec, std::vector<std::string> argv, Trial& trial)
        : spec_(spec), argv_(std::move(argv)), trial_(trial), log_(spec.options.log_dir, trial.id()),
          streams_{Stream{spec.options.max_line_bytes}, Stream{spec.options.max_line_bytes}} {}

    double execute() {
        log_.note(fmt::format("trial {} (budget {}, resumed from {}): {}", trial_.id(), trial_.budget(),
                              trial_.resumed_from(), join_quoted(argv_)));
        try {
            return run();
        } catch (const std::exception& e) {
            log_.note(fmt::format("trial failed: {}", e.what()));
            throw;
        }
    }

private:
    enum class Ending { Running, Stopped, TimedOut };
    static constexpr auto tick = std::chrono::milliseconds(100);  // how often should_stop() is polled
    static constexpr auto drain_time = std::chrono::seconds(1);   // output read after the trainer exited

    struct Stream {
        explicit Stream(std::size_t max_line) : lines(max_line) {}
        Fd fd;
        LineSplitter lines;
        std::deque<std::string> tail;
    };

    double run() {
        Pipe out, err;
        child_.emplace(argv_, environment(), out.write.get(), err.write.get());
        out.write.reset();  // the trainer holds the only write ends: end of file comes when it is done
        err.write.reset();
        streams_[0].fd = std::move(out.read);
        streams_[1].fd = std::move(err.read);
        start_ = Clock::now();
        if (spec_.options.timeout_seconds > 0.0) deadline_ = start_ + seconds(spec_.options.timeout_seconds);

        auto backoff = std::chrono::microseconds(50);
        bool exited = false;
        Clock::time_point drain_until;
        for (;;) {
            auto now = Clock::now();
            if (!exited) check_stop(now);
            if (!exited && child_->exited()) {
                exited = true;
                child_->signal_group(SIGKILL);  // anything the trainer left behind in its group
                drain_until = now + drain_time;
            }
            bool open = streams_[0].fd.open() || streams_[1].fd.open();
            if (exited && (!open || now >= drain_until)) break;
            auto wake = std::min(now + tick, exited ? drain_until : next_event(now));
            if (open) {
                read_output(wake - now);
            } else {
                // Both pipes closed, the trainer not yet gone (it is usually a matter of microseconds).
                std::this_thread::sleep_for(std::min<Clock::duration>(backoff, wake - now));
                backoff = std::min<std::chrono::microseconds>(backoff * 2, std::chrono::milliseconds(20));
            }
        }
        for (auto& s : streams_) finish_stream(s);
        int status = child_->reap();
        double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
        log_.note(fmt::format("{} after {:.3f} s", describe(status), elapsed));
        return outcome(status);
    }

    [[nodiscard]] static Clock::duration seconds(double s) {
        return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
    }

    [[nodiscard]] std::vector<std::string> environment() const {
        std::vector<std::string> env;
        auto name_of = [](std::string_view kv) { return kv.substr(0, kv.find('=')); };
        for (char** e = environ; e && *e; ++e) {
            std::string_view kv(*e);
            bool replaced = std::any_of(spec_.options.environment.begin(), spec_.options.environment.end(),
                                        [&](const std::string& x) { return name_of(x) == name_of(kv); });
            if (!replaced) env.emplace_back(kv);
        }
        env.insert(env.end(), spec_.options.environment.begin(), spec_.options.environment.end());
        return env;
    }

    void check_stop(Clock::time_point now) {
        if (ending_ == Ending::Running) {
            if (trial_.should_stop()) terminate(Ending::Stopped, now);
            else if (deadline_ && now >= *deadline_) terminate(Ending::TimedOut, now);
        }
        if (kill_at_ && now >= *kill_at_) {
            child_->signal_group(SIGKILL);
            kill_at_.reset();
        }
    }

    void terminate(Ending why, Clock::time_point now) {
        if (ending_ != Ending::Running) return;
        ending_ = why;
        log_.note(why == Ending::Stopped ? "stopping the trainer (SIGTERM to its process group)"
                                         : "timed out: SIGTERM to the trainer's process group");
        child_->signal_group(SIGTERM);
        kill_at_ = now + seconds(spec_.options.kill_grace_seconds);
        if (spec_.options.kill_grace_seconds <= 0.0) check_stop(now);
    }

    [[nodiscard]] Clock::time_point next_event(Clock::time_point now) const {
        auto t = now + tick;
        if (ending_ == Ending::Running && deadline_) t = std::min(t, *deadline_);
        if (kill_at_) t = std::min(t, *kill_at_);
        return t;
    }

    // Waits up to `wait` for output on either pipe and handles what came.
    void read_output(Clock::duration wait) {
        std::array<pollfd, 2> fds{};
        for (std::size_t i = 0; i < 2; ++i) fds[i] = {streams_[i].fd.get(), POLLIN, 0};  // fd -1: ignored
        auto ms = std::chrono::ceil<std::chrono::milliseconds>(std::max<Clock::duration>(wait, {})).count();
        int n = ::poll(fds.data(), fds.size(), static_cast<int>(ms));
        if (n < 0 && errno != EINTR) throw Error(fmt::format("CommandObjective: poll: {}", errno_text(errno)));
        for (std::size_t i = 0; i < 2 && n > 0; ++i) {
            if (fds[i].revents == 0) continue;
            auto got = ::read(fds[i].fd, buffer_.data(), buffer_.size());
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) {
                finish_stream(streams_[i]);
                continue;
            }
            streams_[i].lines.feed(std::string_view(buffer_.data(), static_cast<std::size_t>(got)),
                                   [&](std::string_view line, bool cut) { on_line(streams_[i], line, cut); });
        }
        log_.flush();
    }

    void finish_stream(Stream& s) {
        if (!s.fd.open()) return;
        s.lines.finish([&](std::string_view line, bool cut) { on_line(s, line, cut); });
        s.fd.reset();
    }

    void on_line(Stream& s, std::string_view line, bool cut) {
        log_.line(line, cut);
        s.tail.emplace_back(line);
        if (s.tail.size() > spec_.options.tail_lines) s.tail.pop_front();
        if (ending_ == Ending::Running) read_metrics(line);
    }

    void read_metrics(std::string_view line) {
        if (spec_.step)
            if (auto text = spec_.step->capture(line)) {
                auto step = parse_number<Resource>(*text);
                if (!step)
                    throw Error(fmt::format("trial {}: the step regex '{}' captured '{}', not an integer (line: {})",
                                            trial_.id(), spec_.step->source(), *text, line));
                step_ = *step;
            }
        for (std::size_t m = 0; m < spec_.metrics.size(); ++m) {
            bool ends_match = false;
            auto text = spec_.metrics[m].capture(line, &ends_match);
            if (!text) continue;
            auto value = parse_number<double>(*text);
            const auto& name = spec_.options.metrics[m].name;
            bool is_objective = m == spec_.objective;
            if (!value || !std::isfinite(*value)) {
                if (!is_objective) continue;
                throw Error(fmt::format("trial {}: the objective metric '{}' captured '{}', not a finite number "
                                        "(line: {})",
                                        trial_.id(), name, *text, line));
            }
            // What the regex itself matches after the capture (a separator it names) is the user's word.
            if (ends_match && stops_inside_number(line, *text)) {
                if (!is_objective) continue;
                throw Error(fmt::format("trial {}: the objective metric '{}' captured '{}', but the number goes on "
                                        "after it (a decimal comma, or a regex that stops inside the number? a "
                                        "separator such as ',' can be matched by the regex after the group) "
                                        "(line: {})",
                                        trial_.id(), name, *text, line));
            }
            Resource step = is_objective ? ++objective_lines_ : objective_lines_;
            if (step_) step = *step_;
            if (spec_.options.on_metric) {
                std::lock_guard lk(spec_.callback_mu);
                spec_.options.on_metric(MetricValue{trial_.id(), name, step, *value});
            }
            if (!is_objective) continue;
            last_value_ = *value;
            if (step > trial_.last_step()) {
                trial_.report(step, *value);
                check_stop(Clock::now());
            }
        }
    }

    [[nodiscard]] static std::string describe(int status) {
        if (WIFSIGNALED(status)) return fmt::format("killed by signal {}", signal_name(WTERMSIG(status)));
        return fmt::format("exited with status {}", WIFEXITED(status) ? WEXITSTATUS(status) : status);
    }

    // The last lines of stderr (of stdout when stderr was empty), for a failure reason.
    [[nodiscard]] std::string tail() const {
        const Stream& s = streams_[1].tail.empty() ? streams_[0] : streams_[1];
        if (s.tail.empty()) return "; it printed nothing";
        std::string out = fmt::format("; last {} line{} of {}:", s.tail.size(), s.tail.size() == 1 ? "" : "s",
                                      &s == &streams_[1] ? "stderr" : "stdout");
        for (const auto& l : s.tail) out += "\n  " + l;
        return out;
    }

    double outcome(int status) {
        auto what = fmt::format("trial {}: '{}'", trial_.id(), argv_[0]);
        switch (ending_) {
            case Ending::TimedOut:
                throw Error(fmt::format("{} timed out after {} s and was killed{}", what, spec_.options.timeout_seconds,
                                        tail()));
            case Ending::Stopped:
                if (last_value_) return *last_value_;
                throw Error(fmt::format("{} was stopped before it printed a value of the objective metric '{}'", what,
                                        spec_.options.metrics[spec_.objective].name));
            case Ending::Running: break;
        }
        if (status != 0) throw Error(fmt::format("{} {}{}", what, describe(status), tail()));
        if (!last_value_)
            throw Error(fmt::format("{}: no line matched the objective metric regex '{}' (metric '{}'){}", what,
                                    spec_.metrics[spec_.objective].source(),
                                    spec_.options.metrics[spec_.objective].name, tail()));
        return *last_value_;
    }

    const Spec& spec_;
    std::vector<std::string> argv_;
    Trial& trial_;
    TrialLog log_;
    std::array<Stream, 2> streams_;  // stdout, stderr
    std::optional<ChildProcess> child_;
    std::vector<char> buffer_ = std::vector<char>(64 * 1024);
    Clock::time_point start_;
    std::optional<Clock::time_point> deadline_;
    std::optional<Clock::time_point> kill_at_;
    Ending ending_ = Ending::Running;
    std::optional<Resource> step_;
    Resource objective_lines_ = 0;
    std::optional<double> last_value_;
};

}  // namespace detail::command

/// An objective that runs an external command per trial; see the top of this header.
class CommandObjective {
public:
    CommandObjective(std::vector<std::string> command, CommandOptions options) {
        auto spec = std::make_shared<detail::command::Spec>();
        auto& s = *spec;
        if (command.empty()) throw InvalidArgument("CommandObjective: the command is empty");
        if (command[0].empty()) throw InvalidArgument("CommandObjective: the program (first argument) is empty");
        for (auto& arg : command) s.command.push_back(detail::command::parse_argument(std::move(arg)));
        if (options.metrics.empty())
            throw InvalidArgument("CommandObjective: no metric definitions (options.metrics needs at least the objective)");
        for (const auto& m : options.metrics) {
            if (m.name.empty()) throw InvalidArgument(fmt::format("CommandObjective: a metric with regex '{}' has no name", m.regex));
            if (std::count_if(options.metrics.begin(), options.metrics.end(), [&](const auto& o) { return o.name == m.name; }) > 1)
                throw InvalidArgument(fmt::format("CommandObjective: metric '{}' is defined twice", m.name));
            s.metrics.emplace_back(fmt::format("metric '{}'", m.name), m.regex);
        }
        if (!options.objective_metric.empty()) {
            auto it = std::find_if(options.metrics.begin(), options.metrics.end(),
                                   [&](const auto& m) { return m.name == options.objective_metric; });
            if (it == options.metrics.end())
                throw InvalidArgument(fmt::format("CommandObjective: objective_metric '{}' is not among the metric "
                                                  "definitions",
                                                  options.objective_metric));
            s.objective = static_cast<std::size_t>(it - options.metrics.begin());
        }
        if (!options.step_regex.empty()) s.step.emplace("step_regex", options.step_regex);
        if (!(options.timeout_seconds >= 0.0) || !std::isfinite(options.timeout_seconds))
            throw InvalidArgument(fmt::format("CommandObjective: timeout_seconds must be finite and >= 0, got {}",
                                              options.timeout_seconds));
        if (!(options.kill_grace_seconds >= 0.0) || !std::isfinite(options.kill_grace_seconds))
            throw InvalidArgument(fmt::format("CommandObjective: kill_grace_seconds must be finite and >= 0, got {}",
                                              options.kill_grace_seconds));
        if (options.max_line_bytes == 0) throw InvalidArgument("CommandObjective: max_line_bytes must be >= 1");
        for (const auto& e : options.environment)
            if (e.find('=') == std::string::npos || e.front() == '=')
                throw InvalidArgument(fmt::format("CommandObjective: environment entry '{}' is not NAME=value", e));
        // A missing program would otherwise fail every trial one by one. One given by a placeholder
        // is only known per trial.
        const auto& program = s.command[0];
        if (std::none_of(program.pieces.begin(), program.pieces.end(), [](const auto& p) { return p.placeholder; }))
            detail::command::require_runnable(program.pieces.empty() ? std::string() : program.pieces[0].text);
        s.options = std::move(options);
        spec_ = std::move(spec);
    }

    /// Refuses placeholders that are neither a parameter of `space` nor {budget}, {resumed_from},
    /// {trial_id}, {checkpoint_dir}, and parameters named like those four. Also done on every
    /// call, against the config.
    void check(const SearchSpace& space) const {
        std::vector<std::string_view> names;
        for (const auto& p : space.parameters()) names.push_back(p.name);
        check_placeholders(names);
    }

    /// The command for this configuration and trial, placeholders replaced.
    [[nodiscard]] std::vector<std::string> arguments(const Config& config, Trial& trial) const {
        std::vector<std::string_view> names;
        for (std::size_t i = 0; i < config.size(); ++i) names.push_back(config.name(i));
        check_placeholders(names);
        std::vector<std::string> argv;
        for (const auto& arg : spec_->command) {
            std::string out;
            for (const auto& piece : arg.pieces) {
                if (!piece.placeholder) out += piece.text;
                else if (piece.text == "budget") out += std::to_string(trial.budget());
                else if (piece.text == "resumed_from") out += std::to_string(trial.resumed_from());
                else if (piece.text == "trial_id") out += std::to_string(trial.id());
                else if (piece.text == "checkpoint_dir") out += trial.checkpoint_dir();
                else out += format_value(config.value(piece.text));
            }
            argv.push_back(std::move(out));
        }
        if (argv[0].empty()) throw InvalidArgument(fmt::format("CommandObjective: the program '{}' expanded to nothing",
                                                               spec_->command[0].source));
        return argv;
    }

    /// Runs the command for one trial; see the top of this header.
    double operator()(const Config& config, Trial& trial) const {
        return detail::command::CommandRun(*spec_, arguments(config, trial), trial).execute();
    }

    [[nodiscard]] const CommandOptions& options() const noexcept { return spec_->options; }

private:
    void check_placeholders(const std::vector<std::string_view>& parameters) const {
        const auto& builtins = detail::command::builtin_placeholders;
        for (const auto& arg : spec_->command)
            for (const auto& piece : arg.pieces) {
                if (!piece.placeholder) continue;
                bool builtin = std::find(builtins.begin(), builtins.end(), piece.text) != builtins.end();
                bool parameter = std::find(parameters.begin(), parameters.end(), piece.text) != parameters.end();
                if (builtin && parameter)
                    throw InvalidArgument(fmt::format("CommandObjective: placeholder {{{}}} in argument '{}' is ambiguous: "
                                                      "a parameter has the name of the built-in placeholder",
                                                      piece.text, arg.source));
                if (builtin || parameter) continue;
                std::string known = "{budget}, {resumed_from}, {trial_id}, {checkpoint_dir}";
                for (auto p : parameters) known += fmt::format(", {{{}}}", p);
                throw InvalidArgument(fmt::format("CommandObjective: unknown placeholder {{{}}} in argument '{}' (known: {})",
                                                  piece.text, arg.source, known));
            }
    }

    std::shared_ptr<const detail::command::Spec> spec_;
};

}  // namespace hypertune
