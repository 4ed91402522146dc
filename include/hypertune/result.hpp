// SPDX-License-Identifier: MIT
#pragma once
// Result: what a tuning run leaves behind. best(), one TrialRecord per trial, a cost summary
// (billable time with and without early stopping, wall time against the sequential estimate,
// worker utilisation), and CSV / JSON export with SageMaker AMT's column names. A run with several
// objectives has a Pareto front and its hypervolume; with constraints, only feasible trials count.

#include <hypertune/config.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/detail/csv.hpp>
#include <hypertune/detail/file.hpp>
#include <hypertune/detail/json_value.hpp>
#include <hypertune/direction.hpp>
#include <hypertune/error.hpp>
#include <hypertune/metrics.hpp>
#include <hypertune/strategy.hpp>

#include <fmt/core.h>
#include <nlohmann/json_fwd.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hypertune {

/// Completed: ran to its budget. Stopped: ended early (by the strategy, or the run stopping).
/// Paused: waiting at a rung for promotion (only while a synchronous Hyperband run is going on).
enum class TrialStatus { Running, Paused, Completed, Failed, Stopped };

[[nodiscard]] inline std::string_view to_string(TrialStatus s) noexcept {
    switch (s) {
        case TrialStatus::Running: return "InProgress";
        case TrialStatus::Paused: return "Paused";
        case TrialStatus::Completed: return "Completed";
        case TrialStatus::Failed: return "Failed";
        case TrialStatus::Stopped: return "Stopped";
    }
    return "?";
}

/// One intermediate report: the objective after `step` resource units, `seconds` into the run.
struct ReportPoint {
    Resource step = 0;
    double value = 0.0;
    double seconds = 0.0;  ///< since the trial's first start
};

/// One stretch of time a trial ran on a worker (a promoted trial has several).
struct RunSegment {
    double start = 0.0;  ///< Unix seconds
    double end = 0.0;
    std::size_t worker = 0;
};

struct TrialRecord {
    TrialId id = 0;
    Config config;
    TrialStatus status = TrialStatus::Running;
    double objective = std::numeric_limits<double>::quiet_NaN();  ///< final value; NaN when none
    std::vector<ReportPoint> curve;
    Resource resource_used = 0;
    std::vector<RunSegment> segments;
    double elapsed_seconds = 0.0;   ///< time spent running, summed over segments
    /// Time spent waiting for resources before training (Trial::resources_acquired: MPI ranks,
    /// say), left out of elapsed and billable time.
    double waited_seconds = 0.0;
    double billable_seconds = 0.0;  ///< elapsed x instances
    /// The instances it ran on: instances_per_trial, times its instances parameter's value when
    /// the run names one (TunerOptions::instances_parameter).
    int instances = 1;
    std::string failure_reason;
    int retries = 0;
    std::vector<DecisionRecord> decisions;
    /// A run with several objectives or constraints: the final value of each metric, in the order
    /// of Result::metric_names() (the objectives first; `objective` is the first). Empty otherwise,
    /// and for a trial that failed.
    std::vector<double> values;
    /// False when a final value breaks one of the run's constraints: the trial is then never
    /// best() and never on the Pareto front.
    bool feasible = true;

    [[nodiscard]] double start_time() const { return segments.empty() ? std::nan("") : segments.front().start; }
    [[nodiscard]] double end_time() const { return segments.empty() ? std::nan("") : segments.back().end; }
    [[nodiscard]] bool has_objective() const noexcept { return std::isfinite(objective); }
};

/// What the search cost. "Without early stopping" scales the time of every trial the strategy
/// stopped (one with a Stop decision) up to the full resource at its own measured time per resource
/// unit; a trial cut by max_runtime_seconds, max_trial_seconds or stop() is not early stopping.
struct CostSummary {
    double billable_seconds = 0.0;
    double billable_seconds_without_early_stopping = 0.0;
    double busy_seconds = 0.0;        ///< summed trial run time
    double wall_seconds = 0.0;        ///< from the run's start to its end
    /// The workers' time: max_parallel_jobs x wall time, summed over the run's sessions (a resume
    /// may change max_parallel_jobs).
    double worker_seconds = 0.0;
    double sequential_seconds = 0.0;  ///< the same trials one after another (= busy_seconds)
    double utilisation = 0.0;         ///< busy / worker_seconds
    Resource resource_used = 0;
    Resource full_resource = 0;  ///< the resource one trial has when nothing stops it
};

namespace detail {
/// Whether the workers' time is `workers` x the wall time: every session had that many workers.
[[nodiscard]] inline bool same_capacity(const CostSummary& c, std::size_t workers) {
    const double uniform = static_cast<double>(workers) * c.wall_seconds;
    return std::abs(c.worker_seconds - uniform) <= 1e-9 * std::max(1.0, uniform);
}
}  // namespace detail

