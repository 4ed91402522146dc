#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Optuna TPE's cost per trial (ask + suggest_* + tell) on the 7-parameter XGBoost space of
bench/xgboost_space.hpp, after 100, 200 and 1,000 completed trials: one study, warmed up to each
count with a cheap objective, then the mean of the next --timed trials. Same procedure, space and
objective as `peer_functions --overhead`. One JSON line per count:

  {"library":"optuna","sampler":"TPE","space":"xgboost7","trials":100,"timed":20,"ms_per_trial":...,"cpu_ms_per_trial":...}
"""
import argparse
import json
import math
import sys
import time

import optuna


def suggest(trial):
    # bench/xgboost_space.hpp: every range linear (Auto gives Linear for all seven).
    return {
        "num_round": trial.suggest_int("num_round", 100, 200),
        "eta": trial.suggest_float("eta", 0.0, 1.0),
        "min_child_weight": trial.suggest_float("min_child_weight", 1.0, 10.0),
        "alpha": trial.suggest_float("alpha", 0.0, 2.0),
        "max_depth": trial.suggest_int("max_depth", 1, 10),
        "colsample_bylevel": trial.suggest_float("colsample_bylevel", 0.0, 1.0),
        "colsample_bytree": trial.suggest_float("colsample_bytree", 0.0, 1.0),
    }


def synthetic_loss(p):
    """bench/bench_bayesian.cpp's loss."""
    eta, depth, rounds = p["eta"], p["max_depth"], p["num_round"]
    return ((math.log(eta + 1e-3) + 2.0) ** 2 + 0.05 * (depth - 6) ** 2 + 0.3 * (rounds - 150) / 50.0 * eta
            + 0.02 * (p["min_child_weight"] - 3) ** 2 + 0.1 * p["alpha"]
            + 0.5 * (p["colsample_bylevel"] - 0.7) ** 2 + 0.5 * (p["colsample_bytree"] - 0.8) ** 2)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", default="100,200,1000", help="completed trials before each timing")
    ap.add_argument("--timed", type=int, default=20, help="trials timed at each count")
    args = ap.parse_args()
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    study = optuna.create_study(direction="minimize", sampler=optuna.samplers.TPESampler(seed=42))

    done = 0  # a counter: study.trials deep-copies every trial

    def step():
        nonlocal done
        trial = study.ask()
        study.tell(trial, synthetic_loss(suggest(trial)))
        done += 1

    for n in sorted(int(t) for t in args.trials.split(",") if t):
        while done < n:
            step()
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(args.timed):
            step()
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        print(json.dumps({"library": "optuna", "sampler": "TPE", "space": "xgboost7", "trials": n,
                          "timed": args.timed, "ms_per_trial": 1e3 * wall / args.timed,
                          "cpu_ms_per_trial": 1e3 * cpu / args.timed}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
