// SPDX-License-Identifier: MIT
#pragma once
// Rung bookkeeping shared by ASHA and asynchronous Hyperband.
//
// StopRungs is stop-based asynchronous successive halving (ASHA, Li et al., "A System for Massively
// Parallel Hyperparameter Tuning", MLSys 2020) over one or more brackets. A bracket is a ladder of
// increasing rung resources. Every trial runs with the full budget and reports as it goes; the first
// time it reaches a rung (a report with step >= the rung's resource) its loss is recorded there and
// ranked against every loss recorded at that rung of its bracket so far. It continues only if it is in
// the top 1/eta: with m losses recorded (its own included) and q = floor(m / eta), it continues when
// fewer than q recorded losses are strictly lower than its own, i.e. loss <= the q-th smallest loss
// (the cut-off). While m < eta there is no top 1/eta to speak of, so the first eta - 1 trials at a
// rung always continue: stopping has to be decided now, it cannot wait for later trials as
// promotion-based ASHA does. Ties go to the trial. Each rung keeps its losses split into the q
// smallest and the rest (two heaps), so a decision is O(log m) and the cut-off is read in O(1).
// In a run with several objectives or with constraints (MO-ASHA), "in the top 1/eta" means a
// place below q in the rung's Pareto priority order instead (feasible first, then non-dominated
// rank, then crowding distance; detail/rung_ranking.hpp), and records carry no threshold.
//
// With wait_for_peers, those first eta - 1 trials get no free pass: such a trial is told Stop and
// held (a Pause record when its run ends). When the eta-th loss arrives at the rung, every trial
// held there is judged against the rung as it then is: in the top 1/eta, it is resumed by ask()
// (resume(): a Promote record, budget max_resource, resume_from = the resource it reached);
// otherwise it gets a Stop record. When nothing else can run (no new trial allowed, nothing
// running), release() lets the best trial held at the highest rung continue, and stops the others
// held there: fewer than eta trials will ever reach it.
//
// Records: a Promote each time a trial passes a rung, a Stop when it does not, with threshold = the
// cut-off (NaN while m < eta) and peers = m, the number of losses ranked, its own included.
// Edge cases: a trial whose reports skip rungs is judged once, at the highest rung it reached; a
// repeated or older step is ignored; a step beyond max_resource stops the trial; a NaN loss ranks
// worst; a trial told Completed or Stopped past its last report counts its final loss at the
// resource it reached (no record: it is over); a failed trial is left out of the rungs it had not
// reached.

#include <hypertune/linkage.hpp>
#include <hypertune/config.hpp>
#include <hypertune/error.hpp>
#include <hypertune/detail/live_trials.hpp>
#include <hypertune/detail/rung_ranking.hpp>
#include <hypertune/detail/str_cat.hpp>
#include <hypertune/strategy.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace hypertune::detail {

/// Throws InvalidArgument unless 1 <= min_resource < max_resource and factor >= 2.
/// `who` is the strategy ("ASHA"), `factor_name` the option that holds the factor ("eta").
void validate_rung_options(std::string_view who, std::string_view factor_name, Resource min_resource,
                                  Resource max_resource, int factor);

/// ASHA's rung levels: min_resource, then min_resource * factor^k for k >= 1 as long as the rung is
/// at most max_resource / factor (1, 3, 9, 27 for max_resource 81; 1, 3, 9 for 30). Every decision
/// is then taken at least a factor below max_resource, as at Hyperband's rungs (max_resource /
/// eta^k): a rung closer to it (27 of 30) would stop or hold trials on values that differ from
/// their final ones by the noise of the last few units, to save a tenth of a trial's units. The
/// first rung is min_resource whatever its distance to max_resource (the grace period asked for).
[[nodiscard]] std::vector<Resource> geometric_rungs(Resource min_resource, Resource max_resource, int factor);

/// A paused trial to run again: its configuration, from the resource it reached to its new budget.
struct Resumption {
    TrialId trial = 0;
    Config config;
    Resource from = 0;
    Resource to = 0;
};