/// The best trial of an earlier run this run was warm-started from (AMT's parent tuning job).
struct ParentBest {
    std::size_t parent = 0;  ///< index in WarmStart::parents
    TrialId trial = 0;
    double objective = std::numeric_limits<double>::quiet_NaN();
    Config config;  ///< in the parent's search space
};

/// The best trial over this run and its warm-start parents (AMT's OverallBestTrainingJob).
struct OverallBest {
    std::optional<std::size_t> parent;  ///< empty: a trial of this run
    TrialId trial = 0;
    double objective = std::numeric_limits<double>::quiet_NaN();
    Config config;
};

class Result {
public:
    struct Setup {
        std::string metric = "objective";  ///< the first objective
        Direction direction = Direction::Minimize;
        /// Every objective, the first being {metric, direction}; empty means just that one.
        std::vector<Metric> objectives;
        std::vector<Constraint> constraints;
        std::string strategy;
        std::size_t max_parallel_jobs = 1;  ///< the most of any session (the last one's, when alike)
        int instances_per_trial = 1;
        std::string instances_parameter;  ///< TunerOptions::instances_parameter; empty: none
        std::optional<Resource> max_resource;
        std::uint64_t seed = 0;
        std::string stop_reason;
        double start_time = 0.0;  ///< Unix seconds
        double wall_seconds = 0.0;
        /// Each session's max_parallel_jobs x its wall time, summed; 0 means max_parallel_jobs x
        /// wall_seconds (a run whose sessions all had the same number of workers).
        double worker_seconds = 0.0;
        std::vector<std::string> parameter_names;
        std::vector<std::string> warnings;  ///< things the run noticed that the user should fix
        std::vector<ParentBest> parent_bests;  ///< warm-start parents' best trials
        /// Warm-start parent runs given, also those with no best trial this run can use (0 in
        /// journals written before it was kept: then parent_bests.size()).
        std::size_t parent_runs = 0;
    };

    Result() = default;
    Result(Setup setup, std::vector<TrialRecord> trials) : setup_(std::move(setup)), trials_(std::move(trials)) {}

    [[nodiscard]] const Setup& setup() const noexcept { return setup_; }
    [[nodiscard]] const std::vector<TrialRecord>& trials() const noexcept { return trials_; }
    [[nodiscard]] std::string_view stop_reason() const noexcept { return setup_.stop_reason; }

    /// The best trial on the (first) objective among those Completed (ran to their full budget);
    /// when none completed, the best of those with any final value. Only feasible trials count.
    /// Throws when no trial has a value, or none is feasible. With several objectives, see
    /// pareto_front().
    [[nodiscard]] const TrialRecord& best() const {
        const TrialRecord* found = best_among([](const TrialRecord& t) { return t.feasible; });
        if (!found) throw Error(fmt::format("Result::best: {}", why_no_best()));
        return *found;
    }
    /// Why best() has nothing to return: no trial ran, none produced a value, or none met the
    /// constraints.
    [[nodiscard]] std::string why_no_best() const {
        if (trials_.empty()) return "no trial ran";
        const bool any_value = std::any_of(trials_.begin(), trials_.end(), [](const auto& t) { return t.has_objective(); });
        return fmt::format("none of the {} trials {}", trials_.size(),
                           any_value ? "met the constraints" : "produced a value");
    }
    [[nodiscard]] bool has_best() const noexcept {
        return best_among([](const TrialRecord& t) { return t.feasible; }) != nullptr;
    }

    /// best()'s choice among the trials `eligible` accepts instead of the feasible ones: the best
    /// completed one, else the best with any final value; nullptr when none has a value.
    template <class Eligible>
    [[nodiscard]] const TrialRecord* best_among(Eligible&& eligible) const {
        for (const bool completed_only : {true, false}) {
            const TrialRecord* found = nullptr;
            for (const auto& t : trials_) {
                if (!t.has_objective() || (completed_only && t.status != TrialStatus::Completed) || !eligible(t)) continue;
                if (!found || better(t.objective, found->objective) ||
                    (t.objective == found->objective && better_on_later_objectives(t, *found)))
                    found = &t;
            }
            if (found) return found;
        }
        return nullptr;
    }

    /// A tie on the first objective goes to the trial better on the next ones, in order: the
    /// trial chosen is then on the Pareto front (none of those tied dominates it).
    [[nodiscard]] bool better_on_later_objectives(const TrialRecord& a, const TrialRecord& b) const {
        if (setup_.objectives.size() < 2) return false;
        const std::vector<double> la = losses(a), lb = losses(b);
        return la.size() == lb.size() && la.size() > 1 &&
               std::lexicographical_compare(la.begin() + 1, la.end(), lb.begin() + 1, lb.end());
    }

