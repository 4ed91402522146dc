# SPDX-License-Identifier: MIT
"""The test functions of test_functions.hpp, for Optuna (same spaces, minima and noise).

Each function has a space: a list of (name, kind, low, high, log) for "float" and "int", and
(name, "categorical", choices) for categories, in the order of the C++ search space, and its
known minimisers (`optima`: parameter dicts; `compare.py --check` evaluates them on both sides).
"""
import math

__test__ = False  # not a pytest module, despite its name

BRANIN_MIN = 0.397887357729738
HARTMANN6_MIN = -3.32236801141551
NOISE_SD = 0.1
MASK = (1 << 64) - 1


def branin(p):
    x1, x2 = p["x1"], p["x2"]
    b, c, t = 5.1 / (4.0 * math.pi ** 2), 5.0 / math.pi, 1.0 / (8.0 * math.pi)
    return (x2 - b * x1 * x1 + c * x1 - 6.0) ** 2 + 10.0 * (1.0 - t) * math.cos(x1) + 10.0


_ALPHA = (1.0, 1.2, 3.0, 3.2)
_A = ((10, 3, 17, 3.5, 1.7, 8),
      (0.05, 10, 17, 0.1, 8, 14),
      (3, 3.5, 1.7, 10, 17, 8),
      (17, 8, 0.05, 10, 0.1, 14))
_P = ((0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886),
      (0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991),
      (0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650),
      (0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381))


def _hartmann(x, a, centres):
    """The Hartmann family: -sum_i alpha_i exp(-sum_j a_ij (x_j - p_ij)^2)."""
    return -sum(_ALPHA[i] * math.exp(-sum(a[i][j] * (x[j] - centres[i][j]) ** 2 for j in range(len(x))))
                for i in range(4))


def hartmann6(p):
    return _hartmann(_coords(p, 6), _A, _P)


def _rosenbrock(x):
    return sum(100.0 * (x[j + 1] - x[j] ** 2) ** 2 + (1.0 - x[j]) ** 2 for j in range(len(x) - 1))


def rosenbrock4(p):
    return _rosenbrock([p[f"x{j}"] for j in range(4)])


# Shifted optima (see test_functions.hpp): the optimum of levy*, rastrigin5 and griewank8 sits at
# centre + SHIFT[first + j] * half-width in coordinate j, away from the box's centre and bounds.
SHIFT = (0.42, -0.61, 0.27, -0.35, 0.68, -0.19, 0.53, -0.47, 0.14, -0.66,
         0.39, -0.23, 0.57, -0.52, 0.31, -0.28, 0.63, -0.41, 0.22, -0.58)
LEVY_HALF, RASTRIGIN_HALF, GRIEWANK_HALF = 10.0, 5.12, 50.0
RASTRIGIN_SHIFT, GRIEWANK_SHIFT = 10, 12  # where in SHIFT their coordinates start (Levy: at 0)
MICHALEWICZ5_MIN = -4.687658179088148
# Michalewicz is separable: each coordinate's term minimised in one dimension (x1 = pi/2 exactly).
MICHALEWICZ5_ARGMIN = (2.2029055222627054, math.pi / 2, 1.2849915708849968, 1.9230584688159351,
                       1.7204697726395524)


def _coords(p, d):
    return [p[f"x{j}"] for j in range(d)]


def _offsets(p, d, first, half):
    """z_j = x_j - the shifted optimum's coordinate j: SHIFT[first + j] * half."""
    return [x - SHIFT[first + j] * half for j, x in enumerate(_coords(p, d))]


def levy_of(w):
    """Levy of w = 1 + (x - optimum) / 4 (the standard form's optimum is x = 1)."""
    total = math.sin(math.pi * w[0]) ** 2
    for wi in w[:-1]:
        total += (wi - 1.0) ** 2 * (1.0 + 10.0 * math.sin(math.pi * wi + 1.0) ** 2)
    return total + (w[-1] - 1.0) ** 2 * (1.0 + math.sin(2.0 * math.pi * w[-1]) ** 2)


def levy(x, shift_half):
    """Levy, with its optimum (x = 1 in the standard form) moved to SHIFT * shift_half."""
    return levy_of([1.0 + (x[j] - SHIFT[j] * shift_half) / 4.0 for j in range(len(x))])


def levy10(p):
    return levy(_coords(p, 10), LEVY_HALF)