/// Stop-based asynchronous successive halving over one or more brackets (see the top of this file).
/// A trial is added to a bracket when it starts; report() decides and appends a DecisionRecord for
/// every Stop and every rung passed; finish() takes the final outcome and forgets the trial.
class StopRungs {
public:
    StopRungs() = default;

    /// @param brackets        per bracket, its increasing rung resources, all below max_resource
    /// @param labels          per bracket, the number put in DecisionRecord::bracket (-1 for ASHA)
    /// @param eta             keep the top 1/eta at each rung
    /// @param wait_for_peers  hold the first eta - 1 trials at a rung instead of letting them pass
    /// @param pareto          rank by Pareto priority (several objectives or constraints)
    StopRungs(const std::vector<std::vector<Resource>>& brackets, std::vector<int> labels, int eta,
              Resource max_resource, bool wait_for_peers = false, bool pareto = false)
        : labels_(std::move(labels)), eta_(static_cast<std::size_t>(eta)), max_resource_(max_resource),
          wait_for_peers_(wait_for_peers) {
        ladders_.resize(brackets.size());
        for (std::size_t b = 0; b < brackets.size(); ++b)
            for (Resource r : brackets[b]) ladders_[b].push_back(Rung{r, RungRanking(eta_, pareto), {}});
    }

    /// Registers a new trial in `bracket` (an index into the ladders given at construction); its
    /// configuration is kept only with wait_for_peers, to resume it with.
    void add_trial(TrialId id, std::size_t bracket, const Config& config) {
        TrialState t;
        t.bracket = bracket;
        if (wait_for_peers_) t.config = config;
        trials_.insert(id, std::move(t));
        ++running_;
    }

    /// With wait_for_peers: a held trial judged in the top 1/eta, to run again (a Promote record).
    [[nodiscard]] std::optional<Resumption> resume(std::vector<DecisionRecord>& out);

    /// With wait_for_peers, when nothing else can run: the best trial held at the highest rung
    /// runs again (a Promote record); the others held there are stopped (Stop records).
    [[nodiscard]] std::optional<Resumption> release(std::vector<DecisionRecord>& out);

    /// Trials running now.
    [[nodiscard]] std::size_t running() const noexcept { return running_; }
    /// A loss this far above a rung's cut-off still counts as in its top 1/eta (by loss only; the
    /// rungs' noise tolerance, detail/report_noise.hpp).
    void set_tolerance(double tolerance) noexcept { tolerance_ = tolerance; }
    /// Trials held at a rung (wait_for_peers), waiting to be judged or to run again.
    [[nodiscard]] std::size_t waiting() const noexcept { return waiting_; }

    /// The rung decision for a report. Unknown trials and repeated or older steps are ignored
    /// (Continue); a trial already stopped keeps getting Stop.
    [[nodiscard]] Decision report(TrialId id, Resource step, const IntermediateReport& report,
                                  std::vector<DecisionRecord>& out);

    /// The trial's run ended. A completed or stopped trial whose outcome reaches further than its
    /// last report counts as a report of its final loss at that resource (its value joins the rung it
    /// reached, without a decision record since the trial is over). A failed trial adds nothing: it is
    /// excluded from the rungs it had not reached (losses it recorded earlier stay). A held trial
    /// pauses (a Pause record in `out`).
    void finish(TrialId id, const Outcome& outcome, std::vector<DecisionRecord>& out);

    /// The rung resources of bracket `b`.
    [[nodiscard]] std::vector<Resource> rung_resources(std::size_t b) const;

    /// How many losses are recorded at rung `rung` of bracket `b`.
    [[nodiscard]] std::size_t recorded(std::size_t b, std::size_t rung) const;

    /// Trials started and not yet finished.
    [[nodiscard]] std::size_t live_trials() const noexcept { return trials_.size(); }

private:
    struct Rung {
        Resource resource;
        RungRanking ranking;
        std::vector<TrialId> held;  // held here, not judged yet (wait_for_peers)
    };
    struct TrialState {
        std::size_t bracket = 0;
        std::size_t next_rung = 0;  // the first rung not reached yet
        Resource last_step = 0;
        bool stopped = false;
        // wait_for_peers only
        bool running = true;
        bool held = false;     // told Stop at a rung with fewer than eta values; waits there
        bool cleared = false;  // held, then judged in the top 1/eta: runs again once it has returned
        bool over = false;     // held, then judged out: forgotten once it has returned
        std::size_t rung = 0;  // where it is held
        double value = 0;      // its rank value there
        Resource reached = 0;
        std::optional<Config> config;  // set only with wait_for_peers: the common path builds no Config
    };

