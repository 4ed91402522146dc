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
// - trial_ended: status, value (and each metric's, with whether the constraints hold), resource,
//   failure and retries; the open segment closes and its time counts (elapsed, and billable =
//   elapsed x instances_per_trial).
// - run_resumed: the previous session's wall time closes; trials still open from it lose their
//   open segment and wait (Paused) to run again.
// - run_ended: the stop reason; the session's wall time closes.
// result() gives the Result at any moment; once the run is over (`finished`), a trial still
// running is Stopped ("the run ended while this trial was running") and a paused one is Stopped
// with a record saying it waited for a promotion that never came. load_result() finishes a run only
// when its journal ends with run_ended (a crashed or running one keeps its Running and Paused
// trials so, with a warning).

#include <hypertune/error.hpp>
#include <hypertune/result.hpp>
#include <hypertune/run_events.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/strategy.hpp>

#include <fmt/core.h>

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
    void apply(const RunEvent& event);

    [[nodiscard]] const Result::Setup& setup() const noexcept { return setup_; }
    [[nodiscard]] const SearchSpace& space() const noexcept { return space_; }
    /// What each trial's values are (Result::metric_names()), once the run has started.
    [[nodiscard]] const std::vector<std::string>& metric_names() const noexcept { return metric_names_; }
    [[nodiscard]] std::size_t max_jobs() const noexcept { return max_jobs_; }
    [[nodiscard]] const std::vector<TrialRecord>& records() const noexcept { return records_; }
    [[nodiscard]] const TrialRecord& record(TrialId id) const { return records_[index_.at(id)]; }
    [[nodiscard]] bool has(TrialId id) const { return index_.contains(id); }
    /// The budget and resume point of the trial's latest run (TrialStarted::budget, resume_from).
    [[nodiscard]] std::pair<Resource, Resource> last_run(TrialId id) const {
        const LastRun& r = last_runs_[index_.at(id)];
        return {r.budget, r.resume_from};
    }
    /// The attempts of the trial's latest run that failed and were retried (TrialRetried), in
    /// every session: a run cut by a crash goes on with the retries it has left.
    [[nodiscard]] int failed_attempts(TrialId id) const { return last_runs_[index_.at(id)].failed_attempts; }
    /// The reason the first of those failed ("" when none did): a final failure of another reason
    /// keeps it, in a resumed session too.
    [[nodiscard]] const std::string& first_failure(TrialId id) const { return last_runs_[index_.at(id)].first_failure; }
    /// Every metric's value at the trial's last report (TrialReported::values), in a run with
    /// several objectives or constraints; empty otherwise. What a trial cut by a crash after its
    /// last report ends with.
    [[nodiscard]] const std::vector<double>& last_reported_values(TrialId id) const {
        return last_runs_[index_.at(id)].reported_values;
    }
    [[nodiscard]] std::size_t count(TrialStatus s) const noexcept { return count_[static_cast<std::size_t>(s)]; }
    /// The best feasible Completed trial so far on the first objective (ties: the earlier), if any.
    [[nodiscard]] std::optional<TrialId> best() const noexcept { return best_; }
    /// Trials started and not ended, with what they were started with, by id.
    [[nodiscard]] std::vector<TrialStarted> open_trials() const;

    /// Wall time of the sessions so far (each from its start to its last event), plus the open
    /// session up to `now` when given.
    [[nodiscard]] double wall_seconds(std::optional<double> now = std::nullopt) const {
        return wall_ + open_session_seconds(now);
    }
    /// The workers' time: each session's max_parallel_jobs x its wall time, summed.
    [[nodiscard]] double worker_seconds(std::optional<double> now = std::nullopt) const {
        return worker_seconds_ + static_cast<double>(parallel_) * open_session_seconds(now);
    }

    /// Whether the run's last session ended (run_ended): a journal without it was cut by a crash,
    /// or its run is still going.
    [[nodiscard]] bool ended() const noexcept { return started_ && !session_open_; }
    /// Whether a run of trial `id` is under way: started, and not ended yet.
    [[nodiscard]] bool under_way(TrialId id) const { return open_.contains(id); }

    /// The Result so far; `now` closes open segments for display. A running trial's resource is
    /// what it has reported so far. Once `finished`, trials still running or paused are Stopped
    /// (see the top of run_state.hpp).
    [[nodiscard]] Result result(bool finished, std::optional<double> now = std::nullopt) const&;
    /// The same, moving the records out (the state is spent).
    [[nodiscard]] Result result(bool finished, std::optional<double> now = std::nullopt) &&;

    /// A trial still paused when the run ended. Cut, not judged: a scheduler that ends its run
    /// stops its paused trials itself (a Stop record each); one still paused here waited when
    /// stop(), a time limit or a completion criterion ended the run, and early stopping's savings
    /// leave it out.
    /// A trial a crash cut while it ran also waits (Paused) to run again: ended before it did, it
    /// was cut while running, as the uninterrupted run has it, not while waiting for a promotion.
    void end_paused(TrialRecord& r) const {
        r.status = TrialStatus::Stopped;
        r.failure_reason = open_.contains(r.id) ? "the run ended while this trial was running"
                                                : "the run ended while the trial waited for promotion";
    }

