// SPDX-License-Identifier: MIT
// Fault injection at scale, every strategy: the objective throws, returns NaN, hangs past its own
// time limit, reports repeated steps, NaN values and steps past its budget, or reports nothing
// (tests/stress/fault_injection.hpp has the plan), while another thread queries progress() all the
// time. Prints per strategy the outcome counts, whether every invariant of the stress tests held,
// the throughput, and memory: peak RSS during the run, RSS growth per trial (records included) and
// the heap the run held beyond its records at its end, per trial. Each strategy runs in a process of
// its own. Exits non-zero when an invariant was violated (listed on stderr).
//   harness_fault_injection [trials=100000] [threads=8] [bayesian_trials=1000]
#include "../tests/stress/fault_injection.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

#include <sys/wait.h>
#include <unistd.h>

namespace hs = hypertune::stress;

int main(int argc, char** argv) {
    const std::size_t trials = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100000;
    const std::size_t threads = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 8;
    const std::size_t bayesian_trials = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1000;
    if (trials < 1 || threads < 1 || bayesian_trials < 1) {
        fmt::print(stderr, "usage: {} [trials=100000] [threads=8] [bayesian_trials=1000]\n", argv[0]);
        return 2;
    }

    fmt::print("| strategy | trials | completed | failed | stopped | objective calls | invariants | wall (s) | "
               "trials/s | peak RSS (MB) | RSS growth / trial (B) | held beyond records / trial (B) |\n");
    fmt::print("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    int failed_rows = 0;
    for (const auto& c : hs::strategy_cases()) {
        // Each strategy runs in a child process of its own: the allocator's caches and the peak RSS
        // of one row do not leak into the next one's figures.
        std::fflush(stdout);
        pid_t child = ::fork();
        if (child < 0) {
            std::perror("fork");
            return 2;
        }
        if (child == 0) {
            hs::StressOptions o;
            o.trials = c.bayesian ? bayesian_trials : trials;
            o.parallel = threads;
            o.seed = 20240611;
            auto run = hs::run_stress(c, o);
            const auto& m = run.memory;
            const double n = static_cast<double>(run.trials);
            fmt::print("| {} | {} | {} | {} | {} | {} | {} | {:.2f} | {:.0f} | {:.1f} | {:.0f} | {:.0f} |\n", c.name,
                       run.trials, run.completed, run.failed, run.stopped, run.calls,
                       run.violations.empty() ? "OK" : fmt::format("{} violated", run.violations.size()),
                       run.wall_seconds, n / run.wall_seconds, static_cast<double>(m.peak_rss) / (1024.0 * 1024.0),
                       (static_cast<double>(m.rss_at_end) - static_cast<double>(m.rss_before)) / n,
                       (static_cast<double>(m.heap_at_end) - static_cast<double>(m.heap_result_only)) / n);
            for (const auto& v : run.violations) fmt::print(stderr, "{}: violated: {}\n", c.name, v);
            std::fflush(stdout);
            std::fflush(stderr);
            ::_exit(run.violations.empty() ? 0 : 1);
        }
        int status = 0;
        ::waitpid(child, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed_rows;
    }
    return failed_rows == 0 ? 0 : 1;
}
