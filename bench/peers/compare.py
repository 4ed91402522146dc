#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""hypertune (Bayesian, RandomSearch) against Optuna 3.1 (TPE, CMA-ES, Random) and dlib's MaxLIPO+TR
on the test functions of test_functions.hpp / test_functions.py: median simple regret and IQR over
seeds, the median share of trials with a parameter on a bound of its range, and a PASS/MISS
column for the targets: hypertune Bayesian's median regret at or below TPE's and CMA-ES's on every
row, at most 10% of its trials on a bound where no optimum lies on one, and the best of TPE,
CMA-ES and dlib on at least half of the rows. See README.md.

  compare.py [--build DIR] [--quick] [--seeds N] [--first-seed S] [--budgets 50,200] [--functions a,b] [--jobs 2]
             [--save FILE] [--from FILE] [--check] [--markdown] [--overhead]

Runs at most 2 processes at once (--jobs), each single-threaded. dlib's column needs
<build>/bench/peers/peer_dlib (built when libdlib-dev is installed); without it the column is empty.
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

BAYES, TPE, CMA, DLIB = ("hypertune", "Bayesian"), ("optuna", "TPE"), ("optuna", "CmaEs"), ("dlib", "LIPO")
COLUMNS = [BAYES, ("hypertune", "Random"), TPE, CMA, ("optuna", "Random"), DLIB]
HEADERS = ["ht Bayesian", "ht Random", "Optuna TPE", "Optuna CMA-ES", "Optuna Random", "dlib LIPO"]
BOUND_TARGET = 0.10  # at most this share of Bayesian's trials on a bound, where no optimum is on one
# Optuna's CMA-ES cannot sample categorical parameters: its independent sampler (random) does.
CMA_NOTE = {"mixed4": " (kind: random)", "mixed6": " (optimizer, activation: random)"}


def quality_jobs(binary, dlib_binary, functions, budgets, seeds, chunk, first_seed=1):
    """Commands, one per (library, sampler, function, block of seeds), the longest first."""
    jobs = []
    common = ["--budgets", ",".join(map(str, budgets))]
    dims = {name: len(fn.space) for name, fn in test_functions.functions().items()}
    # rough CPU seconds of one run to 200 trials in d dimensions
    cost = {"Bayesian": lambda d: 3.0, "ht Random": lambda d: 0.01, "TPE": lambda d: 1.0 * d,
            "CmaEs": lambda d: 0.5, "Random": lambda d: 0.3, "LIPO": lambda d: 0.1 * d}
    for fn in functions:
        d = dims[fn]
        for first in range(first_seed, first_seed + seeds, chunk):
            n = min(chunk, first_seed + seeds - first)
            s = ["--functions", fn, "--seeds", str(n), "--first-seed", str(first)] + common
            jobs.append((cost["Bayesian"](d) * n, [binary, "--samplers", "Bayesian"] + s))
            jobs.append((cost["ht Random"](d) * n, [binary, "--samplers", "Random"] + s))
            for sampler in ("TPE", "CmaEs", "Random"):
                jobs.append((cost[sampler](d) * n + 0.5,
                             [os.path.join(HERE, "optuna_peers.py"), "--samplers", sampler] + s))
            if dlib_binary:
                jobs.append((cost["LIPO"](d) * n, [dlib_binary, "--samplers", "LIPO"] + s))
    jobs.sort(key=lambda j: -j[0])
    return [command for _, command in jobs]


def fmt(x):
    return "-" if x is None else f"{x:.3g}"


def optimum_on_bound(fn):
    return any(test_functions.on_bound(o, fn.space) for o in fn.optima)


