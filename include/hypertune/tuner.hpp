// SPDX-License-Identifier: MIT
#pragma once
// Tuner: runs trials of an objective on max_parallel_jobs worker threads, driven by a strategy,
// until max_jobs trials are done, the strategy has nothing left, max_runtime passes, a completion
// criterion is met, or stop() is called. Options mirror SageMaker AMT's tuning job.

#include <hypertune/config.hpp>
#include <hypertune/error.hpp>
#include <hypertune/journal.hpp>
#include <hypertune/objective.hpp>
#include <hypertune/result.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/strategy.hpp>
#include <hypertune/trial.hpp>
#include <hypertune/warm_start.hpp>

#include <fmt/format.h>

#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hypertune {

enum class ProgressBar { Auto, Always, Never };

struct TunerOptions {
    std::string metric = "objective";  ///< the objective metric's name, for output
    Direction direction = Direction::Minimize;
    std::size_t max_jobs = 100;          ///< trials to start in all
    std::size_t max_parallel_jobs = 1;   ///< worker threads: never more trials in flight
    std::uint64_t seed = 0;
    double max_runtime_seconds = 0.0;    ///< 0: no limit. When it passes, running trials are stopped.
    std::optional<double> target_objective{};      ///< stop once a completed trial reaches it
    std::size_t max_trials_without_improvement = 0;  ///< stop after N completed trials without a
                                                     ///< relative improvement above improvement_tolerance; 0: off
    double improvement_tolerance = 0.01;
    int max_retries = 0;          ///< re-runs of a failed trial before it is recorded Failed
    int instances_per_trial = 1;  ///< for cost accounting: billable = elapsed x instances
    ProgressBar progress = ProgressBar::Auto;  ///< Auto: on stderr when it is a terminal
    /// A journal file (JSON lines): written as the run goes; an existing one is resumed.
    std::string journal{};
    /// Earlier runs to learn from (at most 5) and their best trials for Result::overall_best().
    WarmStart warm_start{};
    /// Called from the worker thread when a trial (or a resumed run of it) starts and when it ends.
    /// Calls are serialised; keep them short.
    std::function<void(const TrialRecord&)> on_trial_start{};
    std::function<void(const TrialRecord&)> on_trial_end{};
};

/// A snapshot of a run in progress.
struct Progress {
    std::size_t started = 0;
    std::size_t running = 0;
    std::size_t completed = 0;
    std::size_t stopped = 0;
    std::size_t failed = 0;
    std::size_t max_jobs = 0;
    double elapsed_seconds = 0.0;
    std::optional<double> best;
    bool finished = false;
};

namespace detail {

class TuningRun final : public TrialHost {
public:
    TuningRun(SearchSpace space, AnyStrategy strategy, TunerOptions options, ObjectiveFunction objective,
              std::unique_ptr<JournalWriter> journal, JournalContents earlier, PreparedWarmStart warm = {})
        : space_(std::move(space)), strategy_(std::move(strategy)), options_(std::move(options)),
          objective_(std::move(objective)), journal_(std::move(journal)), earlier_(std::move(earlier)),
          warm_notes_(std::move(warm.notes)) {
        setup_.parent_bests = std::move(warm.parent_bests);
        setup_.metric = options_.metric;
        setup_.direction = options_.direction;
        setup_.strategy = strategy_.name();
        setup_.max_parallel_jobs = options_.max_parallel_jobs;
        setup_.instances_per_trial = options_.instances_per_trial;
        setup_.max_resource = strategy_.max_resource();
        setup_.seed = options_.seed;
        for (const auto& p : space_.parameters()) setup_.parameter_names.push_back(p.name);
        show_progress_ = options_.progress == ProgressBar::Always ||
                         (options_.progress == ProgressBar::Auto && ::isatty(STDERR_FILENO) == 1);
    }

    TuningRun(const TuningRun&) = delete;
    TuningRun& operator=(const TuningRun&) = delete;

    ~TuningRun() {
        stop("destroyed while running");
        join();
    }

    void launch() {
        start_steady_ = std::chrono::steady_clock::now();
        session_start_ = unix_now();
        setup_.start_time = session_start_;
        const bool resuming = !earlier_.events.empty();
        if (resuming) replay();
        else journal({{"event", "run_started"},
                      {"format", journal_format},
                      {"time", session_start_},
                      {"metric", options_.metric},
                      {"direction", std::string(to_string(options_.direction))},
                      {"strategy", setup_.strategy},
                      {"seed", options_.seed},
                      {"max_jobs", options_.max_jobs},
                      {"max_parallel_jobs", options_.max_parallel_jobs},
                      {"instances_per_trial", options_.instances_per_trial},
                      {"max_resource", setup_.max_resource ? json(*setup_.max_resource) : json(nullptr)},
                      {"space", space_.to_json()}});
        if (!resuming) journal_warm_start();
        if (options_.max_runtime_seconds > 0.0)
            deadline_ = start_steady_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                            std::chrono::duration<double>(options_.max_runtime_seconds));
        workers_.reserve(options_.max_parallel_jobs);
        active_workers_ = options_.max_parallel_jobs;
        for (std::size_t w = 0; w < options_.max_parallel_jobs; ++w) workers_.emplace_back([this, w] { work(w); });
    }

