// SPDX-License-Identifier: MIT
#pragma once
// The test functions of the peer comparison (bench/peers/README.md), with their search spaces and
// known minima. test_functions.py holds the same functions for Optuna; `peer_functions --evaluate`
// and `compare.py --check` verify that both give the same values.
//
//   branin            2-D, x1 in [-5, 10], x2 in [0, 15]; min 0.397887357729738
//   hartmann6         6-D on [0, 1]^6; min -3.32236801141551
//   rosenbrock4       4-D on [-5, 10]^4; min 0 at (1, 1, 1, 1)
//   mixed4            units: integer 1..1000 (log), depth: integer 1..16, kind: one of 4 categories,
//                     lr: continuous in [1e-4, 1] (log); min by enumeration (mixed4_minimum())
//   noisy_hartmann6   hartmann6 + N(0, 0.1^2) on every observation; regret on the noise-free value
//   levy10, levy20    Levy on [-10, 10]^d, its optimum moved from x = 1 to the shifted point; min 0
//   rastrigin5        Rastrigin on [-5.12, 5.12]^5, optimum moved from 0 to the shifted point; min 0
//   michalewicz5      Michalewicz (m = 10) on [0, pi]^5, unshifted; min -4.687658179088148
//   griewank8         Griewank on [-50, 50]^8, optimum moved from 0 to the shifted point; min 0
//
// Added later and never used to choose a setting (the held-out functions, bench/peers/README.md):
//   ackley5           Ackley on [-32.768, 32.768]^5, optimum moved from 0 to the shifted point; min 0
//   shekel4           Shekel (m = 10) on [0, 10]^4; min -10.53644315348353 near (4, 4, 4, 4)
//   hartmann3         Hartmann 3-D on [0, 1]^3; min -3.862779787332663
//   styblinski8       Styblinski-Tang on [-5, 5]^8; min 8 * -39.166165703771426 at x_i = -2.9035...
//
// A second held-out set, added once every setting had been chosen (bench/peers/README.md):
//   schwefel4         Schwefel on [-500, 500]^4; min 0 at x_i = 420.9687..., 0.079 of the width from
//                     the upper bound (inside the outer tenth that the initial design leaves out)
//   goldstein2        Goldstein-Price on [-2, 2]^2; min 3 at (0, -1); values up to 1e6
//   camel2            six-hump camel, x1 in [-3, 3], x2 in [-2, 2]; min -1.0316284534898774
//   dixonprice10      Dixon-Price on [-8, 12]^10 (the standard box moved: its centre's regret is
//                     1,945 there, against 1 on [-10, 10]); min 0 at x_i = 2^-((2^i - 2) / 2^i)
//   powell8           Powell on [-4, 5]^8; min 0 at the origin (off the centre of the box)
//
// A third held-out set, added after both of those and after the last setting was chosen
// (bench/peers/README.md):
//   zakharov8         Zakharov on [-5, 10]^8; min 0 at the origin; values up to about 1e9
//   trid6             Trid on [-36, 36]^6; min -50 at x_i = i (7 - i): (6, 10, 12, 12, 10, 6)
//   ackley10          Ackley on [-32.768, 32.768]^10, optimum moved from 0 to the shifted point; min 0
//   michalewicz10     Michalewicz (m = 10) on [0, pi]^10, unshifted; min -9.660151715641344
//   rothyp20          rotated hyper-ellipsoid, sum_i sum_{j<=i} z_j^2, on [-65.536, 65.536]^20,
//                     optimum moved from 0 to the shifted point; min 0
//   colville4         Colville on [-10, 10]^4; min 0 at (1, 1, 1, 1)
//
// A fourth held-out set, added after the portfolio and rank_by were built, with no setting changed
// for it (bench/peers/README.md):
//   rosenbrock10      Rosenbrock on [-5, 10]^10; min 0 at (1, ..., 1)
//   alpine10          Alpine N.1, sum |z sin z + 0.1 z|, on [-10, 10]^10, optimum moved from 0 to
//                     the shifted point; min 0 (also wherever sin z = -0.1 in every coordinate)
//   eggholder2        Eggholder on [-512, 512]^2; min -959.6406627208506 at (512, 404.2319): on
//                     a bound, so the bound-share target does not apply there
//   perm4             Perm 0,d,beta (beta = 10) on [-4, 4]^4; min 0 at x_j = 1 / j
//   qing6             Qing, sum (x_i^2 - i)^2, on [-200, 600]^6 (the standard box [-500, 500] has
//                     its optima next to the centre); min 0 at x_i = +-sqrt(i)
//   mixed6            a second stand-in for a network's validation loss: two integers (one
//                     logarithmic), two categoricals, two continuous (one logarithmic), with
//                     interactions; min by enumeration (mixed6_minimum())
//
// A fifth held-out set, added once the last setting was chosen, with none changed for it
// (bench/peers/README.md):
//   ellipsoid10r      a rotated ellipsoid, sum_i 1000^(i / 9) y_i^2 with y = H2 H1 z (two fixed
//                     Householder reflections: every valley lies across the axes), on [-5, 5]^10,
//                     optimum moved from 0 to the shifted point; min 0
//   rastrigin10       Rastrigin on [-5.12, 5.12]^10, optimum moved from 0 to the shifted point; min 0
//   lr_batch5         a stand-in for re-tuning a trainer after scaling out: the best learning rate
//                     grows with the batch size (the linear scaling rule) and with 1 / (1 - momentum),
//                     the best weight decay and warmup with the batch; an oblique valley in the
//                     logarithms of learning rate and batch size; min by enumeration
//                     (lr_batch5_minimum())
//
// A check of the integer ends (BayesianOptions::discrete_end_margin), added with that rule:
//   integer_end4      a bowl in three continuous parameters, 10 ((x - 0.3)^2 + (y - 0.6)^2 +
//                     (z - 0.45)^2) on [0, 1]^3, plus 0.1 k for an integer k in 0..10: the best k
//                     is the lower end of its range, by a small margin; min 0
//
// The standard forms of three of them, beside the shifted ones: the forms that published figures
// use, where a method that starts at the centre of the box is credited with most of the search:
//   levy10_standard, rastrigin5_standard, griewank8_standard
//
// The shifted point is centre + a fixed fraction of the half-width in each coordinate: the standard
// forms have their optimum at (or, for Levy, next to) the centre of a symmetric box, which any
// method that samples the centre first would find for free.

