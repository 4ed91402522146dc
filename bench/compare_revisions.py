#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The hot-path figures of this checkout against another revision's, in one run.

Builds the baseline revision's benchmarks in a temporary git worktree, then runs each benchmark
of both builds in turn (old, new, old, new, ...) for --rounds rounds, so that the machine's drift
affects both alike, and prints the median of each figure and the ratio new/old:

- ask + tell per trial of RandomSearch and GridSearch (bench_strategy_overhead, seconds);
- per decision of asynchronous and synchronous Hyperband and ASHA, stop type and promotion type
  (bench_multifidelity_overhead);
- no-op trials per second of the Tuner on 1, 2 and 4 threads (bench_tuner);
- wall / ideal for 10,000 trials of 5 ms on 8 workers (harness_scheduling).

    bench/compare_revisions.py --build build [--baseline 29e145d] [--rounds 3] [--best] [--cpu 1]

--build is this checkout's build directory, with the benchmarks built (cmake -P cmake/test.cmake).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

TARGETS = ["bench_strategy_overhead", "bench_multifidelity_overhead", "bench_tuner", "harness_scheduling"]


PIN = []  # ["taskset", "-c", N] with --cpu N: every run on one core, away from the scheduler's moves


def run_benchmark(binary, bench_filter, field, pin=True):
    """{name: value} of one Google Benchmark run; `field` is a counter or a top-level key."""
    out = subprocess.run([*(PIN if pin else []), binary, "--benchmark_format=json", f"--benchmark_filter={bench_filter}"],
                         check=True, capture_output=True, text=True).stdout
    figures = {}
    for b in json.loads(out)["benchmarks"]:
        if field in b:
            figures[b["name"]] = float(b[field])
    return figures


def run_scheduling(binary):
    out = subprocess.run([binary, "10000", "5", "8"], check=True, capture_output=True, text=True).stdout  # 8 threads: not pinned
    rows = [line for line in out.splitlines() if line.startswith("| 10000")]
    cells = [c.strip() for c in rows[-1].strip("|").split("|")]
    return {"harness_scheduling 10000 x 5 ms, P = 8: wall / ideal": float(cells[6])}


def figures(bench_dir):
    f = {}
    for name, v in run_benchmark(os.path.join(bench_dir, "bench_strategy_overhead"), ".", "per_trial").items():
        f[f"{name}: ask + tell per trial (s)"] = v
    for name, v in run_benchmark(os.path.join(bench_dir, "bench_multifidelity_overhead"),
                                 "^BM_(HyperbandAsync|HyperbandSync|ASHA|ASHAPromotion|HyperbandPromotion)/",
                                 "per_decision").items():
        f[f"{name}: per decision (s)"] = v
    for name, v in run_benchmark(os.path.join(bench_dir, "bench_tuner"), "^BM_TunerNoOp/", "items_per_second",
                                 pin=False).items():  # 1, 2 and 4 threads
        f[f"{name}: no-op trials per second"] = v
    f.update(run_scheduling(os.path.join(bench_dir, "harness_scheduling")))
    return f


def build_baseline(top, revision, where):
    subprocess.run(["git", "-C", top, "worktree", "add", "--detach", where, revision], check=True,
                   capture_output=True)
    build = os.path.join(where, "build")
    subprocess.run(["cmake", "-S", where, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DHYPERTUNE_BUILD_TESTS=OFF",
                    "-DHYPERTUNE_BUILD_EXAMPLES=OFF", "-DHYPERTUNE_BUILD_BENCH=ON"], check=True, capture_output=True)
    subprocess.run(["cmake", "--build", build, "--parallel", "2", "--target", *TARGETS], check=True,
                   capture_output=True)
    return os.path.join(build, "bench")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", required=True, help="this checkout's build directory")
    parser.add_argument("--baseline", default="29e145d", help="the revision to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--best", action="store_true",
                        help="the best round of each figure (fastest time, highest rate) instead of the median: "
                             "on a shared machine, noise only ever slows a run down")
    parser.add_argument("--cpu", type=int, help="pin the single-threaded benchmarks to this core (taskset)")
    args = parser.parse_args()
    if args.cpu is not None:
        PIN[:] = ["taskset", "-c", str(args.cpu)]
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], check=True, capture_output=True,
                         text=True).stdout.strip()
    new_dir = os.path.join(os.path.abspath(args.build), "bench")
    with tempfile.TemporaryDirectory() as tmp:
        where = os.path.join(tmp, "baseline")
        try:
            old_dir = build_baseline(top, args.baseline, where)
            old_runs, new_runs = [], []
            for _ in range(args.rounds):
                old_runs.append(figures(old_dir))
                new_runs.append(figures(new_dir))
        finally:
            subprocess.run(["git", "-C", top, "worktree", "remove", "--force", where], capture_output=True)
    def summary(key, runs):
        values = [r[key] for r in runs]
        if not args.best:
            return statistics.median(values)
        return max(values) if key.endswith("per second") else min(values)

    how = f"best of {args.rounds}" if args.best else f"median of {args.rounds}"
    print(f"| figure | {args.baseline} ({how}) | this checkout | new / old |")
    print("|---|---|---|---|")
    for key in new_runs[0]:
        if not all(key in r for r in old_runs + new_runs):
            continue
        old = summary(key, old_runs)
        new = summary(key, new_runs)
        print(f"| {key} | {old:.4g} | {new:.4g} | {new / old:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
