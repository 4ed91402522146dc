// SPDX-License-Identifier: MIT
// Quickstart: tune a trainer written as a lambda, 4 trials at a time, stopping poor ones early.
#include <hypertune/hypertune.hpp>
#include <hypertune/report.hpp>
#include <hypertune/strategies/asha.hpp>

#include <chrono>
#include <cmath>
#include <string>
#include <string_view>
#include <thread>

namespace ht = hypertune;

int main(int argc, char** argv) {
    ht::SearchSpace space;
    auto lr = space.add(ht::ContinuousParameter("learning_rate", 1e-4, 1.0));  // Auto: log scale
    auto depth = space.add(ht::IntegerParameter("max_depth", 1, 10));
    auto booster = space.add(ht::CategoricalParameter("booster", {"gbtree", "dart"}));

    ht::Tuner tuner(space, ht::ASHA({.min_resource = 1, .max_resource = 27}),
                    {.metric = "validation:loss", .max_jobs = 60, .max_parallel_jobs = 4, .seed = 7});

    ht::Result result = tuner.fit([&](const ht::Config& cfg, ht::Trial& trial) {
        double loss = 1.0;
        // ASHA pauses trials at its rungs and promotes the best: a promoted trial goes on from its
        // checkpoint (resumed_from() > 0). This toy's state is its epoch; a real trainer saves its model.
        for (ht::Resource epoch = trial.resumed_from() + 1; epoch <= trial.budget() && !trial.should_stop(); ++epoch) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));  // stands in for an epoch of training
            double gap = std::abs(std::log10(cfg[lr]) + 2.0) + 0.05 * std::abs(cfg[depth] - 6);
            loss = gap + (cfg[booster] == "dart" ? 0.05 : 0.0) + 1.0 / static_cast<double>(epoch);
            trial.report(epoch, loss);                     // intermediate value: drives early stopping
            trial.save_checkpoint(std::to_string(epoch));  // what a promoted trial continues from
        }
        return loss;
    });

    fmt::print("{}", result.summary());
    result.to_csv("quickstart_trials.csv");
    if (argc > 1 && std::string_view(argv[1]) == "--report") ht::write_report(result, "quickstart_report.html");
}