def table(rows, functions, budgets):
    """The regret table (with the targets), the bound-share table and the timing table."""
    by = {}
    for r in rows:
        by.setdefault((r["library"], r["sampler"], r["function"], r["budget"]), []).append(r)
    known = test_functions.functions()
    lines = [["function", "budget", "seeds"] + [h + " median [IQR]" for h in HEADERS] +
             ["Bayes on bound", "Bayes <= TPE", "Bayes <= CMA-ES", "best of TPE/CMA-ES/dlib", "result"]]
    bounds = [["function", "budget", "optimum on a bound"] + HEADERS]
    timing = [["function", "budget"] + [h + " CPU s (wall)" for h in HEADERS]]
    misses, best_rows, rows_total = [], 0, 0
    for fn in functions:
        on_bound = optimum_on_bound(known[fn])
        for b in budgets:
            cells, medians, bound_medians, seconds, n = [], {}, {}, [], set()
            bound_cells = []
            for column in COLUMNS:
                got = by.get(column + (fn, b), [])
                regrets = sorted(r["regret"] for r in got)
                if not regrets:
                    cells.append("-")
                    bound_cells.append("-")
                    seconds.append("-")
                    continue
                n.add(len(regrets))
                med = quantile(regrets, 0.5)
                medians[column] = med
                note = CMA_NOTE.get(fn, "") if column == CMA else ""
                cells.append(f"{fmt(med)} [{fmt(quantile(regrets, 0.25))}, {fmt(quantile(regrets, 0.75))}]{note}")
                fractions = sorted(r["bound_fraction"] for r in got if "bound_fraction" in r)
                if fractions:
                    bound_medians[column] = quantile(fractions, 0.5)
                    bound_cells.append(f"{100 * bound_medians[column]:.1f}%")
                else:
                    bound_cells.append("-")
                wall = sum(r["seconds"] for r in got) / len(got)
                cpu = sum(r.get("cpu_seconds", math.nan) for r in got) / len(got)
                seconds.append(f"{cpu:.3g} ({wall:.3g})")
            bayes = medians.get(BAYES)

            def at_or_below(peer):
                other = medians.get(peer)
                if bayes is None or other is None:
                    return None, "-"
                ratio = 1.0 if bayes == other else (bayes / other if other > 0 else math.inf)
                return bayes <= other, f"{'yes' if bayes <= other else 'no'} ({fmt(ratio)})"

            tpe_ok, tpe_cell = at_or_below(TPE)
            cma_ok, cma_cell = at_or_below(CMA)
            peers_here = [medians[c] for c in (TPE, CMA, DLIB) if c in medians]
            best = None if bayes is None or not peers_here else bayes <= min(peers_here)
            bound = bound_medians.get(BAYES)
            bound_ok = None if bound is None else (on_bound or bound <= BOUND_TARGET)
            checks = [c for c in (tpe_ok, cma_ok, bound_ok) if c is not None]
            verdict = "-" if bayes is None else ("PASS" if all(checks) else "MISS")
            if bayes is not None:
                rows_total += 1
                best_rows += bool(best)
                if verdict == "MISS":
                    why = [w for ok, w in ((tpe_ok, "TPE"), (cma_ok, "CMA-ES"), (bound_ok, "on bound")) if ok is False]
                    misses.append((fn, b, why))
            seeds = "/".join(str(k) for k in sorted(n)) or "0"
            lines.append([fn, str(b), seeds] + cells +
                         ["-" if bound is None else f"{100 * bound:.1f}%", tpe_cell, cma_cell,
                          "-" if best is None else ("yes" if best else "no"), verdict])
            bounds.append([fn, str(b), "yes" if on_bound else "no"] + bound_cells)
            timing.append([fn, str(b)] + seconds)
    return lines, bounds, timing, misses, best_rows, rows_total


