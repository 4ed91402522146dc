// SPDX-License-Identifier: MIT
#pragma once
// Trial: what the objective sees of the tuning run while it trains one configuration. It learns
// its budget, reports intermediate values (which drive early stopping), checks should_stop(), and
// may save a checkpoint so that a paused trial continues instead of starting over when promoted.
// A Trial handed to an objective lives until the tuning run ends, so a late call from a thread the
// objective left behind is a clear error (report) or a harmless answer (should_stop), never a
// dangling access. The calls that write its state (reports, checkpoints, checkpoint_dir()) take
// turns, so that the threads of a data-parallel trainer may make them: a step reported twice is
// refused, never a race.
//
// The same Trial serves an objective run in process (by the Tuner) and one run by a group of MPI
// ranks (hypertune::mpi::fit): there the Trial is a hypertune::mpi::GroupTrial, whose host passes
// every report and checkpoint to the coordinator's own Trial and brings back its answer
// (mpi/group_trial.hpp), so one objective serves both.

#include <hypertune/config.hpp>
#include <hypertune/error.hpp>
#include <hypertune/metrics.hpp>
#include <hypertune/strategy.hpp>

#include <fmt/core.h>

#include <atomic>
#include <algorithm>
#include <chrono>
#include <mutex>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hypertune {

class Trial;

namespace detail {

class TuningRun;

// How a Trial talks back to whoever runs it (the Tuner, or an MPI group's link to the coordinator).
// Not for users. A report the run cannot judge (a single value where every objective is needed, an
// objective missing) throws InvalidArgument, which fails the trial.
class TrialHost {
public:
    virtual Decision on_report(Trial& trial, Resource step, double value) = 0;
    virtual Decision on_report_metrics(Trial& trial, Resource step, const Metrics& values) = 0;
    virtual bool stop_requested() const noexcept = 0;
    // When stop_requested() turns true of itself (the run's max_runtime_seconds), if it will.
    [[nodiscard]] virtual std::optional<std::chrono::steady_clock::time_point> stop_deadline() const noexcept {
        return std::nullopt;
    }
    // Keeps a checkpoint where a crash cannot lose it (with a journal); may throw IoError.
    virtual void on_checkpoint(Trial& trial, Resource step, const std::string& bytes) = 0;
    // The trial's own folder (created); may throw IoError.
    virtual std::string checkpoint_folder(Trial& trial) = 0;

protected:
    ~TrialHost() = default;
};

}  // namespace detail

class Trial {
public:
    /// A trial outside any tuner (for testing an objective by hand): reports are only recorded.
    explicit Trial(TrialId id = 0, Config config = {}, Resource budget = 1, Resource resumed_from = 0,
                   std::optional<std::string> checkpoint = std::nullopt)
        : id_(id), config_(std::move(config)), budget_(budget), resumed_from_(resumed_from),
          last_step_(resumed_from), checkpoint_(std::move(checkpoint)), checkpoint_step_(resumed_from) {}

    Trial(const Trial&) = delete;
    Trial& operator=(const Trial&) = delete;
    // Virtual so that hypertune::mpi::group(trial) can tell a group's trial from an in-process one.
    virtual ~Trial() = default;

    [[nodiscard]] TrialId id() const noexcept { return id_; }
    [[nodiscard]] const Config& config() const noexcept { return config_; }

    /// The resource (epochs, rounds...) this run of the trial may reach in total.
    [[nodiscard]] Resource budget() const noexcept { return budget_; }

    /// The resource already reached before this run: > 0 only when the trial was paused earlier,
    /// is now promoted, and has a checkpoint() to continue from; it is then the step reported last
    /// before that checkpoint was saved. 0 means: start from scratch.
    [[nodiscard]] Resource resumed_from() const noexcept { return resumed_from_; }

