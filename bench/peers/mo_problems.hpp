// SPDX-License-Identifier: MIT
#pragma once
// The test problems of the multi-objective peer comparison (bench/peers/README.md), every
// objective minimised, all in 6 continuous variables x0..x5 on [0, 1] (linear). mo_problems.py
// holds the same problems for Optuna, computed in the same order of operations;
// `peer_multi_objective --evaluate` and `compare_multi_objective.py --check` verify that both give
// the same values.
//
//   zdt1      f1 = x0, g = 1 + 9 (x1 + ... + x5) / 5, f2 = g (1 - sqrt(f1 / g))
//   zdt2      f1 = x0, g as zdt1,                      f2 = g (1 - (f1 / g)^2)
//   dtlz2_2   M = 2: g = sum over x1..x5 of (xi - 0.5)^2,
//             f1 = (1 + g) cos(x0 pi/2), f2 = (1 + g) sin(x0 pi/2)
//   dtlz2_3   M = 3: g = sum over x2..x5 of (xi - 0.5)^2,
//             f1 = (1 + g) cos(x0 pi/2) cos(x1 pi/2), f2 = (1 + g) cos(x0 pi/2) sin(x1 pi/2),
//             f3 = (1 + g) sin(x0 pi/2)
//
// Pareto fronts: ZDT1 f2 = 1 - sqrt(f1), ZDT2 f2 = 1 - f1^2 (f1 in [0, 1], at x1..x5 = 0); DTLZ2
// the unit sphere's positive part (at the last 6 - M + 1 variables = 0.5). With 6 variables ZDT's
// g reaches 10, so f2 does too: hence the reference point (1.1, 11) for ZDT, 1.1 per objective
// for DTLZ2. The hypervolume of the whole front up to them (`ideal_hypervolume`):
//   zdt1 11 - 1/3 + 1.1 = 11.7667, zdt2 11 - 2/3 + 1.1 = 11.4333,
//   dtlz2_2 1.1^2 - pi/4 = 0.4246, dtlz2_3 1.1^3 - pi/6 = 0.8074.

#include <hypertune/config.hpp>
#include <hypertune/parameter.hpp>
#include <hypertune/search_space.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <functional>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

namespace peers {

namespace ht = hypertune;

inline constexpr std::size_t mo_variables = 6;
inline constexpr std::array<const char*, mo_variables> mo_variable_names = {"x0", "x1", "x2", "x3", "x4", "x5"};

using Point = std::array<double, mo_variables>;

inline double zdt_g(const Point& x) {
    double sum = 0.0;
    for (std::size_t i = 1; i < mo_variables; ++i) sum += x[i];
    return 1.0 + 9.0 * sum / static_cast<double>(mo_variables - 1);
}

inline std::vector<double> zdt1(const Point& x) {
    const double f1 = x[0];
    const double g = zdt_g(x);
    return {f1, g * (1.0 - std::sqrt(f1 / g))};
}

inline std::vector<double> zdt2(const Point& x) {
    const double f1 = x[0];
    const double g = zdt_g(x);
    const double r = f1 / g;
    return {f1, g * (1.0 - r * r)};
}

// DTLZ2 with m objectives (Deb et al. 2002): the last 6 - m + 1 variables make the distance g.
inline std::vector<double> dtlz2(const Point& x, std::size_t m) {
    double g = 0.0;
    for (std::size_t i = m - 1; i < mo_variables; ++i) g += (x[i] - 0.5) * (x[i] - 0.5);
    const double half_pi = std::numbers::pi / 2.0;
    std::vector<double> f(m);
    for (std::size_t k = 0; k < m; ++k) {
        // f_k = (1 + g) cos(x0 pi/2) ... cos(x_{m-k-2} pi/2) [sin(x_{m-k-1} pi/2) unless k == 0]
        double v = 1.0 + g;
        for (std::size_t i = 0; i + k + 1 < m; ++i) v *= std::cos(x[i] * half_pi);
        if (k > 0) v *= std::sin(x[m - k - 1] * half_pi);
        f[k] = v;
    }
    return f;
}

struct MoProblem {
    std::string name;
    std::size_t objectives = 2;
    std::vector<double> reference;
    double ideal_hypervolume = 0.0;  ///< of the whole Pareto front up to `reference`
    std::function<std::vector<double>(const Point&)> values;

    [[nodiscard]] std::vector<std::string> objective_names() const {
        std::vector<std::string> names;
        for (std::size_t k = 0; k < objectives; ++k) {
            std::string objective = "f";
            objective += std::to_string(k + 1);  // not "f" + to_string(): GCC 12's false -Wrestrict
            names.push_back(std::move(objective));
        }
        return names;
    }
};

inline ht::SearchSpace mo_space() {
    ht::SearchSpace s;
    for (const char* name : mo_variable_names) s.add(ht::ContinuousParameter(name, 0.0, 1.0, ht::Scaling::Linear));
    return s;
}

inline Point point_of(const ht::Config& c) {
    Point x{};
    for (std::size_t i = 0; i < mo_variables; ++i) x[i] = c.get<double>(mo_variable_names[i]);
    return x;
}

inline std::vector<MoProblem> mo_problems() {
    const double pi = std::numbers::pi;
    return {
        {"zdt1", 2, {1.1, 11.0}, 11.0 - 1.0 / 3.0 + 1.1, zdt1},
        {"zdt2", 2, {1.1, 11.0}, 11.0 - 2.0 / 3.0 + 1.1, zdt2},
        {"dtlz2_2", 2, {1.1, 1.1}, 1.1 * 1.1 - pi / 4.0, [](const Point& x) { return dtlz2(x, 2); }},
        {"dtlz2_3", 3, {1.1, 1.1, 1.1}, 1.1 * 1.1 * 1.1 - pi / 6.0, [](const Point& x) { return dtlz2(x, 3); }},
    };
}

}  // namespace peers
