// SPDX-License-Identifier: MIT
// Writes the HTML report of a small synthetic ASHA run (a few failures, hostile parameter names) for
// the browser test: make_report <out.html>. With a second argument `multi-objective`, the report of
// a run with two objectives and a constraint instead (its Pareto front section); it prints the
// number of front members as "front members: N".
#include <hypertune/hypertune.hpp>
#include <hypertune/report.hpp>
#include <hypertune/strategies/asha.hpp>

#include <chrono>
#include <cmath>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>

namespace ht = hypertune;

namespace {

int multi_objective_report(const char* path) {
    ht::SearchSpace space;
    auto workers = space.add(ht::CategoricalParameter("workers", {"1", "2", "4"}));
    auto lr = space.add(ht::ContinuousParameter("learning_rate", 1e-3, 1.0));
    ht::TunerOptions o;
    o.objectives = {{"accuracy", ht::Direction::Maximize}, {"seconds", ht::Direction::Minimize}};
    o.constraints = {ht::Constraint::at_most("rank_seconds", 300.0)};
    o.max_jobs = 60;
    o.seed = 5;
    auto result = ht::Tuner(space, ht::RandomSearch(), o).fit([&](const ht::Config& c) {
        const double w = std::stod(c[workers]);
        const double miss = std::log10(c[lr] / (0.01 * w));
        const double seconds = 200.0 / w + 20.0 * std::abs(miss);
        return ht::Metrics{{"accuracy", 0.95 - 0.05 * miss * miss - 0.01 * w}, {"seconds", seconds},
                           {"rank_seconds", w * seconds}};
    });
    ht::write_report(result, path);
    fmt::print("{}front members: {}\nwrote {}\n", result.summary(), result.pareto_front().size(), path);
    return 0;
}

}  // namespace

int main(int argc, char** argv) try {
    if (argc == 3 && std::string(argv[2]) == "multi-objective") return multi_objective_report(argv[1]);
    if (argc != 2) throw std::invalid_argument("usage: make_report <out.html> [multi-objective]");
    ht::SearchSpace space;
    auto lr = space.add(ht::ContinuousParameter("learning_rate", 1e-4, 1.0));
    auto depth = space.add(ht::IntegerParameter("max_depth", 1, 10));
    auto momentum = space.add(ht::ContinuousParameter("momentum", 0.5, 0.999, ht::Scaling::ReverseLogarithmic));
    // Text that must reach the page as text, never as markup.
    auto kind = space.add(ht::CategoricalParameter("<script>alert(1)</script>", {"a&b\"c'", "<b>bold</b>", "plain"}));

    ht::Tuner tuner(space, ht::ASHA({.min_resource = 1, .max_resource = 27}),
                    {.metric = "validation:loss", .max_jobs = 80, .max_parallel_jobs = 3, .seed = 3,
                     .instances_per_trial = 2});
    auto result = tuner.fit([&](const ht::Config& cfg, ht::Trial& trial) {
        if (cfg[depth] == 10) throw std::runtime_error("diverged: <loss> is NaN & 'inf'");
        double gap = std::abs(std::log10(cfg[lr]) + 2.0) + 0.05 * std::abs(cfg[depth] - 6) +
                     (cfg[kind] == "plain" ? 0.0 : 0.1) + 0.2 * (1.0 - cfg[momentum]);
        double loss = 0.0;
        for (ht::Resource epoch = 1; epoch <= trial.budget(); ++epoch) {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));  // an epoch of "training"
            loss = gap + 1.0 / static_cast<double>(epoch);
            trial.report(epoch, loss);
            if (trial.should_stop()) break;
        }
        return loss;
    });
    ht::write_report(result, argv[1]);
    fmt::print("{}wrote {}\n", result.summary(), argv[1]);
    return 0;
} catch (const std::exception& e) {
    fmt::print(stderr, "make_report: {}\n", e.what());
    return 1;
}