#include <hypertune/search_space.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace peers {

namespace ht = hypertune;

inline constexpr double branin_min = 0.397887357729738;
inline constexpr double hartmann6_min = -3.32236801141551;
inline constexpr double noise_sd = 0.1;

inline double branin(const ht::Config& c) {
    const double x1 = c.get<double>("x1");
    const double x2 = c.get<double>("x2");
    const double pi = std::numbers::pi;
    const double b = 5.1 / (4.0 * pi * pi), cc = 5.0 / pi, t = 1.0 / (8.0 * pi);
    return std::pow(x2 - b * x1 * x1 + cc * x1 - 6.0, 2) + 10.0 * (1.0 - t) * std::cos(x1) + 10.0;
}

inline constexpr std::array<const char*, 20> coordinate_names = {
    "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9",
    "x10", "x11", "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19"};

// The first d coordinates x0..x(d-1), in order (the cubes below add nothing else).
inline std::vector<double> coordinates(const ht::Config& c, std::size_t d) {
    std::vector<double> x(d);
    for (std::size_t j = 0; j < d; ++j) x[j] = std::get<double>(c.value(j));
    return x;
}

// The Hartmann family: -sum_i alpha_i exp(-sum_j a_ij (x_j - p_ij)^2), on [0, 1]^D.
template <std::size_t D>
double hartmann(const ht::Config& c, const double (&a)[4][D], const double (&p)[4][D]) {
    static constexpr double alpha[4] = {1.0, 1.2, 3.0, 3.2};
    const auto x = coordinates(c, D);
    double sum = 0.0;
    for (std::size_t i = 0; i < 4; ++i) {
        double inner = 0.0;
        for (std::size_t j = 0; j < D; ++j) inner += a[i][j] * (x[j] - p[i][j]) * (x[j] - p[i][j]);
        sum += alpha[i] * std::exp(-inner);
    }
    return -sum;
}

inline double hartmann6(const ht::Config& c) {
    static constexpr double a[4][6] = {{10, 3, 17, 3.5, 1.7, 8},
                                       {0.05, 10, 17, 0.1, 8, 14},
                                       {3, 3.5, 1.7, 10, 17, 8},
                                       {17, 8, 0.05, 10, 0.1, 14}};
    static constexpr double p[4][6] = {{0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886},
                                       {0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991},
                                       {0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650},
                                       {0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381}};
    return hartmann(c, a, p);
}

// Rosenbrock of the first d coordinates: sum 100 (x_{j+1} - x_j^2)^2 + (1 - x_j)^2.
inline double rosenbrock(const ht::Config& c, std::size_t d) {
    const auto x = coordinates(c, d);
    double sum = 0.0;
    for (std::size_t j = 0; j + 1 < d; ++j)
        sum += 100.0 * (x[j + 1] - x[j] * x[j]) * (x[j + 1] - x[j] * x[j]) + (1.0 - x[j]) * (1.0 - x[j]);
    return sum;
}

inline double rosenbrock4(const ht::Config& c) { return rosenbrock(c, 4); }

// Where the shifted functions have their optimum: centre + shift_fraction[j] * half-width, at
// 0.08 to 0.34 of the width from the centre (and at least 0.16 of it from a bound).
inline constexpr std::array<double, 20> shift_fraction = {0.42, -0.61, 0.27, -0.35, 0.68, -0.19, 0.53,
                                                          -0.47, 0.14, -0.66, 0.39, -0.23, 0.57, -0.52,
                                                          0.31, -0.28, 0.63, -0.41, 0.22, -0.58};
inline constexpr double levy_half = 10.0, rastrigin_half = 5.12, griewank_half = 50.0;
// Levy uses shift_fraction[0..d-1] (levy20 extends levy10); the others their own stretch of it,
// so that one random design does not sit equally close to every function's optimum.
inline constexpr std::size_t rastrigin_shift = 10, griewank_shift = 12, ackley_shift = 5;
inline constexpr double ackley_half = 32.768;
inline constexpr double michalewicz5_min = -4.687658179088148;


// z_j = x_j - the shifted optimum's coordinate j, for the first d coordinates; the optimum's
// coordinates are shift_fraction[first..first+d-1] * half.
inline std::vector<double> shifted(const ht::Config& c, std::size_t d, std::size_t first, double half) {
    auto z = coordinates(c, d);
    for (std::size_t j = 0; j < d; ++j) z[j] -= shift_fraction[first + j] * half;
    return z;
}

