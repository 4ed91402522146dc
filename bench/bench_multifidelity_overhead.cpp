// SPDX-License-Identifier: MIT
// Cost per decision of the multi-fidelity strategies on the 7-parameter XGBoost space, after n
// trials: report() (the rung decision after every resource unit) and ask() + tell() (a run handed
// out and ended), each followed by take_decisions() as the Tuner does. The strategy is driven as a
// runner would: `in_flight` trials run side by side, one resource unit each per round, on synthetic
// learning curves; a run ends at its budget or when report() says Stop, is told, and the freed slot
// asks again (after a Wait, only once another run has been told). Only strategy calls are timed
// (manual time). Counters, in seconds per call (350n = 350 ns):
//   report        per report()
//   ask_tell      per run: its ask() and its tell(), plus the asks that answered Wait or Done
//   per_decision  per call of either kind
//   per_trial     all of a trial's calls: the strategy's whole time over the n trials
// and, to explain them, reports_per_run and records_per_run (DecisionRecords taken: a Promote, Stop
// or Pause, each with a formatted reason, is what makes a call cost more than a lookup).
// Target: under 2 us per decision, flat from 1,000 to 10,000 trials.
// ModelBased<Hyperband> is measured apart, at 100 and 500 trials: a new trial's ask() fits a
// Gaussian process (milliseconds), which dwarfs everything else; per_trial is the figure to read.
// Its learning curves are drawn from the trial id, so the model has nothing to learn: only the cost
// counts here.
#include "xgboost_space.hpp"

#include <hypertune/detail/random.hpp>
#include <hypertune/strategies/asha.hpp>
#include <hypertune/strategies/hyperband.hpp>
#include <hypertune/strategies/model_based.hpp>

#include <benchmark/benchmark.h>

#include <array>
#include <chrono>
#include <cmath>

namespace ht = hypertune;

namespace {

constexpr std::size_t in_flight = 8;
constexpr ht::Resource max_resource = 81;

// A runner's slot: the trial it runs, with a synthetic learning curve drawn from the trial id
// (a resumed trial keeps its curve): loss(r) = final_loss + amplitude * exp(-r / tau).
struct Slot {
    enum class State { Idle, Running, Waiting, Retired };
    State state = State::Idle;
    ht::TrialId id = 0;
    ht::Resource step = 0;
    ht::Resource budget = 0;
    double final_loss = 0.0;
    double amplitude = 0.0;
    double tau = 1.0;
    double loss = 0.0;  // at `step`
    ht::Decision decision = ht::Decision::Continue;

    void take(const ht::Suggestion& s) {
        if (s.kind != ht::Suggestion::Kind::Run) {
            state = s.kind == ht::Suggestion::Kind::Wait ? State::Waiting : State::Retired;
            return;
        }
        auto u = [&](std::uint64_t k) { return ht::detail::to_unit(ht::detail::hash3(7, s.trial, k)); };
        state = State::Running;
        id = s.trial;
        step = s.resume_from;
        budget = s.budget;
        final_loss = 0.1 + 0.5 * u(0);
        amplitude = 0.1 + 0.4 * u(1);
        tau = std::exp(std::log(27.0) * u(2));
        decision = ht::Decision::Continue;
    }
    [[nodiscard]] double next_loss() const {
        return final_loss + amplitude * std::exp(-static_cast<double>(step + 1) / tau);
    }
    [[nodiscard]] bool run_over() const { return decision == ht::Decision::Stop || step >= budget; }
};

class Stopwatch {
public:
    void start() { t0_ = std::chrono::steady_clock::now(); }
    void stop() { seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }
    [[nodiscard]] double seconds() const { return seconds_; }

private:
    std::chrono::steady_clock::time_point t0_;
    double seconds_ = 0.0;
};

struct Cost {
    double report_seconds = 0.0;
    double ask_tell_seconds = 0.0;
    std::size_t reports = 0;
    std::size_t runs = 0;     // runs told
    std::size_t records = 0;  // decision records taken (each costs a formatted reason)

