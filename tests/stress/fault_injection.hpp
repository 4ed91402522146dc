// SPDX-License-Identifier: MIT
#pragma once
// Fault injection for the tuner, shared by the stress tests (tests/stress/) and the bench harness
// (bench/harness_fault_injection.cpp). No test framework here: checks return the list of violated
// invariants, so that a test asserts it is empty and the harness prints it.
//
// Every trial id gets a fault, a pure function of (seed, id): none, a throw (always, or only on the
// first attempt so that the retry succeeds), a NaN return, a hang past its own time limit (the tuner
// has no per-trial timeout for in-process objectives, so the objective enforces one and throws, as
// a trainer with a wall-clock limit would), a repeated step, a repeated step whose exception the
// objective swallows, a NaN report, reports past the budget, or no report at all. The objective
// logs what it actually did in each call (a trial stopped before its fault never shows it), and the
// checks compare every record of the run with that log.

#include <hypertune/hypertune.hpp>
#include <hypertune/strategies/asha.hpp>
#include <hypertune/strategies/bayesian.hpp>
#include <hypertune/strategies/grid_search.hpp>
#include <hypertune/strategies/hyperband.hpp>
#include <hypertune/strategies/median_stopping.hpp>
#include <hypertune/strategies/random_search.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <malloc.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HYPERTUNE_STRESS_SANITIZED 1
// The sanitizers' own allocator does not go through glibc's arenas; it counts live bytes itself.
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace hypertune::stress {

// ---- the faults -------------------------------------------------------------------------------

enum class Fault {
    None,               ///< reports every step to its budget, honours should_stop()
    Throw,              ///< throws a std::runtime_error
    TransientThrow,     ///< throws on the trial's first attempt only: the retry succeeds
    ReturnNaN,          ///< returns NaN instead of its last value
    Timeout,            ///< hangs until its own time limit passes, then throws
    NonIncreasingStep,  ///< reports a step that is not above the last one
    SwallowedBadStep,   ///< the same, but catches the exception and carries on
    NaNReport,          ///< reports a NaN value
    Overrun,            ///< reports 3 steps past its budget (past max_resource at the last rung)
    Silent,             ///< returns its final value without reporting anything
};

inline constexpr std::array all_faults{Fault::None,      Fault::Throw,   Fault::TransientThrow, Fault::ReturnNaN,
                                       Fault::Timeout,   Fault::NonIncreasingStep, Fault::SwallowedBadStep,
                                       Fault::NaNReport, Fault::Overrun, Fault::Silent};

[[nodiscard]] inline std::string_view to_string(Fault f) noexcept {
    switch (f) {
        case Fault::None: return "none";
        case Fault::Throw: return "throw";
        case Fault::TransientThrow: return "transient throw";
        case Fault::ReturnNaN: return "NaN return";
        case Fault::Timeout: return "timeout";
        case Fault::NonIncreasingStep: return "repeated step";
        case Fault::SwallowedBadStep: return "swallowed repeated step";
        case Fault::NaNReport: return "NaN report";
        case Fault::Overrun: return "overrun";
        case Fault::Silent: return "no reports";
    }
    return "?";
}

/// The faults that make the attempt they fire in fail.
[[nodiscard]] inline bool fails(Fault f) noexcept {
    return f != Fault::None && f != Fault::Overrun && f != Fault::Silent;
}

/// The repeated-step fault at `step`: reports the step before it again (step 1 twice, at the
/// first step: a step 0 would be refused for another reason, steps start at 1).
inline void repeat_step(Trial& trial, Resource step, double value) {
    if (step == 1) trial.report(1, value);
    trial.report(step > 1 ? step - 1 : 1, value);
}

/// What the tuner must write as the failure reason of a trial that failed by `f`.
[[nodiscard]] inline std::string_view failure_signature(Fault f) noexcept {
    switch (f) {
        case Fault::Throw:
        case Fault::TransientThrow: return "the objective threw: injected fault";
        case Fault::ReturnNaN: return "the objective returned nan";
        case Fault::Timeout: return "exceeded its time limit";
        case Fault::NonIncreasingStep:
        case Fault::SwallowedBadStep: return "(steps must increase)";
        case Fault::NaNReport: return "reported a non-finite value (nan)";
        default: return "";
    }
}

/// Which fault each trial id gets, and the details of how it fires.
struct FaultPlan {
    std::uint64_t seed = 1;
    std::chrono::microseconds trial_time_limit{2000};  ///< the objective's own limit (Fault::Timeout)
    std::size_t checkpoint_bytes = 32 * 1024;          ///< a model snapshot's size
    std::chrono::microseconds step_delay{0};           ///< time one resource unit of training takes
    std::function<void(TrialId, Resource)> on_step{};   ///< after each resource unit trained (counting)
    /// A folder where a transient fault leaves a mark when it fires, so that a tuner process
    /// resumed after a kill does not see it again (a transient fault does not come back because
    /// the tuner restarted, and the retry it cost was journaled). Empty: in memory, per process.
    std::string fired_marks{};

    [[nodiscard]] std::uint64_t bits(TrialId id) const noexcept { return detail::hash3(seed, 0xfa17, id); }

    [[nodiscard]] Fault fault(TrialId id) const noexcept {
        // percent: none 52, throw 5, transient 5, NaN return 5, timeout 4, repeated step 5, swallowed 4,
        // NaN report 5, overrun 10, no reports 5
        static constexpr std::array<int, all_faults.size()> weights{52, 5, 5, 5, 4, 5, 4, 5, 10, 5};
        int roll = static_cast<int>(bits(id) % 100);
        for (std::size_t i = 0; i < weights.size(); ++i) {
            if (roll < weights[i]) return all_faults[i];
            roll -= weights[i];
        }
        return Fault::None;
    }
    /// The fault fires after this many reports of the call (modulo the steps the call has).
    [[nodiscard]] std::size_t fire_after(TrialId id) const noexcept { return (bits(id) >> 20) % 3; }
    /// Half the trials save a checkpoint at every step (a promoted one then continues from it),
    /// except those whose fault acts at or past the budget (an overrun, NaN returned at the end):
    /// a trial cut by a crash after its last report and checkpoint at its budget ends on resume
    /// with that report, without a call, so what such a fault would have done there is not replayed.
    [[nodiscard]] bool checkpoints(TrialId id) const noexcept {
        return ((bits(id) >> 30) & 1) != 0 && fault(id) != Fault::Overrun && fault(id) != Fault::ReturnNaN;
    }
};

// ---- what the objective did -------------------------------------------------------------------

/// One call of the objective for a trial, as the call itself saw it.
struct CallLog {
    Fault fault = Fault::None;
    bool fired = false;         ///< the fault happened (a trial stopped before it never shows it)
    bool saw_stop = false;      ///< returned early because should_stop() was true
    bool stop_decided = false;  ///< ... and it was the strategy's decision
    bool stop_at_throw = false;  ///< it threw while should_stop() was true (stop() came first)
    std::size_t reports = 0;    ///< reports accepted in this call
    Resource last_step = 0;
    Resource budget = 0;
    Resource resumed_from = 0;
    double returned = std::numeric_limits<double>::quiet_NaN();
};

/// Per trial id. A trial's calls never overlap (the tuner runs one attempt at a time, and orders
/// a promotion after the previous run's end), so `last` needs no lock; the counters are atomic
/// because the callbacks run on other threads than the objective.
struct TrialTruth {
    std::atomic<int> calls{0};  ///< objective calls (attempts, retries included)
    std::atomic<int> runs{0};   ///< on_trial_start calls
    std::atomic<int> ends{0};   ///< on_trial_end calls
    /// on_trial_end calls for a trial whose run had ended Paused and that did not run again: the
    /// decision (or the run's end) that stopped it while it waited
    std::atomic<int> closed{0};
    std::atomic<bool> waiting{false};                   ///< its last run ended Paused
    std::atomic<int> last_end{-1};                      ///< the TrialStatus on_trial_end last gave
    std::atomic<int> fired{0};  ///< calls in which the fault fired
    CallLog last;
    bool checkpoint_mismatch = false;  ///< resumed with a checkpoint that is not its own last one
};

/// Thread-safe list of violated invariants (the first 50 are kept).
class Violations {
public:
    template <class... Args>
    void add(fmt::format_string<Args...> format, Args&&... args) {
        std::lock_guard lk(mu_);
        ++count_;
        if (list_.size() < 50) list_.push_back(fmt::format(format, std::forward<Args>(args)...));
    }
    [[nodiscard]] std::vector<std::string> list() const {
        std::lock_guard lk(mu_);
        auto out = list_;
        if (count_ > list_.size()) out.push_back(fmt::format("... and {} more", count_ - list_.size()));
        return out;
    }
    [[nodiscard]] bool empty() const {
        std::lock_guard lk(mu_);
        return count_ == 0;
    }

private:
    mutable std::mutex mu_;
    std::vector<std::string> list_;
    std::size_t count_ = 0;
};

/// The search space of every stress run: one continuous, one integer and one categorical parameter.
[[nodiscard]] inline SearchSpace stress_space() {
    return SearchSpace{ContinuousParameter("x", 0.0, 1.0), IntegerParameter("k", 1, 5),
                       CategoricalParameter("kind", {"a", "b"})};
}

/// The loss of a configuration after `step` resource units: a smooth bowl that improves with resource.
[[nodiscard]] inline double stress_loss(const Config& c, Resource step) {
    return std::abs(c.get<double>("x") - 0.3) + 0.01 * c.get<int>("k") +
           (c.get<std::string>("kind") == "b" ? 0.05 : 0.0) +
           1.0 / static_cast<double>(step);
}

class TrialTimedOut : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The objective: trains with stress_loss, injects the plan's fault, logs every call.
class FaultyObjective {
public:
    FaultyObjective(const FaultPlan* plan, std::vector<TrialTruth>* truth, Direction direction,
                    std::size_t retain_bytes_per_call = 0)
        : plan_(plan), truth_(truth), sign_(direction == Direction::Maximize ? -1.0 : 1.0),
          retain_bytes_(retain_bytes_per_call), retained_(std::make_shared<Retained>()) {}

    double operator()(const Config& cfg, Trial& trial) const {
        const TrialId id = trial.id();
        if (id >= truth_->size()) throw std::logic_error(fmt::format("trial id {} beyond the plan", id));
        if (retain_bytes_ > 0) retained_->keep(std::string(retain_bytes_, 'r'));
        TrialTruth& g = (*truth_)[id];
        const int call = g.calls.fetch_add(1, std::memory_order_relaxed) + 1;
        CallLog log;
        log.fault = plan_->fault(id);
        log.budget = trial.budget();
        log.resumed_from = trial.resumed_from();
        if (trial.resumed_from() > 0 &&
            (!trial.checkpoint() || step_of(*trial.checkpoint()) != trial.resumed_from()))
            g.checkpoint_mismatch = true;
        try {
            double v = body(cfg, trial, call, log);
            record(g, log);
            return v;
        } catch (...) {
            // stop() may have come while the attempt ran: then the runner retries nothing.
            log.stop_at_throw = trial.should_stop();
            record(g, log);
            throw;
        }
    }

private:
    // Memory the objective keeps for the whole run (it is owned by the run): only for showing that
    // the memory check notices a run that grows by a fixed amount per trial.
    struct Retained {
        std::mutex mu;
        std::vector<std::string> kept;
        void keep(std::string s) {
            std::lock_guard lk(mu);
            kept.push_back(std::move(s));
        }
    };

    static void record(TrialTruth& g, const CallLog& log) {
        g.last = log;
        if (log.fired) g.fired.fetch_add(1, std::memory_order_relaxed);
    }

    [[nodiscard]] double value(const Config& cfg, Resource step) const { return sign_ * stress_loss(cfg, step); }

    // "step;segment start;budget;", padded: the step it holds, and the run segment it was saved in,
    // so that a segment resumed after a crash fires its fault where the uninterrupted one would.
    [[nodiscard]] std::string checkpoint_at(Resource step, Resource segment_start, Resource budget) const {
        std::string s = fmt::format("{};{};{};", step, segment_start, budget);
        s.resize(std::max(s.size(), plan_->checkpoint_bytes), '.');
        return s;
    }
    [[nodiscard]] static Resource step_of(const std::string& checkpoint) {
        return std::strtoll(checkpoint.c_str(), nullptr, 10);
    }
    // Where the run segment that `trial` continues began: its resumed_from, unless it resumes the
    // same segment (the same budget) from a checkpoint saved within it, after a crash.
    [[nodiscard]] static Resource segment_start(const Trial& trial) {
        const Resource from = trial.resumed_from();
        if (!trial.checkpoint()) return from;
        const std::string& c = *trial.checkpoint();
        const auto first = c.find(';'), second = first == std::string::npos ? first : c.find(';', first + 1);
        if (second == std::string::npos) return from;
        const Resource start = std::strtoll(c.c_str() + first + 1, nullptr, 10);
        const Resource budget = std::strtoll(c.c_str() + second + 1, nullptr, 10);
        return budget == trial.budget() && start < from ? start : from;
    }

    [[nodiscard]] std::string mark_path(TrialId id) const { return fmt::format("{}/{}", plan_->fired_marks, id); }
    [[nodiscard]] bool marked(TrialId id) const {
        return !plan_->fired_marks.empty() && ::access(mark_path(id).c_str(), F_OK) == 0;
    }
    void mark(TrialId id) const {
        if (plan_->fired_marks.empty()) return;
        if (std::FILE* f = std::fopen(mark_path(id).c_str(), "w")) std::fclose(f);
    }

    double body(const Config& cfg, Trial& trial, int call, CallLog& log) const {
        const TrialId id = trial.id();
        const Fault f = log.fault;
        // A transient fault fires on the trial's first attempt only.
        const bool armed = fails(f) && !(f == Fault::TransientThrow && (call > 1 || marked(id)));
        if (f == Fault::Silent) return log.returned = value(cfg, trial.budget());
        const auto started = std::chrono::steady_clock::now();
        const Resource first = trial.resumed_from() + 1;
        const Resource last = f == Fault::Overrun ? trial.budget() + 3 : trial.budget();
        // The fault fires after a fixed number of the segment's reports, counted from where the
        // segment began, so that a kill and a resume from a checkpoint inside it move nothing.
        const Resource segment = segment_start(trial);
        const auto steps = static_cast<std::size_t>(trial.budget() - segment);
        const std::size_t fire_after = plan_->fire_after(id) % std::max<std::size_t>(1, steps);
        auto segment_reports = static_cast<std::size_t>(trial.resumed_from() - segment);
        double latest = std::numeric_limits<double>::quiet_NaN();
        for (Resource step = first; step <= last; ++step) {
            if (armed && !log.fired && segment_reports == fire_after) {
                switch (f) {
                    case Fault::Throw:
                    case Fault::TransientThrow:
                        log.fired = true;
                        if (f == Fault::TransientThrow) mark(id);
                        throw std::runtime_error(fmt::format("injected fault in trial {}", id));
                    case Fault::Timeout:
                        while (std::chrono::steady_clock::now() - started < plan_->trial_time_limit) {
                            if (trial.should_stop()) {  // the run is stopping: return what we have
                                log.saw_stop = true;
                                return log.returned = latest;
                            }
                            std::this_thread::sleep_for(std::chrono::microseconds(200));
                        }
                        log.fired = true;
                        throw TrialTimedOut(fmt::format("trial {} exceeded its time limit of {} us", id,
                                                        plan_->trial_time_limit.count()));
                    case Fault::NonIncreasingStep:
                        log.fired = true;
                        repeat_step(trial, step, value(cfg, step));  // throws
                        break;
                    case Fault::SwallowedBadStep:
                        log.fired = true;
                        try {
                            repeat_step(trial, step, value(cfg, step));
                        } catch (const InvalidArgument&) {  // the trainer ignores it: the trial still fails
                        }
                        break;
                    case Fault::NaNReport:
                        log.fired = true;
                        trial.report(step, std::numeric_limits<double>::quiet_NaN());  // throws
                        break;
                    default: break;  // ReturnNaN fires at the end
                }
            }
            if (plan_->step_delay.count() > 0) std::this_thread::sleep_for(plan_->step_delay);
            if (plan_->on_step) plan_->on_step(id, step);
            latest = value(cfg, step);
            trial.report(step, latest);
            ++log.reports;
            ++segment_reports;
            log.last_step = step;
            if (trial.should_stop()) {
                log.saw_stop = true;
                log.stop_decided = trial.stop_decided();
                return log.returned = latest;
            }
            if (plan_->checkpoints(id)) trial.save_checkpoint(checkpoint_at(step, segment, trial.budget()));
        }
        if (armed && f == Fault::ReturnNaN) {
            log.fired = true;
            return log.returned = std::numeric_limits<double>::quiet_NaN();
        }
        return log.returned = latest;
    }

    const FaultPlan* plan_;
    std::vector<TrialTruth>* truth_;
    double sign_;
    std::size_t retain_bytes_;
    std::shared_ptr<Retained> retained_;
};

// ---- the strategies ---------------------------------------------------------------------------

inline constexpr Resource stress_max_resource = 9;

struct StrategyCase {
    std::string name;
    std::function<AnyStrategy(std::size_t trials)> make;
    Direction direction = Direction::Minimize;
    bool multi_fidelity = false;  ///< stops a trial that reports past max_resource (or its rung)
    bool records_stops = false;   ///< every Stop it decides has a DecisionRecord
    bool bayesian = false;        ///< costs milliseconds per suggestion: run with fewer trials
};

/// Every strategy the library has, with rungs 1, 3, 9 where there are rungs. GridSearch and
/// MedianStopping maximise (the objective negated), to cover both directions.
[[nodiscard]] inline std::vector<StrategyCase> strategy_cases() {
    const Resource r = stress_max_resource;
    return {
        {"RandomSearch", [r](std::size_t) { return AnyStrategy(RandomSearch({.max_resource = r})); }},
        {"GridSearch",
         [r](std::size_t n) {
             // 10 points of (k, kind) per value of x: at least n points in all
             const std::size_t points = std::max<std::size_t>(1, (n + 9) / 10);
             return AnyStrategy(GridSearch({.points = {{"x", points}}, .max_resource = r}));
         },
         Direction::Maximize},
        {"Hyperband async",
         [r](std::size_t) { return AnyStrategy(Hyperband({.min_resource = 1, .max_resource = r, .eta = 3})); },
         Direction::Minimize, true, true},
        {"Hyperband sync",
         [r](std::size_t) {
             return AnyStrategy(
                 Hyperband({.min_resource = 1, .max_resource = r, .eta = 3, .mode = HyperbandMode::Synchronous}));
         },
         Direction::Minimize, true, false},
        {"ASHA",
         [r](std::size_t) { return AnyStrategy(ASHA({.min_resource = 1, .max_resource = r, .reduction_factor = 3})); },
         Direction::Minimize, true, true},
        {"MedianStopping(RandomSearch)",
         [r](std::size_t) {
             return AnyStrategy(MedianStopping(RandomSearch({.max_resource = r}), {.min_trials = 5, .grace_steps = 2}));
         },
         Direction::Maximize, false, true},
        {"Bayesian",
         [r](std::size_t) {
             return AnyStrategy(
                 Bayesian({.candidates = 64, .max_model_points = 64, .refit_every = 10, .max_resource = r}));
         },
         Direction::Minimize, false, false, true},
    };
}

/// The case of strategy_cases() named `name`; throws std::invalid_argument for an unknown name.
[[nodiscard]] inline StrategyCase strategy_case(std::string_view name) {
    for (auto& c : strategy_cases())
        if (c.name == name) return c;
    throw std::invalid_argument(fmt::format("no strategy case named '{}'", name));
}

// ---- memory -----------------------------------------------------------------------------------

/// Bytes of heap in use (allocated and not freed), from the allocator itself.
[[nodiscard]] inline std::size_t heap_in_use() {
#ifdef HYPERTUNE_STRESS_SANITIZED
    return __sanitizer_get_current_allocated_bytes();
#else
    struct mallinfo2 m = ::mallinfo2();
    return m.uordblks + m.hblkhd;  // arena chunks in use + mmapped chunks
#endif
}

/// Resident set size in bytes (/proc/self/statm).
[[nodiscard]] inline std::size_t rss_bytes() {
    std::FILE* f = std::fopen("/proc/self/statm", "r");
    if (!f) return 0;
    unsigned long size = 0, resident = 0;
    int got = std::fscanf(f, "%lu %lu", &size, &resident);
    std::fclose(f);
    return got == 2 ? resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)) : 0;
}