def check(binary, dlib_binary):
    """Both implementations give the same values (and noise) at random points, points on the
    bounds, the known minimisers and the centres; the same on-bound verdicts and the same minima;
    and the minimisers reach the minima."""
    functions = test_functions.functions()
    rng = random.Random(7)
    queries = []
    for fn in functions.values():
        points = []
        for i in range(220):
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
            if i >= 200:  # one parameter (not a category) on one of its bounds
                spec = rng.choice([s for s in fn.space if s[1] != "categorical"])
                params[spec[0]] = spec[rng.choice((2, 3))]
            points.append(params)
        points += fn.optima + [fn.centre()]
        for i, params in enumerate(points):
            queries.append({"function": fn.name, "params": params, "seed": rng.randint(0, 10**6), "index": i})
    done = subprocess.run([binary, "--evaluate"], input="".join(json.dumps(q) + "\n" for q in queries),
                          stdout=subprocess.PIPE, text=True, check=True)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    worst, bound_disagree, bounded = 0.0, 0, 0
    for q, a in zip(queries, answers):
        fn = functions[q["function"]]
        for key, mine in (("value", fn.value(q["params"])), ("observed", fn.observe(q["params"], q["seed"], q["index"]))):
            worst = max(worst, abs(mine - a[key]) / max(1.0, abs(mine)))
        mine_bound = test_functions.on_bound(q["params"], fn.space)
        bounded += mine_bound
        bound_disagree += mine_bound != a["on_bound"]
    minima = {r["function"]: r["minimum"] for r in run_json_lines([binary, "--list"])}
    worst_min = max(abs(minima[name] - fn.minimum) for name, fn in functions.items())
    if dlib_binary:
        dlib_minima = {r["function"]: r["minimum"] for r in run_json_lines([dlib_binary, "--list"])}
        worst_min = max([worst_min] + [abs(dlib_minima[name] - fn.minimum) for name, fn in functions.items()])
    gap = max(abs(fn.value(o) - fn.minimum) / max(1.0, abs(fn.minimum)) for fn in functions.values() for o in fn.optima)
    ok = (len(answers) == len(queries) and worst < 1e-9 and worst_min < 1e-12 and bound_disagree == 0
          and gap < 1e-6)
    print(f"check: {len(queries)} points, largest relative difference C++/Python {worst:.2g}; "
          f"on a bound: {bounded} points, {bound_disagree} disagreements; minima differ by at most {worst_min:.2g}"
          f"{' (peer_dlib too)' if dlib_binary else ''}; the known minimisers are within {gap:.2g} of the minima: "
          f"{'OK' if ok else 'FAILED'}")
    return ok


def function_table(functions):
    """Per function: dimension, minimum, whether an optimum is on a bound, the centre's regret."""
    known = test_functions.functions()
    lines = [["function", "d", "minimum", "noise sd", "optimum on a bound", "regret at the box centre"]]
    for name in functions:
        fn = known[name]
        lines.append([name, str(len(fn.space)), f"{fn.minimum:.10g}", f"{fn.noise:g}",
                      "yes" if optimum_on_bound(fn) else "no", fmt(fn.value(fn.centre()) - fn.minimum)])
    return lines


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
    ap.add_argument("--first-seed", type=int, default=1, help="seeds first-seed .. first-seed + seeds - 1")
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
        dlib_binary = os.path.join(args.build, "bench", "peers", "peer_dlib")
        if not os.path.exists(dlib_binary):
            print(f"compare.py: {dlib_binary} not found (install libdlib-dev, reconfigure and build the target "
                  f"peer_dlib); no dlib column", file=sys.stderr)
            dlib_binary = None
        if args.check and not check(binary, dlib_binary):
            return 1
        commands = quality_jobs(binary, dlib_binary, functions, budgets, args.seeds, max(1, args.chunk),
                                args.first_seed)
        print(f"running {len(commands)} jobs, {workers} at a time: {len(functions)} functions, budgets "
              f"{budgets}, {args.seeds} seeds from {args.first_seed}", file=sys.stderr, flush=True)
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
        lines, bounds, timing, misses, best_rows, rows_total = table(rows, functions, budgets)
        print("The functions (regret at the box centre: what a method that samples the centre first gets for free)")
        print(render(function_table(functions), args.markdown))
        print()
        print("Simple regret (f at the best observed point - f_min): median [25%, 75%] over seeds; "
              "'Bayes on bound': median share of hypertune Bayesian's trials with a parameter on a bound; "
              "ratios Bayes/peer in brackets")
        print(render(lines, args.markdown))
        print()
        print("Share of trials with a continuous or integer parameter on a bound of its range, median over seeds")
        print(render(bounds, args.markdown))
        print()
        print("Mean seconds per run to that budget: CPU (wall); one single-threaded process, evaluations included")
        print(render(timing, args.markdown))
        print()
        half = (rows_total + 1) // 2
        print(f"targets: {rows_total - len(misses)} of {rows_total} rows PASS (Bayesian <= TPE and <= CMA-ES, "
              f"<= {100 * BOUND_TARGET:g}% of trials on a bound)" +
              ("" if not misses else "; MISS: " + ", ".join(f"{fn} @ {b} ({', '.join(why)})" for fn, b, why in misses)))
        print(f"         Bayesian best of TPE, CMA-ES and dlib on {best_rows} of {rows_total} rows "
              f"(needs >= {half}): {'PASS' if best_rows >= half else 'MISS'}")
        status = 1 if misses or best_rows < half else 0

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
