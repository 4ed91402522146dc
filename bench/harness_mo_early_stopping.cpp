// SPDX-License-Identifier: MIT
// Multi-objective early stopping (MO-ASHA) against random search and against single-objective ASHA,
// on a simulated two-objective problem with learning curves (no threads, no sleeping).
//   harness_mo_early_stopping [seeds=20] [trials=81] [workers=4] [max_resource=27]
//
// The problem, in 4 unit-cube variables u (ZDT1's shape, Zitzler et al. 2000): the first
// objective is a cost known from the first epoch, such as a model's latency, f1 = u0; the second
// is a validation error that falls as the trial trains, f2(r) = g (1 - sqrt(f1 / g)) + a exp(-r /
// tau), g = 1 + 3 (u1 + u2 + u3). The amplitude a in [0.5, 2.5] and the time constant tau
// (log-uniform in [1, R / 3]) come from a hash of the configuration, so early errors rank
// configurations only partly right, as real learning curves do.
//
// The run: `workers` simulated workers of equal speed, one unit per tick each, ask for work when
// idle; a trial reports both objectives after every unit. Each strategy gets `trials` new trials
// (its sampler's, random; seed = 1..seeds). Measured per strategy, medians [quartiles] over the
// seeds: the hypervolume (reference (1.1, 11), exact) of the trials that reached max_resource, and
// the resource units trained. Contenders: random search (every trial to max_resource); random
// search with the units each MO-ASHA type spent (as many full trials as they buy); MO-ASHA in both
// halving types and asynchronous Hyperband; and ASHA ranking the error alone (what a user would
// run without MO-ASHA), which keeps low-error trials and loses the cheap end of the front.
#include <hypertune/detail/random.hpp>
#include <hypertune/pareto.hpp>
#include <hypertune/strategies/asha.hpp>
#include <hypertune/strategies/hyperband.hpp>
#include <hypertune/strategies/random_search.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ht = hypertune;

namespace {

struct Setup {
    std::size_t seeds = 20;
    std::size_t trials = 81;
    std::size_t workers = 4;
    ht::Resource max_resource = 27;
};

// Both objectives of configuration `u` after `r` units.
std::vector<double> objectives_at(const ht::SearchSpace& space, const ht::Config& c, ht::Resource r,
                                  ht::Resource max_resource) {
    const std::vector<double> u = space.encode(c);
    const double f1 = u[0];
    const double g = 1.0 + 3.0 * (u[1] + u[2] + u[3]);
    const double error = g * (1.0 - std::sqrt(f1 / g));
    std::uint64_t h = 0x5eed;
    for (double x : u) h = ht::detail::hash3(h, static_cast<std::uint64_t>(x * 1e12), 17);
    const double a = 0.5 + 2.0 * ht::detail::to_unit(ht::detail::splitmix64(h));
    const double tau = std::exp(std::log(static_cast<double>(max_resource) / 3.0) *
                                ht::detail::to_unit(ht::detail::splitmix64(h + 1)));
    return {f1, error + a * std::exp(-static_cast<double>(r) / tau)};
}

struct Outcome {
    double hypervolume = 0.0;
    std::size_t units = 0;
};

// Runs `scheduler` for setup.trials new trials on `workers` workers; `ranked` objectives reach it
// in each report (1: the error alone).
Outcome simulate(ht::Scheduler& scheduler, const Setup& setup, std::uint64_t seed, std::size_t ranked,
                 std::size_t trials) {
    const ht::SearchSpace space{ht::ContinuousParameter("u0", 0.0, 1.0), ht::ContinuousParameter("u1", 0.0, 1.0),
                                ht::ContinuousParameter("u2", 0.0, 1.0), ht::ContinuousParameter("u3", 0.0, 1.0)};
    scheduler.start(space, {.seed = seed, .max_trials = trials, .objectives = ranked});
    struct Run {
        ht::TrialId id;
        ht::Config config;
        ht::Resource step;
        ht::Resource budget;
    };
    std::vector<std::optional<Run>> busy(setup.workers);
    std::vector<std::vector<double>> finals;
    Outcome out;
    bool done = false;
    for (;;) {
        for (auto& w : busy) {
            if (w || done) continue;
            ht::Suggestion s = scheduler.ask();
            if (s.kind == ht::Suggestion::Kind::Done) done = true;
            if (s.runs()) w = Run{s.trial, s.config, s.resume_from, s.budget};
        }
        if (std::none_of(busy.begin(), busy.end(), [](const auto& w) { return w.has_value(); })) break;
        for (auto& w : busy) {
            if (!w) continue;
            ++w->step;
            ++out.units;
            const std::vector<double> f = objectives_at(space, w->config, w->step, setup.max_resource);
            ht::IntermediateReport report{f[1], ranked > 1 ? f : std::vector<double>{}, true};
            const bool stop = scheduler.report(w->id, w->step, report) == ht::Decision::Stop;
            if (!stop && w->step < w->budget) continue;
            ht::Outcome o = stop ? ht::Outcome::stopped(f[1], w->step) : ht::Outcome::completed(f[1], w->step);
            if (ranked > 1) o.losses = f;
            scheduler.tell(w->id, o);
            if (!stop && w->step == setup.max_resource) finals.push_back(f);
            w.reset();
        }
    }
    out.hypervolume = ht::hypervolume(finals, {1.1, 11.0});
    return out;
}

struct Row {
    std::string name;
    std::vector<double> hv;
    std::vector<double> units;
};

double quantile(std::vector<double> x, double q) {
    std::sort(x.begin(), x.end());
    const double at = q * static_cast<double>(x.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(at));
    const auto hi = std::min(lo + 1, x.size() - 1);
    return x[lo] + (at - static_cast<double>(lo)) * (x[hi] - x[lo]);
}

}  // namespace

