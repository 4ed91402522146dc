#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""hypertune (Bayesian = ParEGO, RandomSearch) against Optuna 3.1 (NSGAIISampler, MOTPESampler,
RandomSampler) on the multi-objective problems of mo_problems.hpp / mo_problems.py: the median
hypervolume and its quartiles over seeds at each budget, the best Optuna sampler, and the cost per
trial at 200 trials. Targets: hypertune Bayesian's median hypervolume at or above the best Optuna
sampler's on every row, and its CPU cost per trial at 200 trials at most 1/3 of MOTPE's. See
README.md.

  compare_multi_objective.py [--build DIR] [--quick] [--seeds N] [--budgets 50,200]
                             [--problems a,b] [--seeds-at dtlz2_3:200=5]
                             [--save FILE] [--from FILE] [--check] [--markdown]

Runs at most 2 processes at once (--jobs), each single-threaded (BLAS threads off).
Exits with 1 when a row misses its target (or --check fails).
"""
import argparse
import json
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import mo_problems  # noqa: E402
from peer_runs import peer_binary, quantile, render, run_all, run_json_lines  # noqa: E402

COLUMNS = [("hypertune", "Bayesian"), ("hypertune", "Random"),
           ("optuna", "MOTPE"), ("optuna", "NSGAII"), ("optuna", "Random")]
HEADERS = ["ht Bayesian", "ht Random", "Optuna MOTPE", "Optuna NSGAII", "Optuna Random"]
OPTUNA = [s for lib, s in COLUMNS if lib == "optuna"]
COST_BUDGET = 200       # the cost target is read at this budget
COST_TARGET = 1.0 / 3.0  # Bayesian's CPU ms per trial / MOTPE's
# Rough CPU seconds of one seed to 200 trials (measured), to start the longest jobs first and to
# give the slowest ones a process per seed.
COST = {("hypertune", "Bayesian"): 3.5, ("hypertune", "Random"): 0.01, ("optuna", "NSGAII"): 0.5,
        ("optuna", "Random"): 0.3, ("optuna", "MOTPE"): 20.0}
COST_MOTPE_3 = 540.0


def seed_blocks(seeds, budgets_of, chunk):
    """Contiguous blocks of seeds 1..seeds that share their budgets, at most `chunk` long."""
    blocks, first = [], 1
    while first <= seeds:
        last = first
        while last + 1 <= seeds and last + 1 - first < chunk and budgets_of(last + 1) == budgets_of(first):
            last += 1
        blocks.append((first, last - first + 1, budgets_of(first)))
        first = last + 1
    return blocks


def jobs_for(binary, problems, budgets, seeds, seeds_at):
    """(weight, command) pairs, longest first: per (library, sampler, problem, block of seeds)."""
    jobs = []
    for name in problems:
        three = mo_problems.problems()[name].objectives == 3

        def budgets_of(seed, name=name):
            return tuple(b for b in budgets if seed <= seeds_at.get((name, b), seeds))

        for lib, sampler in COLUMNS:
            per_seed = COST_MOTPE_3 if (sampler == "MOTPE" and three) else COST[(lib, sampler)]
            chunk = 1 if per_seed > 100 else (2 if per_seed > 10 else 10)
            for first, n, bs in seed_blocks(seeds, budgets_of, chunk):
                if not bs:
                    continue
                weight = per_seed * n * (max(bs) / 200.0) ** (3 if sampler == "MOTPE" else 1.5)
                args = ["--problems", name, "--seeds", str(n), "--first-seed", str(first),
                        "--budgets", ",".join(map(str, bs)), "--samplers", sampler]
                command = [binary] + args if lib == "hypertune" else [os.path.join(HERE, "optuna_multi_objective.py")] + args
                jobs.append((weight + (0.5 if lib == "optuna" else 0.0), command))
    jobs.sort(key=lambda j: -j[0])
    return [command for _, command in jobs]


def median(values):
    return quantile(sorted(values), 0.5) if values else None


def fmt(x, digits=4):
    return "-" if x is None else f"{x:.{digits}g}"


def tables(rows, problems, budgets):
    by = {}
    for r in rows:
        by.setdefault((r["library"], r["sampler"], r["problem"], r["budget"]), []).append(r)
    specs = mo_problems.problems()
    quality = [["problem", "budget", "seeds", "ideal"] + [h + " median [IQR]" for h in HEADERS] +
               ["best Optuna", "Bayes - best", "Bayes >= best"]]
    cost = [["problem", "budget"] + [h + " ms/trial" for h in HEADERS] + ["Bayes/MOTPE", "target", "result"]]
    timing = [["problem", "budget"] + [h + " CPU s (wall)" for h in HEADERS]]
    misses = []
    for name in problems:
        for b in budgets:
            cells, medians, ms, seconds, n = [], {}, {}, [], set()
            for key in COLUMNS:
                got = by.get(key + (name, b), [])
                hv = sorted(r["hypervolume"] for r in got)
                n.add(len(hv))
                if not hv:
                    cells.append("-")
                    seconds.append("-")
                    ms[key] = None
                    continue
                medians[key] = quantile(hv, 0.5)
                cells.append(f"{fmt(medians[key])} [{fmt(quantile(hv, 0.25))}, {fmt(quantile(hv, 0.75))}]")
                ms[key] = median([r["ms_per_trial_last20"] for r in got if r.get("ms_per_trial_last20") is not None])
                wall = sum(r["seconds"] for r in got) / len(got)
                cpu = sum(r["cpu_seconds"] for r in got) / len(got)
                seconds.append(f"{cpu:.3g} ({wall:.3g})")
            optuna = [(medians[("optuna", s)], s) for s in OPTUNA if ("optuna", s) in medians]
            bayes = medians.get(("hypertune", "Bayesian"))
            if optuna and bayes is not None:
                best, best_name = max(optuna)
                ok = bayes >= best
                verdict = "yes" if ok else "MISS"
                if not ok:
                    misses.append(f"{name} @ {b}: hypervolume {fmt(bayes)} < {best_name}'s {fmt(best)}")
                extra = [best_name, f"{bayes - best:+.3g}", verdict]
            else:
                extra = ["-", "-", "-"]
            seeds = "/".join(str(k) for k in sorted(n) if k) or "0"
            quality.append([name, str(b), seeds, fmt(specs[name].ideal_hypervolume)] + cells + extra)
            timing.append([name, str(b)] + seconds)
            ratio = None
            if ms.get(("hypertune", "Bayesian")) is not None and ms.get(("optuna", "MOTPE")):
                ratio = ms[("hypertune", "Bayesian")] / ms[("optuna", "MOTPE")]
            if b == COST_BUDGET:
                result = "-" if ratio is None else ("PASS" if ratio <= COST_TARGET else "MISS")
                if result == "MISS":
                    misses.append(f"{name} @ {b}: cost ratio Bayesian/MOTPE {ratio:.3g} > 1/3")
                target = "<= 1/3"
            else:
                result, target = "", ""
            cost.append([name, str(b)] + [fmt(ms[k], 3) for k in COLUMNS] + [fmt(ratio, 3), target, result])
    return quality, cost, timing, misses


def near_front_sets(rng):
    """Point sets crowded near each problem's front (large fronts, ties, points on the reference's
    boundary and beyond it), for the hypervolume check: (problem, points)."""
    sets = []
    for name, p in mo_problems.problems().items():
        for size in (10, 100, 300):
            points = []
            for _ in range(size):
                x = [rng.random() for _ in range(mo_problems.VARIABLES)]
                if name.startswith("zdt"):
                    x[1:] = [0.02 * rng.random() for _ in x[1:]]
                else:
                    x[p.objectives - 1:] = [0.5 + 0.1 * (rng.random() - 0.5) for _ in x[p.objectives - 1:]]
                points.append(p.values(x))
            points += points[: size // 10]  # duplicates
            # A point on the reference in one coordinate (adds nothing), one beyond it.
            points.append([p.reference[0]] + points[0][1:])
            points.append([r + 1.0 for r in p.reference])
            sets.append((name, points))
    return sets


def check(binary):
    """C++ and Python problems agree at random points; hypertune's hypervolume equals Optuna's WFG."""
    problems = mo_problems.problems()
    ok = True
    listed = {r["problem"]: r for r in run_json_lines([binary, "--list"])}
    for name, p in problems.items():
        r = listed.get(name)
        if r is None or r["reference"] != p.reference or r["objectives"] != p.objectives or \
                abs(r["ideal_hypervolume"] - p.ideal_hypervolume) > 1e-12 or r["variables"] != mo_problems.VARIABLES:
            print(f"check: {name}: C++ and Python disagree on the problem's setup: {r}")
            ok = False
    # 1. Values: 1,000 random points per problem (RandomSearch through the Tuner, seed 7).
    lines = run_json_lines([binary, "--evaluate", "1000", "--seed", "7"])
    points = [r for r in lines if "x" in r]
    worst, count = 0.0, 0
    values_of = {}
    for r in points:
        mine = problems[r["problem"]].values(r["x"])
        if len(mine) != len(r["values"]):
            ok = False
            continue
        worst = max(worst, max(abs(a - b) for a, b in zip(mine, r["values"])))
        values_of.setdefault(r["problem"], []).append(r["values"])
        count += 1
    good = count == 1000 * len(problems) and worst <= 1e-12
    ok = ok and good
    print(f"check: {count} points ({count // max(1, len(problems))} per problem), largest difference "
          f"C++/Python in an objective {worst:.3g} (must be <= 1e-12): {'OK' if good else 'FAILED'}")
    # 2. Hypervolume: Result::hypervolume of RandomSearch runs of 50, 200 and 1,000 trials, and
    # ht::hypervolume of sets crowded near the fronts, against optuna._hypervolume.WFG.
    pairs = []  # (what, hypertune, optuna)
    for n in (50, 200, 1000):
        got = run_json_lines([binary, "--evaluate", str(n), "--seed", "7"]) if n != 1000 else lines
        pts, sums = {}, {}
        for r in got:
            if "x" in r:
                pts.setdefault(r["problem"], []).append(r["values"])
            else:
                sums[r["problem"]] = r
        for name, s in sums.items():
            pairs.append((f"{name} RandomSearch {n}: Result::hypervolume", s["hypervolume"],
                          {"reference": problems[name].reference, "points": pts[name]}))
    for name, pts in near_front_sets(random.Random(11)):
        pairs.append((f"{name} {len(pts)} points near the front: ht::hypervolume", None,
                      {"reference": problems[name].reference, "points": pts}))
    stdin = "".join(json.dumps(q) + "\n" for _, h, q in pairs if h is None)
    ht_direct = iter(r["hypervolume"] for r in run_json_lines([binary, "--hypervolume"], stdin))
    wfg = run_json_lines([os.path.join(HERE, "optuna_multi_objective.py"), "--hypervolume"],
                         "".join(json.dumps(q) + "\n" for _, _, q in pairs))
    worst_hv, good = 0.0, len(wfg) == len(pairs)
    for (what, h, q), w in zip(pairs, wfg):
        mine = h if h is not None else next(ht_direct)
        rel = abs(mine - w["hypervolume"]) / max(1e-300, abs(w["hypervolume"]))
        worst_hv = max(worst_hv, rel)
        if rel > 1e-12:
            good = False
            print(f"  {what}: hypertune {mine!r}, Optuna WFG {w['hypervolume']!r}")
    ok = ok and good
    print(f"check: {len(pairs)} point sets, largest relative difference hypertune/Optuna WFG hypervolume "
          f"{worst_hv:.3g} (must be <= 1e-12): {'OK' if good else 'FAILED'}")
    return ok


def main():
    problems_all = mo_problems.problems()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="the CMake build directory holding bench/peers/peer_multi_objective")
    ap.add_argument("--problems", default=",".join(problems_all))
    ap.add_argument("--budgets", default="50,200")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--seeds-at", default="",
                    help="fewer seeds for some rows, e.g. dtlz2_3:200=5 (problem:budget=seeds, comma-separated)")
    ap.add_argument("--quick", action="store_true", help="smoke run: 3 seeds, budget 50")
    ap.add_argument("--jobs", type=int, default=2, help="processes at once (at most 2)")
    ap.add_argument("--save", help="append every run's JSON line to this file")
    ap.add_argument("--from", dest="source", help="tabulate the JSON lines of this file instead of running")
    ap.add_argument("--markdown", action="store_true", help="print the tables in Markdown")
    ap.add_argument("--check", action="store_true",
                    help="first check that the C++ and Python problems and hypervolumes agree")
    args = ap.parse_args()
    if args.quick:
        args.seeds, args.budgets = 3, "50"
    problems = [p for p in args.problems.split(",") if p]
    budgets = sorted({int(b) for b in args.budgets.split(",") if b})
    unknown = set(problems) - set(problems_all)
    if unknown:
        ap.error(f"unknown problems: {', '.join(sorted(unknown))}")
    seeds_at = {}
    for item in filter(None, args.seeds_at.split(",")):
        where, _, n = item.partition("=")
        name, _, b = where.partition(":")
        if name not in problems_all or not b.isdigit() or not n.isdigit():
            ap.error(f"--seeds-at: cannot read {item!r} (problem:budget=seeds)")
        seeds_at[(name, int(b))] = int(n)
    workers = max(1, min(args.jobs, 2))
    start = time.perf_counter()

    if args.source:
        with open(args.source) as f:
            rows = [json.loads(line) for line in f if line.strip()]
        if args.problems == ",".join(problems_all):
            problems = [p for p in problems_all if any(r["problem"] == p for r in rows)]
        if args.budgets == "50,200" and not args.quick:
            budgets = sorted({r["budget"] for r in rows})
    else:
        binary = peer_binary(args.build, "peer_multi_objective", "compare_multi_objective.py")
        if args.check and not check(binary):
            return 1
        commands = jobs_for(binary, problems, budgets, args.seeds, seeds_at)
        print(f"running {len(commands)} jobs, {workers} at a time: {len(problems)} problems, budgets {budgets}, "
              f"{args.seeds} seeds" + (f", fewer at {args.seeds_at}" if seeds_at else ""), file=sys.stderr, flush=True)
        log = open(args.save, "a") if args.save else None
        try:
            rows = run_all(commands, workers, log)
        finally:
            if log:
                log.close()

    quality, cost, timing, misses = tables(rows, problems, budgets)
    print("Hypervolume (larger is better; reference ZDT (1.1, 11), DTLZ2 1.1 per objective): "
          "median [25%, 75%] over seeds")
    print(render(quality, args.markdown))
    print()
    print("CPU ms per trial over the last 20 trials (ask + tell, median over seeds); target at "
          f"{COST_BUDGET} trials: Bayesian/MOTPE <= 1/3")
    print(render(cost, args.markdown))
    print()
    print("Mean seconds per run to that budget: CPU (wall); one single-threaded process, evaluations included")
    print(render(timing, args.markdown))
    print()
    print("targets: " + ("all met" if not misses else f"{len(misses)} missed: " + "; ".join(misses)))
    print(f"total time {time.perf_counter() - start:.1f} s")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
