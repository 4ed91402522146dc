// SPDX-License-Identifier: MIT
// The headline example: tune XGBoost (through its C API) with Hyperband on a real, hard binary task
// from Fashion-MNIST, T-shirt/top vs Shirt, with SageMaker AMT's XGBoost ranges and options
// (validation:auc maximised, min_resource 1, max_resource 30, 30 jobs). It first trains once with
// XGBoost's defaults, then tunes, and prints default vs tuned AUC and what the search cost.
//
//   xgboost_hyperband [data_dir] [--sync | --stop | --no-fill] [--parallel N] [--label-noise F] [--report]
//
// Hyperband runs with its defaults: asynchronous, the promotion type (a trial pauses at each rung
// and continues from its XGBoost checkpoint when promoted), idle workers filled once no new trial
// may start, the two most aggressive brackets. --stop runs the stop type instead (a trial runs on
// towards max_resource or is stopped at a rung), --sync the paper's synchronous brackets, all of
// them, --no-fill the promotion type with fill_idle_workers = false.
//
// One resource unit is 1/30 of the trial's own num_round, so a trial at budget b has trained
// ceil(b * num_round / 30) boosting rounds and a full budget trains exactly num_round rounds.
#include "xgboost/fashion_mnist.hpp"
#include "xgboost/xgb_trainer.hpp"

#include <hypertune/hypertune.hpp>
#include <hypertune/report.hpp>
#include <hypertune/strategies/hyperband.hpp>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <string_view>

namespace ht = hypertune;

