// SPDX-License-Identifier: MIT
// hypertune's side of the multi-objective peer comparison (bench/peers/README.md). Prints one JSON
// line per (sampler, problem, budget, seed):
//   {"library":"hypertune","sampler":"Bayesian","problem":"zdt1","budget":50,"seed":3,"hypervolume":...,
//    "seconds":...,"cpu_seconds":...,"ms_per_trial_last20":...}
//
//   peer_multi_objective [--problems a,b] [--budgets 50,200] [--seeds N] [--first-seed S]
//                        [--samplers Random,Bayesian]
//   peer_multi_objective --evaluate N [--seed S] [--problems a,b]
//   peer_multi_objective --hypervolume   < JSON lines {"reference":[...], "points":[[...], ...]}
//   peer_multi_objective --list
//
// Every run is a Tuner with the problem's objectives (all Direction::Minimize),
// max_parallel_jobs = 1, the progress line off and max_jobs = the budget: one run per budget, so
// "hypervolume" is Result::hypervolume(reference) of exactly that run's completed trials (no
// prefix of a longer run). "seconds" and "cpu_seconds" cover the whole fit().
//
// "ms_per_trial_last20" is the sampler's CPU cost per trial over the last 20 trials: the objective
// reads the process CPU clock when it is entered and when it returns; between the return of trial
// j - 1 and the entry of trial j the single worker thread tells the strategy trial j - 1's
// objectives, does the Tuner's bookkeeping for it and asks the strategy for trial j (the main
// thread only waits). The mean of those gaps for the last 20 trials is the ask + tell cost per
// trial, with the Tuner's per-trial bookkeeping and without the (negligible) evaluation. This is
// what optuna_multi_objective.py measures around study.ask(), the suggest_float calls and
// study.tell().
//
// --evaluate N runs RandomSearch through the Tuner for N trials of each problem and prints every
// trial's variables and objectives, then Result::hypervolume of those trials, so that
// compare_multi_objective.py --check can compare mo_problems.py's values and Optuna's WFG.
#include "mo_problems.hpp"
#include "peer_cli.hpp"

#include <hypertune/hypertune.hpp>
#include <hypertune/strategies/bayesian.hpp>
#include <hypertune/strategies/random_search.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <exception>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace ht = hypertune;
using peers::MoProblem;

constexpr std::size_t timed_trials = 20;

using peers::cpu_now;
using peers::now;
using peers::print;
using peers::split;
using peers::split_sizes;

ht::TunerOptions options_for(const MoProblem& problem, std::size_t budget, std::uint64_t seed) {
    ht::TunerOptions o;
    for (const auto& name : problem.objective_names()) o.objectives.push_back({name, ht::Direction::Minimize});
    o.max_jobs = budget;
    o.max_parallel_jobs = 1;
    o.seed = seed;
    o.progress = ht::ProgressBar::Never;
    return o;
}

ht::Metrics metrics_of(const MoProblem& problem, const ht::Config& c) {
    const auto values = problem.values(peers::point_of(c));
    const auto names = problem.objective_names();
    ht::Metrics m;
    for (std::size_t k = 0; k < values.size(); ++k) m.set(names[k], values[k]);
    return m;
}

ht::AnyStrategy make_strategy(const std::string& sampler) {
    if (sampler == "Bayesian") return ht::Bayesian(ht::BayesianOptions{});
    return ht::RandomSearch{};
}

void run(const std::string& sampler, const MoProblem& problem, std::size_t budget, std::uint64_t seed) {
    std::vector<double> entered, returned;  // process CPU seconds, per trial
    entered.reserve(budget);
    returned.reserve(budget);
    std::vector<double> entered_wall, returned_wall;
    entered_wall.reserve(budget);
    returned_wall.reserve(budget);
    const double t0 = now(), c0 = cpu_now();
    ht::Tuner tuner(peers::mo_space(), make_strategy(sampler), options_for(problem, budget, seed));
    const ht::Result result = tuner.fit([&](const ht::Config& c) {
        entered.push_back(cpu_now());
        entered_wall.push_back(now());
        ht::Metrics m = metrics_of(problem, c);
        returned.push_back(cpu_now());
        returned_wall.push_back(now());
        return m;
    });
    const double seconds = now() - t0, cpu_seconds = cpu_now() - c0;
    const std::size_t n = entered.size();
    const std::size_t completed = result.count(ht::TrialStatus::Completed);
    if (completed != budget)
        throw std::runtime_error(sampler + " on " + problem.name + ": " + std::to_string(completed) + " of " +
                                 std::to_string(budget) + " trials completed (" + result.setup().stop_reason + ")");
    nlohmann::ordered_json j;
    j["library"] = "hypertune";
    j["sampler"] = sampler;
    j["problem"] = problem.name;
    j["budget"] = budget;
    j["seed"] = seed;
    j["hypervolume"] = result.hypervolume(problem.reference);
    j["seconds"] = seconds;
    j["cpu_seconds"] = cpu_seconds;  // less sensitive than wall time to other load
    if (n > timed_trials) {
        double cpu = 0.0, wall = 0.0;
        for (std::size_t k = n - timed_trials; k < n; ++k) {
            cpu += entered[k] - returned[k - 1];
            wall += entered_wall[k] - returned_wall[k - 1];
        }
        j["ms_per_trial_last20"] = 1e3 * cpu / static_cast<double>(timed_trials);
        j["wall_ms_per_trial_last20"] = 1e3 * wall / static_cast<double>(timed_trials);
    } else {
        j["ms_per_trial_last20"] = nullptr;
        j["wall_ms_per_trial_last20"] = nullptr;
    }
    j["front_size"] = result.pareto_front().size();
    print(j);
}