    /// Reports the objective metric after `step` resource units. Steps must increase and values
    /// be finite; otherwise this throws InvalidArgument and the trial is marked Failed.
    /// After the objective returned, this throws Error naming the trial: the value cannot count.
    void report(Resource step, double value) {
        const Underway call(*this);
        if (call.late()) called_late(fmt::format("report(step {})", step));
        if (remote_) {
            forward(step, [&](detail::TrialHost& host) { return host.on_report(*this, step, value); });
            last_value_ = value;
            return;
        }
        if (!std::isfinite(value)) fail(fmt::format("trial {}: reported a non-finite value ({}) at step {}", id_, value, step));
        advance_to(step);
        last_value_ = value;
        if (detail::TrialHost* host = reaches_host(step)) pass_on(step, [&] { return host->on_report(*this, step, value); });
    }

    /// Reports several metrics after `step` resource units, by name: in a run with several
    /// objectives (TunerOptions::objectives), every objective, so that early stopping can rank the
    /// trial on all of them (MO-ASHA); constrained metrics it carries count too (an infeasible
    /// trial ranks after every feasible one at a rung). Other names are ignored, whatever their
    /// value. Same rules as report(step, value) otherwise; a missing objective, or a run's metric
    /// whose value is not finite, throws InvalidArgument and marks the trial Failed.
    void report(Resource step, const Metrics& values) {
        const Underway call(*this);
        if (call.late()) called_late(fmt::format("report(step {})", step));
        if (remote_) {
            forward(step, [&](detail::TrialHost& host) { return host.on_report_metrics(*this, step, values); });
            return;
        }
        if (values.empty()) fail(fmt::format("trial {}: reported no metrics at step {}", id_, step));
        // The run's metrics are checked by the run, which knows them (another name may be NaN).
        advance_to(step);
        if (detail::TrialHost* host = reaches_host(step))
            pass_on(step, [&] { return host->on_report_metrics(*this, step, values); });
    }

    /// True once the strategy decided to stop this trial, the tuning run is stopping, or this run of
    /// the trial is past TunerOptions::max_trial_seconds. Check it after each report and return
    /// early (with the last value) when it is set. Always true once the objective has returned.
    [[nodiscard]] bool should_stop() const noexcept {
        if (stop_.load(std::memory_order_relaxed) || returned_.load(std::memory_order_acquire)) return true;
        if (out_of_time()) {
            saw_time_stop_.store(true, std::memory_order_relaxed);
            return true;
        }
        detail::TrialHost* host = host_.load(std::memory_order_acquire);
        if (!host) return false;
        // The run's time limit counts from the moment it passes, not from when its watcher notices.
        if (!host->stop_requested()) {
            const auto at = host->stop_deadline();
            if (!at || std::chrono::steady_clock::now() < *at) return false;
        }
        saw_run_stop_.store(true, std::memory_order_relaxed);
        return true;
    }

    /// Keeps an opaque checkpoint (serialised model state) for when the trial is resumed. It is
    /// taken to hold the state after the last step reported so far, so save it after each report:
    /// a resumed trial continues from that step (resumed_from()), also when the report that paused
    /// or stopped it came after the save (it then trains that step again). A trainer that saves a
    /// step's state before it reports the step says so with save_checkpoint(bytes, step). With a
    /// journal, it is also on disk when this returns ("<journal>.checkpoints/"), so that after a
    /// crash the trial continues from it too; throws IoError naming the file when it cannot be
    /// written.
    void save_checkpoint(std::string bytes) { save_checkpoint(std::move(bytes), last_step_); }
    /// The same, with the step whose state `bytes` hold: the last step reported, or the next one,
    /// trained but not reported yet (InvalidArgument for any other: the trial would continue from
    /// a step its state is not at).
    void save_checkpoint(std::string bytes, Resource step) {
        const Underway call(*this);
        if (call.late()) called_late("save_checkpoint()");
        if (step != last_step_ && step != last_step_ + 1)
            throw InvalidArgument(fmt::format("trial {}: save_checkpoint(bytes, {}): a checkpoint holds the state "
                                              "of the last step reported ({}) or of the next one ({})",
                                              id_, step, last_step_, last_step_ + 1));
        if (detail::TrialHost* host = host_.load(std::memory_order_acquire)) host->on_checkpoint(*this, step, bytes);
        checkpoint_ = std::move(bytes);
        checkpoint_step_ = step;
    }
    /// The checkpoint saved by an earlier run of this trial, if any.
    [[nodiscard]] const std::optional<std::string>& checkpoint() const noexcept { return checkpoint_; }

