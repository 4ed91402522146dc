// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/run_state.hpp>: the reducer's rules, and load_result().
// Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/run_state.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/journal.hpp>
#include <hypertune/run_events.hpp>
#include <hypertune/detail/instance_count.hpp>
#include <fmt/format.h>
#include <type_traits>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/run_state.hpp> is compiled into hypertune::compiled: include <hypertune/run_state.hpp>"
#endif

namespace hypertune {

HYPERTUNE_INLINE void RunState::apply(const RunEvent& event) {
    std::visit([this](const auto& e) {
        // A resume closes the session before it: that session ended at its last event, not at the
        // resume (after a crash, the time until the program ran again is no wall time of the run).
        if constexpr (std::is_same_v<std::decay_t<decltype(e)>, RunResumed>) {
            on(e);
            last_time_ = std::max(last_time_, e.time);
        } else {
            last_time_ = std::max(last_time_, e.time);
            on(e);
        }
    }, event);
}

HYPERTUNE_INLINE std::vector<TrialStarted> RunState::open_trials() const {
    std::vector<TrialStarted> out;
    for (const auto& [id, s] : open_) out.push_back(s);
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.trial < b.trial; });
    return out;
}

HYPERTUNE_INLINE Result RunState::result(bool finished, std::optional<double> now) const& {
    return make_result(records_, finished, now);
}

HYPERTUNE_INLINE Result RunState::result(bool finished, std::optional<double> now) && {
    return make_result(std::move(records_), finished, now);
}

HYPERTUNE_INLINE void RunState::on(const RunStarted& e) {
    if (started_)  // a later session of the same run is a run_resumed
        throw IoError("a second run_started: a journal holds one run (were two journals joined into one file?)");
    started_ = true;
    space_ = e.space;
    max_jobs_ = e.max_jobs;
    setup_.metric = e.metric;
    setup_.direction = e.direction;
    if (!e.objectives.empty() && (e.objectives.front().name != e.metric || e.objectives.front().direction != e.direction))
        throw IoError(fmt::format("run_started: the first objective '{}' is not the metric '{}' ({})",
                                  e.objectives.front().name, e.metric, to_string(e.direction)));
    setup_.objectives = e.objectives;
    setup_.constraints = e.constraints;
    const std::vector<Metric> objectives = e.objectives.empty() ? std::vector<Metric>{{e.metric, e.direction}} : e.objectives;
    metric_names_ = hypertune::metric_names(objectives, e.constraints);
    setup_.strategy = e.strategy;
    setup_.seed = e.seed;
    setup_.max_parallel_jobs = e.max_parallel_jobs;
    parallel_ = e.max_parallel_jobs;
    setup_.instances_per_trial = e.instances_per_trial;
    setup_.instances_parameter = e.instances_parameter;
    setup_.max_resource = e.max_resource;
    setup_.start_time = e.time;
    setup_.parameter_names.clear();
    for (const auto& p : space_.parameters()) setup_.parameter_names.push_back(p.name);
    session_start_ = e.time;
    session_open_ = true;
}

HYPERTUNE_INLINE void RunState::on(const RunResumed& e) {
    close_session();
    // What the last session's end said of the whole run may no longer hold once it goes on; this
    // session's end says again what does.
    for (auto it = run_end_warnings_.rbegin(); it != run_end_warnings_.rend(); ++it)
        setup_.warnings.erase(setup_.warnings.begin() + static_cast<std::ptrdiff_t>(*it));
    run_end_warnings_.clear();
    session_start_ = e.time;
    session_open_ = true;
    if (e.max_parallel_jobs > 0) {
        parallel_ = e.max_parallel_jobs;
        setup_.max_parallel_jobs = std::max(setup_.max_parallel_jobs, e.max_parallel_jobs);
    }
    // What the previous session left open runs again: it waits until it does. It trained until
    // that session's last event at least (a cloud bills that time): its segment ends there.
    for (auto& [id, s] : open_) {
        TrialRecord& r = at(id);
        close_open_segment(r, last_time_);
        set_status(r, TrialStatus::Paused);
    }
}

