// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/tuner.hpp>: the tuner's checks and journal opening, and the tuning job.
// Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/tuner.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/detail/instance_count.hpp>
#include <hypertune/detail/replay.hpp>
#include <hypertune/detail/tuning_run.hpp>
#include <hypertune/detail/str_cat.hpp>
#include <hypertune/journal.hpp>
#include <hypertune/detail/csv.hpp>
#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <filesystem>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/tuner.hpp> is compiled into hypertune::compiled: include <hypertune/tuner.hpp>"
#endif

namespace hypertune {

namespace detail {

// TunerOptions::objectives and constraints, checked; afterwards `objectives` holds every objective
// (just {metric, direction} for a single one), the first being the run's metric and direction.
HYPERTUNE_INLINE void check_metrics(TunerOptions& o, const SearchSpace& space) {
    if (o.objectives.empty()) {
        o.objectives.push_back({o.metric, o.direction});
    } else {
        const Metric& first = o.objectives.front();
        const bool metric_given = o.metric != TunerOptions{}.metric || o.direction != TunerOptions{}.direction;
        if (metric_given && (o.metric != first.name || o.direction != first.direction))
            throw InvalidArgument(fmt::format("TunerOptions: metric '{}' ({}) and objectives (first: '{}', {}) disagree: "
                                              "give the objectives alone",
                                              o.metric, to_string(o.direction), first.name, to_string(first.direction)));
        o.metric = first.name;
        o.direction = first.direction;
    }
    const bool several = o.objectives.size() > 1 || !o.constraints.empty();
    std::vector<std::string> seen;
    for (const auto& m : o.objectives) {
        if (m.name.empty()) throw InvalidArgument("TunerOptions: an objective has an empty name");
        if (const std::string problem = name_problem(m.name); !problem.empty())
            throw InvalidArgument(fmt::format("TunerOptions: objective '{}': {}", printable(m.name), problem));
        if (std::find(seen.begin(), seen.end(), m.name) != seen.end())
            throw InvalidArgument(fmt::format("TunerOptions: objective '{}' is given twice", m.name));
        seen.push_back(m.name);
    }
    for (const auto& c : o.constraints) {
        if (c.metric.empty()) throw InvalidArgument("TunerOptions: a constraint has an empty metric name");
        if (const std::string problem = name_problem(c.metric); !problem.empty())
            throw InvalidArgument(fmt::format("TunerOptions: constraint metric '{}': {}", printable(c.metric), problem));
        if (!std::isfinite(c.bound))
            throw InvalidArgument(fmt::format("TunerOptions: the bound of constraint '{} {} {}' must be finite", c.metric,
                                              to_string(c.kind), c.bound));
        // Bounds on one metric that no value meets together: every trial would be infeasible.
        for (const auto& d : o.constraints)
            if (d.metric == c.metric && c.kind == Constraint::Kind::AtMost && d.kind == Constraint::Kind::AtLeast &&
                c.bound < d.bound)
                throw InvalidArgument(fmt::format("TunerOptions: constraints '{} {} {}' and '{} {} {}' exclude each "
                                                  "other: no trial could meet both",
                                                  c.metric, to_string(c.kind), c.bound, d.metric, to_string(d.kind),
                                                  d.bound));
    }
    if (!several) return;
    // Each metric becomes a CSV column beside the fixed ones and the hyperparameters.
    for (const auto& name : metric_names(o.objectives, o.constraints)) {
        if (detail::is_csv_column(name))
            throw InvalidArgument(fmt::format("TunerOptions: metric '{}' is named like a column of Result::to_csv; "
                                              "choose another name", name));
        const auto& params = space.parameters();
        if (std::any_of(params.begin(), params.end(), [&](const ParameterSpec& p) { return p.name == name; }))
            throw InvalidArgument(fmt::format("TunerOptions: metric '{}' is named like a hyperparameter; choose "
                                              "another name", name));
    }
    if (o.objectives.size() > 1) {
        if (o.target_objective)
            throw InvalidArgument(fmt::format("TunerOptions: target_objective needs a single objective; this run has {}",
                                              o.objectives.size()));
        if (o.max_trials_without_improvement > 0)
            throw InvalidArgument(fmt::format("TunerOptions: max_trials_without_improvement needs a single objective; "
                                              "this run has {}", o.objectives.size()));
        if (!o.warm_start.empty())
            throw InvalidArgument(fmt::format("TunerOptions: warm start needs a single objective; this run has {}",
                                              o.objectives.size()));
    }
}

}  // namespace detail

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
    if (!options_.instances_parameter.empty())
        // Billed as the count times instances_per_trial, an int: a larger product is refused here,
        // not met by a trial halfway through the run.
        detail::check_count_parameter(space_.parameters(), options_.instances_parameter, "TunerOptions: instances_parameter",
                                      std::numeric_limits<int>::max() / options_.instances_per_trial,
                                      fmt::format("the most instances a trial can bill, {} over instances_per_trial {}",
                                                  std::numeric_limits<int>::max(), options_.instances_per_trial));
    if (options_.max_retries < 0)
        throw InvalidArgument(fmt::format("TunerOptions: max_retries must be >= 0, got {}", options_.max_retries));
    if (!(options_.max_runtime_seconds >= 0.0) || std::isinf(options_.max_runtime_seconds))
        throw InvalidArgument(fmt::format("TunerOptions: max_runtime_seconds must be finite and >= 0, got {}",
                                          options_.max_runtime_seconds));
    if (!(options_.max_trial_seconds >= 0.0) || std::isinf(options_.max_trial_seconds))
        throw InvalidArgument(fmt::format("TunerOptions: max_trial_seconds must be finite and >= 0, got {}",
                                          options_.max_trial_seconds));
    if (options_.target_objective && !std::isfinite(*options_.target_objective))
        throw InvalidArgument("TunerOptions: target_objective must be finite");
    if (!(options_.improvement_tolerance >= 0.0))
        throw InvalidArgument("TunerOptions: improvement_tolerance must be >= 0");
    space_.require_tunable();
    detail::check_metrics(options_, space_);
    if (!strategy_->get().supports_objectives(options_.objectives.size())) {
        throw InvalidArgument(fmt::format("TunerOptions: {} objectives ({}), but {} optimises a single one; "
                                          "RandomSearch, GridSearch, Bayesian, ASHA and asynchronous Hyperband "
                                          "take several",
                                          options_.objectives.size(),
                                          detail::join(metric_names(options_.objectives, {}), ", "),
                                          strategy_->name()));
    }
    if (!options_.warm_start.empty()) {
        warm_ = prepare_warm_start(options_.warm_start, space_, options_.metric, options_.direction,
                                   options_.constraints);
        // A parent whose trials trained to another max_resource measured its values elsewhere on
        // the learning curve: its observations are used all the same, and the user should know.
        const Resource here = strategy_->max_resource().value_or(1);
        for (std::size_t k = 0; k < options_.warm_start.parents.size(); ++k) {
            const Resource there = options_.warm_start.parents[k].setup().max_resource.value_or(1);
            if (there != here)
                warm_.notes.push_back(fmt::format("warm start parent {} trained its trials to max_resource = {}, this "
                                                  "run's is {}: its values were measured at another resource, and "
                                                  "are used as this run's",
                                                  k, there, here));
        }
    }
    if (!start_strategy(0) && !warm_.observations.empty())
        warm_.notes.push_back(fmt::format("{} does not learn from earlier runs: the warm-start parents count "
                                          "only towards the overall best",
                                          strategy_->name()));
    if (!options_.journal.empty()) open_journal();
}

