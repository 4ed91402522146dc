// SPDX-License-Identifier: MIT
#pragma once
// RunState: the one reducer of a tuning run. apply(event) updates the trial records and the run's
// setup from a run event (run_events.hpp); the live run applies each event as it journals it, a
// resumed run applies the journal's events before going on, and load_result() applies them to
// rebuild a finished run. Every rule that changes a record lives here, once:
// - trial_started: a new record, or the record again (Running); a promoted trial's curve past its
//   resume point is dropped (it reports those steps again); a new run segment opens.
// - report: a curve point. decision: kept on the record; a Pause parks a trial that ran to its
//   rung, a Stop ends a paused one. trial_retried: the failed attempt's reports go.
// - trial_ended: status, value, resource, failure and retries; the open segment closes and its
//   time counts (elapsed, and billable = elapsed x instances_per_trial).
// - run_resumed: the previous session's wall time closes; trials still open from it lose their
//   open segment and wait (Paused) to run again.
// - run_ended: the stop reason; the session's wall time closes.
// result() gives the Result at any moment; once the run is over (`finished`), a trial still
// running is Stopped ("the run ended while this trial was running") and a paused one is Stopped
// with a record saying it waited for a promotion that never came.

#include <hypertune/error.hpp>
#include <hypertune/journal.hpp>
#include <hypertune/result.hpp>
#include <hypertune/run_events.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/strategy.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace hypertune {

class RunState {
public:
    /// Applies one event. Throws IoError for an event that cannot follow the ones before (a report
    /// of a trial that never started).
    void apply(const RunEvent& event) {
        std::visit([this](const auto& e) {
            last_time_ = std::max(last_time_, e.time);
            on(e);
        }, event);
    }

    [[nodiscard]] const Result::Setup& setup() const noexcept { return setup_; }
    [[nodiscard]] const SearchSpace& space() const noexcept { return space_; }
    [[nodiscard]] std::size_t max_jobs() const noexcept { return max_jobs_; }
    [[nodiscard]] const std::vector<TrialRecord>& records() const noexcept { return records_; }
    [[nodiscard]] const TrialRecord& record(TrialId id) const { return records_[index_.at(id)]; }
    [[nodiscard]] bool has(TrialId id) const { return index_.contains(id); }
    [[nodiscard]] std::size_t count(TrialStatus s) const noexcept { return count_[static_cast<std::size_t>(s)]; }
    /// The best Completed trial so far in the run's direction (ties: the earlier), if any.
    [[nodiscard]] std::optional<TrialId> best() const noexcept { return best_; }
    /// Trials started and not ended, with what they were started with, by id.
    [[nodiscard]] std::vector<TrialStarted> open_trials() const {
        std::vector<TrialStarted> out;
        for (const auto& [id, s] : open_) out.push_back(s);
        std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.trial < b.trial; });
        return out;
    }

    /// Wall time of the sessions so far (each from its start to its last event), plus the open
    /// session up to `now` when given.
    [[nodiscard]] double wall_seconds(std::optional<double> now = std::nullopt) const {
        const double until = now.value_or(last_time_);
        return wall_ + (session_open_ ? std::max(0.0, until - session_start_) : 0.0);
    }

    /// The Result so far; `now` closes open segments for display. Once `finished`, trials still
    /// running or paused are Stopped (see the top of run_state.hpp).
    [[nodiscard]] Result result(bool finished, std::optional<double> now = std::nullopt) const& {
        return make_result(records_, finished, now);
    }
    /// The same, moving the records out (the state is spent).
    [[nodiscard]] Result result(bool finished, std::optional<double> now = std::nullopt) && {
        return make_result(std::move(records_), finished, now);
    }