HYPERTUNE_INLINE void RunState::on(const TrialStarted& e) {
    auto it = index_.find(e.trial);
    if (it == index_.end()) {
        it = index_.emplace(e.trial, records_.size()).first;
        records_.emplace_back();
        last_runs_.emplace_back();
        records_.back().id = e.trial;
        records_.back().config = e.config;
        records_.back().instances = instances_of(e.config);
        ++count_[static_cast<std::size_t>(TrialStatus::Running)];
    } else {
        set_status(records_[it->second], TrialStatus::Running);
    }
    TrialRecord& r = records_[it->second];
    // A run started again after a crash (rerun) is the same run: its failed attempts still count.
    LastRun& run = last_runs_[it->second];
    run.budget = e.budget;
    run.resume_from = e.resume_from;
    run.last_step = 0;
    if (!e.rerun) {
        run.failed_attempts = 0;
        run.first_failure.clear();
    }
    if (open_.contains(e.trial)) drop_open_segment(r);  // started again with no end: a journal cut mid-run
    // A promoted trial continues from resume_from: steps it reported past that (overrunning its
    // last budget) it reports again now.
    if (e.resume_from > 0 && !e.rerun)
        std::erase_if(r.curve, [&](const ReportPoint& p) { return p.step > e.resume_from; });
    r.segments.push_back({e.time, std::numeric_limits<double>::quiet_NaN(), e.worker});
    open_[e.trial] = e;
}

HYPERTUNE_INLINE void RunState::on(const TrialReported& e) {
    auto it = index_.find(e.trial);
    if (it == index_.end()) throw IoError(fmt::format("event for trial {} before it started", e.trial));
    // The tuner journals a run's reports with increasing steps, between its start and its end: a
    // line repeated or moved by hand would give the trial a curve it never had.
    LastRun& run = last_runs_[it->second];
    if (!open_.contains(e.trial))
        throw IoError(fmt::format("trial {} reports step {} with no run of it under way (a line repeated or out of "
                                  "order?)",
                                  e.trial, e.step));
    if (e.step <= run.last_step)
        throw IoError(fmt::format("trial {} reports step {} after step {} in the same run, where steps increase (a "
                                  "line repeated or out of order?)",
                                  e.trial, e.step, run.last_step));
    run.last_step = e.step;
    // A step an earlier run or attempt reported too (a retry that trains it again, a trainer that
    // started over): this report replaces it, so the curve has each step once, as last trained.
    auto& curve = records_[it->second].curve;
    while (!curve.empty() && curve.back().step >= e.step) curve.pop_back();
    curve.push_back({e.step, e.value, e.seconds});
    if (!e.values.empty()) run.reported_values = e.values;
}

HYPERTUNE_INLINE void RunState::on(const TrialDecided& e) {
    TrialRecord& r = record_of(e.decision.trial);
    if (auto s = detail::status_after(r, e.decision)) set_status(r, *s);
    r.decisions.push_back(e.decision);
}

HYPERTUNE_INLINE void RunState::on(const TrialRetried& e) {
    std::erase_if(record_of(e.trial).curve, [&](const ReportPoint& p) { return p.step > e.keep_through; });
    LastRun& run = last_runs_[index_.at(e.trial)];
    if (run.failed_attempts++ == 0) run.first_failure = e.reason;
    run.last_step = 0;  // the retry reports afresh
}

HYPERTUNE_INLINE void RunState::on(const TrialEnded& e) {
    TrialRecord& r = record_of(e.trial);
    if (!open_.contains(e.trial))
        throw IoError(fmt::format("trial {} ends with no run of it under way (a line repeated or out of order?)", e.trial));
    set_status(r, e.status);
    r.objective = e.objective;
    r.resource_used = std::max(r.resource_used, e.resource);
    r.failure_reason = e.failure;
    const bool plain = setup_.objectives.size() <= 1 && setup_.constraints.empty();
    if (!e.values.empty() && (plain || e.values.size() != metric_names_.size()))
        throw IoError(fmt::format("trial {}: {} metric values, the run has {} metrics", r.id, e.values.size(),
                                  plain ? 0 : metric_names_.size()));
    r.values = e.values;
    r.feasible = meets_constraints(setup_.constraints, metric_names_, r.values);
    if (e.retries < 0 || e.retries > std::numeric_limits<int>::max() - r.retries)
        throw IoError(fmt::format("trial {}: retries {} out of range", r.id, e.retries));
    r.retries += e.retries;
    if (!r.segments.empty() && std::isnan(r.segments.back().end)) {
        r.segments.back().end = e.time;
        const double span = e.time - r.segments.back().start;
        const double waited = std::min(e.waited_seconds, std::max(span, 0.0));
        r.elapsed_seconds += span - waited;
        r.waited_seconds += waited;
    }
    r.billable_seconds = r.elapsed_seconds * r.instances;
    open_.erase(e.trial);
    if (r.status == TrialStatus::Completed && r.has_objective() && r.feasible) {
        const bool maximize = setup_.direction == Direction::Maximize;
        if (!best_ || (maximize ? r.objective > record(*best_).objective : r.objective < record(*best_).objective))
            best_ = r.id;
    }
}

