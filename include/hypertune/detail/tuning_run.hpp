// SPDX-License-Identifier: MIT
#pragma once
// TuningRun: one tuning run in progress, the worker threads, the strategy calls and the events.
// Only <hypertune/impl/tuner.hpp> uses it: a program reaches it through Tuner and TuningJob.

#include <hypertune/tuner_options.hpp>
#include <hypertune/config.hpp>
#include <hypertune/error.hpp>
#include <hypertune/detail/checkpoint_store.hpp>
#include <hypertune/detail/progress_line.hpp>
#include <hypertune/detail/replay.hpp>
#include <hypertune/detail/str_cat.hpp>
#include <hypertune/detail/utf8.hpp>
#include <hypertune/journal.hpp>
#include <hypertune/objective.hpp>
#include <hypertune/result.hpp>
#include <hypertune/run_events.hpp>
#include <hypertune/run_state.hpp>
#include <hypertune/scheduler.hpp>
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
#include <map>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hypertune {

namespace detail {

// A time limit in seconds as a steady_clock duration, capped at a century: a larger one (accepted
// as finite) overflowed the clock's nanoseconds, which ended the run at once or stopped every trial.
[[nodiscard]] inline std::chrono::steady_clock::duration steady_duration(double seconds) {
    constexpr double century = 100.0 * 365.25 * 86400.0;
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(std::min(seconds, century)));
}

// One tuning run: the worker threads, the strategy calls, and the events. Everything that happens
// becomes a run event (run_events.hpp) that is journaled, then applied to the run's RunState, the
// same reducer that resume and load_result() use; the records are only ever changed there.
class TuningRun final : public TrialHost {
public:
    TuningRun(SearchSpace space, AnyStrategy strategy, TunerOptions options, ObjectiveFunction objective,
              std::unique_ptr<JournalWriter> journal, JournalContents earlier, PreparedWarmStart warm = {})
        : space_(std::move(space)), strategy_(std::move(strategy)), options_(std::move(options)),
          objective_(std::move(objective)), journal_(std::move(journal)), earlier_(std::move(earlier)),
          warm_(std::move(warm)), strategy_name_(strategy_.name()), max_resource_(strategy_.max_resource()),
          checkpoints_(options_.journal.empty() ? std::string() : journal_file_path(options_.journal)),
          metric_names_(metric_names(options_.objectives, options_.constraints)),
          several_metrics_(options_.objectives.size() > 1 || !options_.constraints.empty()) {
        if (options_.progress == ProgressBar::Always ||
            (options_.progress == ProgressBar::Auto && ::isatty(STDERR_FILENO) == 1))
            progress_line_.emplace(options_.max_jobs);
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
        // max_runtime_seconds is the run's, as SageMaker's MaxRuntimeInSeconds is the tuning job's:
        // the sessions before a resume spent part of it (each session used to start it afresh, so
        // a run that crashed, or ended on it, ran a whole max_runtime more at every resume).
        double spent = 0.0;
        {
            std::lock_guard lk(mu_);
            if (!earlier_.events.empty()) resume();
            else begin();
            spent = state_.wall_seconds(session_start_);
        }
        if (options_.max_runtime_seconds > 0.0)
            deadline_ = start_steady_ + steady_duration(std::max(0.0, options_.max_runtime_seconds - spent));
        workers_.reserve(options_.max_parallel_jobs);
        active_workers_ = options_.max_parallel_jobs;
        for (std::size_t w = 0; w < options_.max_parallel_jobs; ++w) workers_.emplace_back([this, w] { work(w); });
        // The workers look at the deadline between trials; while every one of them is inside a
        // trial, this stops the run when it passes, so that running trials see should_stop().
        if (deadline_) watchdog_ = std::thread([this] { watch_deadline(); });
    }

    void stop(std::string_view reason = "stopped by user") {
        if (in_observer()) {  // on_event runs under the lock already
            request_stop(reason);
            return;
        }
        std::lock_guard lk(mu_);
        request_stop(reason);
    }

    // The final result is built once, by moving the records: no copy of a large run. Any number
    // of threads may wait at once (join() is serialised).
    const Result& wait() { return finish_waiting("wait"); }

    // The result is moved out: what the job's other calls would read is gone, so they refuse
    // (progress() keeps the counts it had). Of two threads taking it at once, one gets it and the
    // other is refused: the check and the move are under one lock.
    Result take_result() {
        (void)finish_waiting("take_result");
        const Progress counts = progress();
        std::lock_guard lk(mu_);
        refuse_taken("take_result");
        taken_progress_ = counts;
        return std::move(*std::exchange(final_, std::nullopt));
    }

    [[nodiscard]] Result result_so_far() const {
        refuse_in_observer("result_so_far");
        std::lock_guard lk(mu_);
        refuse_taken("result_so_far");
        if (final_) return *final_;
        // While the run goes on, the strategy's notes and the stop reason are not events yet.
        Result now = state_.result(active_workers_ == 0, run_clock());
        Result::Setup setup = now.setup();
        if (setup.stop_reason.empty()) setup.stop_reason = stop_reason_;
        for (const auto& note : strategy_.notes())
            if (auto text = fmt::format("{}: {}", strategy_name_, note); !warned_before(text))
                setup.warnings.push_back(std::move(text));
        return Result(std::move(setup), now.trials());
    }

    [[nodiscard]] Progress progress() const {
        refuse_in_observer("progress");
        std::lock_guard lk(mu_);
        if (taken_progress_) return *taken_progress_;
        const bool ended = active_workers_ == 0;
        auto count = [&](TrialStatus s) {
            if (final_) return final_->count(s);
            return state_.count(s);
        };
        Progress p;
        p.started = final_ ? final_->trials().size() : state_.records().size();
        p.running = count(TrialStatus::Running);
        p.paused = ended ? 0 : count(TrialStatus::Paused);
        p.completed = count(TrialStatus::Completed);
        // once the run has ended, trials still paused are Stopped in the result: count them so
        p.stopped = count(TrialStatus::Stopped) + (ended ? count(TrialStatus::Paused) : 0);
        p.failed = count(TrialStatus::Failed);
        p.max_jobs = options_.max_jobs;
        p.elapsed_seconds = ended ? ended_after_ : seconds_since_start();
        if (best_) p.best = best_value_;
        p.finished = ended;
        return p;
    }

    [[nodiscard]] bool finished() const {
        refuse_in_observer("finished");
        std::lock_guard lk(mu_);
        return active_workers_ == 0;
    }

    // TrialHost
    Decision on_report(Trial& trial, Resource step, double value) override { return report(trial, step, value, {}); }

    // The run's metrics in metric_names_ order (NaN for a constrained metric left out); every
    // objective must be there, and what is there finite. Other names are the trainer's own
    // (a gradient norm it logs): ignored, whatever their value.
    Decision on_report_metrics(Trial& trial, Resource step, const Metrics& m) override {
        std::vector<double> values(metric_names_.size(), std::numeric_limits<double>::quiet_NaN());
        const std::size_t objectives = std::max<std::size_t>(1, options_.objectives.size());
        for (std::size_t i = 0; i < metric_names_.size(); ++i) {
            if (auto v = m.get(metric_names_[i])) {
                if (!std::isfinite(*v))
                    throw InvalidArgument(fmt::format("trial {}: reported a non-finite value of '{}' ({}) at step {}",
                                                      trial.id(), metric_names_[i], *v, step));
                values[i] = *v;
            } else if (i < objectives) {
                // The report's other names, as for the returned value: a misspelt name shows.
                std::vector<std::string_view> others;
                for (const auto& [name, x] : m.values())
                    if (std::find(metric_names_.begin(), metric_names_.end(), name) == metric_names_.end())
                        others.push_back(name);
                throw InvalidArgument(fmt::format("trial {}: the report at step {} has no value for objective '{}'{} "
                                                  "({} is given every objective at each report)",
                                                  trial.id(), step, metric_names_[i],
                                                  others.empty() ? std::string()
                                                                 : fmt::format(" (it also has {}, which the run does not "
                                                                               "have)",
                                                                               detail::join(others, ", ")),
                                                  strategy_name_));
            }
        }
        trial.last_value_ = values.front();
        const double value = values.front();
        if (!several_metrics_) values.clear();
        return report(trial, step, value, std::move(values));
    }

    bool stop_requested() const noexcept override { return stop_flag_.load(std::memory_order_relaxed); }
    std::optional<std::chrono::steady_clock::time_point> stop_deadline() const noexcept override { return deadline_; }

    // Called by the trial's own thread, without the run's lock: a large checkpoint is written
    // while the other workers go on. In memory, the run takes it from the Trial when it ends.
    // A checkpoint the store cannot write (a full disk) is the run's failure, not the trial's: it
    // stops the run, as a journal write that fails does, and the trial goes on to see should_stop()
    // (cut short, it runs again on resume from the checkpoint it saved before). Thrown into the
    // objective, it failed every trial for good and spent the budget.
    void on_checkpoint(Trial& trial, Resource step, const std::string& bytes) override {
        if (!checkpoints_.on_disk()) return;
        try {
            checkpoints_.put(trial.id(), SavedCheckpoint{bytes, step});
        } catch (const IoError& e) {
            std::lock_guard lk(mu_);
            fail(fmt::format("{}; the run stops with what was saved, and a resume continues from the checkpoints "
                             "kept",
                             e.what()));
        }
    }