// Levy of w = 1 + (x - optimum) / 4 (the standard form's optimum is x = 1).
inline double levy_of(const std::vector<double>& w) {
    const double pi = std::numbers::pi;
    double total = std::pow(std::sin(pi * w[0]), 2);
    for (std::size_t j = 0; j + 1 < w.size(); ++j)
        total += (w[j] - 1.0) * (w[j] - 1.0) * (1.0 + 10.0 * std::pow(std::sin(pi * w[j] + 1.0), 2));
    const double last = w.back();
    return total + (last - 1.0) * (last - 1.0) * (1.0 + std::pow(std::sin(2.0 * pi * last), 2));
}

// Levy with its optimum moved from x = 1 to the shifted point.
inline double levy(const std::vector<double>& x, double half) {
    std::vector<double> w(x.size());
    for (std::size_t j = 0; j < x.size(); ++j) w[j] = 1.0 + (x[j] - shift_fraction[j] * half) / 4.0;
    return levy_of(w);
}

inline double levy10(const ht::Config& c) { return levy(coordinates(c, 10), levy_half); }
inline double levy20(const ht::Config& c) { return levy(coordinates(c, 20), levy_half); }

// Rastrigin and Griewank of the offsets z from the optimum.
inline double rastrigin_of(const std::vector<double>& z) {
    double total = 10.0 * static_cast<double>(z.size());
    for (const double zj : z) total += zj * zj - 10.0 * std::cos(2.0 * std::numbers::pi * zj);
    return total;
}

inline double griewank_of(const std::vector<double>& z) {
    double sum = 0.0, product = 1.0;
    for (std::size_t j = 0; j < z.size(); ++j) {
        sum += z[j] * z[j];
        product *= std::cos(z[j] / std::sqrt(static_cast<double>(j) + 1.0));
    }
    return 1.0 + sum / 4000.0 - product;
}

inline double rastrigin5(const ht::Config& c) { return rastrigin_of(shifted(c, 5, rastrigin_shift, rastrigin_half)); }
inline double griewank8(const ht::Config& c) { return griewank_of(shifted(c, 8, griewank_shift, griewank_half)); }

// The standard forms, unshifted: the optimum at x = 1 (Levy) or at the centre of the box.
inline double levy10_standard(const ht::Config& c) {
    std::vector<double> w = coordinates(c, 10);
    for (double& x : w) x = 1.0 + (x - 1.0) / 4.0;
    return levy_of(w);
}
inline double rastrigin5_standard(const ht::Config& c) { return rastrigin_of(coordinates(c, 5)); }
inline double griewank8_standard(const ht::Config& c) { return griewank_of(coordinates(c, 8)); }

// Michalewicz, m = 10: -sum sin(x_i) sin(i x_i^2 / pi)^20, i = 1..d. Separable, so its minimum
// is the sum of d one-dimensional minima (test_functions.py holds the minimiser).
inline double michalewicz_of(const std::vector<double>& x) {
    double total = 0.0;
    for (std::size_t j = 0; j < x.size(); ++j)
        total -= std::sin(x[j]) * std::pow(std::sin(static_cast<double>(j + 1) * x[j] * x[j] / std::numbers::pi), 20);
    return total;
}
inline double michalewicz5(const ht::Config& c) { return michalewicz_of(coordinates(c, 5)); }

// Ackley (a = 20, b = 0.2, c = 2 pi): a nearly flat outer plateau around one narrow funnel.
inline double ackley_of(const std::vector<double>& z) {
    double squares = 0.0, cosines = 0.0;
    for (const double zj : z) {
        squares += zj * zj;
        cosines += std::cos(2.0 * std::numbers::pi * zj);
    }
    const double d = static_cast<double>(z.size());
    return -20.0 * std::exp(-0.2 * std::sqrt(squares / d)) - std::exp(cosines / d) + 20.0 + std::numbers::e;
}
inline double ackley5(const ht::Config& c) { return ackley_of(shifted(c, 5, ackley_shift, ackley_half)); }

// Shekel, m = 10: ten wells of different depths on a flat floor; the deepest at (4, 4, 4, 4).
inline constexpr double shekel4_min = -10.53644315348353;
inline double shekel4(const ht::Config& c) {
    static constexpr double beta[10] = {0.1, 0.2, 0.2, 0.4, 0.4, 0.6, 0.3, 0.7, 0.5, 0.5};
    static constexpr double centre[4][10] = {{4, 1, 8, 6, 3, 2, 5, 8, 6, 7},
                                             {4, 1, 8, 6, 7, 9, 3, 1, 2, 3.6},
                                             {4, 1, 8, 6, 3, 2, 5, 8, 6, 7},
                                             {4, 1, 8, 6, 7, 9, 3, 1, 2, 3.6}};
    const auto x = coordinates(c, 4);
    double total = 0.0;
    for (std::size_t i = 0; i < 10; ++i) {
        double distance = beta[i];
        for (std::size_t j = 0; j < 4; ++j) distance += (x[j] - centre[j][i]) * (x[j] - centre[j][i]);
        total -= 1.0 / distance;
    }
    return total;
}

inline constexpr double hartmann3_min = -3.862779787332663;
inline double hartmann3(const ht::Config& c) {
    static constexpr double a[4][3] = {{3, 10, 30}, {0.1, 10, 35}, {3, 10, 30}, {0.1, 10, 35}};
    static constexpr double p[4][3] = {{0.3689, 0.1170, 0.2673},
                                       {0.4699, 0.4387, 0.7470},
                                       {0.1091, 0.8732, 0.5547},
                                       {0.0381, 0.5743, 0.8828}};
    return hartmann(c, a, p);
}