HYPERTUNE_INLINE void RunState::find_best() {
    best_.reset();
    const bool maximize = setup_.direction == Direction::Maximize;
    const TrialRecord* best = nullptr;
    for (const TrialRecord& r : records_)
        if (r.status == TrialStatus::Completed && r.has_objective() && r.feasible &&
            (!best || (maximize ? r.objective > best->objective : r.objective < best->objective)))
            best = &r;
    if (best) best_ = best->id;
}

HYPERTUNE_INLINE void RunState::on(const RunWarmStarted& e) {
    setup_.parent_bests.insert(setup_.parent_bests.end(), e.parents.begin(), e.parents.end());
    setup_.parent_runs += e.parent_runs;
}

HYPERTUNE_INLINE void RunState::on(const RunEnded& e) {
    setup_.stop_reason = e.reason;
    close_session();
}

HYPERTUNE_INLINE int RunState::instances_of(const Config& config) const {
    const int per_trial = setup_.instances_per_trial;
    if (setup_.instances_parameter.empty()) return per_trial;
    std::int64_t n = 0;
    try {
        n = detail::count_in(config, setup_.instances_parameter);
    } catch (const InvalidArgument& x) {
        throw IoError(fmt::format("instances_parameter: {}", x.what()));
    }
    if (n < 1 || per_trial < 1 || n > std::numeric_limits<int>::max() / per_trial)
        throw IoError(fmt::format("instances_parameter '{}' holds {}: not a count of instances",
                                  setup_.instances_parameter, n));
    return static_cast<int>(n) * per_trial;
}

HYPERTUNE_INLINE TrialRecord& RunState::record_of(TrialId id) {
    auto it = index_.find(id);
    if (it == index_.end()) throw IoError(fmt::format("event for trial {} before it started", id));
    return records_[it->second];
}

HYPERTUNE_INLINE Result load_result(const std::string& path) {
    // Each event is applied as it is read: the parsed events of a large journal took about ten
    // times the file's size when held all at once.
    RunState state;
    bool any = false;
    const detail::JournalRead contents = detail::for_each_journal_event(path, [&](detail::JsonValue&& event, std::size_t line) {
        any = true;
        try {
            state.apply(detail::event_from_json(event, state.space()));
        } catch (const IoError& x) {
            throw IoError(fmt::format("journal '{}' line {}: {}", path, line, x.what()));
        }
    });
    if (!any) {
        // A first line cut by a crash leaves nothing to load, but the file is not empty: say
        // what was dropped rather than that nothing was there.
        if (!contents.warning.empty())
            throw IoError(fmt::format("{}; no complete line is left to load", contents.warning));
        throw IoError(fmt::format("journal '{}' is empty", path));
    }
    if (!contents.warning.empty()) state.apply(RunWarned{0.0, contents.warning});
    // Without run_ended, the trials it was running and those it had paused are shown as they
    // were, not as stopped by an end that did not come.
    const bool ended = state.ended();
    if (!ended) {
        // The journal's lock tells a run still going from one that was cut: the OS drops a
        // tuner's lock however it dies.
        const std::optional<bool> running = detail::journal_in_use(path);
        const char* why = !running ? "its run was cut by a crash, or is still going"
                          : *running ? "a tuner is writing it now (its run is still going)"
                                     : "its run was cut (a crash or a kill: no tuner holds it now)";
        state.apply(RunWarned{0.0, fmt::format("journal '{}' ends without a run_ended event: {}; the trials it was "
                                               "running show as InProgress (TrialStatus::Running) and those waiting for a promotion as Paused{}",
                                               path, why,
                                               running && *running ? ""
                                                                   : " (the same program, run again, resumes it)")});
    }
    return std::move(state).result(ended);
}

}  // namespace hypertune
