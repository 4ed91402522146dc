// SPDX-License-Identifier: MIT
#pragma once
// The words a search strategy and whoever runs its trials (the Tuner, or the caller's own loop)
// speak: what ask() answers (Suggestion), what report() answers (Decision), how a trial ended
// (Outcome), the records of stops, pauses and promotions (DecisionRecord) and where they go
// (DecisionSink), an earlier run's trials for warm start, and a strategy's Settings. The two
// roles that use them live in sampler.hpp (which configuration next) and scheduler.hpp (when
// trials run, pause and stop).
// Strategies always MINIMISE a loss. The Tuner passes the objective with the sign of its
// direction (loss = -value when maximising), so a standalone caller who maximises negates too.

#include <hypertune/config.hpp>
#include <hypertune/types.hpp>

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hypertune {

/// A strategy's options that decide its suggestions and decisions beyond its name, as (name,
/// value) text in a fixed order: a journal records them, and a run resumes only with the same
/// ones, so that a changed option is named rather than replayed into another run's decisions.
using Settings = std::vector<std::pair<std::string, std::string>>;

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
    /// A run with several objectives: each objective as a loss (negated where maximised), the
    /// first being `loss`. Empty otherwise, and when the trial failed.
    std::vector<double> losses{};
    /// False when the trial's metrics break one of the run's constraints (TunerOptions::constraints):
    /// a sampler should steer away from its region whatever its loss.
    bool feasible = true;
    /// A run with constraints: each constraint's violation (constraint_violations() in
    /// metrics.hpp: <= 0 when met, NaN when the metric is missing), in TunerOptions::constraints
    /// order, so a sampler can model where the feasible region lies. Empty otherwise, and when the
    /// trial failed.
    std::vector<double> violations{};
    /// How long this run of the trial took (since it started, or resumed), as the runner measured
    /// it, NaN when it does not: unlike the last report's IntermediateReport::seconds, it counts
    /// what the trainer did after its last report (saving its checkpoint, say).
    double seconds = std::numeric_limits<double>::quiet_NaN();
    /// A resumed trial whose run trained again from the start (the objective kept no checkpoint
    /// to continue from): this run trained `resource` units, not `resource` less the step it was
    /// resumed from. The Tuner says so; the steps such a run reports again were judged before and
    /// reach no scheduler, so that this is how a scheduler learns that promoting a trial of this
    /// objective costs its whole budget again.
    bool started_over = false;

    [[nodiscard]] static Outcome completed(double loss, Resource resource) { return {Status::Completed, loss, resource, {}, true}; }
    [[nodiscard]] static Outcome stopped(double loss, Resource resource) { return {Status::Stopped, loss, resource, {}, true}; }
    [[nodiscard]] static Outcome failed(Resource resource = 0) {
        return {Status::Failed, std::numeric_limits<double>::quiet_NaN(), resource, {}, true};
    }
};

/// An intermediate report as a scheduler is given it (Scheduler::report). `loss` is the (first)
/// objective's, lower is better. In a run with several objectives, `losses` holds each objective's
/// loss (negated where maximised), the first being `loss`; it is empty with one objective. In a
/// run with constraints, `feasible` says whether the constrained metrics the report carries meet
/// them (a constrained metric it leaves out counts as met: it cannot be judged yet). `seconds`
/// is how long this run of the trial has taken so far (since it started, or resumed from a
/// checkpoint), as the runner measured it, NaN when it does not: a scheduler learns from it how
/// fast each configuration trains (the Tuner and the simulator give it; Syne Tune's schedulers
/// read the same from each result's elapsed time).
struct IntermediateReport {
    double loss = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> losses{};
    bool feasible = true;
    double seconds = std::numeric_limits<double>::quiet_NaN();
};

class DecisionSink;

/// What start() is given besides the space.
struct StrategyContext {
    std::uint64_t seed = 0;
    std::size_t max_trials = 0;  ///< new trials the runner lets start in all; 0 = no limit
    /// The run's objectives (TunerOptions::objectives): with several, reports and outcomes carry
    /// each one's loss, and a scheduler that stops trials must rank them on all (MO-ASHA).
    std::size_t objectives = 1;
    /// Whether the run has constraints: reports and outcomes then say whether they are met.
    bool constrained = false;
    /// Where decisions go; null: the scheduler keeps them for take_decisions().
    DecisionSink* decisions = nullptr;
    /// The budget of new trials the run began with, when a resumed run raised it (max_trials is
    /// then the new budget); 0: max_trials. A sampler sizes its phases by this one (the GP
    /// sampler's initial design), so that a resumed run replays the suggestions its journal holds.
    std::size_t planned_trials = 0;
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

/// Collects the decisions a strategy makes, in order, until the runner takes them: one sink for a
/// whole run, so that a scheduler that wraps another shares it rather than forwarding records.
class DecisionSink {
public:
    void add(DecisionRecord d) { records_.push_back(std::move(d)); }
    /// add() for each of `records`, in order, leaving it empty (moved as one vector when this
    /// sink holds nothing yet, the common case on a scheduler's report path).
    void add_all(std::vector<DecisionRecord>& records) {
        if (records_.empty())
            records_.swap(records);
        else
            std::move(records.begin(), records.end(), std::back_inserter(records_));
        records.clear();
    }
    [[nodiscard]] std::vector<DecisionRecord> take() { return std::exchange(records_, {}); }
    [[nodiscard]] bool empty() const noexcept { return records_.empty(); }

private:
    std::vector<DecisionRecord> records_;
};

/// Something a strategy wants the user to know (a fallback, a change of model), about one trial
/// or about the run; shown as a warning of the result.
struct Note {
    std::optional<TrialId> trial;  ///< the trial it happened at, if any
    std::string text;
    friend bool operator==(const Note&, const Note&) = default;
};

/// "trial 7: text", or the text alone.
[[nodiscard]] inline std::string to_string(const Note& n) {
    return n.trial ? "trial " + std::to_string(*n.trial) + ": " + n.text : n.text;
}

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
    /// This run's constraints (TunerOptions::constraints), judged on the metrics the parent
    /// recorded: each one's violation, in order (<= 0 when met; constraint_violations()). Empty
    /// when the run has none, and for a failed trial.
    std::vector<double> violations{};
    /// Whether it meets this run's constraints (true when there are none).
    bool feasible = true;
    /// False when the parent did not record a constrained metric of this run, so that its
    /// constraints cannot be judged: it counts as meeting them (`feasible`, no violations), and
    /// a sampler should not take it for a feasible result either.
    bool judged = true;
};

}  // namespace hypertune
