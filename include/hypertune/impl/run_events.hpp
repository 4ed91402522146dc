// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/run_events.hpp>: the journal's JSON form of each run event.
// Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/run_events.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/journal.hpp>
#include <hypertune/json.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/run_events.hpp> is compiled into hypertune::compiled: include <hypertune/run_events.hpp>"
#endif

namespace hypertune {
namespace detail {

HYPERTUNE_INLINE json objectives_to_json(const std::vector<Metric>& objectives) {
    json out = json::array();
    for (const auto& m : objectives) out.push_back({{"name", m.name}, {"direction", std::string(to_string(m.direction))}});
    return out;
}

HYPERTUNE_INLINE json constraints_to_json(const std::vector<Constraint>& constraints) {
    json out = json::array();
    for (const auto& c : constraints)
        out.push_back({{"metric", c.metric}, {"kind", std::string(to_string(c.kind))}, {"bound", c.bound}});
    return out;
}

HYPERTUNE_INLINE std::vector<Metric> objectives_from_json(const json& j) {
    std::vector<Metric> out;
    for (const auto& m : j.get_ref<const json::array_t&>()) {
        const auto direction = m.at("direction").get<std::string>();
        if (direction != "Minimize" && direction != "Maximize")
            throw IoError(fmt::format("objective direction '{}' is neither Minimize nor Maximize", direction));
        out.push_back({m.at("name").get<std::string>(), direction == "Maximize" ? Direction::Maximize : Direction::Minimize});
    }
    return out;
}

HYPERTUNE_INLINE std::vector<Constraint> constraints_from_json(const json& j) {
    std::vector<Constraint> out;
    for (const auto& c : j.get_ref<const json::array_t&>()) {
        const auto kind = c.at("kind").get<std::string>();
        if (kind != "<=" && kind != ">=") throw IoError(fmt::format("constraint kind '{}' is neither <= nor >=", kind));
        out.push_back({c.at("metric").get<std::string>(), kind == "<=" ? Constraint::Kind::AtMost : Constraint::Kind::AtLeast,
                       c.at("bound").get<double>()});
    }
    return out;
}

HYPERTUNE_INLINE json to_json(const RunEvent& event) {
    struct Writer {
        json operator()(const RunStarted& e) const {
            json j = {{"event", "run_started"},
                    {"format", journal_format_written},
                    {"time", e.time},
                    {"metric", e.metric},
                    {"direction", std::string(to_string(e.direction))},
                    {"strategy", e.strategy},
                    {"seed", e.seed},
                    {"max_jobs", e.max_jobs},
                    {"max_parallel_jobs", e.max_parallel_jobs},
                    {"instances_per_trial", e.instances_per_trial},
                    {"max_resource", e.max_resource ? json(*e.max_resource) : json(nullptr)},
                    {"space", e.space.to_json()}};
            if (!e.objectives.empty()) j["objectives"] = objectives_to_json(e.objectives);
            if (!e.constraints.empty()) j["constraints"] = constraints_to_json(e.constraints);
            if (!e.instances_parameter.empty()) j["instances_parameter"] = e.instances_parameter;
            return j;
        }
        json operator()(const RunResumed& e) const {
            return {{"event", "run_resumed"}, {"time", e.time}, {"trials", e.trials}, {"in_flight", e.in_flight}};
        }
        json operator()(const TrialStarted& e) const {
            return {{"event", "trial_started"}, {"time", e.time},          {"trial", e.trial},
                    {"config", e.config.to_json()}, {"budget", e.budget}, {"resume_from", e.resume_from},
                    {"worker", e.worker},           {"rerun", e.rerun}};
        }
        json operator()(const TrialReported& e) const {
            json j = {{"event", "report"}, {"time", e.time},   {"trial", e.trial},
                      {"step", e.step},    {"value", e.value}, {"seconds", e.seconds}};
            if (!e.values.empty()) j["values"] = numbers_or_nulls(e.values);
            return j;
        }
        json operator()(const TrialDecided& e) const {
            const DecisionRecord& d = e.decision;
            return {{"event", "decision"},
                    {"time", e.time},
                    {"trial", d.trial},
                    {"kind", std::string(to_string(d.kind))},
                    {"bracket", d.bracket},
                    {"rung", d.rung},
                    {"resource", d.resource},
                    {"loss", number_or_null(d.loss)},
                    {"threshold", number_or_null(d.threshold)},
                    {"peers", d.peers},
                    {"reason", d.reason}};
        }
        json operator()(const TrialRetried& e) const {
            return {{"event", "trial_retried"}, {"time", e.time},
                    {"trial", e.trial},         {"attempt", e.attempt},
                    {"keep_through", e.keep_through}, {"reason", e.reason}};
        }
        json operator()(const TrialEnded& e) const {
            json j = {{"event", "trial_ended"},
                    {"time", e.time},
                    {"trial", e.trial},
                    {"status", std::string(to_string(e.status))},
                    {"objective", number_or_null(e.objective)},
                    {"resource", e.resource},
                    {"failure", e.failure},
                    {"retries", e.retries}};
            if (!e.values.empty()) j["values"] = numbers_or_nulls(e.values);
            if (e.waited_seconds > 0.0) j["waited"] = e.waited_seconds;
            return j;
        }
        json operator()(const RunWarned& e) const {
            return {{"event", "warning"}, {"time", e.time}, {"message", e.message}};
        }
        json operator()(const RunWarmStarted& e) const {
            json parents = json::array();
            for (const auto& p : e.parents)
                parents.push_back({{"parent", p.parent},
                                   {"trial", p.trial},
                                   {"objective", number_or_null(p.objective)},
                                   {"space", SearchSpace::of(p.config).to_json()},
                                   {"config", p.config.to_json()}});
            return {{"event", "warm_start"}, {"time", e.time}, {"parents", std::move(parents)}};
        }
        json operator()(const RunEnded& e) const {
            return {{"event", "run_ended"}, {"time", e.time}, {"reason", e.reason}};
        }
    };
    return std::visit(Writer{}, event);
}

HYPERTUNE_INLINE RunEvent event_from_json(const json& e, const SearchSpace& space) {
    std::string kind;
    try {
        kind = e.at("event").get<std::string>();
        const double time = e.at("time").get<double>();
        if (kind == "run_started") {
            RunStarted s;
            s.time = time;
            s.space = space_from_json(e.at("space"));
            s.metric = e.at("metric").get<std::string>();
            s.direction = e.at("direction").get<std::string>() == "Maximize" ? Direction::Maximize : Direction::Minimize;
            s.strategy = e.at("strategy").get<std::string>();
            s.seed = integer_at<std::uint64_t>(e, "seed");
            s.max_jobs = integer_or<std::size_t>(e, "max_jobs", std::size_t{0});
            s.max_parallel_jobs = integer_at<std::size_t>(e, "max_parallel_jobs");
            s.instances_per_trial = integer_at<int>(e, "instances_per_trial");
            if (!e.at("max_resource").is_null()) s.max_resource = integer_at<Resource>(e, "max_resource");
            if (e.contains("objectives")) s.objectives = objectives_from_json(e.at("objectives"));
            if (e.contains("constraints")) s.constraints = constraints_from_json(e.at("constraints"));
            if (e.contains("instances_parameter")) s.instances_parameter = e.at("instances_parameter").get<std::string>();
            return s;
        }
        if (kind == "run_resumed")
            return RunResumed{time, integer_or<std::size_t>(e, "trials", std::size_t{0}),
                              integer_or<std::size_t>(e, "in_flight", std::size_t{0})};
        if (kind == "trial_started") {
            if (e.contains("rerun") && !e["rerun"].is_boolean()) throw IoError("'rerun' must be true or false");
            return TrialStarted{time,
                                integer_at<TrialId>(e, "trial"),
                                space.from_json(e.at("config")),
                                integer_at<Resource>(e, "budget"),
                                integer_at<Resource>(e, "resume_from"),
                                integer_or<std::size_t>(e, "worker", std::size_t{0}),
                                e.value("rerun", false)};
        }
        if (kind == "report") {
            TrialReported reported{time, integer_at<TrialId>(e, "trial"), integer_at<Resource>(e, "step"),
                                   e.at("value").get<double>(), e.value("seconds", 0.0), {}};
            reported.values = numbers_from(e, "values");
            return reported;
        }
        if (kind == "decision")
            return TrialDecided{time,
                                DecisionRecord{integer_at<TrialId>(e, "trial"),
                                               decision_kind_from(e.at("kind").get<std::string>()),
                                               integer_or<int>(e, "bracket", -1),
                                               integer_or<int>(e, "rung", -1),
                                               integer_or<Resource>(e, "resource", Resource{0}),
                                               number_from(e.at("loss")),
                                               number_from(e.at("threshold")),
                                               integer_or<std::size_t>(e, "peers", std::size_t{0}),
                                               e.value("reason", "")}};
        if (kind == "trial_retried")
            return TrialRetried{time, integer_at<TrialId>(e, "trial"), integer_or<int>(e, "attempt", 0),
                                integer_at<Resource>(e, "keep_through"), e.value("reason", "")};
        if (kind == "trial_ended") {
            const auto retries = integer_or<int>(e, "retries", 0);
            if (retries < 0) throw IoError(fmt::format("retries {} out of range", retries));
            TrialEnded ended{time,
                             integer_at<TrialId>(e, "trial"),
                             status_from(e.at("status").get<std::string>()),
                             number_from(e.at("objective")),
                             integer_at<Resource>(e, "resource"),
                             e.value("failure", ""),
                             retries};
            ended.values = numbers_from(e, "values");
            ended.waited_seconds = e.value("waited", 0.0);
            if (!(ended.waited_seconds >= 0.0))
                throw IoError(fmt::format("trial {}: waited {} out of range", ended.trial, ended.waited_seconds));
            return ended;
        }
        if (kind == "warning") return RunWarned{time, e.at("message").get<std::string>()};
        if (kind == "warm_start") {
            RunWarmStarted w{time, {}};
            for (const auto& p : e.at("parents"))
                w.parents.push_back({integer_at<std::size_t>(p, "parent"), integer_at<TrialId>(p, "trial"),
                                     number_from(p.at("objective")),
                                     space_from_json(p.at("space")).from_json(p.at("config"))});
            return w;
        }
        if (kind == "run_ended") return RunEnded{time, e.value("reason", "")};
        throw IoError(fmt::format("unknown event '{}'", kind));
    } catch (const json::exception& x) {
        throw IoError(fmt::format("event '{}': {}", kind, x.what()));
    } catch (const InvalidArgument& x) {
        throw IoError(fmt::format("event '{}': {}", kind, x.what()));
    }
}

}  // namespace detail
}  // namespace hypertune