namespace {

struct Args {
    std::string data_dir = HYPERTUNE_FASHION_MNIST_DIR;
    bool synchronous = false;
    bool stop_type = false;
    bool no_fill = false;
    std::size_t parallel = 2;  // two cores here: two trials at a time, one XGBoost thread each
    double label_noise = 0.0;
    bool report = false;  // also write report.html
};

Args parse(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw std::invalid_argument(std::string(arg) + " needs a value");
            return argv[++i];
        };
        if (arg == "--sync") a.synchronous = true;
        else if (arg == "--stop") a.stop_type = true;
        else if (arg == "--no-fill") a.no_fill = true;
        else if (arg == "--parallel") a.parallel = std::stoul(value());
        else if (arg == "--label-noise") a.label_noise = std::stod(value());
        else if (arg == "--report") a.report = true;
        else if (arg.starts_with("--")) throw std::invalid_argument("unknown option " + std::string(arg));
        else a.data_dir = arg;
    }
    if (a.synchronous && a.stop_type) throw std::invalid_argument("--stop is for the asynchronous mode, not --sync");
    if (a.no_fill && (a.synchronous || a.stop_type))
        throw std::invalid_argument("--no-fill is for the asynchronous promotion type, not --sync or --stop");
    return a;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) try {
    const Args args = parse(argc, argv);
    // Under ctest a smaller task keeps the suite fast; the demo runs the full one.
    const bool quick = std::getenv("HYPERTUNE_CTEST") != nullptr;
    const std::size_t train_rows = quick ? 1000 : 4000, jobs = quick ? 10 : 30;
    constexpr int max_resource = 30;

    auto data = fashion_mnist::load_shirt_vs_tshirt(train_rows, 2000, /*pool=*/true, /*seed=*/1, args.data_dir);
    if (args.label_noise > 0) fashion_mnist::add_label_noise(data.train, args.label_noise, 2);
    fmt::print("Fashion-MNIST, T-shirt/top vs Shirt: {} training rows, {} validation rows, {} features "
               "(2x2-pooled pixels){}\n",
               data.train.rows, data.valid.rows, data.train.cols,
               args.label_noise > 0 ? fmt::format(", {:.0f}% of training labels flipped", 100 * args.label_noise) : "");
    const xgb::XgbTrainer trainer(std::move(data.train), std::move(data.valid), max_resource);

    auto t0 = std::chrono::steady_clock::now();
    const double default_auc = trainer.train(xgb::XgbParams{}, max_resource);
    const double default_seconds = seconds_since(t0);
    fmt::print("XGBoost defaults (eta 0.3, max_depth 6, 100 rounds): validation AUC {:.4f} in {:.1f}s\n\n", default_auc,
               default_seconds);

    ht::SearchSpace space;
    auto num_round = space.add(ht::IntegerParameter("num_round", 100, 200));
    auto eta = space.add(ht::ContinuousParameter("eta", 0.0, 1.0));
    auto min_child_weight = space.add(ht::ContinuousParameter("min_child_weight", 1.0, 10.0));
    auto alpha = space.add(ht::ContinuousParameter("alpha", 0.0, 2.0));
    auto max_depth = space.add(ht::IntegerParameter("max_depth", 1, 10));
    auto colsample_bylevel = space.add(ht::ContinuousParameter("colsample_bylevel", 0.0, 1.0));
    auto colsample_bytree = space.add(ht::ContinuousParameter("colsample_bytree", 0.0, 1.0));

    ht::Tuner tuner(space,
                    ht::Hyperband({.min_resource = 1, .max_resource = max_resource, .eta = 3,
                                   .mode = args.synchronous ? ht::HyperbandMode::Synchronous
                                                            : ht::HyperbandMode::Asynchronous,
                                   .type = args.stop_type ? ht::HalvingType::Stop : ht::HalvingType::Promotion,
                                   .fill_idle_workers = args.no_fill ? std::optional(false) : std::nullopt}),
                    {.metric = "validation:auc", .direction = ht::Direction::Maximize, .max_jobs = jobs,
                     .max_parallel_jobs = args.parallel, .seed = 42, .instances_per_trial = 3});

    ht::Result result = tuner.fit([&](const ht::Config& cfg, ht::Trial& trial) {
        xgb::XgbParams p{.eta = cfg[eta], .max_depth = cfg[max_depth], .min_child_weight = cfg[min_child_weight],
                         .alpha = cfg[alpha], .colsample_bylevel = cfg[colsample_bylevel],
                         .colsample_bytree = cfg[colsample_bytree], .num_round = cfg[num_round]};
        // A promoted trial continues its own model instead of starting over.
        auto run = trial.checkpoint() ? trainer.resume(p, std::span(trial.checkpoint()->data(), trial.checkpoint()->size()))
                                      : trainer.start(p);
        double auc = run.advance_to(static_cast<int>(trial.budget()), [&](int block, double value) {
            trial.report(block, value);
            return !trial.should_stop();
        });
        auto bytes = run.checkpoint();
        trial.save_checkpoint(std::string(bytes.begin(), bytes.end()));
        return auc;
    });

    fmt::print("{}\n", result.summary());
    const auto& best = result.best();
    const auto cost = result.cost();
    double mean_elapsed = cost.busy_seconds / static_cast<double>(result.trials().size());
    fmt::print("validation AUC: XGBoost defaults {:.4f}, tuned {:.4f} (trial {}, {:+.4f})\n", default_auc,
               best.objective, best.id, best.objective - default_auc);
    fmt::print("mean trial elapsed time: {:.2f}s over {} trials ({} completed, {} stopped early)\n", mean_elapsed,
               result.trials().size(), result.count(ht::TrialStatus::Completed), result.count(ht::TrialStatus::Stopped));
    fmt::print("billable time (a cost model: elapsed x 3 instances, as AMT bills three-instance jobs): {:.1f}s with "
               "Hyperband vs {:.1f}s estimated without early stopping ({:.0f}% of it)\n",
               cost.billable_seconds, cost.billable_seconds_without_early_stopping,
               100 * cost.billable_seconds / cost.billable_seconds_without_early_stopping);
    fmt::print("wall time: {:.1f}s on {} parallel jobs vs {:.1f}s sequential (utilisation {:.0f}%)\n", cost.wall_seconds,
               args.parallel, cost.sequential_seconds, 100 * cost.utilisation);
    result.to_csv("trials.csv");
    fmt::print("wrote trials.csv\n");
    if (args.report) {
        ht::write_report(result, "report.html");
        fmt::print("wrote report.html\n");
    }
    return 0;
} catch (const std::exception& e) {
    fmt::print(stderr, "xgboost_hyperband: {}\n", e.what());
    return 1;
}