    // A folder that cannot be made (a read-only or full disk) would fail every trial the same way
    // and spend the budget on failures: the run stops with the first, as for a checkpoint above.
    std::string checkpoint_folder(Trial& trial) override {
        try {
            return checkpoints_.trial_folder(trial.id()).string();
        } catch (const IoError& e) {
            std::lock_guard lk(mu_);
            fail(fmt::format("{}; the run stops rather than fail every trial the same way", e.what()));
            throw;
        }
    }

private:
    [[nodiscard]] double loss_of(double value) const noexcept {
        return options_.direction == Direction::Maximize ? -value : value;
    }

    // A report reaches the strategy before it is journaled: one it refuses as unjudgeable
    // (InvalidArgument, e.g. a single value where it ranks every objective) fails the trial and
    // leaves no trace, so that a resumed run replays only what the strategy took. A step past the
    // trial's budget that the strategy lets go on (RunToCompletion stops nothing) is worth a
    // warning when the strategy set a budget above 1: the trainer ignores trial.budget(), and the
    // resource it uses counts. With a budget of 1 (RandomSearch's default, no resource in play) a
    // trainer reporting every epoch is the usual case, so nothing is said.
    Decision report(Trial& trial, Resource step, double value, std::vector<double> values) {
        std::lock_guard lk(mu_);
        const double now = run_clock();
        Decision d = Decision::Continue;
        bool took = false;
        // One lookup for the whole report: no event below adds a record, so the reference holds.
        const TrialRecord& record = state_.record(trial.id());
        const std::size_t decided_before = record.decisions.size();
        // A single value in a constrained run, or metrics without a constrained one: the strategy
        // cannot tell whether the trial meets the constraints, and judges it as if it did (said at
        // the end, if it judged anything).
        plain_reports_.note(options_.constraints, metric_names_, trial.id(), step, values);
        // A retry's report of a step its failed attempt reported: the strategy judged and ranked
        // that one, and keeps it (judged again, a scheduler of the user's counted it twice); the
        // curve takes the retry's.
        if (const auto judged = judged_before_retry_.find(trial.id());
            judged != judged_before_retry_.end() && step <= judged->second) {
            emit(TrialReported{now, trial.id(), step, value, now - record.start_time(), std::move(values)});
            return d;
        }
        std::string failure;
        try {
            d = strategy_.report(trial.id(), step,
                                 intermediate_report(&record, now, loss_of(value),
                                                     options_.objectives, options_.constraints, metric_names_, values));
            took = true;
        } catch (const InvalidArgument&) {
            throw;
        } catch (const StrategyError& e) {
            failure = e.what();  // names the strategy already
        } catch (const std::exception& e) {
            failure = fmt::format("strategy '{}' failed in report(): {}", strategy_name_, e.what());
        }
        emit(TrialReported{now, trial.id(), step, value, now - record.start_time(),
                           std::move(values)});
        reporting_ = trial.id();
        take_decisions_after(failure, "report");
        reporting_.reset();
        if (!failure.empty()) fail(failure);
        // A Stop recorded while the trial is told to go on: the result would show a decision that
        // never took effect.
        if (took && d == Decision::Continue && !stop_flag_.load())
            for (std::size_t i = decided_before; i < record.decisions.size(); ++i)
                if (record.decisions[i].kind == DecisionRecord::Kind::Stop) {
                    fail(fmt::format("strategy '{}' decided Stop for trial {} at step {} but told it to continue: "
                                     "report() returns Decision::Stop with a Stop it records",
                                     strategy_name_, trial.id(), step));
                    break;
                }
        // A Stop the strategy recorded for this trial while it ran (at another trial's report, or in
        // ask()) reaches it here, at its next report: it was on record and never took effect.
        if (took && d == Decision::Continue && decided_before > 0 &&
            record.decisions[decided_before - 1].kind == DecisionRecord::Kind::Stop)
            d = Decision::Stop;
        // A Stop with no record yet: explained if the trial's run ends with one (ASHA-wait records
        // its hold when told of the end), or if the trial goes on after its Stop or Pause record.
        if (took && d == Decision::Stop && record.decisions.size() == decided_before && !has_standing_stop(record))
            unexplained_stops_.try_emplace(trial.id(), step);
        if (past_budget(step, trial.budget()) && !warned_past_budget_) {
            warned_past_budget_ = true;
            warn(fmt::format("trial {} reported step {} past its budget of {}, and {} {}: the trainer should train up "
                             "to trial.budget() and return (the resource it used counts{})",
                             trial.id(), step, trial.budget(), strategy_name_,
                             d == Decision::Continue ? "let it go on" : "told it to stop",
                             // The rule, not this trial's end, which is not known yet (it may still fail).
                             d == Decision::Continue ? ""
                             : strategy_.get().resumes_trials()
                                 ? "; a trial stopped past its budget trained in full: it is not stopped early, and "
                                   "a scheduler that pauses trials at rungs pauses it there, ranked on its report "
                                   "at the rung"
                                 : "; a trial stopped past its budget trained in full and ends Completed, not "
                                   "stopped early, unless it fails"),
                 now);
        }
        return d;
    }