// Styblinski-Tang: 0.5 sum (x^4 - 16 x^2 + 5 x); separable, its minimum at x_i = -2.9035...
inline constexpr double styblinski8_min = 8 * -39.166165703771426;
inline double styblinski8(const ht::Config& c) {
    double total = 0.0;
    for (const double x : coordinates(c, 8)) total += 0.5 * (x * x * x * x - 16.0 * x * x + 5.0 * x);
    return total;
}

// Schwefel: 418.98 d - sum x sin(sqrt |x|); its best and second-best wells lie at opposite ends.
inline constexpr double schwefel_argmin = 420.968746359982;
inline double schwefel4(const ht::Config& c) {
    double total = 418.9828872724338 * 4.0;
    for (const double x : coordinates(c, 4)) total -= x * std::sin(std::sqrt(std::abs(x)));
    return total;
}

// Goldstein-Price: a product of two quartic factors, four local minima, values from 3 to 1e6.
inline double goldstein2(const ht::Config& c) {
    const auto x = coordinates(c, 2);
    const double a = x[0] + x[1] + 1.0, b = 2.0 * x[0] - 3.0 * x[1];
    const double left = 1.0 + a * a * (19.0 - 14.0 * x[0] + 3.0 * x[0] * x[0] - 14.0 * x[1] + 6.0 * x[0] * x[1] +
                                       3.0 * x[1] * x[1]);
    const double right = 30.0 + b * b * (18.0 - 32.0 * x[0] + 12.0 * x[0] * x[0] + 48.0 * x[1] -
                                         36.0 * x[0] * x[1] + 27.0 * x[1] * x[1]);
    return left * right;
}

// Six-hump camel: two global minima, symmetric about the origin, among six.
inline constexpr double camel2_min = -1.0316284534898774;
inline double camel2(const ht::Config& c) {
    const double x1 = c.get<double>("x1"), x2 = c.get<double>("x2");
    return (4.0 - 2.1 * x1 * x1 + x1 * x1 * x1 * x1 / 3.0) * x1 * x1 + x1 * x2 + (-4.0 + 4.0 * x2 * x2) * x2 * x2;
}

// Dixon-Price: (x1 - 1)^2 + sum_{i>=2} i (2 x_i^2 - x_{i-1})^2, a curved, badly scaled valley.
inline double dixonprice10(const ht::Config& c) {
    const auto x = coordinates(c, 10);
    double total = (x[0] - 1.0) * (x[0] - 1.0);
    for (std::size_t i = 1; i < x.size(); ++i) {
        const double t = 2.0 * x[i] * x[i] - x[i - 1];
        total += static_cast<double>(i + 1) * t * t;
    }
    return total;
}

// Powell: per block of four, (a + 10b)^2 + 5(c - d)^2 + (b - 2c)^4 + 10(a - d)^4; singular Hessian
// at the minimum.
inline double powell8(const ht::Config& c) {
    const auto x = coordinates(c, 8);
    double total = 0.0;
    for (std::size_t i = 0; i < 8; i += 4) {
        const double a = x[i], b = x[i + 1], cc = x[i + 2], d = x[i + 3];
        total += (a + 10.0 * b) * (a + 10.0 * b) + 5.0 * (cc - d) * (cc - d) + std::pow(b - 2.0 * cc, 4) +
                 10.0 * std::pow(a - d, 4);
    }
    return total;
}

// The third held-out set.

// Zakharov: sum x^2 + s^2 + s^4 with s = sum 0.5 i x_i; one minimum, a steep quartic wall.
inline double zakharov8(const ht::Config& c) {
    double squares = 0.0, s = 0.0;
    const auto x = coordinates(c, 8);
    for (std::size_t i = 0; i < x.size(); ++i) {
        squares += x[i] * x[i];
        s += 0.5 * static_cast<double>(i + 1) * x[i];
    }
    return squares + s * s + s * s * s * s;
}

// Trid: sum (x_i - 1)^2 - sum x_i x_{i-1}; a tilted bowl whose minimum lies off every diagonal.
inline constexpr double trid6_min = -50.0;
inline double trid6(const ht::Config& c) {
    const auto x = coordinates(c, 6);
    double total = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        total += (x[i] - 1.0) * (x[i] - 1.0);
        if (i > 0) total -= x[i] * x[i - 1];
    }
    return total;
}

inline constexpr std::size_t ackley10_shift = 8;
inline double ackley10(const ht::Config& c) { return ackley_of(shifted(c, 10, ackley10_shift, ackley_half)); }

inline constexpr double michalewicz10_min = -9.660151715641344;
inline double michalewicz10(const ht::Config& c) { return michalewicz_of(coordinates(c, 10)); }

// Rotated hyper-ellipsoid: sum_i (sum_{j<=i} z_j^2); the first coordinates weigh most.
inline constexpr double rothyp_half = 65.536;
inline double rothyp20(const ht::Config& c) {
    const auto z = shifted(c, 20, 0, rothyp_half);
    double total = 0.0, prefix = 0.0;
    for (const double zj : z) {
        prefix += zj * zj;
        total += prefix;
    }
    return total;
}

