// SPDX-License-Identifier: MIT
// hypertune's side of the peer comparison (bench/peers/README.md). Prints one JSON line per
// (sampler, function, budget, seed):
//   {"library":"hypertune","sampler":"Bayesian","function":"branin","budget":50,"seed":3,"regret":...,
//    "bound_fraction":...,"seconds":...,"cpu_seconds":...}
// bound_fraction: the share of the first `budget` trials with a parameter on a bound of its range
// (peers::on_bound).
//
//   peer_functions [--functions a,b] [--budgets 50,200] [--seeds N] [--first-seed S]
//                  [--samplers Bayesian,Random] [--candidates N] [--no-trust-region]
//                  [--refine | --no-refine] [--design-margin M] [--initial-points N] [--no-centre-first]
//                  [--no-active-direction] [--random-proposals P] [--portfolio] [--discrete-end-margin M]
//   peer_functions --overhead [--trials 100,200,1000] [--timed 20] [--no-trust-region] [--refine | --no-refine]
//   peer_functions --evaluate   < JSON lines {"function":..., "params":{...}, "seed":s, "index":i}
//   peer_functions --list
//
// The strategy is driven directly through ask/tell, one trial at a time (as a Tuner with
// max_parallel_jobs = 1 would, without its thread and bookkeeping), so "seconds" is the
// strategy's own cost plus the (negligible) function evaluations.
//
// Each budget is a run of its own, with that budget as the strategy's max_trials: the GP sampler
// sizes its initial design by it (an eighth of the budget at most), so the first 50 trials of a
// 200-trial run are not those of a 50-trial run. "seconds" is the time of the whole run.
#include "../xgboost_space.hpp"
#include "function_runs.hpp"

#include <hypertune/json.hpp>  // SearchSpace::from_json (--evaluate)
#include <hypertune/strategies/bayesian.hpp>
#include <hypertune/strategies/random_search.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <exception>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace {

namespace ht = hypertune;
using peers::TestFunction;

using peers::cpu_now;
using peers::now;
using peers::print;
using peers::split_sizes;

// One sequential run of `budget` trials; a JSON line at its end.
template <class S>
void run_to(S strategy, const std::string& sampler, const TestFunction& fn, std::size_t budget, std::uint64_t seed) {
    const std::vector<std::size_t> budgets{budget};  // the recorder keeps a reference
    peers::Recorder record("hypertune", sampler, fn, budgets, seed);
    strategy.start(fn.space, {seed, budget});
    // How long the first trust region lived: the evaluations before its restart (null: never).
    bool restarted = false;
    if constexpr (std::is_same_v<S, ht::Bayesian>) record.set_field("first_restart", nullptr);
    while (!record.done()) {
        if constexpr (std::is_same_v<S, ht::Bayesian>) {
            if (!restarted && strategy.trust_region_restarts() > 0) {
                record.set_field("first_restart", record.evaluations());
                restarted = true;
            }
        }
        auto s = strategy.ask();
        if (!s.runs()) throw std::runtime_error("the strategy stopped before the budget");
        strategy.tell(s.trial, ht::Outcome::completed(record.evaluate(s.config), 1));
    }
}

// A run of its own for each budget, in increasing order.
template <class S>
void run(const S& strategy, const std::string& sampler, const TestFunction& fn, const std::vector<std::size_t>& budgets,
         std::uint64_t seed) {
    for (std::size_t budget : budgets) run_to(strategy, sampler, fn, budget, seed);
}

// Mean ask + tell time of `timed` trials after each count of completed trials, in one run.
void overhead(const std::vector<std::size_t>& counts, std::size_t timed, const ht::BayesianOptions& options) {
    const auto space = ht::bench::xgboost_space();
    ht::Bayesian strategy(options);
    strategy.start(space, {42, 0});
    std::size_t done = 0;
    auto step = [&] {
        auto s = strategy.ask();
        strategy.tell(s.trial, ht::Outcome::completed(ht::bench::synthetic_loss(s.config), 1));
        ++done;
    };
    for (std::size_t n : counts) {
        while (done < n) step();
        const double w0 = now(), c0 = cpu_now();
        // The trials that refitted the model's hyperparameters apart from the others: a refit costs
        // several suggestions, so the mean depends on how many fall in the window.
        double refit_cpu = 0.0;
        std::size_t refits = 0;
        for (std::size_t i = 0; i < timed; ++i) {
            const std::size_t fits = strategy.model_fits();
            const double t0 = cpu_now();
            step();
            if (strategy.model_fits() > fits) {
                refit_cpu += cpu_now() - t0;
                ++refits;
            }
        }
        const double wall = now() - w0, cpu = cpu_now() - c0;
        nlohmann::ordered_json j;
        j["library"] = "hypertune";
        j["sampler"] = "Bayesian";
        j["space"] = "xgboost7";
        j["trials"] = n;
        j["timed"] = timed;
        j["ms_per_trial"] = 1e3 * wall / static_cast<double>(timed);
        j["cpu_ms_per_trial"] = 1e3 * cpu / static_cast<double>(timed);
        j["refits"] = refits;
        j["cpu_ms_per_refit"] = refits > 0 ? 1e3 * refit_cpu / static_cast<double>(refits) : 0.0;
        j["cpu_ms_per_other"] = refits < timed ? 1e3 * (cpu - refit_cpu) / static_cast<double>(timed - refits) : 0.0;
        j["trust_region_restarts"] = strategy.trust_region_restarts();
        print(j);
    }
}