    // Moves past every rung reached at `step`; returns the highest one newly reached, or -1. A trial
    // whose reports skip rungs (reports every 5 epochs, say) is judged at the highest rung it reached
    // only: its loss there is not comparable with the losses recorded at the lower ones.
    [[nodiscard]] std::ptrdiff_t advance(TrialState& t, Resource step) const;

    [[nodiscard]] Decision decide(TrialId id, TrialState& t, std::size_t rung_index, const IntermediateReport& report,
                                  std::vector<DecisionRecord>* out) {
        Rung& rung = ladders_[t.bracket][rung_index];
        const double loss = report.loss;
        const double value = rank_value(loss);
        rung.ranking.record(id, report);
        const std::size_t m = rung.ranking.size();
        const std::size_t q = rung.ranking.top_size();
        if (out == nullptr) return Decision::Continue;

        DecisionRecord rec{id,
                           DecisionRecord::Kind::Promote,
                           labels_[t.bracket],
                           static_cast<int>(rung_index),
                           rung.resource,
                           loss,
                           std::numeric_limits<double>::quiet_NaN(),
                           m,
                           {}};
        if (q == 0) {
            if (wait_for_peers_) {
                // Held: the Pause record comes when its run ends (finish()), after the trial's end.
                t.stopped = t.held = true;
                t.rung = rung_index;
                t.value = value;
                rung.held.push_back(id);
                ++waiting_;
                return Decision::Stop;
            }
            rec.reason = str_cat({"one of the first ", m, " losses at rung ", rung_index, " (fewer than eta = ", eta_,
                                  "): continues"});
            out->push_back(std::move(rec));
            return Decision::Continue;
        }
        if (!rung.held.empty()) judge_held(t.bracket, rung_index, *out);
        rec.threshold = rung.ranking.cutoff();
        if (rung.ranking.in_top(id, value, tolerance_)) {
            rec.reason = str_cat({"in the top 1/", eta_, " (", q, " of ", m, ") at resource ", rung.resource,
                                  by_what(rung), tolerance_note(value, rec.threshold, tolerance_), ": continues"});
            out->push_back(std::move(rec));
            return Decision::Continue;
        }
        t.stopped = true;
        rec.kind = DecisionRecord::Kind::Stop;
        // Values stay out of the text: the record holds them, and the result prints them in the
        // objective's own sign (a maximised metric is a negated loss here).
        rec.reason = str_cat({"not in the top 1/", eta_, " (", q, " of ", m, ") at resource ", rung.resource,
                              by_what(rung)});
        out->push_back(std::move(rec));
        return Decision::Stop;
    }

    // How the rung ranks, for a record's reason: said only when it is not by loss.
    [[nodiscard]] static const char* by_what(const Rung& rung) noexcept {
        return rung.ranking.pareto() ? " by Pareto priority" : "";
    }

    // The rung now has eta values or more: every trial held there is cleared or stopped.
    void judge_held(std::size_t bracket, std::size_t rung_index, std::vector<DecisionRecord>& out);
    // The trial is no longer held nor cleared: it runs again, or is over.
    void stop_waiting(TrialState& t) noexcept {
        if (t.held || t.cleared) --waiting_;
        t.held = t.cleared = false;
    }

    std::vector<std::vector<Rung>> ladders_;
    std::vector<int> labels_;
    std::size_t eta_ = 3;
    Resource max_resource_ = 0;
    bool wait_for_peers_ = false;
    double tolerance_ = 0.0;
    LiveTrials<TrialState> trials_;
    std::deque<TrialId> cleared_;  // held, judged in the top, returned: to resume, oldest first
    std::size_t running_ = 0;
    std::size_t waiting_ = 0;  // held or cleared, not running again yet
};

}  // namespace hypertune::detail

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/detail/rungs.hpp>
#endif
