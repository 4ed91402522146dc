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
//   after a crash), as SageMaker's checkpoint path works. {resumed_from} is Trial::resumed_from(),
//   the step of an in-process checkpoint (Trial::save_checkpoint), which a command cannot save:
//   under the Tuner it is 0, and a promoted trainer learns where to continue from the state it
//   finds in {checkpoint_dir}; "{{" and "}}" are literal braces. The
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
//   with such a value are skipped, and so are captures that reach the end of a line cut at
//   max_line_bytes (the number may go on past the cut: for the objective, and for the step
//   regex, the trial fails). Every metric value (objective included) goes to options.on_metric if set, with
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
#include <hypertune/linkage.hpp>
#include <hypertune/metrics.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/trial.hpp>
#include <hypertune/types.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
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
struct Spec;
}  // namespace detail::command

/// An objective that runs an external command per trial; see the top of this header.
class CommandObjective {
public:
    CommandObjective(std::vector<std::string> command, CommandOptions options);

    /// Refuses placeholders that are neither a parameter of `space` nor {budget}, {resumed_from},
    /// {trial_id}, {checkpoint_dir}, and parameters named like those four. Also done on every
    /// call, against the config.
    void check(const SearchSpace& space) const;

    /// The command for this configuration and trial, placeholders replaced.
    [[nodiscard]] std::vector<std::string> arguments(const Config& config, Trial& trial) const;

    /// Runs the command for one trial; see the top of this header.
    double operator()(const Config& config, Trial& trial) const;

    /// Runs the command for one trial, as operator() does, and returns the latest value of every
    /// metric definition that printed one: the objective of a run with several objectives or
    /// constraints (TunerOptions::objectives), whose metrics the definitions name, e.g.
    /// `tuner.fit([&](const ht::Config& c, ht::Trial& t) { return objective.metrics(c, t); })`.
    /// The objective metric must print a value, as for operator(); a run metric no line matched
    /// makes the Tuner fail the trial, naming it. Each line of the objective metric is an
    /// intermediate report carrying every metric's latest value, so that early stopping ranks on
    /// all of them (MO-ASHA): print the other metrics of a step before the objective metric's line
    /// (or on the same line), or a report carries the previous step's.
    [[nodiscard]] Metrics metrics(const Config& config, Trial& trial) const;

    [[nodiscard]] const CommandOptions& options() const noexcept;

    /// The metric operator() returns (CommandOptions::objective_metric, else the first
    /// definition), and every metric definition's name: the Tuner refuses a run whose
    /// TunerOptions::metric names another of them, which it would optimise under the wrong name.
    [[nodiscard]] const std::string& objective_metric() const noexcept;
    [[nodiscard]] std::vector<std::string> metric_names() const;

private:
    void check_placeholders(const std::vector<std::string_view>& parameters) const;

    std::shared_ptr<const detail::command::Spec> spec_;
};

}  // namespace hypertune

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/command_objective.hpp>
#endif