// Starts (or starts again) the strategy with the run's context and gives it the warm start; false
// when the strategy does not learn from earlier runs. The library's own errors name their area
// already; anything else a strategy of the user's own (or its sampler) throws is named after the
// strategy and the call, as ask() and report() are.
HYPERTUNE_INLINE bool Tuner::start_strategy(std::size_t planned_trials) {
    const char* call = "start()";
    try {
        strategy_->start(space_, StrategyContext{.seed = options_.seed,
                                                 .max_trials = options_.max_jobs,
                                                 .objectives = options_.objectives.size(),
                                                 .constrained = !options_.constraints.empty(),
                                                 .planned_trials = planned_trials});
        call = "warm_start()";
        return options_.warm_start.empty() || strategy_->warm_start(warm_.observations, options_.warm_start.type);
    } catch (const Error&) {
        throw;
    } catch (const std::exception& e) {
        throw StrategyError(fmt::format("strategy '{}' failed in {}: {}", strategy_->name(), call, e.what()));
    }
}

// A moved-from Tuner has no strategy, as one that has run: fit() on it is the same clear error
// (a defaulted move would leave the optional engaged around a moved-from strategy).
HYPERTUNE_INLINE Tuner::Tuner(Tuner&& other) noexcept
    : space_(std::move(other.space_)), strategy_(std::exchange(other.strategy_, std::nullopt)),
      options_(std::move(other.options_)), journal_(std::move(other.journal_)), earlier_(std::move(other.earlier_)),
      warm_(std::move(other.warm_)) {}
