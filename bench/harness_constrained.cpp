// SPDX-License-Identifier: MIT
// Constrained Bayesian optimisation: the Gaussian-process sampler with a model per constraint
// (constrained EI, the default) against the same sampler entering an infeasible trial at the
// worst loss (BayesianOptions::model_constraints = false, what it did before constraint models)
// and random search, side by side in one run, through the Tuner (one objective, constraints).
//   harness_constrained [seeds=10] [budgets=30,60] [problems=gardner,gramacy,branin_disc,hartmann6_sum]
//
// The problems (all minimised, every constraint "c_j <= 0"):
// - gardner: Gardner et al. 2014, f = cos(2x) cos(y) + sin(x), c = cos(x + y) - 0.5, [0, 6]^2.
// - gramacy: Gramacy et al. 2016, f = x1 + x2, c1 = 1.5 - x1 - 2 x2 - 0.5 sin(2 pi (x1^2 - 2 x2)),
//   c2 = x1^2 + x2^2 - 1.5, [0, 1]^2: a thin, disconnected feasible region.
// - branin_disc: Branin on [-5, 10] x [0, 15] with (x1 - 2.5)^2 + (x2 - 7.5)^2 <= 50 (Gardner et
//   al. 2014): two of Branin's three minima are cut off.
// - hartmann6_sum: Hartmann 6-D with sum(x) <= 2 (8% of the cube); its unconstrained minimum has
//   sum 2.07, so the constraint is active.
// Measured per run: the best feasible value (regret against a dense grid's best for the 2-D
// problems, see grid_optimum; the value itself for hartmann6_sum), the first feasible trial, the share of feasible
// trials after the first 10, and the process CPU time per trial. Printed: medians over the seeds,
// and in how many seeds any trial was feasible.
#include "statistics.hpp"
#include <hypertune/hypertune.hpp>
#include <hypertune/strategies/bayesian.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <functional>
#include <limits>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

namespace ht = hypertune;