// Colville: a Rosenbrock-like pair of valleys coupled by linear terms.
inline double colville4(const ht::Config& c) {
    const auto x = coordinates(c, 4);
    return 100.0 * std::pow(x[0] * x[0] - x[1], 2) + std::pow(x[0] - 1.0, 2) + std::pow(x[2] - 1.0, 2) +
           90.0 * std::pow(x[2] * x[2] - x[3], 2) + 10.1 * (std::pow(x[1] - 1.0, 2) + std::pow(x[3] - 1.0, 2)) +
           19.8 * (x[1] - 1.0) * (x[3] - 1.0);
}

// The index of a categorical parameter's value among its choices (the mixed spaces).
inline std::size_t choice_index(const char* function, const std::vector<std::string>& choices, const std::string& value) {
    const auto it = std::find(choices.begin(), choices.end(), value);
    if (it == choices.end()) throw std::invalid_argument(std::string(function) + ": unknown choice " + value);
    return static_cast<std::size_t>(it - choices.begin());
}

// The fourth held-out set.

inline double rosenbrock10(const ht::Config& c) { return rosenbrock(c, 10); }

// Alpine N.1: separable, non-differentiable at its zeros, a ridge of local minima in every coordinate.
inline constexpr std::size_t alpine_shift = 4;
inline constexpr double alpine_half = 10.0;
inline double alpine10(const ht::Config& c) {
    double total = 0.0;
    for (const double z : shifted(c, 10, alpine_shift, alpine_half)) total += std::abs(z * std::sin(z) + 0.1 * z);
    return total;
}

// Eggholder: deep, irregular wells; the best lies on the upper bound of x1.
inline constexpr double eggholder2_min = -959.6406627208506;
inline double eggholder2(const ht::Config& c) {
    const auto x = coordinates(c, 2);
    return -(x[1] + 47.0) * std::sin(std::sqrt(std::abs(x[1] + 0.5 * x[0] + 47.0))) -
           x[0] * std::sin(std::sqrt(std::abs(x[0] - (x[1] + 47.0))));
}

// Perm 0,d,beta: sum_i (sum_j (j + beta) (x_j^i - j^-i))^2, one narrow minimum at x_j = 1 / j.
inline double perm4(const ht::Config& c) {
    const auto x = coordinates(c, 4);
    constexpr double beta = 10.0;
    double total = 0.0;
    for (int i = 1; i <= 4; ++i) {
        double inner = 0.0;
        for (int j = 1; j <= 4; ++j)
            inner += (j + beta) * (std::pow(x[static_cast<std::size_t>(j - 1)], i) - std::pow(j, -i));
        total += inner * inner;
    }
    return total;
}

// Qing: sum (x_i^2 - i)^2; 2^6 global minima at x_i = +-sqrt(i), values up to about 8e11.
inline double qing6(const ht::Config& c) {
    const auto x = coordinates(c, 6);
    double total = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double t = x[i] * x[i] - static_cast<double>(i + 1);
        total += t * t;
    }
    return total;
}

// mixed6: a second stand-in for a network's validation loss, written after mixed4 and never tuned on.
//   f = optimizer_offset[o] + activation_offset[o][a] + 0.15 (layers - 4.6)^2
//       + 0.1 (log2 width - 7.7)^2 + 0.6 (log10 lr - lr_centre[o] + 0.2 (layers - 4))^2
//       + 2 (dropout - 0.1 - 0.05 log2(width / 16))^2
// The best activation depends on the optimizer, the best learning rate on the optimizer and the
// depth, the best dropout on the width. Every continuous optimum stays inside its range, so the
// minimum is the smallest value of the discrete part (enumerated in mixed6_minimum()).
inline const std::vector<std::string> mixed6_optimizers = {"sgd", "adam", "rmsprop"};
inline const std::vector<std::string> mixed6_activations = {"relu", "tanh", "gelu", "sigmoid"};
inline constexpr std::array<double, 3> mixed6_optimizer_offset = {0.35, 0.0, 0.2};
inline constexpr std::array<std::array<double, 4>, 3> mixed6_activation_offset = {
    {{0.0, 0.5, 0.3, 0.9}, {0.4, 0.6, 0.1, 1.0}, {0.2, 0.0, 0.5, 0.8}}};
inline constexpr std::array<double, 3> mixed6_lr_centre = {-1.3, -3.1, -2.6};

inline double mixed6_value(double layers, double width, std::size_t optimizer, std::size_t activation, double lr,
                           double dropout) {
    const double w = std::log2(width);
    const double l = std::log10(lr) - mixed6_lr_centre[optimizer] + 0.2 * (layers - 4.0);
    const double d = dropout - 0.1 - 0.05 * (w - 4.0);
    return mixed6_optimizer_offset[optimizer] + mixed6_activation_offset[optimizer][activation] +
           0.15 * (layers - 4.6) * (layers - 4.6) + 0.1 * (w - 7.7) * (w - 7.7) + 0.6 * l * l + 2.0 * d * d;
}

inline double mixed6(const ht::Config& c) {
    return mixed6_value(static_cast<double>(c.get<std::int64_t>("layers")),
                        static_cast<double>(c.get<std::int64_t>("width")),
                        choice_index("mixed6", mixed6_optimizers, c.get<std::string>("optimizer")),
                        choice_index("mixed6", mixed6_activations, c.get<std::string>("activation")), c.get<double>("lr"),
                        c.get<double>("dropout"));
}