def levy20(p):
    return levy(_coords(p, 20), LEVY_HALF)


def rastrigin_of(z):
    return 10.0 * len(z) + sum(zi * zi - 10.0 * math.cos(2.0 * math.pi * zi) for zi in z)


def griewank_of(z):
    product = 1.0
    for j, zi in enumerate(z):
        product *= math.cos(zi / math.sqrt(j + 1.0))
    return 1.0 + sum(zi * zi for zi in z) / 4000.0 - product


def rastrigin5(p):
    return rastrigin_of(_offsets(p, 5, RASTRIGIN_SHIFT, RASTRIGIN_HALF))


def griewank8(p):
    return griewank_of(_offsets(p, 8, GRIEWANK_SHIFT, GRIEWANK_HALF))


def levy10_standard(p):
    return levy_of([1.0 + (x - 1.0) / 4.0 for x in _coords(p, 10)])


def rastrigin5_standard(p):
    return rastrigin_of(_coords(p, 5))


def griewank8_standard(p):
    return griewank_of(_coords(p, 8))


def michalewicz_of(x):
    return -sum(math.sin(v) * math.sin((j + 1) * v * v / math.pi) ** 20 for j, v in enumerate(x))


def michalewicz5(p):
    return michalewicz_of(_coords(p, 5))


ACKLEY_HALF, ACKLEY_SHIFT = 32.768, 5


def ackley5(p):
    return ackley_of(_offsets(p, 5, ACKLEY_SHIFT, ACKLEY_HALF))


def ackley_of(z):
    d = len(z)
    return (-20.0 * math.exp(-0.2 * math.sqrt(sum(zi * zi for zi in z) / d))
            - math.exp(sum(math.cos(2.0 * math.pi * zi) for zi in z) / d) + 20.0 + math.e)


SHEKEL4_MIN = -10.53644315348353
SHEKEL4_ARGMIN = (4.000746870040893, 3.999509482383728, 4.0007468652725215, 3.9995094776153564)
_SHEKEL_BETA = (0.1, 0.2, 0.2, 0.4, 0.4, 0.6, 0.3, 0.7, 0.5, 0.5)
_SHEKEL_C = ((4, 1, 8, 6, 3, 2, 5, 8, 6, 7),
             (4, 1, 8, 6, 7, 9, 3, 1, 2, 3.6),
             (4, 1, 8, 6, 3, 2, 5, 8, 6, 7),
             (4, 1, 8, 6, 7, 9, 3, 1, 2, 3.6))


def shekel4(p):
    x = _coords(p, 4)
    return -sum(1.0 / (_SHEKEL_BETA[i] + sum((x[j] - _SHEKEL_C[j][i]) ** 2 for j in range(4))) for i in range(10))


HARTMANN3_MIN = -3.862779787332663
HARTMANN3_ARGMIN = (0.11458886591339108, 0.555648895095825, 0.8525469858438969)
_A3 = ((3, 10, 30), (0.1, 10, 35), (3, 10, 30), (0.1, 10, 35))
_P3 = ((0.3689, 0.1170, 0.2673), (0.4699, 0.4387, 0.7470), (0.1091, 0.8732, 0.5547), (0.0381, 0.5743, 0.8828))


def hartmann3(p):
    return _hartmann(_coords(p, 3), _A3, _P3)


STYBLINSKI8_MIN = 8 * -39.166165703771426
STYBLINSKI_ARGMIN = -2.9035340270996093


def styblinski8(p):
    return sum(0.5 * (x ** 4 - 16.0 * x * x + 5.0 * x) for x in _coords(p, 8))


SCHWEFEL_ARGMIN = 420.968746359982


def schwefel4(p):
    return 418.9828872724338 * 4 - sum(x * math.sin(math.sqrt(abs(x))) for x in _coords(p, 4))


def goldstein2(p):
    x0, x1 = _coords(p, 2)
    a, b = x0 + x1 + 1.0, 2.0 * x0 - 3.0 * x1
    left = 1.0 + a * a * (19.0 - 14.0 * x0 + 3.0 * x0 * x0 - 14.0 * x1 + 6.0 * x0 * x1 + 3.0 * x1 * x1)
    right = 30.0 + b * b * (18.0 - 32.0 * x0 + 12.0 * x0 * x0 + 48.0 * x1 - 36.0 * x0 * x1 + 27.0 * x1 * x1)
    return left * right


