// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/result.hpp>: the text, CSV and JSON forms of a result.
// Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/result.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/json.hpp>
#include <hypertune/detail/csv.hpp>
#include <hypertune/detail/file.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/result.hpp> is compiled into hypertune::compiled: include <hypertune/result.hpp>"
#endif

namespace hypertune {

HYPERTUNE_INLINE std::string Result::summary() const {
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

HYPERTUNE_INLINE std::string Result::describe(const DecisionRecord& d) const {
    std::string where = d.bracket >= 0 ? fmt::format("bracket {} rung {}", d.bracket, d.rung)
                                       : (d.rung >= 0 ? fmt::format("rung {}", d.rung) : std::string("step"));
    std::string s = fmt::format("{} at {} (resource {})", to_string(d.kind), where, d.resource);
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

HYPERTUNE_INLINE void Result::to_json(const std::string& path) const {
    // A failure reason may quote a trainer's output, which need not be UTF-8: replace, never throw.
    detail::write_whole_file(path, "JSON file",
                             to_json().dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + '\n');
}

HYPERTUNE_INLINE nlohmann::ordered_json Result::to_json() const {
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

}  // namespace hypertune
