// SPDX-License-Identifier: MIT
#pragma once
// TunerOptions (what a tuning job is asked to do, after SageMaker AMT's tuning job settings) and
// Progress (a snapshot of a run), for the Tuner (tuner.hpp).

#include <hypertune/direction.hpp>
#include <hypertune/metrics.hpp>
#include <hypertune/result.hpp>
#include <hypertune/run_events.hpp>
#include <hypertune/run_state.hpp>
#include <hypertune/warm_start.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace hypertune {

enum class ProgressBar { Auto, Always, Never };

/// The most worker threads a Tuner starts (TunerOptions::max_parallel_jobs): each is an OS thread.
inline constexpr std::size_t max_parallel_jobs_limit = 1024;

struct TunerOptions {
    std::string metric = "objective";  ///< the objective metric's name, for output
    Direction direction = Direction::Minimize;
    /// Several objectives, e.g. {{"accuracy", Maximize}, {"rank_seconds", Minimize}}: the objective
    /// then returns hypertune::Metrics, and Result::pareto_front() holds the trade-off. The first
    /// is the run's metric and direction (leave those at their defaults, or give the same). Empty:
    /// just {metric, direction}.
    std::vector<Metric> objectives{};
    /// Bounds a trial's metrics must meet to count, e.g. Constraint::at_most("seconds_per_epoch",
    /// 30): the objective returns each constrained metric among its Metrics.
    std::vector<Constraint> constraints{};
    std::size_t max_jobs = 100;          ///< trials to start in all
    /// Worker threads: never more trials in flight. At most max_parallel_jobs_limit; no more than
    /// max_jobs threads start.
    std::size_t max_parallel_jobs = 1;
    std::uint64_t seed = 0;
    double max_runtime_seconds = 0.0;    ///< 0: no limit. When it passes, running trials are stopped.
    /// Each run of a trial (an attempt, a promotion's continuation) may train this long; 0: no
    /// limit (SageMaker's MaxRuntimeInSeconds per training job). Counted from the call of the
    /// objective, or from Trial::resources_acquired() when it is called (waiting is not training).
    /// Past it, should_stop() is true and the next report() gets Stop: the trial ends Stopped with
    /// the value it returns (or its last reported one), is not retried, and a warning names it. A
    /// trial that trained to its budget meanwhile counts as Completed, and so does one that
    /// reported nothing (nothing tells how far it trained; the warning says so). An objective
    /// that checks neither should_stop() nor its reports' decisions runs on: a thread is not killed.
    /// CommandObjective stops its trainer as for any stop (SIGTERM to its process group).
    double max_trial_seconds = 0.0;
    std::optional<double> target_objective{};      ///< stop once a completed trial reaches it
    std::size_t max_trials_without_improvement = 0;  ///< stop after N completed trials without a
                                                     ///< relative improvement above improvement_tolerance; 0: off
    double improvement_tolerance = 0.01;
    int max_retries = 0;          ///< re-runs of a failed trial before it is recorded Failed
    int instances_per_trial = 1;  ///< for cost accounting: billable = elapsed x instances
    /// For cost accounting when each trial runs on its own number of instances (workers, ranks):
    /// the name of an integer-valued parameter (an integer, or a categorical whose values are
    /// integers such as {"1", "2", "4"}) whose value in a trial's configuration multiplies
    /// instances_per_trial, so billable = elapsed x instances_per_trial x that value. Empty: off.
    std::string instances_parameter{};
    ProgressBar progress = ProgressBar::Auto;  ///< Auto: on stderr when it is a terminal
    /// A journal file (JSON lines): written as the run goes; an existing one is resumed.
    std::string journal{};
    /// Earlier runs to learn from (at most 5) and their best trials for Result::overall_best().
    WarmStart warm_start{};
    /// Called from the worker thread when a trial (or a resumed run of it) starts and when it ends.
    /// Calls are serialised; keep them short. Waiting for the run there (TuningJob::wait() or
    /// take_result(), as from the objective) is refused with hypertune::Error: the run waits for
    /// that thread.
    std::function<void(const TrialRecord&)> on_trial_start{};
    std::function<void(const TrialRecord&)> on_trial_end{};
    /// Called with every run event once it is applied to the run's state (run_events.hpp), under
    /// the run's lock: keep it short. Of the job, only stop() may be called from it (the others
    /// throw hypertune::Error, as they would wait for ever). A throw stops the run.
    std::function<void(const RunEvent&, const RunState&)> on_event{};
};

/// A snapshot of a run in progress.
struct Progress {
    std::size_t started = 0;
    std::size_t running = 0;
    /// Waiting at a rung for a promotion (promotion-type ASHA and Hyperband, synchronous brackets);
    /// once the run has ended, those left are counted as stopped, as the result has them.
    /// While it runs, started = running + paused + completed + stopped + failed.
    std::size_t paused = 0;
    std::size_t completed = 0;
    std::size_t stopped = 0;
    std::size_t failed = 0;
    std::size_t max_jobs = 0;
    double elapsed_seconds = 0.0;  ///< since this session started; once finished, its length
    /// The best value of a Completed trial that met the constraints (what target_objective and
    /// max_trials_without_improvement judge); none before one completed, even when the result's
    /// best() falls back to a stopped or paused trial's value.
    std::optional<double> best;
    bool finished = false;
};

}  // namespace hypertune