    // The parents' best trials go into the journal, so that load_result() has the overall best; the
    // notes become warnings (a resumed run finds them in the journal).
    void journal_warm_start() {
        if (!setup_.parent_bests.empty()) {
            json parents = json::array();
            for (const auto& p : setup_.parent_bests)
                parents.push_back({{"parent", p.parent}, {"trial", p.trial}, {"objective", number_or_null(p.objective)},
                                   {"space", SearchSpace::of(p.config).to_json()}, {"config", p.config.to_json()}});
            journal({{"event", "warm_start"}, {"time", session_start_}, {"parents", std::move(parents)}});
        }
        for (auto& note : warm_notes_) {
            journal({{"event", "warning"}, {"time", session_start_}, {"message", note}});
            warnings_.push_back(std::move(note));
        }
        warm_notes_.clear();
    }

    void stop(std::string_view reason = "stopped by user") {
        std::lock_guard lk(mu_);
        request_stop(reason);
    }

    // The final result is built once, by moving the records: no copy of a large run.
    const Result& wait() {
        join();
        std::lock_guard lk(mu_);
        if (!final_) {
            final_ = snapshot();
            records_.clear();
        }
        return *final_;
    }

    Result take_result() {
        wait();
        std::lock_guard lk(mu_);
        return std::move(*final_);
    }

    [[nodiscard]] Result result_so_far() const {
        std::lock_guard lk(mu_);
        return final_ ? *final_ : snapshot();
    }

    [[nodiscard]] Progress progress() const {
        std::lock_guard lk(mu_);
        Progress p;
        p.started = records_.size() + (final_ ? final_->trials().size() : 0);
        p.running = count(TrialStatus::Running);
        p.completed = count(TrialStatus::Completed);
        // once the run has ended, trials still paused are Stopped in the result: count them so
        p.stopped = count(TrialStatus::Stopped) + (active_workers_ == 0 ? count(TrialStatus::Paused) : 0);
        p.failed = count(TrialStatus::Failed);
        p.max_jobs = options_.max_jobs;
        p.elapsed_seconds = seconds_since_start();
        if (best_index_) p.best = best_value_;
        p.finished = active_workers_ == 0;
        return p;
    }

    [[nodiscard]] bool finished() const {
        std::lock_guard lk(mu_);
        return active_workers_ == 0;
    }

    // TrialHost
    Decision on_report(Trial& trial, Resource step, double value) override {
        std::lock_guard lk(mu_);
        auto& rec = records_[index_.at(trial.id())];
        double now = run_clock();
        double seconds = now - rec.start_time();
        rec.curve.push_back({step, value, seconds});
        journal({{"event", "report"}, {"time", now}, {"trial", trial.id()}, {"step", step}, {"value", value},
                 {"seconds", seconds}});
        Decision d = Decision::Continue;
        try {
            d = strategy_.report(trial.id(), step, loss_of(value));
            apply_decisions();
        } catch (const std::exception& e) {
            request_stop(fmt::format("strategy '{}' failed in report(): {}", setup_.strategy, e.what()));
        }
        return d;
    }

    bool stop_requested() const noexcept override { return stop_flag_.load(std::memory_order_relaxed); }

private:
    [[nodiscard]] double loss_of(double value) const noexcept {
        return options_.direction == Direction::Maximize ? -value : value;
    }

