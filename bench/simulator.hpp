// SPDX-License-Identifier: MIT
#pragma once
// A discrete-event simulator for strategies: P workers on a simulated clock run what a strategy
// suggests on a synthetic multi-fidelity problem, so a tuning run of days of trial time takes
// milliseconds, is exactly reproducible and measures the strategy alone (no threads, no sleeping).
//
// The problem. A configuration x, at its unit-cube point u = space.encode(x), has the learning curve
//   loss(r) = f(u) + a(x) * exp(-r / tau(x)),   f(u) = 0.1 + sum_j w_j (u_j - c_j)^2,
// where the centre c_j in [0.2, 0.8] and the weights w_j in [0.25, 1] come from the seed, and the
// amplitude a in [0.1, 0.5] (times a scale, 1 by default), the time constant tau (log-uniform in
// [1, R / 3]) and the seconds per resource unit (lognormal, median 1 s, sigma 0.5) come from a hash
// of (seed, u): a configuration gets the same curve whichever strategy proposes it. a and tau do not
// depend on f, so early losses rank configurations only partly right (rank_correlation() measures
// how well).
//
// The run. Every idle worker asks the strategy for work. A Run executes units resume_from + 1 ..
// budget (1 .. budget when SimOptions::checkpoints is false), one unit taking the configuration's
// unit time, and reports (trial, step, loss(step), with the run's simulated seconds so far as
// IntermediateReport::seconds) at the simulated time the unit ends; it stops early when report()
// says Stop. Events are processed in time order (ties: first scheduled first), so reports of
// different workers interleave as on a cluster.
// When its run ends the worker tells the outcome (Completed when it reached its budget, Stopped
// otherwise, with the loss and resource of its last step) and asks again. Wait: the worker idles
// until the next tell. Done: it retires. The run ends when every worker has retired, or as soon as
// `budget` resource units have been spent (work in flight is abandoned). Strategy calls take no
// simulated time. Whatever breaks the Strategy contract (a paused trial resumed from the wrong
// resource, a Wait with nothing running...) is recorded in SimResult::anomalies.
//
// Other problems. The simulator takes any Problem with `curve(const Config&)` returning a value `c`
// with c.loss(Resource r) (the loss reported after unit r, r = 1..max_resource) and c.unit_seconds;
// SyntheticProblem is the default (bench/recorded_curves.hpp replays recorded learning curves).

#include <hypertune/detail/random.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/scheduler.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numbers>
#include <numeric>
#include <queue>
#include <type_traits>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hypertune::bench {

/// One configuration's learning curve and speed.
struct Curve {
    double final_loss = 0.0;
    double amplitude = 0.0;
    double tau = 1.0;
    double unit_seconds = 1.0;  ///< simulated seconds per resource unit

    [[nodiscard]] double loss(Resource r) const noexcept {
        return final_loss + amplitude * std::exp(-static_cast<double>(r) / tau);
    }
};

/// The synthetic multi-fidelity problem described at the top of simulator.hpp.
class SyntheticProblem {
public:
    static constexpr double offset = 0.1;  ///< the smallest f (at u = c)