    /// best() over this run and the warm-start parents' best trials; a tie goes to this run.
    /// Throws when neither has a value.
    [[nodiscard]] OverallBest overall_best() const {
        OverallBest out;
        bool found = false;
        if (has_best()) {
            const auto& b = best();
            out = {std::nullopt, b.id, b.objective, b.config};
            found = true;
        }
        for (const auto& p : setup_.parent_bests)
            if (std::isfinite(p.objective) && (!found || better(p.objective, out.objective))) {
                out = {p.parent, p.trial, p.objective, p.config};
                found = true;
            }
        if (!found)
            throw Error(fmt::format("Result::overall_best: {}, and {}", why_no_best(),
                                    setup_.parent_runs == 0 ? std::string("there was no warm start")
                                    : setup_.parent_runs == 1
                                        ? std::string("the warm start's earlier run has no best trial this run can use")
                                        : fmt::format("none of the warm start's {} earlier runs has a best trial this run "
                                                      "can use",
                                                      setup_.parent_runs)));
        return out;
    }
    [[nodiscard]] bool has_overall_best() const noexcept {
        return has_best() || std::any_of(setup_.parent_bests.begin(), setup_.parent_bests.end(),
                                         [](const ParentBest& p) { return std::isfinite(p.objective); });
    }

    /// The run's objectives, the first being {metric, direction}.
    [[nodiscard]] std::vector<Metric> objectives() const {
        return setup_.objectives.empty() ? std::vector<Metric>{{setup_.metric, setup_.direction}} : setup_.objectives;
    }
    /// The names of the values each trial records (TrialRecord::values): the objectives, then
    /// the constrained metrics that are not objectives.
    [[nodiscard]] std::vector<std::string> metric_names() const {
        return hypertune::metric_names(objectives(), setup_.constraints);
    }
    /// A trial's final value of metric `name`; empty when it has none (it failed, or there is no
    /// such metric).
    [[nodiscard]] std::optional<double> metric(const TrialRecord& t, std::string_view name) const;

    /// The completed, feasible trials that no other such trial dominates on the objectives (each
    /// in its own direction), ordered by the first objective, best first. With one objective:
    /// the trials that share the best value.
    [[nodiscard]] std::vector<TrialRecord> pareto_front() const;
    /// The constraints and how many trials with values met them ("memory_gb <= 0.5: 9 of 20
    /// trials with values feasible"); empty when the run has none. summary() and the report show it.
    [[nodiscard]] std::string constraints_summary() const;
    /// The best trial over this run and its warm-start parents ("(with 1 warm-start parent run):
    /// parent 0 trial 11, loss = 0.0161011, x=0.4"); empty without a parent's best. summary() and
    /// the report show it.
    [[nodiscard]] std::string overall_best_summary() const;
    /// The hypervolume of the Pareto front up to `reference` (one value per objective, in the
    /// objectives' own units and directions: a value every front member should beat, e.g. the
    /// worst acceptable accuracy and the largest acceptable cost). Larger is better. Throws
    /// InvalidArgument when `reference` does not have one value per objective.
    [[nodiscard]] double hypervolume(const std::vector<double>& reference) const;
    /// The trial's objectives as losses (each negated when maximised): what Pareto dominance and
    /// the strategies compare. Empty when the trial has no value.
    [[nodiscard]] std::vector<double> losses(const TrialRecord& t) const;

    [[nodiscard]] std::size_t count(TrialStatus s) const noexcept {
        return static_cast<std::size_t>(std::count_if(trials_.begin(), trials_.end(), [&](const auto& t) { return t.status == s; }));
    }

    /// Whether the strategy stopped the trial early (it is Stopped, with a Stop decision), as
    /// opposed to one cut by max_runtime_seconds, max_trial_seconds or stop().
    [[nodiscard]] static bool stopped_early(const TrialRecord& t) {
        return t.status == TrialStatus::Stopped &&
               std::any_of(t.decisions.begin(), t.decisions.end(),
                           [](const DecisionRecord& d) { return d.kind == DecisionRecord::Kind::Stop; });
    }

    /// The trials by how they ended: "C completed, E stopped early, K cut short, F failed, U
    /// unfinished", the cut and unfinished counts only when there are any. Stopped early is the
    /// strategy's doing (stopped_early()); cut short, a Stopped trial that stop(), a time limit or
    /// a completion criterion ended, running or paused. Unfinished trials are those of a journal
    /// read without its end.
    [[nodiscard]] std::string status_counts() const;

