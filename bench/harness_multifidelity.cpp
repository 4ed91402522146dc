// SPDX-License-Identifier: MIT
// Multi-fidelity strategies against random search on a simulated cluster (bench/simulator.hpp: P
// workers, a simulated clock, a synthetic problem with learning curves; no sleeping).
//   harness_multifidelity [seeds=10] [workers=4] [max_resource=81] [trials=200] [amplitude=1] [models=1]
// (`amplitude` scales the learning curves' amplitude: above 1, early losses rank configurations worse.
// models=0 leaves out the model-based contenders, which take most of the time: a Gaussian-process fit
// per proposal, tens of milliseconds each, against well under a second for all the others.)
//
// Medians over the seeds (strategy seed = problem seed = 1..seeds) of three comparisons:
// 1. Same resource. Random search runs `trials` trials to max_resource R and so spends
//    B = trials * R units. Each multi-fidelity strategy gets the same B: it starts as many trials as
//    fit (max_trials = 0) and the run is cut when B units are spent. Measured: the best final value
//    (loss at R) within B, and the resource and simulated time each strategy needed to first reach
//    random search's final best value. Equal resource, not equal trials, is the fair comparison here:
//    trial k has the same configuration in every strategy without a model, so with equal trials such
//    a strategy sees exactly random search's configurations and can at best tie its best value. The
//    model-based ones (ModelBased around Hyperband) replace about 2/3 of the configurations, once a
//    rung has enough results, by a Gaussian process's proposals; the rest are the same as the others'.
// 2. Same trials, run to the end: every strategy gets max_trials = trials and runs until it answers
//    Done. Measured: resource spent, simulated wall time and utilisation = busy worker-time /
//    (workers * wall), at `workers` and at 16 workers (4 when `workers` is 16). The tail (workers
//    idle once nothing is left to start) counts, as it does on a real cluster.
// 3. One bracket: max_trials = n(s_max) (81 for R = 81), so synchronous Hyperband runs its largest
//    bracket alone, i.e. synchronous successive halving with nothing to start while a rung waits at
//    its barrier (the case of the utilisation figures in ANCHORS.md). ASHA, for comparison, gets as
//    many trials (its rungs are that bracket's when R is a power of 3).
// Asynchronous Hyperband and ASHA run in both halving types (stop, and promotion: the default, a
// promoted trial continuing from its checkpoint), and the default asynchronous Hyperband once more
// with min_rung_results = 9 (comparisons 1 and 2); model-based asynchronous Hyperband in the stop
// type over all brackets and with its defaults (promotion type, two brackets).
// Then model-based against plain Hyperband in each mode, seed by seed, from comparison 1. A model has
// something to learn here: the final loss is a weighted quadratic bowl f over the unit cube (see
// simulator.hpp); only the learning curves' amplitude and time constant are per-configuration noise.
// The model-based runs cost real time (a Gaussian-process fit per proposal): it is printed too.
#include "statistics.hpp"
#include "simulator.hpp"
#include "xgboost_space.hpp"

#include <hypertune/strategies/asha.hpp>
#include <hypertune/strategies/hyperband.hpp>
#include <hypertune/strategies/model_based.hpp>
#include <hypertune/strategies/random_search.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace ht = hypertune;