int main(int argc, char** argv) {
    Setup setup;
    if (argc > 1) setup.seeds = std::strtoul(argv[1], nullptr, 10);
    if (argc > 2) setup.trials = std::strtoul(argv[2], nullptr, 10);
    if (argc > 3) setup.workers = std::strtoul(argv[3], nullptr, 10);
    if (argc > 4) setup.max_resource = std::strtol(argv[4], nullptr, 10);
    const ht::Resource R = setup.max_resource;

    using Make = std::function<ht::AnyStrategy()>;
    struct Contender {
        std::string name;
        Make make;
        std::size_t ranked;
    };
    const std::vector<Contender> contenders{
        {"MO-ASHA, stop type",
         [&] { return ht::AnyStrategy(ht::ASHA({.max_resource = R, .type = ht::HalvingType::Stop})); }, 2},
        {"MO-ASHA, promotion type",
         [&] { return ht::AnyStrategy(ht::ASHA({.max_resource = R, .type = ht::HalvingType::Promotion})); }, 2},
        {"MO Hyperband (asynchronous, stop type, all brackets)",
         [&] { return ht::AnyStrategy(ht::Hyperband({.max_resource = R, .type = ht::HalvingType::Stop, .brackets = 0})); }, 2},
        {"ASHA on the error alone (stop type)",
         [&] { return ht::AnyStrategy(ht::ASHA({.max_resource = R, .type = ht::HalvingType::Stop})); }, 1},
        {"random search, every trial to R", [&] { return ht::AnyStrategy(ht::RandomSearch({.max_resource = R})); }, 2},
    };
    std::vector<Row> rows;
    for (const auto& c : contenders) {
        Row row{c.name, {}, {}};
        for (std::uint64_t seed = 1; seed <= setup.seeds; ++seed) {
            ht::AnyStrategy s = c.make();
            const Outcome o = simulate(s.get(), setup, seed, c.ranked, setup.trials);
            row.hv.push_back(o.hypervolume);
            row.units.push_back(static_cast<double>(o.units));
        }
        rows.push_back(std::move(row));
    }
    // Random search on the units each MO-ASHA type spent: as many full trials as those units buy.
    for (std::size_t k = 0; k < 2; ++k) {
        const double units = quantile(rows[k].units, 0.5);
        const auto equal = static_cast<std::size_t>(std::max(1.0, std::round(units / static_cast<double>(R))));
        Row same{fmt::format("random search, {} trials to R ({}'s units)", equal, rows[k].name), {}, {}};
        for (std::uint64_t seed = 1; seed <= setup.seeds; ++seed) {
            ht::RandomSearch random({.max_resource = R});
            const Outcome o = simulate(random, setup, seed, 2, equal);
            same.hv.push_back(o.hypervolume);
            same.units.push_back(static_cast<double>(o.units));
        }
        rows.push_back(std::move(same));
    }

    fmt::print("{} seeds, {} trials, {} workers, R = {}; hypervolume of the trials that reached R, reference "
               "(1.1, 11)\n\n",
               setup.seeds, setup.trials, setup.workers, R);
    fmt::print("| strategy | hypervolume, median [quartiles] | units trained, median |\n|---|---|---|\n");
    for (const Row& r : rows)
        fmt::print("| {} | {:.3f} [{:.3f}, {:.3f}] | {:.0f} |\n", r.name, quantile(r.hv, 0.5), quantile(r.hv, 0.25),
                   quantile(r.hv, 0.75), quantile(r.units, 0.5));
    return 0;
}
