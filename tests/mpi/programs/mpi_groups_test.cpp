// SPDX-License-Identifier: MIT
// Tests of hypertune::mpi::fit with the worker count as a hyperparameter (MpiOptions::ranks_parameter),
// run under mpirun (ctest: -n 5 and -n 7, so 4 and 6 training ranks; workers in {1, 2, 4}). Prints
// one line per check on rank 0, then "N passed, M failed"; the exit code is non-zero on any failure.
//
// What is checked: the coordinator's timeline of rank allocations (replayed here, independently of
// the pool): no rank idle while a waiting trial fits, except behind a trial that holds the queue
// after max_overtakes; every trial ran on exactly its rank count of distinct free ranks, the very
// ranks its objective saw (each group's leader records them from its communicator); billable =
// elapsed x ranks; rank utilisation; Metrics objectives; ASHA and checkpoints across groups of
// changing sizes; and bad rank parameters refused with the same named error on every rank.

#include <hypertune/hypertune.hpp>
#include <hypertune/mpi.hpp>
#include <hypertune/strategies/asha.hpp>
#include <hypertune/strategies/hyperband.hpp>

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "mpi_checks.hpp"

namespace ht = hypertune;

namespace {

int training_ranks() { return world_size - 1; }

ht::SearchSpace workers_space() {
    ht::SearchSpace space;
    space.add(ht::ContinuousParameter("x", -1.0, 1.0));
    space.add(ht::CategoricalParameter("workers", {"1", "2", "4"}));
    return space;
}

int workers_of(const ht::Config& cfg) { return std::stoi(cfg.get<std::string>("workers")); }

// The group's world ranks, read from its communicator (not from the library's bookkeeping).
std::vector<int> ranks_of(MPI_Comm group) {
    MPI_Group g = MPI_GROUP_NULL;
    MPI_Group w = MPI_GROUP_NULL;
    MPI_Comm_group(group, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    int n = 0;
    MPI_Group_size(g, &n);
    std::vector<int> in(static_cast<std::size_t>(n));
    std::vector<int> out(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) in[static_cast<std::size_t>(i)] = i;
    MPI_Group_translate_ranks(g, n, in.data(), w, out.data());
    MPI_Group_free(&g);
    MPI_Group_free(&w);
    return out;
}

// Each leader's record of the trials its group ran: trial id, then its ranks; gathered on rank 0.
struct RanRecords {
    std::vector<long long> mine;  // id, n, rank...
    void add(ht::TrialId id, const std::vector<int>& ranks) {
        mine.push_back(static_cast<long long>(id));
        mine.push_back(static_cast<long long>(ranks.size()));
        for (int r : ranks) mine.push_back(r);
    }
    // On rank 0: every run of every trial, in no particular order.
    std::multimap<ht::TrialId, std::vector<int>> gather() const {
        int n = static_cast<int>(mine.size());
        std::vector<int> counts(static_cast<std::size_t>(world_size));
        MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
        std::vector<int> displs(static_cast<std::size_t>(world_size), 0);
        for (std::size_t i = 1; i < displs.size(); ++i) displs[i] = displs[i - 1] + counts[i - 1];
        std::vector<long long> all(world_rank == 0 ? static_cast<std::size_t>(displs.back() + counts.back()) : 0);
        MPI_Gatherv(mine.data(), n, MPI_LONG_LONG, all.data(), counts.data(), displs.data(), MPI_LONG_LONG, 0,
                    MPI_COMM_WORLD);
        std::multimap<ht::TrialId, std::vector<int>> out;
        for (std::size_t i = 0; i < all.size();) {
            auto id = static_cast<ht::TrialId>(all[i]);
            auto k = static_cast<std::size_t>(all[i + 1]);
            std::vector<int> ranks(all.begin() + static_cast<long>(i + 2), all.begin() + static_cast<long>(i + 2 + k));
            out.emplace(id, ranks);
            i += 2 + k;
        }
        return out;
    }
};

// Replays the coordinator's timeline and checks the packing rule; returns the busy rank-seconds.
struct TimelineCheck {
    bool consistent = true;          // starts on free, distinct ranks of the wanted count; ends match
    int idle_while_fits = 0;         // decisions after which a waiting trial fitting the free ranks waited
    std::size_t most_overtaken = 0;  // the most times a waiting trial was overtaken
    int holds = 0;
    double busy = 0.0;
    std::string first_problem;
    std::map<ht::TrialId, std::vector<std::vector<int>>> starts;  // ranks of each run
};

TimelineCheck replay(const ht::mpi::RankUsage& u, int max_overtakes) {
    TimelineCheck c;
    std::set<int> free;
    for (int r = 1; r <= u.training_ranks; ++r) free.insert(r);
    struct Waiting {
        ht::TrialId trial;
        int wanted;
        std::size_t overtaken;
    };
    std::vector<Waiting> waiting;
    std::map<ht::TrialId, std::pair<double, std::vector<int>>> running;
    auto problem = [&](const std::string& what) {
        c.consistent = false;
        if (c.first_problem.empty()) c.first_problem = what;
    };
    auto check_rule = [&](double t) {
        for (std::size_t i = 0; i < waiting.size(); ++i) {
            if (waiting[i].wanted > static_cast<int>(free.size())) continue;
            bool behind_hold = false;
            for (std::size_t j = 0; j < i; ++j)
                behind_hold = behind_hold || (max_overtakes >= 0 && waiting[j].overtaken >= static_cast<std::size_t>(max_overtakes));
            if (!behind_hold) {
                ++c.idle_while_fits;
                if (c.first_problem.empty())
                    c.first_problem = fmt::format("at {:.3f} s trial {} wants {} ranks and {} are free", t,
                                                  waiting[i].trial, waiting[i].wanted, free.size());
            }
        }
    };
    for (const auto& e : u.timeline) {
        using K = ht::mpi::RankEvent::Kind;
        if (e.kind == K::Wait || e.kind == K::End) check_rule(e.seconds);  // the previous decision's outcome
        auto w = std::find_if(waiting.begin(), waiting.end(), [&](const Waiting& x) { return x.trial == e.trial; });
        switch (e.kind) {
            case K::Wait: waiting.push_back({e.trial, e.wanted, 0}); break;
            case K::Start: {
                if (w == waiting.end()) {
                    problem(fmt::format("trial {} starts without waiting", e.trial));
                    break;
                }
                std::set<int> distinct(e.ranks.begin(), e.ranks.end());
                if (static_cast<int>(e.ranks.size()) != w->wanted || distinct.size() != e.ranks.size())
                    problem(fmt::format("trial {} wants {} ranks, got {}", e.trial, w->wanted, e.ranks.size()));
                for (int r : e.ranks)
                    if (!free.erase(r)) problem(fmt::format("trial {} got rank {}, which is not free", e.trial, r));
                for (auto older = waiting.begin(); older != w; ++older)
                    c.most_overtaken = std::max(c.most_overtaken, ++older->overtaken);
                waiting.erase(w);
                running[e.trial] = {e.seconds, e.ranks};
                c.starts[e.trial].push_back(e.ranks);
                break;
            }
            case K::End: {
                auto it = running.find(e.trial);
                if (it == running.end() || it->second.second != e.ranks) {
                    problem(fmt::format("trial {} ends on ranks it did not start on", e.trial));
                    break;
                }
                c.busy += static_cast<double>(e.ranks.size()) * (e.seconds - it->second.first);
                for (int r : e.ranks) free.insert(r);
                running.erase(it);
                break;
            }
            case K::Hold:
                ++c.holds;
                if (w == waiting.end() || max_overtakes < 0 || w->overtaken < static_cast<std::size_t>(max_overtakes))
                    problem(fmt::format("trial {} holds the queue before it was overtaken {} times", e.trial, max_overtakes));
                break;
        }
    }
    check_rule(u.wall_seconds);
    if (!waiting.empty() || !running.empty()) problem("trials still waiting or running at the end");
    return c;
}

void test_bad_parameters() {
    const int t = training_ranks();
    auto message_of = [](const ht::SearchSpace& space, ht::mpi::MpiOptions m, ht::TunerOptions o = {.max_jobs = 2}) {
        try {
            (void)ht::mpi::fit(MPI_COMM_WORLD, space, ht::RandomSearch(), o, m,
                               [](const ht::Config&, ht::mpi::GroupTrial&) { return 0.0; });
        } catch (const ht::InvalidArgument& e) {
            return std::string(e.what());
        }
        return std::string("(accepted)");
    };
    auto space_with = [](auto workers) {
        ht::SearchSpace s;
        s.add(ht::ContinuousParameter("x", -1.0, 1.0));
        s.add(workers);
        return s;
    };
    struct Case {
        std::string what;
        std::string message;
        std::string expected;
    };
    std::vector<Case> cases = {
        {"a missing parameter", message_of(space_with(ht::IntegerParameter("n", 1, 2)), {.ranks_parameter = "workers"}),
         "mpi::fit: ranks_parameter 'workers': 'workers' is not a parameter of the search space (it has: x, n)"},
        {"a continuous parameter", message_of(space_with(ht::ContinuousParameter("workers", 1.0, 2.0)), {.ranks_parameter = "workers"}),
         "mpi::fit: ranks_parameter 'workers': parameter 'workers' must be integer-valued"},
        {"a value that is no integer",
         message_of(space_with(ht::CategoricalParameter("workers", {"1", "two"})), {.ranks_parameter = "workers"}),
         "parameter 'workers' must be integer-valued (an integer parameter, or a categorical one whose values are "
         "integers such as {\"1\", \"2\", \"4\"}): its value \"two\" is not an integer"},
        {"a value < 1", message_of(space_with(ht::CategoricalParameter("workers", {"0", "1"})), {.ranks_parameter = "workers"}),
         "mpi::fit: ranks_parameter 'workers': parameter 'workers' can take the value 0; every value must be >= 1"},
        {"a categorical value above the training ranks",
         message_of(space_with(ht::CategoricalParameter("workers", {"1", "2", std::to_string(t + 1)})),
                    {.ranks_parameter = "workers"}),
         fmt::format("mpi::fit: ranks_parameter 'workers': parameter 'workers' can take the value {}, more than {} (the "
                     "training ranks: world size {} minus rank 0, the coordinator)",
                     t + 1, t, world_size)},
        {"an integer range beyond the training ranks",
         message_of(space_with(ht::IntegerParameter("workers", 1, t + 2)), {.ranks_parameter = "workers"}),
         fmt::format("parameter 'workers' can take the value {}, more than {}", t + 2, t)},
        {"both ranks_per_trial and ranks_parameter",
         message_of(workers_space(), {.ranks_per_trial = 2, .ranks_parameter = "workers"}),
         "mpi::fit: ranks_per_trial = 2 and ranks_parameter = 'workers': give one of them"},
        {"a run with two objectives and an objective returning a number",
         message_of(workers_space(), {.ranks_parameter = "workers"},
                    {.objectives = {{"objective", ht::Direction::Minimize}, {"rank_seconds", ht::Direction::Minimize}},
                     .max_jobs = 2}),
         "mpi::fit: the run has metrics objective, rank_seconds: the objective must return hypertune::Metrics"},
    };
    for (const auto& c : cases)
        check(c.message.find(c.expected) != std::string::npos,
              fmt::format("{} is refused on every rank: '{}'", c.what, c.message));
    check(message_of(space_with(ht::IntegerParameter("workers", 1, t)), {.ranks_parameter = "workers"}) == "(accepted)",
          fmt::format("an integer parameter in [1, {}] is accepted", t));
}

// Random search over x and workers; each trial sleeps a time that depends on x, so groups of
// different sizes start and end at different times.
void test_packing(int max_overtakes, std::uint64_t seed) {
    const std::size_t max_jobs = world_size > 5 ? 30 : 24;
    RanRecords records;
    ht::mpi::MpiResult r = ht::mpi::fit(
        MPI_COMM_WORLD, workers_space(), ht::RandomSearch(),
        {.max_jobs = max_jobs, .seed = seed, .progress = ht::ProgressBar::Never},
        {.ranks_parameter = "workers", .max_overtakes = max_overtakes},
        [&](const ht::Config& cfg, ht::mpi::GroupTrial& trial, MPI_Comm group) {
            const auto ranks = ranks_of(group);
            if (static_cast<int>(ranks.size()) != workers_of(cfg))
                throw std::runtime_error(fmt::format("group of {} ranks for workers = {}", ranks.size(), workers_of(cfg)));
            if (ranks != trial.world_ranks()) throw std::runtime_error("world_ranks() differs from the communicator");
            if (trial.is_leader()) records.add(trial.id(), ranks);
            const double x = cfg.get<double>("x");
            std::this_thread::sleep_for(std::chrono::milliseconds(15 + static_cast<int>(40 * (x + 1.0))));
            double one = 1.0;
            double n = 0.0;
            MPI_Allreduce(&one, &n, 1, MPI_DOUBLE, MPI_SUM, group);  // every rank of the group takes part
            return x * x + n;
        });
    const auto ran = records.gather();
    if (world_rank != 0) return;
    const std::string tag = fmt::format("[max_overtakes {}] ", max_overtakes);
    check(r.count(ht::TrialStatus::Completed) == max_jobs,
          tag + fmt::format("all {} trials completed ({} failed{})", max_jobs, r.count(ht::TrialStatus::Failed),
                            r.count(ht::TrialStatus::Failed) ? ": " + r.trials().front().failure_reason : std::string()));
    check(r.setup().max_parallel_jobs == static_cast<std::size_t>(training_ranks()),
          tag + fmt::format("max_parallel_jobs = the {} training ranks", training_ranks()));
    bool billed = true;
    bool values = true;
    std::map<int, int> sizes;
    for (const auto& t : r.trials()) {
        const int w = workers_of(t.config);
        ++sizes[w];
        billed = billed && t.instances == w && std::abs(t.billable_seconds - w * t.elapsed_seconds) <= 1e-9 * t.billable_seconds;
        const double x = t.config.get<double>("x");
        values = values && std::abs(t.objective - (x * x + w)) < 1e-12;
    }
    check(billed, tag + "every trial's billable time = elapsed x its own rank count (TrialRecord::instances)");
    check(values, tag + "every value shows all ranks of its group in the Allreduce");
    check(sizes.size() == 3, tag + fmt::format("groups of 1, 2 and 4 ranks ran ({} / {} / {} trials)", sizes[1], sizes[2], sizes[4]));

    const auto& u = r.rank_usage();
    const TimelineCheck c = replay(u, max_overtakes);
    check(c.consistent, tag + "the timeline is consistent: each run started on free, distinct ranks of its count" +
                            (c.first_problem.empty() ? "" : ": " + c.first_problem));
    check(c.idle_while_fits == 0,
          tag + fmt::format("no rank idle while a waiting trial fits, except behind a held trial ({} holds){}", c.holds,
                            c.idle_while_fits ? ": " + c.first_problem : std::string()));
    check(max_overtakes < 0 || c.most_overtaken <= static_cast<std::size_t>(max_overtakes),
          tag + fmt::format("no waiting trial overtaken more than max_overtakes times (most: {})", c.most_overtaken));
    // Every trial is accounted for, on the ranks its objective saw.
    bool same_ranks = c.starts.size() == max_jobs && ran.size() == max_jobs;
    for (const auto& [id, runs] : c.starts) {
        auto [lo, hi] = ran.equal_range(id);
        same_ranks = same_ranks && runs.size() == 1 && std::distance(lo, hi) == 1 && lo->second == runs.front();
    }
    check(same_ranks, tag + fmt::format("each of the {} trials ran once, on exactly the ranks the timeline gave it", max_jobs));
    check(std::abs(c.busy - u.busy_rank_seconds) < 1e-9 * std::max(1.0, c.busy) && u.runs == max_jobs,
          tag + fmt::format("busy rank-seconds {:.3f} = the timeline's sum", u.busy_rank_seconds));
    const double util = u.busy_rank_seconds / (training_ranks() * u.wall_seconds);
    check(u.training_ranks == training_ranks() && u.utilisation > 0.0 && u.utilisation <= 1.0 &&
              std::abs(u.utilisation - util) < 1e-12,
          tag + fmt::format("rank utilisation reported: {}", u.summary()));
}

// Two objectives: accuracy (maximised) against rank-seconds (minimised), measured by the group.
void test_metrics() {
    const std::size_t max_jobs = 16;
    ht::TunerOptions options{.objectives = {{"accuracy", ht::Direction::Maximize}, {"rank_seconds", ht::Direction::Minimize}},
                             .max_jobs = max_jobs, .seed = 8, .progress = ht::ProgressBar::Never};
    options.metric = "accuracy";
    options.direction = ht::Direction::Maximize;
    ht::mpi::MpiResult r = ht::mpi::fit(
        MPI_COMM_WORLD, workers_space(), ht::RandomSearch(), options, {.ranks_parameter = "workers"},
        [&](const ht::Config& cfg, ht::mpi::GroupTrial& trial, MPI_Comm group) {
            auto t0 = std::chrono::steady_clock::now();
            // More workers: a better model in the same time here, at more rank-seconds.
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            const double x = cfg.get<double>("x");
            const double accuracy = 0.9 - 0.1 * x * x + 0.01 * trial.size();
            double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            double longest = 0.0;
            MPI_Allreduce(&seconds, &longest, 1, MPI_DOUBLE, MPI_MAX, group);
            return ht::Metrics{{"accuracy", accuracy}, {"rank_seconds", trial.size() * longest}};
        });
    if (world_rank != 0) return;
    check(r.count(ht::TrialStatus::Completed) == max_jobs,
          fmt::format("Metrics objective: {} of {} trials completed", r.count(ht::TrialStatus::Completed), max_jobs));
    bool ok = true;
    for (const auto& t : r.trials()) {
        const int w = workers_of(t.config);
        ok = ok && t.values.size() == 2 && t.values[1] >= w * 0.02 && t.values[1] <= t.billable_seconds + 0.05 &&
             std::abs(t.values[0] - (0.9 - 0.1 * std::pow(t.config.get<double>("x"), 2) + 0.01 * w)) < 1e-12;
    }
    check(ok, "each trial's accuracy and rank-seconds came from its group (rank-seconds <= billable)");
    const auto front = r.pareto_front();
    check(!front.empty(), fmt::format("the Pareto front of accuracy vs rank-seconds has {} trials", front.size()));
}

// should_stop() turns true on every rank of a group at max_trial_seconds and at
// max_runtime_seconds, between reports too, as in process: an objective that polls it and reports
// nothing stops in time, and its trial is cut short (Stopped).
void test_time_limits() {
    for (const bool per_trial : {true, false}) {
        ht::TunerOptions options{.max_jobs = 4, .seed = 9, .progress = ht::ProgressBar::Never};
        if (per_trial) options.max_trial_seconds = 0.3;
        else options.max_runtime_seconds = 0.3;
        int late = 0;  // this rank's trials whose should_stop() was still false after 5 s
        ht::mpi::MpiResult r = ht::mpi::fit(
            MPI_COMM_WORLD, workers_space(), ht::RandomSearch(), options, {.ranks_parameter = "workers"},
            [&](const ht::Config& cfg, ht::mpi::GroupTrial& trial, MPI_Comm) {
                const auto t0 = std::chrono::steady_clock::now();
                while (!trial.should_stop()) {
                    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(5)) {
                        ++late;
                        break;
                    }
                    std::this_thread::sleep_for(std::chrono::milliseconds(5));
                }
                return cfg.get<double>("x");
            });
        const std::string tag = per_trial ? "max_trial_seconds" : "max_runtime_seconds";
        check(late == 0, tag + ": should_stop() turned true on this rank between reports");
        if (world_rank != 0) continue;
        const bool all_cut = !r.trials().empty() && std::all_of(r.trials().begin(), r.trials().end(), [](const auto& t) {
            return t.status == ht::TrialStatus::Stopped;
        });
        check(all_cut, fmt::format("{}: each of the {} trials cut short (Stopped)", tag, r.trials().size()));
    }
}

// ASHA stops trials of every size mid-way; synchronous Hyperband resumes paused trials from the
// leader's checkpoint, on whichever ranks are free then.
void test_asha_and_checkpoints() {
    int bad = 0;
    int resumed = 0;
    for (int strategy = 0; strategy < 2; ++strategy) {
        ht::AnyStrategy s = strategy == 0 ? ht::AnyStrategy(ht::ASHA({.min_resource = 1, .max_resource = 9, .reduction_factor = 3}))
                                          : ht::AnyStrategy(ht::Hyperband({.min_resource = 1, .max_resource = 9, .eta = 3,
                                                                           .mode = ht::HyperbandMode::Synchronous}));
        ht::mpi::MpiResult r = ht::mpi::fit(
            MPI_COMM_WORLD, workers_space(), std::move(s), {.max_jobs = 14, .seed = 5, .progress = ht::ProgressBar::Never},
            {.ranks_parameter = "workers"}, [&](const ht::Config& cfg, ht::mpi::GroupTrial& trial, MPI_Comm group) {
                const int from = static_cast<int>(trial.resumed_from());
                if (from > 0) {
                    if (trial.checkpoint() == fmt::format("trial {} epoch {}", trial.id(), from)) ++resumed;
                    else ++bad;
                }
                const double x = cfg.get<double>("x");
                double v = 0.0;
                for (int epoch = from + 1; epoch <= trial.budget(); ++epoch) {
                    double part = (x * x + 1.0 / epoch) / trial.size();
                    MPI_Allreduce(&part, &v, 1, MPI_DOUBLE, MPI_SUM, group);
                    trial.report(epoch, v);
                    if (trial.should_stop()) break;
                    trial.save_checkpoint(fmt::format("trial {} epoch {}", trial.id(), epoch));
                    std::this_thread::sleep_for(std::chrono::milliseconds(2));
                }
                return v;
            });
        if (world_rank == 0) {
            const char* name = strategy == 0 ? "ASHA" : "synchronous Hyperband";
            check(r.count(ht::TrialStatus::Failed) == 0 && !r.trials().empty(),
                  fmt::format("{} with groups of 1, 2 and 4: {} trials, none failed ({} stopped)", name, r.trials().size(),
                              r.count(ht::TrialStatus::Stopped)));
            const TimelineCheck c = replay(r.rank_usage(), 8);
            check(c.consistent && c.idle_while_fits == 0,
                  fmt::format("{}: the packing rule holds over {} runs{}", name, r.rank_usage().runs,
                              c.first_problem.empty() ? "" : ": " + c.first_problem));
        }
    }
    int totals[2] = {0, 0};
    int mine[2] = {resumed, bad};
    MPI_Reduce(mine, totals, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (world_rank == 0)
        check(totals[0] > 0 && totals[1] == 0,
              fmt::format("paused trials resumed from the leader's checkpoint on every rank of their new group ({} "
                          "rank-resumes, {} bad)",
                          totals[0], totals[1]));
}

}  // namespace

int main(int argc, char** argv) {
    ht::mpi::Environment env(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (world_size < 5) {
        if (world_rank == 0) std::printf("run with at least 5 ranks (groups of up to 4), e.g. mpirun -n 5\n");
        return 2;
    }
    if (world_rank == 0)
        std::printf("hypertune::mpi groups tests: %d ranks, %d training, workers in {1, 2, 4}\n", world_size,
                    training_ranks());
    auto run = [&](const char* name, auto&& test) {
        auto t0 = std::chrono::steady_clock::now();
        try {
            test();
        } catch (const std::exception& e) {
            check(false, fmt::format("{} threw: {}", name, e.what()));
        }
        if (world_rank == 0)
            std::printf("  (%s: %.2fs)\n", name, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    };
    run("bad parameters", test_bad_parameters);
    run("packing, default max_overtakes", [] { test_packing(8, 3); });
    run("packing, first come first served", [] { test_packing(0, 4); });
    run("packing, pure backfilling", [] { test_packing(-1, 5); });
    run("metrics", test_metrics);
    run("asha and checkpoints", test_asha_and_checkpoints);
    run("time limits between reports", test_time_limits);

    return finish_checks();
}
