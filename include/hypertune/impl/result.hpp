// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/result.hpp>: the text, CSV and JSON forms of a result.
// Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/result.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/detail/config_json.hpp>
#include <hypertune/detail/json_value.hpp>
#include <hypertune/detail/csv.hpp>
#include <hypertune/detail/file.hpp>
#include <hypertune/pareto.hpp>
#include <fmt/format.h>
#include <utility>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/result.hpp> is compiled into hypertune::compiled: include <hypertune/result.hpp>"
#endif

namespace hypertune {

HYPERTUNE_INLINE std::optional<double> Result::metric(const TrialRecord& t, std::string_view name) const {
    if (t.values.empty()) {
        if (name == setup_.metric && t.has_objective()) return t.objective;
        return std::nullopt;
    }
    const auto names = metric_names();
    for (std::size_t i = 0; i < names.size() && i < t.values.size(); ++i)
        if (names[i] == name) return t.values[i];
    return std::nullopt;
}

HYPERTUNE_INLINE std::vector<double> Result::losses(const TrialRecord& t) const {
    if (!t.has_objective()) return {};
    const auto objs = objectives();
    if (t.values.empty()) return {objs.front().direction == Direction::Maximize ? -t.objective : t.objective};
    return objective_losses(objs, t.values);
}

HYPERTUNE_INLINE std::vector<TrialRecord> Result::pareto_front() const {
    const auto objs = objectives();
    std::vector<const TrialRecord*> candidates;
    std::vector<std::vector<double>> points;
    for (const auto& t : trials_) {
        if (t.status != TrialStatus::Completed || !t.feasible || !t.has_objective()) continue;
        // objectives() once for the run, not once per trial as losses(t) would.
        auto l = t.values.empty() ? std::vector<double>{objs.front().direction == Direction::Maximize ? -t.objective
                                                                                                    : t.objective}
                                  : objective_losses(objs, t.values);
        if (l.size() != objs.size()) continue;
        candidates.push_back(&t);
        points.push_back(std::move(l));
    }
    const auto ranks = non_dominated_ranks(points);
    std::vector<std::size_t> front;
    for (std::size_t i = 0; i < candidates.size(); ++i)
        if (ranks[i] == 0) front.push_back(i);
    std::stable_sort(front.begin(), front.end(), [&](std::size_t a, std::size_t b) { return points[a] < points[b]; });
    std::vector<TrialRecord> out;
    for (std::size_t i : front) out.push_back(*candidates[i]);
    return out;
}

HYPERTUNE_INLINE double Result::hypervolume(const std::vector<double>& reference) const {
    const auto objs = objectives();
    if (reference.size() != objs.size())
        throw InvalidArgument(fmt::format("Result::hypervolume: the reference point has {} values, the run {} objective{}",
                                          reference.size(), objs.size(), objs.size() == 1 ? "" : "s"));
    std::vector<double> ref;
    for (std::size_t i = 0; i < objs.size(); ++i)
        ref.push_back(objs[i].direction == Direction::Maximize ? -reference[i] : reference[i]);
    std::vector<std::vector<double>> points;
    for (const auto& t : pareto_front()) points.push_back(losses(t));
    return hypertune::hypervolume(points, ref);
}

HYPERTUNE_INLINE std::string Result::status_counts() const {
    const auto early = static_cast<std::size_t>(std::count_if(trials_.begin(), trials_.end(), stopped_early));
    const std::size_t cut = count(TrialStatus::Stopped) - early;
    // A run read from a journal without its end (load_result) has trials running or paused too.
    const std::size_t unfinished = count(TrialStatus::Running) + count(TrialStatus::Paused);
    return fmt::format("{} completed, {} stopped early{}, {} failed{}", count(TrialStatus::Completed), early,
                       cut > 0 ? fmt::format(", {} cut short", cut) : std::string(), count(TrialStatus::Failed),
                       unfinished > 0 ? fmt::format(", {} unfinished", unfinished) : std::string());
}

HYPERTUNE_INLINE std::string Result::summary() const {
    std::string s;
    s += fmt::format("{} trial{} of {} ({} {}): {}{}\n", trials_.size(), trials_.size() == 1 ? "" : "s",
                     setup_.strategy, to_string(setup_.direction),
                     setup_.metric, status_counts(),
                     setup_.stop_reason.empty() ? "" : fmt::format("; ended: {}", setup_.stop_reason));
    const auto objs = objectives();
    const auto names = metric_names();
    const auto values_of = [&](const TrialRecord& t) {
        std::string v;
        for (std::size_t i = 0; i < names.size() && i < t.values.size(); ++i)
            v += fmt::format("{}{} = {:.6g}", i ? ", " : "", names[i], t.values[i]);
        return v;
    };
    if (const std::string constraints = constraints_summary(); !constraints.empty())
        s += fmt::format("constraints {}\n", constraints);
    const std::string best_label = objs.size() > 1 ? fmt::format("best on {}", setup_.metric) : std::string("best");
    if (has_best()) {
        const auto& b = best();
        s += fmt::format("{}: trial {}, {} = {:.6g}, {}\n", best_label, b.id, setup_.metric, b.objective, b.config);
    } else {
        const bool any_value = std::any_of(trials_.begin(), trials_.end(), [](const auto& t) { return t.has_objective(); });
        s += fmt::format("{}: none ({})\n", best_label,
                         any_value ? "no trial met the constraints" : "no trial produced a value");
    }
    if (objs.size() > 1) {
        const auto front = pareto_front();
        std::string dirs;
        for (const auto& m : objs) dirs += fmt::format("{}{} {}", dirs.empty() ? "" : ", ", to_string(m.direction), m.name);
        s += fmt::format("Pareto front ({}): {} trial{}\n", dirs, front.size(), front.size() == 1 ? "" : "s");
        const std::size_t shown = std::min<std::size_t>(front.size(), 10);
        for (std::size_t i = 0; i < shown; ++i)
            s += fmt::format("  trial {}: {}, {}\n", front[i].id, values_of(front[i]), front[i].config);
        if (front.size() > shown) s += fmt::format("  ... and {} more (see to_json)\n", front.size() - shown);
    }
    if (const std::string overall = overall_best_summary(); !overall.empty()) s += fmt::format("overall best {}\n", overall);
    auto c = cost();
    const auto row = [&](std::string_view label, const std::string& now, const std::string& other) {
        s += fmt::format("  {:<26}{:>12}    {}\n", label, now, other);
    };
    row("", "this run", "without early stopping (estimate)");
    row(setup_.instances_parameter.empty()
            ? fmt::format("billable ({} instance{})", setup_.instances_per_trial, setup_.instances_per_trial == 1 ? "" : "s")
            : setup_.instances_per_trial == 1
                ? fmt::format("billable (x {})", setup_.instances_parameter)
                : fmt::format("billable ({} x {})", setup_.instances_per_trial, setup_.instances_parameter),
        detail::human_duration(c.billable_seconds), detail::human_duration(c.billable_seconds_without_early_stopping));
    // Sessions resumed with another max_parallel_jobs: the most of them, as an upper bound.
    const bool alike = detail::same_capacity(c, setup_.max_parallel_jobs);
    row(fmt::format("wall time ({}{} parallel)", alike ? "" : "up to ", setup_.max_parallel_jobs),
        detail::human_duration(c.wall_seconds),
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

HYPERTUNE_INLINE std::string Result::constraints_summary() const {
    if (setup_.constraints.empty()) return {};
    std::size_t with_values = 0, feasible = 0;
    for (const auto& t : trials_)
        if (t.has_objective()) {
            ++with_values;
            feasible += t.feasible ? 1 : 0;
        }
    std::string bounds;
    for (const auto& c : setup_.constraints)
        bounds += fmt::format("{}{} {} {:.6g}", bounds.empty() ? "" : ", ", c.metric, to_string(c.kind), c.bound);
    return fmt::format("{}: {} of {} trials with values feasible", bounds, feasible, with_values);
}

HYPERTUNE_INLINE std::string Result::overall_best_summary() const {
    if (setup_.parent_bests.empty() || !has_overall_best()) return {};
    auto o = overall_best();
    const std::size_t runs = std::max(setup_.parent_runs, setup_.parent_bests.size());
    const std::string with = runs == setup_.parent_bests.size()
                                 ? fmt::format("with {} warm-start parent run{}", runs, runs == 1 ? "" : "s")
                                 : fmt::format("with {} warm-start parent runs, {} with a best trial this run can use",
                                               runs, setup_.parent_bests.size());
    return o.parent ? fmt::format("({}): parent {} trial {}, {} = {:.6g}, {}", with, *o.parent, o.trial, setup_.metric,
                                  o.objective, o.config)
                    : fmt::format("({}): this run's", with);
}

HYPERTUNE_INLINE std::string Result::describe(const DecisionRecord& d) const {
    // A rung's decision names the rung and its resource; a step's (the median rule's) the step.
    std::string s = d.bracket >= 0 ? fmt::format("{} at bracket {} rung {} (resource {})", to_string(d.kind), d.bracket,
                                                 d.rung, d.resource)
                    : d.rung >= 0  ? fmt::format("{} at rung {} (resource {})", to_string(d.kind), d.rung, d.resource)
                                   : fmt::format("{} at step {}", to_string(d.kind), d.resource);
    if (std::isfinite(d.loss)) s += fmt::format(": {} {:.6g}", setup_.metric, value_of(d.loss));
    if (std::isfinite(d.threshold))
        s += fmt::format(" vs threshold {:.6g} over {} peer{}", value_of(d.threshold), d.peers, d.peers == 1 ? "" : "s");
    if (!d.reason.empty()) s += fmt::format(" ({})", d.reason);
    return s;
}

HYPERTUNE_INLINE std::string Result::to_csv() const {
    // Separators are appended one by one: `"," + field` makes GCC 12 warn (-Wrestrict, a false
    // positive) in every program that calls to_csv with -O3 -Wall.
    std::string s;
    auto column = [&](std::string_view name) {
        if (!s.empty()) s += ',';
        s += name;
    };
    // A run with several objectives or constraints: a column per metric, then whether the trial
    // is feasible and on the Pareto front, before the hyperparameters.
    const auto objs = objectives();
    const bool has_metric_columns = objs.size() > 1 || !setup_.constraints.empty();
    const auto names = has_metric_columns ? metric_names() : std::vector<std::string>{};
    std::vector<TrialId> front;
    if (objs.size() > 1)
        for (const auto& t : pareto_front()) front.push_back(t.id);
    for (auto name : detail::csv_columns_before_parameters) column(name);
    for (const auto& n : names) column(detail::csv_field(n));
    if (!setup_.constraints.empty()) column(detail::csv_feasible_column);
    if (objs.size() > 1) column(detail::csv_pareto_column);
    for (const auto& n : setup_.parameter_names) column(detail::csv_field(n));
    for (auto name : detail::csv_columns_after_parameters) column(name);
    s += '\n';
    for (const auto& t : trials_) {
        s += fmt::format("{},{},{},{},{},{}", detail::csv_field(job_name(t.id)), to_string(t.status),
                         t.has_objective() ? fmt::format("{}", t.objective) : "", detail::iso8601(t.start_time()),
                         detail::iso8601(t.end_time()), t.elapsed_seconds);
        for (std::size_t i = 0; i < names.size(); ++i) {
            s += ',';
            if (i < t.values.size() && std::isfinite(t.values[i])) s += fmt::format("{}", t.values[i]);
        }
        if (!setup_.constraints.empty()) s += t.has_objective() ? (t.feasible ? ",True" : ",False") : ",";
        if (objs.size() > 1) s += std::find(front.begin(), front.end(), t.id) != front.end() ? ",True" : ",False";
        for (std::size_t i = 0; i < t.config.size(); ++i) {
            s += ',';
            s += detail::csv_field(format_value(t.config.value(i)));
        }
        s += fmt::format(",{},{},{},{},{}\n", t.id, t.resource_used, t.billable_seconds, t.retries,
                         detail::csv_field(t.failure_reason));
    }
    return s;
}

HYPERTUNE_INLINE void Result::to_json(const std::string& path) const {
    // Written trial by trial: the document of a run whose trainers report every minibatch, as one
    // JSON tree, took about 0.9 KB a curve point (1.9 GB for 2 million, to write 250 MB). A failure
    // reason may quote a trainer's output, which need not be UTF-8: the writer replaces what is not,
    // never throws. The text is result_json(*this).dump(2), byte for byte.
    const detail::ResultJson parts(*this);
    const detail::JsonValue head = parts.head();
    detail::OutputFile file(path, "JSON file");
    std::string out = "{";
    for (std::size_t i = 0; i < head.keys().size(); ++i) {
        out += "\n  ";
        detail::JsonValue(head.keys()[i]).dump_to(out, 2, 1);
        out += ": ";
        head.field(i).dump_to(out, 2, 1);
        out += ',';
    }
    out += "\n  \"trials\": [";
    for (std::size_t k = 0; k < trials_.size(); ++k) {
        out += k == 0 ? "\n    " : ",\n    ";
        parts.trial(trials_[k]).dump_to(out, 2, 2);
        if (out.size() >= (1u << 20)) file.write(std::exchange(out, std::string()));
    }
    out += trials_.empty() ? "]\n}\n" : "\n  ]\n}\n";
    file.write(out);
    file.close();
}

namespace detail {

HYPERTUNE_INLINE ResultJson::ResultJson(const Result& result)
    : result_(result), names_(result.metric_names()), multi_(result.objectives().size() > 1) {
    if (multi_)
        for (const auto& t : result.pareto_front()) front_.push_back(t.id);
}

HYPERTUNE_INLINE JsonValue ResultJson::head() const {
    const Result& result = result_;
    const Result::Setup& setup = result.setup();
    auto number_or_null = [](double x) { return JsonValue::number_or_null(x); };
    auto strings = [](const std::vector<std::string>& xs) {
        JsonValue out = JsonValue::array();
        for (const auto& x : xs) out.push_back(x);
        return out;
    };
    auto optional_integer = [](const auto& x) { return x ? JsonValue(*x) : JsonValue(); };
    JsonValue j = JsonValue::object();
    j["metric"] = setup.metric;
    j["direction"] = to_string(setup.direction);
    if (multi_) j["objectives"] = objectives_to_json(result.objectives());
    if (!setup.constraints.empty()) j["constraints"] = constraints_to_json(setup.constraints);
    j["strategy"] = setup.strategy;
    j["seed"] = setup.seed;
    j["max_parallel_jobs"] = setup.max_parallel_jobs;
    j["instances_per_trial"] = setup.instances_per_trial;
    if (!setup.instances_parameter.empty()) j["instances_parameter"] = setup.instances_parameter;
    j["max_resource"] = optional_integer(setup.max_resource);
    j["stop_reason"] = setup.stop_reason;
    j["warnings"] = strings(setup.warnings);
    j["start_time"] = iso8601(setup.start_time);
    j["wall_seconds"] = setup.wall_seconds;
    if (result.has_best()) {
        const auto& b = result.best();
        j["best"] = JsonValue::object({{"TrainingJobName", Result::job_name(b.id)},
                                       {"TrialId", b.id},
                                       {"FinalObjectiveValue", b.objective},
                                       {"hyperparameters", config_json(b.config)}});
    } else {
        j["best"] = JsonValue();
    }
    if (!setup.parent_bests.empty()) {
        JsonValue parents = JsonValue::array();
        for (const auto& p : setup.parent_bests)
            parents.push_back(JsonValue::object({{"parent", p.parent},
                                                 {"TrialId", p.trial},
                                                 {"FinalObjectiveValue", number_or_null(p.objective)},
                                                 {"hyperparameters", p.config.empty() ? JsonValue() : config_json(p.config)}}));
        j["warm_start_parents"] = std::move(parents);
        j["warm_start_parent_runs"] = std::max(setup.parent_runs, setup.parent_bests.size());
        if (result.has_overall_best()) {
            auto o = result.overall_best();
            j["overall_best"] = JsonValue::object({{"parent", optional_integer(o.parent)},
                                                   {"TrialId", o.trial},
                                                   {"FinalObjectiveValue", o.objective},
                                                   {"hyperparameters", config_json(o.config)}});
        }
    }
    auto c = result.cost();
    j["cost"] = JsonValue::object({{"billable_seconds", c.billable_seconds},
                                   {"billable_seconds_without_early_stopping", c.billable_seconds_without_early_stopping},
                                   {"busy_seconds", c.busy_seconds},
                                   {"wall_seconds", c.wall_seconds},
                                   {"worker_seconds", c.worker_seconds},
                                   {"sequential_seconds", c.sequential_seconds},
                                   {"utilisation", c.utilisation},
                                   {"resource_used", c.resource_used},
                                   {"full_resource", c.full_resource}});
    if (multi_) {
        JsonValue ids = JsonValue::array();
        for (const TrialId id : front_) ids.push_back(id);
        j["pareto_front"] = std::move(ids);
    }
    return j;
}

HYPERTUNE_INLINE JsonValue ResultJson::trial(const TrialRecord& t) const {
    const Result::Setup& setup = result_.setup();
    JsonValue r = JsonValue::object();
    r["TrainingJobName"] = Result::job_name(t.id);
    r["TrainingJobStatus"] = to_string(t.status);
    r["FinalObjectiveValue"] = JsonValue::number_or_null(t.objective);
    if (multi_ || !setup.constraints.empty()) {
        JsonValue m = JsonValue::object();
        for (std::size_t i = 0; i < names_.size(); ++i)
            m[names_[i]] = i < t.values.size() ? JsonValue::number_or_null(t.values[i]) : JsonValue();
        r["metrics"] = std::move(m);
    }
    if (!setup.constraints.empty()) r["feasible"] = t.has_objective() ? JsonValue(t.feasible) : JsonValue();
    if (multi_) r["pareto_optimal"] = std::find(front_.begin(), front_.end(), t.id) != front_.end();
    r["TrainingStartTime"] = iso8601(t.start_time());
    r["TrainingEndTime"] = iso8601(t.end_time());
    r["TrainingElapsedTimeSeconds"] = t.elapsed_seconds;
    r["TrialId"] = t.id;
    r["hyperparameters"] = config_json(t.config);
    r["ResourceUsed"] = t.resource_used;
    r["BillableSeconds"] = t.billable_seconds;
    if (t.waited_seconds > 0.0) r["WaitedSeconds"] = t.waited_seconds;
    r["Retries"] = t.retries;
    r["FailureReason"] = t.failure_reason;
    JsonValue curve = JsonValue::array();
    for (const auto& p : t.curve)
        curve.push_back(JsonValue::object({{"step", p.step}, {"value", p.value}, {"seconds", p.seconds}}));
    r["curve"] = std::move(curve);
    JsonValue segments = JsonValue::array();
    for (const auto& g : t.segments)
        segments.push_back(
            JsonValue::object({{"start", iso8601(g.start)}, {"end", iso8601(g.end)}, {"worker", g.worker}}));
    r["segments"] = std::move(segments);
    JsonValue decisions = JsonValue::array();
    for (const auto& d : t.decisions)
        decisions.push_back(JsonValue::object({{"kind", to_string(d.kind)},
                                               {"bracket", d.bracket},
                                               {"rung", d.rung},
                                               {"resource", d.resource},
                                               {"value", JsonValue::number_or_null(result_.value_of(d.loss))},
                                               {"threshold", JsonValue::number_or_null(result_.value_of(d.threshold))},
                                               {"peers", d.peers},
                                               {"reason", d.reason},
                                               {"explanation", result_.describe(d)}}));
    r["decisions"] = std::move(decisions);
    return r;
}

HYPERTUNE_INLINE JsonValue result_json(const Result& result) {
    const ResultJson parts(result);
    JsonValue j = parts.head();
    JsonValue trials = JsonValue::array();
    for (const auto& t : result.trials()) trials.push_back(parts.trial(t));
    j["trials"] = std::move(trials);
    return j;
}

}  // namespace detail

}  // namespace hypertune