// RandomSearch through the Tuner: each trial's variables and objectives, then the hypervolume.
void evaluate(const std::vector<const MoProblem*>& problems, std::size_t points, std::uint64_t seed) {
    for (const MoProblem* p : problems) {
        ht::Tuner tuner(peers::mo_space(), ht::RandomSearch{}, options_for(*p, points, seed));
        const ht::Result result = tuner.fit([&](const ht::Config& c) { return metrics_of(*p, c); });
        for (const auto& t : result.trials()) {
            nlohmann::ordered_json j;
            j["problem"] = p->name;
            const auto x = peers::point_of(t.config);
            j["x"] = std::vector<double>(x.begin(), x.end());
            j["values"] = t.values;
            print(j);
        }
        nlohmann::ordered_json j;
        j["problem"] = p->name;
        j["trials"] = result.trials().size();
        j["reference"] = p->reference;
        j["front_size"] = result.pareto_front().size();
        j["hypervolume"] = result.hypervolume(p->reference);
        print(j);
    }
}

// ht::hypervolume (what Result::hypervolume applies to the front) of the point sets on stdin.
void hypervolumes() {
    for (std::string line; std::getline(std::cin, line);) {
        if (line.empty()) continue;
        const auto in = nlohmann::json::parse(line);
        const auto points = in.at("points").get<std::vector<std::vector<double>>>();
        const auto reference = in.at("reference").get<std::vector<double>>();
        nlohmann::ordered_json j;
        j["points"] = points.size();
        j["hypervolume"] = ht::hypervolume(points, reference);
        print(j);
    }
}

int usage(const char* message) {
    std::fprintf(stderr,
                 "%s\nusage: peer_multi_objective [--problems a,b] [--budgets 50,200] [--seeds N] [--first-seed S]\n"
                 "                            [--samplers Random,Bayesian]\n"
                 "       peer_multi_objective --evaluate N [--seed S] [--problems a,b]\n"
                 "       peer_multi_objective --hypervolume | --list\n",
                 message);
    return 2;
}

}  // namespace

int main(int argc, char** argv) try {
    const auto all = peers::mo_problems();
    std::vector<std::string> names;
    for (const auto& p : all) names.push_back(p.name);
    std::vector<std::size_t> budgets = {50, 200};
    std::vector<std::string> samplers = {"Random", "Bayesian"};
    std::size_t seeds = 10, points = 1000;
    std::uint64_t first_seed = 1, seed = 7;
    std::string mode = "run";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
            return argv[++i];
        };
        if (a == "--problems") names = split(value());
        else if (a == "--budgets") budgets = split_sizes(value());
        else if (a == "--seeds") seeds = std::stoul(value());
        else if (a == "--first-seed") first_seed = std::stoull(value());
        else if (a == "--samplers") samplers = split(value());
        else if (a == "--seed") seed = std::stoull(value());
        else if (a == "--evaluate") {
            mode = "evaluate";
            points = std::stoul(value());
        } else if (a == "--hypervolume" || a == "--list") mode = a.substr(2);
        else return usage(("unknown option " + a).c_str());
    }
    std::vector<const MoProblem*> problems;
    for (const auto& name : names) {
        const auto it = std::find_if(all.begin(), all.end(), [&](const auto& p) { return p.name == name; });
        if (it == all.end()) return usage(("unknown problem " + name).c_str());
        problems.push_back(&*it);
    }
    if (mode == "evaluate") {
        if (points == 0) return usage("--evaluate: give a positive number of points");
        evaluate(problems, points, seed);
        return 0;
    }
    if (mode == "hypervolume") {
        hypervolumes();
        return 0;
    }
    if (mode == "list") {
        for (const MoProblem* p : problems) {
            nlohmann::ordered_json j;
            j["problem"] = p->name;
            j["variables"] = peers::mo_variables;
            j["objectives"] = p->objectives;
            j["reference"] = p->reference;
            j["ideal_hypervolume"] = p->ideal_hypervolume;
            print(j);
        }
        return 0;
    }
    if (!peers::normalise_budgets(budgets)) return usage("--budgets: give positive budgets");
    for (const auto& sampler : samplers)
        if (sampler != "Bayesian" && sampler != "Random") return usage(("unknown sampler " + sampler).c_str());
    for (const MoProblem* p : problems)
        for (const auto& sampler : samplers)
            for (std::size_t budget : budgets)
                for (std::uint64_t s = first_seed; s < first_seed + seeds; ++s) run(sampler, *p, budget, s);
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "peer_multi_objective: %s\n", e.what());
    return 1;
}