namespace {

using hypertune::bench::median;

struct Problem {
    std::string name;
    std::vector<std::pair<double, double>> box;
    std::size_t constraints;
    // the objective, then each constraint's value (<= 0 when met)
    std::function<std::vector<double>(const std::vector<double>&)> evaluate;
    bool grid_optimum;  // 2-D: regret against a dense grid's best feasible value
};

double branin(double x1, double x2) {
    const double pi = std::numbers::pi;
    const double b = 5.1 / (4.0 * pi * pi), c = 5.0 / pi, t = 1.0 / (8.0 * pi);
    return (x2 - b * x1 * x1 + c * x1 - 6.0) * (x2 - b * x1 * x1 + c * x1 - 6.0) + 10.0 * (1.0 - t) * std::cos(x1) + 10.0;
}

double hartmann6(const std::vector<double>& x) {
    static const double a[4][6] = {{10, 3, 17, 3.5, 1.7, 8}, {0.05, 10, 17, 0.1, 8, 14}, {3, 3.5, 1.7, 10, 17, 8},
                                   {17, 8, 0.05, 10, 0.1, 14}};
    static const double p[4][6] = {{0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886},
                                   {0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991},
                                   {0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650},
                                   {0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381}};
    static const double alpha[4] = {1.0, 1.2, 3.0, 3.2};
    double f = 0.0;
    for (int i = 0; i < 4; ++i) {
        double s = 0.0;
        for (int j = 0; j < 6; ++j) s += a[i][j] * (x[static_cast<std::size_t>(j)] - p[i][j]) * (x[static_cast<std::size_t>(j)] - p[i][j]);
        f -= alpha[i] * std::exp(-s);
    }
    return f;
}

std::vector<Problem> problems() {
    std::vector<Problem> out;
    out.push_back({"gardner", {{0.0, 6.0}, {0.0, 6.0}}, 1,
                   [](const std::vector<double>& x) {
                       return std::vector<double>{std::cos(2.0 * x[0]) * std::cos(x[1]) + std::sin(x[0]),
                                                  std::cos(x[0] + x[1]) - 0.5};
                   },
                   true});
    out.push_back({"gramacy", {{0.0, 1.0}, {0.0, 1.0}}, 2,
                   [](const std::vector<double>& x) {
                       const double c1 = 1.5 - x[0] - 2.0 * x[1] -
                                         0.5 * std::sin(2.0 * std::numbers::pi * (x[0] * x[0] - 2.0 * x[1]));
                       return std::vector<double>{x[0] + x[1], c1, x[0] * x[0] + x[1] * x[1] - 1.5};
                   },
                   true});
    out.push_back({"branin_disc", {{-5.0, 10.0}, {0.0, 15.0}}, 1,
                   [](const std::vector<double>& x) {
                       return std::vector<double>{branin(x[0], x[1]),
                                                  (x[0] - 2.5) * (x[0] - 2.5) + (x[1] - 7.5) * (x[1] - 7.5) - 50.0};
                   },
                   true});
    out.push_back({"hartmann6_sum", std::vector<std::pair<double, double>>(6, {0.0, 1.0}), 1,
                   [](const std::vector<double>& x) {
                       double sum = 0.0;
                       for (double v : x) sum += v;
                       return std::vector<double>{hartmann6(x), sum - 2.0};
                   },
                   false});
    return out;
}

// The best feasible value of a 2-D problem: a 1,501 x 1,501 grid, then three finer grids of
// 201 x 201 points over the 4 x 4 cells around the best point so far (the optimum often lies on a
// constraint's boundary, between grid points).
double grid_optimum(const Problem& p) {
    double best = std::numeric_limits<double>::infinity();
    std::vector<double> at = {0.5 * (p.box[0].first + p.box[0].second), 0.5 * (p.box[1].first + p.box[1].second)};
    std::vector<double> low = {p.box[0].first, p.box[1].first}, high = {p.box[0].second, p.box[1].second};
    int n = 1500;
    for (int round = 0; round < 4; ++round) {
        std::vector<double> x(2);
        for (int i = 0; i <= n; ++i)
            for (int j = 0; j <= n; ++j) {
                x[0] = low[0] + (high[0] - low[0]) * i / n;
                x[1] = low[1] + (high[1] - low[1]) * j / n;
                auto v = p.evaluate(x);
                if (v[0] < best && std::all_of(v.begin() + 1, v.end(), [](double c) { return c <= 0.0; })) {
                    best = v[0];
                    at = x;
                }
            }
        for (std::size_t k = 0; k < 2; ++k) {
            const double cell = (high[k] - low[k]) / n;
            low[k] = std::max(p.box[k].first, at[k] - 2.0 * cell);
            high[k] = std::min(p.box[k].second, at[k] + 2.0 * cell);
        }
        n = 200;
    }
    return best;
}

struct Run {
    double best = std::numeric_limits<double>::infinity();  // best feasible value; inf: none
    double first_feasible = 0.0;
    double feasible_share = 0.0;  // after the first 10 trials
    double ms_per_trial = 0.0;
};

Run run(const Problem& p, const std::string& strategy, std::size_t budget, std::uint64_t seed) {
    ht::SearchSpace space;
    for (std::size_t i = 0; i < p.box.size(); ++i)
        space.add(ht::ContinuousParameter(fmt::format("x{}", i), p.box[i].first, p.box[i].second, ht::Scaling::Linear));
    ht::TunerOptions o;
    o.metric = "f";
    for (std::size_t j = 0; j < p.constraints; ++j) o.constraints.push_back(ht::Constraint::at_most(fmt::format("c{}", j + 1), 0.0));
    o.max_jobs = budget;
    o.seed = seed;
    o.progress = ht::ProgressBar::Never;
    auto objective = [&](const ht::Config& c) {
        std::vector<double> x;
        for (std::size_t i = 0; i < p.box.size(); ++i) x.push_back(c.get<double>(fmt::format("x{}", i)));
        const auto v = p.evaluate(x);
        ht::Metrics m{{"f", v[0]}};
        for (std::size_t j = 0; j < p.constraints; ++j) m.set(fmt::format("c{}", j + 1), v[j + 1]);
        return m;
    };
    const std::clock_t began = std::clock();
    ht::Result r = strategy == "Random"       ? ht::Tuner(space, ht::RandomSearch(), o).fit(objective)
                   : strategy == "worst loss" ? ht::Tuner(space, ht::Bayesian({.model_constraints = false}), o).fit(objective)
                                              : ht::Tuner(space, ht::Bayesian(), o).fit(objective);
    Run out;
    out.ms_per_trial = 1000.0 * static_cast<double>(std::clock() - began) / CLOCKS_PER_SEC / static_cast<double>(budget);
    out.first_feasible = static_cast<double>(budget);
    std::size_t later = 0, later_feasible = 0;
    for (const auto& t : r.trials()) {
        if (t.feasible && t.has_objective()) {
            out.best = std::min(out.best, t.objective);
            out.first_feasible = std::min(out.first_feasible, static_cast<double>(t.id));
        }
        if (t.id >= 10) {
            ++later;
            later_feasible += t.feasible ? 1 : 0;
        }
    }
    out.feasible_share = later ? static_cast<double>(later_feasible) / static_cast<double>(later) : 0.0;
    return out;
}


std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string part; std::getline(in, part, ',');) out.push_back(part);
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    const std::size_t seeds = argc > 1 ? std::stoul(argv[1]) : 10;
    std::vector<std::size_t> budgets;
    for (const auto& b : split(argc > 2 ? argv[2] : "30,60")) budgets.push_back(std::stoul(b));
    const std::vector<std::string> wanted = split(argc > 3 ? argv[3] : "gardner,gramacy,branin_disc,hartmann6_sum");
    const std::vector<std::string> strategies = {"Random", "worst loss", "constraint models"};

    fmt::print("Constrained minimisation, {} seeds. Per strategy: median regret of the best feasible value (the value "
               "itself where no optimum is known) [seeds with a feasible trial]; first feasible trial; feasible share "
               "after 10 trials; CPU ms per trial.\n\n",
               seeds);
    fmt::print("| problem | budget | optimum | strategy | best feasible | seeds feasible | first feasible | feasible share | ms per trial |\n");
    fmt::print("|---|---|---|---|---|---|---|---|---|\n");
    for (const Problem& p : problems()) {
        if (std::find(wanted.begin(), wanted.end(), p.name) == wanted.end()) continue;
        const double optimum = p.grid_optimum ? grid_optimum(p) : std::nan("");
        for (std::size_t budget : budgets)
            for (const auto& strategy : strategies) {
                std::vector<double> best, first, share, ms;
                std::size_t feasible_seeds = 0;
                for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
                    const Run r = run(p, strategy, budget, seed);
                    feasible_seeds += std::isfinite(r.best) ? 1 : 0;
                    best.push_back(p.grid_optimum ? r.best - optimum : r.best);
                    first.push_back(r.first_feasible);
                    share.push_back(r.feasible_share);
                    ms.push_back(r.ms_per_trial);
                }
                fmt::print("| {} | {} | {} | {} | {:.4g} | {}/{} | {} | {:.2f} | {:.2f} |\n", p.name, budget,
                           p.grid_optimum ? fmt::format("{:.5g}", optimum) : std::string("-"),
                           strategy == "Random" ? "random search"
                                                : fmt::format("Bayesian, {}", strategy),
                           median(best), feasible_seeds, seeds, median(first), median(share), median(ms));
            }
    }
    return 0;
}
