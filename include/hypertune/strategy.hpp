// SPDX-License-Identifier: MIT
#pragma once
// The Strategy concept: how a search algorithm talks to whoever runs the trials (the Tuner, or the
// caller's own loop). A strategy is driven by three calls:
//   ask()                      -> run a trial (new, or resume a paused one), wait, or done;
//   report(trial, step, loss)  -> continue or stop (early stopping);
//   tell(trial, outcome)       -> the trial's run ended: its final loss, or that it failed.
// Strategies always MINIMISE a loss. The Tuner passes the objective with the sign of its
// direction (loss = -value when maximising), so a standalone caller who maximises negates too.

#include <hypertune/config.hpp>
#include <hypertune/search_space.hpp>

#include <concepts>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hypertune {

using TrialId = std::uint64_t;
/// Resource units (epochs, boosting rounds, blocks of data...): what a trial's budget counts.
using Resource = std::int64_t;

/// What ask() answers.
struct Suggestion {
    enum class Kind { Run, Wait, Done };
    Kind kind = Kind::Done;
    TrialId trial = 0;
    Config config;
    Resource budget = 0;       ///< the resource the trial may reach in total
    Resource resume_from = 0;  ///< > 0: the trial ran before up to this resource and continues

    [[nodiscard]] static Suggestion run(TrialId id, Config cfg, Resource budget, Resource resume_from = 0) {
        return {Kind::Run, id, std::move(cfg), budget, resume_from};
    }
    [[nodiscard]] static Suggestion wait() { return {Kind::Wait, 0, {}, 0, 0}; }
    [[nodiscard]] static Suggestion done() { return {Kind::Done, 0, {}, 0, 0}; }
    [[nodiscard]] bool runs() const noexcept { return kind == Kind::Run; }
};

/// What report() answers.
enum class Decision { Continue, Stop };

/// How a trial's run ended, as the runner tells the strategy.
struct Outcome {
    enum class Status { Completed, Failed, Stopped };
    Status status = Status::Completed;
    double loss = std::numeric_limits<double>::quiet_NaN();  ///< NaN when failed
    Resource resource = 0;                                    ///< the resource the trial reached

    [[nodiscard]] static Outcome completed(double loss, Resource resource) { return {Status::Completed, loss, resource}; }
    [[nodiscard]] static Outcome stopped(double loss, Resource resource) { return {Status::Stopped, loss, resource}; }
    [[nodiscard]] static Outcome failed(Resource resource = 0) {
        return {Status::Failed, std::numeric_limits<double>::quiet_NaN(), resource};
    }
};

/// What start() is given besides the space.
struct StrategyContext {
    std::uint64_t seed = 0;
    std::size_t max_trials = 0;  ///< new trials the strategy may start in all; 0 = no limit
};

/// A stop, pause or promotion, with what it was based on: kept on the trial's record.
struct DecisionRecord {
    enum class Kind { Stop, Pause, Promote };
    TrialId trial = 0;
    Kind kind = Kind::Stop;
    int bracket = -1;   ///< Hyperband bracket, -1 when there is none
    int rung = -1;      ///< rung index within the bracket
    Resource resource = 0;
    double loss = std::numeric_limits<double>::quiet_NaN();       ///< the trial's loss there
    double threshold = std::numeric_limits<double>::quiet_NaN();  ///< the loss it had to beat
    std::size_t peers = 0;                                        ///< trials it was compared with
    std::string reason;
};

[[nodiscard]] inline std::string_view to_string(DecisionRecord::Kind k) noexcept {
    switch (k) {
        case DecisionRecord::Kind::Stop: return "Stop";
        case DecisionRecord::Kind::Pause: return "Pause";
        case DecisionRecord::Kind::Promote: return "Promote";
    }
    return "?";
}

template <class S>
concept Strategy = requires(S& s, const S& cs, const SearchSpace& space, const StrategyContext& ctx, TrialId id,
                            Resource step, double loss, const Outcome& outcome) {
    s.start(space, ctx);
    { s.ask() } -> std::same_as<Suggestion>;
    { s.report(id, step, loss) } -> std::same_as<Decision>;
    s.tell(id, outcome);
    { cs.name() } -> std::convertible_to<std::string>;
};

/// A strategy that records why it stopped, paused or promoted trials. The runner collects the
/// records after each call.
template <class S>
concept ExplainsDecisions = Strategy<S> && requires(S& s) {
    { s.take_decisions() } -> std::same_as<std::vector<DecisionRecord>>;
};

/// A strategy that knows the full resource of a trial (multi-fidelity), for cost estimates.
template <class S>
concept HasMaxResource = requires(const S& s) {
    { s.max_resource() } -> std::convertible_to<Resource>;
};