CAMEL2_MIN = -1.0316284534898774
CAMEL2_ARGMIN = [{"x1": 0.08984201368301331, "x2": -0.7126564032704135},
                 {"x1": -0.08984201368301331, "x2": 0.7126564032704135}]


def camel2(p):
    x1, x2 = p["x1"], p["x2"]
    return (4.0 - 2.1 * x1 * x1 + x1 ** 4 / 3.0) * x1 * x1 + x1 * x2 + (-4.0 + 4.0 * x2 * x2) * x2 * x2


def dixonprice10(p):
    x = _coords(p, 10)
    return (x[0] - 1.0) ** 2 + sum((i + 1) * (2.0 * x[i] ** 2 - x[i - 1]) ** 2 for i in range(1, 10))


DIXONPRICE10_ARGMIN = [2.0 ** (-(2.0 ** i - 2.0) / 2.0 ** i) for i in range(1, 11)]


def powell8(p):
    x = _coords(p, 8)
    total = 0.0
    for i in range(0, 8, 4):
        a, b, c, d = x[i:i + 4]
        total += (a + 10.0 * b) ** 2 + 5.0 * (c - d) ** 2 + (b - 2.0 * c) ** 4 + 10.0 * (a - d) ** 4
    return total


# The third held-out set (test_functions.hpp).
def zakharov8(p):
    x = _coords(p, 8)
    s = sum(0.5 * (i + 1) * v for i, v in enumerate(x))
    return sum(v * v for v in x) + s * s + s * s * s * s


TRID6_MIN = -50.0
TRID6_ARGMIN = [float(i * (7 - i)) for i in range(1, 7)]


def trid6(p):
    x = _coords(p, 6)
    return sum((v - 1.0) ** 2 for v in x) - sum(x[i] * x[i - 1] for i in range(1, 6))


ACKLEY10_SHIFT = 8


def ackley10(p):
    return ackley_of(_offsets(p, 10, ACKLEY10_SHIFT, ACKLEY_HALF))


MICHALEWICZ10_MIN = -9.660151715641344
MICHALEWICZ10_ARGMIN = MICHALEWICZ5_ARGMIN + (math.pi / 2, 1.4544139707837105, 1.756086520708521,
                                              1.6557174169363278, math.pi / 2)


def michalewicz10(p):
    return michalewicz_of(_coords(p, 10))


ROTHYP_HALF = 65.536


def rothyp20(p):
    total = prefix = 0.0
    for z in _offsets(p, 20, 0, ROTHYP_HALF):
        prefix += z * z
        total += prefix
    return total


def colville4(p):
    x = _coords(p, 4)
    return (100.0 * (x[0] ** 2 - x[1]) ** 2 + (x[0] - 1.0) ** 2 + (x[2] - 1.0) ** 2 + 90.0 * (x[2] ** 2 - x[3]) ** 2
            + 10.1 * ((x[1] - 1.0) ** 2 + (x[3] - 1.0) ** 2) + 19.8 * (x[1] - 1.0) * (x[3] - 1.0))


# The fourth held-out set (test_functions.hpp).
def rosenbrock10(p):
    return _rosenbrock(_coords(p, 10))


ALPINE_SHIFT, ALPINE_HALF = 4, 10.0


def alpine10(p):
    return sum(abs(z * math.sin(z) + 0.1 * z) for z in _offsets(p, 10, ALPINE_SHIFT, ALPINE_HALF))


EGGHOLDER2_MIN = -959.6406627208506
EGGHOLDER2_ARGMIN = {"x0": 512.0, "x1": 404.2319}


def eggholder2(p):
    x0, x1 = _coords(p, 2)
    return (-(x1 + 47.0) * math.sin(math.sqrt(abs(x1 + 0.5 * x0 + 47.0)))
            - x0 * math.sin(math.sqrt(abs(x0 - (x1 + 47.0)))))


def perm4(p):
    x = _coords(p, 4)
    return sum(sum((j + 10.0) * (x[j - 1] ** i - float(j) ** -i) for j in range(1, 5)) ** 2 for i in range(1, 5))


def qing6(p):
    return sum((v * v - (i + 1)) ** 2 for i, v in enumerate(_coords(p, 6)))