/// Peak resident set size in bytes (VmHWM of /proc/self/status).
[[nodiscard]] inline std::size_t peak_rss_bytes() {
    std::FILE* f = std::fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    std::size_t kb = 0;
    while (std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "VmHWM: %zu kB", &kb) == 1) break;
    std::fclose(f);
    return kb * 1024;
}

/// Gives freed heap back to the system, then resets the peak RSS to the current RSS (Linux:
/// clear_refs 5), so that the next peak is the next run's own; false when not permitted.
inline bool reset_peak_rss() {
#ifndef HYPERTUNE_STRESS_SANITIZED
    ::malloc_trim(0);
#endif
    std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
    if (!f) return false;
    bool ok = std::fputs("5", f) >= 0;
    return std::fclose(f) == 0 && ok;
}

// ---- a run --------------------------------------------------------------------------------------

struct StressOptions {
    std::size_t trials = 10000;
    std::size_t parallel = 8;
    std::uint64_t seed = 1;
    int max_retries = 1;
    std::chrono::microseconds trial_time_limit{2000};
    std::size_t checkpoint_bytes = 32 * 1024;
    bool hammer_progress = true;  ///< query progress() (and now and then result_so_far()) all along
    /// Call stop() from another thread once this many trials started (0: never).
    std::size_t stop_after_started = 0;
    /// Test hook: the run keeps this much memory per objective call (see FaultyObjective).
    std::size_t retain_bytes_per_call = 0;
};