namespace {

using hypertune::bench::median;

constexpr double inf = std::numeric_limits<double>::infinity();

struct Contender {
    std::string name;
    std::function<ht::AnyStrategy(ht::Resource)> make;  // from max_resource
    bool multi_fidelity = true;
};

// The order matters below: random search first, then async and sync Hyperband, ASHA, then the
// model-based Hyperbands.
std::vector<Contender> contenders(bool with_models) {
    // The asynchronous rows name their halving type; the synchronous mode always promotes.
    auto type_for = [](ht::HyperbandMode mode, ht::HalvingType type) {
        return mode == ht::HyperbandMode::Synchronous ? ht::HalvingType::Promotion : type;
    };
    auto hyperband = [type_for](ht::HyperbandMode mode, ht::HalvingType type = ht::HalvingType::Stop,
                                int brackets = 0) {
        return [mode, type = type_for(mode, type), brackets](ht::Resource r) {
            return ht::AnyStrategy(
                ht::Hyperband({.max_resource = r, .mode = mode, .type = type, .brackets = brackets}));
        };
    };
    auto asha = [](ht::HalvingType type) {
        return [type](ht::Resource r) { return ht::AnyStrategy(ht::ASHA({.max_resource = r, .type = type})); };
    };
    auto model_based = [type_for](ht::HyperbandMode mode, ht::HalvingType type = ht::HalvingType::Stop,
                                  std::optional<int> brackets = 0) {
        return [mode, type = type_for(mode, type), brackets](ht::Resource r) {
            return ht::AnyStrategy(
                ht::ModelBasedHyperband({.max_resource = r, .mode = mode, .type = type, .brackets = brackets}));
        };
    };
    std::vector<Contender> all = {
        {"Random search", [](ht::Resource r) { return ht::AnyStrategy(ht::RandomSearch({.max_resource = r})); }, false},
        {"Hyperband async, stop type, all brackets", hyperband(ht::HyperbandMode::Asynchronous)},
        {"Hyperband sync", hyperband(ht::HyperbandMode::Synchronous)},
        {"ASHA, stop type", asha(ht::HalvingType::Stop)},
        {"Hyperband async, promotion type, all brackets", hyperband(ht::HyperbandMode::Asynchronous, ht::HalvingType::Promotion)},
        {"ASHA, promotion type", asha(ht::HalvingType::Promotion)},
        {"Hyperband async, promotion type, 2 brackets (the default)",
         hyperband(ht::HyperbandMode::Asynchronous, ht::HalvingType::Promotion, 2)},
        // A rung promotes only from 9 results while new trials may start (min_rung_results).
        {"The default with min_rung_results = 9",
         [](ht::Resource r) { return ht::AnyStrategy(ht::Hyperband({.max_resource = r, .min_rung_results = 9})); }},
    };
    if (with_models) {
        all.push_back({"Model-based Hyperband async", model_based(ht::HyperbandMode::Asynchronous)});
        all.push_back({"Model-based Hyperband sync", model_based(ht::HyperbandMode::Synchronous)});
        all.push_back({"Model-based Hyperband async, promotion type, 2 brackets (the default)",
                       model_based(ht::HyperbandMode::Asynchronous, ht::HalvingType::Promotion, std::nullopt)});
    }
    return all;
}
enum : std::size_t {
    random_search,
    hyperband_async,
    hyperband_sync,
    asha,
    hyperband_promotion,
    asha_promotion,
    hyperband_two_brackets,
    hyperband_min_results,
    model_async,
    model_sync,
    model_default
};

// Median, +inf (not reached) counting as the largest value.

std::string or_not_reached(double x, const char* format) {
    return std::isfinite(x) ? fmt::format(fmt::runtime(format), x) : std::string("not reached");
}

// One value per seed for each named metric of one contender, and the contract breaches seen.
struct Samples {
    std::map<std::string, std::vector<double>, std::less<>> values;
    std::set<std::string> anomalies;