/// A strategy that explains its own fallbacks (e.g. a model that could not be fitted); the tuner
/// shows them as warnings of the result.
template <class S>
concept HasNotes = requires(const S& s) {
    { s.notes() } -> std::convertible_to<const std::vector<std::string>&>;
};

/// How a new run uses the trials of earlier runs (AMT's warm-start types).
enum class WarmStartType {
    /// Same data and trainer, ranges may change: earlier results are observations of this run's
    /// objective.
    IdenticalDataAndAlgorithm,
    /// Related task (other data, parameters added or removed): earlier results only guide where
    /// to look first.
    TransferLearning,
};

[[nodiscard]] inline std::string_view to_string(WarmStartType t) noexcept {
    return t == WarmStartType::IdenticalDataAndAlgorithm ? "IdenticalDataAndAlgorithm" : "TransferLearning";
}

/// An earlier run's trial, translated into this run's search space (warm_start.hpp).
struct WarmStartObservation {
    Config config;
    double loss = std::numeric_limits<double>::quiet_NaN();  ///< NaN: the trial failed
    std::size_t parent = 0;                                   ///< which earlier run
    TrialId trial = 0;                                        ///< its id there
};

/// A strategy that learns from earlier runs' trials (called once, after start()).
template <class S>
concept LearnsFromEarlierRuns = requires(S& s, const std::vector<WarmStartObservation>& observations, WarmStartType type) {
    s.warm_start(observations, type);
};

/// Any Strategy behind one type, so that the tuner is not a template.
class AnyStrategy {
public:
    template <Strategy S>
        requires(!std::same_as<std::remove_cvref_t<S>, AnyStrategy>)
    AnyStrategy(S strategy)  // NOLINT: implicit on purpose, Tuner(space, Hyperband{...})
        : impl_(std::make_unique<Model<S>>(std::move(strategy))) {}

    void start(const SearchSpace& space, const StrategyContext& ctx) { impl_->start(space, ctx); }
    [[nodiscard]] Suggestion ask() { return impl_->ask(); }
    [[nodiscard]] Decision report(TrialId id, Resource step, double loss) { return impl_->report(id, step, loss); }
    void tell(TrialId id, const Outcome& o) { impl_->tell(id, o); }
    [[nodiscard]] std::string name() const { return impl_->name(); }
    [[nodiscard]] std::vector<DecisionRecord> take_decisions() { return impl_->take_decisions(); }
    [[nodiscard]] std::optional<Resource> max_resource() const { return impl_->max_resource(); }
    [[nodiscard]] std::vector<std::string> notes() const { return impl_->notes(); }
    /// Hands earlier runs' trials to the strategy; false when it does not learn from them.
    bool warm_start(const std::vector<WarmStartObservation>& observations, WarmStartType type) {
        return impl_->warm_start(observations, type);
    }

private:
    struct Concept {
        virtual ~Concept() = default;
        virtual void start(const SearchSpace&, const StrategyContext&) = 0;
        virtual Suggestion ask() = 0;
        virtual Decision report(TrialId, Resource, double) = 0;
        virtual void tell(TrialId, const Outcome&) = 0;
        virtual std::string name() const = 0;
        virtual std::vector<DecisionRecord> take_decisions() = 0;
        virtual std::optional<Resource> max_resource() const = 0;
        virtual std::vector<std::string> notes() const = 0;
        virtual bool warm_start(const std::vector<WarmStartObservation>&, WarmStartType) = 0;
    };

    template <class S>
    struct Model final : Concept {
        explicit Model(S s) : strategy(std::move(s)) {}
        void start(const SearchSpace& space, const StrategyContext& ctx) override { strategy.start(space, ctx); }
        Suggestion ask() override { return strategy.ask(); }
        Decision report(TrialId id, Resource step, double loss) override { return strategy.report(id, step, loss); }
        void tell(TrialId id, const Outcome& o) override { strategy.tell(id, o); }
        std::string name() const override { return std::string(strategy.name()); }
        std::vector<DecisionRecord> take_decisions() override {
            if constexpr (ExplainsDecisions<S>) return strategy.take_decisions();
            else return {};
        }
        std::optional<Resource> max_resource() const override {
            if constexpr (HasMaxResource<S>) return static_cast<Resource>(strategy.max_resource());
            else return std::nullopt;
        }
        std::vector<std::string> notes() const override {
            if constexpr (HasNotes<S>) return strategy.notes();
            else return {};
        }
        bool warm_start(const std::vector<WarmStartObservation>& observations, WarmStartType type) override {
            if constexpr (LearnsFromEarlierRuns<S>) {
                strategy.warm_start(observations, type);
                return true;
            } else {
                return false;
            }
        }
        S strategy;
    };

    std::unique_ptr<Concept> impl_;
};

}  // namespace hypertune