    /// `amplitude` scales a(x): larger values make early losses rank configurations worse.
    SyntheticProblem(const SearchSpace& space, std::uint64_t seed, Resource max_resource, double amplitude = 1.0)
        : space_(space),
          // Not `seed` itself: RandomSearch draws trial k's point as hash3(seed, k, j), so hash3(seed,
          // stream, j) here would put the optimum on trial number `stream`.
          key_(detail::splitmix64(seed ^ 0x5eed'0f'c0de'5eedULL)),
          tau_max_(std::max(1.0, static_cast<double>(max_resource) / 3.0)),
          amplitude_(amplitude) {
        for (std::size_t j = 0; j < space.dimensions(); ++j) {
            centre_.push_back(0.2 + 0.6 * detail::to_unit(detail::hash3(key_, stream_centre, j)));
            weight_.push_back(0.25 + 0.75 * detail::to_unit(detail::hash3(key_, stream_weight, j)));
        }
    }

    [[nodiscard]] Curve curve(const Config& cfg) const {
        const auto u = space_.encode(cfg);
        double f = offset;
        std::uint64_t h = detail::hash3(key_, stream_curve, 0);
        for (std::size_t j = 0; j < u.size(); ++j) {
            const double d = u[j] - centre_[j];
            f += weight_[j] * d * d;
            h = detail::splitmix64(h ^ std::bit_cast<std::uint64_t>(u[j]));
        }
        auto draw = [h](std::uint64_t k) { return detail::to_unit(detail::hash3(h, 0, k)); };
        // Box-Muller; 1 - u keeps the logarithm's argument in (0, 1]
        const double z = std::sqrt(-2.0 * std::log(1.0 - draw(2))) * std::cos(2.0 * std::numbers::pi * draw(3));
        return Curve{f, amplitude_ * (0.1 + 0.4 * draw(0)), std::exp(std::log(tau_max_) * draw(1)), std::exp(0.5 * z)};
    }

private:
    static constexpr std::uint64_t stream_centre = 0;
    static constexpr std::uint64_t stream_weight = 1;
    static constexpr std::uint64_t stream_curve = 2;

    SearchSpace space_;
    std::uint64_t key_;
    double tau_max_;
    double amplitude_;
    std::vector<double> centre_;
    std::vector<double> weight_;
};

/// Spearman rank correlation of x and y (no ties expected: the losses are continuous).
[[nodiscard]] inline double spearman(const std::vector<double>& x, const std::vector<double>& y) {
    auto ranks = [](const std::vector<double>& v) {
        std::vector<std::size_t> order(v.size());
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
        std::vector<double> r(v.size());
        for (std::size_t i = 0; i < order.size(); ++i) r[order[i]] = static_cast<double>(i);
        return r;
    };
    const auto rx = ranks(x);
    const auto ry = ranks(y);
    const double n = static_cast<double>(x.size());
    double d2 = 0.0;
    for (std::size_t i = 0; i < rx.size(); ++i) d2 += (rx[i] - ry[i]) * (rx[i] - ry[i]);
    return 1.0 - 6.0 * d2 / (n * (n * n - 1.0));
}

/// How well the loss at resource `r` ranks configurations by their loss at `max_resource`: Spearman
/// correlation over `samples` random configurations of `space`.
[[nodiscard]] inline double rank_correlation(const SearchSpace& space, const SyntheticProblem& problem,
                                             std::uint64_t seed, Resource r, Resource max_resource,
                                             std::size_t samples = 2000) {
    std::vector<double> early;
    std::vector<double> final;
    for (std::size_t k = 0; k < samples; ++k) {
        std::vector<double> u(space.dimensions());
        for (std::size_t j = 0; j < u.size(); ++j)
            u[j] = detail::to_unit(detail::hash3(detail::splitmix64(~seed), k, j));  // not the trials' points
        const Curve c = problem.curve(space.decode(u));
        early.push_back(c.loss(r));
        final.push_back(c.loss(max_resource));
    }
    return spearman(early, final);
}

struct SimOptions {
    std::size_t workers = 4;
    Resource max_resource = 81;            ///< a loss reported at this step is a final value
    std::size_t max_trials = 0;            ///< StrategyContext::max_trials (0: the strategy's own end, or `budget`)
    Resource budget = 0;                   ///< stop once this many units are spent; 0: run until every worker retired
    std::uint64_t seed = 0;                ///< StrategyContext::seed
    std::uint64_t max_units = 50'000'000;  ///< guard against a strategy that never answers Done
    /// A resumed trial continues after resume_from (its trainer kept a checkpoint); false: it
    /// trains again from unit 1 and reports every step again, as a trainer that keeps none does.
    bool checkpoints = true;
    /// Simulated seconds every run (a new trial's or a resumed one's) spends before its first unit:
    /// starting the trainer, loading data, building the model. Counted as busy time, not as units.
    double setup_seconds = 0.0;
};

/// The best final value improved: at this resource spent and simulated time.
struct Incumbent {
    Resource spent = 0;
    double time = 0.0;
    double loss = 0.0;
};

struct SimResult {
    std::size_t workers = 0;
    std::size_t trials = 0;              ///< new trials started
    std::size_t resumes = 0;             ///< paused trials resumed
    std::size_t waits = 0;               ///< Wait answers to ask()
    Resource spent = 0;                  ///< resource units run, over all trials
    double wall = 0.0;                   ///< simulated seconds until the run ended
    double busy = 0.0;                   ///< worker-seconds spent running trials
    /// Simulated time of the last Run answer (new or resumed trial): after it the scheduler had
    /// nothing more to hand out, so workers idle from then on wait for the run's tail, not for it.
    double last_handout = 0.0;
    double busy_before_last_handout = 0.0;  ///< the part of `busy` before last_handout
    /// The most worker-seconds any one trial ran, over all its runs: its runs cannot overlap, so
    /// no schedule of the same work ends sooner than this.
    double longest_trial = 0.0;
    bool retired = false;                ///< every worker got Done (false: cut by the budget, stalled or guarded)
    std::vector<Incumbent> incumbents;   ///< each improvement of the best loss reached at max_resource
    std::vector<std::string> anomalies;  ///< breaches of the Strategy contract seen

    [[nodiscard]] double best() const noexcept {
        return incumbents.empty() ? std::numeric_limits<double>::infinity() : incumbents.back().loss;
    }
    [[nodiscard]] double utilisation() const noexcept {
        return wall > 0.0 ? busy / (static_cast<double>(workers) * wall) : 0.0;
    }
    /// Utilisation while work exists: busy / (P x time) up to the last Run answer. What the
    /// scheduler itself leaves idle (Wait answers at a barrier or before a promotion) counts
    /// against it; the tail of a run with a fixed number of trials (the last trials running while
    /// nothing is left to start) does not. 1 when everything was handed out at time 0.
    [[nodiscard]] double utilisation_while_work() const noexcept {
        return last_handout > 0.0 ? busy_before_last_handout / (static_cast<double>(workers) * last_handout) : 1.0;
    }
    /// The highest utilisation any schedule of the same work could have on `workers`: the wall
    /// is at least busy / P (every worker busy throughout) and at least longest_trial.
    [[nodiscard]] double utilisation_ceiling() const noexcept {
        const double bound = std::max(busy / static_cast<double>(workers), longest_trial);
        return bound > 0.0 ? busy / (static_cast<double>(workers) * bound) : 0.0;
    }
    /// The first incumbent with loss <= target, or nullptr.
    [[nodiscard]] const Incumbent* first_reaching(double target) const noexcept {
        for (const auto& i : incumbents)
            if (i.loss <= target) return &i;
        return nullptr;
    }
};

/// Runs `strategy` on `problem` (see the top of simulator.hpp).
template <class S, class Problem = SyntheticProblem>  // S: a Scheduler, or AnyStrategy
class Simulator {
public:
    Simulator(S& strategy, const SearchSpace& space, const Problem& problem, SimOptions options)
        : strategy_(strategy), space_(space), problem_(problem), options_(options) {}

    [[nodiscard]] SimResult run() {
        result_ = SimResult{};
        result_.workers = options_.workers;
        workers_.assign(options_.workers, Worker{});
        trials_.clear();
        segments_.clear();
        events_ = {};
        seq_ = 0;
        clock_ = 0.0;
        strategy_.start(space_, StrategyContext{options_.seed, options_.max_trials});
        assign();
        bool cut = false;
        while (!events_.empty() && !cut) {
            const Event e = events_.top();
            events_.pop();
            clock_ = e.time;
            cut = unit_done(e.worker);
        }
        result_.wall = clock_;
        for (auto& w : workers_)  // work in flight when the budget ran out
            if (w.state == State::Running) end_run(w);
        for (const auto& [id, t] : trials_) result_.longest_trial = std::max(result_.longest_trial, t.busy);
        for (const auto& [from, to] : segments_) {
            result_.busy += to - from;
            if (from < result_.last_handout)
                result_.busy_before_last_handout += std::min(to, result_.last_handout) - from;
        }
        result_.retired =
            std::all_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.state == State::Retired; });
        if (!cut && !result_.retired)
            note("stalled: ask() answers Wait and no trial is running (the run would wait forever)");
        return std::move(result_);
    }

private:
    using CurveOf = std::remove_cvref_t<decltype(std::declval<const Problem&>().curve(std::declval<const Config&>()))>;
    enum class State { Idle, Waiting, Running, Retired };
    struct Worker {
        State state = State::Idle;
        TrialId trial = 0;
        Resource step = 0;
        Resource budget = 0;
        double started = 0.0;
        Resource from = 0;  // the step its run started after: the first unit carries the set-up
    };
    struct TrialState {
        Config config;
        CurveOf curve;
        Resource reached = 0;
        bool running = false;
        bool stopped = false;  // report() said Stop, or a Stop record came while it was paused
        double busy = 0.0;     // worker-seconds over all its runs
    };
    struct Event {
        double time;
        std::uint64_t seq;
        std::size_t worker;
        bool operator>(const Event& o) const noexcept { return time != o.time ? time > o.time : seq > o.seq; }
    };