HYPERTUNE_INLINE Tuner& Tuner::operator=(Tuner&& other) noexcept {
    if (this == &other) return *this;
    space_ = std::move(other.space_);
    strategy_ = std::exchange(other.strategy_, std::nullopt);
    options_ = std::move(other.options_);
    journal_ = std::move(other.journal_);
    earlier_ = std::move(other.earlier_);
    warm_ = std::move(other.warm_);
    return *this;
}
HYPERTUNE_INLINE Tuner::~Tuner() = default;

HYPERTUNE_INLINE TuningJob Tuner::start_objective(ObjectiveFunction objective) {
    if (!strategy_) throw Error("Tuner: this tuner has already run (or was moved from); make a new one");
    if ((options_.objectives.size() > 1 || !options_.constraints.empty()) && !objective.returns_metrics())
        throw InvalidArgument(fmt::format("Tuner: the run has metrics {}: the objective must return hypertune::Metrics "
                                          "with a value for each, not a single number",
                                          detail::join(metric_names(options_.objectives, options_.constraints), ", ")));
    // An objective that reads several named metrics and returns one: a run that names another of
    // them as its metric would optimise the returned one under that name (a best "accuracy" that
    // is the largest loss).
    if (!objective.returns_metric.empty() && !objective.returns_metrics() && options_.metric != objective.returns_metric &&
        std::find(objective.reads_metrics.begin(), objective.reads_metrics.end(), options_.metric) !=
            objective.reads_metrics.end())
        throw InvalidArgument(fmt::format("Tuner: the run's metric is '{}' (TunerOptions::metric), but the objective "
                                          "returns its metric '{}' (CommandOptions::objective_metric, else the first "
                                          "definition): set .objective_metric = \"{}\", or name '{}' as the run's "
                                          "metric",
                                          options_.metric, objective.returns_metric, options_.metric,
                                          objective.returns_metric));
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
    detail::CheckpointStore::check_folder(path);  // before any file is made
    // The lock first: a second tuner on a journal in use is refused before it reads anything.
    auto lock = std::make_unique<detail::JournalLock>(path);
    earlier_ = std::make_unique<detail::JournalContents>();
    std::error_code ec;
    if (std::filesystem::file_size(path, ec) > 0 && !ec) {
        *earlier_ = detail::read_journal(path);
        if (!earlier_->events.empty()) {
            const detail::JsonValue began = detail::JsonValue::parse(earlier_->events.front());
            detail::check_same_run(path, began, space_, strategy_->name(), strategy_->settings(), options_.seed,
                                   options_.metric,
                                   strategy_->max_resource(), options_.direction, options_.objectives,
                                   options_.constraints, options_.instances_parameter, options_.instances_per_trial);
            // Parents grown since: the strategy learns again from the observations the run began with.
            const bool narrowed = detail::check_same_warm_start(path, earlier_->events, space_, warm_);
            // A resume may raise max_jobs; the sampler sizes its phases by the budget the run began
            // with (the GP sampler's initial design), or its replay would suggest other trials.
            // (A journal from before max_jobs was recorded reads as 0: the budget as it is now.)
            const RunEvent first = detail::event_from_json(began, space_);
            const auto* run = std::get_if<RunStarted>(&first);
            const std::size_t planned =
                run && run->max_jobs != 0 && run->max_jobs != options_.max_jobs ? run->max_jobs : 0;
            if (narrowed || planned != 0) (void)start_strategy(planned);
        }
    }
    journal_ = std::make_unique<detail::JournalWriter>(path, earlier_->valid_bytes, std::move(lock));
}

HYPERTUNE_INLINE TuningJob::TuningJob(std::unique_ptr<detail::TuningRun> run) : run_(std::move(run)) {}
HYPERTUNE_INLINE TuningJob::TuningJob(TuningJob&&) noexcept = default;
HYPERTUNE_INLINE TuningJob& TuningJob::operator=(TuningJob&&) noexcept = default;
HYPERTUNE_INLINE TuningJob::~TuningJob() = default;
HYPERTUNE_INLINE const Result& TuningJob::wait() { return run().wait(); }
HYPERTUNE_INLINE Result TuningJob::take_result() { return run().take_result(); }
HYPERTUNE_INLINE void TuningJob::stop() { run().stop(); }
HYPERTUNE_INLINE Progress TuningJob::progress() const { return run().progress(); }
HYPERTUNE_INLINE bool TuningJob::finished() const { return run().finished(); }
HYPERTUNE_INLINE Result TuningJob::result_so_far() const { return run().result_so_far(); }
HYPERTUNE_INLINE detail::TuningRun& TuningJob::run() const {
    if (!run_) throw Error("TuningJob: this job was moved from; use the one it was moved to");
    return *run_;
}

}  // namespace hypertune