struct MemoryUse {
    std::size_t heap_before = 0;       ///< before the run (nothing of it allocated)
    std::size_t heap_at_end = 0;       ///< the run over, the job still alive, its result inside
    std::size_t heap_result_only = 0;  ///< the job destroyed, its result kept
    std::size_t rss_before = 0;
    std::size_t rss_at_end = 0;
    std::size_t peak_rss = 0;  ///< during the run (since the last reset when reset_peak_rss() worked)
};

struct StressRun {
    std::string strategy;
    Result result;
    std::size_t trials = 0, completed = 0, stopped = 0, failed = 0;
    std::size_t calls = 0;                              ///< objective calls, retries included
    std::array<std::size_t, all_faults.size()> fired{};  ///< faults that fired, by Fault
    std::size_t progress_queries = 0;
    std::size_t started_when_stopped = 0;  ///< progress().started right after stop() returned
    bool stop_called = false;
    double wall_seconds = 0.0;
    MemoryUse memory;
    std::vector<std::string> violations;  ///< empty: every invariant holds
};

namespace detail_stress {

struct Expected {
    TrialStatus status;
    std::string_view failure;
};

// The record a trial must end with, given what its last call did. The tuner's rules: a fault makes
// the attempt fail (even one the objective swallowed); a NaN return fails; a trial the strategy
// stopped is Stopped; one cut by stop() before its budget is Stopped; synchronous Hyperband's
// lower rungs end Stopped unless promoted (and then the promoted run is the last call); the rest
// ran its budget and is Completed.
[[nodiscard]] inline Expected expected_outcome(const CallLog& c) {
    if (c.fired && fails(c.fault)) return {TrialStatus::Failed, failure_signature(c.fault)};
    if (!std::isfinite(c.returned)) return {TrialStatus::Failed, "the objective returned nan"};
    // A strategy's stop at the last step of a full budget, or at a step past it (an overrun), saved
    // nothing: the trial trained in full. (At a rung's budget it waits there, and the run's end
    // stops it unless promoted, which a later call shows.)
    if (c.stop_decided)
        return {c.last_step >= c.budget && c.budget >= stress_max_resource ? TrialStatus::Completed : TrialStatus::Stopped,
                ""};
    if (c.saw_stop && c.reports > 0 && c.last_step < c.budget) return {TrialStatus::Stopped, ""};
    if (c.budget < stress_max_resource) return {TrialStatus::Stopped, ""};
    return {TrialStatus::Completed, ""};
}

// Watches the run from another thread: progress() must stay consistent at every moment.
inline void hammer(TuningJob& job, const StressOptions& o, Violations& v, std::size_t& queries) {
    std::size_t last_started = 0;
    double last_elapsed = 0.0;
    bool was_finished = false;
    auto next_snapshot = std::chrono::steady_clock::now();
    for (;;) {
        const bool done = job.finished();  // read first: the last round sees the final state
        Progress p = job.progress();
        ++queries;
        if (p.started < last_started) v.add("progress: started went back from {} to {}", last_started, p.started);
        if (p.running > o.parallel) v.add("progress: {} running with max_parallel_jobs = {}", p.running, o.parallel);
        if (p.completed + p.stopped + p.failed + p.running > p.started)
            v.add("progress: {} completed + {} stopped + {} failed + {} running > {} started", p.completed, p.stopped,
                  p.failed, p.running, p.started);
        if (p.started > o.trials) v.add("progress: {} started with max_jobs = {}", p.started, o.trials);
        if (p.max_jobs != o.trials) v.add("progress: max_jobs {} != {}", p.max_jobs, o.trials);
        if (p.elapsed_seconds < last_elapsed) v.add("progress: elapsed went back");
        if (was_finished && !p.finished) v.add("progress: finished went back to false");
        if (p.best && !std::isfinite(*p.best)) v.add("progress: best is {}", *p.best);
        last_started = p.started;
        last_elapsed = p.elapsed_seconds;
        was_finished = was_finished || p.finished;
        if (std::chrono::steady_clock::now() >= next_snapshot) {  // a full copy: not too often
            Result r = job.result_so_far();
            std::vector<char> seen(o.trials, 0);
            for (const auto& t : r.trials()) {
                if (t.id >= o.trials || seen[t.id]++) v.add("result_so_far: trial {} twice or out of range", t.id);
            }
            if (r.count(TrialStatus::Running) > o.parallel)
                v.add("result_so_far: {} trials running", r.count(TrialStatus::Running));
            next_snapshot = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
        }
        if (done) return;
        std::this_thread::yield();
    }
}

}  // namespace detail_stress

