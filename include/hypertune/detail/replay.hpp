// SPDX-License-Identifier: MIT
#pragma once
// Resuming a run from its journal, in two steps the Tuner takes:
// - check_same_run(): an existing journal must come from the same search space, strategy (and its
//   settings), seed, metric, max_resource, direction, objectives, constraints, instances per trial
//   and instances parameter; otherwise resuming would mix two different runs.
//   check_same_warm_start(): and the same warm start, or none if it began without one, since the
//   strategy learns from it.
// - replay_journal(): the strategy is given the journal's calls in their order (ask for every new
//   trial, report, tell), which brings it back to the state it had, since strategies are
//   deterministic; its decisions must be the journal's, in the same order (a decision made in ask()
//   is journaled just after the trial_started of the run it starts). Every event is applied to a
//   RunState, the same reducer the live run uses. A decision journaled with no event before it
//   that explains it was made by an ask() that started nothing (the promotion type's Stop of each
//   trial left paused when the run has nothing left to run): the replay asks once more there.
//   Each session's events are replayed with that session's max_jobs (a resume may raise it): at
//   the end of its budget a scheduler decides otherwise than with more trials to come (the
//   promotion type stops the trials left paused, synchronous Hyperband promotes where it would
//   start new trials). The caller gives the strategy this session's budget afterwards.

#include <hypertune/detail/config_json.hpp>
#include <hypertune/detail/json_value.hpp>
#include <hypertune/detail/plain_reports.hpp>
#include <hypertune/error.hpp>
#include <hypertune/journal.hpp>
#include <hypertune/run_events.hpp>
#include <hypertune/run_state.hpp>
#include <hypertune/scheduler.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/warm_start.hpp>

#include <fmt/core.h>

#include <cmath>
#include <deque>
#include <optional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hypertune::detail {

/// The seconds since trial `record`'s open run segment started, at Unix time `now` (NaN: no open
/// segment): IntermediateReport::seconds and, as the run ends, Outcome::seconds. The live run and
/// the replay of its journal both compute it from the journaled times.
[[nodiscard]] inline double open_run_seconds(const TrialRecord* record, double now) noexcept {
    if (record == nullptr || record->segments.empty() || !std::isnan(record->segments.back().end))
        return std::numeric_limits<double>::quiet_NaN();
    return now - record->segments.back().start;
}

/// What the strategy is told of a report of trial `record` (null: unknown) at Unix time `now`: its
/// loss, each objective's loss when the run has several, whether the constrained metrics it
/// carries meet their bounds (NaN: not reported, counted as met), and the seconds since its run
/// segment started. `values` follow `names` (metric_names()), or are empty for a report of a
/// single value. The live run and the replay of its journal compute it from the same journaled
/// times, so a scheduler that learns from the seconds decides alike in both.
[[nodiscard]] inline IntermediateReport intermediate_report(const TrialRecord* record, double now, double loss,
                                                            const std::vector<Metric>& objectives,
                                                            const std::vector<Constraint>& constraints,
                                                            const std::vector<std::string>& names,
                                                            const std::vector<double>& values) {
    IntermediateReport r{loss};
    r.seconds = open_run_seconds(record, now);
    if (values.empty()) return r;
    if (objectives.size() > 1) r.losses = objective_losses(objectives, values);
    for (const Constraint& c : constraints)
        for (std::size_t i = 0; i < names.size() && i < values.size(); ++i)
            if (names[i] == c.metric && !std::isnan(values[i]) && !c.satisfied_by(values[i])) r.feasible = false;
    return r;
}

/// What the strategy is told as trial `e.trial`'s run ends (`e`, the event that journals it), its
/// value as a loss `loss`, the run's seconds `seconds` (open_run_seconds() before the event closes
/// the segment): the live run and the replay of its journal build it here alike.
[[nodiscard]] inline Outcome run_outcome(const TrialEnded& e, double loss, double seconds,
                                         const std::vector<Metric>& objectives,
                                         const std::vector<Constraint>& constraints,
                                         const std::vector<std::string>& names) {
    const bool failed = e.status == TrialStatus::Failed;
    Outcome outcome = failed                                ? Outcome::failed(e.resource)
                      : e.status == TrialStatus::Stopped ? Outcome::stopped(loss, e.resource)
                                                         : Outcome::completed(loss, e.resource);
    if (!failed && objectives.size() > 1) outcome.losses = objective_losses(objectives, e.values);
    outcome.feasible = meets_constraints(constraints, names, e.values);
    if (!failed && !constraints.empty()) outcome.violations = constraint_violations(constraints, names, e.values);
    outcome.seconds = seconds;
    outcome.started_over = e.started_over;
    return outcome;
}