    [[nodiscard]] double seconds_since_start() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_steady_).count();
    }

    [[nodiscard]] double unix_now() const {
        return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    }

    // Unix seconds now, from the monotonic clock (immune to clock changes during the run).
    [[nodiscard]] double run_clock() const { return session_start_ + seconds_since_start(); }

    void join() {
        for (auto& t : workers_)
            if (t.joinable()) t.join();
    }

    void request_stop(std::string_view reason) {
        if (!stop_flag_.load()) {
            if (stop_reason_.empty()) stop_reason_ = reason;
            stop_flag_.store(true);
        }
        cv_.notify_all();
    }

    // Copies the records while the run goes on; moves them once it has ended.
    [[nodiscard]] Result snapshot() {
        std::vector<TrialRecord> out = active_workers_ == 0 ? std::move(records_) : records_;
        return make_result(std::move(out));
    }
    [[nodiscard]] Result snapshot() const { return make_result(records_); }

    [[nodiscard]] Result make_result(std::vector<TrialRecord> out) const {
        Result::Setup s = setup_;
        s.stop_reason = stop_reason_;
        s.warnings = warnings_;
        for (const auto& note : strategy_.notes()) s.warnings.push_back(fmt::format("{}: {}", setup_.strategy, note));
        s.wall_seconds = earlier_wall_ + (end_seconds_ > 0.0 ? end_seconds_ : seconds_since_start());
        if (active_workers_ == 0)
            for (auto& r : out)
                if (r.status == TrialStatus::Paused) {
                    r.status = TrialStatus::Stopped;
                    r.decisions.push_back({r.id, DecisionRecord::Kind::Stop, -1, -1, r.resource_used, loss_of(r.objective),
                                           std::nan(""), 0, "the run ended while the trial waited for promotion"});
                }
        return Result(std::move(s), std::move(out));
    }

    // Stores the strategy's stop / pause / promote records on the trials they concern.
    void apply_decisions() {
        for (auto& d : strategy_.take_decisions()) {
            auto it = index_.find(d.trial);
            if (it == index_.end()) continue;
            auto& rec = records_[it->second];
            journal(decision_event(d, run_clock()));
            if (auto status = status_after(rec, d)) {
                set_status(rec, *status);
                if (*status == TrialStatus::Stopped) checkpoints_.erase(d.trial);  // a paused trial that never resumes
            }
            rec.decisions.push_back(std::move(d));
        }
    }

    // Keeps the per-status counts in step with the records.
    void set_status(TrialRecord& rec, TrialStatus status) {
        --count_[static_cast<std::size_t>(rec.status)];
        rec.status = status;
        ++count_[static_cast<std::size_t>(status)];
    }

    [[nodiscard]] std::size_t count(TrialStatus s) const { return count_[static_cast<std::size_t>(s)]; }

    // Writes one event when the run has a journal. A failed write stops the run: what is on disk
    // stays consistent, and every trial that ended before is kept.
    void journal(const json& event) {
        if (!journal_ || journal_failed_) return;
        try {
            journal_->write(event);
        } catch (const IoError& e) {
            journal_failed_ = true;
            request_stop(e.what());
        }
    }

    void sync_journal() {
        if (!journal_ || journal_failed_) return;
        try {
            journal_->sync();
        } catch (const IoError& e) {
            journal_failed_ = true;
            request_stop(e.what());
        }
    }

    // Resuming: the strategy is given the journal's calls in their order, which brings it back to
    // the state it had; trials that ended are kept, those in flight are queued to run again.
    void replay() {
        RecordBuilder builder;
        // The strategy makes its decisions again; they must be the journal's, in the same order.
        // (A decision made in ask() is journaled just after the trial_started of the run it starts.)
        std::deque<DecisionRecord> regenerated;
        std::deque<std::pair<std::size_t, const json*>> journaled;
        std::unordered_map<TrialId, Decision> last_said;  // its answer to each trial's last report
        auto diverged = [&](std::size_t line, const std::string& what) {
            return InvalidArgument(fmt::format("journal '{}' line {}: resuming diverged: {}; were the strategy's "
                                               "options changed?",
                                               options_.journal, line, what));
        };
        for (std::size_t i = 0; i < earlier_.events.size(); ++i) {
            const auto& e = earlier_.events[i];
            builder.add(e, i + 1);
            const auto& kind = e.at("event").get_ref<const std::string&>();
            auto match = [&] {
                for (; !regenerated.empty() && !journaled.empty(); regenerated.pop_front(), journaled.pop_front()) {
                    const auto& [line, j] = journaled.front();
                    const auto& d = regenerated.front();
                    if (d.trial != j->at("trial").get<TrialId>() || to_string(d.kind) != j->at("kind").get<std::string>())
                        throw diverged(line, fmt::format("the journal has a {} of trial {} where the strategy now "
                                                         "makes a {} of trial {}",
                                                         j->at("kind").get<std::string>(), j->at("trial").get<TrialId>(),
                                                         to_string(d.kind), d.trial));
                }
            };
            if (kind == "decision") {
                journaled.emplace_back(i + 1, &e);
                match();
                continue;
            }
            if (kind == "trial_started" && !e.value("rerun", false)) {
                auto s = strategy_.ask();
                auto id = e.at("trial").get<TrialId>();
                if (!s.runs() && builder.records().size() > options_.max_jobs)
                    throw InvalidArgument(fmt::format("journal '{}' holds more trials than max_jobs = {}: a resumed run "
                                                      "may raise max_jobs, not lower it",
                                                      options_.journal, options_.max_jobs));
                if (!s.runs() || s.trial != id || s.config.to_json() != builder.records()[builder.index().at(id)].config.to_json())
                    throw diverged(i + 1, fmt::format("the strategy now suggests {} where the journal has trial {}",
                                                      s.runs() ? fmt::format("trial {}", s.trial) : std::string("no trial"), id));
            } else if (kind == "report") {
                auto id = e.at("trial").get<TrialId>();
                last_said[id] = strategy_.report(id, e.at("step").get<Resource>(), loss_of(e.at("value").get<double>()));
            } else if (kind == "trial_ended") {
                last_said.erase(e.at("trial").get<TrialId>());
                auto status = status_from(e.at("status").get<std::string>());
                double loss = loss_of(number_from(e.at("objective")));
                Resource resource = e.at("resource").get<Resource>();
                strategy_.tell(e.at("trial").get<TrialId>(), status == TrialStatus::Failed      ? Outcome::failed(resource)
                                                             : status == TrialStatus::Stopped ? Outcome::stopped(loss, resource)
                                                                                              : Outcome::completed(loss, resource));
            }
            for (auto& d : strategy_.take_decisions()) regenerated.push_back(std::move(d));
            match();
        }
        if (!journaled.empty())
            throw diverged(journaled.front().first, fmt::format("the strategy no longer makes the journal's {} of trial {}",
                                                                journaled.front().second->at("kind").get<std::string>(),
                                                                journaled.front().second->at("trial").get<TrialId>()));
        auto in_flight = builder.in_flight();
        Result earlier = builder.result();
        earlier_wall_ = builder.wall_seconds();
        setup_.start_time = earlier.setup().start_time;
        warnings_ = earlier.setup().warnings;
        if (!earlier_.warning.empty()) warnings_.push_back(earlier_.warning);
        index_ = builder.index();
        records_ = std::move(builder.records());
        // In flight at the crash: a trial the strategy had already told to stop ends as it would
        // have (its last report); the others run again.
        std::vector<Suggestion> stopped;
        for (auto& s : in_flight) {
            auto& r = records_[index_.at(s.trial)];
            auto said = last_said.find(s.trial);
            if (said != last_said.end() && said->second == Decision::Stop && !r.curve.empty()) {
                stopped.push_back(std::move(s));
                continue;
            }
            if (!r.segments.empty() && std::isnan(r.segments.back().end)) r.segments.pop_back();
            r.status = TrialStatus::Paused;  // until it runs again
            reruns_.push_back(std::move(s));
        }
        // Decisions the crash kept out of the journal are recorded now.
        std::vector<DecisionRecord> late(regenerated.begin(), regenerated.end());
        for (const auto& d : late) {
            auto& r = records_[index_.at(d.trial)];
            if (auto status = status_after(r, d)) r.status = *status;
            r.decisions.push_back(d);
        }
        for (std::size_t i = 0; i < records_.size(); ++i) {
            ++count_[static_cast<std::size_t>(records_[i].status)];
            if (records_[i].status == TrialStatus::Completed) check_completion(i, false);
        }
        journal({{"event", "run_resumed"}, {"time", session_start_}, {"trials", records_.size()},
                 {"in_flight", reruns_.size() + stopped.size()}});
        for (const auto& d : late) journal(decision_event(d, session_start_));
        for (const auto& s : stopped) {
            auto idx = index_.at(s.trial);
            const auto& last = records_[idx].curve.back();
            Attempt a;
            a.stopped = true;
            a.value = last.value;
            a.resource = last.step;
            a.reports = records_[idx].curve.size();
            finish(idx, s, a, records_[idx].start_time() + last.seconds);
        }
        earlier_ = {};
    }

    void call(const std::function<void(const TrialRecord&)>& callback, const TrialRecord& rec) {
        if (!callback) return;
        std::lock_guard lk(callback_mu_);
        try {
            callback(rec);
        } catch (const std::exception& e) {
            std::lock_guard lk2(mu_);
            request_stop(fmt::format("a trial callback threw: {}", e.what()));
        } catch (...) {
            std::lock_guard lk2(mu_);
            request_stop("a trial callback threw a non-standard exception");
        }
    }

    void work(std::size_t worker) {
        std::unique_lock lk(mu_);
        while (!stop_flag_.load()) {
            if (deadline_ && std::chrono::steady_clock::now() >= *deadline_) {
                request_stop(fmt::format("max_runtime of {}s reached", options_.max_runtime_seconds));
                break;
            }
            Suggestion s;
            bool rerun = !reruns_.empty();
            try {
                if (rerun) {
                    s = std::move(reruns_.front());
                    reruns_.pop_front();
                } else {
                    s = strategy_.ask();
                    // A decision made in ask() (a promotion) is journaled after the trial_started of the
                    // run it starts (in run()): a crash between the two lines leaves a run to redo, not a
                    // decision that no trial follows, which a resume could not replay.
                    if (!s.runs()) apply_decisions();
                }
            } catch (const std::exception& e) {
                request_stop(fmt::format("strategy '{}' failed in ask(): {}", setup_.strategy, e.what()));
                break;
            }
            if (s.kind == Suggestion::Kind::Done) {
                if (stop_reason_.empty())
                    stop_reason_ = records_.size() >= options_.max_jobs ? "max_jobs reached" : "strategy finished";
                break;
            }
            if (s.kind == Suggestion::Kind::Wait) {
                if (count(TrialStatus::Running) == 0) {
                    if (stop_reason_.empty()) stop_reason_ = "strategy finished";
                    break;
                }
                auto generation = generation_;
                auto woken = [&] { return generation_ != generation || stop_flag_.load(); };
                if (deadline_) cv_.wait_until(lk, *deadline_, woken);
                else cv_.wait(lk, woken);
                continue;
            }
            run(lk, worker, std::move(s), rerun);
        }
        if (--active_workers_ == 0) {
            end_seconds_ = seconds_since_start();
            journal({{"event", "run_ended"}, {"time", run_clock()}, {"reason", stop_reason_}});
            sync_journal();
            if (show_progress_) draw_progress(true);
        }
        cv_.notify_all();
    }

    // Runs one suggestion. Called and returns with `lk` held; the objective runs without it.
    void run(std::unique_lock<std::mutex>& lk, std::size_t worker, Suggestion s, bool rerun) {
        auto found = index_.find(s.trial);
        bool is_new = found == index_.end();
        if (is_new && records_.size() >= options_.max_jobs) return;  // a strategy that ignored max_trials
        std::size_t idx = 0;
        if (is_new) {
            idx = records_.size();
            index_.emplace(s.trial, idx);
            records_.emplace_back();
            records_[idx].id = s.trial;
            records_[idx].config = s.config;
            ++count_[static_cast<std::size_t>(TrialStatus::Running)];
        } else {
            idx = found->second;
            set_status(records_[idx], TrialStatus::Running);
            // A promoted trial continues from resume_from: steps it reported past that (overrunning its
            // last budget) it reports again now.
            if (!rerun && s.resume_from > 0)
                std::erase_if(records_[idx].curve, [&](const ReportPoint& p) { return p.step > s.resume_from; });
        }
        double t0 = run_clock();
        records_[idx].segments.push_back({t0, t0, worker});
        // A trial re-run after a crash must not be judged again on the steps it already reported.
        Resource judged = rerun && !records_[idx].curve.empty() ? records_[idx].curve.back().step : 0;
        journal({{"event", "trial_started"}, {"time", t0}, {"trial", s.trial}, {"config", s.config.to_json()},
                 {"budget", s.budget}, {"resume_from", s.resume_from}, {"worker", worker}, {"rerun", rerun}});
        apply_decisions();
        std::optional<std::string> checkpoint;
        if (auto c = checkpoints_.find(s.trial); c != checkpoints_.end()) checkpoint = std::move(c->second);
        TrialRecord started_copy;
        if (options_.on_trial_start) started_copy = records_[idx];
        lk.unlock();

        call(options_.on_trial_start, started_copy);
        auto attempt = execute(s, std::move(checkpoint), idx, judged, lk);

        lk.lock();
        finish(idx, s, attempt);
        TrialRecord ended_copy;
        if (options_.on_trial_end) ended_copy = records_[idx];
        if (show_progress_) draw_progress(false);
        lk.unlock();
        call(options_.on_trial_end, ended_copy);
        lk.lock();
    }

    struct Attempt {
        bool failed = false;
        bool stopped = false;
        double value = std::numeric_limits<double>::quiet_NaN();
        Resource resource = 0;
        std::size_t reports = 0;
        std::string failure;
        int retries = 0;
        std::optional<std::string> checkpoint;
    };

    // Runs the objective (with retries) outside the lock.
    Attempt execute(const Suggestion& s, std::optional<std::string> checkpoint, std::size_t idx, Resource judged,
                    std::unique_lock<std::mutex>& lk) {
        Attempt a;
        for (int attempt = 0;; ++attempt) {
            bool resumes = s.resume_from > 0 && checkpoint.has_value();
            Trial trial(s.trial, s.config, s.budget, resumes ? s.resume_from : 0, checkpoint);
            trial.host_ = this;
            if (!resumes && std::max(s.resume_from, judged) > 0) trial.restart_from(std::max(s.resume_from, judged));
            a = Attempt{};
            a.retries = attempt;
            try {
                a.value = objective_(s.config, trial);
                if (!trial.failure().empty()) {
                    a.failed = true;
                    a.failure = trial.failure();
                } else if (!std::isfinite(a.value)) {
                    a.failed = true;
                    a.failure = fmt::format("the objective returned {}", a.value);
                }
            } catch (const std::exception& e) {
                a.failed = true;
                a.failure = trial.failure().empty() ? fmt::format("the objective threw: {}", e.what()) : trial.failure();
            } catch (...) {
                a.failed = true;
                a.failure = "the objective threw a non-standard exception";
            }
            // Stopped: told so by the strategy, or the run stopped before the trial reached its budget.
            a.stopped = trial.stop_decided() ||
                        (stop_flag_.load() && trial.reports() > 0 && trial.last_step() < s.budget);
            Resource reached = std::max(trial.last_step(), s.resume_from);
            a.resource = trial.reports() > 0 || a.stopped ? reached : s.budget;
            if (!a.failed && !a.stopped) a.resource = std::max(a.resource, s.budget);  // reported less often
            if (!a.failed && a.stopped && !std::isfinite(a.value) && trial.last_value()) a.value = *trial.last_value();
            a.checkpoint = trial.checkpoint();
            a.reports = trial.reports();
            if (!a.failed || a.stopped || attempt >= options_.max_retries) break;
            // Retry from scratch: forget the failed attempt's curve.
            lk.lock();
            auto& rec = records_[idx];
            std::erase_if(rec.curve, [&](const ReportPoint& p) { return p.step > std::max(s.resume_from, judged); });
            lk.unlock();
        }
        return a;
    }

    void finish(std::size_t idx, const Suggestion& s, Attempt& a, std::optional<double> ended_at = std::nullopt) {
        auto& rec = records_[idx];
        double t1 = ended_at.value_or(run_clock());
        rec.segments.back().end = t1;
        rec.elapsed_seconds += t1 - rec.segments.back().start;
        rec.billable_seconds = rec.elapsed_seconds * options_.instances_per_trial;
        rec.retries += a.retries;
        rec.resource_used = std::max(rec.resource_used, a.resource);
        ++generation_;
        if (a.checkpoint) checkpoints_[s.trial] = std::move(*a.checkpoint);
        Outcome outcome;
        if (a.failed) {
            set_status(rec, TrialStatus::Failed);
            rec.failure_reason = a.failure;
            rec.objective = std::nan("");
            checkpoints_.erase(s.trial);
            outcome = Outcome::failed(rec.resource_used);
        } else {
            rec.objective = a.value;
            set_status(rec, a.stopped ? TrialStatus::Stopped : TrialStatus::Completed);
            outcome = a.stopped ? Outcome::stopped(loss_of(a.value), rec.resource_used)
                                : Outcome::completed(loss_of(a.value), rec.resource_used);
        }
        journal({{"event", "trial_ended"},
                 {"time", t1},
                 {"trial", s.trial},
                 {"status", std::string(to_string(rec.status))},
                 {"objective", number_or_null(rec.objective)},
                 {"resource", rec.resource_used},
                 {"failure", rec.failure_reason},
                 {"retries", a.retries}});
        if (!a.failed && a.reports == 0 && setup_.max_resource.value_or(1) > 1 && !warned_no_reports_) {
            warned_no_reports_ = true;
            warnings_.push_back(fmt::format(
                "trial {} reported no intermediate values: {} can only judge a trial from the values it reports "
                "along the way; call trial.report(step, value) after each resource unit (epoch, round...)",
                s.trial, setup_.strategy));
            journal({{"event", "warning"}, {"time", t1}, {"message", warnings_.back()}});
        }
        try {
            strategy_.tell(s.trial, outcome);
            apply_decisions();
        } catch (const std::exception& e) {
            request_stop(fmt::format("strategy '{}' failed in tell(): {}", setup_.strategy, e.what()));
        }
        if (rec.status != TrialStatus::Paused) checkpoints_.erase(s.trial);
        if (rec.status == TrialStatus::Completed) check_completion(idx, true);
        sync_journal();  // a trial that ended is on disk before anything else happens
        cv_.notify_all();
    }

    // AMT's completion criteria: a target objective, or no improvement over N trials.
    void check_completion(std::size_t idx, bool may_stop) {
        double v = records_[idx].objective;
        bool maximize = options_.direction == Direction::Maximize;
        if (!best_index_) {
            best_index_ = idx;
            best_value_ = v;
            since_improvement_ = 0;
        } else {
            double best = records_[*best_index_].objective;
            if (maximize ? v > best : v < best) {
                double gain = std::abs(v - best);
                best_index_ = idx;
                best_value_ = v;
                if (gain > options_.improvement_tolerance * std::abs(best)) since_improvement_ = 0;
                else ++since_improvement_;
            } else {
                ++since_improvement_;
            }
        }
        if (!may_stop) return;
        if (options_.target_objective && (maximize ? v >= *options_.target_objective : v <= *options_.target_objective))
            request_stop(fmt::format("target objective {} reached by trial {}", *options_.target_objective,
                                     records_[idx].id));
        if (options_.max_trials_without_improvement > 0 &&
            since_improvement_ >= options_.max_trials_without_improvement)
            request_stop(fmt::format("no improvement above {}% in {} trials", 100.0 * options_.improvement_tolerance,
                                     since_improvement_));
    }

    void draw_progress(bool final_line) {
        double now = seconds_since_start();
        if (!final_line && now - last_draw_ < 0.1) return;
        last_draw_ = now;
        std::string best = best_index_ ? fmt::format("{:.6g} (trial {})", records_[*best_index_].objective,
                                                      records_[*best_index_].id)
                                       : std::string("-");
        std::fprintf(stderr, "\r[hypertune] %zu/%zu trials, %zu running, %zu failed, best %s, %s   %s",
                     count(TrialStatus::Completed) + count(TrialStatus::Stopped) + count(TrialStatus::Failed),
                     options_.max_jobs, count(TrialStatus::Running), count(TrialStatus::Failed), best.c_str(),
                     detail::human_duration(now).c_str(), final_line ? "\n" : "");
        std::fflush(stderr);
    }

    SearchSpace space_;
    AnyStrategy strategy_;
    TunerOptions options_;
    ObjectiveFunction objective_;
    Result::Setup setup_;

    mutable std::mutex mu_;
    std::mutex callback_mu_;
    std::condition_variable cv_;
    std::vector<std::thread> workers_;
    std::atomic<bool> stop_flag_{false};
    std::string stop_reason_;
    std::vector<std::string> warnings_;
    bool warned_no_reports_ = false;
    std::vector<TrialRecord> records_;
    std::optional<Result> final_;
    std::unordered_map<TrialId, std::size_t> index_;
    std::unordered_map<TrialId, std::string> checkpoints_;
    std::array<std::size_t, 5> count_{};  // trials by TrialStatus
    std::deque<Suggestion> reruns_;       // in flight when an earlier session died
    std::unique_ptr<JournalWriter> journal_;
    bool journal_failed_ = false;
    JournalContents earlier_;
    std::vector<std::string> warm_notes_;
    double earlier_wall_ = 0.0;
    double session_start_ = 0.0;
    std::size_t active_workers_ = 0;
    std::uint64_t generation_ = 0;
    std::optional<std::size_t> best_index_;
    double best_value_ = 0.0;
    std::size_t since_improvement_ = 0;
    std::chrono::steady_clock::time_point start_steady_;
    std::optional<std::chrono::steady_clock::time_point> deadline_;
    double end_seconds_ = 0.0;
    double last_draw_ = -1.0;
    bool show_progress_ = false;
};

}  // namespace detail

