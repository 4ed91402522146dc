# SPDX-License-Identifier: MIT
"""The multi-objective test problems of mo_problems.hpp, for Optuna: same variables, same
arithmetic in the same order, same reference points. Every objective is minimised; every problem
has 6 continuous variables x0..x5 on [0, 1] (linear).

  zdt1      f1 = x0, g = 1 + 9 (x1 + ... + x5) / 5, f2 = g (1 - sqrt(f1 / g))
  zdt2      f1 = x0, g as zdt1,                      f2 = g (1 - (f1 / g)^2)
  dtlz2_2   DTLZ2 with 2 objectives (distance g over x1..x5)
  dtlz2_3   DTLZ2 with 3 objectives (distance g over x2..x5)
"""
import math

VARIABLES = 6
VARIABLE_NAMES = tuple(f"x{i}" for i in range(VARIABLES))


def _zdt_g(x):
    total = 0.0
    for i in range(1, VARIABLES):
        total += x[i]
    return 1.0 + 9.0 * total / float(VARIABLES - 1)


def zdt1(x):
    f1 = x[0]
    g = _zdt_g(x)
    return [f1, g * (1.0 - math.sqrt(f1 / g))]


def zdt2(x):
    f1 = x[0]
    g = _zdt_g(x)
    r = f1 / g
    return [f1, g * (1.0 - r * r)]


def dtlz2(x, m):
    g = 0.0
    for i in range(m - 1, VARIABLES):
        g += (x[i] - 0.5) * (x[i] - 0.5)
    half_pi = math.pi / 2.0
    f = []
    for k in range(m):
        v = 1.0 + g
        for i in range(m - k - 1):
            v *= math.cos(x[i] * half_pi)
        if k > 0:
            v *= math.sin(x[m - k - 1] * half_pi)
        f.append(v)
    return f


class MoProblem:
    def __init__(self, name, objectives, reference, ideal_hypervolume, values):
        self.name, self.objectives, self.reference = name, objectives, reference
        self.ideal_hypervolume, self.values = ideal_hypervolume, values


def problems():
    return {p.name: p for p in [
        MoProblem("zdt1", 2, [1.1, 11.0], 11.0 - 1.0 / 3.0 + 1.1, zdt1),
        MoProblem("zdt2", 2, [1.1, 11.0], 11.0 - 2.0 / 3.0 + 1.1, zdt2),
        MoProblem("dtlz2_2", 2, [1.1, 1.1], 1.1 * 1.1 - math.pi / 4.0, lambda x: dtlz2(x, 2)),
        MoProblem("dtlz2_3", 3, [1.1, 1.1, 1.1], 1.1 * 1.1 * 1.1 - math.pi / 6.0, lambda x: dtlz2(x, 3)),
    ]}


def suggest(trial):
    """An Optuna trial's variables, as the C++ search space has them."""
    return [trial.suggest_float(name, 0.0, 1.0) for name in VARIABLE_NAMES]
