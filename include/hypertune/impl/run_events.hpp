// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/run_events.hpp>: the journal's JSON form of each run event.
// Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/run_events.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/journal.hpp>
#include <hypertune/detail/config_json.hpp>
#include <hypertune/detail/json_value.hpp>
#include <fmt/format.h>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/run_events.hpp> is compiled into hypertune::compiled: include <hypertune/run_events.hpp>"
#endif

namespace hypertune {
namespace detail {

namespace run_event_fields {

/// An integer (of field `key`); a real number is refused, not converted (out of range, that is undefined).
template <class T>
T integer_of(const JsonValue& v, const char* key) {
    if (!v.is_integer()) throw IoError(fmt::format("'{}' must be an integer, got {}", key, v.dump()));
    try {
        return v.as_integer<T>();
    } catch (const JsonError&) {
        throw IoError(fmt::format("'{}': integer {} out of range", key, v.dump()));
    }
}

template <class T>
T integer_at(const JsonValue& j, const char* key) {
    return integer_of<T>(j.at(key), key);
}

template <class T>
T integer_or(const JsonValue& j, const char* key, T fallback) {
    return j.contains(key) ? integer_at<T>(j, key) : fallback;
}

}  // namespace run_event_fields

HYPERTUNE_INLINE JsonValue to_json(const RunEvent& event) {
    struct Writer {
        JsonValue operator()(const RunStarted& e) const {
            JsonValue j = JsonValue::object({{"event", "run_started"},
                                             {"format", journal_format_written},
                                             {"time", e.time},
                                             {"metric", e.metric},
                                             {"direction", to_string(e.direction)},
                                             {"strategy", e.strategy},
                                             {"seed", e.seed},
                                             {"max_jobs", e.max_jobs},
                                             {"max_parallel_jobs", e.max_parallel_jobs},
                                             {"instances_per_trial", e.instances_per_trial},
                                             {"max_resource", e.max_resource ? JsonValue(*e.max_resource) : JsonValue()},
                                             {"space", space_json(e.space)}});
            if (!e.objectives.empty()) j["objectives"] = objectives_to_json(e.objectives);
            if (!e.constraints.empty()) j["constraints"] = constraints_to_json(e.constraints);
            if (!e.instances_parameter.empty()) j["instances_parameter"] = e.instances_parameter;
            if (!e.settings.empty()) {
                JsonValue settings = JsonValue::object();
                for (const auto& [name, value] : e.settings) settings[name] = value;
                j["settings"] = std::move(settings);
            }
            return j;
        }
        JsonValue operator()(const RunResumed& e) const {
            return JsonValue::object({{"event", "run_resumed"},
                                      {"time", e.time},
                                      {"trials", e.trials},
                                      {"in_flight", e.in_flight},
                                      {"max_jobs", e.max_jobs},
                                      {"max_parallel_jobs", e.max_parallel_jobs}});
        }
        JsonValue operator()(const TrialStarted& e) const {
            return JsonValue::object({{"event", "trial_started"},
                                      {"time", e.time},
                                      {"trial", e.trial},
                                      {"config", config_json(e.config)},
                                      {"budget", e.budget},
                                      {"resume_from", e.resume_from},
                                      {"worker", e.worker},
                                      {"rerun", e.rerun}});
        }
        JsonValue operator()(const TrialReported& e) const {
            JsonValue j = JsonValue::object({{"event", "report"},
                                             {"time", e.time},
                                             {"trial", e.trial},
                                             {"step", e.step},
                                             {"value", e.value},
                                             {"seconds", e.seconds}});
            if (!e.values.empty()) j["values"] = numbers_or_nulls(e.values);
            return j;
        }
        JsonValue operator()(const TrialDecided& e) const {
            const DecisionRecord& d = e.decision;
            return JsonValue::object({{"event", "decision"},
                                      {"time", e.time},
                                      {"trial", d.trial},
                                      {"kind", to_string(d.kind)},
                                      {"bracket", d.bracket},
                                      {"rung", d.rung},
                                      {"resource", d.resource},
                                      {"loss", JsonValue::number_or_null(d.loss)},
                                      {"threshold", JsonValue::number_or_null(d.threshold)},
                                      {"peers", d.peers},
                                      {"reason", d.reason}});
        }
        JsonValue operator()(const TrialRetried& e) const {
            return JsonValue::object({{"event", "trial_retried"},
                                      {"time", e.time},
                                      {"trial", e.trial},
                                      {"attempt", e.attempt},
                                      {"keep_through", e.keep_through},
                                      {"reason", e.reason}});
        }
        JsonValue operator()(const TrialEnded& e) const {
            JsonValue j = JsonValue::object({{"event", "trial_ended"},
                                             {"time", e.time},
                                             {"trial", e.trial},
                                             {"status", to_string(e.status)},
                                             {"objective", JsonValue::number_or_null(e.objective)},
                                             {"resource", e.resource},
                                             {"failure", e.failure},
                                             {"retries", e.retries}});
            if (!e.values.empty()) j["values"] = numbers_or_nulls(e.values);
            if (e.waited_seconds > 0.0) j["waited"] = e.waited_seconds;
            if (e.out_of_time) j["out_of_time"] = true;
            if (e.started_over) j["started_over"] = true;
            return j;
        }
        JsonValue operator()(const RunWarned& e) const {
            JsonValue j = JsonValue::object({{"event", "warning"}, {"time", e.time}, {"message", e.message}});
            if (e.of_run_end) j["of_run_end"] = true;
            return j;
        }
        JsonValue operator()(const RunWarmStarted& e) const {
            JsonValue parents = JsonValue::array();
            for (const auto& p : e.parents)
                parents.push_back(JsonValue::object({{"parent", p.parent},
                                                     {"trial", p.trial},
                                                     {"objective", JsonValue::number_or_null(p.objective)},
                                                     {"space", space_json(SearchSpace::of(p.config))},
                                                     {"config", config_json(p.config)}}));
            JsonValue j = JsonValue::object({{"event", "warm_start"}, {"time", e.time}, {"parents", std::move(parents)}});
            if (e.type) j["type"] = std::string(to_string(*e.type));
            if (!e.fingerprint.empty()) {
                j["parent_runs"] = e.parent_runs;
                j["results"] = e.results;
                j["fingerprint"] = e.fingerprint;
            }
            if (!e.used.empty()) {
                JsonValue used = JsonValue::array();
                for (const auto& [parent, trial] : e.used) {
                    JsonValue pair = JsonValue::array();
                    pair.push_back(parent);
                    pair.push_back(trial);
                    used.push_back(std::move(pair));
                }
                j["used"] = std::move(used);
            }
            return j;
        }
        JsonValue operator()(const RunEnded& e) const {
            return JsonValue::object({{"event", "run_ended"}, {"time", e.time}, {"reason", e.reason}});
        }
    };
    return std::visit(Writer{}, event);
}

HYPERTUNE_INLINE RunEvent event_from_json(const JsonValue& e, const SearchSpace& space) {
    using run_event_fields::integer_at;
    using run_event_fields::integer_of;
    using run_event_fields::integer_or;
    std::string kind;
    try {
        kind = e.at("event").as_string();
        const double time = e.at("time").as_double();
        if (kind == "run_started") {
            RunStarted s;
            s.time = time;
            s.space = space_from_json(e.at("space"));
            s.metric = e.at("metric").as_string();
            s.direction = e.at("direction").as_string() == "Maximize" ? Direction::Maximize : Direction::Minimize;
            s.strategy = e.at("strategy").as_string();
            s.seed = integer_at<std::uint64_t>(e, "seed");
            s.max_jobs = integer_or<std::size_t>(e, "max_jobs", std::size_t{0});
            s.max_parallel_jobs = integer_at<std::size_t>(e, "max_parallel_jobs");
            s.instances_per_trial = integer_at<int>(e, "instances_per_trial");
            if (!e.at("max_resource").is_null()) s.max_resource = integer_at<Resource>(e, "max_resource");
            if (e.contains("objectives")) s.objectives = objectives_from_json(e.at("objectives"));
            if (e.contains("constraints")) s.constraints = constraints_from_json(e.at("constraints"));
            s.instances_parameter = e.string_or("instances_parameter", "");
            if (const JsonValue* settings = e.find("settings")) {
                if (!settings->is_object()) throw IoError("'settings' must be an object");
                for (std::size_t i = 0; i < settings->size(); ++i)
                    s.settings.emplace_back(settings->keys()[i], settings->field(i).as_string());
            }
            return s;
        }
        if (kind == "run_resumed")
            return RunResumed{time, integer_or<std::size_t>(e, "trials", std::size_t{0}),
                              integer_or<std::size_t>(e, "in_flight", std::size_t{0}),
                              integer_or<std::size_t>(e, "max_jobs", std::size_t{0}),
                              integer_or<std::size_t>(e, "max_parallel_jobs", std::size_t{0})};
        if (kind == "trial_started") {
            if (e.contains("rerun") && !e.at("rerun").is_boolean()) throw IoError("'rerun' must be true or false");
            return TrialStarted{time,
                                integer_at<TrialId>(e, "trial"),
                                config_from_json(space, e.at("config")),
                                integer_at<Resource>(e, "budget"),
                                integer_at<Resource>(e, "resume_from"),
                                integer_or<std::size_t>(e, "worker", std::size_t{0}),
                                e.boolean_or("rerun", false)};
        }
        if (kind == "report") {
            TrialReported reported{time, integer_at<TrialId>(e, "trial"), integer_at<Resource>(e, "step"),
                                   e.at("value").as_double(), e.number_or("seconds", 0.0), {}};
            reported.values = numbers_from(e, "values");
            return reported;
        }
        if (kind == "decision")
            return TrialDecided{time,
                                DecisionRecord{integer_at<TrialId>(e, "trial"),
                                               decision_kind_from(e.at("kind").as_string()),
                                               integer_or<int>(e, "bracket", -1),
                                               integer_or<int>(e, "rung", -1),
                                               integer_or<Resource>(e, "resource", Resource{0}),
                                               number_from(e.at("loss")),
                                               number_from(e.at("threshold")),
                                               integer_or<std::size_t>(e, "peers", std::size_t{0}),
                                               e.string_or("reason", "")}};
        if (kind == "trial_retried")
            return TrialRetried{time, integer_at<TrialId>(e, "trial"), integer_or<int>(e, "attempt", 0),
                                integer_at<Resource>(e, "keep_through"), e.string_or("reason", "")};
        if (kind == "trial_ended") {
            const auto retries = integer_or<int>(e, "retries", 0);
            if (retries < 0) throw IoError(fmt::format("retries {} out of range", retries));
            TrialEnded ended{time,
                             integer_at<TrialId>(e, "trial"),
                             status_from(e.at("status").as_string()),
                             number_from(e.at("objective")),
                             integer_at<Resource>(e, "resource"),
                             e.string_or("failure", ""),
                             retries};
            ended.values = numbers_from(e, "values");
            ended.waited_seconds = e.number_or("waited", 0.0);
            ended.out_of_time = e.boolean_or("out_of_time", false);
            ended.started_over = e.boolean_or("started_over", false);
            if (!(ended.waited_seconds >= 0.0))
                throw IoError(fmt::format("trial {}: waited {} out of range", ended.trial, ended.waited_seconds));
            return ended;
        }
        if (kind == "warning") return RunWarned{time, e.at("message").as_string(), e.boolean_or("of_run_end", false)};
        if (kind == "warm_start") {
            RunWarmStarted w;
            w.time = time;
            for (const auto& p : e.at("parents").elements())
                w.parents.push_back({integer_at<std::size_t>(p, "parent"), integer_at<TrialId>(p, "trial"),
                                     number_from(p.at("objective")),
                                     config_from_json(space_from_json(p.at("space")), p.at("config"))});
            w.parent_runs = integer_or<std::size_t>(e, "parent_runs", 0);
            w.results = integer_or<std::size_t>(e, "results", 0);
            w.fingerprint = e.string_or("fingerprint", "");
            if (const std::string type = e.string_or("type", ""); !type.empty()) {
                if (type == to_string(WarmStartType::IdenticalDataAndAlgorithm))
                    w.type = WarmStartType::IdenticalDataAndAlgorithm;
                else if (type == to_string(WarmStartType::TransferLearning))
                    w.type = WarmStartType::TransferLearning;
                else
                    throw IoError(fmt::format("warm_start: unknown type '{}' (IdenticalDataAndAlgorithm or "
                                              "TransferLearning)",
                                              type));
            }
            if (e.contains("used"))
                for (const auto& pair : e.at("used").elements()) {
                    const auto& both = pair.elements();
                    if (both.size() != 2) throw IoError("warm_start: 'used' holds a pair that is not [parent, trial]");
                    w.used.emplace_back(integer_of<std::size_t>(both[0], "used"), integer_of<TrialId>(both[1], "used"));
                }
            return w;
        }
        if (kind == "run_ended") return RunEnded{time, e.string_or("reason", "")};
        throw IoError(fmt::format("unknown event '{}'", kind));
    } catch (const JsonError& x) {
        throw IoError(fmt::format("event '{}': {}", kind, x.what()));
    } catch (const InvalidArgument& x) {
        throw IoError(fmt::format("event '{}': {}", kind, x.what()));
    }
}

}  // namespace detail
}  // namespace hypertune