/// Throws InvalidArgument naming the first difference between the journal's run and this one.
inline void check_same_run(const std::string& path, const JsonValue& start, const SearchSpace& space,
                           const std::string& strategy, const Settings& settings, std::uint64_t seed,
                           const std::string& metric,
                           std::optional<Resource> max_resource, Direction direction,
                           const std::vector<Metric>& objectives, const std::vector<Constraint>& constraints,
                           const std::string& instances_parameter = {}, int instances_per_trial = 1) {
    try {
        auto differs = [&](std::string_view what, const std::string& then, const std::string& now) {
            return InvalidArgument(
                fmt::format("journal '{}' belongs to another run: its {} is {}, this tuner's is {}", path, what, then, now));
        };
        auto diff = space_difference(start.at("space"), space_json(space));
        if (!diff.empty()) throw InvalidArgument(fmt::format("journal '{}' belongs to another search space: {}", path, diff));
        if (const std::string& then = start.at("strategy").as_string(); then != strategy) {
            auto error = differs("strategy", then, strategy);
            // ASHA's and asynchronous Hyperband's default type was Stop before it became Promotion.
            if (strategy.find("-promotion") != std::string::npos && then.find("-promotion") == std::string::npos &&
                (then.starts_with("ASHA") || then.starts_with("Hyperband")))
                error = InvalidArgument(std::string(error.what()) +
                                        " (its rungs are of the stop type: resume it with .type = "
                                        "ht::HalvingType::Stop)");
            // Filling idle workers became the promotion type's default later still.
            else if (strategy.find("-promotion-fill") != std::string::npos &&
                     then.find("-promotion") != std::string::npos && then.find("-promotion-fill") == std::string::npos)
                error = InvalidArgument(std::string(error.what()) +
                                        " (it ran without filling idle workers: resume it with .fill_idle_workers = "
                                        "false)");
            throw error;
        }
        // The options the name does not show (a journal from before they were recorded has none;
        // one recorded on one side only is an option of another version of the library).
        if (const JsonValue* then = start.find("settings"); then && then->is_object())
            for (const auto& [name, now] : settings)
                if (const JsonValue* was = then->find(name); was && was->is_string() && was->as_string() != now)
                    throw InvalidArgument(fmt::format("journal '{}' belongs to another run: its {} {} is {}, this "
                                                      "tuner's is {}; a run resumes with the options it began with",
                                                      path, strategy, name, was->as_string(), now));
        if (start.at("seed") != seed) throw differs("seed", start.at("seed").dump(), std::to_string(seed));
        if (start.at("metric") != metric) throw differs("metric", start.at("metric").as_string(), metric);
        const JsonValue max_resource_now = max_resource ? JsonValue(*max_resource) : JsonValue();
        if (start.at("max_resource") != max_resource_now)
            throw differs("max_resource", start.at("max_resource").dump(), max_resource_now.dump());
        if (start.at("direction") != to_string(direction))
            throw differs("direction", start.at("direction").as_string(), std::string(to_string(direction)));
        // A single objective is written as metric and direction alone.
        const JsonValue objectives_now = objectives.size() > 1 ? objectives_to_json(objectives) : JsonValue::array();
        const JsonValue* objectives_then = start.find("objectives");
        const JsonValue constraints_now = constraints_to_json(constraints);
        const JsonValue* constraints_then = start.find("constraints");
        const JsonValue none = JsonValue::array();
        // An empty list is a single objective (the metric, in the journal's and the tuner's
        // direction, both checked above) or no constraint: said so, not as [].
        const std::string single = fmt::format("the metric '{}' alone", metric);
        for (const auto& [what, then, now, empty] :
             {std::tuple{"objectives", objectives_then ? objectives_then : &none, &objectives_now, single},
              std::tuple{"constraints", constraints_then ? constraints_then : &none, &constraints_now, std::string("none")}})
            if (*then != *now)
                throw InvalidArgument(fmt::format("journal '{}' belongs to another run: its {} are {}, this tuner's are {}",
                                                  path, what, then->size() == 0 ? empty : then->dump(),
                                                  now->size() == 0 ? empty : now->dump()));
        // These decide what every trial is billed, for the trials journaled and those to come (the
        // journal records them once, for the whole run).
        // (mpi::fit sets both from its own options, which the message names too.)
        if (const JsonValue* then = start.find("instances_per_trial"); then && *then != instances_per_trial)
            throw differs("instances_per_trial (under mpi::fit, ranks_per_trial)", then->dump(),
                          std::to_string(instances_per_trial));
        const std::string instances_then = start.string_or("instances_parameter", "");
        if (instances_then != instances_parameter)
            throw differs("instances_parameter (under mpi::fit, ranks_parameter)",
                          instances_then.empty() ? "none" : "'" + instances_then + "'",
                          instances_parameter.empty() ? "none" : "'" + instances_parameter + "'");
    } catch (const JsonError& e) {
        throw IoError(fmt::format("journal '{}' line 1: {}", path, e.what()));
    }
}