/// Checks one finished run against the objective's log. Returns the violated invariants.
[[nodiscard]] inline std::vector<std::string> check_run(const StrategyCase& sc, const StressOptions& o, StressRun& run,
                                                        const std::vector<TrialTruth>& truth,
                                                        const Progress& final_progress) {
    Violations v;
    const Result& result = run.result;
    const auto& trials = result.trials();
    const std::size_t n = trials.size();
    const bool maximize = sc.direction == Direction::Maximize;

    // every trial id accounted for exactly once
    if (!run.stop_called && n != o.trials) v.add("{} trials recorded, {} expected", n, o.trials);
    if (run.stop_called && n != run.started_when_stopped)
        v.add("{} trials recorded, but {} had started when stop() returned", n, run.started_when_stopped);
    if (run.stop_called && result.stop_reason() != "stopped by user") v.add("stop reason '{}'", result.stop_reason());
    if (!run.stop_called && result.stop_reason() != "max_jobs reached" && result.stop_reason() != "strategy finished")
        v.add("stop reason '{}'", result.stop_reason());
    std::vector<char> seen(truth.size(), 0);
    for (const auto& t : trials) {
        if (t.id >= truth.size()) {
            v.add("trial {}: id beyond the {} planned", t.id, truth.size());
            continue;
        }
        if (seen[t.id]++) v.add("trial {}: recorded twice", t.id);
        // on_trial_end's last word is the result's (a trial stopped while it waited was left Paused)
        if (const int said = truth[t.id].last_end.load(); said != static_cast<int>(t.status))
            v.add("trial {}: on_trial_end last said {}, the result says {}", t.id,
                  said < 0 ? std::string("nothing") : std::string(to_string(static_cast<TrialStatus>(said))),
                  to_string(t.status));
    }
    for (std::size_t id = 0; id < truth.size(); ++id) {
        const auto& g = truth[id];
        const int calls = g.calls.load(), runs = g.runs.load(), ends = g.ends.load();
        run.calls += static_cast<std::size_t>(calls);
        if (seen[id] && calls == 0) v.add("trial {}: recorded but the objective never ran", id);
        if (!seen[id] && calls > 0) v.add("trial {}: ran {} times but has no record", id, calls);
        const int closed = g.closed.load();
        if (runs != ends - closed)
            v.add("trial {}: {} starts but {} ends, {} of them while it waited (a run that never ended)", id, runs,
                  ends, closed);
        if (seen[id] && runs < 1) v.add("trial {}: recorded without a start", id);
        if (calls < runs) v.add("trial {}: {} calls for {} runs", id, calls, runs);
        if (g.checkpoint_mismatch) v.add("trial {}: resumed with a checkpoint that is not its last one", id);
    }

    // every record is what its fault says
    std::optional<double> best;
    for (const auto& t : trials) {
        if (t.id >= truth.size()) continue;
        const TrialTruth& g = truth[t.id];
        const CallLog& c = g.last;
        run.fired[static_cast<std::size_t>(c.fault)] += static_cast<std::size_t>(g.fired.load());
        // a transient fault fails the first attempt only: the retry must have run and succeeded,
        // unless the attempt ended stopped (by the strategy, or by stop() after it had reported) or
        // threw after stop(): a stopped trial is never retried, and after stop() nothing starts again
        if (c.fault == Fault::TransientThrow && g.fired.load() > 0 && o.max_retries > 0 && t.retries < 1 &&
            t.status != TrialStatus::Stopped && !c.stop_at_throw)
            v.add("trial {}: a transient fault was not retried", t.id);
        // a trial still paused when stop() cut the run was not judged: Stopped, with why and no
        // Stop record (early stopping's savings leave it out); its pause was the strategy's stop
        const bool cut_while_paused = t.status == TrialStatus::Stopped && run.stop_called &&
                                      t.failure_reason == "the run ended while the trial waited for promotion";
        const auto want = detail_stress::expected_outcome(c);
        if (t.status != want.status)
            v.add("trial {} ({}, fired {}, stop {}/{}, reports {}, step {}/{}): status {}, expected {}", t.id,
                  to_string(c.fault), c.fired, c.saw_stop, c.stop_decided, c.reports, c.last_step, c.budget,
                  to_string(t.status), to_string(want.status));
        if (t.status == TrialStatus::Failed) {
            if (!want.failure.empty() && t.failure_reason.find(want.failure) == std::string::npos)
                v.add("trial {} ({}): failure reason '{}' lacks '{}'", t.id, to_string(c.fault), t.failure_reason,
                      want.failure);
            if (t.has_objective()) v.add("trial {}: failed with a value {}", t.id, t.objective);
        } else {
            if (!(t.objective == c.returned))
                v.add("trial {}: value {} but the objective returned {}", t.id, t.objective, c.returned);
            if (cut_while_paused && Result::stopped_early(t))
                v.add("trial {}: cut while paused, with a Stop record", t.id);
            if (!t.failure_reason.empty() && !cut_while_paused)
                v.add("trial {}: {} with a failure reason '{}'", t.id, to_string(t.status), t.failure_reason);
        }
        if (t.status == TrialStatus::Completed) {
            if (t.resource_used != std::max(c.last_step, c.budget))
                v.add("trial {}: completed with resource {}, reached {} of budget {}", t.id, t.resource_used,
                      c.last_step, c.budget);
            if (!best || (maximize ? t.objective > *best : t.objective < *best)) best = t.objective;
        }
        const int retries_expected = g.calls.load() - g.runs.load();
        if (t.retries != retries_expected)
            v.add("trial {}: {} retries recorded, {} made", t.id, t.retries, retries_expected);
        // garbage reports never reach the record: steps increase, values are finite
        for (std::size_t i = 0; i < t.curve.size(); ++i) {
            if (!std::isfinite(t.curve[i].value)) v.add("trial {}: non-finite value in its curve", t.id);
            if (i > 0 && t.curve[i].step <= t.curve[i - 1].step)
                v.add("trial {}: curve step {} after {}", t.id, t.curve[i].step, t.curve[i - 1].step);
        }
        if (sc.records_stops && c.stop_decided && !cut_while_paused) {
            bool recorded = std::any_of(t.decisions.begin(), t.decisions.end(),
                                        [](const DecisionRecord& d) { return d.kind == DecisionRecord::Kind::Stop; });
            if (!recorded) v.add("trial {}: stopped by the strategy without a Stop record", t.id);
        }
        // a multi-fidelity strategy stops a trial at the first report past its budget
        if (sc.multi_fidelity && c.fault == Fault::Overrun && t.status != TrialStatus::Failed &&
            c.last_step > c.budget + 1)
            v.add("trial {}: reported up to {} with budget {} and was not stopped", t.id, c.last_step, c.budget);
    }

    // counts add up, in the result, its summary and the final progress
    run.trials = n;
    run.completed = result.count(TrialStatus::Completed);
    run.stopped = result.count(TrialStatus::Stopped);
    run.failed = result.count(TrialStatus::Failed);
    if (run.completed + run.stopped + run.failed != n)
        v.add("{} completed + {} stopped + {} failed != {} trials ({} running, {} paused)", run.completed, run.stopped,
              run.failed, n, result.count(TrialStatus::Running), result.count(TrialStatus::Paused));
    // the summary tells the strategy's stops from the run's cuts
    const auto early =
        static_cast<std::size_t>(std::count_if(trials.begin(), trials.end(), [](const TrialRecord& t) {
            return Result::stopped_early(t);
        }));
    const std::string cut = run.stopped > early ? fmt::format(", {} cut short", run.stopped - early) : "";
    if (run.stopped > early && !run.stop_called)
        v.add("{} trials stopped with no Stop record though the run was not cut", run.stopped - early);
    const std::string head = fmt::format("{} trials of {} ({} {}): {} completed, {} stopped early{}, {} failed", n,
                                         result.setup().strategy, to_string(result.setup().direction),
                                         result.setup().metric, run.completed, early, cut, run.failed);
    if (result.summary().find(head) != 0) v.add("summary does not start with '{}'", head);
    const Progress& p = final_progress;
    if (!p.finished || p.running != 0 || p.started != n || p.completed != run.completed || p.stopped != run.stopped ||
        p.failed != run.failed)
        v.add("final progress: finished {}, {} started, {} running, {} completed, {} stopped, {} failed; the result "
              "has {} trials: {} completed, {} stopped, {} failed",
              p.finished, p.started, p.running, p.completed, p.stopped, p.failed, n, run.completed, run.stopped,
              run.failed);

    // the best trial is the true best of the completed ones
    if (best) {
        if (!result.has_best()) v.add("no best trial, expected value {}", *best);
        else if (result.best().status != TrialStatus::Completed || result.best().objective != *best)
            v.add("best trial {} ({}, {}), expected the completed value {}", result.best().id,
                  to_string(result.best().status), result.best().objective, *best);
        if (!p.best || *p.best != *best) v.add("progress best {}, expected {}", p.best.value_or(std::nan("")), *best);
    } else if (run.completed == 0 && o.trials > 100 && !run.stop_called) {
        v.add("no trial completed out of {}", n);
    }
    return v.list();
}