/// A tuning run in progress, returned by Tuner::start(). Destroying it stops the run and waits.
class TuningJob {
public:
    explicit TuningJob(std::unique_ptr<detail::TuningRun> run) : run_(std::move(run)) {}

    /// Blocks until the run ends; returns everything it recorded. May be called more than once.
    const Result& wait() { return run_->wait(); }
    /// Waits, then hands the result over (the job keeps none).
    Result take_result() { return run_->take_result(); }
    /// Asks the run to end: no new trial starts, running ones see Trial::should_stop() and finish
    /// cleanly; nothing completed is lost. Safe from any thread, including callbacks.
    void stop() { run_->stop(); }
    [[nodiscard]] Progress progress() const { return run_->progress(); }
    [[nodiscard]] bool finished() const { return run_->finished(); }
    /// The records so far, without waiting.
    [[nodiscard]] Result result_so_far() const { return run_->result_so_far(); }

private:
    std::unique_ptr<detail::TuningRun> run_;
};

class Tuner {
public:
    /// Checks the options and starts the strategy on the space: bad input throws
    /// InvalidArgument here, before any trial runs.
    Tuner(SearchSpace space, AnyStrategy strategy, TunerOptions options = {})
        : space_(std::move(space)), strategy_(std::move(strategy)), options_(std::move(options)) {
        if (options_.max_jobs < 1) throw InvalidArgument("TunerOptions: max_jobs must be >= 1, got 0");
        if (options_.max_parallel_jobs < 1) throw InvalidArgument("TunerOptions: max_parallel_jobs must be >= 1, got 0");
        if (options_.instances_per_trial < 1)
            throw InvalidArgument(fmt::format("TunerOptions: instances_per_trial must be >= 1, got {}",
                                              options_.instances_per_trial));
        if (options_.max_retries < 0)
            throw InvalidArgument(fmt::format("TunerOptions: max_retries must be >= 0, got {}", options_.max_retries));
        if (!(options_.max_runtime_seconds >= 0.0) || std::isinf(options_.max_runtime_seconds))
            throw InvalidArgument(fmt::format("TunerOptions: max_runtime_seconds must be finite and >= 0, got {}",
                                              options_.max_runtime_seconds));
        if (options_.target_objective && !std::isfinite(*options_.target_objective))
            throw InvalidArgument("TunerOptions: target_objective must be finite");
        if (!(options_.improvement_tolerance >= 0.0))
            throw InvalidArgument("TunerOptions: improvement_tolerance must be >= 0");
        space_.require_tunable();
        strategy_->start(space_, StrategyContext{options_.seed, options_.max_jobs});
        if (!options_.warm_start.empty()) {
            warm_ = prepare_warm_start(options_.warm_start, space_, options_.metric, options_.direction);
            if (!strategy_->warm_start(warm_.observations, options_.warm_start.type) && !warm_.observations.empty())
                warm_.notes.push_back(fmt::format("{} does not learn from earlier runs: the warm-start parents count "
                                                  "only towards the overall best",
                                                  strategy_->name()));
        }
        if (!options_.journal.empty()) open_journal();
    }