# See test_functions.hpp.
MIXED6_OPTIMIZERS = ("sgd", "adam", "rmsprop")
MIXED6_ACTIVATIONS = ("relu", "tanh", "gelu", "sigmoid")
_M6_OPT = (0.35, 0.0, 0.2)
_M6_ACT = ((0.0, 0.5, 0.3, 0.9), (0.4, 0.6, 0.1, 1.0), (0.2, 0.0, 0.5, 0.8))
_M6_LR = (-1.3, -3.1, -2.6)


def _mixed6_value(layers, width, o, a, lr, dropout):
    w = math.log2(width)
    l = math.log10(lr) - _M6_LR[o] + 0.2 * (layers - 4.0)
    d = dropout - 0.1 - 0.05 * (w - 4.0)
    return (_M6_OPT[o] + _M6_ACT[o][a] + 0.15 * (layers - 4.6) ** 2 + 0.1 * (w - 7.7) ** 2 + 0.6 * l * l
            + 2.0 * d * d)


def mixed6(p):
    return _mixed6_value(p["layers"], p["width"], MIXED6_OPTIMIZERS.index(p["optimizer"]),
                         MIXED6_ACTIVATIONS.index(p["activation"]), p["lr"], p["dropout"])


def mixed6_minimum():
    """Enumerates the discrete part; the best lr and dropout in closed form, clamped to their ranges."""
    best = math.inf
    for layers in range(1, 9):
        for width in range(16, 1025):
            dropout = min(max(0.1 + 0.05 * (math.log2(width) - 4.0), 0.0), 0.8)
            for o in range(3):
                log_lr = min(max(_M6_LR[o] - 0.2 * (layers - 4.0), -5.0), 0.0)
                for a in range(4):
                    best = min(best, _mixed6_value(layers, width, o, a, 10.0 ** log_lr, dropout))
    return best


MIXED6_ARGMIN = [{"layers": 5, "width": 208, "optimizer": "adam", "activation": "gelu",
                  "lr": 10.0 ** (-3.1 - 0.2), "dropout": 0.1 + 0.05 * (math.log2(208) - 4.0)}]


# The fifth held-out set (test_functions.hpp).
ELLIPSOID_SHIFT, ELLIPSOID_HALF, RASTRIGIN10_SHIFT = 6, 5.0, 7


def _ellipsoid_rotate(z):
    """y = H2 H1 z: two fixed Householder reflections, v1_j = j + 1, v2_j = (-1)^j sqrt(j + 1)."""
    for v in ([j + 1.0 for j in range(len(z))],
              [(1.0 if j % 2 == 0 else -1.0) * math.sqrt(j + 1.0) for j in range(len(z))]):
        vv = vz = 0.0
        for vj, zj in zip(v, z):
            vv += vj * vj
            vz += vj * zj
        z = [zj - 2.0 * vz / vv * vj for vj, zj in zip(v, z)]
    return z


def ellipsoid10r(p):
    y = _ellipsoid_rotate(_offsets(p, 10, ELLIPSOID_SHIFT, ELLIPSOID_HALF))
    return sum(1000.0 ** (i / 9.0) * yi * yi for i, yi in enumerate(y))


def rastrigin10(p):
    return rastrigin_of(_offsets(p, 10, RASTRIGIN10_SHIFT, RASTRIGIN_HALF))


def _lr_batch5_value(lr, batch, momentum, warmup, weight_decay):
    b = math.log2(batch)
    l = math.log10(lr) - math.log10(1.0 - momentum) + 1.0 - (b - 8.0) * math.log10(2.0)
    m, w = momentum - 0.9, math.log10(weight_decay) + 4.0 - 0.3 * (b - 8.0)
    u, s = warmup - 0.5 * (b - 5.0), b - 9.3
    return 0.05 + 0.8 * l * l + 0.5 * m * m + 0.1 * w * w + 0.02 * u * u + 0.01 * s * s


def lr_batch5(p):
    return _lr_batch5_value(p["lr"], p["batch"], p["momentum"], p["warmup"], p["weight_decay"])


def _lr_batch5_best(batch, warmup):
    """The best point at this batch and warmup: every continuous term at 0."""
    b = math.log2(batch)
    return {"lr": 0.1 * 2.0 ** (b - 8.0) * (1.0 - 0.9), "batch": batch, "momentum": 0.9, "warmup": warmup,
            "weight_decay": 10.0 ** (-4.0 + 0.3 * (b - 8.0))}


