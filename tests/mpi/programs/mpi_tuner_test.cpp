// SPDX-License-Identifier: MIT
// Tests of hypertune::mpi::fit, run under mpirun (ctest: -n 5 and -n 7, two ranks per trial, so 2
// and 3 groups; also at MPI_THREAD_SERIALIZED, and at FUNNELED, which must be refused). Rank 0 checks the Result; checks on other ranks are gathered at the end. Prints one
// line per check on rank 0, then "N passed, M failed"; the exit code is non-zero on any failure.
//
// The objective splits a sum over the ranks of its group and completes it with MPI_Allreduce, as a
// data-parallel trainer averages gradients: the value only comes out right when every rank of the
// group took part in every step.

#include <hypertune/hypertune.hpp>
#include <hypertune/mpi.hpp>
#include <hypertune/strategies/asha.hpp>
#include <hypertune/strategies/hyperband.hpp>

#include <fmt/format.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "mpi_checks.hpp"

namespace ht = hypertune;

namespace {

constexpr int terms = 1000;

// The function being tuned: the mean of `terms` terms whose sum is (x - 0.3)^2 + (y + 0.2)^2 + 1/epoch
// in the limit; computed in parts so every rank of the group owns a slice.
double term(int i, double x, double y, int epoch) {
    double t = (static_cast<double>(i) + 0.5) / terms;  // midpoint rule over [0, 1]
    return (x - 0.3) * (x - 0.3) + (y + 0.2) * (y + 0.2) + 2.0 * t / epoch;
}

double exact(double x, double y, int epoch) {
    double sum = 0.0;
    for (int i = 0; i < terms; ++i) sum += term(i, x, y, epoch);
    return sum / terms;
}

// The group's collective value: each rank adds its slice, MPI_Allreduce completes the sum.
double group_value(MPI_Comm group, double x, double y, int epoch) {
    int r = 0;
    int n = 1;
    MPI_Comm_rank(group, &r);
    MPI_Comm_size(group, &n);
    double part = 0.0;
    for (int i = r; i < terms; i += n) part += term(i, x, y, epoch);
    double total = 0.0;
    MPI_Allreduce(&part, &total, 1, MPI_DOUBLE, MPI_SUM, group);
    return total / terms;
}

// Throws on every rank unless all ranks of the group hold the same value (trial id, config...).
void require_agreement(MPI_Comm group, double v, const char* what) {
    double lo = 0.0;
    double hi = 0.0;
    MPI_Allreduce(&v, &lo, 1, MPI_DOUBLE, MPI_MIN, group);
    MPI_Allreduce(&v, &hi, 1, MPI_DOUBLE, MPI_MAX, group);
    if (lo != hi) throw std::runtime_error(fmt::format("ranks of the group disagree on {}: {} vs {}", what, lo, hi));
}

void require_group_of_two(MPI_Comm group) {
    int n = 0;
    MPI_Comm_size(group, &n);
    if (n != 2) throw std::runtime_error(fmt::format("group has {} ranks, expected 2", n));
}

ht::SearchSpace make_space() {
    ht::SearchSpace space;
    space.add(ht::ContinuousParameter("x", -1.0, 1.0));
    space.add(ht::ContinuousParameter("y", -1.0, 1.0));
    return space;
}

// Counts the trials in flight on rank 0 (callbacks run there, serialised by the tuner).
struct Concurrency {
    std::mutex mu;
    int running = 0;
    int peak = 0;
    void attach(ht::TunerOptions& o) {
        o.on_trial_start = [this](const ht::TrialRecord&) {
            std::lock_guard lk(mu);
            peak = std::max(peak, ++running);
        };
        o.on_trial_end = [this](const ht::TrialRecord&) {
            std::lock_guard lk(mu);
            --running;
        };
    }
};

// Every rank: how many trials its group ran (counted by the leaders), gathered on rank 0.
std::vector<int> gather_counts(int mine) {
    std::vector<int> all(static_cast<std::size_t>(world_size), 0);
    MPI_Gather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    return all;
}

void test_bad_layout() {
    // world_size - 2 never divides world_size - 1 (for world sizes >= 4).
    int bad = world_size - 2;
    for (int rpt : {bad, 0}) {
        std::string message;
        try {
            (void)ht::mpi::fit(MPI_COMM_WORLD, make_space(), ht::RandomSearch(), {.max_jobs = 2, .progress = ht::ProgressBar::Never},
                               {.ranks_per_trial = rpt}, [](const ht::Config&, ht::mpi::GroupTrial&) { return 0.0; });
        } catch (const ht::InvalidArgument& e) {
            message = e.what();
        }
        // Every rank checks: the same error everywhere, before any trial.
        std::string expected = rpt == 0 ? "ranks_per_trial must be >= 1, got 0"
                                        : fmt::format("ranks_per_trial = {} does not divide the {} training ranks",
                                                      rpt, world_size - 1);
        check(message.find(expected) != std::string::npos,
              fmt::format("ranks_per_trial {} is refused on every rank: '{}'", rpt, message));
    }
    // A rank whose search space is not rank 0's: refused on every rank before any trial, naming it.
    {
        std::string message;
        ht::SearchSpace space = make_space();
        if (world_rank == 2) space.add(ht::ContinuousParameter("extra", 0.0, 1.0));
        try {
            (void)ht::mpi::fit(MPI_COMM_WORLD, space, ht::RandomSearch(), {.max_jobs = 2, .progress = ht::ProgressBar::Never},
                               {}, [](const ht::Config&, ht::mpi::GroupTrial&) { return 0.0; });
        } catch (const ht::InvalidArgument& e) {
            message = e.what();
        }
        check(message.find("mpi::fit: the search space of rank 2 is not rank 0's: every rank must build the same "
                           "space") != std::string::npos,
              fmt::format("a rank with another search space is refused on every rank: '{}'", message));
    }
    // A bad tuner option is refused on every rank too (the Tuner is built on rank 0 only).
    std::string message;
    try {
        (void)ht::mpi::fit(MPI_COMM_WORLD, make_space(), ht::RandomSearch(), {.max_jobs = 0}, {.ranks_per_trial = 2},
                           [](const ht::Config&, ht::mpi::GroupTrial&) { return 0.0; });
    } catch (const ht::InvalidArgument& e) {
        message = e.what();
    }
    check(message.find("max_jobs must be >= 1") != std::string::npos,
          fmt::format("max_jobs = 0 is refused on every rank: '{}'", message));
    // More trials in flight than the ranks hold: refused on every rank, naming both counts (it used
    // to be replaced by the ranks' count in silence).
    message.clear();
    const int groups = (world_size - 1) / 2;
    try {
        (void)ht::mpi::fit(MPI_COMM_WORLD, make_space(), ht::RandomSearch(),
                           {.max_jobs = 2, .max_parallel_jobs = static_cast<std::size_t>(groups + 1)},
                           {.ranks_per_trial = 2}, [](const ht::Config&, ht::mpi::GroupTrial&) { return 0.0; });
    } catch (const ht::InvalidArgument& e) {
        message = e.what();
    }
    const std::string expected = fmt::format("max_parallel_jobs = {} but the ranks hold at most {} trial", groups + 1, groups);
    check(message.find(expected) != std::string::npos,
          fmt::format("max_parallel_jobs above the ranks' count is refused on every rank: '{}'", message));
}

// max_parallel_jobs below what the ranks hold is the user's limit: kept, and never exceeded.
void test_own_parallel_limit(int groups) {
    const std::size_t limit = static_cast<std::size_t>(groups - 1);
    ht::TunerOptions options{.max_jobs = 6, .max_parallel_jobs = limit, .progress = ht::ProgressBar::Never};
    Concurrency concurrency;
    if (world_rank == 0) concurrency.attach(options);
    ht::Result r = ht::mpi::fit(MPI_COMM_WORLD, make_space(), ht::RandomSearch(), options, {.ranks_per_trial = 2},
                                [](const ht::Config& cfg, ht::mpi::GroupTrial&) {
                                    std::this_thread::sleep_for(std::chrono::milliseconds(20));
                                    return cfg.get<double>("x");
                                });
    if (world_rank != 0) return;
    check(r.count(ht::TrialStatus::Completed) == 6, "the limited run completed its 6 trials");
    check(r.setup().max_parallel_jobs == limit,
          fmt::format("max_parallel_jobs = {} kept below the {} groups (got {})", limit, groups, r.setup().max_parallel_jobs));
    check(concurrency.peak >= 1 && concurrency.peak <= static_cast<int>(limit),
          fmt::format("never more trials in flight than the limit (peak {} of {})", concurrency.peak, limit));
}

void test_random_search(int groups) {
    const std::size_t max_jobs = 16;
    ht::TunerOptions options{.max_jobs = max_jobs, .seed = 3, .progress = ht::ProgressBar::Never};
    Concurrency concurrency;
    if (world_rank == 0) concurrency.attach(options);
    auto space = make_space();
    int served = 0;  // trials run by this rank's group (counted on leaders)
    ht::Result r = ht::mpi::fit(MPI_COMM_WORLD, space, ht::RandomSearch(), options, {.ranks_per_trial = 2},
                                [&](const ht::Config& cfg, ht::mpi::GroupTrial& trial, MPI_Comm group) {
                                    require_group_of_two(group);
                                    double x = cfg.get<double>("x");
                                    double y = cfg.get<double>("y");
                                    require_agreement(group, static_cast<double>(trial.id()), "the trial id");
                                    require_agreement(group, x, "x");
                                    if (trial.is_leader()) ++served;
                                    // Long enough that the groups overlap in time.
                                    std::this_thread::sleep_for(std::chrono::milliseconds(20));
                                    return group_value(group, x, y, 1);
                                });
    auto counts = gather_counts(served);
    if (world_rank != 0) {
        check(r.trials().empty(), "ranks other than 0 return an empty Result");
        return;
    }
    check(r.trials().size() == max_jobs, fmt::format("random search ran max_jobs = {} trials (got {})", max_jobs, r.trials().size()));
    check(r.count(ht::TrialStatus::Completed) == max_jobs,
          fmt::format("all completed ({} completed, {} failed{})", r.count(ht::TrialStatus::Completed),
                      r.count(ht::TrialStatus::Failed),
                      r.count(ht::TrialStatus::Failed) ? ": " + r.trials().front().failure_reason : std::string()));
    check(r.setup().max_parallel_jobs == static_cast<std::size_t>(groups),
          fmt::format("max_parallel_jobs set to the {} groups (got {})", groups, r.setup().max_parallel_jobs));
    check(r.setup().instances_per_trial == 2, "instances_per_trial set to ranks_per_trial");
    check(concurrency.peak >= 1 && concurrency.peak <= groups,
          fmt::format("never more trials in flight than groups (peak {} of {})", concurrency.peak, groups));
    bool values_exact = true;
    double best_seen = 1e300;
    for (const auto& t : r.trials()) {
        double want = exact(t.config.get<double>("x"), t.config.get<double>("y"), 1);
        if (std::abs(t.objective - want) > 1e-12) values_exact = false;
        best_seen = std::min(best_seen, t.objective);
    }
    check(values_exact, "every trial's value equals the function at its config (the group's Allreduce took every rank)");
    check(r.best().objective == best_seen, fmt::format("best() is the smallest value ({})", best_seen));
    int total = 0;
    int groups_used = 0;
    for (int leader = 1; leader < world_size; leader += 2) {
        total += counts[static_cast<std::size_t>(leader)];
        if (counts[static_cast<std::size_t>(leader)] > 0) ++groups_used;
    }
    check(total == static_cast<int>(max_jobs), fmt::format("the group leaders ran {} trials in all", total));
    check(groups_used == groups, fmt::format("every group ran trials ({} of {})", groups_used, groups));
}

void test_asha(int groups) {
    const std::size_t max_jobs = 18;
    auto journal = std::filesystem::temp_directory_path() / fmt::format("hypertune_mpi_test_{}.jsonl", ::getpid());
    if (world_rank == 0) std::filesystem::remove(journal);
    ht::TunerOptions options{.max_jobs = max_jobs, .seed = 11, .progress = ht::ProgressBar::Never,
                             .journal = journal.string()};
    auto space = make_space();
    ht::Result r = ht::mpi::fit(
        MPI_COMM_WORLD, space, ht::ASHA({.min_resource = 1, .max_resource = 9, .reduction_factor = 3}), options,
        {.ranks_per_trial = 2}, [&](const ht::Config& cfg, ht::mpi::GroupTrial& trial, MPI_Comm group) {
            require_group_of_two(group);
            double x = cfg.get<double>("x");
            double y = cfg.get<double>("y");
            double v = 0.0;
            for (int epoch = 1; epoch <= trial.budget(); ++epoch) {
                std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the epoch's training
                v = group_value(group, x, y, epoch);
                trial.report(epoch, v);
                // A stop must reach every rank of the group, or the next Allreduce would hang.
                require_agreement(group, trial.should_stop() ? 1.0 : 0.0, "should_stop()");
                if (trial.should_stop()) break;
            }
            return v;
        });
    if (world_rank != 0) return;
    auto stopped = r.count(ht::TrialStatus::Stopped);
    auto completed = r.count(ht::TrialStatus::Completed);
    check(r.trials().size() == max_jobs && r.count(ht::TrialStatus::Failed) == 0,
          fmt::format("ASHA ran {} trials, none failed ({} completed, {} stopped)", r.trials().size(), completed, stopped));
    check(stopped > 0 && completed > 0, "ASHA stopped some trials early and completed others, without deadlock");
    bool stopped_early = true;
    bool curves_ok = true;
    for (const auto& t : r.trials()) {
        if (t.status == ht::TrialStatus::Stopped && t.resource_used >= 9) stopped_early = false;
        for (const auto& p : t.curve)
            if (std::abs(p.value - exact(t.config.get<double>("x"), t.config.get<double>("y"), static_cast<int>(p.step))) > 1e-12)
                curves_ok = false;
    }
    check(stopped_early, "stopped trials used less than the full resource");
    check(curves_ok, "every reported value is the group's exact value at its step");
    check(r.setup().max_parallel_jobs == static_cast<std::size_t>(groups), "ASHA ran on one thread per group");
    // The journal is the ordinary tuner's: it attaches to the same trials.
    ht::Result attached = ht::load_result(journal.string());
    check(attached.trials().size() == max_jobs && attached.best().id == r.best().id,
          fmt::format("the journal attaches: {} trials, best trial {}", attached.trials().size(), attached.best().id));
    std::filesystem::remove(journal);
}

void test_failures() {
    const std::size_t max_jobs = 16;
    const int long_run = 40;  // steps the leader of trials 12 and 13 would report, 25 ms apart
    ht::TunerOptions options{.max_jobs = max_jobs, .seed = 5, .progress = ht::ProgressBar::Never};
    ht::Result r = ht::mpi::fit(
        MPI_COMM_WORLD, make_space(), ht::RandomSearch({.max_resource = long_run}), options, {.ranks_per_trial = 2},
        [&](const ht::Config& cfg, ht::mpi::GroupTrial& trial, MPI_Comm group) {
            double x = cfg.get<double>("x");
            double y = cfg.get<double>("y");
            double v = group_value(group, x, y, 1);
            // Throws on every rank of the group, after a collective.
            if (trial.id() == 2) throw std::runtime_error("diverged on every rank");
            // Throws on the leader only, outside any collective.
            if (trial.id() == 5 && trial.is_leader()) throw std::runtime_error("leader ran out of memory");
            // Throws on the other rank only, outside any collective.
            if (trial.id() == 7 && !trial.is_leader()) throw std::runtime_error("worker lost its data");
            // Throws on one rank before a report the other rank has entered: the failing rank joins
            // that report's step, and the other rank's report() throws so that it leaves too.
            if (trial.id() == 3 || trial.id() == 4) {
                if ((trial.id() == 3) != trial.is_leader()) throw std::runtime_error("failed before reporting");
                trial.report(1, v);
            }
            // Reports on the leader only: report() is collective, the trial fails naming that.
            if (trial.id() == 11 && trial.is_leader()) trial.report(1, v);
            // A report the coordinator rejects (steps must increase): thrown on every rank.
            if (trial.id() == 9) {
                trial.report(1, v);
                trial.report(1, v);
            }
            // A non-finite result.
            if (trial.id() == 10) return std::nan("");
            // The ranks report at different steps (14), or the other rank catches that (15): the
            // value of the other rank's step never counts, so the trial fails, naming both steps.
            if (trial.id() == 14) trial.report(trial.is_leader() ? 1 : 2, v);
            if (trial.id() == 15) {
                trial.report(1, v);
                try {
                    trial.report(trial.is_leader() ? 2 : 3, v);
                } catch (const ht::InvalidArgument&) {
                }
            }
            // The other rank throws (12) or returns (13) after step 1, outside any collective, while
            // the leader trains on, reporting: the leader's next report learns it and ends the trial.
            if (trial.id() == 12 || trial.id() == 13) {
                trial.report(1, v);
                if (!trial.is_leader()) {
                    if (trial.id() == 12) throw std::runtime_error("worker lost its shard after step 1");
                    return v;
                }
                for (int step = 2; step <= long_run; ++step) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(25));
                    trial.report(step, v);
                }
            }
            return v;
        });
    if (world_rank != 0) return;
    auto reason = [&](ht::TrialId id) -> std::string {
        for (const auto& t : r.trials())
            if (t.id == id) return t.status == ht::TrialStatus::Failed ? t.failure_reason : "(not failed)";
        return "(no such trial)";
    };
    check(r.trials().size() == max_jobs, fmt::format("the run went on after failures: {} trials", r.trials().size()));
    check(r.count(ht::TrialStatus::Failed) == 12 && r.count(ht::TrialStatus::Completed) == max_jobs - 12,
          fmt::format("exactly the 12 faulty trials failed ({} failed)", r.count(ht::TrialStatus::Failed)));
    check(reason(2).find("diverged on every rank") != std::string::npos, "throw on every rank -> Failed: " + reason(2));
    check(reason(5).find("rank 0 of the group (world rank ") != std::string::npos &&
              reason(5).find("leader ran out of memory") != std::string::npos,
          "throw on the leader -> Failed, naming it: " + reason(5));
    check(reason(7).find("rank 1 of the group") != std::string::npos &&
              reason(7).find("worker lost its data") != std::string::npos,
          "throw on a non-leader -> Failed: " + reason(7));
    check(reason(3).find("rank 1 of the group") != std::string::npos &&
              reason(3).find("failed before reporting") != std::string::npos,
          "throw on a non-leader while the leader reports -> Failed: " + reason(3));
    check(reason(4).find("failed before reporting") != std::string::npos &&
              reason(4).find("rank 0 of the group") != std::string::npos &&
              reason(4).find("rank 1 of the group") == std::string::npos,
          "throw on the leader while the other rank reports -> Failed: " + reason(4));
    check(reason(11).find("report() is collective") != std::string::npos &&
              reason(11).find("but rank 1 of the group (world rank") != std::string::npos,
          "a report on the leader alone -> Failed: " + reason(11));
    // The leader stops at its first report after the other rank left, not after all 40 steps
    // (25 ms apart, so 10 steps leave 225 ms for the note to arrive).
    auto steps = [&](ht::TrialId id) {
        for (const auto& t : r.trials())
            if (t.id == id) return t.curve.size();
        return std::size_t{0};
    };
    check(reason(12).find("rank 1 of the group") != std::string::npos &&
              reason(12).find("worker lost its shard after step 1") != std::string::npos && steps(12) <= 10,
          fmt::format("a non-leader throws while the leader trains on -> Failed after {} of {} steps: {}", steps(12),
                      long_run, reason(12)));
    check(reason(13).find("report() is collective") != std::string::npos &&
              reason(13).find("but rank 1 of the group (world rank") != std::string::npos && steps(13) <= 10,
          fmt::format("a non-leader returns while the leader trains on -> Failed after {} of {} steps: {}", steps(13),
                      long_run, reason(13)));
    check(reason(9).find("steps must increase") != std::string::npos, "rejected report -> Failed: " + reason(9));
    check(reason(10).find("nan") != std::string::npos, "NaN result -> Failed: " + reason(10));
    check(reason(14).find("rank 1 of the group (world rank ") != std::string::npos &&
              reason(14).find("report(step 2) where the group's leader reported step 1") != std::string::npos,
          "reports at different steps -> Failed, naming the rank and both steps: " + reason(14));
    check(reason(15).find("rank 1 of the group (world rank ") != std::string::npos &&
              reason(15).find("report(step 3) where the group's leader reported step 2") != std::string::npos,
          "reports at different steps, the exception caught -> Failed all the same: " + reason(15));
}

