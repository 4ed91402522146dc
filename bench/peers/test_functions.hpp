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

#include <hypertune/search_space.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
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

inline constexpr std::array<const char*, 6> coordinate_names = {"x0", "x1", "x2", "x3", "x4", "x5"};

inline double hartmann6(const ht::Config& c) {
    static constexpr double alpha[4] = {1.0, 1.2, 3.0, 3.2};
    static constexpr double a[4][6] = {{10, 3, 17, 3.5, 1.7, 8},
                                       {0.05, 10, 17, 0.1, 8, 14},
                                       {3, 3.5, 1.7, 10, 17, 8},
                                       {17, 8, 0.05, 10, 0.1, 14}};
    static constexpr double p[4][6] = {{0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886},
                                       {0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991},
                                       {0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650},
                                       {0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381}};
    double sum = 0.0;
    for (int i = 0; i < 4; ++i) {
        double inner = 0.0;
        for (int j = 0; j < 6; ++j) {
            const double x = c.get<double>(coordinate_names[static_cast<std::size_t>(j)]);
            inner += a[i][j] * (x - p[i][j]) * (x - p[i][j]);
        }
        sum += alpha[i] * std::exp(-inner);
    }
    return -sum;
}

inline double rosenbrock4(const ht::Config& c) {
    double x[4];
    for (std::size_t j = 0; j < 4; ++j) x[j] = c.get<double>(coordinate_names[j]);
    double sum = 0.0;
    for (std::size_t j = 0; j + 1 < 4; ++j)
        sum += 100.0 * (x[j + 1] - x[j] * x[j]) * (x[j + 1] - x[j] * x[j]) + (1.0 - x[j]) * (1.0 - x[j]);
    return sum;
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

inline std::size_t mixed4_kind_index(const std::string& kind) {
    const auto it = std::find(mixed4_kinds.begin(), mixed4_kinds.end(), kind);
    if (it == mixed4_kinds.end()) throw std::invalid_argument("mixed4: unknown kind " + kind);
    return static_cast<std::size_t>(it - mixed4_kinds.begin());
}

inline double mixed4_value(double units, double depth, std::size_t kind, double lr) {
    const double u = std::log10(units) - 2.2;
    const double l = std::log10(lr) - mixed4_lr_centre[kind] + 0.3 * u;
    return mixed4_offset[kind] + u * u + 0.05 * (depth - 7.3) * (depth - 7.3) + 0.5 * l * l;
}

inline double mixed4(const ht::Config& c) {
    return mixed4_value(static_cast<double>(c.get<std::int64_t>("units")), static_cast<double>(c.get<std::int64_t>("depth")),
                        mixed4_kind_index(c.get<std::string>("kind")), c.get<double>("lr"));
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
    return out;
}

}  // namespace peers
