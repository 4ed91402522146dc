// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/command_objective.hpp>: what a CommandObjective is made of (Spec), one
// run of the trainer for one trial (CommandRun) and CommandObjective's members. Inline in
// header-only mode, compiled into hypertune::compiled otherwise (see <hypertune/linkage.hpp>).

#include <hypertune/command_objective.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/config.hpp>
#include <hypertune/detail/command_arguments.hpp>
#include <hypertune/detail/command_lines.hpp>
#include <hypertune/detail/command_metrics.hpp>
#include <hypertune/detail/command_process.hpp>
#include <hypertune/error.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/trial.hpp>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/command_objective.hpp> is compiled into hypertune::compiled: include <hypertune/command_objective.hpp>"
#endif

namespace hypertune {

namespace detail::command {

using Clock = std::chrono::steady_clock;

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

    // The latest value of every metric that printed one, by name; the objective metric must have.
    // Each intermediate report then carries every metric's latest value too (multi-objective
    // early stopping ranks on all of them).
    Metrics execute_metrics() {
        report_metrics_ = true;
        (void)execute();
        return latest_metrics();
    }

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
        try {
            child_.emplace(argv_, environment(), out.write.get(), err.write.get());
        } catch (const Error& e) {  // the spawn failed: a message that says which trial, as the others do
            throw Error(fmt::format("trial {}: {}", trial_.id(), e.what()));
        }
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