/// Runs one strategy under fault injection and checks every invariant (StressRun::violations).
[[nodiscard]] inline StressRun run_stress(const StrategyCase& sc, const StressOptions& o) {
    StressRun run;
    run.strategy = sc.name;
    const bool peak_reset = reset_peak_rss();
    run.memory.heap_before = heap_in_use();
    run.memory.rss_before = rss_bytes();

    FaultPlan plan{o.seed, o.trial_time_limit, o.checkpoint_bytes};
    std::vector<TrialTruth> truth(o.trials);
    Violations callbacks;
    TunerOptions options{.metric = "loss", .direction = sc.direction, .max_jobs = o.trials,
                         .max_parallel_jobs = o.parallel, .seed = o.seed, .max_retries = o.max_retries,
                         .progress = ProgressBar::Never};
    options.on_trial_start = [&](const TrialRecord& r) {
        if (r.status != TrialStatus::Running) callbacks.add("trial {}: started as {}", r.id, to_string(r.status));
        if (r.id < truth.size()) {
            truth[r.id].runs.fetch_add(1, std::memory_order_relaxed);
            truth[r.id].waiting.store(false, std::memory_order_relaxed);
        }
    };
    options.on_trial_end = [&](const TrialRecord& r) {
        if (r.status == TrialStatus::Running) callbacks.add("trial {}: ended as Running", r.id);
        if (r.id >= truth.size()) return;
        TrialTruth& g = truth[r.id];
        g.ends.fetch_add(1, std::memory_order_relaxed);
        if (g.waiting.exchange(r.status == TrialStatus::Paused, std::memory_order_relaxed)) {
            g.closed.fetch_add(1, std::memory_order_relaxed);
            if (r.status != TrialStatus::Stopped)
                callbacks.add("trial {}: ended as {} while it waited for promotion", r.id, to_string(r.status));
        }
        g.last_end.store(static_cast<int>(r.status), std::memory_order_relaxed);
    };

    Tuner tuner(stress_space(), sc.make(o.trials), options);
    const auto t0 = std::chrono::steady_clock::now();
    Progress final_progress;
    {
        TuningJob job = tuner.start(FaultyObjective(&plan, &truth, sc.direction, o.retain_bytes_per_call));
        std::thread watcher;
        if (o.hammer_progress)
            watcher = std::thread([&] { detail_stress::hammer(job, o, callbacks, run.progress_queries); });
        std::thread stopper;
        if (o.stop_after_started > 0)
            stopper = std::thread([&] {
                while (!job.finished() && job.progress().started < o.stop_after_started)
                    std::this_thread::sleep_for(std::chrono::microseconds(100));
                if (job.finished()) return;
                job.stop();
                // from here on, no trial may start
                run.started_when_stopped = job.progress().started;
                run.stop_called = true;
            });
        job.wait();
        run.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (watcher.joinable()) watcher.join();
        if (stopper.joinable()) stopper.join();
        final_progress = job.progress();
        run.memory.heap_at_end = heap_in_use();
        run.memory.rss_at_end = rss_bytes();
        run.memory.peak_rss = peak_rss_bytes();
        run.result = job.take_result();
    }
    run.memory.heap_result_only = heap_in_use();
    if (!peak_reset) run.memory.peak_rss = std::max(run.memory.peak_rss, peak_rss_bytes());

    run.violations = check_run(sc, o, run, truth, final_progress);
    for (auto& s : callbacks.list()) run.violations.push_back(std::move(s));
    return run;
}