    template <class... Args>
    void note(fmt::format_string<Args...> f, Args&&... args) {
        if (result_.anomalies.size() < 20) result_.anomalies.push_back(fmt::format(f, std::forward<Args>(args)...));
    }

    // The records of the call just made; a Stop record for a paused trial ends it.
    std::vector<DecisionRecord> collect() {
        std::vector<DecisionRecord> records = strategy_.take_decisions();
        for (const auto& d : records)
            if (d.kind == DecisionRecord::Kind::Stop)
                if (auto it = trials_.find(d.trial); it != trials_.end() && !it->second.running)
                    it->second.stopped = true;
        return records;
    }
    [[nodiscard]] static bool has(const std::vector<DecisionRecord>& records, TrialId id, DecisionRecord::Kind kind) {
        return std::any_of(records.begin(), records.end(),
                           [&](const DecisionRecord& d) { return d.trial == id && d.kind == kind; });
    }

    void schedule(std::size_t w) {
        const Worker& worker = workers_[w];
        const double dt = trials_.at(worker.trial).curve.unit_seconds +
                          (worker.step == worker.from ? options_.setup_seconds : 0.0);
        events_.push(Event{clock_ + dt, seq_++, w});
    }

    // Asks for work for every idle worker, in worker order.
    void assign() {
        for (std::size_t w = 0; w < workers_.size(); ++w) {
            Worker& worker = workers_[w];
            if (worker.state != State::Idle) continue;
            Suggestion s = strategy_.ask();
            (void)collect();
            if (s.kind == Suggestion::Kind::Done) {
                worker.state = State::Retired;
            } else if (s.kind == Suggestion::Kind::Wait) {
                ++result_.waits;
                worker.state = State::Waiting;
            } else if (start_run(worker, s)) {
                schedule(w);
            }
        }
    }

