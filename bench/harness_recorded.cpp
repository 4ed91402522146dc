// SPDX-License-Identifier: MIT
// Multi-fidelity schedulers against random search on recorded learning curves: the curves of real
// trainings (bench/data/*.csv, written by bench/record_curves.cpp: XGBoost on Fashion-MNIST Pullover
// vs Coat, validation AUC per boosting round; the same on T-shirt/top vs Shirt with other
// configurations, a held-out set recorded after the defaults were chosen, and on Sneaker vs Ankle
// boot with others again, a second held-out set; softmax regression on Fashion-MNIST, validation
// accuracy per epoch; a one-hidden-layer network on Fashion-MNIST, a third held-out set; softmax and
// the network again with other configurations, a fourth and fifth, and a sixth and seventh; 81
// configurations x 30 units each) replayed on a simulated cluster
// (bench/simulator.hpp: P workers, a simulated clock, no training and no sleeping).
//   harness_recorded [data_dir=bench/data] [orders=20] [--unit-time] [--setup-units=N]
//
// --unit-time: every unit takes 1 simulated second, whatever its configuration's measured time
// (the time model of a replay that counts in units; the utilisation columns then say how well the
// schedule packs units, not how it copes with slow and fast configurations).
// --setup-units=N: every run, a new trial's and a resumed one's, spends N median units of the set
// (N x the median seconds per unit) before its first unit, as a trainer that starts a process and
// loads its data does (0 by default: runs start training at once).
// For each of `orders` sampling orders (seeded permutations of the 81 recorded configurations), new
// trial k of every scheduler gets configuration order[k] (RecordedSampler) and its recorded curve:
// the loss after unit r is 1 - metric after unit r, and a unit takes the configuration's measured
// training time / 30 simulated seconds. Every scheduler gets max_trials = 81 and runs until it
// answers Done, at P = 1, 4 and 16 workers:
//   random search (RunToCompletion: all 81 to 30 units, the reference), ASHA (stop type, stop type
//   with wait_for_peers, promotion type with fill_idle_workers = false and with it, the default;
//   rungs 1, 3, 9: none within a factor 3 of 30),
//   Hyperband asynchronous (the same four) and synchronous (min_resource 1, max_resource 30, eta 3),
//   each with all four brackets of the paper and again with the two most aggressive (brackets = 2:
//   rungs from 1 and from 3); then rows ranking by the best report (RankBy::BestReport), and ASHA's
//   and Hyperband's defaults with min_rung_results = 9 (a rung promotes only from 9 results while
//   new trials may start), and with noise_tolerance = 1 (a loss within the measured noise of the
//   reports above a rung's cut-off counts as in its top), with the stop type and without filling
//   too.
// Printed per (scheduler, P), over the orders:
// - reach: in how many orders the best final value (metric at 30 units of a trial that got there)
//   is within 0.002 of random search's best for that order (which, running all 81, is the best of
//   the file); worst gap: the largest shortfall from it;
// - units trained, median and worst (random search: 81 x 30 = 2430);
// - simulated wall time, median; the simulated time at which the run first had a final value
//   within the tolerance of random search's best, median over the orders that reach it (how soon
//   the best is found, against how long the whole run takes);
// - utilisation = busy worker time / (P x wall), mean and worst;
// - utilisation ceiling, mean: the most any schedule of the same work could reach on P workers
//   (SimResult::utilisation_ceiling: the wall is at least busy / P and at least the longest trial's
//   own running time, its runs being sequential), so that what the scheduler leaves idle shows
//   apart from what the work itself forces;
// - utilisation while work exists, mean and worst: the same up to the scheduler's last Run answer
//   (SimResult::utilisation_while_work): Waits at barriers and before promotions count against it,
//   the tail of the last trials running while nothing is left to start does not;
// - Wait answers to ask(), in total (every waiting worker asks again after each tell, so one idle
//   stretch can count several).
// The softmax and network curves are replayed a second time as their running best (the best accuracy so far,
// what a trainer that keeps its best epoch's checkpoint reports): their epoch-to-epoch noise
// reorders the configurations from one rung to the next, the running best much less.
// Everything is deterministic: the same files give the same table. Breaches of the scheduler
// contract that the simulator sees are listed at the end (exit status 1 when there are any).
#include "statistics.hpp"
#include "recorded_curves.hpp"
#include "simulator.hpp"

