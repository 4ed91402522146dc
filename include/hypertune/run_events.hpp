// SPDX-License-Identifier: MIT
#pragma once
// Run events: everything that happens in a tuning run, as typed values. The live run emits them,
// the journal writes them down (one JSON object per line), and RunState (run_state.hpp) builds the
// run's records from them, the same way for the live run, for resume and for load_result().
// to_json() and event_from_json() below are the one place that knows the journal's field names.
//
// Journal format 2 added trial_retried (a failed attempt whose reports are forgotten before the
// retry). Format 1 journals (no such event) still load. A run with several objectives or
// constraints adds "objectives" and "constraints" to run_started and "values" to trial_ended
// (and to report, for a trial that reports ht::Metrics); a journal without them is a
// single-objective run.

#include <hypertune/config.hpp>
#include <hypertune/error.hpp>
#include <hypertune/metrics.hpp>
#include <hypertune/result.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/strategy.hpp>

#include <hypertune/detail/config_json.hpp>
#include <hypertune/detail/json_value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace hypertune {

/// The run's options and search space, once at its start.
struct RunStarted {
    double time = 0.0;
    std::string metric;
    Direction direction = Direction::Minimize;
    std::string strategy;
    std::uint64_t seed = 0;
    std::size_t max_jobs = 0;
    std::size_t max_parallel_jobs = 1;
    int instances_per_trial = 1;
    std::optional<Resource> max_resource;
    SearchSpace space;
    /// A run with several objectives (the first is {metric, direction}) or constraints; empty
    /// objectives: just {metric, direction}.
    std::vector<Metric> objectives{};
    std::vector<Constraint> constraints{};
    /// TunerOptions::instances_parameter; empty: every trial runs on instances_per_trial.
    std::string instances_parameter{};
    /// The strategy's options beyond its name (Scheduler::settings()); empty in journals written
    /// before they were recorded.
    Settings settings{};
};

/// A session after a crash or a stop picks the run up again.
struct RunResumed {
    double time = 0.0;
    std::size_t trials = 0;     ///< trials the journal held
    std::size_t in_flight = 0;  ///< of those, the ones that run again
    /// This session's budget of new trials (TunerOptions::max_jobs, which a resume may raise); 0
    /// in journals written before it was recorded.
    std::size_t max_jobs = 0;
    /// This session's TunerOptions::max_parallel_jobs; 0 in journals written before it was
    /// recorded (the run's first value then holds).
    std::size_t max_parallel_jobs = 0;
};

/// A trial starts running (new, promoted, or run again after a crash).
struct TrialStarted {
    double time = 0.0;
    TrialId trial = 0;
    Config config;
    Resource budget = 0;
    Resource resume_from = 0;
    std::size_t worker = 0;
    bool rerun = false;  ///< in flight when an earlier session died
};

/// An intermediate report.
struct TrialReported {
    double time = 0.0;
    TrialId trial = 0;
    Resource step = 0;
    double value = 0.0;    ///< the (first) objective's
    double seconds = 0.0;  ///< since the trial's first start
    /// A report of ht::Metrics in a run with several metrics: each one's value in the run's
    /// metric_names() order, NaN for a constrained metric the report left out. Empty otherwise.
    std::vector<double> values{};
};

/// A stop, pause or promotion.
struct TrialDecided {
    double time = 0.0;
    DecisionRecord decision;
};

/// A failed attempt will be retried: its reports after `keep_through` are forgotten.
struct TrialRetried {
    double time = 0.0;
    TrialId trial = 0;
    int attempt = 0;  ///< the attempt that failed, from 0
    Resource keep_through = 0;
    std::string reason;
};

/// A trial's run ended (a paused trial may start again later).
struct TrialEnded {
    double time = 0.0;
    TrialId trial = 0;
    TrialStatus status = TrialStatus::Completed;
    double objective = std::numeric_limits<double>::quiet_NaN();
    Resource resource = 0;
    std::string failure;
    int retries = 0;
    /// A run with several objectives or constraints: each metric's final value
    /// (Result::metric_names() order); empty otherwise, and for a failed trial.
    std::vector<double> values{};
    /// Seconds of this run of the trial spent waiting for resources before training
    /// (Trial::resources_acquired), all its attempts together: not billed.
    double waited_seconds = 0.0;
    /// A run of it went past TunerOptions::max_trial_seconds (the run's end counts such trials).
    bool out_of_time = false;
    /// A resumed trial that trained again from the start (Outcome::started_over).
    bool started_over = false;
};

/// Something the user should know, kept as a warning of the result.
struct RunWarned {
    double time = 0.0;
    std::string message;
    /// Said by the session's end of the whole run as it ended (no trial trained in full, every
    /// trial failed, the strategy's notes): a resumed session drops it, and its own end says again
    /// what is still true, so that a run extended (max_jobs raised) does not keep what it made false.
    bool of_run_end = false;
};

/// The run's warm start: the parents' best trials, and what the strategy learnt from, so that a
/// resumed run can tell whether it was given the same warm start.
struct RunWarmStarted {
    double time = 0.0;
    std::vector<ParentBest> parents;
    std::size_t parent_runs = 0;  ///< earlier runs given (0 in journals written before it was kept)
    std::size_t results = 0;      ///< their trials taken as observations
    /// A digest of those observations and the warm start's type (PreparedWarmStart::fingerprint);
    /// empty in journals written before it was kept.
    std::string fingerprint;
    /// Each observation's (parent, trial), in order: a resume finds them again in parents that
    /// have grown since (a parent journal resumed or still running); empty in journals written
    /// before they were kept.
    std::vector<std::pair<std::size_t, TrialId>> used;
    /// The warm start's type; empty in journals written before it was kept.
    std::optional<WarmStartType> type;
};

/// The session ended (every worker is done).
struct RunEnded {
    double time = 0.0;
    std::string reason;
};

using RunEvent = std::variant<RunStarted, RunResumed, TrialStarted, TrialReported, TrialDecided, TrialRetried,
                              TrialEnded, RunWarned, RunWarmStarted, RunEnded>;

namespace detail {

inline constexpr int journal_format_written = 2;

[[nodiscard]] JsonValue to_json(const RunEvent& event);

/// The event of one journal line. `space` is the run's (from its run_started line): it reads the
/// configurations. Throws IoError naming the event and the field.
[[nodiscard]] RunEvent event_from_json(const JsonValue& e, const SearchSpace& space);

}  // namespace detail
}  // namespace hypertune

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/run_events.hpp>
#endif