private:
    void on(const RunStarted& e) {
        space_ = e.space;
        max_jobs_ = e.max_jobs;
        setup_.metric = e.metric;
        setup_.direction = e.direction;
        setup_.strategy = e.strategy;
        setup_.seed = e.seed;
        setup_.max_parallel_jobs = e.max_parallel_jobs;
        setup_.instances_per_trial = e.instances_per_trial;
        setup_.max_resource = e.max_resource;
        setup_.start_time = e.time;
        setup_.parameter_names.clear();
        for (const auto& p : space_.parameters()) setup_.parameter_names.push_back(p.name);
        session_start_ = e.time;
        session_open_ = true;
    }

    void on(const RunResumed& e) {
        close_session();
        session_start_ = e.time;
        session_open_ = true;
        // What the previous session left open runs again: it waits until it does.
        for (auto& [id, s] : open_) {
            TrialRecord& r = at(id);
            drop_open_segment(r);
            set_status(r, TrialStatus::Paused);
        }
    }

    void on(const TrialStarted& e) {
        auto it = index_.find(e.trial);
        if (it == index_.end()) {
            it = index_.emplace(e.trial, records_.size()).first;
            records_.emplace_back();
            records_.back().id = e.trial;
            records_.back().config = e.config;
            ++count_[static_cast<std::size_t>(TrialStatus::Running)];
        } else {
            set_status(records_[it->second], TrialStatus::Running);
        }
        TrialRecord& r = records_[it->second];
        if (open_.contains(e.trial)) drop_open_segment(r);  // started again with no end: a journal cut mid-run
        // A promoted trial continues from resume_from: steps it reported past that (overrunning its
        // last budget) it reports again now.
        if (e.resume_from > 0 && !e.rerun)
            std::erase_if(r.curve, [&](const ReportPoint& p) { return p.step > e.resume_from; });
        r.segments.push_back({e.time, std::numeric_limits<double>::quiet_NaN(), e.worker});
        open_[e.trial] = e;
    }

    void on(const TrialReported& e) { record_of(e.trial).curve.push_back({e.step, e.value, e.seconds}); }

    void on(const TrialDecided& e) {
        TrialRecord& r = record_of(e.decision.trial);
        if (auto s = detail::status_after(r, e.decision)) set_status(r, *s);
        r.decisions.push_back(e.decision);
    }

    void on(const TrialRetried& e) {
        std::erase_if(record_of(e.trial).curve, [&](const ReportPoint& p) { return p.step > e.keep_through; });
    }

    void on(const TrialEnded& e) {
        TrialRecord& r = record_of(e.trial);
        set_status(r, e.status);
        r.objective = e.objective;
        r.resource_used = std::max(r.resource_used, e.resource);
        r.failure_reason = e.failure;
        if (e.retries < 0 || e.retries > std::numeric_limits<int>::max() - r.retries)
            throw IoError(fmt::format("trial {}: retries {} out of range", r.id, e.retries));
        r.retries += e.retries;
        if (!r.segments.empty() && std::isnan(r.segments.back().end)) {
            r.segments.back().end = e.time;
            r.elapsed_seconds += e.time - r.segments.back().start;
        }
        r.billable_seconds = r.elapsed_seconds * setup_.instances_per_trial;
        open_.erase(e.trial);
        if (r.status == TrialStatus::Completed && r.has_objective()) {
            const bool maximize = setup_.direction == Direction::Maximize;
            if (!best_ || (maximize ? r.objective > record(*best_).objective : r.objective < record(*best_).objective))
                best_ = r.id;
        }
    }

    void on(const RunWarned& e) { setup_.warnings.push_back(e.message); }
    void on(const RunWarmStarted& e) {
        setup_.parent_bests.insert(setup_.parent_bests.end(), e.parents.begin(), e.parents.end());
    }
    void on(const RunEnded& e) {
        setup_.stop_reason = e.reason;
        close_session();
    }

    [[nodiscard]] TrialRecord& at(TrialId id) { return records_[index_.at(id)]; }
    [[nodiscard]] TrialRecord& record_of(TrialId id) {
        auto it = index_.find(id);
        if (it == index_.end()) throw IoError(fmt::format("event for trial {} before it started", id));
        return records_[it->second];
    }

    void set_status(TrialRecord& r, TrialStatus s) {
        --count_[static_cast<std::size_t>(r.status)];
        r.status = s;
        ++count_[static_cast<std::size_t>(s)];
    }

    static void drop_open_segment(TrialRecord& r) {
        if (!r.segments.empty() && std::isnan(r.segments.back().end)) r.segments.pop_back();
    }

    void close_session() {
        if (session_open_) wall_ += std::max(0.0, last_time_ - session_start_);
        session_open_ = false;
    }

    template <class Records>
    [[nodiscard]] Result make_result(Records&& records, bool finished, std::optional<double> now) const {
        std::vector<TrialRecord> out(std::forward<Records>(records));
        Result::Setup s = setup_;
        s.wall_seconds = wall_seconds(now);
        const double until = now.value_or(last_time_);
        for (auto& r : out) {
            if (!r.segments.empty() && std::isnan(r.segments.back().end)) r.segments.back().end = until;
            if (!finished) continue;
            if (r.status == TrialStatus::Running) {
                r.status = TrialStatus::Stopped;
                r.failure_reason = "the run ended while this trial was running";
            } else if (r.status == TrialStatus::Paused) {
                r.status = TrialStatus::Stopped;
                r.decisions.push_back({r.id, DecisionRecord::Kind::Stop, -1, -1, r.resource_used,
                                       s.direction == Direction::Maximize ? -r.objective : r.objective, std::nan(""), 0,
                                       "the run ended while the trial waited for promotion"});
            }
        }
        return Result(std::move(s), std::move(out));
    }

    SearchSpace space_;
    std::size_t max_jobs_ = 0;
    Result::Setup setup_;
    std::vector<TrialRecord> records_;
    std::unordered_map<TrialId, std::size_t> index_;
    std::unordered_map<TrialId, TrialStarted> open_;  // started, not ended
    std::array<std::size_t, 5> count_{};               // trials by TrialStatus
    std::optional<TrialId> best_;
    double last_time_ = 0.0, session_start_ = 0.0, wall_ = 0.0;
    bool session_open_ = false;
};

/// Rebuilds the Result of a run from its journal, without running anything (AMT's attach): the
/// same best, trials, summary and CSV as the run that wrote it. A run that did not finish shows
/// the trials it had in flight as Stopped.
[[nodiscard]] inline Result load_result(const std::string& path) {
    auto contents = detail::read_journal(path);
    if (contents.events.empty()) throw IoError(fmt::format("journal '{}' is empty", path));
    RunState state;
    for (std::size_t i = 0; i < contents.events.size(); ++i) {
        try {
            state.apply(detail::event_from_json(contents.events[i], state.space()));
        } catch (const IoError& x) {
            throw IoError(fmt::format("journal '{}' line {}: {}", path, i + 1, x.what()));
        }
    }
    if (!contents.warning.empty()) state.apply(RunWarned{0.0, contents.warning});
    return std::move(state).result(true);
}

}  // namespace hypertune