#include <hypertune/detail/random.hpp>
#include <hypertune/strategies/asha.hpp>
#include <hypertune/strategies/hyperband.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ht = hypertune;

namespace {

using hypertune::bench::mean;
using hypertune::bench::median;

constexpr double tolerance = 0.002;  // reach: within this of random search's best final value
constexpr std::size_t worker_counts[] = {1, 4, 16};

struct Task {
    std::string title;
    std::string file;
    ht::SearchSpace space;
    std::string metric;
    // Replay each curve as its running best (the metric of the best unit so far): what a trainer
    // reports when it keeps the checkpoint of its best epoch, as noisy SGD curves call for.
    bool best_so_far = false;
};

struct Contender {
    std::string name;
    std::function<ht::AnyStrategy(ht::Resource, ht::AnySampler)> make;  // from max_resource and the sampler
};

std::vector<Contender> contenders() {
    auto hyperband = [](ht::HyperbandMode mode, ht::HalvingType type, bool wait = false, bool fill = false,
                        int brackets = 0, ht::RankBy rank_by = ht::RankBy::LastReport, std::size_t min_results = 0,
                        double noise = 0) {
        return [mode, type, wait, fill, brackets, rank_by, min_results, noise](ht::Resource r, ht::AnySampler s) {
            ht::HyperbandOptions o{.min_resource = 1, .max_resource = r, .eta = 3, .mode = mode};
            o.type = type;
            o.wait_for_peers = wait;
            o.fill_idle_workers = fill;
            o.brackets = brackets;
            o.rank_by = rank_by;
            o.min_rung_results = min_results;
            o.noise_tolerance = noise;
            return ht::AnyStrategy(ht::Hyperband(o, std::move(s)));
        };
    };
    auto asha = [](ht::HalvingType type, bool wait = false, bool fill = false,
                   ht::RankBy rank_by = ht::RankBy::LastReport, std::size_t min_results = 0, double noise = 0) {
        return [type, wait, fill, rank_by, min_results, noise](ht::Resource r, ht::AnySampler s) {
            return ht::AnyStrategy(ht::ASHA({.min_resource = 1,
                                             .max_resource = r,
                                             .reduction_factor = 3,
                                             .type = type,
                                             .wait_for_peers = wait,
                                             .fill_idle_workers = fill,
                                             .rank_by = rank_by,
                                             .min_rung_results = min_results,
                                             .noise_tolerance = noise},
                                            std::move(s)));
        };
    };
    using enum ht::HalvingType;
    using enum ht::HyperbandMode;
    return {
        {"Random search", [](ht::Resource r, ht::AnySampler s) { return ht::AnyStrategy(ht::RunToCompletion(r, std::move(s))); }},
        {"ASHA stop", asha(Stop)},
        {"ASHA stop, wait for peers", asha(Stop, true)},
        {"ASHA promotion", asha(Promotion)},
        {"ASHA promotion, fill idle workers", asha(Promotion, false, true)},
        {"Hyperband async stop", hyperband(Asynchronous, Stop)},
        {"Hyperband async stop, wait for peers", hyperband(Asynchronous, Stop, true)},
        {"Hyperband async promotion", hyperband(Asynchronous, Promotion)},
        {"Hyperband async promotion, fill idle workers", hyperband(Asynchronous, Promotion, false, true)},
        {"Hyperband sync", hyperband(Synchronous, Promotion)},
        {"Hyperband async stop, 2 brackets", hyperband(Asynchronous, Stop, false, false, 2)},
        {"Hyperband async promotion, 2 brackets", hyperband(Asynchronous, Promotion, false, false, 2)},
        {"Hyperband async promotion, fill idle workers, 2 brackets (the default)",
         hyperband(Asynchronous, Promotion, false, true, 2)},
        {"Hyperband sync, 2 brackets", hyperband(Synchronous, Promotion, false, false, 2)},
        {"ASHA stop, best report", asha(Stop, false, false, ht::RankBy::BestReport)},
        {"ASHA promotion, fill idle workers, best report", asha(Promotion, false, true, ht::RankBy::BestReport)},
        {"Hyperband async stop, 2 brackets, best report", hyperband(Asynchronous, Stop, false, false, 2, ht::RankBy::BestReport)},
        {"Hyperband default, best report", hyperband(Asynchronous, Promotion, false, true, 2, ht::RankBy::BestReport)},
        {"Hyperband sync, 2 brackets, best report", hyperband(Synchronous, Promotion, false, false, 2, ht::RankBy::BestReport)},
        {"ASHA promotion, fill idle workers, min_rung_results 9",
         asha(Promotion, false, true, ht::RankBy::LastReport, 9)},
        {"Hyperband default, min_rung_results 9",
         hyperband(Asynchronous, Promotion, false, true, 2, ht::RankBy::LastReport, 9)},
        {"ASHA stop, noise tolerance 1", asha(Stop, false, false, ht::RankBy::LastReport, 0, 1.0)},
        {"ASHA promotion, fill idle workers, noise tolerance 1",
         asha(Promotion, false, true, ht::RankBy::LastReport, 0, 1.0)},
        {"Hyperband async promotion, 2 brackets, noise tolerance 1",
         hyperband(Asynchronous, Promotion, false, false, 2, ht::RankBy::LastReport, 0, 1.0)},
        {"Hyperband default, noise tolerance 1",
         hyperband(Asynchronous, Promotion, false, true, 2, ht::RankBy::LastReport, 0, 1.0)},
    };
}


// One (scheduler, P)'s values over the orders.
struct Row {
    std::vector<double> best;  // best final metric, -inf when no trial completed
    std::vector<double> gap;   // random search's best - best
    std::vector<double> spent, wall, utilisation, while_work, ceiling;
    std::vector<double> reach_time;  // simulated seconds to the first final value within the tolerance, orders that reach
    std::size_t reached = 0;
    std::size_t waits = 0;
    // At P = 4 once more, with a trainer that keeps no checkpoint (a resumed trial starts over).
    std::vector<double> spent_from_scratch;
    std::size_t reached_from_scratch = 0;
};

// Runs every contender on one recorded set and prints its table; returns the contract breaches seen.
std::vector<std::string> run_task(const Task& task, const std::filesystem::path& dir, std::uint64_t orders,
                                  bool unit_time, double setup_units) {
    auto curves = ht::bench::read_curves(dir / task.file, task.space, task.metric);
    if (task.best_so_far)
        for (auto& v : curves.values)
            std::partial_sum(v.begin(), v.end(), v.begin(), [](double a, double b) { return std::max(a, b); });
    const ht::Resource R = curves.max_resource();
    if (unit_time) std::fill(curves.seconds.begin(), curves.seconds.end(), static_cast<double>(R));
    const std::size_t n = curves.size();
    const ht::bench::RecordedProblem problem(curves);
    const auto configs = std::make_shared<const std::vector<ht::Config>>(curves.configs);

    // The set itself.
    std::vector<double> final, unit_seconds;
    for (std::size_t i = 0; i < n; ++i) {
        final.push_back(curves.values[i].back());
        unit_seconds.push_back(curves.seconds[i] / static_cast<double>(R));
    }
    const double best = *std::max_element(final.begin(), final.end());
    const auto near_best = std::count_if(final.begin(), final.end(), [&](double v) { return v >= best - tolerance; });
    const double setup_seconds = setup_units * median(unit_seconds);
    fmt::print("## {}\n\n", task.title);
    if (setup_units > 0)
        fmt::print("Every run starts with a set-up of {} median units ({:.3g} simulated seconds).\n\n", setup_units,
                   setup_seconds);
    fmt::print("{}: {} configurations x {} units. Final {}: best {:.4f}, median {:.4f}; {} of {} within {} of the "
               "best. Simulated seconds per unit: median {:.3f}, range {:.3f}..{:.3f}.\n",
               task.file, n, R, task.metric, best, median(final), near_best, n, tolerance, median(unit_seconds),
               *std::min_element(unit_seconds.begin(), unit_seconds.end()),
               *std::max_element(unit_seconds.begin(), unit_seconds.end()));
    const auto top = static_cast<std::size_t>(std::max_element(final.begin(), final.end()) - final.begin());
    std::string ranks;  // the best final configuration's place after r units: 1 + those strictly ahead
    fmt::print("Spearman correlation of the {} after r units with the final {}:", task.metric, task.metric);
    for (ht::Resource r = 1; r < R; r *= 3) {
        std::vector<double> early;
        for (const auto& v : curves.values) early.push_back(v[static_cast<std::size_t>(r - 1)]);
        fmt::print(" r = {}: {:.2f};", r, ht::bench::spearman(early, final));
        const double mine = early[top];
        ranks += fmt::format(" r = {}: {};", r, 1 + std::count_if(early.begin(), early.end(), [&](double x) { return x > mine; }));
    }
    std::vector<double> steps;  // noise: the change from one unit to the next over the last 10 units
    for (const auto& v : curves.values)
        for (std::size_t k = v.size() - 10; k < v.size(); ++k) steps.push_back(std::abs(v[k] - v[k - 1]));
    std::vector<std::size_t> places;  // the best final configuration's place after each unit
    for (std::size_t u = 0; u < static_cast<std::size_t>(R); ++u)
        places.push_back(1 + static_cast<std::size_t>(std::count_if(curves.values.begin(), curves.values.end(),
                                                                    [&](const auto& v) { return v[u] > curves.values[top][u]; })));
    const auto top_five = std::count_if(places.begin(), places.end(), [](std::size_t p) { return p <= 5; });
    fmt::print("\nThe best final configuration's place after r units:{} median change of the {} from one unit to "
               "the next over the last 10: {:.4f}.\nIts place after each unit: {} (in the top 5 after {} of {}).\n",
               ranks, task.metric, median(steps), fmt::join(places, " "), top_five, R);
    // What successive halving at its best costs: units per new trial of the paper's synchronous
    // schedule (every rung keeps exactly n_i trials), over the brackets that run.
    auto schedule_units = [&](int brackets) {
        const ht::Hyperband hb({.min_resource = 1, .max_resource = R, .eta = 3, .brackets = brackets});
        double units = 0.0, trials = 0.0;
        for (const auto& b : hb.schedule()) {
            if (b.s < hb.lowest_bracket()) continue;
            ht::Resource before = 0;
            for (const auto& rung : b.rungs) {
                units += static_cast<double>(rung.configurations) * static_cast<double>(rung.resource - before);
                before = rung.resource;
            }
            trials += static_cast<double>(b.rungs.front().configurations);
        }
        return units / trials;
    };
    const int all_brackets = static_cast<int>(ht::Hyperband({.min_resource = 1, .max_resource = R}).schedule().size());
    fmt::print("Units per new trial of Hyperband's schedule for (1, {}, 3), every rung keeping exactly its n_i "
               "(random search: {}): all {} brackets {:.2f}; brackets = 2: {:.2f}; the first bracket alone, a single "
               "ladder: {:.2f}.\n\n",
               R, R, all_brackets, schedule_units(0), schedule_units(2), schedule_units(1));

    const auto all = contenders();
    std::vector<std::vector<Row>> rows(all.size(), std::vector<Row>(std::size(worker_counts)));
    std::set<std::string> anomalies;
    for (std::uint64_t o = 1; o <= orders; ++o) {
        const auto order = ht::bench::permutation(n, o);
        for (std::size_t p = 0; p < std::size(worker_counts); ++p) {
            double reference = -std::numeric_limits<double>::infinity();
            for (std::size_t c = 0; c < all.size(); ++c) {
                auto strategy = all[c].make(R, ht::bench::RecordedSampler(configs, order));
                const auto r = ht::bench::simulate(
                    strategy, task.space, problem,
                    {.workers = worker_counts[p], .max_resource = R, .max_trials = n, .budget = 0, .seed = o,
                     .setup_seconds = setup_seconds});
                const auto where = fmt::format("{}, {}, order {}, P = {}", task.file, all[c].name, o, worker_counts[p]);
                for (const auto& a : r.anomalies) anomalies.insert(fmt::format("{}: {}", where, a));
                if (!r.retired) anomalies.insert(fmt::format("{}: did not answer Done to every worker", where));
                const double got = 1.0 - r.best();  // -inf when nothing reached R
                if (c == 0) {
                    reference = got;
                    if (got != best)
                        anomalies.insert(fmt::format("{}: random search's best {} is not the file's {}", where, got, best));
                }
                Row& row = rows[c][p];
                row.best.push_back(got);
                row.gap.push_back(reference - got);
                row.reached += static_cast<std::size_t>(got >= reference - tolerance - 1e-12);
                if (const auto* first = r.first_reaching(1.0 - (reference - tolerance) + 1e-12))
                    row.reach_time.push_back(first->time);
                row.spent.push_back(static_cast<double>(r.spent));
                row.wall.push_back(r.wall);
                row.utilisation.push_back(r.utilisation());
                row.while_work.push_back(r.utilisation_while_work());
                row.ceiling.push_back(r.utilisation_ceiling());
                row.waits += r.waits;
                if (worker_counts[p] != 4) continue;
                auto again = all[c].make(R, ht::bench::RecordedSampler(configs, order));
                const auto s = ht::bench::simulate(again, task.space, problem,
                                                   {.workers = 4, .max_resource = R, .max_trials = n, .budget = 0,
                                                    .seed = o, .checkpoints = false, .setup_seconds = setup_seconds});
                for (const auto& a : s.anomalies) anomalies.insert(fmt::format("{}, no checkpoints: {}", where, a));
                row.spent_from_scratch.push_back(static_cast<double>(s.spent));
                row.reached_from_scratch += static_cast<std::size_t>(1.0 - s.best() >= reference - tolerance - 1e-12);
            }
        }
    }

    fmt::print("| scheduler | P | reach | median best {0} | worst gap | median units | worst units | median wall s "
               "| median s to reach | utilisation mean | utilisation worst | ceiling mean | while work exists: mean | worst | Wait answers "
               "| no checkpoints (P=4): reach | units |\n",
               task.metric);
    fmt::print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (std::size_t c = 0; c < all.size(); ++c)
        for (std::size_t p = 0; p < std::size(worker_counts); ++p) {
            const Row& row = rows[c][p];
            fmt::print("| {} | {} | {}/{} | {:.4f} | {:.4f} | {:.0f} | {:.0f} | {:.4g} | {} | {:.1f}% | {:.1f}% | {:.1f}% | "
                       "{:.1f}% | {:.1f}% | {} | {} |\n",
                       all[c].name, worker_counts[p], row.reached, orders, median(row.best),
                       *std::max_element(row.gap.begin(), row.gap.end()), median(row.spent),
                       *std::max_element(row.spent.begin(), row.spent.end()), median(row.wall),
                       row.reach_time.empty() ? std::string("-") : fmt::format("{:.4g}", median(row.reach_time)),
                       100.0 * mean(row.utilisation),
                       100.0 * *std::min_element(row.utilisation.begin(), row.utilisation.end()),
                       100.0 * mean(row.ceiling),
                       100.0 * mean(row.while_work), 100.0 * *std::min_element(row.while_work.begin(), row.while_work.end()),
                       row.waits,
                       row.spent_from_scratch.empty()
                           ? std::string("")
                           : fmt::format("{}/{} | {:.0f}", row.reached_from_scratch, orders,
                                         median(row.spent_from_scratch)));
        }
    fmt::print("\n");
    return {anomalies.begin(), anomalies.end()};
}

}  // namespace

