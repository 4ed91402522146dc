// SPDX-License-Identifier: MIT
#pragma once
// Tuner: runs trials of an objective on max_parallel_jobs worker threads, driven by a strategy,
// until max_jobs trials are done, the strategy has nothing left, max_runtime passes, a completion
// criterion is met, or stop() is called. Options mirror SageMaker AMT's tuning job.

#include <hypertune/config.hpp>
#include <hypertune/error.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/objective.hpp>
#include <hypertune/result.hpp>
#include <hypertune/run_events.hpp>
#include <hypertune/run_state.hpp>
#include <hypertune/scheduler.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/strategy.hpp>
#include <hypertune/trial.hpp>
#include <hypertune/tuner_options.hpp>
#include <hypertune/warm_start.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hypertune {

namespace detail {
class TuningRun;
class JournalWriter;
struct JournalContents;
}  // namespace detail

/// A tuning run in progress, returned by Tuner::start(). Destroying it stops the run and waits.
class TuningJob {
public:
    explicit TuningJob(std::unique_ptr<detail::TuningRun> run);
    TuningJob(TuningJob&&) noexcept;
    TuningJob& operator=(TuningJob&&) noexcept;
    ~TuningJob();

    /// Blocks until the run ends; returns everything it recorded. May be called more than once,
    /// from any number of threads at once.
    const Result& wait();
    /// Waits, then hands the result over (the job keeps none): wait(), take_result() and
    /// result_so_far() then throw Error; progress() keeps its counts.
    Result take_result();
    /// Asks the run to end: no new trial starts, running ones see Trial::should_stop() and finish
    /// cleanly; nothing completed is lost. Safe from any thread, including callbacks.
    void stop();
    [[nodiscard]] Progress progress() const;
    [[nodiscard]] bool finished() const;
    /// The records so far, without waiting.
    [[nodiscard]] Result result_so_far() const;

private:
    // The run; throws Error on a moved-from job (its calls would otherwise follow a null pointer).
    [[nodiscard]] detail::TuningRun& run() const;

    std::unique_ptr<detail::TuningRun> run_;
};

class Tuner {
public:
    /// Checks the options and starts the strategy on the space: bad input throws
    /// InvalidArgument here, before any trial runs. An existing journal is locked, read and
    /// checked against this run (detail/replay.hpp) here too.
    Tuner(SearchSpace space, AnyStrategy strategy, TunerOptions options = {});
    Tuner(Tuner&&) noexcept;
    Tuner& operator=(Tuner&&) noexcept;
    ~Tuner();

    /// Runs to the end and returns the result.
    template <class F>
    Result fit(F&& objective) {
        return start(std::forward<F>(objective)).take_result();
    }

    /// Starts the run in the background.
    template <class F>
    TuningJob start(F&& objective) {
        return start_objective(make_objective(std::forward<F>(objective)));
    }

    [[nodiscard]] const SearchSpace& space() const noexcept { return space_; }
    [[nodiscard]] const TunerOptions& options() const noexcept { return options_; }

private:
    TuningJob start_objective(ObjectiveFunction objective);
    bool start_strategy(std::size_t planned_trials);
    void open_journal();

    SearchSpace space_;
    std::optional<AnyStrategy> strategy_;
    TunerOptions options_;
    std::unique_ptr<detail::JournalWriter> journal_;
    std::unique_ptr<detail::JournalContents> earlier_;
    PreparedWarmStart warm_;
};

}  // namespace hypertune

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/tuner.hpp>
#endif