    /// A folder of this trial's own, for a trainer that saves its state as files (CommandObjective
    /// passes it as {checkpoint_dir}): what is written there stays while the trial may run again
    /// (paused until a promotion, or, with a journal, cut by a crash), and goes when it ends for
    /// good. With a journal it is "<journal>.checkpoints/trial-<id>/", otherwise a temporary folder
    /// of the run. The trainer decides from what it finds there where to continue; reports of steps
    /// the run already judged are ignored. Only while a Tuner runs the trial.
    [[nodiscard]] const std::string& checkpoint_dir() {
        const Underway call(*this);
        if (call.late()) called_late("checkpoint_dir()");
        if (folder_.empty()) {
            detail::TrialHost* host = host_.load(std::memory_order_acquire);
            if (!host) throw Error(fmt::format("trial {}: checkpoint_dir() is only available while a Tuner runs the trial", id_));
            folder_ = host->checkpoint_folder(*this);
        }
        return folder_;
    }

    /// Says that the resources this trial waited for (a group of MPI ranks, a GPU, a licence) are
    /// now held and training starts: the time before, since this run of the trial began, was
    /// waiting and is not billed (TrialRecord::waited_seconds; elapsed and billable time leave it
    /// out). Calls after the first are ignored, and so is a call from a thread the objective left
    /// behind once it returned; an objective that never calls it is billed from the start, as
    /// before. Threads of a data-parallel trainer may call it at once: they take turns.
    void resources_acquired() noexcept {
        const Underway call(*this);
        if (call.late() || acquired_at_) return;
        acquired_at_ = std::chrono::steady_clock::now();
        if (time_limit_ > std::chrono::steady_clock::duration::zero()) set_deadline(*acquired_at_ + time_limit_);
    }

    [[nodiscard]] Resource last_step() const noexcept { return last_step_; }
    [[nodiscard]] std::optional<double> last_value() const noexcept { return last_value_; }
    [[nodiscard]] std::size_t reports() const noexcept { return reports_; }
    /// Why the trial failed inside report(), if it did (kept even if the objective caught it).
    [[nodiscard]] const std::string& failure() const noexcept { return failure_; }
    [[nodiscard]] bool stop_decided() const noexcept { return stop_.load(std::memory_order_relaxed); }
    /// The step at which the strategy (or max_trial_seconds) stopped this trial (0 when none did).
    [[nodiscard]] Resource stop_step() const noexcept { return stop_step_; }
    /// When should_stop() turns true of itself, if it will: this run's max_trial_seconds or the
    /// run's max_runtime_seconds, whichever comes first (a strategy's stop can come sooner). An
    /// MPI group's trial stops by it between reports, as a trial the Tuner runs does.
    [[nodiscard]] std::optional<std::chrono::steady_clock::time_point> stops_at() const noexcept {
        std::optional<std::chrono::steady_clock::time_point> at;
        if (const auto own = deadline_.load(std::memory_order_relaxed); own != no_deadline)
            at = std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(own));
        if (const detail::TrialHost* host = host_.load(std::memory_order_acquire))
            if (const auto run = host->stop_deadline()) at = at ? std::min(*at, *run) : *run;
        return at;
    }
    /// Whether this run of the trial is past TunerOptions::max_trial_seconds.
    [[nodiscard]] bool out_of_time() const noexcept {
        const auto deadline = deadline_.load(std::memory_order_relaxed);
        return deadline != no_deadline && std::chrono::steady_clock::now().time_since_epoch().count() >= deadline;
    }