// Reads {"function", "params", "seed", "index"} lines; prints the noise-free and observed values.
void evaluate(const std::vector<TestFunction>& functions) {
    for (std::string line; std::getline(std::cin, line);) {
        if (line.empty()) continue;
        const auto in = nlohmann::json::parse(line);
        const auto name = in.at("function").get<std::string>();
        const auto it = std::find_if(functions.begin(), functions.end(), [&](const auto& f) { return f.name == name; });
        if (it == functions.end()) throw std::invalid_argument("unknown function " + name);
        const ht::Config c = it->space.from_json(in.at("params"));
        nlohmann::ordered_json j;
        j["function"] = name;
        j["value"] = it->value(c);
        j["observed"] = it->observe(c, in.value("seed", std::uint64_t{0}), in.value("index", std::uint64_t{0}));
        j["on_bound"] = peers::on_bound(c);
        print(j);
    }
}

int usage(const char* message) {
    std::fprintf(stderr,
                 "%s\nusage: peer_functions [--functions a,b] [--budgets 50,200] [--seeds N] [--first-seed S]\n"
                 "                      [--samplers Bayesian,Random] [--candidates N]\n"
                 "                      [--no-trust-region] [--refine | --no-refine] [--design-margin M] [--initial-points N]\n"
                 "                      [--no-centre-first] [--no-active-direction] [--random-proposals P] [--portfolio]\n"
                 "                      [--discrete-end-margin M]\n"
                 "       peer_functions --overhead [--trials 100,200,1000] [--timed 20] [--no-trust-region] [--refine | --no-refine]\n"
                 "       peer_functions --evaluate | --list\n",
                 message);
    return 2;
}

}  // namespace

int main(int argc, char** argv) try {
    const auto functions = peers::test_functions();
    peers::RunSelection selection = peers::default_selection(functions, {"Bayesian", "Random"});
    std::vector<std::size_t> counts = {100, 200, 1000};
    std::size_t timed = 20, candidates = ht::BayesianOptions{}.candidates, initial_points = 0;
    bool trust_region = true;
    std::optional<bool> refine;  // unset: the library's default
    bool centre_first = true;
    bool active_direction = true;
    double design_margin = ht::BayesianOptions{}.design_margin;
    double random_proposals = ht::BayesianOptions{}.random_proposals;
    bool portfolio = ht::BayesianOptions{}.portfolio;
    double discrete_end_margin = ht::BayesianOptions{}.discrete_end_margin;
    std::string mode = "run";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
            return argv[++i];
        };
        if (peers::read_selection_option(a, value, selection)) continue;
        if (a == "--candidates") candidates = std::stoul(value());
        else if (a == "--no-trust-region") trust_region = false;
        else if (a == "--refine") refine = true;
        else if (a == "--no-refine") refine = false;
        else if (a == "--no-centre-first") centre_first = false;
        else if (a == "--no-active-direction") active_direction = false;
        else if (a == "--design-margin") design_margin = std::stod(value());
        else if (a == "--random-proposals") random_proposals = std::stod(value());
        else if (a == "--portfolio") portfolio = true;
        else if (a == "--discrete-end-margin") discrete_end_margin = std::stod(value());
        else if (a == "--initial-points") initial_points = std::stoul(value());
        else if (a == "--trials") counts = split_sizes(value());
        else if (a == "--timed") timed = std::stoul(value());
        else if (a == "--overhead" || a == "--evaluate" || a == "--list") mode = a.substr(2);
        else return usage(("unknown option " + a).c_str());
    }
    const ht::BayesianOptions options{.initial_points = initial_points, .centre_first = centre_first,
                                      .design_margin = design_margin, .candidates = candidates, .refine = refine,
                                      .trust_region = trust_region, .active_direction = active_direction,
                                      .random_proposals = random_proposals, .portfolio = portfolio,
                                      .discrete_end_margin = discrete_end_margin};
    if (mode == "overhead") {
        std::sort(counts.begin(), counts.end());
        overhead(counts, timed, options);
        return 0;
    }
    if (mode == "evaluate") {
        evaluate(functions);
        return 0;
    }
    if (mode == "list") {
        peers::print_function_list(functions);
        return 0;
    }
    const std::string error = peers::for_each_run(
        functions, selection, {"Bayesian", "Random"},
        [&](const TestFunction& fn, const std::string& sampler, std::uint64_t seed) {
            if (sampler == "Bayesian") run(ht::Bayesian(options), sampler, fn, selection.budgets, seed);
            else run(ht::RandomSearch{}, sampler, fn, selection.budgets, seed);
        });
    return error.empty() ? 0 : usage(error.c_str());
} catch (const std::exception& e) {
    std::fprintf(stderr, "peer_functions: %s\n", e.what());
    return 1;
}