private:
    void on(const RunStarted& e);
    void on(const RunResumed& e);
    void on(const TrialStarted& e);
    void on(const TrialReported& e);
    void on(const TrialDecided& e);
    void on(const TrialRetried& e);
    void on(const TrialEnded& e);
    void on(const RunWarned& e) {
        if (e.of_run_end) run_end_warnings_.push_back(setup_.warnings.size());
        setup_.warnings.push_back(e.message);
    }
    void on(const RunWarmStarted& e);
    void on(const RunEnded& e);

    [[nodiscard]] TrialRecord& at(TrialId id) { return records_[index_.at(id)]; }
    [[nodiscard]] TrialRecord& record_of(TrialId id);
    // The instances a trial with this configuration runs on (Result::Setup::instances_parameter).
    [[nodiscard]] int instances_of(const Config& config) const;

    void set_status(TrialRecord& r, TrialStatus s) {
        --count_[static_cast<std::size_t>(r.status)];
        r.status = s;
        ++count_[static_cast<std::size_t>(s)];
        // A trial that reached a rung ends Completed for a moment; paused or stopped there (or run
        // again), it is no longer the best Completed trial.
        if (best_ == r.id && s != TrialStatus::Completed) find_best();
    }
    // best_ from the records (the earlier of equal ones): only when the best one leaves Completed.
    void find_best();

    static void drop_open_segment(TrialRecord& r) {
        if (!r.segments.empty() && std::isnan(r.segments.back().end)) r.segments.pop_back();
    }
    // A segment a crash cut: it ends at `end`, the last event journaled before the crash.
    static void close_open_segment(TrialRecord& r, double end) {
        if (r.segments.empty() || !std::isnan(r.segments.back().end)) return;
        RunSegment& g = r.segments.back();
        g.end = std::max(end, g.start);
        r.elapsed_seconds += g.end - g.start;
        r.billable_seconds = r.elapsed_seconds * r.instances;
    }

    [[nodiscard]] double open_session_seconds(std::optional<double> now) const {
        return session_open_ ? std::max(0.0, now.value_or(last_time_) - session_start_) : 0.0;
    }
    void close_session() {
        const double span = open_session_seconds(std::nullopt);
        wall_ += span;
        worker_seconds_ += static_cast<double>(parallel_) * span;
        session_open_ = false;
    }

    template <class Records>
    [[nodiscard]] Result make_result(Records&& records, bool finished, std::optional<double> now) const {
        std::vector<TrialRecord> out(std::forward<Records>(records));
        Result::Setup s = setup_;
        s.wall_seconds = wall_seconds(now);
        s.worker_seconds = worker_seconds(now);
        const double until = now.value_or(last_time_);
        for (auto& r : out) {
            // Running (or cut by a crash): its time so far counts, as the segment shows it.
            close_open_segment(r, until);
            if (r.status == TrialStatus::Running && !r.curve.empty())
                r.resource_used = std::max(r.resource_used, r.curve.back().step);
            if (!finished) continue;
            if (r.status == TrialStatus::Running) {
                r.status = TrialStatus::Stopped;
                r.failure_reason = "the run ended while this trial was running";
            } else if (r.status == TrialStatus::Paused) {
                end_paused(r);
            }
        }
        return Result(std::move(s), std::move(out));
    }

    SearchSpace space_;
    std::size_t max_jobs_ = 0;
    Result::Setup setup_;
    std::vector<TrialRecord> records_;
    std::unordered_map<TrialId, std::size_t> index_;
    struct LastRun {
        Resource budget = 0;
        Resource resume_from = 0;
        int failed_attempts = 0;
        std::string first_failure;  // the reason of the first of them
        Resource last_step = 0;  // the last step reported by the run (its attempt) under way
        std::vector<double> reported_values;  // of the trial's last report, whatever its run
    };
    std::vector<LastRun> last_runs_;  // by record: its latest run
    std::unordered_map<TrialId, TrialStarted> open_;  // started, not ended
    std::array<std::size_t, 5> count_{};               // trials by TrialStatus
    std::optional<TrialId> best_;
    std::vector<std::string> metric_names_;  // what a trial's values are, in order
    std::vector<std::size_t> run_end_warnings_;  // where in setup_.warnings, increasing (RunWarned::of_run_end)
    double last_time_ = 0.0, session_start_ = 0.0, wall_ = 0.0, worker_seconds_ = 0.0;
    std::size_t parallel_ = 1;  ///< the open session's max_parallel_jobs
    bool session_open_ = false;
    bool started_ = false;  // a run_started was applied
};

/// Rebuilds the Result of a run from its journal, without running anything (AMT's attach): the
/// same best, trials, summary and CSV as the run that wrote it. A run that did not finish shows
/// the trials it had in flight as Stopped.
[[nodiscard]] Result load_result(const std::string& path);

}  // namespace hypertune

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/run_state.hpp>
#endif