protected:
    /// A trial whose run is elsewhere (hypertune::mpi::GroupTrial): every report goes to `host`
    /// as it is, which judges it there (steps, values, the strategy) and answers; a report it
    /// rejects throws its InvalidArgument here and fails the trial. should_stop(), checkpoints and
    /// checkpoint_dir() go to `host` as they do for a trial the Tuner runs.
    Trial(detail::TrialHost& host, TrialId id, Config config, Resource budget, Resource resumed_from,
          std::optional<std::string> checkpoint)
        : Trial(id, std::move(config), budget, resumed_from, std::move(checkpoint)) {
        remote_ = true;
        host_.store(&host, std::memory_order_release);
    }
    /// A remote trial's should_stop() turns true of itself at `at`, as its coordinator's does.
    void stop_at(std::chrono::steady_clock::time_point at) noexcept { set_deadline(at); }

private:
    friend class detail::TuningRun;

    // A report's step, accepted: steps must increase (else the trial fails); the first one is kept.
    void advance_to(Resource step) {
        if (step < 1)
            fail(fmt::format("trial {}: reported step {}; steps start at 1 (the units trained so far: epochs, "
                             "boosting rounds)",
                             id_, step));
        if (step <= last_step_) {
            // A resumed run's first report must come after the step it resumed from.
            if (reports_ == 0 && resumed_from_ > 0 && last_step_ == resumed_from_)
                fail(fmt::format("trial {}: reported step {}, but this run of it resumed from step {} "
                                 "(resumed_from()): train and report the steps after it",
                                 id_, step, resumed_from_));
            fail(fmt::format("trial {}: reported step {} after step {} (steps must increase)", id_, step, last_step_));
        }
        if (reports_ == 0) first_step_ = step;
        last_step_ = step;
        ++reports_;
    }

    // A remote trial's report: the host judges it; its verdict is this trial's, on every rank.
    template <class Call>
    void forward(Resource step, Call&& call) {
        detail::TrialHost* host = host_.load(std::memory_order_acquire);
        if (host) pass_on(step, [&] { return call(*host); });
        last_step_ = step;
        ++reports_;
    }

    // The host, when a report of `step` reaches it.
    [[nodiscard]] detail::TrialHost* reaches_host(Resource step) const noexcept {
        // A promoted trial with no checkpoint starts over: what it already reported was judged.
        if (restarted_ && step <= restart_from_) return nullptr;
        // A trial that failed here before (the objective caught the exception) ends Failed whatever
        // it reports next: its later values reach neither the strategy nor the journal.
        if (!failure_.empty()) return nullptr;
        return host_.load(std::memory_order_acquire);
    }

    // Hands a report to the host: a report it cannot judge fails the trial; Stop is kept.
    template <class Call>
    void pass_on(Resource step, Call&& call) {
        Decision d = Decision::Continue;
        try {
            d = call();
        } catch (const InvalidArgument& e) {
            fail(e.what());
        }
        if (d == Decision::Continue && out_of_time()) {
            d = Decision::Stop;
            stopped_for_time_ = true;
        }
        if (d == Decision::Stop && !stop_.load(std::memory_order_relaxed)) {
            stop_step_ = step;
            stop_.store(true, std::memory_order_relaxed);
        }
    }

    [[noreturn]] void called_late(std::string_view call) const {
        throw Error(fmt::format("trial {}: {} called after its objective returned; a Trial is only usable during the "
                                "objective call that received it",
                                id_, call));
    }

    [[noreturn]] void fail(std::string why) {
        if (failure_.empty()) failure_ = why;
        throw InvalidArgument(std::move(why));
    }

    // TunerOptions::max_trial_seconds: this run may train for `limit` from `began` (or from
    // resources_acquired(), when the objective calls it).
    void limit_time(std::chrono::steady_clock::time_point began, std::chrono::steady_clock::duration limit) noexcept {
        time_limit_ = limit;
        set_deadline(began + limit);
    }
    void set_deadline(std::chrono::steady_clock::time_point at) noexcept {
        deadline_.store(at.time_since_epoch().count(), std::memory_order_relaxed);
    }

    // A call that writes the trial's state (a report, a checkpoint), counted while under way: a
    // thread the objective left behind may call as the objective returns, and end() waits for such
    // a call, so that it either finds the trial returned and throws, or is done before the run reads
    // the trial (its checkpoint, its steps). Sequentially consistent: one of the two sees the other.
    // Such calls take turns (writing_): two threads saving a checkpoint at once would write the
    // same file, two reporting at once would both pass the check that steps increase. The run's
    // own lock is taken inside (a report reaching the strategy), never the other way round.
    class Underway {
    public:
        // Its turn first: a call still waiting for it is not under way yet (end() need not wait for
        // it; it finds the trial returned when its turn comes).
        explicit Underway(const Trial& t) : t_(t), turn_(t.writing_) { t_.in_flight_.fetch_add(1); }
        ~Underway() {
            if (t_.in_flight_.fetch_sub(1) == 1 && t_.returned_.load()) t_.in_flight_.notify_all();
        }
        Underway(const Underway&) = delete;
        Underway& operator=(const Underway&) = delete;
        [[nodiscard]] bool late() const noexcept { return t_.returned_.load(); }

    private:
        const Trial& t_;
        std::lock_guard<std::mutex> turn_;
    };

    // The objective returned: later calls must not reach the run (which may be gone by then), and
    // one under way ends first: once it has let in_flight_ go, it still notifies and gives up its
    // turn (Underway's destructor), so end() takes the turn once before it returns, and nothing of
    // that call touches the trial after the run may have freed it.
    void end() noexcept {
        returned_.store(true);
        host_.store(nullptr, std::memory_order_release);
        for (int n = in_flight_.load(); n > 0; n = in_flight_.load()) in_flight_.wait(n);
        const std::lock_guard<std::mutex> last_turn(writing_);
    }

    // Steps up to `from` were already reported and judged (a promoted trial with no checkpoint
    // starts over, one with an older checkpoint goes back to it): their reports now reach no one.
    void restart_from(Resource from) {
        restarted_ = true;
        restart_from_ = from;
    }

    TrialId id_;
    Config config_;
    Resource budget_;
    Resource resumed_from_;
    Resource last_step_;
    Resource first_step_ = 0;  // of this call's reports (0 before the first)
    std::optional<double> last_value_;
    std::size_t reports_ = 0;
    std::optional<std::string> checkpoint_;
    Resource checkpoint_step_;  // last_step_ when checkpoint_ was saved
    std::string folder_;        // checkpoint_dir(), once asked for
    std::string failure_;
    std::atomic<bool> stop_{false};
    std::atomic<detail::TrialHost*> host_{nullptr};
    std::atomic<bool> returned_{false};
    mutable std::atomic<int> in_flight_{0};  // calls under way (Underway)
    mutable std::mutex writing_;              // held by the call under way that writes (Underway)
    bool remote_ = false;  // reports are judged by the host only (the protected constructor)
    bool restarted_ = false;
    Resource restart_from_ = 0;
    Resource stop_step_ = 0;
    std::optional<std::chrono::steady_clock::time_point> acquired_at_;  // resources_acquired()
    // TunerOptions::max_trial_seconds: the deadline in steady_clock ticks (read from any thread).
    static constexpr auto no_deadline = std::numeric_limits<std::chrono::steady_clock::rep>::max();
    std::atomic<std::chrono::steady_clock::rep> deadline_{no_deadline};
    std::chrono::steady_clock::duration time_limit_{};
    bool stopped_for_time_ = false;  // a report got Stop because of the deadline, not the strategy
    // should_stop() told the objective that the run is stopping: an objective that reported nothing
    // and returned after that was cut, not trained in full.
    mutable std::atomic<bool> saw_run_stop_{false};
    // should_stop() told it that it is past max_trial_seconds: the same, for the time limit.
    mutable std::atomic<bool> saw_time_stop_{false};
};

}  // namespace hypertune
