#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""hypertune (Bayesian, RandomSearch) against Optuna 3.1 (TPE, Random) on the test functions of
test_functions.hpp / test_functions.py: median simple regret and IQR over seeds, and a PASS/MISS
column for the target (hypertune Bayesian's median <= TPE's on every row, and >= 10x lower on
branin and hartmann6 at 50 evaluations). See README.md.

  compare.py [--build DIR] [--quick] [--seeds N] [--budgets 50,200] [--functions a,b]
             [--save FILE] [--from FILE] [--check] [--overhead]

Runs at most 2 processes at once (--jobs), each single-threaded.
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import test_functions  # noqa: E402
from peer_runs import ENV, peer_binary, quantile, render, run_all, run_json_lines  # noqa: E402

COLUMNS = [("hypertune", "Bayesian"), ("hypertune", "Random"), ("optuna", "TPE"), ("optuna", "Random")]
HEADERS = ["ht Bayesian", "ht Random", "Optuna TPE", "Optuna Random"]
# Rows where Bayesian must be at least 10x better than TPE (ratio <= 0.1); elsewhere ratio <= 1.
STRICT = {("branin", 50), ("hartmann6", 50)}


def quality_jobs(binary, functions, budgets, seeds, chunk):
    """(weight, command) pairs: one per (library, sampler, function, block of seeds)."""
    jobs = []
    common = ["--budgets", ",".join(map(str, budgets))]
    cost = {"Bayesian": 3.0, "TPE": 2.0, "Random": 0.05}  # rough seconds at 200 trials: longest first
    for fn in functions:
        for first in range(1, seeds + 1, chunk):
            n = min(chunk, seeds + 1 - first)
            s = ["--functions", fn, "--seeds", str(n), "--first-seed", str(first)] + common
            for sampler in ("Bayesian", "Random"):
                jobs.append((cost[sampler] * n, [binary, "--samplers", sampler] + s))
            for sampler in ("TPE", "Random"):
                jobs.append((cost[sampler] * n + 0.5, [os.path.join(HERE, "optuna_peers.py"), "--samplers", sampler] + s))
    jobs.sort(key=lambda j: -j[0])
    return [command for _, command in jobs]


def fmt(x):
    return "-" if x is None else f"{x:.3g}"


def table(rows, functions, budgets):
    by = {}
    for r in rows:
        by.setdefault((r["library"], r["sampler"], r["function"], r["budget"]), []).append(r)
    lines = [["function", "budget", "seeds"] + [h + " median [IQR]" for h in HEADERS] +
             ["Bayes/TPE", "target", "result"]]
    timing = [["function", "budget"] + [h + " CPU s (wall)" for h in HEADERS]]
    misses = []
    for fn in functions:
        for b in budgets:
            cells, medians, seconds, n = [], {}, [], set()
            for lib, sampler in COLUMNS:
                got = by.get((lib, sampler, fn, b), [])
                regrets = sorted(r["regret"] for r in got)
                n.add(len(regrets))
                if not regrets:
                    cells.append("-")
                    seconds.append("-")
                    continue
                med = quantile(regrets, 0.5)
                medians[(lib, sampler)] = med
                cells.append(f"{fmt(med)} [{fmt(quantile(regrets, 0.25))}, {fmt(quantile(regrets, 0.75))}]")
                wall = sum(r["seconds"] for r in got) / len(got)
                cpu = sum(r.get("cpu_seconds", math.nan) for r in got) / len(got)
                seconds.append(f"{cpu:.3g} ({wall:.3g})")
            bayes, tpe = medians.get(("hypertune", "Bayesian")), medians.get(("optuna", "TPE"))
            target = 0.1 if (fn, b) in STRICT else 1.0
            if bayes is None or tpe is None:
                ratio, verdict = None, "-"
            else:
                ratio = 1.0 if bayes == tpe else (bayes / tpe if tpe > 0 else math.inf)
                verdict = "PASS" if ratio <= target else "MISS"
                if verdict == "MISS":
                    misses.append((fn, b, ratio, target))
            seeds = "/".join(str(k) for k in sorted(n))
            lines.append([fn, str(b), seeds] + cells + [fmt(ratio), f"<= {target:g}", verdict])
            timing.append([fn, str(b)] + seconds)
    return lines, timing, misses