    // At most a billion seconds (31 years): a timeout or grace meant as "never" (1e10, say) would
    // overflow the clock's nanosecond count and lie in the past.
    [[nodiscard]] static Clock::duration seconds(double s) {
        return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::min(s, 1e9)));
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
        cut_lines_ += cut ? 1 : 0;
        // A NUL byte would end the failure reason quoting it (an exception's what() is a C string).
        std::string& kept = s.tail.emplace_back(line);
        for (std::size_t at = kept.find('\0'); at != std::string::npos; at = kept.find('\0', at + 2)) kept.replace(at, 1, "\\0");
        if (s.tail.size() > spec_.options.tail_lines) s.tail.pop_front();
        // After a stop the lines still say what the trainer trained before the signal took effect
        // (its output may come in one block at exit, or a few lines late): they count, as an
        // in-process objective's reports after a Stop do, so that its checkpoint folder and its
        // record agree (a promotion resumes from where it got to). After a timeout it has failed.
        if (ending_ != Ending::TimedOut) read_metrics(line, cut);
    }

    // A line longer than max_line_bytes was cut: a capture that reaches the cut may be the first
    // digits of a longer number ("loss=0" of "loss=0.987"), so it is not read as a value.
    [[nodiscard]] static bool reaches_cut(std::string_view text, std::string_view line, bool cut) {
        return cut && text.data() + text.size() == line.data() + line.size();
    }
    [[nodiscard]] Error cut_error(std::string_view what, std::string_view text) const {
        return Error(fmt::format("trial {}: {} captured '{}' where the line was cut at max_line_bytes ({} bytes), so "
                                 "the number may go on past the cut: print it on a shorter line, or raise "
                                 "CommandOptions::max_line_bytes",
                                 trial_.id(), what, text, spec_.options.max_line_bytes));
    }

    void read_metrics(std::string_view line, bool cut) {
        if (spec_.step)
            if (auto text = spec_.step->capture(line)) {
                if (reaches_cut(*text, line, cut))
                    throw cut_error(fmt::format("the step regex '{}'", spec_.step->source()), *text);
                auto step = parse_number<Resource>(*text);
                if (!step)
                    throw Error(fmt::format("trial {}: the step regex '{}' captured '{}', not an integer (line: {})",
                                            trial_.id(), spec_.step->source(), *text, line));
                // A step not above the last is a repeat and skipped; one below 1 would be skipped
                // too, silently, where an in-process report of it fails the trial.
                if (*step < 1)
                    throw Error(fmt::format("trial {}: the step regex '{}' captured '{}'; steps start at 1 (the units "
                                            "trained so far: count the epochs from 1) (line: {})",
                                            trial_.id(), spec_.step->source(), *text, line));
                step_ = *step;
            }
        // The objective metric's value on this line, reported once the whole line is read (its
        // other metrics included).
        std::optional<Resource> report_at;
        for (std::size_t m = 0; m < spec_.metrics.size(); ++m) {
            bool ends_match = false;
            auto text = spec_.metrics[m].capture(line, &ends_match);
            const auto& name = spec_.options.metrics[m].name;
            bool is_objective = m == spec_.objective;
            if (!text) {
                // A diverged trainer prints "loss=nan", which the usual regex does not match: the
                // trial fails, rather than keep its last finite value.
                if (is_objective)
                    if (auto bad = spec_.metrics[m].non_finite(line))
                        throw Error(fmt::format("trial {}: the objective metric '{}' reads '{}', not a finite number "
                                                "(line: {})",
                                                trial_.id(), name, *bad, line));
                continue;
            }
            auto value = parse_number<double>(*text);
            if (!value || !std::isfinite(*value)) {
                if (!is_objective) continue;
                throw Error(fmt::format("trial {}: the objective metric '{}' captured '{}', not a finite number "
                                        "(line: {})",
                                        trial_.id(), name, *text, line));
            }
            if (reaches_cut(*text, line, cut)) {
                if (!is_objective) continue;
                throw cut_error(fmt::format("the objective metric '{}'", name), *text);
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
            last_values_[m] = *value;
            if (!is_objective) continue;
            last_value_ = *value;
            if (step > trial_.last_step()) report_at = step;
        }
        if (!report_at) return;
        if (report_metrics_)
            trial_.report(*report_at, latest_metrics());
        else
            trial_.report(*report_at, *last_value_);
        check_stop(Clock::now());
    }

    [[nodiscard]] static std::string describe(int status) {
        if (WIFSIGNALED(status)) return fmt::format("killed by signal {}", signal_name(WTERMSIG(status)));
        return fmt::format("exited with status {}", WIFEXITED(status) ? WEXITSTATUS(status) : status);
    }

    // Why a trial that ran on from a step may print nothing, and what the trainer can do about it
    // (a trainer that saved an epoch's state before printing its line, killed with the tuner
    // between the two, finds its budget trained on resume).
    [[nodiscard]] std::string nothing_left() const {
        if (trial_.resumed_from() == 0 || !printed_nothing()) return "";
        return fmt::format(" (it ran on from step {} of its budget of {}: a trainer that finds nothing left to train "
                           "prints nothing; let it print the metric of the state it holds, and each epoch's line "
                           "before it saves that epoch's state)",
                           trial_.resumed_from(), trial_.budget());
    }

    [[nodiscard]] bool printed_nothing() const { return streams_[0].tail.empty() && streams_[1].tail.empty(); }

    // The last lines of stderr (of stdout when stderr was empty), for a failure reason.
    [[nodiscard]] std::string tail() const {
        if (printed_nothing()) return "; it printed nothing";
        const Stream& s = streams_[1].tail.empty() ? streams_[0] : streams_[1];
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
                // Nothing at all on either stream is most often output the trainer buffered (it is
                // lost with the stop), not a trainer that had no value yet.
                throw Error(fmt::format("{} was stopped before it printed a value of the objective metric '{}'{}", what,
                                        spec_.options.metrics[spec_.objective].name,
                                        printed_nothing()
                                            ? "; it printed nothing before the stop: a trainer whose output is "
                                              "buffered (Python without -u or flush=True, C stdio on a pipe) shows "
                                              "its lines only as it exits"
                                            : tail()));
            case Ending::Running: break;
        }
        if (status != 0) throw Error(fmt::format("{} {}{}", what, describe(status), tail()));
        if (!last_value_)
            throw Error(fmt::format("{}: no line matched the objective metric regex '{}' (metric '{}'){}{}", what,
                                    spec_.metrics[spec_.objective].source(),
                                    spec_.options.metrics[spec_.objective].name,
                                    cut_lines_ == 0
                                        ? std::string()
                                        : fmt::format(" ({} line{} longer than max_line_bytes ({} bytes) and cut, "
                                                      "and a metric past the cut is not read: raise "
                                                      "CommandOptions::max_line_bytes)",
                                                      cut_lines_, cut_lines_ == 1 ? " was" : "s were",
                                                      spec_.options.max_line_bytes),
                                    tail() + nothing_left()));
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
    std::size_t cut_lines_ = 0;  // lines longer than max_line_bytes, cut
    std::optional<Clock::time_point> kill_at_;
    Ending ending_ = Ending::Running;
    std::optional<Resource> step_;
    Resource objective_lines_ = 0;
    std::optional<double> last_value_;
    std::vector<std::optional<double>> last_values_ = std::vector<std::optional<double>>(spec_.metrics.size());
    bool report_metrics_ = false;  // metrics(): reports carry every metric's latest value

    [[nodiscard]] Metrics latest_metrics() const {
        Metrics out;
        for (std::size_t m = 0; m < last_values_.size(); ++m)
            if (last_values_[m]) out.set(spec_.options.metrics[m].name, *last_values_[m]);
        return out;
    }
};

}  // namespace detail::command