def lr_batch5_argmin():
    best = min(((b, w) for b in range(32, 8193) for w in range(11)),
               key=lambda bw: lr_batch5(_lr_batch5_best(*bw)))
    return _lr_batch5_best(*best)


def integer_end4(p):
    x, y, z = p["x"] - 0.3, p["y"] - 0.6, p["z"] - 0.45
    return 10.0 * (x * x + y * y + z * z) + 0.1 * p["k"]


def _point(values):
    return {f"x{j}": v for j, v in enumerate(values)}


def _shifted(d, half, first=0):
    return [_point([SHIFT[first + j] * half for j in range(d)])]


# See test_functions.hpp: category offsets go down, up, down in declaration order.
MIXED4_KINDS = ("alpha", "beta", "gamma", "delta")
_OFFSET = (0.6, 0.0, 0.9, 0.3)
_LR_CENTRE = (-3.2, -1.4, -2.6, -0.8)


def _mixed4_value(units, depth, kind, lr):
    u = math.log10(units) - 2.2
    l = math.log10(lr) - _LR_CENTRE[kind] + 0.3 * u
    return _OFFSET[kind] + u * u + 0.05 * (depth - 7.3) ** 2 + 0.5 * l * l


def mixed4(p):
    return _mixed4_value(p["units"], p["depth"], MIXED4_KINDS.index(p["kind"]), p["lr"])


def mixed4_minimum():
    """Enumerates the discrete part; the best lr of each in closed form, clamped to [1e-4, 1]."""
    best = math.inf
    for units in range(1, 1001):
        u = math.log10(units) - 2.2
        for depth in range(1, 17):
            for kind in range(4):
                log_lr = min(max(_LR_CENTRE[kind] - 0.3 * u, -4.0), 0.0)
                best = min(best, _mixed4_value(units, depth, kind, 10.0 ** log_lr))
    return best


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def standard_normal(seed, index):
    """The same draw as test_functions.hpp: depends only on (seed, evaluation index)."""
    a = splitmix64(splitmix64(seed) ^ index)
    b = splitmix64(a)
    u1 = ((a >> 11) + 0.5) * 2.0 ** -53
    u2 = (b >> 11) * 2.0 ** -53
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


def _cube(d, lo, hi):
    return [(f"x{j}", "float", lo, hi, False) for j in range(d)]


class PeerFunction:
    def __init__(self, name, space, value, minimum, optima, noise=0.0):
        self.name, self.space, self.value, self.minimum, self.noise = name, space, value, minimum, noise
        self.optima = optima  # the known minimisers, as parameter dicts

    def centre(self):
        """The centre of the box, in each parameter's scaling (categoricals: the first choice)."""
        out = {}
        for spec in self.space:
            if spec[1] == "categorical":
                out[spec[0]] = spec[2][0]
                continue
            lo, hi, log = spec[2], spec[3], spec[4]
            mid = math.sqrt(lo * hi) if log else 0.5 * (lo + hi)
            out[spec[0]] = round(mid) if spec[1] == "int" else mid
        return out

    def observe(self, params, seed, index):
        """What the optimiser sees at evaluation `index` of a run seeded with `seed`."""
        v = self.value(params)
        return v + self.noise * standard_normal(seed, index) if self.noise > 0.0 else v


# Known minimisers (to the digits published; compare.py --check evaluates them).
BRANIN_ARGMIN = [{"x1": -math.pi, "x2": 12.275}, {"x1": math.pi, "x2": 2.275}, {"x1": 9.42478, "x2": 2.475}]
HARTMANN6_ARGMIN = [_point((0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573))]
MIXED4_ARGMIN = [{"units": 158, "depth": 7, "kind": "beta", "lr": 10.0 ** (-1.4 - 0.3 * (math.log10(158) - 2.2))}]