/// Throws InvalidArgument when this run's warm start (`now`; parent_runs 0: none) is not the one the
/// journal's run began with: the strategy learnt from that one, and with another, or none, it would
/// suggest other trials than the journal holds (and the overall best would leave parents out).
/// A journal written before the warm start's digest was kept is checked for having one at all.
/// Parents that have grown since (a parent journal resumed, or still running then) hold the run's
/// observations among others: `now` is narrowed to those, and true returned (the strategy must be
/// given them again), when they are the same ones.
inline bool check_same_warm_start(const std::string& path, const std::vector<std::string>& events,
                                  const SearchSpace& space, PreparedWarmStart& now) {
    std::optional<RunWarmStarted> then;
    for (const std::string& text : events) {
        if (text.find("warm_start") == std::string::npos) continue;  // parsed only where it may be one
        const JsonValue e = JsonValue::parse(text);
        if (e.string_or("event", "") == "warm_start") {
            try {
                then = std::get<RunWarmStarted>(event_from_json(e, space));  // its fields, read in one place
            } catch (const IoError& x) {
                throw IoError(fmt::format("journal '{}': {}", path, x.what()));
            }
            break;
        }
    }
    auto runs = [](std::size_t n) { return fmt::format("{} earlier run{}", n, n == 1 ? "" : "s"); };
    if (!then && now.parent_runs == 0) return false;
    if (!then)
        throw InvalidArgument(fmt::format("journal '{}' began without a warm start, and this tuner has one (from {}); "
                                          "resume without TunerOptions::warm_start, or give this run a new journal (its "
                                          "trials were suggested without one)",
                                          path, runs(now.parent_runs)));
    const std::string& fingerprint = then->fingerprint;
    const std::size_t parent_runs = then->parent_runs;
    const std::size_t results = then->results;
    constexpr const char* learnt = " (the strategy learnt from it, and the overall best counts its parents)";
    const std::string began = fingerprint.empty() ? std::string("a warm start")
                                                  : fmt::format("a warm start from {} ({} results)", runs(parent_runs), results);
    if (now.parent_runs == 0)
        throw InvalidArgument(fmt::format("journal '{}' began with {}, and this tuner has none; resume with the same "
                                          "TunerOptions::warm_start{}",
                                          path, began, learnt));
    auto other_type = [&](WarmStartType then_type) {
        return InvalidArgument(fmt::format("journal '{}' began with a warm start of type {}, and this tuner's is of "
                                           "type {}; resume with WarmStart::type = {}{}",
                                           path, to_string(then_type), to_string(now.type), to_string(then_type),
                                           learnt));
    };
    // Journaled since the type was kept: a resume with the other type is named as such even when
    // the two types take different trials of the parents (TransferLearning leaves out failed ones).
    if (then->type && *then->type != now.type) throw other_type(*then->type);
    if (fingerprint.empty() || fingerprint == now.fingerprint) return false;
    // Parents that have grown since: the observations the run began with, found among theirs.
    std::vector<WarmStartObservation> kept = now.observations;
    if (then->parent_runs == now.parent_runs && !then->used.empty()) {
        std::set<std::pair<std::size_t, TrialId>> used(then->used.begin(), then->used.end());
        std::erase_if(kept, [&](const WarmStartObservation& o) { return !used.contains({o.parent, o.trial}); });
    }
    if (then->used.empty() || kept.size() == then->used.size()) {
        if (warm_start_fingerprint(kept, now.type) == fingerprint) {
            now.observations = std::move(kept);
            now.fingerprint = fingerprint;
            return true;
        }
        // The same observations under the other type (the digest mixes the type in): say so.
        for (const WarmStartType type : {WarmStartType::IdenticalDataAndAlgorithm, WarmStartType::TransferLearning})
            if (type != now.type && warm_start_fingerprint(kept, type) == fingerprint) throw other_type(type);
    }
    throw InvalidArgument(fmt::format("journal '{}' began with {}, and this tuner's is from {} ({} results{}); "
                                      "resume with the warm start it began with{} (the parents' trials it learnt "
                                      "from are not all there, or this run's search space or constraints take them "
                                      "otherwise)",
                                      path, began, runs(now.parent_runs), now.observations.size(),
                                      now.parent_runs == parent_runs && now.observations.size() == results
                                          ? ", other ones"
                                          : "",
                                      learnt));
}

