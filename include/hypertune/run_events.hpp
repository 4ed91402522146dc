// SPDX-License-Identifier: MIT
#pragma once
// Run events: everything that happens in a tuning run, as typed values. The live run emits them,
// the journal writes them down (one JSON object per line), and RunState (run_state.hpp) builds the
// run's records from them, the same way for the live run, for resume and for load_result().
// to_json() and event_from_json() below are the one place that knows the journal's field names.
//
// Journal format 2 added trial_retried (a failed attempt whose reports are forgotten before the
// retry). Format 1 journals (no such event) still load.

#include <hypertune/config.hpp>
#include <hypertune/error.hpp>
#include <hypertune/journal.hpp>
#include <hypertune/result.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/strategy.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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
};

/// A session after a crash or a stop picks the run up again.
struct RunResumed {
    double time = 0.0;
    std::size_t trials = 0;     ///< trials the journal held
    std::size_t in_flight = 0;  ///< of those, the ones that run again
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
    double value = 0.0;
    double seconds = 0.0;  ///< since the trial's first start
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
};

/// Something the user should know, kept as a warning of the result.
struct RunWarned {
    double time = 0.0;
    std::string message;
};

/// The best trials of the warm-start parents.
struct RunWarmStarted {
    double time = 0.0;
    std::vector<ParentBest> parents;
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

[[nodiscard]] inline json to_json(const RunEvent& event) {
    struct Writer {
        json operator()(const RunStarted& e) const {
            return {{"event", "run_started"},
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
            return {{"event", "report"}, {"time", e.time},   {"trial", e.trial},
                    {"step", e.step},    {"value", e.value}, {"seconds", e.seconds}};
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
            return {{"event", "trial_ended"},
                    {"time", e.time},
                    {"trial", e.trial},
                    {"status", std::string(to_string(e.status))},
                    {"objective", number_or_null(e.objective)},
                    {"resource", e.resource},
                    {"failure", e.failure},
                    {"retries", e.retries}};
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

/// The event of one journal line. `space` is the run's (from its run_started line): it reads the
/// configurations. Throws IoError naming the event and the field.
[[nodiscard]] inline RunEvent event_from_json(const json& e, const SearchSpace& space) {
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
        if (kind == "report")
            return TrialReported{time, integer_at<TrialId>(e, "trial"), integer_at<Resource>(e, "step"),
                                 e.at("value").get<double>(), e.value("seconds", 0.0)};
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
            return TrialEnded{time,
                              integer_at<TrialId>(e, "trial"),
                              status_from(e.at("status").get<std::string>()),
                              number_from(e.at("objective")),
                              integer_at<Resource>(e, "resource"),
                              e.value("failure", ""),
                              retries};
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