    [[nodiscard]] double seconds_since_start() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_steady_).count();
    }

    [[nodiscard]] static double unix_now() {
        return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    }

    // Unix seconds now, from the monotonic clock (immune to clock changes during the run).
    [[nodiscard]] double run_clock() const { return session_start_ + seconds_since_start(); }

    void watch_deadline() {
        std::unique_lock lk(mu_);
        cv_.wait_until(lk, *deadline_, [&] { return stop_flag_.load() || active_workers_ == 0; });
        if (!stop_flag_.load() && active_workers_ > 0) stop_at_deadline();
    }

    // Called with the lock held, by a worker between trials or by the watchdog during them.
    void stop_at_deadline() { request_stop(fmt::format("max_runtime of {}s reached", options_.max_runtime_seconds)); }

    // Joining a thread twice at once is undefined (it hung two waiting threads): one joins, the
    // others wait for it here.
    void join() {
        std::lock_guard lk(join_mu_);
        if (watchdog_.joinable()) watchdog_.join();
        for (auto& t : workers_)
            if (t.joinable()) t.join();
    }

    const Result& finish_waiting(const char* call) {
        refuse_in_observer(call);
        refuse_on_worker(call);
        {
            std::lock_guard lk(mu_);
            refuse_taken(call);
        }
        join();
        std::lock_guard lk(mu_);
        refuse_taken(call);
        if (!final_) final_ = std::move(state_).result(true);
        return *final_;
    }

    void request_stop(std::string_view reason) {
        if (!stop_flag_.load()) {
            if (stop_reason_.empty()) stop_reason_ = reason;
            stop_flag_.store(true);
        }
        cv_.notify_all();
    }

    // Something went wrong that the run cannot go on with: it stops, with this as its reason. A
    // run stopping already for another reason keeps that one and gets this as a warning, so that
    // no failure goes unsaid; so does a run ending of itself (a worker found the strategy done
    // while trials still run: the reason is set, the stop flag not).
    void fail(std::string_view reason) {
        const bool ending = stop_flag_.load() || !stop_reason_.empty();
        request_stop(reason);
        if (ending && reason != stop_reason_ && !warned_before(std::string(reason))) warn(std::string(reason), run_clock());
    }

    // Journals an event, then applies it to the run's state: the journal is written first, as
    // Optuna's journal storage does, so what is on disk never lags what the run believes. A failed
    // write stops the run: what is on disk stays consistent, and every trial that ended is kept.
    void emit(const RunEvent& event) {
        if (journal_ && !journal_failed_) try {
                journal_->write(to_json(event));
            } catch (const IoError& e) {
                journal_failed_ = true;
                fail(e.what());
            }
        state_.apply(event);
        if (progress_line_) (*progress_line_)(event, state_, seconds_since_start());
        if (options_.on_event && !observer_failed_) try {
                observer_thread_.store(std::this_thread::get_id(), std::memory_order_relaxed);
                struct Left {
                    std::atomic<std::thread::id>& id;
                    ~Left() { id.store(std::thread::id(), std::memory_order_relaxed); }
                } left{observer_thread_};
                const HeldProgress held(progress_line_);
                options_.on_event(event, state_);
            } catch (const std::exception& e) {
                observer_failed_ = true;
                fail(fmt::format("the on_event observer threw: {}", e.what()));
            } catch (...) {
                observer_failed_ = true;
                fail("the on_event observer threw a non-standard exception");
            }
    }

    // Text that may carry an exception's bytes (a warning, a failure, the run's end) is recorded as
    // the journal writes it, valid UTF-8, so that the live result and load_result's agree.
    void warn(std::string message, double time, bool of_run_end = false) {
        emit(RunWarned{time, valid_utf8(message), of_run_end});
    }
    // "trial 7: <reason>", whether or not the reason begins so already.
    [[nodiscard]] static std::string with_trial_prefix(TrialId id, const std::string& reason) {
        const std::string prefix = fmt::format("trial {}: ", id);
        return reason.starts_with(prefix) ? reason : prefix + reason;
    }
    // The trial that trained the most (the first such), if any trained at all.
    [[nodiscard]] const TrialRecord* most_trained() const {
        const TrialRecord* most = nullptr;
        for (const TrialRecord& r : state_.records())
            if (r.status != TrialStatus::Failed && (!most || r.resource_used > most->resource_used)) most = &r;
        return most;
    }
    [[nodiscard]] bool warned_before(const std::string& message) const {
        const auto& w = state_.setup().warnings;
        return std::find(w.begin(), w.end(), message) != w.end();
    }

    // on_event runs under the run's lock: a call of the job from it that takes the lock (or waits
    // for the run) would wait for ever, so it is refused, naming the call; stop() works there.
    [[nodiscard]] bool in_observer() const noexcept {
        return observer_thread_.load(std::memory_order_relaxed) == std::this_thread::get_id();
    }
    void refuse_in_observer(const char* call) const {
        if (in_observer())
            throw Error(fmt::format("TuningJob::{}() called from on_event, which runs under the run's lock: it would "
                                    "wait for ever; read the RunState on_event is given (stop() may be called there)",
                                    call));
    }

    // take_result() moved the result out: reading it again would give an empty run.
    void refuse_taken(const char* call) const {
        if (taken_progress_)
            throw Error(fmt::format("TuningJob::{}() after take_result(), which handed the result over: use the Result "
                                    "it returned",
                                    call));
    }

    // The objective and the trial callbacks run on the run's worker threads, which the run waits
    // for: waiting for the run from one of them would wait for ever (two workers or more) or fail
    // with a bare system error (one), so it is refused, naming the call.
    // Which run, if any, the calling thread works for: each worker marks itself as it starts, so
    // that the check reads no std::thread another thread may be joining.
    static const TuningRun*& run_of_this_thread() noexcept {
        thread_local const TuningRun* run = nullptr;
        return run;
    }
    void refuse_on_worker(const char* call) const {
        if (run_of_this_thread() == this)
            throw Error(fmt::format("TuningJob::{}() called from the objective or a trial callback, on one of the run's "
                                    "worker threads, which the run waits for: it would wait for ever; call stop() "
                                    "there, and {}() from the thread that started the run",
                                    call, call));
    }

    void sync_journal() {
        if (!journal_ || journal_failed_) return;
        try {
            journal_->sync();
        } catch (const IoError& e) {
            journal_failed_ = true;
            fail(e.what());
        }
    }

    // A new run: its options and space, then the warm-start parents' best trials (so that
    // load_result() has the overall best) and the warm start's notes as warnings.
    void begin() {
        RunStarted start{session_start_,        options_.metric,
                         options_.direction,    strategy_name_,
                         options_.seed,         options_.max_jobs,
                         options_.max_parallel_jobs, options_.instances_per_trial,
                         max_resource_,         space_};
        if (options_.objectives.size() > 1) start.objectives = options_.objectives;
        start.constraints = options_.constraints;
        start.instances_parameter = options_.instances_parameter;
        start.settings = strategy_.settings();
        emit(start);
        if (!earlier_.warning.empty()) warn(earlier_.warning, session_start_);  // a first line cut by a crash
        if (warm_.parent_runs > 0) {
            std::vector<std::pair<std::size_t, TrialId>> used;
            for (const auto& o : warm_.observations) used.emplace_back(o.parent, o.trial);
            emit(RunWarmStarted{session_start_, std::move(warm_.parent_bests), warm_.parent_runs,
                                warm_.observations.size(), warm_.fingerprint, std::move(used), warm_.type});
        }
        for (auto& note : warm_.notes) warn(std::move(note), session_start_);
        warm_ = {};
    }

    // Resuming: the journal is replayed into the strategy and the state (detail/replay.hpp); trials
    // that ended are kept. Of those in flight at the crash, a trial the strategy had already told
    // to stop ends as it would have (at its last report); the others run again.
    void resume() {
        Replayed replayed = replay_journal(options_.journal, earlier_.events, strategy_,
                                           options_.direction == Direction::Maximize, options_.max_jobs);
        strategy_.set_max_trials(options_.max_jobs);  // the journal's sessions may have had fewer
        state_ = std::move(replayed.state);
        // What the run's end counts over the whole run, the earlier sessions' part.
        plain_reports_ = std::move(replayed.plain_reports);
        judged_before_retry_ = std::move(replayed.judged_before_retry);
        trials_out_of_time_ = std::move(replayed.out_of_time);
        if (!earlier_.warning.empty()) warn(earlier_.warning, session_start_);
        // Decisions the crash kept out of the journal.
        for (auto& d : replayed.late) emit(TrialDecided{session_start_, std::move(d)});
        std::vector<TrialStarted> again;
        for (const TrialStarted& open : state_.open_trials()) {
            const TrialRecord& r = state_.record(open.trial);
            auto said = replayed.last_said.find(open.trial);
            if (said == replayed.last_said.end() || said->second != Decision::Stop || r.curve.empty()) {
                again.push_back(open);
                continue;
            }
            const ReportPoint last = r.curve.back();
            Attempt a;
            // As the live run would have ended it: a Stop for a report past its budget, or at the
            // last step of a full budget, leaves a trial trained in full.
            a.stopped = !past_budget(last.step, open.budget) && !stop_at_full_budget(last.step, open.budget);
            a.value = last.value;
            a.values = state_.last_reported_values(open.trial);  // with several metrics, each one's
            a.resource = last.step;
            a.reports = r.curve.size();
            finish(open.trial, a, r.start_time() + last.seconds);
        }
        emit(RunResumed{session_start_, state_.records().size(), again.size(), options_.max_jobs,
                        options_.max_parallel_jobs});
        for (const auto& open : again)
            reruns_.push_back(Suggestion::run(open.trial, open.config, open.budget, open.resume_from));
        // Checkpoints of trials that will not run again go (a crash can come between a trial's end
        // and their removal).
        auto may_run = [&](TrialId id) {
            if (!state_.has(id)) return false;
            const TrialStatus st = state_.record(id).status;
            return st == TrialStatus::Running || st == TrialStatus::Paused;
        };
        checkpoints_.tidy(may_run);
        // A run that met a completion criterion ends again at once: running the finished program
        // again adds no trial (it went on searching), and a criterion changed for the resume is
        // judged on the trials so far. They are judged in the order they completed and after each,
        // as the live run judged them: in id order, or only at the end, a trial that improved after
        // the criterion was met (a slow one, or one that ended after the stop) reset the count of
        // trials without improvement, and the run went on when run again.
        std::vector<const TrialRecord*> completed;
        for (const auto& r : state_.records())
            if (r.status == TrialStatus::Completed) completed.push_back(&r);
        auto ended_at = [](const TrialRecord* r) { return r->segments.empty() ? 0.0 : r->segments.back().end; };
        std::stable_sort(completed.begin(), completed.end(),
                         [&](const TrialRecord* a, const TrialRecord* b) { return ended_at(a) < ended_at(b); });
        for (const TrialRecord* r : completed) check_completion(*r, true);
        earlier_ = {};
    }

    // Whether `step` is past a budget that is in play: not a budget of 1 with no max_resource above
    // it (RandomSearch's default), under which a trainer counts its own epochs, each a report.
    [[nodiscard]] bool past_budget(Resource step, Resource budget) const {
        return step > budget && budget_in_play(budget);
    }
    [[nodiscard]] bool budget_in_play(Resource budget) const { return budget > 1 || max_resource_.value_or(1) > 1; }

    // A strategy's Stop at the last step of a full budget (a median rule judging the final report)
    // leaves a trial that trained in full: Completed, the decision on record. Not with a budget of
    // 1, where no resource is in play and a trainer reports every epoch it trains.
    [[nodiscard]] bool stop_at_full_budget(Resource stop_step, Resource budget) const {
        return stop_step == budget && budget > 1 && (!max_resource_ || budget >= *max_resource_);
    }

    // The trial callbacks run in the order of the events they follow (a promoted trial's start
    // after the end of its previous run, which another worker may be delivering): each is queued,
    // with a copy of the record, under the run's lock, and delivered outside it, one at a time, by
    // whichever worker comes first. A worker returns from deliver_callbacks() once the queue is
    // empty, so its own trial's start was delivered before the objective runs.
    void queue_callback(const std::function<void(const TrialRecord&)>& callback, TrialId id) {
        if (callback) pending_callbacks_.push_back({&callback, state_.record(id)});
    }
    void deliver_callbacks() {
        if (!options_.on_trial_start && !options_.on_trial_end) return;  // nothing is ever queued
        std::lock_guard lk(callback_mu_);
        for (;;) {
            PendingCallback next;
            {
                std::lock_guard lk2(mu_);
                if (pending_callbacks_.empty()) return;
                next = std::move(pending_callbacks_.front());
                pending_callbacks_.pop_front();
            }
            // "on_trial_end threw for trial 7: ...": which callback, and which trial it was told of.
            const char* callback = next.callback == &options_.on_trial_start ? "on_trial_start" : "on_trial_end";
            try {
                const HeldProgress held(progress_line_, &mu_);
                (*next.callback)(next.record);
            } catch (const std::exception& e) {
                std::lock_guard lk2(mu_);
                fail(fmt::format("{} threw for trial {}: {}", callback, next.record.id, e.what()));
            } catch (...) {
                std::lock_guard lk2(mu_);
                fail(fmt::format("{} threw a non-standard exception for trial {}", callback, next.record.id));
            }
        }
    }

    void work(std::size_t worker) {
        run_of_this_thread() = this;
        std::unique_lock lk(mu_);
        while (!stop_flag_.load()) {
            if (deadline_ && std::chrono::steady_clock::now() >= *deadline_) {
                stop_at_deadline();
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
                    if (s.runs()) check_suggestion(s);
                    // A decision made in ask() (a promotion) is journaled after the trial_started of the
                    // run it starts (in run()): a crash between the two lines leaves a run to redo, not a
                    // decision that no trial follows, which a resume could not replay.
                    if (!s.runs()) apply_decisions();
                }
            } catch (const StrategyError& e) {
                fail(e.what());  // names the strategy already
                break;
            } catch (const std::exception& e) {
                fail(fmt::format("strategy '{}' failed in ask(): {}", strategy_name_, e.what()));
                break;
            }
            if (s.kind == Suggestion::Kind::Done) {
                if (stop_reason_.empty())
                    stop_reason_ = state_.records().size() >= options_.max_jobs ? "max_jobs reached" : "strategy finished";
                break;
            }
            if (s.kind == Suggestion::Kind::Wait) {
                if (state_.count(TrialStatus::Running) == 0) {
                    // Nothing running can end the wait: the run ends, but not as if the strategy were done.
                    if (stop_reason_.empty()) {
                        stop_reason_ = fmt::format("strategy '{}' answered Wait with no trial running", strategy_name_);
                        warn(fmt::format("strategy '{}' answered Wait with no trial running, so nothing could end "
                                         "the wait and the run ended after {} trials; a scheduler with nothing left "
                                         "to run answers Done",
                                         strategy_name_, state_.records().size()),
                             run_clock());
                    }
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
        if (active_workers_ == 1) {
            // The last worker: trials the run's end stopped while they waited for promotion (the
            // strategy closing its rungs, or stop(), a time limit, a completion criterion cutting
            // them) have ended, and on_trial_end hears of them as the result shows them, while the
            // run is still under way (no other worker is left to deliver them, and one that
            // throws is a warning of the run).
            if (options_.on_trial_end)
                for (const TrialRecord& r : state_.records())
                    if (r.status == TrialStatus::Paused) {
                        pending_callbacks_.push_back({&options_.on_trial_end, r});
                        state_.end_paused(pending_callbacks_.back().record);
                    }
            lk.unlock();
            deliver_callbacks();
            lk.lock();
        }
        if (--active_workers_ == 0) {
            const double now = run_clock();
            // What the run's end says of the whole run, once (RunWarned::of_run_end): a resumed
            // session dropped what the ends before it said, and says again what still holds.
            auto warn_once = [&](std::string text) {
                if (!warned_before(text)) warn(std::move(text), now, true);
            };
            // The strategy's notes (its fallbacks) become warnings, in the journal too.
            for (const auto& note : strategy_.notes()) warn_once(fmt::format("{}: {}", strategy_name_, note));
            if (plain_reports_.count > 0 &&
                std::any_of(state_.records().begin(), state_.records().end(),
                            [](const TrialRecord& r) { return !r.decisions.empty(); }))
                warn_once(fmt::format("{} report{} of this constrained run carried {} (the first: trial {} at step {}): {} "
                                 "judged those trials as if they met the constraints; report ht::Metrics with the "
                                 "constrained metrics too, so that an infeasible trial ranks after the feasible ones",
                                 plain_reports_.count, plain_reports_.count == 1 ? "" : "s",
                                 plain_reports_.first_missing.empty()
                                     ? std::string("a single value")
                                     : fmt::format("no value of the constrained metric '{}'", plain_reports_.first_missing),
                                 plain_reports_.first_trial, plain_reports_.first_step, strategy_name_));
            if (trials_out_of_time_.size() > 1)
                warn_once(fmt::format("{} trials ran past max_trial_seconds = {} s", trials_out_of_time_.size(),
                                      options_.max_trial_seconds));
            // The warning names the first trial that went on after its Stop; where several did
            // (a trainer that never checks should_stop(), a command's buffered output), early
            // stopping saved nothing on any of them, which one name does not say. Counted from the
            // records, so a resumed run counts its earlier sessions' too.
            if (const auto went_on = std::count_if(
                    state_.records().begin(), state_.records().end(),
                    [](const TrialRecord& r) {
                        return std::any_of(r.decisions.begin(), r.decisions.end(), [&](const DecisionRecord& d) {
                            return d.kind == DecisionRecord::Kind::Stop && d.resource < r.resource_used;
                        });
                    });
                went_on > 1)
                warn_once(fmt::format("{} trials went on training after {} told them to stop; what they trained "
                                      "after the stop was spent all the same",
                                      went_on, strategy_name_));
            // Every trial failed: most often one mistake repeated (a misspelt parameter name, a
            // trainer that cannot start), which the summary should say, not each record alone.
            if (const auto& records = state_.records();
                !records.empty() && state_.count(TrialStatus::Failed) == records.size())
                warn_once(fmt::format("all {} trials failed; the first, {}", records.size(),
                                      with_trial_prefix(records.front().id, records.front().failure_reason)));
            // A promotion-type run whose budget ran out before any trial trained in full (trials
            // paused at rungs, none promoted to the end): best() falls back to a trial judged on
            // part of its training, which a user reading it as the answer should know (a handful
            // of trials do this). Runs whose trials were all stopped early say so in their counts.
            else if (const TrialRecord* most = most_trained();
                     most && max_resource_.value_or(1) > 1 && most->resource_used < *max_resource_ &&
                     (stop_reason_ == "max_jobs reached" || stop_reason_ == "strategy finished") &&
                     std::any_of(records.begin(), records.end(), [](const TrialRecord& r) {
                         return std::any_of(r.decisions.begin(), r.decisions.end(), [](const DecisionRecord& d) {
                             return d.kind == DecisionRecord::Kind::Pause;
                         });
                     }))
                warn_once(fmt::format("no trial trained to max_resource = {} (the most any did: {}, trial {}), so best() "
                                      "is a trial judged on part of its training: {} goes past a rung only with trials "
                                      "that rank in its top fraction there, and {} trials did not get that far; {}",
                                      *max_resource_, most->resource_used, most->id, strategy_name_, records.size(),
                                      // A sampler with nothing left (a grid) gains no trial from a larger budget.
                                      stop_reason_ == "max_jobs reached"
                                          ? std::string("raise max_jobs")
                                          : fmt::format("its sampler had no configuration left after {} trials, so a "
                                                        "larger max_jobs adds none: give it more (a grid, more points)",
                                                        records.size())));
            ended_after_ = seconds_since_start();
            emit(RunEnded{now, valid_utf8(stop_reason_)});
            sync_journal();
            checkpoints_.remove_folder_if_empty();  // what paused trials saved stays for a resume
        }
        cv_.notify_all();
    }

    // A suggestion the runner cannot carry out as the strategy means it is a breach of the strategy's
    // contract, refused before anything runs (Scheduler::ask() already refuses new trials beyond the
    // budget and ids never handed out; a strategy of the user's own may not): a new trial beyond
    // max_jobs, a configuration of another space, a budget out of range, a
    // trial that is running (two runs of one trial would share its record), or an earlier trial
    // named again to go no further than its last run (neither a larger budget, as a promotion
    // gives, nor a later point to resume from, as a held trial's release gives), which makes no
    // progress and, asked again and again, would never end.
    void check_suggestion(const Suggestion& s) const {
        auto breach = [&](const std::string& what) {
            return StrategyError(fmt::format("strategy '{}' suggested trial {} {}", strategy_name_, s.trial, what));
        };
        bool same_space = s.config.size() == space_.size();
        // The same parameter objects when the configuration comes from this run's space (the usual
        // case, no string compared, its values checked when it was made); else the same names in the
        // same order, and each value checked here (a sampler of the user's own built it).
        bool made_here = same_space;
        for (std::size_t i = 0; same_space && i < s.config.size(); ++i) {
            const bool shared = &s.config.parameter(i) == &space_.parameter(i);
            made_here = made_here && shared;
            same_space = shared || s.config.name(i) == space_.parameter(i).name;
        }
        if (!same_space) {
            auto names = [](auto&& name_of, std::size_t n) {
                std::vector<std::string> out;
                for (std::size_t i = 0; i < n; ++i) out.push_back(fmt::format("'{}'", name_of(i)));
                return out.empty() ? std::string("none") : detail::join(out, ", ");
            };
            throw breach(fmt::format("with a configuration of another search space: its parameters are {}, this run's "
                                     "are {}; a configuration comes from the sampler, or from the trial's record",
                                     names([&](std::size_t i) { return s.config.name(i); }, s.config.size()),
                                     names([&](std::size_t i) { return space_.parameter(i).name; }, space_.size())));
        }
        if (!made_here) {
            try {
                space_.check(s.config);
            } catch (const InvalidArgument& e) {
                throw breach(fmt::format("with a configuration the search space does not allow: {}", e.what()));
            }
        }
        if (s.budget < 1 || (max_resource_ && s.budget > *max_resource_))
            throw breach(fmt::format("with budget {}: a budget is at least 1{}", s.budget,
                                     max_resource_ ? fmt::format(" and at most max_resource = {}", *max_resource_) : ""));
        if (s.resume_from < 0 || s.resume_from >= s.budget)
            throw breach(fmt::format("to resume from {} with budget {}: a trial resumes from 0 up to below its budget",
                                     s.resume_from, s.budget));
        if (!state_.has(s.trial)) {
            if (state_.records().size() >= options_.max_jobs)
                throw breach(fmt::format("as a new trial beyond max_jobs = {}", options_.max_jobs));
            if (s.resume_from > 0)
                throw breach(fmt::format("to resume from {}, but it is a new trial: a new trial starts from 0", s.resume_from));
            return;
        }
        const TrialRecord& r = state_.record(s.trial);
        if (r.status == TrialStatus::Running)
            throw breach("while it is running: a trial runs on one worker at a time");
        if (r.status == TrialStatus::Stopped && !r.decisions.empty() &&
            r.decisions.back().kind == DecisionRecord::Kind::Stop)
            throw breach(fmt::format("again after it stopped it at resource {}: a Stop is final (its checkpoint is "
                                     "gone); a scheduler pauses a trial it may run again",
                                     r.decisions.back().resource));
        const auto [budget, from] = state_.last_run(s.trial);
        if (s.budget <= budget && s.resume_from <= from)
            throw breach(fmt::format("again with budget {} from {}, no further than its last run (budget {} from {}): a "
                                     "trial runs again only to go further",
                                     s.budget, s.resume_from, budget, from));
        // It resumes where it got to: the steps between would be neither trained nor reported.
        // (Its last budget counts as reached: a trainer may return before its budget unasked.)
        if (const Resource reached = std::max(r.resource_used, budget); s.resume_from > reached)
            throw breach(fmt::format("to resume from {}, past where it got to ({}): a trial resumes from a step it "
                                     "reached",
                                     s.resume_from, reached));
        if (!(s.config == r.config))
            throw breach("again with another configuration than it ran with: a trial keeps its configuration");
    }

    // Runs one suggestion. Called and returns with `lk` held; the objective runs without it.
    void run(std::unique_lock<std::mutex>& lk, std::size_t worker, Suggestion s, bool rerun) {
        // A trial re-run after a crash must not be judged again on the steps it already reported.
        Resource judged = 0;
        double judged_value = std::numeric_limits<double>::quiet_NaN();
        if (rerun && state_.has(s.trial) && !state_.record(s.trial).curve.empty()) {
            judged = state_.record(s.trial).curve.back().step;
            judged_value = state_.record(s.trial).curve.back().value;
        }
        emit(TrialStarted{run_clock(), s.trial, s.config, s.budget, s.resume_from, worker, rerun});
        // A run cut by a crash during a retry has only the retries it had left.
        const int failed_before = state_.failed_attempts(s.trial);
        std::string first_failure = state_.first_failure(s.trial);
        // Every metric of its last report, for a trial cut after reporting its budget (below).
        const std::vector<double> judged_values =
            judged >= s.budget ? state_.last_reported_values(s.trial) : std::vector<double>{};
        starting_ = s.trial;
        try {
            apply_decisions();  // the promotion ask() made
        } catch (const StrategyError& e) {
            fail(e.what());  // the trial started: it runs, and sees the stop at its first report
        }
        starting_.reset();
        queue_callback(options_.on_trial_start, s.trial);
        lk.unlock();

        // Read outside the lock: a large checkpoint file does not hold up the other workers.
        std::string unreadable;
        auto checkpoint = checkpoints_.take(s.trial, std::max(s.resume_from, judged), unreadable);
        // Its last report and checkpoint are at its budget already (the crash came before its end
        // reached the journal): nothing is left to train, and the objective, called now, would
        // return from a loop that ran no step (a command trainer would find its state at the budget
        // in its checkpoint folder and print nothing). The trial ends with the value (and, with
        // several metrics, the values) it reported there, without a call. A journal written
        // before reports kept every metric's value has the first alone: the trial trains again.
        std::optional<Attempt> ended_before;
        const bool saved_at_budget = checkpoint && checkpoint->step >= s.budget;
        const bool kept_folder = !checkpoint && judged >= s.budget && checkpoints_.has_trial_folder(s.trial);
        if ((saved_at_budget || kept_folder) && judged >= s.budget) {
            if (several_metrics_ && judged_values.empty()) {
                checkpoint.reset();
            } else {
                ended_before.emplace();
                ended_before->value = judged_value;
                ended_before->values = judged_values;
                ended_before->resource = judged;
                ended_before->reports = 1;  // its reports are in the journal
                ended_before->resumed_from = checkpoint ? checkpoint->step : judged;
                ended_before->checkpoint = std::move(checkpoint);  // a promotion continues from it
            }
        }
        deliver_callbacks();
        auto attempt = ended_before ? std::move(*ended_before)
                                    : execute(s, std::move(checkpoint), judged, failed_before, std::move(first_failure), lk);

        lk.lock();
        if (!unreadable.empty())
            warn(fmt::format("{}: the trial {}", unreadable,
                             attempt.resumed_from > 0 ? "continued from the checkpoint before it" : "started over"),
                 run_clock());
        else if (attempt.started_over && !attempt.failed && !warned_started_over_) {
            warned_started_over_ = true;
            const bool removed = removed_at_end_.count(s.trial) > 0;
            warn(fmt::format("{} resumed trial {} from step {}, but {}, so it trained again from the start: {}",
                             strategy_name_, s.trial, s.resume_from,
                             attempt.checkpoint_at_0 ? "its checkpoint was saved before its first report, at step 0"
                             : removed ? "its checkpoint was removed when its run ended, as the trial was not paused"
                                       : "it saved no checkpoint",
                             attempt.checkpoint_at_0
                                 ? "save the checkpoint after the report of the step it holds, or name that step, "
                                   "trial.save_checkpoint(bytes, step)"
                             : removed
                                 ? "a scheduler that runs a trial again records a Pause decision for it when its run "
                                   "ends (in tell()), so that its checkpoint is kept"
                                 : "save one with trial.save_checkpoint() and continue from trial.checkpoint() (a "
                                   "CommandObjective: pass {checkpoint_dir} to the trainer, which keeps its state "
                                   "there and continues from it), or, "
                                   "for ASHA and asynchronous Hyperband, choose .type = ht::HalvingType::Stop without "
                                   "wait_for_peers, which never resumes a trial (a trial held at a rung is told "
                                   "should_stop(): save before returning)"),
                 run_clock());
        } else if (attempt.folder_restart > 0 && !attempt.failed && !warned_folder_restart_) {
            warned_folder_restart_ = true;
            warn(fmt::format("{} resumed trial {} from step {}, but its first report was step {}: the trainer did not "
                             "continue from its checkpoint folder (did it save its state there, and leave it? a "
                             "trainer that removes the folder, or a clean-up that empties it, makes every promoted "
                             "trial train again)",
                             strategy_name_, s.trial, s.resume_from, attempt.folder_restart),
                 run_clock());
        }
        finish(s.trial, attempt);
        queue_callback(options_.on_trial_end, s.trial);
        lk.unlock();
        deliver_callbacks();
        lk.lock();
    }

    struct Attempt {
        bool failed = false;
        bool stopped = false;
        double value = std::numeric_limits<double>::quiet_NaN();
        std::vector<double> values;  // every metric's, when the run has several (metric_names_)
        Resource resource = 0;
        std::size_t reports = 0;
        std::string failure;
        int retries = 0;
        std::optional<SavedCheckpoint> checkpoint;
        Resource ignored_stop_at = 0;  // > 0: told to stop at this step, the objective went on
        double waited_seconds = 0.0;   // waiting for resources, every attempt's (not billed)
        Resource resumed_from = 0;     // the checkpoint's step it continued from
        bool started_over = false;     // promoted, but with no checkpoint to continue from
        bool checkpoint_at_0 = false;  // ... as its checkpoint was saved before its first report
        Resource folder_restart = 0;   // promoted with a checkpoint folder, but reported again from this step
        bool out_of_time = false;      // past max_trial_seconds: told to stop, or unstoppable
        bool timed_out = false;        // ... and cut short by it
        bool went_on_after_time = false;  // ... and reported past the step its time stopped it at
        Resource returned_short = 0;   // > 0: completed after reporting only up to this step, below its budget
        std::string unmeasured;        // a constrained metric its Metrics left out (NaN: not shown to meet it)
    };

    // The Metrics an objective returned, in the run's order (the first objective becomes the
    // trial's value); or why they cannot be used: an objective missing, or a metric not finite.
    // A constrained metric left out stays NaN, so the trial cannot be shown to meet the
    // constraints (a trainer stopped early may have no final model to measure: it was failed
    // for it, and its stop lost). Other names are ignored (a command's metrics kept for its
    // logs), but listed when one of the run's is missing: a misspelt name shows there.
    [[nodiscard]] std::optional<std::string> take_metrics(const Metrics& m, Attempt& a) const {
        a.values.assign(metric_names_.size(), std::numeric_limits<double>::quiet_NaN());
        std::vector<std::string_view> others;
        for (const auto& [name, value] : m.values()) {
            auto it = std::find(metric_names_.begin(), metric_names_.end(), name);
            if (it == metric_names_.end()) others.push_back(name);
            else a.values[static_cast<std::size_t>(it - metric_names_.begin())] = value;
        }
        const std::size_t objectives = std::max<std::size_t>(1, options_.objectives.size());
        for (std::size_t i = 0; i < metric_names_.size(); ++i) {
            if (std::isfinite(a.values[i])) continue;
            if (m.get(metric_names_[i])) return fmt::format("the objective returned {} = {}", metric_names_[i], a.values[i]);
            if (i >= objectives) {
                if (a.unmeasured.empty()) a.unmeasured = metric_names_[i];
                continue;
            }
            return fmt::format("the objective returned no value for metric '{}'{}", metric_names_[i],
                               others.empty() ? std::string()
                                              : fmt::format(" (it also returned {}, which the run does not have)",
                                                            detail::join(others, ", ")));
        }
        a.value = a.values.front();
        if (!several_metrics_) a.values.clear();
        return std::nullopt;
    }

    // Each attempt's Trial lives until the run ends, not just the objective call: an objective may
    // leave a thread behind that still calls it (see Trial::end).
    Trial& keep_trial(TrialId id, const Config& config, Resource budget, Resource resumed_from,
                      std::optional<std::string> checkpoint) {
        std::lock_guard lk(trials_mu_);
        return trials_.emplace_back(id, config, budget, resumed_from, std::move(checkpoint));
    }

    // Runs the objective (with retries) outside the lock; `failed_before` attempts of this run
    // failed in an earlier session, which a crash cut during their retry, the first of them for
    // `first_failure` ("" when none did).
    Attempt execute(const Suggestion& s, std::optional<SavedCheckpoint> checkpoint, Resource judged,
                    int failed_before, std::string first_failure, std::unique_lock<std::mutex>& lk) {
        Attempt a;
        // A promoted trial, or one cut by a crash, continues from its checkpoint's step, which may
        // lie before the resource the scheduler resumes it from (saved before the report that
        // paused it) or before its last report (the crash came between a report and the next
        // save); what it reports again up to there was judged already. (A checkpoint past what was
        // judged, whose reports never reached the journal, is not taken.)
        const Resource counted = std::max(s.resume_from, judged);
        const bool resumes = checkpoint && checkpoint->step > 0;
        const Resource from = resumes ? checkpoint->step : 0;
        double waited = 0.0;  // every attempt's wait for resources (Trial::resources_acquired)
        // A retry can fail for a reason of its own (a promoted command trainer whose folder the
        // failed attempt left at the budget has nothing to train and prints nothing): the final
        // reason keeps the first one, the cause (an earlier session's, after a crash).
        for (int attempt = failed_before;; ++attempt) {
            const auto began = std::chrono::steady_clock::now();
            std::optional<std::string> bytes = resumes ? std::optional<std::string>(checkpoint->bytes) : std::nullopt;
            // Only an objective that receives the Trial can keep a reference to it past its call.
            std::optional<Trial> unseen;
            Trial& trial = objective_.sees_trial ? keep_trial(s.trial, s.config, s.budget, from, std::move(bytes))
                                                 : unseen.emplace(s.trial, s.config, s.budget, from, std::move(bytes));
            trial.host_.store(this, std::memory_order_release);
            if (options_.max_trial_seconds > 0.0)
                trial.limit_time(began, steady_duration(options_.max_trial_seconds));
            if (counted > from) trial.restart_from(counted);
            a = Attempt{};
            a.retries = attempt;
            a.resumed_from = from;
            try {
                std::optional<std::string> bad_metrics;
                if (objective_.returns_metrics()) bad_metrics = take_metrics(objective_.call_metrics(s.config, trial), a);
                else a.value = objective_(s.config, trial);
                if (!trial.failure().empty()) {
                    a.failed = true;
                    a.failure = trial.failure();
                } else if (bad_metrics) {
                    a.failed = true;
                    a.failure = std::move(*bad_metrics);
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
            trial.end();
            // A checkpoint folder (CommandObjective's {checkpoint_dir}) is the trainer's to read:
            // whether it continued shows in its first report.
            a.started_over = s.resume_from > 0 && !resumes && trial.folder_.empty();
            a.checkpoint_at_0 = a.started_over && checkpoint && checkpoint->step == 0;
            if (s.resume_from > 0 && !trial.folder_.empty() && trial.reports() > 0 && trial.first_step_ <= s.resume_from)
                a.folder_restart = trial.first_step_;
            if (trial.acquired_at_) waited += std::chrono::duration<double>(*trial.acquired_at_ - began).count();
            a.waited_seconds = waited;
            // Past max_trial_seconds: cut short when it returned before its budget after a report
            // got Stop for it or after it reported and saw should_stop(); a trial that reports
            // nothing cannot tell, and one that reached its budget trained in full.
            // A trainer that counts its own epochs past a budget of 1 (no resource in play:
            // RandomSearch's default) reached no budget by reporting step 1: told to stop by the
            // run or its time, it was cut short (it counted as trained in full, for best() and the
            // target objective, and as Completed).
            const bool own_epochs = s.budget == 1 && trial.last_step() > 1;
            const bool told_to_stop = trial.saw_run_stop_.load(std::memory_order_relaxed) ||
                                      trial.saw_time_stop_.load(std::memory_order_relaxed) || trial.stopped_for_time_;
            const bool reached_budget = trial.last_step() >= s.budget && !(own_epochs && told_to_stop);
            // A Stop for a report past the trial's budget ends a trial that trained in full (the
            // trainer overran it): no early stop, whatever the strategy records of it. Not past a
            // budget of 1 that is no resource (a median rule stopping a trainer's own epochs).
            const bool overran = trial.stop_decided() && past_budget(trial.stop_step(), s.budget);
            const bool strategy_stop = trial.stop_decided() && !trial.stopped_for_time_ && !overran;
            const bool late = trial.out_of_time();  // one clock read for both verdicts
            // One that reports nothing but returned when should_stop() said its time was up was
            // cut too: it did not train in full, and must not count as such (nor meet the target).
            const bool told_time = trial.saw_time_stop_.load(std::memory_order_relaxed);
            a.timed_out = !reached_budget && (trial.stopped_for_time_ || (late && trial.reports() > 0) ||
                                              (told_time && trial.reports() == 0));
            a.out_of_time = a.timed_out || trial.stopped_for_time_ || (late && trial.reports() == 0);
            a.went_on_after_time = trial.stopped_for_time_ && trial.last_step() > trial.stop_step();
            if (a.failed && a.out_of_time)
                a.failure += fmt::format(" (after it ran past max_trial_seconds = {} s)", options_.max_trial_seconds);
            // Stopped: told so by the strategy, out of time, or the run stopped before the trial
            // reached its budget (it reported short of it, or, reporting nothing, it was told by
            // should_stop() that the run was stopping: otherwise it would count as trained in full).
            // The run was stopping for this trial once its should_stop() said so, also when the
            // watcher of max_runtime_seconds had not yet raised the flag.
            const bool run_stopping = stop_flag_.load() || trial.saw_run_stop_.load(std::memory_order_relaxed);
            a.stopped = strategy_stop || a.timed_out ||
                        (run_stopping && !reached_budget && (trial.reports() > 0 || trial.saw_run_stop_.load()));
            if (strategy_stop && trial.last_step() > trial.stop_step()) {
                a.ignored_stop_at = trial.stop_step();
                // It trained on to its full budget: a completed trial, not one stopped early. Not
                // under a budget of 1 that is no resource: a trainer counting its own epochs that
                // reports one more after its stop (a command's epoch under way at SIGTERM) was cut.
                if (!a.failed && trial.last_step() >= s.budget && budget_in_play(s.budget) && !run_stopping)
                    a.stopped = false;
            } else if (strategy_stop && !a.failed && !run_stopping && stop_at_full_budget(trial.stop_step(), s.budget)) {
                // Stopped at its last step: it trained in full, so it is a completed trial and counts
                // for best(); the decision stays on record.
                a.stopped = false;
            }
            // Steps journaled before a crash (`counted`) were trained, whatever this attempt did.
            Resource reached = std::max(trial.last_step(), counted);
            // A failure counts what the trial reported (nothing reported: nothing known trained).
            a.resource = trial.reports() > 0 || a.stopped || a.failed ? reached : s.budget;
            // An objective that never sees its Trial cannot know its budget: it trains in full.
            if (!objective_.sees_trial && !a.stopped && !a.failed && max_resource_)
                a.resource = std::max(a.resource, *max_resource_);
            // A trial that completes trained to its budget, also when it reported less often; one
            // that returned early (a trainer that ignores its budget) is warned about in finish().
            if (!a.failed && !a.stopped && trial.reports() > 0 && trial.last_step() < s.budget)
                a.returned_short = trial.last_step();
            if (!a.failed && !a.stopped) a.resource = std::max(a.resource, s.budget);
            if (!a.failed && a.stopped && !std::isfinite(a.value) && trial.last_value()) a.value = *trial.last_value();
            if (trial.checkpoint_)
                a.checkpoint = SavedCheckpoint{std::exchange(trial.checkpoint_, std::nullopt).value(),
                                               trial.checkpoint_step_};
            a.reports = trial.reports();
            // A failure past max_trial_seconds is not retried (nor is a job SageMaker stops at its
            // MaxRuntimeInSeconds): each retry would run into the same limit.
            // Nor is one that failed once the run was stopping (stop(), max_runtime_seconds): a
            // retry is a new call of the objective, and nothing new starts after a stop.
            if (!a.failed || a.stopped || a.out_of_time || attempt >= options_.max_retries || run_stopping) break;
            // Retry from scratch: the failed attempt's reports are forgotten, and so are the
            // checkpoints it saved (a crash now must not continue from them), and, for a trial that
            // began afresh, what it left in its checkpoint folder: its retry begins afresh too.
            if (!trial.folder_.empty() && s.resume_from == 0) checkpoints_.erase(s.trial);
            if (checkpoints_.on_disk()) {
                checkpoints_.drop_checkpoint(s.trial);
                try {
                    if (resumes) checkpoints_.put(s.trial, *checkpoint);
                } catch (const IoError&) {  // the retry starts over after a crash
                }
            }
            // A promoted trial's folder keeps what the failed attempt trained (the tuner cannot
            // take it back to where the trial paused): the retry goes on from there, so those
            // reports stay in its curve, and the retry's own reports replace any it trains again.
            const Resource keep = !trial.folder_.empty() && s.resume_from > 0
                                      ? std::max({s.resume_from, judged, trial.last_step()})
                                      : std::max(s.resume_from, judged);
            lk.lock();
            Resource& judged_steps = judged_before_retry_[s.trial];
            judged_steps = std::max(judged_steps, judged_before_retry(state_, s.trial, keep));
            emit(TrialRetried{run_clock(), s.trial, attempt, keep, valid_utf8(a.failure)});
            lk.unlock();
            if (first_failure.empty()) first_failure = a.failure;
        }
        if (a.failed && !first_failure.empty() && a.failure != first_failure)
            a.failure = fmt::format("{} (its first attempt failed otherwise: {})", a.failure, first_failure);
        return a;
    }

    // Ends a trial's run (at `ended_at`, or now): the event, the warnings it deserves, then the
    // strategy hears of it.
    void finish(TrialId id, Attempt& a, std::optional<double> ended_at = std::nullopt) {
        finishing_ = id;
        struct Reset {
            std::optional<TrialId>& id;
            ~Reset() { id.reset(); }
        } reset{finishing_};
        const double t1 = ended_at.value_or(run_clock());
        judged_before_retry_.erase(id);
        ++generation_;
        if (a.checkpoint && !checkpoints_.on_disk()) checkpoints_.put(id, std::move(*a.checkpoint));
        const Resource resource = std::max(state_.record(id).resource_used, a.resource);
        const TrialStatus status = a.failed    ? TrialStatus::Failed
                                   : a.stopped ? TrialStatus::Stopped
                                               : TrialStatus::Completed;
        if (a.failed) a.values.clear();
        const double run_seconds = open_run_seconds(&state_.record(id), t1);  // before the event closes the run
        // A resumed trial that trained again from the start: the scheduler learns what a promotion costs.
        const bool started_over = !a.failed && (a.started_over || a.folder_restart == 1);
        const TrialEnded ended{t1, id, status, a.failed ? std::nan("") : a.value, resource,
                               a.failed ? valid_utf8(a.failure) : "", a.retries, a.values, a.waited_seconds,
                               a.out_of_time, started_over};
        emit(ended);
        const Outcome outcome = run_outcome(ended, loss_of(ended.objective), run_seconds, options_.objectives,
                                            options_.constraints, metric_names_);
        if (a.ignored_stop_at > 0 && !warned_ignored_stop_) {
            warned_ignored_stop_ = true;
            warn(fmt::format("trial {} went on to step {} after {} told it to stop at step {}: check "
                             "trial.should_stop() after each report and return (a command: print each step's line "
                             "as the step ends, flushed, and exit on SIGTERM); what a trial trains after a stop is "
                             "spent all the same (a trial that reaches its full budget is recorded Completed)",
                             id, a.resource, strategy_name_, a.ignored_stop_at),
                 t1);
        }
        // Each trial counted once, however many of its runs (promotions) went past the limit.
        if (a.out_of_time && trials_out_of_time_.insert(id).second && trials_out_of_time_.size() == 1)
            warn(fmt::format("trial {} ran past max_trial_seconds = {} s{}", id, options_.max_trial_seconds,
                             a.failed ? std::string(" and then failed (a trial past the limit is not retried)")
                             : a.timed_out && a.reports == 0
                                 ? std::string(" and was stopped before it reported a step (it counts as cut short, "
                                               "not trained in full): report each step")
                             : a.timed_out ? fmt::format(" and was stopped at step {}", a.resource)
                             : a.reports == 0
                                 ? std::string(" without reporting, so it counts as trained in full: report each step "
                                               "and return once trial.should_stop() is set")
                             : a.went_on_after_time
                                 ? std::string(" and went on to its budget after a report was told to stop: check "
                                               "trial.should_stop() after each report")
                                 : fmt::format(" and reached its budget at the report that found it past the limit "
                                               "(step {}: it trained in full)",
                                               a.resource)),
                 t1);
        // Stopped early, a trial may have nothing to measure a constraint on; trained in full, it
        // should say.
        if (!a.failed && !a.stopped && !a.unmeasured.empty() && !warned_unmeasured_) {
            warned_unmeasured_ = true;
            warn(fmt::format("trial {} returned no value for the constrained metric '{}': it cannot be shown to meet "
                             "the constraints, so it counts as breaking them (return every constrained metric with "
                             "the objectives)",
                             id, a.unmeasured),
                 t1);
        }
        if (a.returned_short > 0 && !warned_returned_short_) {
            warned_returned_short_ = true;
            warn(fmt::format("trial {} returned after reporting step {} of its budget {} without being told to stop, "
                             "and counts as trained to its budget: right for a trainer that reports less often than "
                             "every unit, but one that stops early (a loop that ignores trial.budget(), a command "
                             "without {{budget}}) trains less than the tuner counts",
                             id, a.returned_short, state_.last_run(id).first),
                 t1);
        }
        // Under a strategy that runs every trial to its budget nothing judges reports: no advice.
        // (Nor for a trial the run's stop cut before its first report: it had no chance to.)
        if (!a.failed && !a.stopped && a.reports == 0 && max_resource_.value_or(1) > 1 && !warned_no_reports_ &&
            !strategy_.runs_to_completion()) {
            warned_no_reports_ = true;
            // An objective without a Trial cannot report: telling it to call trial.report() would be
            // advice it cannot follow.
            if (objective_.sees_trial)
                warn(fmt::format("trial {} reported no intermediate values: {} can only judge a trial from the values "
                                 "it reports along the way; call trial.report(step, value) after each resource unit "
                                 "(epoch, round...)",
                                 id, strategy_name_),
                     t1);
            else
                warn(fmt::format("trial {} reported no intermediate values: the objective takes no ht::Trial&, so it "
                                 "cannot see its budget or report along the way, and each trial counts as trained to "
                                 "max_resource = {}; to let {} stop poor trials early, take (const ht::Config&, "
                                 "ht::Trial&) and call trial.report(step, value) after each resource unit (epoch, "
                                 "round...)",
                                 id, *max_resource_, strategy_name_),
                     t1);
        }
        std::string failure;
        try {
            strategy_.tell(id, outcome);
        } catch (const StrategyError& e) {
            failure = e.what();  // names the strategy already
        } catch (const std::exception& e) {
            failure = fmt::format("strategy '{}' failed in tell(): {}", strategy_name_, e.what());
        }
        take_decisions_after(failure, "tell");
        if (!failure.empty()) fail(failure);
        const TrialRecord& rec = state_.record(id);
        if (auto it = unexplained_stops_.find(id); it != unexplained_stops_.end()) {
            const Resource step = it->second;
            unexplained_stops_.erase(it);
            // (A trial that went on after the Stop and completed shows no Stop: the warning about
            // ignoring it says what happened.)
            if (rec.status == TrialStatus::Stopped && !has_standing_stop(rec) && !warned_unexplained_stop_) {
                warned_unexplained_stop_ = true;
                warn(fmt::format("{} stopped trial {} at step {} without recording why: the result shows it Stopped "
                                 "with no decision (a custom scheduler records one with decide() before it returns "
                                 "Stop)",
                                 strategy_name_, id, step),
                     t1);
            }
        }
        if (rec.status != TrialStatus::Paused) {
            // Remembered for the warning, should a strategy of the user's own run it again.
            if (checkpoints_.erase(id)) removed_at_end_.insert(id);
        }
        if (rec.status == TrialStatus::Completed) check_completion(rec, true);
        sync_journal();  // a trial that ended is on disk before anything else happens
        cv_.notify_all();
    }

    // The decisions a call of the strategy (`call`: "report", "tell") made, applied even when the
    // call then failed (`failure` says how; a sampler that threw after its scheduler paused the
    // trial): the scheduler holds them, so a resume replays them, and the trial ends as decided
    // (a Pause left behind was taken later for another trial's, and the paused trial for one
    // completed at its rung). A decision refused sets `failure` if nothing did before.
    void take_decisions_after(std::string& failure, const char* call) {
        try {
            apply_decisions();
        } catch (const StrategyError& e) {
            if (failure.empty()) failure = e.what();  // names the strategy already
        } catch (const std::exception& e) {
            if (failure.empty()) failure = fmt::format("strategy '{}' failed in {}(): {}", strategy_name_, call, e.what());
        }
    }

    // The strategy's stops, pauses and promotions, as events; a paused trial that is stopped never
    // resumes, so its checkpoint goes.
    // A paused trial that a decision stops has ended: on_trial_end hears of it (its run's end said
    // Paused), unless it is the trial whose run is ending now (a barrier judging it as it arrives),
    // whose run's end says Stopped already.
    void apply_decisions() {
        for (auto& d : strategy_.take_decisions()) {
            check_decision(d);
            const TrialId id = d.trial;
            const bool was_paused = state_.record(id).status == TrialStatus::Paused;
            emit(TrialDecided{run_clock(), std::move(d)});
            if (state_.record(id).status == TrialStatus::Stopped) {
                checkpoints_.erase(id);
                if (was_paused && finishing_ != id) queue_callback(options_.on_trial_end, id);
            }
        }
    }

    // A decision that the trial's state allows, else StrategyError naming the strategy, the
    // decision and the trial: one taken as it came rewrote finished records (a Pause of a trial
    // that completed its full budget made it Stopped at the run's end, and best() another trial)
    // or was dropped (a decision about a trial never started).
    // - Stop: a running or paused trial, or the one whose run is ending now (a barrier judges a
    //   trial as it arrives); not twice at one step.
    // - Pause: the trial reporting, or the one whose run is ending now, below max_resource.
    // - Promote: a trial whose last decision paused it, or one held without a record (stop-type
    //   ASHA waiting for peers) as it reports, as its run ends or as ask() starts it again.
    void check_decision(const DecisionRecord& d) const {
        // Formatted only for a refusal: every decision passes here, on the report path.
        const auto what = [&] {
            return fmt::format("strategy '{}' decided {} for trial {}", strategy_name_, to_string(d.kind), d.trial);
        };
        if (!state_.has(d.trial))
            throw StrategyError(fmt::format("{}, which has not started: a decision names a trial the strategy handed "
                                            "out (a suggestion it returned)",
                                            what()));
        const TrialRecord& r = state_.record(d.trial);
        const bool ending_now = finishing_ == d.trial;
        const bool live = r.status == TrialStatus::Running || ending_now;
        const DecisionRecord* last = r.decisions.empty() ? nullptr : &r.decisions.back();
        auto ended = [&] {
            return fmt::format("which had {} already (at resource {})",
                               r.status == TrialStatus::Completed ? "completed"
                               : r.status == TrialStatus::Failed  ? "failed"
                               : r.status == TrialStatus::Paused  ? "been paused"
                                                                  : "been stopped",
                               r.resource_used);
        };
        switch (d.kind) {
            case DecisionRecord::Kind::Stop:
                if (!live && r.status != TrialStatus::Paused)
                    throw StrategyError(fmt::format("{}, {}: a Stop ends a running or paused trial", what(), ended()));
                if (last && last->kind == DecisionRecord::Kind::Stop && last->resource == d.resource)
                    throw StrategyError(fmt::format("{} at resource {} twice: record a decision once", what(), d.resource));
                break;
            case DecisionRecord::Kind::Pause:
                // A running trial is paused by its own report: paused from elsewhere, it went on
                // to complete and was then taken for one waiting for promotion.
                if (reporting_ != d.trial && !ending_now)
                    throw StrategyError(fmt::format("{}, {}: a Pause parks a trial as its run ends (on its report or "
                                                    "when told of its end), to promote it later",
                                                    what(),
                                                    r.status == TrialStatus::Running
                                                        ? std::string("which is running and not the trial reporting")
                                                        : ended()));
                if (max_resource_ && std::max(r.resource_used, d.resource) >= *max_resource_)
                    throw StrategyError(fmt::format("{} at resource {}, which is max_resource = {}: a trial that "
                                                    "trained in full has nothing to be promoted to",
                                                    what(), std::max(r.resource_used, d.resource), *max_resource_));
                break;
            case DecisionRecord::Kind::Promote:
                if (starting_ != d.trial && reporting_ != d.trial && !ending_now &&
                    (!last || last->kind != DecisionRecord::Kind::Pause))
                    throw StrategyError(fmt::format("{}, which {}: a Promote resumes a paused trial", what(),
                                                    last ? fmt::format("its last decision ({}) did not pause",
                                                                       to_string(last->kind))
                                                         : std::string("was never paused")));
                break;
        }
    }

    // AMT's completion criteria: a target objective, or no improvement over N trials.
    void check_completion(const TrialRecord& rec, bool may_stop) {
        const double v = rec.objective;
        const bool maximize = options_.direction == Direction::Maximize;
        if (!rec.feasible) {
            ++since_improvement_;  // breaking a constraint improves nothing
        } else if (!best_) {
            best_ = rec.id;
            best_value_ = v;
            since_improvement_ = 0;
        } else if (maximize ? v > best_value_ : v < best_value_) {
            const double gain = std::abs(v - best_value_);
            const bool improved = gain > options_.improvement_tolerance * std::abs(best_value_);
            best_ = rec.id;
            best_value_ = v;
            if (improved) since_improvement_ = 0;
            else ++since_improvement_;
        } else {
            ++since_improvement_;
        }
        if (may_stop) stop_if_complete();
    }

    // The completion criteria on the run's best so far (the trial that reaches the target is the
    // new best: an earlier best would have reached it first).
    void stop_if_complete() {
        const bool maximize = options_.direction == Direction::Maximize;
        if (options_.target_objective && best_ &&
            (maximize ? best_value_ >= *options_.target_objective : best_value_ <= *options_.target_objective))
            request_stop(fmt::format("target objective {} reached by trial {}", *options_.target_objective, *best_));
        if (options_.max_trials_without_improvement > 0 &&
            since_improvement_ >= options_.max_trials_without_improvement)
            request_stop(fmt::format("no improvement above {:.6g}% in {} trials", 100.0 * options_.improvement_tolerance,
                                     since_improvement_));
    }

    SearchSpace space_;
    AnyStrategy strategy_;
    TunerOptions options_;
    ObjectiveFunction objective_;
    std::unique_ptr<JournalWriter> journal_;
    JournalContents earlier_;
    PreparedWarmStart warm_;
    std::string strategy_name_;
    std::optional<Resource> max_resource_;

    mutable std::mutex mu_;
    std::atomic<std::thread::id> observer_thread_{};  // the thread inside on_event, if one is
    std::mutex callback_mu_;  // held while the callbacks are delivered; taken before mu_
    struct PendingCallback {
        const std::function<void(const TrialRecord&)>* callback = nullptr;
        TrialRecord record;
    };
    std::deque<PendingCallback> pending_callbacks_;  // guarded by mu_
    std::condition_variable cv_;
    std::vector<std::thread> workers_;
    std::thread watchdog_;  // max_runtime_seconds while every worker is inside a trial
    std::atomic<bool> stop_flag_{false};
    std::string stop_reason_;
    RunState state_;                // the records: changed only by emit()
    std::optional<Result> final_;
    CheckpointStore checkpoints_;
    std::set<TrialId> removed_at_end_;  // trials whose checkpoint went when a run of theirs ended unpaused
    std::vector<std::string> metric_names_;  // what Attempt::values holds, in order
    bool several_metrics_ = false;           // several objectives or constraints: values are kept
    std::mutex trials_mu_;
    std::deque<Trial> trials_;  // the Trials objectives received, kept until the run ends
    std::deque<Suggestion> reruns_;  // in flight when an earlier session died
    bool journal_failed_ = false;
    bool observer_failed_ = false;
    std::optional<ProgressLine> progress_line_;  // an observer of the events, on stderr
    // The progress line held (erased, not drawn) while user code that may print runs; `mu`: the
    // lock to take around hold and release, none when the caller holds it already.
    struct HeldProgress {
        std::optional<ProgressLine>& line;
        std::mutex* mu = nullptr;
        HeldProgress(std::optional<ProgressLine>& l, std::mutex* m = nullptr) : line(l), mu(m) { with([&] { line->hold(); }); }
        ~HeldProgress() { with([&] { line->release(); }); }
        HeldProgress(const HeldProgress&) = delete;
        HeldProgress& operator=(const HeldProgress&) = delete;
        template <class F>
        void with(F f) {
            if (!line) return;
            if (mu == nullptr) return f();
            std::lock_guard lk(*mu);
            f();
        }
    };
    bool warned_no_reports_ = false;
    bool warned_started_over_ = false;    // each warning once a run, each for its own cause
    bool warned_folder_restart_ = false;
    bool warned_past_budget_ = false;
    bool warned_unexplained_stop_ = false;
    std::map<TrialId, Resource> unexplained_stops_;  // Stop said at this step with no record yet
    // Trials being retried: the last step a failed attempt reported (the strategy judged it).
    std::map<TrialId, Resource> judged_before_retry_;
    std::optional<TrialId> finishing_;               // the trial whose run finish() is ending
    std::optional<TrialId> starting_;                // the trial whose run run() is starting
    std::optional<TrialId> reporting_;               // the trial whose report report() passes on
    std::mutex join_mu_;                             // held while joining the run's threads

    // The trial's last decision stops or holds it: a Stop said to it is explained.
    [[nodiscard]] static bool has_standing_stop(const TrialRecord& r) {
        return !r.decisions.empty() && (r.decisions.back().kind == DecisionRecord::Kind::Stop ||
                                        r.decisions.back().kind == DecisionRecord::Kind::Pause);
    }
    std::optional<Progress> taken_progress_;  // set by take_result(), which moved the result out
    double ended_after_ = 0.0;  // seconds_since_start() when the run ended (Progress::elapsed_seconds)
    bool warned_ignored_stop_ = false;
    bool warned_returned_short_ = false;
    bool warned_unmeasured_ = false;
    std::set<TrialId> trials_out_of_time_;  // TunerOptions::max_trial_seconds: trials a run of went past it
    PlainReports plain_reports_;  // reports of a constrained run without its constrained metrics
    double session_start_ = 0.0;
    std::size_t active_workers_ = 0;
    std::uint64_t generation_ = 0;
    std::optional<TrialId> best_;
    double best_value_ = 0.0;
    std::size_t since_improvement_ = 0;
    std::chrono::steady_clock::time_point start_steady_;
    std::optional<std::chrono::steady_clock::time_point> deadline_;
};

}  // namespace detail

}  // namespace hypertune