// Enumerates the discrete part; the best lr and dropout of each in closed form, clamped to their ranges.
inline double mixed6_minimum() {
    double best = std::numeric_limits<double>::infinity();
    for (int layers = 1; layers <= 8; ++layers)
        for (int width = 16; width <= 1024; ++width)
            for (std::size_t o = 0; o < mixed6_optimizers.size(); ++o)
                for (std::size_t a = 0; a < mixed6_activations.size(); ++a) {
                    const double log_lr = std::clamp(mixed6_lr_centre[o] - 0.2 * (layers - 4.0), -5.0, 0.0);
                    const double dropout = std::clamp(0.1 + 0.05 * (std::log2(width) - 4.0), 0.0, 0.8);
                    best = std::min(best, mixed6_value(layers, width, o, a, std::pow(10.0, log_lr), dropout));
                }
    return best;
}

// The fifth held-out set.
inline constexpr std::size_t ellipsoid_shift = 6, rastrigin10_shift = 7;
inline constexpr double ellipsoid_half = 5.0;

// y = H2 H1 z, H_k = I - 2 v_k v_k^T / (v_k^T v_k), v1_j = j + 1, v2_j = (-1)^j sqrt(j + 1): a fixed
// rotation (with a reflection) that mixes every coordinate into every axis of the ellipsoid.
inline std::vector<double> ellipsoid_rotate(std::vector<double> z) {
    const auto reflect = [&z](auto v_of) {
        double vv = 0.0, vz = 0.0;
        for (std::size_t j = 0; j < z.size(); ++j) {
            vv += v_of(j) * v_of(j);
            vz += v_of(j) * z[j];
        }
        for (std::size_t j = 0; j < z.size(); ++j) z[j] -= 2.0 * vz / vv * v_of(j);
    };
    reflect([](std::size_t j) { return static_cast<double>(j + 1); });
    reflect([](std::size_t j) { return (j % 2 == 0 ? 1.0 : -1.0) * std::sqrt(static_cast<double>(j + 1)); });
    return z;
}

inline double ellipsoid10r(const ht::Config& c) {
    const auto y = ellipsoid_rotate(shifted(c, 10, ellipsoid_shift, ellipsoid_half));
    double total = 0.0;
    for (std::size_t i = 0; i < y.size(); ++i) total += std::pow(1000.0, static_cast<double>(i) / 9.0) * y[i] * y[i];
    return total;
}

inline double rastrigin10(const ht::Config& c) {
    return rastrigin_of(shifted(c, 10, rastrigin10_shift, rastrigin_half));
}

// lr_batch5, with L = log10 lr, B = log2 batch, W = log10 weight_decay, m = momentum, w = warmup:
//   f = 0.05 + 0.8 (L - log10(1 - m) + 1 - (B - 8) log10 2)^2 + 0.5 (m - 0.9)^2
//       + 0.1 (W + 4 - 0.3 (B - 8))^2 + 0.02 (w - 0.5 (B - 5))^2 + 0.01 (B - 9.3)^2
// For every batch and warmup the continuous terms reach 0 inside their ranges (m = 0.9, L from
// -2.9 to -0.5, W from -4.9 to -2.5), so the minimum is the smallest value of the discrete part.
inline double lr_batch5_value(double lr, double batch, double momentum, double warmup, double weight_decay) {
    const double b = std::log2(batch);
    const double l = std::log10(lr) - std::log10(1.0 - momentum) + 1.0 - (b - 8.0) * std::log10(2.0);
    const double m = momentum - 0.9, w = std::log10(weight_decay) + 4.0 - 0.3 * (b - 8.0);
    const double u = warmup - 0.5 * (b - 5.0), s = b - 9.3;
    return 0.05 + 0.8 * l * l + 0.5 * m * m + 0.1 * w * w + 0.02 * u * u + 0.01 * s * s;
}

inline double lr_batch5(const ht::Config& c) {
    return lr_batch5_value(c.get<double>("lr"), static_cast<double>(c.get<std::int64_t>("batch")),
                           c.get<double>("momentum"), static_cast<double>(c.get<std::int64_t>("warmup")),
                           c.get<double>("weight_decay"));
}

inline double lr_batch5_minimum() {
    double best = std::numeric_limits<double>::infinity();
    for (int batch = 32; batch <= 8192; ++batch)
        for (int warmup = 0; warmup <= 10; ++warmup) {
            const double b = std::log2(batch);
            const double lr = 0.1 * std::pow(2.0, b - 8.0) * (1.0 - 0.9);
            best = std::min(best, lr_batch5_value(lr, batch, 0.9, warmup, std::pow(10.0, -4.0 + 0.3 * (b - 8.0))));
        }
    return best;
}

// integer_end4: an optimum with an integer on a bound, where the integer matters little.
inline double integer_end4(const ht::Config& c) {
    const double x = c.get<double>("x") - 0.3, y = c.get<double>("y") - 0.6, z = c.get<double>("z") - 0.45;
    return 10.0 * (x * x + y * y + z * z) + 0.1 * static_cast<double>(c.get<std::int64_t>("k"));
}

// mixed4: a stand-in for a small network's validation loss.
//   f = offset[kind] + (log10 units - 2.2)^2 + 0.05 (depth - 7.3)^2
//       + 0.5 (log10 lr - lr_centre[kind] + 0.3 (log10 units - 2.2))^2
// The categories' offsets go down, up, down in declaration order (best: the second), the order
// an ordinal embedding would use, and each category moves the best learning rate, which also
// depends on `units` (an interaction). The best learning rate stays inside [1e-4, 1]
// for every (units, kind), so the continuous term can be 0 and the minimum is the smallest value
// of the discrete part: kind "beta", units 158, depth 7, lr = 10^(-1.4 - 0.3 (log10 158 - 2.2)).
inline const std::vector<std::string> mixed4_kinds = {"alpha", "beta", "gamma", "delta"};
inline constexpr std::array<double, 4> mixed4_offset = {0.6, 0.0, 0.9, 0.3};
inline constexpr std::array<double, 4> mixed4_lr_centre = {-3.2, -1.4, -2.6, -0.8};