    // Checks a Run suggestion against the contract and puts the worker on it; false when unusable.
    bool start_run(Worker& worker, const Suggestion& s) {
        auto it = trials_.find(s.trial);
        if (s.resume_from == 0) {
            if (it != trials_.end()) {
                note("trial {} handed out again as a new trial", s.trial);
                worker.state = State::Retired;
                return false;
            }
            it = trials_.emplace(s.trial, TrialState{s.config, problem_.curve(s.config), 0, false, false, 0.0}).first;
            ++result_.trials;
        } else {
            if (it == trials_.end()) {
                note("trial {} resumed from {} but never started", s.trial, s.resume_from);
                worker.state = State::Retired;
                return false;
            }
            TrialState& t = it->second;
            if (t.running) note("trial {} resumed while it is still running", s.trial);
            if (t.stopped) note("trial {} resumed after it was stopped", s.trial);
            if (s.resume_from != t.reached)
                note("trial {} resumed from {} but reached {}", s.trial, s.resume_from, t.reached);
            if (!(s.config == t.config)) note("trial {} resumed with another configuration", s.trial);
            ++result_.resumes;
        }
        if (s.budget <= s.resume_from || s.budget > options_.max_resource) {
            note("trial {}: budget {} with resume_from {} (max_resource {})", s.trial, s.budget, s.resume_from,
                 options_.max_resource);
            worker.state = State::Retired;
            return false;
        }
        it->second.running = true;
        const Resource from = options_.checkpoints ? s.resume_from : 0;
        worker = Worker{State::Running, s.trial, from, s.budget, clock_, from};
        result_.last_handout = clock_;
        return true;
    }