/// Per-trial memory of runs of two sizes: what grows with the number of trials.
struct MemoryGrowth {
    double records_bytes_per_trial = 0.0;  ///< the Result itself
    double retained_bytes_per_trial = 0.0;  ///< held by the run beyond its records, at its end
    double leaked_bytes_per_trial = 0.0;    ///< still allocated once the run and its result are gone
};

/// Runs `sc` with `small` then `large` trials and compares their memory: per extra trial, the
/// bytes the result holds, the bytes the run holds beyond its records, and the bytes never freed.
/// The checks of each run are appended to `violations`.
[[nodiscard]] inline MemoryGrowth measure_memory_growth(const StrategyCase& sc, StressOptions o, std::size_t small,
                                                        std::size_t large, std::vector<std::string>& violations) {
    struct Point {
        double records, retained, leaked;
    };
    auto measure = [&](std::size_t n) {
        o.trials = n;
        const std::size_t before = heap_in_use();
        std::size_t with_result = 0;
        Point pt{};
        {
            StressRun run = run_stress(sc, o);
            for (auto& s : run.violations) violations.push_back(fmt::format("{} trials: {}", n, s));
            pt.retained =
                static_cast<double>(run.memory.heap_at_end) - static_cast<double>(run.memory.heap_result_only);
            run.violations.clear();
            run.violations.shrink_to_fit();
            with_result = heap_in_use();
        }
        const std::size_t after = heap_in_use();
        pt.records = static_cast<double>(with_result) - static_cast<double>(after);
        pt.leaked = static_cast<double>(after) - static_cast<double>(before);
        return pt;
    };
    (void)measure(std::min<std::size_t>(small, 200));  // first-use allocations (locale, fmt, thread-locals) happen here
    Point a = measure(small);
    Point b = measure(large);
    const double extra = static_cast<double>(large - small);
    return {(b.records - a.records) / extra, (b.retained - a.retained) / extra, (b.leaked - a.leaked) / extra};
}

}  // namespace hypertune::stress