    /// Runs to the end and returns the result.
    template <class F>
    Result fit(F&& objective) {
        return start(std::forward<F>(objective)).take_result();
    }

    /// Starts the run in the background.
    template <class F>
    TuningJob start(F&& objective) {
        if (!strategy_) throw Error("Tuner: this tuner has already run; make a new one");
        auto run = std::make_unique<detail::TuningRun>(space_, std::move(*strategy_), options_,
                                                       make_objective(std::forward<F>(objective)),
                                                       std::move(journal_), std::move(earlier_), std::move(warm_));
        strategy_.reset();
        run->launch();
        return TuningJob(std::move(run));
    }

    [[nodiscard]] const SearchSpace& space() const noexcept { return space_; }
    [[nodiscard]] const TunerOptions& options() const noexcept { return options_; }

private:
    // An existing journal must come from the same search space, strategy, seed and objective;
    // otherwise resuming would mix two different runs.
    void open_journal() {
        const auto& path = options_.journal;
        std::error_code ec;
        if (std::filesystem::file_size(path, ec) > 0 && !ec) {
            earlier_ = detail::read_journal(path);
            if (!earlier_.events.empty()) try {
                const auto& start = earlier_.events.front();
                auto differs = [&](std::string_view what, const std::string& then, const std::string& now) {
                    return InvalidArgument(fmt::format("journal '{}' belongs to another run: its {} is {}, this tuner's is {}",
                                                       path, what, then, now));
                };
                auto diff = detail::space_difference(start.at("space"), space_.to_json());
                if (!diff.empty())
                    throw InvalidArgument(fmt::format("journal '{}' belongs to another search space: {}", path, diff));
                if (start.at("strategy") != strategy_->name())
                    throw differs("strategy", start.at("strategy").get<std::string>(), strategy_->name());
                if (start.at("seed") != options_.seed)
                    throw differs("seed", start.at("seed").dump(), std::to_string(options_.seed));
                if (start.at("metric") != options_.metric)
                    throw differs("metric", start.at("metric").get<std::string>(), options_.metric);
                auto max_resource = strategy_->max_resource();
                if (start.at("max_resource") != (max_resource ? nlohmann::json(*max_resource) : nlohmann::json(nullptr)))
                    throw differs("max_resource", start.at("max_resource").dump(),
                                  max_resource ? std::to_string(*max_resource) : std::string("null"));
                if (start.at("direction") != to_string(options_.direction))
                    throw differs("direction", start.at("direction").get<std::string>(),
                                  std::string(to_string(options_.direction)));
            } catch (const nlohmann::json::exception& e) {
                throw IoError(fmt::format("journal '{}' line 1: {}", path, e.what()));
            }
        }
        journal_ = std::make_unique<detail::JournalWriter>(path, earlier_.valid_bytes);
    }

    SearchSpace space_;
    std::optional<AnyStrategy> strategy_;
    TunerOptions options_;
    std::unique_ptr<detail::JournalWriter> journal_;
    detail::JournalContents earlier_;
    PreparedWarmStart warm_;
};

}  // namespace hypertune