    // Worker `w` finished a unit: report it, then continue, or end the run and hand out more work.
    // Returns true when the budget is spent.
    bool unit_done(std::size_t w) {
        Worker& worker = workers_[w];
        TrialState& t = trials_.at(worker.trial);
        ++worker.step;
        ++result_.spent;
        t.reached = worker.step;
        const double loss = t.curve.loss(worker.step);
        IntermediateReport report{loss};
        report.seconds = clock_ - worker.started;  // this run's simulated time so far, as the Tuner measures it
        const Decision d = strategy_.report(worker.trial, worker.step, report);
        // A Stop comes with a Stop record, or (a trial held at a rung) with a Pause record at tell().
        const bool stop_recorded = has(collect(), worker.trial, DecisionRecord::Kind::Stop);
        if (worker.step == options_.max_resource && loss < result_.best())
            result_.incumbents.push_back(Incumbent{result_.spent, clock_, loss});
        if (options_.budget > 0 && result_.spent >= options_.budget) return true;
        if (result_.spent >= static_cast<Resource>(options_.max_units)) {
            note("no Done after {} resource units", result_.spent);
            return true;
        }
        if (d == Decision::Continue && worker.step < worker.budget) {
            schedule(w);
            return false;
        }
        t.running = false;
        t.stopped = d == Decision::Stop;
        end_run(worker);
        Outcome outcome = d == Decision::Stop ? Outcome::stopped(loss, worker.step) : Outcome::completed(loss, worker.step);
        outcome.seconds = clock_ - worker.started;  // the run's time, as the Tuner measures it
        strategy_.tell(worker.trial, outcome);
        if (has(collect(), worker.trial, DecisionRecord::Kind::Pause))
            t.stopped = false;  // paused, not over: it may be resumed
        else if (d == Decision::Stop && !stop_recorded)
            note("report({}, {}) answered Stop with neither a Stop record nor a Pause at tell()", worker.trial,
                 worker.step);
        worker.state = State::Idle;
        // A tell can unblock a barrier: the waiting workers ask again.
        for (auto& other : workers_)
            if (other.state == State::Waiting) other.state = State::Idle;
        assign();
        return false;
    }

    // A worker's run of its trial ends now: its busy time, summed at the end of run(), and the trial's.
    void end_run(const Worker& worker) {
        segments_.emplace_back(worker.started, clock_);
        trials_.at(worker.trial).busy += clock_ - worker.started;
    }

    S& strategy_;
    const SearchSpace& space_;
    const Problem& problem_;
    SimOptions options_;
    std::vector<Worker> workers_;
    std::unordered_map<TrialId, TrialState> trials_;
    std::vector<std::pair<double, double>> segments_;  // (start, end) of every run: SimResult's busy times
    std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
    std::uint64_t seq_ = 0;
    double clock_ = 0.0;
    SimResult result_;
};

/// Runs `strategy` on `problem` with options.workers simulated workers.
template <class S, class Problem>
[[nodiscard]] SimResult simulate(S& strategy, const SearchSpace& space, const Problem& problem,
                                 const SimOptions& options) {
    return Simulator<S, Problem>(strategy, space, problem, options).run();
}

}  // namespace hypertune::bench
