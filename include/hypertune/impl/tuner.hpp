// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/tuner.hpp>: the tuner's checks and journal opening, and the tuning job.
// Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/tuner.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/detail/replay.hpp>
#include <hypertune/detail/tuning_run.hpp>
#include <hypertune/journal.hpp>
#include <fmt/format.h>
#include <cmath>
#include <filesystem>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/tuner.hpp> is compiled into hypertune::compiled: include <hypertune/tuner.hpp>"
#endif

namespace hypertune {

HYPERTUNE_INLINE Tuner::Tuner(SearchSpace space, AnyStrategy strategy, TunerOptions options)
    : space_(std::move(space)), strategy_(std::move(strategy)), options_(std::move(options)) {
    if (options_.max_jobs < 1) throw InvalidArgument("TunerOptions: max_jobs must be >= 1, got 0");
    if (options_.max_parallel_jobs < 1) throw InvalidArgument("TunerOptions: max_parallel_jobs must be >= 1, got 0");
    if (options_.max_parallel_jobs > max_parallel_jobs_limit)
        throw InvalidArgument(fmt::format("TunerOptions: max_parallel_jobs must be <= {} (one thread each), got {}",
                                          max_parallel_jobs_limit, options_.max_parallel_jobs));
    // A worker beyond max_jobs would never get a trial.
    options_.max_parallel_jobs = std::min(options_.max_parallel_jobs, options_.max_jobs);
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

HYPERTUNE_INLINE Tuner::Tuner(Tuner&&) noexcept = default;
HYPERTUNE_INLINE Tuner& Tuner::operator=(Tuner&&) noexcept = default;
HYPERTUNE_INLINE Tuner::~Tuner() = default;

HYPERTUNE_INLINE TuningJob Tuner::start_objective(ObjectiveFunction objective) {
    if (!strategy_) throw Error("Tuner: this tuner has already run; make a new one");
    auto run = std::make_unique<detail::TuningRun>(space_, std::move(*strategy_), options_, std::move(objective),
                                                   std::move(journal_),
                                                   earlier_ ? std::move(*earlier_) : detail::JournalContents{},
                                                   std::move(warm_));
    strategy_.reset();
    run->launch();
    return TuningJob(std::move(run));
}

// An existing journal must come from the same run (detail/replay.hpp).
HYPERTUNE_INLINE void Tuner::open_journal() {
    const auto& path = options_.journal;
    // The lock first: a second tuner on a journal in use is refused before it reads anything.
    auto lock = std::make_unique<detail::JournalLock>(path);
    earlier_ = std::make_unique<detail::JournalContents>();
    std::error_code ec;
    if (std::filesystem::file_size(path, ec) > 0 && !ec) {
        *earlier_ = detail::read_journal(path);
        if (!earlier_->events.empty())
            detail::check_same_run(path, earlier_->events.front(), space_, strategy_->name(), options_.seed,
                                   options_.metric, strategy_->max_resource(), options_.direction);
    }
    journal_ = std::make_unique<detail::JournalWriter>(path, earlier_->valid_bytes, std::move(lock));
}

HYPERTUNE_INLINE TuningJob::TuningJob(std::unique_ptr<detail::TuningRun> run) : run_(std::move(run)) {}
HYPERTUNE_INLINE TuningJob::TuningJob(TuningJob&&) noexcept = default;
HYPERTUNE_INLINE TuningJob& TuningJob::operator=(TuningJob&&) noexcept = default;
HYPERTUNE_INLINE TuningJob::~TuningJob() = default;
HYPERTUNE_INLINE const Result& TuningJob::wait() { return run_->wait(); }
HYPERTUNE_INLINE Result TuningJob::take_result() { return run_->take_result(); }
HYPERTUNE_INLINE void TuningJob::stop() { run_->stop(); }
HYPERTUNE_INLINE Progress TuningJob::progress() const { return run_->progress(); }
HYPERTUNE_INLINE bool TuningJob::finished() const { return run_->finished(); }
HYPERTUNE_INLINE Result TuningJob::result_so_far() const { return run_->result_so_far(); }

}  // namespace hypertune
