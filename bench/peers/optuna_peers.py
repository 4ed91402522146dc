#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Optuna's side of the peer comparison (README.md): one JSON line per (sampler, function, budget, seed)

  {"library":"optuna","sampler":"TPE","function":"branin","budget":50,"seed":3,"regret":...,
   "bound_fraction":...,"seconds":...,"cpu_seconds":...}

TPE is TPESampler(seed=s) with Optuna 3.1's defaults (multivariate=False: independent univariate
Parzen estimators, 10 random startup trials, 24 EI candidates); CmaEs is CmaEsSampler(seed=s)
with its defaults (python3-cmaes; the mean starts at the centre of the box, sigma0 = 1/6 of the
narrowest range, one random startup trial, population 4 + floor(3 ln d); a categorical parameter
is outside its search space and drawn by its independent sampler, RandomSampler(seed=s));
Random is RandomSampler(seed=s).
"TPEmv" (TPESampler(seed=s, multivariate=True)) is available but not run by default.
bound_fraction is the share of the first `budget` trials with a parameter on a bound of its
range (test_functions.on_bound).
Trials are driven through study.ask()/study.tell(), one at a time, in memory.
As in peer_functions, one run goes to the largest budget and reports at every budget on the way
(Optuna's samplers do not know n_trials, so this is what separate runs would give).
"""
import argparse
import json
import math
import os
import sys
import time
import warnings

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_functions  # noqa: E402

import optuna  # noqa: E402

SAMPLERS = ("TPE", "CmaEs", "Random", "TPEmv")


def make_sampler(name, seed):
    if name == "TPE":
        return optuna.samplers.TPESampler(seed=seed)
    if name == "CmaEs":
        return optuna.samplers.CmaEsSampler(seed=seed)
    if name == "TPEmv":
        return optuna.samplers.TPESampler(seed=seed, multivariate=True)
    return optuna.samplers.RandomSampler(seed=seed)


def run(fn, sampler, budgets, seed, out):
    budgets = sorted(set(budgets))
    t0, c0 = time.perf_counter(), time.process_time()
    study = optuna.create_study(direction="minimize", sampler=make_sampler(sampler, seed))
    best_observed, best_true = math.inf, math.inf  # f at the best observed configuration
    bounded = 0
    for index in range(budgets[-1]):
        trial = study.ask()
        params = test_functions.suggest(trial, fn.space)
        bounded += test_functions.on_bound(params, fn.space)
        observed = fn.observe(params, seed, index)
        if observed < best_observed:
            best_observed = observed
            best_true = fn.value(params) if fn.noise > 0.0 else observed
        study.tell(trial, observed)
        if index + 1 in budgets:
            out.write(json.dumps({"library": "optuna", "sampler": sampler, "function": fn.name,
                                  "budget": index + 1, "seed": seed, "regret": best_true - fn.minimum,
                                  "bound_fraction": bounded / (index + 1),
                                  "seconds": time.perf_counter() - t0,
                                  "cpu_seconds": time.process_time() - c0}) + "\n")
            out.flush()


def main():
    functions = test_functions.functions()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--functions", default=",".join(functions))
    ap.add_argument("--budgets", default="50,200")
    ap.add_argument("--seeds", type=int, default=20, help="seeds first-seed .. first-seed + N - 1")
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--samplers", default="TPE,Random", help="of " + ",".join(SAMPLERS))
    args = ap.parse_args()
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.simplefilter("ignore")  # TPEmv's ExperimentalWarning, CmaEs's independent sampling
    budgets = [int(b) for b in args.budgets.split(",") if b]
    for name in args.functions.split(","):
        if name not in functions:
            ap.error(f"unknown function {name} (known: {', '.join(functions)})")
        for sampler in args.samplers.split(","):
            if sampler not in SAMPLERS:
                ap.error(f"unknown sampler {sampler}")
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                run(functions[name], sampler, budgets, seed, sys.stdout)


if __name__ == "__main__":
    main()