    [[nodiscard]] const std::vector<double>& of(std::string_view metric) const {
        static const std::vector<double> none;
        auto it = values.find(metric);
        return it == values.end() ? none : it->second;
    }
    void add(std::string_view metric, double x) { values[std::string(metric)].push_back(x); }
    [[nodiscard]] double median_of(std::string_view metric) const { return median(of(metric)); }
    [[nodiscard]] std::size_t reached(std::string_view metric) const {
        const auto& v = of(metric);
        return static_cast<std::size_t>(std::count_if(v.begin(), v.end(), [](double x) { return std::isfinite(x); }));
    }
};

// The harness's fixed inputs.
struct Setup {
    ht::SearchSpace space;
    ht::Resource max_resource;
    double amplitude;
};

// Simulates `c` on the problem of `seed` and keeps what broke the contract.
ht::bench::SimResult run(const Setup& setup, const Contender& c, std::uint64_t seed, std::size_t workers,
                         std::size_t max_trials, ht::Resource budget, Samples& s) {
    const ht::bench::SyntheticProblem problem(setup.space, seed, setup.max_resource, setup.amplitude);
    auto strategy = c.make(setup.max_resource);
    auto r = ht::bench::simulate(strategy, setup.space, problem,
                                 {.workers = workers,
                                  .max_resource = setup.max_resource,
                                  .max_trials = max_trials,
                                  .budget = budget,
                                  .seed = seed});
    const auto where = fmt::format("seed {}, {} workers, max_trials {}, budget {}", seed, workers, max_trials, budget);
    for (const auto& a : r.anomalies) s.anomalies.insert(fmt::format("{} ({})", a, where));
    if (budget == 0 && !r.retired) s.anomalies.insert(fmt::format("did not answer Done to every worker ({})", where));
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    const auto arg = [&](int i, unsigned long long fallback) {
        return argc > i ? std::strtoull(argv[i], nullptr, 10) : fallback;
    };
    const std::uint64_t seeds = arg(1, 10);
    const std::size_t workers = arg(2, 4);
    const Setup setup{ht::bench::xgboost_space(), static_cast<ht::Resource>(arg(3, 81)),
                      argc > 5 ? std::strtod(argv[5], nullptr) : 1.0};
    const std::size_t trials = arg(4, 200);
    const auto with_models = arg(6, 1);
    const std::size_t wide = workers == 16 ? 4 : 16;  // the second worker count, for utilisation
    if (seeds == 0 || workers == 0 || setup.max_resource < 2 || trials == 0 || !(setup.amplitude >= 0.0) ||
        with_models > 1) {
        fmt::print(stderr,
                   "usage: harness_multifidelity [seeds>=1] [workers>=1] [max_resource>=2] [trials>=1] "
                   "[amplitude>=0] [models=0|1]\n");
        return 2;
    }
    const ht::Resource R = setup.max_resource;
    const ht::Resource budget = static_cast<ht::Resource>(trials) * R;
    const ht::Hyperband schedule({.max_resource = R});
    const auto& largest = schedule.schedule().back();  // bracket s_max
    const std::size_t bracket = largest.rungs.front().configurations;
    std::vector<ht::Resource> rungs;  // where the largest bracket judges trials
    for (std::size_t i = 0; i + 1 < largest.rungs.size(); ++i) rungs.push_back(largest.rungs[i].resource);

    const auto strategies = contenders(with_models == 1);
    std::vector<Samples> samples(strategies.size());
    Samples problem_stats;

    for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
        const ht::bench::SyntheticProblem problem(setup.space, seed, R, setup.amplitude);
        for (auto r : rungs)
            problem_stats.add(fmt::format("{}", r), ht::bench::rank_correlation(setup.space, problem, seed, r, R));

        double target = inf;  // random search's final best
        for (std::size_t c = 0; c < strategies.size(); ++c) {
            Samples& s = samples[c];
            // 1. same resource
            const auto t0 = std::chrono::steady_clock::now();
            const auto r =
                run(setup, strategies[c], seed, workers, strategies[c].multi_fidelity ? 0 : trials, budget, s);
            s.add("real seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            if (c == random_search) target = r.best();
            const auto* reached = r.first_reaching(target);
            s.add("trials", static_cast<double>(r.trials));
            s.add("best", r.best());
            s.add("reach", reached ? static_cast<double>(reached->spent) : inf);
            s.add("reach time", reached ? reached->time : inf);
            s.add("utilisation", r.utilisation());
            // 2. same trials, to the end; 3. one bracket
            for (auto [name, max_trials] : {std::pair{"full", trials}, std::pair{"bracket", bracket}}) {
                if (name == std::string_view("bracket") && c != hyperband_sync && c != asha && c != asha_promotion)
                    continue;
                for (const std::size_t p : {workers, wide}) {
                    const auto full = run(setup, strategies[c], seed, p, max_trials, 0, s);
                    const auto key = fmt::format("{} {}", name, p == workers ? "P" : "wide");
                    s.add(key + " spent", static_cast<double>(full.spent));
                    s.add(key + " best", full.best());
                    s.add(key + " wall", full.wall);
                    s.add(key + " utilisation", full.utilisation());
                }
            }
        }
    }

    fmt::print("## Multi-fidelity strategies on a simulated cluster\n\n");
    fmt::print(
        "Synthetic problem: 7-D XGBoost space, loss(r) = f(x) + a(x) exp(-r / tau(x)), min f = {}, "
        "amplitude scale {}, resource 1..{}, eta 3, unit time lognormal (median 1 s). {} seeds, medians.\n",
        ht::bench::SyntheticProblem::offset, setup.amplitude, R, seeds);
    fmt::print("Spearman correlation of the loss at resource r with the loss at {}:", R);
    for (auto r : rungs) fmt::print(" r = {}: {:.2f};", r, problem_stats.median_of(fmt::format("{}", r)));
    fmt::print("\n\n");

    fmt::print("### 1. Same resource: B = {} trials x {} = {} units each, {} workers\n\n", trials, R, budget, workers);
    fmt::print(
        "| strategy | trials started | best final loss | resource to reach random search's best | "
        "fraction of B | seeds reaching it | simulated s to reach it | utilisation until B is spent |\n");
    fmt::print("|---|---|---|---|---|---|---|---|\n");
    for (std::size_t c = 0; c < strategies.size(); ++c) {
        const Samples& s = samples[c];
        const double reach = s.median_of("reach");
        fmt::print("| {} | {:.0f} | {:.4f} | {} | {} | {}/{} | {} | {:.1f}% |\n", strategies[c].name,
                   s.median_of("trials"), s.median_of("best"), or_not_reached(reach, "{:.0f}"),
                   or_not_reached(reach / static_cast<double>(budget), "{:.2f}"), s.reached("reach"), seeds,
                   or_not_reached(s.median_of("reach time"), "{:.0f}"), 100.0 * s.median_of("utilisation"));
    }

    // Tables 2 and 3 share their columns.
    const auto run_table = [&](std::string_view name, std::vector<std::size_t> rows) {
        const double random_spent = samples[random_search].median_of("full P spent");
        fmt::print(
            "| strategy | resource | vs random search | best final loss | wall s ({0} workers) | "
            "utilisation ({0}) | wall s ({1} workers) | utilisation ({1}) |\n",
            workers, wide);
        fmt::print("|---|---|---|---|---|---|---|---|\n");
        for (auto c : rows) {
            const Samples& s = samples[c];
            const auto m = [&](std::string_view p, std::string_view metric) {
                return s.median_of(fmt::format("{} {} {}", name, p, metric));
            };
            fmt::print("| {} | {:.0f} | {:.2f}x | {:.4f} | {:.0f} | {:.1f}% | {:.0f} | {:.1f}% |\n", strategies[c].name,
                       m("P", "spent"), m("P", "spent") / random_spent, m("P", "best"), m("P", "wall"),
                       100.0 * m("P", "utilisation"), m("wide", "wall"), 100.0 * m("wide", "utilisation"));
        }
    };
    fmt::print("\n### 2. Same trials: max_trials = {}, run until Done\n\n", trials);
    std::vector<std::size_t> full_rows = {random_search,       hyperband_async, hyperband_sync,        asha,
                                          hyperband_promotion, asha_promotion,  hyperband_two_brackets,
                                          hyperband_min_results};
    if (with_models == 1) full_rows.insert(full_rows.end(), {model_async, model_sync, model_default});
    run_table("full", full_rows);
    fmt::print("\n### 3. One bracket: max_trials = {} (synchronous Hyperband runs bracket s = {} alone)\n\n", bracket,
               schedule.s_max());
    run_table("bracket", {hyperband_sync, asha, asha_promotion});

    const auto pct = [&](std::size_t c, std::string_view metric) { return 100.0 * samples[c].median_of(metric); };
    fmt::print(
        "\nReading: given random search's resource, async Hyperband reached random search's best value in {}/{} "
        "seeds, needing a median {} of random search's resource (the claim: about 1/3 or less). Utilisation "
        "run to the end at {} workers: {:.0f}% async, {:.0f}% sync, {:.0f}% ASHA ({:.0f}%, {:.0f}%, {:.0f}% at "
        "{}); a lone synchronous bracket: {:.0f}% ({:.0f}% at {}).\n",
        samples[hyperband_async].reached("reach"), seeds,
        or_not_reached(samples[hyperband_async].median_of("reach") / static_cast<double>(budget), "{:.2f}"), workers,
        pct(hyperband_async, "full P utilisation"), pct(hyperband_sync, "full P utilisation"),
        pct(asha, "full P utilisation"), pct(hyperband_async, "full wide utilisation"),
        pct(hyperband_sync, "full wide utilisation"), pct(asha, "full wide utilisation"), wide,
        pct(hyperband_sync, "bracket P utilisation"), pct(hyperband_sync, "bracket wide utilisation"), wide);

    // Model-based against plain Hyperband, seed by seed, at the same resource (comparison 1).
    if (with_models == 1) {
        fmt::print("\n### Model-based against plain Hyperband at the same resource B = {}\n\n", budget);
        fmt::print(
            "| mode | best final loss, model-based | plain | seeds where model-based is lower / equal | resource "
            "to reach random search's best, model-based | plain | real s per run, model-based | plain |\n");
        fmt::print("|---|---|---|---|---|---|---|---|\n");
        for (auto [mode, model, plain] :
             {std::tuple{"async, stop type, all brackets", std::size_t{model_async}, std::size_t{hyperband_async}},
              std::tuple{"sync", std::size_t{model_sync}, std::size_t{hyperband_sync}},
              std::tuple{"async, the default", std::size_t{model_default}, std::size_t{hyperband_two_brackets}}}) {
            const auto& m = samples[model].of("best");
            const auto& p = samples[plain].of("best");
            std::size_t lower = 0, equal = 0;
            for (std::size_t i = 0; i < m.size() && i < p.size(); ++i) {
                lower += static_cast<std::size_t>(m[i] < p[i]);
                equal += static_cast<std::size_t>(m[i] == p[i]);
            }
            fmt::print("| {} | {:.4f} | {:.4f} | {} / {} of {} | {} | {} | {:.2f} | {:.3f} |\n", mode,
                       samples[model].median_of("best"), samples[plain].median_of("best"), lower, equal, m.size(),
                       or_not_reached(samples[model].median_of("reach"), "{:.0f}"),
                       or_not_reached(samples[plain].median_of("reach"), "{:.0f}"),
                       samples[model].median_of("real seconds"), samples[plain].median_of("real seconds"));
        }
    }

    bool any = false;
    for (std::size_t c = 0; c < strategies.size(); ++c)
        for (const auto& a : samples[c].anomalies) {
            if (!any) fmt::print("\nContract breaches seen by the simulator:\n");
            any = true;
            fmt::print("- {}: {}\n", strategies[c].name, a);
        }
    return any ? 1 : 0;
}