    [[nodiscard]] CostSummary cost() const {
        CostSummary c;
        c.wall_seconds = setup_.wall_seconds;
        // max_resource when the strategy has one (a trial that trained past its budget does not
        // move it), else the most a completed trial reached; so too with a max_resource of 1, no
        // resource in play (random search's default), where a trainer reports the epochs it chose
        // to train and median stopping cuts some of them short.
        Resource full = setup_.max_resource.value_or(0);
        if (!setup_.max_resource || *setup_.max_resource <= 1)
            for (const auto& t : trials_)
                if (t.status == TrialStatus::Completed) full = std::max(full, t.resource_used);
        c.full_resource = full;
        for (const auto& t : trials_) {
            const double instances = setup_.instances_parameter.empty() ? setup_.instances_per_trial : t.instances;
            c.busy_seconds += t.elapsed_seconds;
            c.billable_seconds += t.billable_seconds;
            // Saturating: a trial may report an absurd step (the largest Resource) without overflow.
            c.resource_used = t.resource_used > std::numeric_limits<Resource>::max() - c.resource_used
                                  ? std::numeric_limits<Resource>::max()
                                  : c.resource_used + t.resource_used;
            double without = t.elapsed_seconds;
            if (stopped_early(t) && t.resource_used > 0 && full > t.resource_used)
                without = t.elapsed_seconds / static_cast<double>(t.resource_used) * static_cast<double>(full);
            c.billable_seconds_without_early_stopping += without * instances;
        }
        c.sequential_seconds = c.busy_seconds;
        c.worker_seconds = setup_.worker_seconds > 0.0
                               ? setup_.worker_seconds
                               : static_cast<double>(setup_.max_parallel_jobs) * c.wall_seconds;
        if (c.worker_seconds > 0.0) c.utilisation = c.busy_seconds / c.worker_seconds;
        return c;
    }

    /// A short text table: trials by status, the best trial, cost and time.
    [[nodiscard]] std::string summary() const;

    /// One line of explanation for a decision, in the objective's own sign.
    [[nodiscard]] std::string describe(const DecisionRecord& d) const;

    /// One row per trial: AMT's columns (TrainingJobName, TrainingJobStatus, FinalObjectiveValue,
    /// TrainingStartTime, TrainingEndTime, TrainingElapsedTimeSeconds), one column per
    /// hyperparameter, then TrialId, ResourceUsed, BillableSeconds, Retries, FailureReason.
    void to_csv(const std::string& path) const { detail::write_whole_file(path, "CSV file", to_csv()); }

    /// Every field is valid UTF-8 (invalid bytes become U+FFFD, as in to_json), so that a failure
    /// reason quoting a trainer's Latin-1 output does not keep pandas from reading the file.
    [[nodiscard]] std::string to_csv() const;

    /// Writes to_json() to `path`, indented.
    void to_json(const std::string& path) const;

    /// {"metric", "direction", "strategy", ..., "best", "cost", "trials": [...]}; each trial has
    /// the CSV's fields plus its hyperparameters, curve, run segments and decisions. Defined in
    /// <hypertune/json.hpp>, which brings in nlohmann/json (<hypertune/hypertune.hpp> includes it
    /// in header-only mode; in compiled mode, include it where you use the value).
    [[nodiscard]] nlohmann::ordered_json to_json() const;

    /// Strategies see losses; this turns one back into the objective's sign.
    [[nodiscard]] double value_of(double loss) const noexcept {
        return setup_.direction == Direction::Maximize ? -loss : loss;
    }

    [[nodiscard]] static std::string job_name(TrialId id) { return fmt::format("trial-{:04}", id); }

private:
    [[nodiscard]] bool better(double a, double b) const noexcept {
        return setup_.direction == Direction::Maximize ? a > b : a < b;
    }

    Setup setup_;
    std::vector<TrialRecord> trials_;
};

namespace detail {

/// Result::to_json()'s document, in the library's own JSON type.
[[nodiscard]] JsonValue result_json(const Result& result);

/// The results document in parts: its fields but "trials", and each trial's object, so that
/// Result::to_json(path) writes a trial at a time.
class ResultJson {
public:
    HYPERTUNE_INLINE explicit ResultJson(const Result& result);
    [[nodiscard]] HYPERTUNE_INLINE JsonValue head() const;
    [[nodiscard]] HYPERTUNE_INLINE JsonValue trial(const TrialRecord& t) const;

private:
    const Result& result_;
    std::vector<std::string> names_;
    bool multi_ = false;
    std::vector<TrialId> front_;
};

}  // namespace detail

}  // namespace hypertune

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/result.hpp>
#endif