inline double mixed4_value(double units, double depth, std::size_t kind, double lr) {
    const double u = std::log10(units) - 2.2;
    const double l = std::log10(lr) - mixed4_lr_centre[kind] + 0.3 * u;
    return mixed4_offset[kind] + u * u + 0.05 * (depth - 7.3) * (depth - 7.3) + 0.5 * l * l;
}

inline double mixed4(const ht::Config& c) {
    return mixed4_value(static_cast<double>(c.get<std::int64_t>("units")), static_cast<double>(c.get<std::int64_t>("depth")),
                        choice_index("mixed4", mixed4_kinds, c.get<std::string>("kind")), c.get<double>("lr"));
}

// Enumerates the discrete part; for each, the best lr in [1e-4, 1] in closed form (clamped).
inline double mixed4_minimum() {
    double best = std::numeric_limits<double>::infinity();
    for (int units = 1; units <= 1000; ++units)
        for (int depth = 1; depth <= 16; ++depth)
            for (std::size_t kind = 0; kind < mixed4_kinds.size(); ++kind) {
                const double u = std::log10(static_cast<double>(units)) - 2.2;
                const double log_lr = std::clamp(mixed4_lr_centre[kind] - 0.3 * u, -4.0, 0.0);
                best = std::min(best, mixed4_value(units, depth, kind, std::pow(10.0, log_lr)));
            }
    return best;
}

// Observation noise: a standard normal that depends only on (seed, evaluation index), with the
// same integer arithmetic as test_functions.py, so both libraries see the same noise sequence.
inline std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