HYPERTUNE_INLINE CommandObjective::CommandObjective(std::vector<std::string> command, CommandOptions options) {
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
    // So would a log folder that cannot be made or written to (a file in its place, a read-only disk).
    if (!options.log_dir.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(options.log_dir, ec);
        int err = ec ? ec.value() : 0;
        if (!err && !std::filesystem::is_directory(options.log_dir, ec)) err = ENOTDIR;
        if (!err && ::access(options.log_dir.c_str(), W_OK | X_OK) != 0) err = errno;
        if (err)
            throw InvalidArgument(fmt::format("CommandObjective: log_dir '{}' cannot hold the trials' logs: {}",
                                              options.log_dir, detail::command::errno_text(err)));
    }
    // A missing program would otherwise fail every trial one by one. One given by a placeholder
    // is only known per trial.
    const auto& program = s.command[0];
    if (std::none_of(program.pieces.begin(), program.pieces.end(), [](const auto& p) { return p.placeholder; }))
        detail::command::require_runnable(program.pieces.empty() ? std::string() : program.pieces[0].text);
    s.options = std::move(options);
    spec_ = std::move(spec);
}

HYPERTUNE_INLINE void CommandObjective::check(const SearchSpace& space) const {
    std::vector<std::string_view> names;
    for (const auto& p : space.parameters()) names.push_back(p.name);
    check_placeholders(names);
}

HYPERTUNE_INLINE std::vector<std::string> CommandObjective::arguments(const Config& config, Trial& trial) const {
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

HYPERTUNE_INLINE double CommandObjective::operator()(const Config& config, Trial& trial) const {
    return detail::command::CommandRun(*spec_, arguments(config, trial), trial).execute();
}

HYPERTUNE_INLINE Metrics CommandObjective::metrics(const Config& config, Trial& trial) const {
    return detail::command::CommandRun(*spec_, arguments(config, trial), trial).execute_metrics();
}

HYPERTUNE_INLINE const CommandOptions& CommandObjective::options() const noexcept { return spec_->options; }

HYPERTUNE_INLINE const std::string& CommandObjective::objective_metric() const noexcept {
    return spec_->options.metrics[spec_->objective].name;
}

HYPERTUNE_INLINE std::vector<std::string> CommandObjective::metric_names() const {
    std::vector<std::string> out;
    for (const auto& m : spec_->options.metrics) out.push_back(m.name);
    return out;
}

HYPERTUNE_INLINE void CommandObjective::check_placeholders(const std::vector<std::string_view>& parameters) const {
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

}  // namespace hypertune