def check(binary):
    """Both implementations give the same values (and noise) at random points, and the same minima."""
    functions = test_functions.functions()
    rng = random.Random(7)
    queries = []
    for fn in functions.values():
        for i in range(200):
            params = {}
            for spec in fn.space:
                name, kind = spec[0], spec[1]
                if kind == "categorical":
                    params[name] = rng.choice(spec[2])
                elif kind == "int":
                    params[name] = rng.randint(spec[2], spec[3])
                else:
                    lo, hi, log = spec[2], spec[3], spec[4]
                    params[name] = math.exp(rng.uniform(math.log(lo), math.log(hi))) if log else rng.uniform(lo, hi)
            queries.append({"function": fn.name, "params": params, "seed": rng.randint(0, 10**6), "index": i})
    done = subprocess.run([binary, "--evaluate"], input="".join(json.dumps(q) + "\n" for q in queries),
                          stdout=subprocess.PIPE, text=True, check=True)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    worst = 0.0
    for q, a in zip(queries, answers):
        fn = functions[q["function"]]
        for key, mine in (("value", fn.value(q["params"])), ("observed", fn.observe(q["params"], q["seed"], q["index"]))):
            worst = max(worst, abs(mine - a[key]) / max(1.0, abs(mine)))
    minima = {r["function"]: r["minimum"] for r in run_json_lines([binary, "--list"])}
    worst_min = max(abs(minima[name] - fn.minimum) for name, fn in functions.items())
    ok = len(answers) == len(queries) and worst < 1e-9 and worst_min < 1e-12
    print(f"check: {len(queries)} points, largest relative difference C++/Python {worst:.2g}; "
          f"minima differ by at most {worst_min:.2g}: {'OK' if ok else 'FAILED'}")
    for name, fn in functions.items():
        print(f"  {name}: minimum {fn.minimum!r}, noise sd {fn.noise}")
    return ok