/// The last step of trial `id` the strategy judged before a retry whose TrialRetried keeps its
/// curve through `keep`: the failed attempt's curve, as the live run and the replay both read it
/// just before that event. A retry's reports up to it are not judged again.
[[nodiscard]] inline Resource judged_before_retry(const RunState& state, TrialId id, Resource keep) {
    if (!state.has(id) || state.record(id).curve.empty()) return keep;
    return std::max(keep, state.record(id).curve.back().step);
}

/// What replaying a journal leaves: the run's state, the decisions the strategy made that a crash
/// kept out of the journal, and the strategy's answer to each open trial's last report.
struct Replayed {
    RunState state;
    std::vector<DecisionRecord> late;
    std::unordered_map<TrialId, Decision> last_said;
    PlainReports plain_reports;      // the journal's reports that could not say whether constraints are met
    std::set<TrialId> out_of_time;  // trials a run of went past max_trial_seconds (TrialEnded::out_of_time)
    // Trials being retried: the last step a failed attempt reported, which the strategy judged;
    // the retry's reports up to it are not judged again (TuningRun::report).
    std::map<TrialId, Resource> judged_before_retry;
};

/// Replays `events` (a journal whose first line passed check_same_run) into `strategy` and a
/// RunState. Losses are the journal's values with the run's sign (`maximize`).
[[nodiscard]] inline Replayed replay_journal(const std::string& path, const std::vector<std::string>& events,
                                             AnyStrategy& strategy, bool maximize, std::size_t max_jobs) {
    Replayed out;
    std::deque<DecisionRecord> regenerated;
    std::deque<std::pair<std::size_t, DecisionRecord>> journaled;
    auto loss_of = [&](double value) { return maximize ? -value : value; };
    auto diverged = [&](std::size_t line, const std::string& what) {
        return InvalidArgument(fmt::format("journal '{}' line {}: resuming diverged: {}; were the strategy's options changed?",
                                           path, line, what));
    };
    auto match = [&] {
        for (; !regenerated.empty() && !journaled.empty(); regenerated.pop_front(), journaled.pop_front()) {
            const auto& [line, j] = journaled.front();
            const DecisionRecord& d = regenerated.front();
            if (d.trial != j.trial || d.kind != j.kind)
                throw diverged(line, fmt::format("the journal has a {} of trial {} where the strategy now makes a {} of trial {}",
                                                 to_string(j.kind), j.trial, to_string(d.kind), d.trial));
        }
    };
    for (std::size_t i = 0; i < events.size(); ++i) {
        const std::size_t line = i + 1;
        RunEvent event;
        try {
            event = event_from_json(JsonValue::parse(events[i]), out.state.space());
        } catch (const IoError& x) {
            throw IoError(fmt::format("journal '{}' line {}: {}", path, line, x.what()));
        }
        // Each session is replayed with its own budget of new trials (a resume may raise it), so
        // the strategy decides as it did then; a session that did not record it (journals written
        // before it was) is given this one's.
        if (const auto* run = std::get_if<RunStarted>(&event); run && run->max_jobs != 0)
            strategy.set_max_trials(run->max_jobs);
        if (const auto* resumed = std::get_if<RunResumed>(&event))
            strategy.set_max_trials(resumed->max_jobs != 0 ? resumed->max_jobs : max_jobs);
        auto apply = [&] {
            try {
                out.state.apply(event);
            } catch (const IoError& x) {
                throw IoError(fmt::format("journal '{}' line {}: {}", path, line, x.what()));
            }
        };
        // A report or an end of a trial with no run of it under way (a line repeated or moved by
        // hand): the state refuses it, naming the line, before the strategy hears of a trial it
        // is not running.
        const auto* reported = std::get_if<TrialReported>(&event);
        const auto* ended = std::get_if<TrialEnded>(&event);
        if ((reported && !out.state.under_way(reported->trial)) || (ended && !out.state.under_way(ended->trial)))
            apply();  // throws: the state takes no report or end without a run under way
        if (const auto* d = std::get_if<TrialDecided>(&event)) {
            journaled.emplace_back(line, d->decision);
        } else if (const auto* s = std::get_if<TrialStarted>(&event); s && !s->rerun) {
            // A new trial, or a promoted one that the strategy resumes itself.
            if (!out.state.has(s->trial) && out.state.records().size() >= max_jobs)
                throw InvalidArgument(fmt::format("journal '{}' holds more trials than max_jobs = {}: a resumed run may "
                                                  "raise max_jobs, not lower it",
                                                  path, max_jobs));
            Suggestion now = strategy.ask();
            if (!now.runs() || now.trial != s->trial)
                throw diverged(line, fmt::format("the strategy now suggests {} where the journal has trial {}",
                                                 now.runs() ? fmt::format("trial {}", now.trial) : std::string("no trial"),
                                                 s->trial));
            if (!(now.config == s->config))
                throw diverged(line, fmt::format("the strategy now suggests another configuration for trial {} than "
                                                 "the journal's",
                                                 s->trial));
        } else if (const auto* retried = std::get_if<TrialRetried>(&event)) {
            Resource& judged = out.judged_before_retry[retried->trial];
            judged = std::max(judged, judged_before_retry(out.state, retried->trial, retried->keep_through));
        } else if (const auto* r = std::get_if<TrialReported>(&event)) {
            const Result::Setup& setup = out.state.setup();
            out.plain_reports.note(setup.constraints, out.state.metric_names(), r->trial, r->step, r->values);
            if (const auto judged = out.judged_before_retry.find(r->trial);
                judged == out.judged_before_retry.end() || r->step > judged->second)
                out.last_said[r->trial] = strategy.report(
                    r->trial, r->step,
                    intermediate_report(out.state.has(r->trial) ? &out.state.record(r->trial) : nullptr, r->time,
                                        loss_of(r->value), setup.objectives, setup.constraints,
                                        out.state.metric_names(), r->values));
        } else if (const auto* e = std::get_if<TrialEnded>(&event)) {
            out.last_said.erase(e->trial);
            out.judged_before_retry.erase(e->trial);
            if (e->out_of_time) out.out_of_time.insert(e->trial);
            const Result::Setup& setup = out.state.setup();
            strategy.tell(e->trial,
                          run_outcome(*e, loss_of(e->objective),
                                      open_run_seconds(out.state.has(e->trial) ? &out.state.record(e->trial) : nullptr,
                                                       e->time),
                                      setup.objectives, setup.constraints, out.state.metric_names()));
        }
        apply();
        for (auto& d : strategy.take_decisions()) regenerated.push_back(std::move(d));
        match();
        // Every other decision follows the event that caused it, so this one came from an ask()
        // that started nothing; the strategy, in the same state, makes it again.
        if (std::holds_alternative<TrialDecided>(event) && !journaled.empty() && regenerated.empty()) {
            const Suggestion now = strategy.ask();
            if (now.runs())
                throw diverged(line, fmt::format("the journal has a {} of trial {} made when nothing could start, where "
                                                 "the strategy now starts trial {}",
                                                 to_string(journaled.front().second.kind),
                                                 journaled.front().second.trial, now.trial));
            for (auto& d : strategy.take_decisions()) regenerated.push_back(std::move(d));
            match();
        }
    }
    if (!journaled.empty())
        throw diverged(journaled.front().first, fmt::format("the strategy no longer makes the journal's {} of trial {}",
                                                            to_string(journaled.front().second.kind),
                                                            journaled.front().second.trial));
    out.late.assign(regenerated.begin(), regenerated.end());
    return out;
}

}  // namespace hypertune::detail
