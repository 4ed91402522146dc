// SPDX-License-Identifier: MIT
// What CommandObjective costs per trial: a trivial command (/bin/echo) run through it, against
// the same command started with a bare posix_spawn + waitpid.
#include <hypertune/command_objective.hpp>
#include <hypertune/search_space.hpp>

#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

extern char** environ;

namespace ht = hypertune;

namespace {

void BM_CommandObjectiveEcho(benchmark::State& state) {
    ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0)};
    auto config = space.make({0.5});
    ht::CommandObjective objective({"/bin/echo", "loss={x}"}, {.metrics = {{"loss", R"(loss=([0-9.eE+-]+))"}}});
    ht::TrialId id = 0;
    for (auto _ : state) {
        ht::Trial trial(id++, config, 1);
        benchmark::DoNotOptimize(objective(config, trial));
    }
}

void BM_BarePosixSpawnEcho(benchmark::State& state) {
    char program[] = "/bin/echo";
    char argument[] = "loss=0.5";
    char* argv[] = {program, argument, nullptr};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    for (auto _ : state) {
        pid_t pid = 0;
        if (posix_spawn(&pid, program, &actions, nullptr, argv, environ) != 0) state.SkipWithError("posix_spawn failed");
        int status = 0;
        waitpid(pid, &status, 0);
    }
    posix_spawn_file_actions_destroy(&actions);
}

}  // namespace

BENCHMARK(BM_CommandObjectiveEcho)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_BarePosixSpawnEcho)->Unit(benchmark::kMillisecond)->UseRealTime();