void test_stop() {
    // MpiOptions::stop: rank 0 stops the run from another thread (here the end-of-trial callback,
    // as a thread waiting for SIGTERM would), and every rank returns with nothing completed lost.
    const std::size_t max_jobs = 40;
    const int steps = 30;  // 10 ms apart: trials are in flight when the stop comes
    std::stop_source source;
    std::atomic<int> ended{0};
    ht::TunerOptions options{.max_jobs = max_jobs, .seed = 8, .progress = ht::ProgressBar::Never};
    options.on_trial_end = [&](const ht::TrialRecord&) {
        if (++ended == 3) source.request_stop();
    };
    ht::Result r = ht::mpi::fit(
        MPI_COMM_WORLD, make_space(), ht::RandomSearch({.max_resource = steps}), options,
        {.ranks_per_trial = 2, .stop = source.get_token()},
        [&](const ht::Config& cfg, ht::mpi::GroupTrial& trial, MPI_Comm group) {
            // The first three trials end at once; the others train until they are stopped.
            const int last = trial.id() < 3 ? 1 : steps;
            double v = 0.0;
            for (int step = 1; step <= last; ++step) {
                v = group_value(group, cfg.get<double>("x"), cfg.get<double>("y"), step);
                trial.report(step, v);
                if (trial.should_stop()) break;
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
            return v;
        });
    if (world_rank != 0) return;
    check(r.stop_reason() == "stopped by user", fmt::format("MpiOptions::stop stops the run: {}", r.stop_reason()));
    check(r.trials().size() < max_jobs, fmt::format("no new trial after the stop ({} of {})", r.trials().size(), max_jobs));
    std::size_t cut = 0;
    for (const auto& t : r.trials())
        if (t.status == ht::TrialStatus::Stopped && t.resource_used < steps) ++cut;
    check(r.count(ht::TrialStatus::Completed) >= 3 && cut >= 1 && r.count(ht::TrialStatus::Failed) == 0,
          fmt::format("the trials in flight were stopped ({}), the completed ones kept ({})", cut,
                      r.count(ht::TrialStatus::Completed)));
}

void test_checkpoints() {
    // Synchronous Hyperband pauses trials and resumes the promoted ones from their checkpoint.
    ht::TunerOptions options{.max_jobs = 13, .seed = 2, .progress = ht::ProgressBar::Never};
    int resumed = 0;       // on every rank: resumed runs that found the right checkpoint
    int bad_resumes = 0;
    ht::Result r = ht::mpi::fit(
        MPI_COMM_WORLD, make_space(), ht::Hyperband({.min_resource = 1, .max_resource = 9, .eta = 3,
                                                     .mode = ht::HyperbandMode::Synchronous}),
        options, {.ranks_per_trial = 2}, [&](const ht::Config& cfg, ht::mpi::GroupTrial& trial, MPI_Comm group) {
            double x = cfg.get<double>("x");
            double y = cfg.get<double>("y");
            int from = static_cast<int>(trial.resumed_from());
            if (from > 0) {
                if (trial.checkpoint() == fmt::format("trial {} epoch {}", trial.id(), from)) ++resumed;
                else ++bad_resumes;
            }
            double v = 0.0;
            for (int epoch = from + 1; epoch <= trial.budget(); ++epoch) {
                v = group_value(group, x, y, epoch);
                trial.report(epoch, v);
                if (trial.should_stop()) break;
                trial.save_checkpoint(fmt::format("trial {} epoch {}", trial.id(), epoch));
            }
            return v;
        });
    int all_resumed = 0;
    int all_bad = 0;
    MPI_Reduce(&resumed, &all_resumed, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bad_resumes, &all_bad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (world_rank != 0) return;
    check(r.count(ht::TrialStatus::Failed) == 0, fmt::format("synchronous Hyperband: no failure ({} trials)", r.trials().size()));
    // Counted on both ranks of each group.
    check(all_resumed > 0 && all_bad == 0,
          fmt::format("promoted trials resumed from the leader's checkpoint on every rank ({} rank-resumes, {} bad)",
                      all_resumed, all_bad));
}

}  // namespace

// With --funneled, MPI is initialised at MPI_THREAD_FUNNELED, which rank 0 cannot work with:
// fit() must refuse on every rank, before any trial.
int funneled_main(int provided) {
    std::string message;
    try {
        (void)ht::mpi::fit(MPI_COMM_WORLD, make_space(), ht::RandomSearch(), {.max_jobs = 2}, {.ranks_per_trial = 2},
                           [](const ht::Config&, ht::mpi::GroupTrial&) { return 0.0; });
    } catch (const ht::InvalidArgument& e) {
        message = e.what();
    }
    check(provided < MPI_THREAD_SERIALIZED, fmt::format("MPI provides thread level {} < SERIALIZED", provided));
    check(message.find("needs MPI_THREAD_SERIALIZED or better") != std::string::npos,
          fmt::format("a thread level below SERIALIZED is refused on every rank: '{}'", message));
    int any_failed = 0;
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (world_rank == 0) std::printf("%s\n", any_failed ? "FAILED" : "all passed");
    return any_failed ? 1 : 0;
}

int main(int argc, char** argv) {
    // --serialized: the whole suite at MPI_THREAD_SERIALIZED, the least rank 0 needs.
    const std::string mode = argc > 1 ? argv[1] : "";
    const bool funneled = mode == "--funneled";
    const int level = funneled ? MPI_THREAD_FUNNELED : mode == "--serialized" ? MPI_THREAD_SERIALIZED : MPI_THREAD_MULTIPLE;
    ht::mpi::Environment env(argc, argv, level);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (funneled) return funneled_main(env.provided());
    if (world_size < 3 || (world_size - 1) % 2 != 0) {
        if (world_rank == 0) std::printf("run with 1 + 2k ranks (k >= 1), e.g. mpirun -n 5\n");
        return 2;
    }
    const int groups = (world_size - 1) / 2;
    if (world_rank == 0)
        std::printf("hypertune::mpi tests: %d ranks, %d groups of 2, thread level %d (MPI_THREAD_MULTIPLE = %d)\n",
                    world_size, groups, env.provided(), MPI_THREAD_MULTIPLE);
    auto run = [&](const char* name, auto&& test) {
        auto t0 = std::chrono::steady_clock::now();
        try {
            test();
        } catch (const std::exception& e) {
            check(false, fmt::format("{} threw: {}", name, e.what()));
        }
        if (world_rank == 0)
            std::printf("  (%s: %.2fs)\n", name,
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    };
    if (world_size >= 4) run("bad layout", test_bad_layout);
    run("random search", [&] { test_random_search(groups); });
    if (groups >= 3) run("own parallel limit", [&] { test_own_parallel_limit(groups); });
    run("asha", [&] { test_asha(groups); });
    run("failures", test_failures);
    run("checkpoints", test_checkpoints);
    run("stop", test_stop);

    return finish_checks();
}