inline double standard_normal(std::uint64_t seed, std::uint64_t index) {
    const std::uint64_t a = splitmix64(splitmix64(seed) ^ index);
    const std::uint64_t b = splitmix64(a);
    const double u1 = (static_cast<double>(a >> 11) + 0.5) * 0x1.0p-53;  // in (0, 1): log is finite
    const double u2 = static_cast<double>(b >> 11) * 0x1.0p-53;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

struct TestFunction {
    std::string name;
    ht::SearchSpace space;
    double (*value)(const ht::Config&);  // noise-free
    double minimum;
    double noise = 0.0;  // sd of the observation noise

    // What the optimiser sees at evaluation `index` of a run seeded with `seed`.
    [[nodiscard]] double observe(const ht::Config& c, std::uint64_t seed, std::uint64_t index) const {
        const double v = value(c);
        return noise > 0.0 ? v + noise * standard_normal(seed, index) : v;
    }
};

inline ht::SearchSpace unit_cube(std::size_t d, double lo, double hi) {
    ht::SearchSpace s;
    for (std::size_t j = 0; j < d; ++j) s.add(ht::ContinuousParameter(coordinate_names[j], lo, hi, ht::Scaling::Linear));
    return s;
}

inline std::vector<TestFunction> test_functions() {
    std::vector<TestFunction> out;
    out.push_back({"branin",
                   ht::SearchSpace{ht::ContinuousParameter("x1", -5.0, 10.0, ht::Scaling::Linear),
                                   ht::ContinuousParameter("x2", 0.0, 15.0, ht::Scaling::Linear)},
                   branin, branin_min});
    out.push_back({"hartmann6", unit_cube(6, 0.0, 1.0), hartmann6, hartmann6_min});
    out.push_back({"rosenbrock4", unit_cube(4, -5.0, 10.0), rosenbrock4, 0.0});
    out.push_back({"mixed4",
                   ht::SearchSpace{ht::IntegerParameter<std::int64_t>("units", 1, 1000, ht::Scaling::Logarithmic),
                                   ht::IntegerParameter<std::int64_t>("depth", 1, 16, ht::Scaling::Linear),
                                   ht::CategoricalParameter("kind", mixed4_kinds),
                                   ht::ContinuousParameter("lr", 1e-4, 1.0, ht::Scaling::Logarithmic)},
                   mixed4, mixed4_minimum()});
    out.push_back({"noisy_hartmann6", unit_cube(6, 0.0, 1.0), hartmann6, hartmann6_min, noise_sd});
    out.push_back({"levy10", unit_cube(10, -levy_half, levy_half), levy10, 0.0});
    out.push_back({"levy20", unit_cube(20, -levy_half, levy_half), levy20, 0.0});
    out.push_back({"rastrigin5", unit_cube(5, -rastrigin_half, rastrigin_half), rastrigin5, 0.0});
    out.push_back({"michalewicz5", unit_cube(5, 0.0, std::numbers::pi), michalewicz5, michalewicz5_min});
    out.push_back({"griewank8", unit_cube(8, -griewank_half, griewank_half), griewank8, 0.0});
    out.push_back({"ackley5", unit_cube(5, -ackley_half, ackley_half), ackley5, 0.0});
    out.push_back({"shekel4", unit_cube(4, 0.0, 10.0), shekel4, shekel4_min});
    out.push_back({"hartmann3", unit_cube(3, 0.0, 1.0), hartmann3, hartmann3_min});
    out.push_back({"styblinski8", unit_cube(8, -5.0, 5.0), styblinski8, styblinski8_min});
    out.push_back({"schwefel4", unit_cube(4, -500.0, 500.0), schwefel4, 0.0});
    out.push_back({"goldstein2", unit_cube(2, -2.0, 2.0), goldstein2, 3.0});
    out.push_back({"camel2",
                   ht::SearchSpace{ht::ContinuousParameter("x1", -3.0, 3.0, ht::Scaling::Linear),
                                   ht::ContinuousParameter("x2", -2.0, 2.0, ht::Scaling::Linear)},
                   camel2, camel2_min});
    out.push_back({"dixonprice10", unit_cube(10, -8.0, 12.0), dixonprice10, 0.0});
    out.push_back({"powell8", unit_cube(8, -4.0, 5.0), powell8, 0.0});
    out.push_back({"zakharov8", unit_cube(8, -5.0, 10.0), zakharov8, 0.0});
    out.push_back({"trid6", unit_cube(6, -36.0, 36.0), trid6, trid6_min});
    out.push_back({"ackley10", unit_cube(10, -ackley_half, ackley_half), ackley10, 0.0});
    out.push_back({"michalewicz10", unit_cube(10, 0.0, std::numbers::pi), michalewicz10, michalewicz10_min});
    out.push_back({"rothyp20", unit_cube(20, -rothyp_half, rothyp_half), rothyp20, 0.0});
    out.push_back({"colville4", unit_cube(4, -10.0, 10.0), colville4, 0.0});
    out.push_back({"rosenbrock10", unit_cube(10, -5.0, 10.0), rosenbrock10, 0.0});
    out.push_back({"alpine10", unit_cube(10, -alpine_half, alpine_half), alpine10, 0.0});
    out.push_back({"eggholder2", unit_cube(2, -512.0, 512.0), eggholder2, eggholder2_min});
    out.push_back({"perm4", unit_cube(4, -4.0, 4.0), perm4, 0.0});
    out.push_back({"qing6", unit_cube(6, -200.0, 600.0), qing6, 0.0});
    out.push_back({"mixed6",
                   ht::SearchSpace{ht::IntegerParameter<std::int64_t>("layers", 1, 8, ht::Scaling::Linear),
                                   ht::IntegerParameter<std::int64_t>("width", 16, 1024, ht::Scaling::Logarithmic),
                                   ht::CategoricalParameter("optimizer", mixed6_optimizers),
                                   ht::CategoricalParameter("activation", mixed6_activations),
                                   ht::ContinuousParameter("lr", 1e-5, 1.0, ht::Scaling::Logarithmic),
                                   ht::ContinuousParameter("dropout", 0.0, 0.8, ht::Scaling::Linear)},
                   mixed6, mixed6_minimum()});
    out.push_back({"ellipsoid10r", unit_cube(10, -ellipsoid_half, ellipsoid_half), ellipsoid10r, 0.0});
    out.push_back({"rastrigin10", unit_cube(10, -rastrigin_half, rastrigin_half), rastrigin10, 0.0});
    out.push_back({"lr_batch5",
                   ht::SearchSpace{ht::ContinuousParameter("lr", 1e-4, 10.0, ht::Scaling::Logarithmic),
                                   ht::IntegerParameter<std::int64_t>("batch", 32, 8192, ht::Scaling::Logarithmic),
                                   ht::ContinuousParameter("momentum", 0.0, 0.99, ht::Scaling::Linear),
                                   ht::IntegerParameter<std::int64_t>("warmup", 0, 10, ht::Scaling::Linear),
                                   ht::ContinuousParameter("weight_decay", 1e-6, 1e-2, ht::Scaling::Logarithmic)},
                   lr_batch5, lr_batch5_minimum()});
    out.push_back({"integer_end4",
                   ht::SearchSpace{ht::ContinuousParameter("x", 0.0, 1.0), ht::ContinuousParameter("y", 0.0, 1.0),
                                   ht::ContinuousParameter("z", 0.0, 1.0), ht::IntegerParameter<std::int64_t>("k", 0, 10)},
                   integer_end4, 0.0});
    out.push_back({"levy10_standard", unit_cube(10, -levy_half, levy_half), levy10_standard, 0.0});
    out.push_back({"rastrigin5_standard", unit_cube(5, -rastrigin_half, rastrigin_half), rastrigin5_standard, 0.0});
    out.push_back({"griewank8_standard", unit_cube(8, -griewank_half, griewank_half), griewank8_standard, 0.0});
    return out;
}

// The continuous or integer parameters that are on a bound of their range (within 1e-12 of the
// range's width, for values that went through a logarithm), as "<name> at min" or "<name> at max";
// categoricals never count.
inline std::vector<std::string> bound_parameters(const ht::Config& c) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < c.size(); ++i) {
        const auto& p = c.parameter(i);
        double v = 0.0, tol = 0.0;
        if (p.kind == ht::ParameterKind::Integer) {
            v = static_cast<double>(std::get<std::int64_t>(c.value(i)));
        } else if (p.kind == ht::ParameterKind::Continuous) {
            v = std::get<double>(c.value(i));
            tol = 1e-12 * (p.max - p.min);
        } else {
            continue;
        }
        if (std::abs(v - p.min) <= tol) out.push_back(p.name + " at min");
        else if (std::abs(p.max - v) <= tol) out.push_back(p.name + " at max");
    }
    return out;
}

// True when some parameter is on a bound (bound_parameters); test_functions.py's on_bound is the
// same rule.
inline bool on_bound(const ht::Config& c) { return !bound_parameters(c).empty(); }

}  // namespace peers
