// SPDX-License-Identifier: MIT
// The Gaussian-process sampler with several objectives (ParEGO: a random weighting of the scaled
// objectives per suggestion) and with constraints: it runs through the Tuner, is deterministic for
// a seed, finds a better front than random search at a small budget, and keeps its suggestions
// in the feasible region once told of a constraint.
#include <hypertune/hypertune.hpp>
#include <hypertune/strategies/bayesian.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace ht = hypertune;

namespace {

// ZDT1 in 4 variables: f1 = x0, f2 = g (1 - sqrt(f1 / g)), g = 1 + 9 mean(x1..x3). The front is
// x1..x3 = 0, f2 = 1 - sqrt(f1).
ht::SearchSpace zdt_space() {
    ht::SearchSpace s;
    for (int i = 0; i < 4; ++i) s.add(ht::ContinuousParameter(fmt::format("x{}", i), 0.0, 1.0, ht::Scaling::Linear));
    return s;
}

ht::Metrics zdt1(const ht::Config& c) {
    const double f1 = c.get<double>("x0");
    const double g = 1.0 + 9.0 * (c.get<double>("x1") + c.get<double>("x2") + c.get<double>("x3")) / 3.0;
    return {{"f1", f1}, {"f2", g * (1.0 - std::sqrt(f1 / g))}};
}

ht::TunerOptions zdt_options(std::uint64_t seed, std::size_t jobs) {
    ht::TunerOptions o;
    o.objectives = {{"f1", ht::Direction::Minimize}, {"f2", ht::Direction::Minimize}};
    o.max_jobs = jobs;
    o.seed = seed;
    o.progress = ht::ProgressBar::Never;
    return o;
}

double median_of_runs(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

TEST_CASE("Bayesian with two objectives: deterministic for a seed, a spread front, sampler notes clean") {
    auto a = ht::Tuner(zdt_space(), ht::Bayesian(), zdt_options(3, 24)).fit(zdt1);
    auto b = ht::Tuner(zdt_space(), ht::Bayesian(), zdt_options(3, 24)).fit(zdt1);
    REQUIRE(a.trials().size() == 24);
    for (std::size_t i = 0; i < 24; ++i) CHECK(a.trials()[i].config == b.trials()[i].config);
    const auto front = a.pareto_front();
    REQUIRE(front.size() >= 3);
    // Both ends of the trade-off are represented: the weights vary from suggestion to suggestion.
    CHECK(front.front().values[0] < 0.3);
    CHECK(front.back().values[1] < front.front().values[1]);
    for (const auto& w : a.setup().warnings) CHECK(w.find("trial") == std::string::npos);
}

TEST_CASE("Bayesian with two objectives beats RandomSearch on ZDT1 (4-D), 40 evaluations, median of 5 seeds") {
    std::vector<double> bayes, random;
    const std::vector<double> reference{1.1, 11.0};
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
        bayes.push_back(ht::Tuner(zdt_space(), ht::Bayesian(), zdt_options(seed, 40)).fit(zdt1).hypervolume(reference));
        random.push_back(
            ht::Tuner(zdt_space(), ht::RandomSearch(), zdt_options(seed, 40)).fit(zdt1).hypervolume(reference));
    }
    MESSAGE("median hypervolume: Bayesian ", median_of_runs(bayes), ", RandomSearch ", median_of_runs(random), " (ideal about 11.76)");
    CHECK(median_of_runs(bayes) > median_of_runs(random));
}

TEST_CASE("Bayesian with a constraint steers its suggestions into the feasible region") {
    // The unconstrained minimum (0.2, 0.2) breaks x + y >= 1; the constrained one is (0.5, 0.5).
    ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0, ht::Scaling::Linear),
                          ht::ContinuousParameter("y", 0.0, 1.0, ht::Scaling::Linear)};
    auto objective = [](const ht::Config& c) {
        const double x = c.get<double>("x"), y = c.get<double>("y");
        return ht::Metrics{{"loss", (x - 0.2) * (x - 0.2) + (y - 0.2) * (y - 0.2)}, {"sum", x + y}};
    };
    auto feasible_after_design = [](const ht::Result& r, std::size_t design) {
        std::size_t feasible = 0, counted = 0;
        for (const auto& t : r.trials())
            if (t.id >= design) {
                ++counted;
                feasible += *r.metric(t, "sum") >= 1.0 ? 1 : 0;
            }
        return static_cast<double>(feasible) / static_cast<double>(counted);
    };
    std::vector<double> aware, blind, best;
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        ht::TunerOptions o;
        o.metric = "loss";
        o.constraints = {ht::Constraint::at_least("sum", 1.0)};
        o.max_jobs = 30;
        o.seed = seed;
        o.progress = ht::ProgressBar::Never;
        auto told = ht::Tuner(space, ht::Bayesian(), o).fit(objective);
        aware.push_back(feasible_after_design(told, 10));
        best.push_back(told.best().objective);
        // The same metrics without the constraint: the model chases the infeasible minimum.
        o.constraints = {ht::Constraint::at_least("sum", -1.0)};
        blind.push_back(feasible_after_design(ht::Tuner(space, ht::Bayesian(), o).fit(objective), 10));
    }
    MESSAGE("feasible share of the model's suggestions: told ", median_of_runs(aware), ", not told ",
            median_of_runs(blind), "; best feasible loss ", median_of_runs(best), " (optimum 0.18)");
    CHECK(median_of_runs(aware) >= 0.7);
    CHECK(median_of_runs(aware) > median_of_runs(blind));
    CHECK(median_of_runs(best) < 0.25);  // feasible points span 0.18 to 1.28
}
