#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Optuna's side of the multi-objective peer comparison (README.md): one JSON line per
(sampler, problem, budget, seed)

  {"library":"optuna","sampler":"MOTPE","problem":"zdt1","budget":50,"seed":3,"hypervolume":...,
   "seconds":...,"cpu_seconds":...,"ms_per_trial_last20":...}

Samplers, with Optuna 3.1's defaults and seed=s:
  NSGAII  NSGAIISampler (population 50: the first 50 trials are its random first generation)
  MOTPE   MOTPESampler (Optuna 3.1 still has it, deprecated: TPESampler with consider_endpoints=True,
          10 random startup trials, 24 candidates, univariate Parzen estimators; it scores candidates
          by the hypervolume contributions of the good trials)
  Random  RandomSampler

Trials are driven through study.ask()/study.tell(), one at a time, on an in-memory study with one
"minimize" direction per objective. The hypervolume is Optuna's own WFG
(optuna._hypervolume.WFG) of the study's Pareto front (study.best_trials), counting the points
that are at or below the reference in every coordinate (a point on the boundary adds nothing).
One study goes to the largest budget and reports at every budget on the way: none of these
samplers knows n_trials, so that is what separate runs would give.

"ms_per_trial_last20": CPU time (time.process_time) of study.ask(), the six suggest_float calls
(where TPE samples) and study.tell(), without the evaluation, averaged over the last 20 trials.
"""
import argparse
import json
import os
import sys
import time
import warnings

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mo_problems  # noqa: E402

import numpy as np  # noqa: E402
import optuna  # noqa: E402
from optuna._hypervolume import WFG  # noqa: E402

SAMPLERS = ("NSGAII", "MOTPE", "Random")
TIMED = 20


def make_sampler(name, seed):
    if name == "NSGAII":
        return optuna.samplers.NSGAIISampler(seed=seed)
    if name == "MOTPE":
        return optuna.samplers.MOTPESampler(seed=seed)
    return optuna.samplers.RandomSampler(seed=seed)


def wfg_hypervolume(values, reference):
    """Optuna's WFG of the points of `values` that are at or below `reference` everywhere."""
    ref = np.asarray(reference, dtype=float)
    points = np.asarray(values, dtype=float).reshape(-1, len(reference))
    points = points[(points <= ref).all(axis=1)]
    if len(points) == 0:
        return 0.0
    return float(WFG().compute(points, ref))


def run(problem, sampler, budgets, seed, out):
    budgets = sorted(set(budgets))
    t0, c0 = time.perf_counter(), time.process_time()
    study = optuna.create_study(directions=["minimize"] * problem.objectives, sampler=make_sampler(sampler, seed))
    cost, wall = [], []  # per trial: CPU and wall seconds of ask + suggest + tell
    for index in range(budgets[-1]):
        c1, w1 = time.process_time(), time.perf_counter()
        trial = study.ask()
        x = mo_problems.suggest(trial)
        c2, w2 = time.process_time(), time.perf_counter()
        values = problem.values(x)
        c3, w3 = time.process_time(), time.perf_counter()
        study.tell(trial, values)
        c4, w4 = time.process_time(), time.perf_counter()
        cost.append((c2 - c1) + (c4 - c3))
        wall.append((w2 - w1) + (w4 - w3))
        if index + 1 in budgets:
            seconds, cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
            front = study.best_trials
            n = index + 1
            out.write(json.dumps({
                "library": "optuna", "sampler": sampler, "problem": problem.name, "budget": n, "seed": seed,
                "hypervolume": wfg_hypervolume([t.values for t in front], problem.reference),
                "seconds": seconds, "cpu_seconds": cpu_seconds,
                "ms_per_trial_last20": 1e3 * sum(cost[-TIMED:]) / TIMED if n > TIMED else None,
                "wall_ms_per_trial_last20": 1e3 * sum(wall[-TIMED:]) / TIMED if n > TIMED else None,
                "front_size": len(front)}) + "\n")
            out.flush()


def main():
    problems = mo_problems.problems()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", default=",".join(problems))
    ap.add_argument("--budgets", default="50,200")
    ap.add_argument("--seeds", type=int, default=10, help="seeds first-seed .. first-seed + N - 1")
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--samplers", default=",".join(SAMPLERS), help="of " + ",".join(SAMPLERS))
    ap.add_argument("--hypervolume", action="store_true",
                    help='read JSON lines {"reference": [...], "points": [[...], ...]}, print WFG hypervolumes')
    args = ap.parse_args()
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.simplefilter("ignore")  # MOTPESampler's deprecation, NSGAII's experimental warnings
    if args.hypervolume:
        for line in sys.stdin:
            if line.strip():
                q = json.loads(line)
                print(json.dumps({"points": len(q["points"]),
                                  "hypervolume": wfg_hypervolume(q["points"], q["reference"])}))
        return
    budgets = [int(b) for b in args.budgets.split(",") if b]
    for name in args.problems.split(","):
        if name not in problems:
            ap.error(f"unknown problem {name} (known: {', '.join(problems)})")
        for sampler in args.samplers.split(","):
            if sampler not in SAMPLERS:
                ap.error(f"unknown sampler {sampler}")
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                run(problems[name], sampler, budgets, seed, sys.stdout)


if __name__ == "__main__":
    main()
