// SPDX-License-Identifier: MIT
#pragma once
// SynchronousBrackets: the synchronous mode of Hyperband, the paper's successive halving with a
// barrier at every rung (its rules are at the top of strategies/hyperband.hpp). Hyperband owns the
// schedule and the choice of mode, and hands this the rungs of every bracket; this owns the
// brackets running now, their trials, the barriers and the promotions, as Syne Tune keeps its
// synchronous bracket apart from the bracket manager.
//
// A bracket is started by next() and lives until its last rung closes or no trial is left to
// promote. Brackets are kept by serial, oldest first, not by s: the same s runs again in the next
// iteration, possibly while the older one still waits at a barrier, and next() serves the older
// brackets first because finishing them is what produces results. The rung of a bracket closes
// when every trial handed out for it has been told; until then its trials pause (a Pause record).

#include <hypertune/linkage.hpp>
#include <hypertune/config.hpp>
#include <hypertune/detail/live_trials.hpp>
#include <hypertune/detail/str_cat.hpp>
#include <hypertune/scheduler.hpp>
#include <hypertune/strategy.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <utility>
#include <vector>

namespace hypertune::detail {

class SynchronousBrackets {
public:
    /// One rung of a bracket: how many trials run there, and with how much resource.
    struct Rung {
        std::size_t configurations = 0;
        Resource resource = 0;
    };

    /// Starts a new trial of bracket `bracket` with budget `resource`: the scheduler's start_new(),
    /// so Done when no new trial may start (the budget, or a sampler with nothing left). A
    /// std::function rather than a template, so that next() is compiled with the rest; Hyperband's
    /// lambda holds two references and fits in its small buffer, so a call allocates nothing.
    using StartNew = std::function<Suggestion(Resource resource, int bracket)>;

    SynchronousBrackets() = default;
    /// @param brackets      per bracket s = 0..s_max (its index, the number put in
    ///                      DecisionRecord::bracket), its rungs from the most trials to one
    /// @param eta           promote the best 1/eta at each barrier
    /// @param max_resource  a report past it gets Stop and a record
    /// @param lowest_s      the least aggressive bracket that runs: the iterations go s_max down to it
    SynchronousBrackets(std::vector<std::vector<Rung>> brackets, int eta, Resource max_resource, int lowest_s = 0)
        : schedule_(std::move(brackets)), eta_(static_cast<std::size_t>(eta)), max_resource_(max_resource),
          next_s_(static_cast<int>(schedule_.size()) - 1), lowest_s_(lowest_s) {}

    /// What the scheduler's ask() answers, older brackets first: a new trial of a bracket whose
    /// first rung is still filling, or a promoted trial to resume; else a new trial of a new bracket
    /// (also while the others wait at a barrier, so that no worker idles); else Wait while a trial
    /// runs, else Done. Records go to `out`.
    [[nodiscard]] Suggestion next(const TrialBudget& budget, const StartNew& start_new,
                                  std::vector<DecisionRecord>& out);

    /// Continue, unless the step overruns max_resource (Stop and a record) or the trial's rung
    /// budget (Stop). Unknown trials, trials not running and repeated or older steps get Continue.
    [[nodiscard]] Decision report(TrialId id, Resource step, double loss, std::vector<DecisionRecord>& out);

    /// The trial's run ended: its loss counts at its rung (a failed trial ranks last), it pauses
    /// there (a Pause record) unless it failed, the rung is its bracket's last, or it trained to
    /// max_resource already, and the rung closes when it was the last one to return. A trial that
    /// trained in full is not run again: while it ranks among the best it carries its loss to the
    /// next rung, where it counts as one of the trials that rung runs.
    void finish(TrialId id, const Outcome& outcome, std::vector<DecisionRecord>& out);

private:
    struct RungResult {
        double loss;
        TrialId id;
        bool failed;
    };
    struct SyncBracket {
        int s = 0;
        std::size_t rung = 0;          // the rung being run
        std::size_t rung_size = 0;     // trials of this rung (the target while rung 0 is still filling)
        std::size_t created = 0;       // rung-0 trials handed out
        std::size_t running = 0;       // handed out, not told yet
        std::deque<TrialId> promoted;  // waiting to be resumed at `rung`
        std::vector<RungResult> results;
    };
    struct SyncTrial {
        std::uint64_t bracket = 0;  // serial of its SyncBracket
        std::size_t rung = 0;
        Config config;
        Resource budget = 0;
        Resource last_step = 0;
        Resource reached = 0;
        bool running = false;
        // Trained to max_resource already (an objective that cannot see its budget): it ranks at
        // each rung it survives to, and never runs again.
        bool complete = false;
        // filled when it is promoted, for the Promote record
        double loss = std::numeric_limits<double>::quiet_NaN();
        double threshold = std::numeric_limits<double>::quiet_NaN();
        std::size_t peers = 0;
    };
    using BracketIt = std::map<std::uint64_t, SyncBracket>::iterator;

    [[nodiscard]] int s_max() const noexcept { return static_cast<int>(schedule_.size()) - 1; }
    [[nodiscard]] Resource rung_resource(int s, std::size_t i) const {
        return schedule_[static_cast<std::size_t>(s)][i].resource;
    }

    // A new rung-0 trial of bracket `it`. When the sampler has no configuration left and none of the
    // bracket's trials runs, the bracket is cut to the trials it has and its rung closes; nothing
    // new starts after.
    [[nodiscard]] Suggestion new_trial(const StartNew& start_new, BracketIt it, std::vector<DecisionRecord>& out);

    [[nodiscard]] Suggestion resume_trial(SyncBracket& b, std::vector<DecisionRecord>& out);

    // Every trial of the rung has returned: promote the best, stop the others.
    void close_rung(BracketIt bit, std::vector<DecisionRecord>& out);

    std::vector<std::vector<Rung>> schedule_;  // by s
    std::size_t eta_ = 3;
    Resource max_resource_ = 0;
    std::map<std::uint64_t, SyncBracket> brackets_;  // by serial: oldest first
    LiveTrials<SyncTrial> trials_;  // trials running or paused
    std::uint64_t next_serial_ = 0;
    int next_s_ = -1;
    int lowest_s_ = 0;
    std::size_t running_ = 0;
    bool sampler_exhausted_ = false;  // the sampler had no configuration left: no new bracket starts
};

}  // namespace hypertune::detail

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/detail/synchronous_brackets.hpp>
#endif