int main(int argc, char** argv) try {
    std::vector<std::string> args(argv + 1, argv + argc);
    const auto flag = std::find(args.begin(), args.end(), "--unit-time");
    const bool unit_time = flag != args.end();
    if (unit_time) args.erase(flag);
    double setup_units = 0.0;
    bool bad_setup = false;
    if (const auto setup = std::find_if(args.begin(), args.end(),
                                        [](const std::string& a) { return a.rfind("--setup-units=", 0) == 0; });
        setup != args.end()) {
        const std::string value = setup->substr(std::string_view("--setup-units=").size());
        char* end = nullptr;
        setup_units = std::strtod(value.c_str(), &end);
        bad_setup = value.empty() || *end != '\0' || !(setup_units >= 0) || !std::isfinite(setup_units);
        args.erase(setup);
    }
    const std::filesystem::path dir = !args.empty() ? std::filesystem::path(args[0]) : HYPERTUNE_BENCH_DATA_DIR;
    const std::uint64_t orders = args.size() > 1 ? std::strtoull(args[1].c_str(), nullptr, 10) : 20;
    const bool unknown_flag =
        std::any_of(args.begin(), args.end(), [](const std::string& a) { return a.rfind("--", 0) == 0; });
    if (orders == 0 || args.size() > 2 || unknown_flag || bad_setup) {
        fmt::print(stderr, "usage: harness_recorded [data_dir] [orders>=1] [--unit-time] [--setup-units=N>=0]\n");
        return 2;
    }
    const std::vector<Task> tasks = {
        {"XGBoost, Fashion-MNIST Pullover vs Coat (validation AUC per boosting round)", "xgboost_pullover_coat.csv",
         ht::bench::xgboost_space(), "auc"},
        {"Held out: XGBoost, Fashion-MNIST T-shirt/top vs Shirt, other configurations (validation AUC per "
         "boosting round; recorded after the defaults were chosen, never used to choose one)",
         "xgboost_shirt_tshirt.csv", ht::bench::xgboost_space(), "auc"},
        {"Second held out: XGBoost, Fashion-MNIST Sneaker vs Ankle boot, other configurations again (validation "
         "AUC per boosting round; recorded after every default was chosen and the first held-out set reported)",
         "xgboost_sneaker_ankleboot.csv", ht::bench::xgboost_space(), "auc"},
        {"Softmax regression by SGD, Fashion-MNIST 10 classes (validation accuracy per epoch)",
         "softmax_fashion_mnist.csv", ht::bench::softmax_space(), "accuracy"},
        {"The same softmax curves, reported as the best accuracy so far (the trainer keeps its best epoch)",
         "softmax_fashion_mnist.csv", ht::bench::softmax_space(), "accuracy", true},
        {"Third held out: a one-hidden-layer network by SGD with momentum, Fashion-MNIST 10 classes (validation "
         "accuracy per epoch; recorded after every default was chosen and the other sets reported)",
         "mlp_fashion_mnist.csv", ht::bench::mlp_space(), "accuracy"},
        {"The same network's curves, reported as the best accuracy so far", "mlp_fashion_mnist.csv",
         ht::bench::mlp_space(), "accuracy", true},
        {"Fourth held out: softmax regression again, 81 other configurations (RandomSampler seed 5; recorded "
         "after ASHA's rule at a rung was chosen on the sets above)",
         "softmax_fashion_mnist_seed5.csv", ht::bench::softmax_space(), "accuracy"},
        {"The fourth held-out set, reported as the best accuracy so far", "softmax_fashion_mnist_seed5.csv",
         ht::bench::softmax_space(), "accuracy", true},
        {"Fifth held out: the network again, 81 other configurations (RandomSampler seed 6; recorded with the "
         "fourth)",
         "mlp_fashion_mnist_seed6.csv", ht::bench::mlp_space(), "accuracy"},
        {"The fifth held-out set, reported as the best accuracy so far", "mlp_fashion_mnist_seed6.csv",
         ht::bench::mlp_space(), "accuracy", true},
        {"Sixth held out: softmax regression again, 81 other configurations (RandomSampler seed 7; recorded after "
         "noise_tolerance = 1 was measured on the sets above, to test it)",
         "softmax_fashion_mnist_seed7.csv", ht::bench::softmax_space(), "accuracy"},
        {"The sixth held-out set, reported as the best accuracy so far", "softmax_fashion_mnist_seed7.csv",
         ht::bench::softmax_space(), "accuracy", true},
        {"Seventh held out: the network again, 81 other configurations (RandomSampler seed 8; recorded with the "
         "sixth)",
         "mlp_fashion_mnist_seed8.csv", ht::bench::mlp_space(), "accuracy"},
        {"The seventh held-out set, reported as the best accuracy so far", "mlp_fashion_mnist_seed8.csv",
         ht::bench::mlp_space(), "accuracy", true},
    };
    std::vector<std::string> anomalies;
    for (const auto& task : tasks) {
        if (!std::filesystem::exists(dir / task.file)) {
            fmt::print("## {}\n\nskipped: {} not found in {} (bench/record_curves writes it)\n\n", task.title,
                       task.file, dir.string());
            continue;
        }
        for (auto& a : run_task(task, dir, orders, unit_time, setup_units)) anomalies.push_back(std::move(a));
    }
    if (!anomalies.empty()) {
        constexpr std::size_t shown = 40;
        fmt::print("Contract breaches and oddities seen by the simulator ({}{}):\n", anomalies.size(),
                   anomalies.size() > shown ? fmt::format(", the first {}", shown) : std::string());
        for (std::size_t i = 0; i < anomalies.size() && i < shown; ++i) fmt::print("- {}\n", anomalies[i]);
    }
    return anomalies.empty() ? 0 : 1;
} catch (const std::exception& e) {
    fmt::print(stderr, "harness_recorded: {}\n", e.what());
    return 2;
}