def overhead(binary, build, trials, timed):
    """Per-trial ask + tell cost on the XGBoost space, run one after the other (not concurrently)."""
    counts = ",".join(map(str, trials))
    ht = {r["trials"]: r for r in run_json_lines([binary, "--overhead", "--trials", counts, "--timed", str(timed)])}
    op = {r["trials"]: r for r in run_json_lines([os.path.join(HERE, "optuna_overhead.py"),
                                                  "--trials", counts, "--timed", str(timed)])}
    lines = [["completed trials", "ht Bayesian CPU ms", "Optuna TPE CPU ms", "Bayesian/TPE (CPU)",
              "ht wall ms", "Optuna wall ms", "Bayesian/TPE (wall)"]]
    for n in trials:
        a, b = ht[n], op[n]
        lines.append([str(n), f"{a['cpu_ms_per_trial']:.3g}", f"{b['cpu_ms_per_trial']:.3g}",
                      f"{a['cpu_ms_per_trial'] / b['cpu_ms_per_trial']:.2f}",
                      f"{a['ms_per_trial']:.3g}", f"{b['ms_per_trial']:.3g}",
                      f"{a['ms_per_trial'] / b['ms_per_trial']:.2f}"])
    bench = os.path.join(build, "bench", "bench_bayesian")
    extra = ""
    if os.path.exists(bench):
        # Google Benchmark's figure for the same thing (10 iterations after 50, 200, 1,000 trials).
        done = subprocess.run([bench, "--benchmark_format=json"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True, env=ENV)
        if done.returncode == 0:
            runs = json.loads(done.stdout).get("benchmarks", [])
            extra = "bench_bayesian (10 iterations each): " + ", ".join(
                f"{r['name'].split('/')[1]} trials: "
                f"{r['real_time']:.3g} ms wall, {r['cpu_time']:.3g} ms CPU" for r in runs)
    return lines, extra


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="the CMake build directory holding bench/peers/peer_functions")
    ap.add_argument("--functions", default=",".join(test_functions.functions()))
    ap.add_argument("--budgets", default="50,200")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="smoke run: 3 seeds, budget 50")
    ap.add_argument("--jobs", type=int, default=2, help="processes at once (at most 2)")
    ap.add_argument("--chunk", type=int, default=10, help="seeds per process")
    ap.add_argument("--save", help="append every run's JSON line to this file")
    ap.add_argument("--from", dest="source", help="tabulate the JSON lines of this file instead of running")
    ap.add_argument("--markdown", action="store_true", help="print the tables in Markdown")
    ap.add_argument("--check", action="store_true", help="first check that C++ and Python functions agree")
    ap.add_argument("--overhead", action="store_true", help="also measure the per-trial cost on the XGBoost space")
    ap.add_argument("--overhead-only", action="store_true", help="only the per-trial cost")
    ap.add_argument("--overhead-trials", default="100,200,1000")
    ap.add_argument("--overhead-timed", type=int, default=20)
    args = ap.parse_args()
    if args.quick:
        args.seeds, args.budgets = 3, "50"
    functions = [f for f in args.functions.split(",") if f]
    budgets = sorted({int(b) for b in args.budgets.split(",") if b})
    unknown = set(functions) - set(test_functions.functions())
    if unknown:
        ap.error(f"unknown functions: {', '.join(sorted(unknown))}")
    workers = max(1, min(args.jobs, 2))
    start = time.perf_counter()

    if args.source:
        with open(args.source) as f:
            rows = [json.loads(line) for line in f if line.strip()]
    elif not args.overhead_only:
        binary = peer_binary(args.build, "peer_functions", "compare.py")
        if args.check and not check(binary):
            return 1
        commands = quality_jobs(binary, functions, budgets, args.seeds, max(1, args.chunk))
        print(f"running {len(commands)} jobs, {workers} at a time: {len(functions)} functions, budgets "
              f"{budgets}, {args.seeds} seeds", file=sys.stderr, flush=True)
        log = open(args.save, "a") if args.save else None
        try:
            rows = run_all(commands, workers, log)
        finally:
            if log:
                log.close()
    else:
        rows = []

    status = 0
    if rows:
        lines, timing, misses = table(rows, functions, budgets)
        print("Simple regret (f at the best observed point - f_min): median [25%, 75%] over seeds")
        print(render(lines, args.markdown))
        print()
        print("Mean seconds per run to that budget: CPU (wall); one single-threaded process, evaluations included")
        print(render(timing, args.markdown))
        print()
        rows_total = len(lines) - 1
        print(f"target: {rows_total - len(misses)} of {rows_total} rows PASS" +
              ("" if not misses else "; MISS: " + ", ".join(
                  f"{fn} @ {b} (ratio {fmt(r)}, needs <= {t:g})" for fn, b, r, t in misses)))
        status = 1 if misses else 0

    if args.overhead or args.overhead_only:
        binary = peer_binary(args.build, "peer_functions", "compare.py")
        trials = sorted({int(t) for t in args.overhead_trials.split(",") if t})
        print()
        print(f"Per-trial cost (ask + tell, mean of {args.overhead_timed} trials after N completed), "
              f"7-parameter XGBoost space")
        lines, extra = overhead(binary, args.build, trials, args.overhead_timed)
        print(render(lines, args.markdown))
        if extra:
            print(extra)

    print()
    print(f"total time {time.perf_counter() - start:.1f} s")
    return status


if __name__ == "__main__":
    sys.exit(main())