def functions():
    lr_batch5_best = lr_batch5_argmin()  # an enumeration: once
    return {f.name: f for f in [
        PeerFunction("branin", [("x1", "float", -5.0, 10.0, False), ("x2", "float", 0.0, 15.0, False)],
                     branin, BRANIN_MIN, BRANIN_ARGMIN),
        PeerFunction("hartmann6", _cube(6, 0.0, 1.0), hartmann6, HARTMANN6_MIN, HARTMANN6_ARGMIN),
        PeerFunction("rosenbrock4", _cube(4, -5.0, 10.0), rosenbrock4, 0.0, [_point([1.0] * 4)]),
        PeerFunction("mixed4", [("units", "int", 1, 1000, True), ("depth", "int", 1, 16, False),
                                ("kind", "categorical", MIXED4_KINDS), ("lr", "float", 1e-4, 1.0, True)],
                     mixed4, mixed4_minimum(), MIXED4_ARGMIN),
        PeerFunction("noisy_hartmann6", _cube(6, 0.0, 1.0), hartmann6, HARTMANN6_MIN, HARTMANN6_ARGMIN, NOISE_SD),
        PeerFunction("levy10", _cube(10, -LEVY_HALF, LEVY_HALF), levy10, 0.0, _shifted(10, LEVY_HALF)),
        PeerFunction("levy20", _cube(20, -LEVY_HALF, LEVY_HALF), levy20, 0.0, _shifted(20, LEVY_HALF)),
        PeerFunction("rastrigin5", _cube(5, -RASTRIGIN_HALF, RASTRIGIN_HALF), rastrigin5, 0.0,
                     _shifted(5, RASTRIGIN_HALF, RASTRIGIN_SHIFT)),
        PeerFunction("michalewicz5", _cube(5, 0.0, math.pi), michalewicz5, MICHALEWICZ5_MIN,
                     [_point(MICHALEWICZ5_ARGMIN)]),
        PeerFunction("griewank8", _cube(8, -GRIEWANK_HALF, GRIEWANK_HALF), griewank8, 0.0,
                     _shifted(8, GRIEWANK_HALF, GRIEWANK_SHIFT)),
        # Held out: added later, never used to choose a setting (README.md).
        PeerFunction("ackley5", _cube(5, -ACKLEY_HALF, ACKLEY_HALF), ackley5, 0.0,
                     _shifted(5, ACKLEY_HALF, ACKLEY_SHIFT)),
        PeerFunction("shekel4", _cube(4, 0.0, 10.0), shekel4, SHEKEL4_MIN, [_point(SHEKEL4_ARGMIN)]),
        PeerFunction("hartmann3", _cube(3, 0.0, 1.0), hartmann3, HARTMANN3_MIN, [_point(HARTMANN3_ARGMIN)]),
        PeerFunction("styblinski8", _cube(8, -5.0, 5.0), styblinski8, STYBLINSKI8_MIN,
                     [_point([STYBLINSKI_ARGMIN] * 8)]),
        # The second held-out set.
        PeerFunction("schwefel4", _cube(4, -500.0, 500.0), schwefel4, 0.0, [_point([SCHWEFEL_ARGMIN] * 4)]),
        PeerFunction("goldstein2", _cube(2, -2.0, 2.0), goldstein2, 3.0, [_point([0.0, -1.0])]),
        PeerFunction("camel2", [("x1", "float", -3.0, 3.0, False), ("x2", "float", -2.0, 2.0, False)],
                     camel2, CAMEL2_MIN, CAMEL2_ARGMIN),
        PeerFunction("dixonprice10", _cube(10, -8.0, 12.0), dixonprice10, 0.0, [_point(DIXONPRICE10_ARGMIN)]),
        PeerFunction("powell8", _cube(8, -4.0, 5.0), powell8, 0.0, [_point([0.0] * 8)]),
        # The third held-out set.
        PeerFunction("zakharov8", _cube(8, -5.0, 10.0), zakharov8, 0.0, [_point([0.0] * 8)]),
        PeerFunction("trid6", _cube(6, -36.0, 36.0), trid6, TRID6_MIN, [_point(TRID6_ARGMIN)]),
        PeerFunction("ackley10", _cube(10, -ACKLEY_HALF, ACKLEY_HALF), ackley10, 0.0,
                     _shifted(10, ACKLEY_HALF, ACKLEY10_SHIFT)),
        PeerFunction("michalewicz10", _cube(10, 0.0, math.pi), michalewicz10, MICHALEWICZ10_MIN,
                     [_point(MICHALEWICZ10_ARGMIN)]),
        PeerFunction("rothyp20", _cube(20, -ROTHYP_HALF, ROTHYP_HALF), rothyp20, 0.0, _shifted(20, ROTHYP_HALF)),
        PeerFunction("colville4", _cube(4, -10.0, 10.0), colville4, 0.0, [_point([1.0] * 4)]),
        # The fourth held-out set.
        PeerFunction("rosenbrock10", _cube(10, -5.0, 10.0), rosenbrock10, 0.0, [_point([1.0] * 10)]),
        PeerFunction("alpine10", _cube(10, -ALPINE_HALF, ALPINE_HALF), alpine10, 0.0,
                     _shifted(10, ALPINE_HALF, ALPINE_SHIFT)),
        PeerFunction("eggholder2", _cube(2, -512.0, 512.0), eggholder2, EGGHOLDER2_MIN, [EGGHOLDER2_ARGMIN]),
        PeerFunction("perm4", _cube(4, -4.0, 4.0), perm4, 0.0, [_point([1.0 / j for j in range(1, 5)])]),
        PeerFunction("qing6", _cube(6, -200.0, 600.0), qing6, 0.0, [_point([math.sqrt(i) for i in range(1, 7)])]),
        PeerFunction("mixed6", [("layers", "int", 1, 8, False), ("width", "int", 16, 1024, True),
                                ("optimizer", "categorical", MIXED6_OPTIMIZERS),
                                ("activation", "categorical", MIXED6_ACTIVATIONS),
                                ("lr", "float", 1e-5, 1.0, True), ("dropout", "float", 0.0, 0.8, False)],
                     mixed6, mixed6_minimum(), MIXED6_ARGMIN),
        # The fifth held-out set.
        PeerFunction("ellipsoid10r", _cube(10, -ELLIPSOID_HALF, ELLIPSOID_HALF), ellipsoid10r, 0.0,
                     _shifted(10, ELLIPSOID_HALF, ELLIPSOID_SHIFT)),
        PeerFunction("rastrigin10", _cube(10, -RASTRIGIN_HALF, RASTRIGIN_HALF), rastrigin10, 0.0,
                     _shifted(10, RASTRIGIN_HALF, RASTRIGIN10_SHIFT)),
        PeerFunction("lr_batch5", [("lr", "float", 1e-4, 10.0, True), ("batch", "int", 32, 8192, True),
                                   ("momentum", "float", 0.0, 0.99, False), ("warmup", "int", 0, 10, False),
                                   ("weight_decay", "float", 1e-6, 1e-2, True)],
                     lr_batch5, lr_batch5(lr_batch5_best), [lr_batch5_best]),
        # A check of the integer ends (BayesianOptions::discrete_end_margin).
        PeerFunction("integer_end4", [("x", "float", 0.0, 1.0, False), ("y", "float", 0.0, 1.0, False),
                                      ("z", "float", 0.0, 1.0, False), ("k", "int", 0, 10, False)],
                     integer_end4, 0.0, [{"x": 0.3, "y": 0.6, "z": 0.45, "k": 0}]),
        # The standard forms (optimum at x = 1 for Levy, at the centre for the others).
        PeerFunction("levy10_standard", _cube(10, -LEVY_HALF, LEVY_HALF), levy10_standard, 0.0, [_point([1.0] * 10)]),
        PeerFunction("rastrigin5_standard", _cube(5, -RASTRIGIN_HALF, RASTRIGIN_HALF), rastrigin5_standard, 0.0,
                     [_point([0.0] * 5)]),
        PeerFunction("griewank8_standard", _cube(8, -GRIEWANK_HALF, GRIEWANK_HALF), griewank8_standard, 0.0,
                     [_point([0.0] * 8)]),
    ]}


def on_bound(params, space):
    """True when a continuous or integer parameter is on a bound of its range (up to 1e-12 of
    the range's width, for values that went through a logarithm); categoricals never count."""
    for spec in space:
        kind = spec[1]
        if kind == "categorical":
            continue
        v, lo, hi = params[spec[0]], spec[2], spec[3]
        if kind == "int":
            if v == lo or v == hi:
                return True
        else:
            tol = 1e-12 * (hi - lo)
            if abs(v - lo) <= tol or abs(hi - v) <= tol:
                return True
    return False


def suggest(trial, space):
    """An Optuna trial's parameters for `space`, with the scaling of the C++ search space."""
    params = {}
    for spec in space:
        name, kind = spec[0], spec[1]
        if kind == "float":
            params[name] = trial.suggest_float(name, spec[2], spec[3], log=spec[4])
        elif kind == "int":
            params[name] = trial.suggest_int(name, spec[2], spec[3], log=spec[4])
        else:
            params[name] = trial.suggest_categorical(name, list(spec[2]))
    return params
