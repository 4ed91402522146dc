// SPDX-License-Identifier: MIT
#pragma once
// Result: what a tuning run leaves behind. best(), one TrialRecord per trial, a cost summary
// (billable time with and without early stopping, wall time against the sequential estimate,
// worker utilisation), and CSV / JSON export with SageMaker AMT's column names.

#include <hypertune/config.hpp>
#include <hypertune/detail/csv.hpp>
#include <hypertune/detail/file.hpp>
#include <hypertune/direction.hpp>
#include <hypertune/error.hpp>
#include <hypertune/strategy.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hypertune {

namespace detail {

/// A finite number as JSON, NaN and infinities as null (JSON has no NaN).
[[nodiscard]] inline nlohmann::json number_or_null(double x) {
    return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr);
}

}  // namespace detail

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
    double billable_seconds = 0.0;  ///< elapsed x instances_per_trial
    std::string failure_reason;
    int retries = 0;
    std::vector<DecisionRecord> decisions;

    [[nodiscard]] double start_time() const { return segments.empty() ? std::nan("") : segments.front().start; }
    [[nodiscard]] double end_time() const { return segments.empty() ? std::nan("") : segments.back().end; }
    [[nodiscard]] bool has_objective() const noexcept { return std::isfinite(objective); }
};

/// What the search cost. "Without early stopping" scales every stopped trial's time up to the
/// full resource at its own measured time per resource unit.
struct CostSummary {
    double billable_seconds = 0.0;
    double billable_seconds_without_early_stopping = 0.0;
    double busy_seconds = 0.0;        ///< summed trial run time
    double wall_seconds = 0.0;        ///< from the run's start to its end
    double sequential_seconds = 0.0;  ///< the same trials one after another (= busy_seconds)
    double utilisation = 0.0;         ///< busy / (max_parallel_jobs x wall)
    Resource resource_used = 0;
    Resource full_resource = 0;  ///< the resource one trial has when nothing stops it
};

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
        std::string metric = "objective";
        Direction direction = Direction::Minimize;
        std::string strategy;
        std::size_t max_parallel_jobs = 1;
        int instances_per_trial = 1;
        std::optional<Resource> max_resource;
        std::uint64_t seed = 0;
        std::string stop_reason;
        double start_time = 0.0;  ///< Unix seconds
        double wall_seconds = 0.0;
        std::vector<std::string> parameter_names;
        std::vector<std::string> warnings;  ///< things the run noticed that the user should fix
        std::vector<ParentBest> parent_bests;  ///< warm-start parents' best trials
    };

    Result() = default;
    Result(Setup setup, std::vector<TrialRecord> trials) : setup_(std::move(setup)), trials_(std::move(trials)) {}

    [[nodiscard]] const Setup& setup() const noexcept { return setup_; }
    [[nodiscard]] const std::vector<TrialRecord>& trials() const noexcept { return trials_; }
    [[nodiscard]] std::string_view stop_reason() const noexcept { return setup_.stop_reason; }

    /// The best trial among those Completed (ran to their full budget); when none completed, the
    /// best of those with any final value. Throws when no trial has a value.
    [[nodiscard]] const TrialRecord& best() const {
        const TrialRecord* found = find_best(true);
        if (!found) found = find_best(false);
        if (!found)
            throw Error(trials_.empty() ? "Result::best: no trial ran"
                                        : fmt::format("Result::best: none of the {} trials produced a value", trials_.size()));
        return *found;
    }
    [[nodiscard]] bool has_best() const noexcept { return find_best(false) != nullptr; }

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
        if (!found) (void)best();  // throws, saying why
        return out;
    }
    [[nodiscard]] bool has_overall_best() const noexcept {
        return has_best() || std::any_of(setup_.parent_bests.begin(), setup_.parent_bests.end(),
                                         [](const ParentBest& p) { return std::isfinite(p.objective); });
    }

    [[nodiscard]] std::size_t count(TrialStatus s) const noexcept {
        return static_cast<std::size_t>(std::count_if(trials_.begin(), trials_.end(), [&](const auto& t) { return t.status == s; }));
    }

    [[nodiscard]] CostSummary cost() const {
        CostSummary c;
        c.wall_seconds = setup_.wall_seconds;
        Resource full = setup_.max_resource.value_or(0);
        for (const auto& t : trials_)
            if (t.status == TrialStatus::Completed) full = std::max(full, t.resource_used);
        c.full_resource = full;
        double instances = setup_.instances_per_trial;
        for (const auto& t : trials_) {
            c.busy_seconds += t.elapsed_seconds;
            c.billable_seconds += t.billable_seconds;
            c.resource_used += t.resource_used;
            double without = t.elapsed_seconds;
            if (t.status == TrialStatus::Stopped && t.resource_used > 0 && full > t.resource_used)
                without = t.elapsed_seconds / static_cast<double>(t.resource_used) * static_cast<double>(full);
            c.billable_seconds_without_early_stopping += without * instances;
        }
        c.sequential_seconds = c.busy_seconds;
        if (c.wall_seconds > 0.0)
            c.utilisation = c.busy_seconds / (static_cast<double>(setup_.max_parallel_jobs) * c.wall_seconds);
        return c;
    }

    /// A short text table: trials by status, the best trial, cost and time.
    [[nodiscard]] std::string summary() const {
        std::string s;
        s += fmt::format("{} trials of {} ({} {}): {} completed, {} stopped early, {} failed{}\n", trials_.size(),
                         setup_.strategy, to_string(setup_.direction), setup_.metric, count(TrialStatus::Completed),
                         count(TrialStatus::Stopped), count(TrialStatus::Failed),
                         setup_.stop_reason.empty() ? "" : fmt::format("; ended: {}", setup_.stop_reason));
        if (has_best()) {
            const auto& b = best();
            s += fmt::format("best: trial {}, {} = {:.6g}, {}\n", b.id, setup_.metric, b.objective, b.config);
        } else {
            s += "best: none (no trial produced a value)\n";
        }
        if (!setup_.parent_bests.empty() && has_overall_best()) {
            auto o = overall_best();
            s += o.parent ? fmt::format("overall best (with {} warm-start parent run{}): parent {} trial {}, {} = {:.6g}, {}\n",
                                        setup_.parent_bests.size(), setup_.parent_bests.size() == 1 ? "" : "s", *o.parent,
                                        o.trial, setup_.metric, o.objective, o.config)
                          : fmt::format("overall best (with {} warm-start parent run{}): this run's\n",
                                        setup_.parent_bests.size(), setup_.parent_bests.size() == 1 ? "" : "s");
        }
        auto c = cost();
        const auto row = [&](std::string_view label, const std::string& now, const std::string& other) {
            s += fmt::format("  {:<26}{:>12}    {}\n", label, now, other);
        };
        row("", "this run", "without early stopping (estimate)");
        row(fmt::format("billable ({} instance{})", setup_.instances_per_trial, setup_.instances_per_trial == 1 ? "" : "s"),
            detail::human_duration(c.billable_seconds), detail::human_duration(c.billable_seconds_without_early_stopping));
        row(fmt::format("wall time ({} parallel)", setup_.max_parallel_jobs), detail::human_duration(c.wall_seconds),
            fmt::format("sequential {}", detail::human_duration(c.sequential_seconds)));
        row("worker utilisation", fmt::format("{:.0f}%", 100.0 * c.utilisation), "");
        for (const auto& w : setup_.warnings) s += fmt::format("warning: {}\n", w);
        // Only stops are listed (pauses and promotions are in to_json), so only stops make a heading.
        std::size_t stops = 0;
        for (const auto& t : trials_)
            for (const auto& d : t.decisions)
                if (d.kind == DecisionRecord::Kind::Stop && stops++ < 5) {
                    if (stops == 1) s += "early-stopping decisions:\n";
                    s += fmt::format("  trial {}: {}\n", t.id, describe(d));
                }
        if (stops > 5) s += fmt::format("  ... and {} more stops (see to_json)\n", stops - 5);
        return s;
    }

    /// One line of explanation for a decision, in the objective's own sign.
    [[nodiscard]] std::string describe(const DecisionRecord& d) const {
        std::string where = d.bracket >= 0 ? fmt::format("bracket {} rung {}", d.bracket, d.rung)
                                           : (d.rung >= 0 ? fmt::format("rung {}", d.rung) : std::string("step"));
        std::string s = fmt::format("{} at {} (resource {})", to_string(d.kind), where, d.resource);
        if (std::isfinite(d.loss)) s += fmt::format(": {} {:.6g}", setup_.metric, value_of(d.loss));
        if (std::isfinite(d.threshold))
            s += fmt::format(" vs threshold {:.6g} over {} peer{}", value_of(d.threshold), d.peers, d.peers == 1 ? "" : "s");
        if (!d.reason.empty()) s += fmt::format(" ({})", d.reason);
        return s;
    }

    /// One row per trial: AMT's columns (TrainingJobName, TrainingJobStatus, FinalObjectiveValue,
    /// TrainingStartTime, TrainingEndTime, TrainingElapsedTimeSeconds), one column per
    /// hyperparameter, then TrialId, ResourceUsed, BillableSeconds, Retries, FailureReason.
    void to_csv(const std::string& path) const { detail::write_whole_file(path, "CSV file", to_csv()); }

    /// Every field is valid UTF-8 (invalid bytes become U+FFFD, as in to_json), so that a failure
    /// reason quoting a trainer's Latin-1 output does not keep pandas from reading the file.
    [[nodiscard]] std::string to_csv() const {
        // Separators are appended one by one: `"," + field` makes GCC 12 warn (-Wrestrict, a false
        // positive) in every program that calls to_csv with -O3 -Wall.
        std::string s;
        auto column = [&](std::string_view name) {
            if (!s.empty()) s += ',';
            s += name;
        };
        for (auto name : detail::csv_columns_before_parameters) column(name);
        for (const auto& n : setup_.parameter_names) column(detail::csv_field(n));
        for (auto name : detail::csv_columns_after_parameters) column(name);
        s += '\n';
        for (const auto& t : trials_) {
            s += fmt::format("{},{},{},{},{},{}", detail::csv_field(job_name(t.id)), to_string(t.status),
                             t.has_objective() ? fmt::format("{}", t.objective) : "", detail::iso8601(t.start_time()),
                             detail::iso8601(t.end_time()), t.elapsed_seconds);
            for (std::size_t i = 0; i < t.config.size(); ++i) {
                s += ',';
                s += detail::csv_field(format_value(t.config.value(i)));
            }
            s += fmt::format(",{},{},{},{},{}\n", t.id, t.resource_used, t.billable_seconds, t.retries,
                             detail::csv_field(t.failure_reason));
        }
        return s;
    }

    void to_json(const std::string& path) const {
        // A failure reason may quote a trainer's output, which need not be UTF-8: replace, never throw.
        detail::write_whole_file(path, "JSON file",
                                 to_json().dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + '\n');
    }

    /// {"metric", "direction", "strategy", ..., "best", "cost", "trials": [...]}; each trial has
    /// the CSV's fields plus its hyperparameters, curve, run segments and decisions.
    [[nodiscard]] nlohmann::ordered_json to_json() const {
        using json = nlohmann::ordered_json;
        json j;
        j["metric"] = setup_.metric;
        j["direction"] = std::string(to_string(setup_.direction));
        j["strategy"] = setup_.strategy;
        j["seed"] = setup_.seed;
        j["max_parallel_jobs"] = setup_.max_parallel_jobs;
        j["instances_per_trial"] = setup_.instances_per_trial;
        j["max_resource"] = setup_.max_resource ? json(*setup_.max_resource) : json(nullptr);
        j["stop_reason"] = setup_.stop_reason;
        j["warnings"] = setup_.warnings;
        j["start_time"] = detail::iso8601(setup_.start_time);
        j["wall_seconds"] = setup_.wall_seconds;
        if (has_best()) {
            const auto& b = best();
            j["best"] = {{"TrainingJobName", job_name(b.id)}, {"TrialId", b.id}, {"FinalObjectiveValue", b.objective},
                         {"hyperparameters", b.config.to_json()}};
        } else {
            j["best"] = nullptr;
        }
        if (!setup_.parent_bests.empty()) {
            json parents = json::array();
            for (const auto& p : setup_.parent_bests)
                parents.push_back({{"parent", p.parent}, {"TrialId", p.trial},
                                   {"FinalObjectiveValue", detail::number_or_null(p.objective)},
                                   {"hyperparameters", p.config.empty() ? json(nullptr) : json(p.config.to_json())}});
            j["warm_start_parents"] = std::move(parents);
            if (has_overall_best()) {
                auto o = overall_best();
                j["overall_best"] = {{"parent", o.parent ? json(*o.parent) : json(nullptr)}, {"TrialId", o.trial},
                                     {"FinalObjectiveValue", o.objective}, {"hyperparameters", o.config.to_json()}};
            }
        }
        auto c = cost();
        j["cost"] = {{"billable_seconds", c.billable_seconds},
                     {"billable_seconds_without_early_stopping", c.billable_seconds_without_early_stopping},
                     {"busy_seconds", c.busy_seconds},
                     {"wall_seconds", c.wall_seconds},
                     {"sequential_seconds", c.sequential_seconds},
                     {"utilisation", c.utilisation},
                     {"resource_used", c.resource_used},
                     {"full_resource", c.full_resource}};
        json trials = json::array();
        for (const auto& t : trials_) {
            json r;
            r["TrainingJobName"] = job_name(t.id);
            r["TrainingJobStatus"] = std::string(to_string(t.status));
            r["FinalObjectiveValue"] = detail::number_or_null(t.objective);
            r["TrainingStartTime"] = detail::iso8601(t.start_time());
            r["TrainingEndTime"] = detail::iso8601(t.end_time());
            r["TrainingElapsedTimeSeconds"] = t.elapsed_seconds;
            r["TrialId"] = t.id;
            r["hyperparameters"] = t.config.to_json();
            r["ResourceUsed"] = t.resource_used;
            r["BillableSeconds"] = t.billable_seconds;
            r["Retries"] = t.retries;
            r["FailureReason"] = t.failure_reason;
            json curve = json::array();
            for (const auto& p : t.curve) curve.push_back({{"step", p.step}, {"value", p.value}, {"seconds", p.seconds}});
            r["curve"] = std::move(curve);
            json segments = json::array();
            for (const auto& g : t.segments)
                segments.push_back({{"start", detail::iso8601(g.start)}, {"end", detail::iso8601(g.end)}, {"worker", g.worker}});
            r["segments"] = std::move(segments);
            json decisions = json::array();
            for (const auto& d : t.decisions) {
                decisions.push_back({{"kind", std::string(to_string(d.kind))},
                                     {"bracket", d.bracket},
                                     {"rung", d.rung},
                                     {"resource", d.resource},
                                     {"value", detail::number_or_null(value_of(d.loss))},
                                     {"threshold", detail::number_or_null(value_of(d.threshold))},
                                     {"peers", d.peers},
                                     {"reason", d.reason},
                                     {"explanation", describe(d)}});
            }
            r["decisions"] = std::move(decisions);
            trials.push_back(std::move(r));
        }
        j["trials"] = std::move(trials);
        return j;
    }

    /// Strategies see losses; this turns one back into the objective's sign.
    [[nodiscard]] double value_of(double loss) const noexcept {
        return setup_.direction == Direction::Maximize ? -loss : loss;
    }

    [[nodiscard]] static std::string job_name(TrialId id) { return fmt::format("trial-{:04}", id); }

private:
    [[nodiscard]] const TrialRecord* find_best(bool completed_only) const noexcept {
        const TrialRecord* found = nullptr;
        for (const auto& t : trials_) {
            if (!t.has_objective() || (completed_only && t.status != TrialStatus::Completed)) continue;
            if (!found || better(t.objective, found->objective)) found = &t;
        }
        return found;
    }

    [[nodiscard]] bool better(double a, double b) const noexcept {
        return setup_.direction == Direction::Maximize ? a > b : a < b;
    }

    Setup setup_;
    std::vector<TrialRecord> trials_;
};

}  // namespace hypertune