    Cost& operator+=(const Cost& o) {
        report_seconds += o.report_seconds;
        ask_tell_seconds += o.ask_tell_seconds;
        reports += o.reports;
        runs += o.runs;
        records += o.records;
        return *this;
    }
};

// Drives `s` through n trials and times its calls. False when the loop stalls (every slot waits and
// none runs).
template <class S>
bool drive(S& s, std::size_t n, Cost& cost) {
    s.start(ht::bench::xgboost_space(), {.seed = 1, .max_trials = n});
    std::array<Slot, in_flight> slots{};
    std::array<ht::Suggestion, in_flight> asked{};
    std::array<bool, in_flight> ends{};
    std::array<bool, in_flight> asks{};
    std::array<double, in_flight> next{};
    Stopwatch report_clock, ask_tell_clock;
    bool told = true;  // the first round asks for every slot
    for (;;) {
        // Decided before the clock starts, so that a round with nothing to tell or ask costs nothing.
        bool any_ask = false;
        for (std::size_t i = 0; i < in_flight; ++i) {
            ends[i] = slots[i].state == Slot::State::Running && slots[i].run_over();
            told = told || ends[i];
        }
        for (std::size_t i = 0; i < in_flight; ++i) {
            // a waiting slot asks again only once a run has been told
            const auto st = slots[i].state;
            asks[i] = ends[i] || st == Slot::State::Idle || (told && st == Slot::State::Waiting);
            any_ask = any_ask || asks[i];
        }
        if (any_ask) {
            ask_tell_clock.start();
            for (std::size_t i = 0; i < in_flight; ++i) {
                if (!ends[i]) continue;
                const Slot& slot = slots[i];
                s.tell(slot.id, slot.decision == ht::Decision::Stop ? ht::Outcome::stopped(slot.loss, slot.step)
                                                                    : ht::Outcome::completed(slot.loss, slot.step));
                cost.records += s.take_decisions().size();
                ++cost.runs;
            }
            for (std::size_t i = 0; i < in_flight; ++i) {
                if (!asks[i]) continue;
                asked[i] = s.ask();
                cost.records += s.take_decisions().size();
            }
            ask_tell_clock.stop();
        }

        std::size_t running = 0, waiting = 0;
        for (std::size_t i = 0; i < in_flight; ++i) {
            if (asks[i]) slots[i].take(asked[i]);
            running += static_cast<std::size_t>(slots[i].state == Slot::State::Running);
            waiting += static_cast<std::size_t>(slots[i].state == Slot::State::Waiting);
            next[i] = slots[i].next_loss();  // computed here so that the report phase times the strategy only
        }
        if (running == 0) {
            cost.report_seconds = report_clock.seconds();
            cost.ask_tell_seconds = ask_tell_clock.seconds();
            return waiting == 0;
        }
        told = false;

        report_clock.start();
        for (std::size_t i = 0; i < in_flight; ++i) {
            Slot& slot = slots[i];
            if (slot.state != Slot::State::Running) continue;
            ++slot.step;
            slot.loss = next[i];
            slot.decision = s.report(slot.id, slot.step, slot.loss);
            cost.records += s.take_decisions().size();
            ++cost.reports;
        }
        report_clock.stop();
    }
}

template <class S>
void measure(benchmark::State& state, const S& prototype) {
    const auto n = static_cast<std::size_t>(state.range(0));
    Cost total;
    for (auto _ : state) {
        S s = prototype;
        Cost one;
        if (!drive(s, n, one)) {
            state.SkipWithError("the strategy answered Wait with no trial running");
            return;
        }
        state.SetIterationTime(one.report_seconds + one.ask_tell_seconds);
        total += one;
    }
    const auto per = [](double seconds, std::size_t calls) { return seconds / static_cast<double>(calls); };
    state.counters["report"] = per(total.report_seconds, total.reports);
    state.counters["ask_tell"] = per(total.ask_tell_seconds, total.runs);
    state.counters["per_decision"] = benchmark::Counter(static_cast<double>(total.reports + total.runs),
                                                        benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.counters["per_trial"] = benchmark::Counter(static_cast<double>(n * state.iterations()),
                                                     benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.counters["reports_per_run"] = static_cast<double>(total.reports) / static_cast<double>(total.runs);
    state.counters["records_per_run"] = static_cast<double>(total.records) / static_cast<double>(total.runs);
}

void BM_HyperbandAsync(benchmark::State& state) {
    measure(state, ht::Hyperband({.max_resource = max_resource, .mode = ht::HyperbandMode::Asynchronous,
                                  .type = ht::HalvingType::Stop, .brackets = 0}));
}
void BM_HyperbandSync(benchmark::State& state) {
    measure(state, ht::Hyperband({.max_resource = max_resource, .mode = ht::HyperbandMode::Synchronous}));
}
void BM_ASHA(benchmark::State& state) {
    measure(state, ht::ASHA({.max_resource = max_resource, .type = ht::HalvingType::Stop}));
}
void BM_ASHAWait(benchmark::State& state) {
    measure(state, ht::ASHA({.max_resource = max_resource, .type = ht::HalvingType::Stop, .wait_for_peers = true}));
}
void BM_ASHAPromotion(benchmark::State& state) {
    measure(state, ht::ASHA({.max_resource = max_resource, .type = ht::HalvingType::Promotion,
                             .fill_idle_workers = false}));
}
void BM_ASHAPromotionFill(benchmark::State& state) {
    measure(state, ht::ASHA({.max_resource = max_resource, .type = ht::HalvingType::Promotion,
                             .fill_idle_workers = true}));
}
void BM_HyperbandPromotion(benchmark::State& state) {
    measure(state, ht::Hyperband({.max_resource = max_resource, .type = ht::HalvingType::Promotion,
                                  .fill_idle_workers = false, .brackets = 0}));
}
void BM_HyperbandDefault(benchmark::State& state) { measure(state, ht::Hyperband({.max_resource = max_resource})); }
// The default with noise_tolerance: every report is measured for the noise (a hash lookup and a
// heap insertion) and the tolerance moves the rungs' cut-offs.
void BM_HyperbandDefaultNoiseTolerance(benchmark::State& state) {
    measure(state, ht::Hyperband({.max_resource = max_resource, .noise_tolerance = 1.0}));
}
void BM_ModelBasedHyperband(benchmark::State& state) {
    // The stop type over all brackets, as README's figures for it were measured.
    measure(state, ht::ModelBasedHyperband({.max_resource = max_resource, .type = ht::HalvingType::Stop, .brackets = 0}));
}

}  // namespace

BENCHMARK(BM_HyperbandAsync)->Arg(1000)->Arg(10000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HyperbandSync)->Arg(1000)->Arg(10000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ASHA)->Arg(1000)->Arg(10000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ASHAWait)->Arg(1000)->Arg(10000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ASHAPromotion)->Arg(1000)->Arg(10000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ASHAPromotionFill)->Arg(1000)->Arg(10000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HyperbandPromotion)->Arg(1000)->Arg(10000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HyperbandDefault)->Arg(1000)->Arg(10000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HyperbandDefaultNoiseTolerance)->Arg(1000)->Arg(10000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ModelBasedHyperband)->Arg(100)->Arg(500)->UseManualTime()->Unit(benchmark::kMillisecond);
