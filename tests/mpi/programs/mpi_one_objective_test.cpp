// SPDX-License-Identifier: MIT
// One objective for the in-process Tuner and for hypertune::mpi::fit, run under mpirun (ctest: -n 5,
// so 4 training ranks). The objectives are function objects (not templates) taking hypertune::Trial&:
// each is run by an ordinary hypertune::Tuner on rank 0 and by mpi::fit with groups of ranks, with
// the same seed, and the two Results must agree trial by trial (configuration, status, final value,
// every reported point, the failure's text). The objective computes its value as a data-parallel
// trainer would: each rank of its group sums a slice of integer terms, MPI_Allreduce completes
// the sum (exact in any order, so the values agree to the bit). Prints one line per check on rank
// 0, then "N passed, M failed"; the exit code is non-zero on any failure.

#include <hypertune/hypertune.hpp>
#include <hypertune/mpi.hpp>
#include <hypertune/strategies/hyperband.hpp>

#include <fmt/format.h>
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "mpi_checks.hpp"

namespace ht = hypertune;

namespace {

constexpr long long terms = 1200;

// The value after `epoch`: the sum of `terms` integer terms, each rank of the trial's group taking
// a slice (the whole sum in process). Integer terms: the sum is the same in every order.
double group_value(const ht::Config& cfg, ht::Trial& trial, ht::Resource epoch) {
    const ht::mpi::GroupTrial* group = ht::mpi::group(trial);  // nullptr under the in-process Tuner
    const int rank = group ? group->rank() : 0;
    const int size = group ? group->size() : 1;
    const auto x = static_cast<long long>(std::lround(1000.0 * cfg.get<double>("x")));
    const auto y = static_cast<long long>(std::lround(1000.0 * cfg.get<double>("y")));
    long long part = 0;
    for (long long i = rank; i < terms; i += size) part += (x - 300) * (x - 300) + (y + 200) * (y + 200) + (i % 7) * 1000 / epoch;
    long long total = part;
    if (group) MPI_Allreduce(&part, &total, 1, MPI_LONG_LONG, MPI_SUM, group->comm());
    return static_cast<double>(total) / static_cast<double>(terms) / 1e6;
}

// The objective: reports every epoch, stops when told, checkpoints and resumes; a configuration
// with x > 0.85 reports NaN (a report the run rejects, on every rank of a group alike).
struct Training {
    double operator()(const ht::Config& cfg, ht::Trial& trial) const {
        const ht::Resource from = trial.resumed_from();
        if (from > 0 && trial.checkpoint() != fmt::format("trial {} epoch {}", trial.id(), from))
            throw std::runtime_error(fmt::format("trial {}: wrong checkpoint to resume from epoch {}", trial.id(), from));
        double v = 0.0;
        for (ht::Resource epoch = from + 1; epoch <= trial.budget(); ++epoch) {
            v = cfg.get<double>("x") > 0.85 ? std::nan("") : group_value(cfg, trial, epoch);
            trial.report(epoch, v);
            if (trial.should_stop()) break;
            trial.save_checkpoint(fmt::format("trial {} epoch {}", trial.id(), epoch));
        }
        return v;
    }
};

// Two objectives, reported and returned as Metrics.
struct TwoMetrics {
    ht::Metrics operator()(const ht::Config& cfg, ht::Trial& trial) const {
        ht::Metrics m;
        for (ht::Resource epoch = 1; epoch <= trial.budget(); ++epoch) {
            const double loss = group_value(cfg, trial, epoch);
            m = ht::Metrics{{"loss", loss}, {"cost", std::abs(cfg.get<double>("y")) + 0.01 * static_cast<double>(epoch)}};
            trial.report(epoch, m);
            if (trial.should_stop()) break;
        }
        return m;
    }
};

ht::SearchSpace make_space(bool with_workers) {
    ht::SearchSpace space;
    space.add(ht::ContinuousParameter("x", -1.0, 1.0));
    space.add(ht::ContinuousParameter("y", -1.0, 1.0));
    if (with_workers) space.add(ht::CategoricalParameter("workers", {"1", "2", "4"}));
    return space;
}

// Rank 0: the two Results agree trial by trial.
void compare(const std::string& what, const ht::Result& in_process, const ht::Result& over_mpi) {
    if (world_rank != 0) return;
    std::map<ht::TrialId, const ht::TrialRecord*> mine;
    for (const auto& t : over_mpi.trials()) mine[t.id] = &t;
    bool same = in_process.trials().size() == over_mpi.trials().size() && !in_process.trials().empty();
    std::string first_difference;
    auto differ = [&](const ht::TrialRecord& t, const std::string& how) {
        same = false;
        if (first_difference.empty()) first_difference = fmt::format(": trial {} {}", t.id, how);
    };
    for (const auto& t : in_process.trials()) {
        auto it = mine.find(t.id);
        if (it == mine.end()) {
            differ(t, "is missing over MPI");
            continue;
        }
        const ht::TrialRecord& u = *it->second;
        if (!(t.config == u.config)) differ(t, "has another configuration");
        if (t.status != u.status) differ(t, fmt::format("ended {} vs {}", ht::to_string(t.status), ht::to_string(u.status)));
        if (t.failure_reason != u.failure_reason) differ(t, fmt::format("failed with '{}' vs '{}'", t.failure_reason, u.failure_reason));
        if (!(t.objective == u.objective || (std::isnan(t.objective) && std::isnan(u.objective))))
            differ(t, fmt::format("has value {} vs {}", t.objective, u.objective));
        if (t.values != u.values) differ(t, "has other metric values");
        if (t.curve.size() != u.curve.size()) {
            differ(t, fmt::format("reported {} points vs {}", t.curve.size(), u.curve.size()));
            continue;
        }
        for (std::size_t i = 0; i < t.curve.size(); ++i)
            if (t.curve[i].step != u.curve[i].step || t.curve[i].value != u.curve[i].value)
                differ(t, fmt::format("reported ({}, {}) vs ({}, {})", t.curve[i].step, t.curve[i].value,
                                      u.curve[i].step, u.curve[i].value));
    }
    check(same, fmt::format("{}: {} trials, the same in process and over MPI ({} completed, {} stopped, {} failed){}",
                            what, in_process.trials().size(), in_process.count(ht::TrialStatus::Completed),
                            in_process.count(ht::TrialStatus::Stopped), in_process.count(ht::TrialStatus::Failed),
                            first_difference));
}

// The same objective object, run both ways.
template <class Objective>
void run_both(const std::string& what, const ht::SearchSpace& space, const std::function<ht::AnyStrategy()>& strategy,
              const ht::TunerOptions& options, const ht::mpi::MpiOptions& mpi_options, const Objective& objective) {
    ht::Result in_process;
    if (world_rank == 0) {
        ht::TunerOptions o = options;
        o.max_parallel_jobs = 2;
        ht::Tuner tuner(space, strategy(), o);
        in_process = tuner.fit(objective);
    }
    ht::Result over_mpi = ht::mpi::fit(MPI_COMM_WORLD, space, strategy(), options, mpi_options, objective);
    compare(what, in_process, over_mpi);
}

void test_groups_of_two() {
    const Training objective;
    run_both("random search, groups of 2", make_space(false), [] { return ht::AnyStrategy(ht::RandomSearch({.max_resource = 3})); },
             {.max_jobs = 16, .seed = 21, .progress = ht::ProgressBar::Never}, {.ranks_per_trial = 2}, objective);
}

void test_worker_count() {
    // Synchronous Hyperband: promotions at its barriers do not depend on the order results arrive
    // in, so the runs agree; paused trials resume from their checkpoints on new groups.
    const Training objective;
    run_both("synchronous Hyperband, groups of 1, 2 and 4", make_space(true),
             [] {
                 return ht::AnyStrategy(
                     ht::Hyperband({.min_resource = 1, .max_resource = 9, .eta = 3, .mode = ht::HyperbandMode::Synchronous}));
             },
             {.max_jobs = 13, .seed = 4, .progress = ht::ProgressBar::Never}, {.ranks_parameter = "workers"}, objective);
}

void test_metrics() {
    const TwoMetrics objective;
    ht::TunerOptions options{.objectives = {{"loss", ht::Direction::Minimize}, {"cost", ht::Direction::Minimize}},
                             .max_jobs = 10, .seed = 9, .progress = ht::ProgressBar::Never};
    options.metric = "loss";
    run_both("Metrics reported and returned, groups of 2", make_space(false),
             [] { return ht::AnyStrategy(ht::RandomSearch({.max_resource = 3})); },
             options, {.ranks_per_trial = 2}, objective);
}

// A trial outside mpi::fit has no group: group() is nullptr and group_comm() this process alone.
void test_no_group() {
    ht::Trial by_hand(1, {}, 3);
    const ht::Trial& t = by_hand;
    check(ht::mpi::group(by_hand) == nullptr && ht::mpi::group(t) == nullptr && ht::mpi::group_comm(t) == MPI_COMM_SELF,
          "a trial outside mpi::fit: group() is nullptr, group_comm() is MPI_COMM_SELF");
}

}  // namespace

int main(int argc, char** argv) {
    ht::mpi::Environment env(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (world_size != 5) {
        if (world_rank == 0) std::printf("run with 5 ranks (4 training: groups of 2, or of 1, 2 and 4)\n");
        return 2;
    }
    if (world_rank == 0) std::printf("hypertune::mpi one objective for Tuner and mpi::fit: %d ranks\n", world_size);
    auto run = [&](const char* name, auto&& test) {
        try {
            test();
        } catch (const std::exception& e) {
            check(false, fmt::format("{} threw: {}", name, e.what()));
        }
    };
    run("no group", test_no_group);
    run("groups of two", test_groups_of_two);
    run("worker count", test_worker_count);
    run("metrics", test_metrics);

    return finish_checks();
}
