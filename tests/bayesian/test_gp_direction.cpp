// SPDX-License-Identifier: MIT
// The Gaussian-process sampler's oblique direction (BayesianOptions::active_direction): the
// encoding's extra input and its gradient, the direction found on a valley across the axes and
// kept once taken, none on valleys along them, and what it is worth there against the sampler
// without it.
#include <hypertune/detail/gp_encoding.hpp>
#include <hypertune/detail/gp_refinement.hpp>
#include <hypertune/hypertune.hpp>
#include <hypertune/strategies/bayesian.hpp>

#include <doctest/doctest.h>

#include "../support/test_candidates.hpp"

#include <Eigen/Core>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace ht = hypertune;

namespace direction_tests {

constexpr std::size_t candidates = ht::testing::test_candidates(2048);
constexpr int dims = 6;

ht::SearchSpace box() {
    ht::SearchSpace space;
    for (int i = 0; i < dims; ++i) space.add(ht::ContinuousParameter(fmt::format("x{}", i), -5.0, 10.0));
    return space;
}

// Zakharov: sum x_i^2 + s^2 + s^4, s = sum (i + 1) x_i / 2; minimum 0 at the origin, at the
// bottom of the slab s = 0, which lies across every axis.
double zakharov(const ht::Config& c) {
    double squares = 0.0, s = 0.0;
    for (int i = 0; i < dims; ++i) {
        const double x = c.get<double>(fmt::format("x{}", i));
        squares += x * x;
        s += 0.5 * (i + 1) * x;
    }
    return squares + s * s + s * s * s * s;
}

// An ellipsoid along the axes, scales 1 to 10^5, minimum 0 at (1, 2, ..., 6) / 2.
double axis_ellipsoid(const ht::Config& c) {
    double sum = 0.0;
    for (int i = 0; i < dims; ++i) {
        const double z = c.get<double>(fmt::format("x{}", i)) - 0.5 * (i + 1);
        sum += std::pow(10.0, i) * z * z;
    }
    return sum;
}

struct Run {
    double best = std::numeric_limits<double>::infinity();
    std::vector<double> direction;
    std::vector<std::string> notes;
};

Run run(ht::BayesianOptions options, const std::function<double(const ht::Config&)>& f, std::size_t budget,
        std::uint64_t seed) {
    options.candidates = candidates;
    ht::Bayesian b(options);
    b.start(box(), {seed, budget});
    Run out;
    for (;;) {
        auto s = b.ask();
        if (!s.runs()) break;
        const double loss = f(s.config);
        out.best = std::min(out.best, loss);
        b.tell(s.trial, ht::Outcome::completed(loss, 1));
    }
    out.direction = b.direction();
    out.notes = b.notes();
    return out;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace direction_tests

namespace dt = direction_tests;

TEST_CASE("GpEncoding: the oblique direction is one more input, with its gradient and length scale") {
    const ht::detail::GpEncoding plain(ht::SearchSpace{ht::ContinuousParameter("a", 0.0, 1.0),
                                                       ht::CategoricalParameter("c", {"p", "q"}),
                                                       ht::ContinuousParameter("b", 0.0, 1.0)});
    ht::detail::GpEncoding e = plain;
    const double w0 = 0.6, w1 = -0.8;
    e.set_direction(Eigen::Vector2d(w0, w1));
    REQUIRE(plain.features() == 4);  // a, c one-hot (2), b
    REQUIRE(e.features() == 5);

    const double u[3] = {0.2, 0.75, 0.9};
    std::vector<double> f(5);
    e.to_features(u, f.data());
    CHECK(f[0] == doctest::Approx(0.2));
    CHECK(f[1] == 0.0);
    CHECK(f[2] == 1.0);
    CHECK(f[3] == doctest::Approx(0.9));
    CHECK(f[4] == doctest::Approx(0.5 + w0 * (0.2 - 0.5) + w1 * (0.9 - 0.5)));

    // d/du of a function of the features: through the coordinate's own input and the direction's
    Eigen::VectorXd g(5);
    g << 1.0, 7.0, 7.0, 2.0, 3.0;
    CHECK(e.unit_gradient(g, 0) == doctest::Approx(1.0 + w0 * 3.0));
    CHECK(e.unit_gradient(g, 1) == doctest::Approx(2.0 + w1 * 3.0));
    CHECK(plain.unit_gradient(g, 1) == doctest::Approx(2.0));

    // A step t along coordinate b moves its input by t and the direction's by w1 t: the kernel sees
    // t^2 (1 / l_b^2 + w1^2 / l_w^2), which is t^2 / l^2 for the coordinate's length scale l.
    Eigen::VectorXd log_l(5);
    log_l << std::log(0.3), 0.0, 0.0, std::log(2.0), std::log(0.1);
    const double expected = 1.0 / std::sqrt(1.0 / 4.0 + w1 * w1 / 0.01);
    CHECK(std::exp(e.coordinate_log_lengthscale(log_l, 2)) == doctest::Approx(expected));
    CHECK(std::exp(e.coordinate_log_lengthscale(log_l, 1)) == doctest::Approx(1.0));  // categorical: its own
    CHECK(std::exp(plain.coordinate_log_lengthscale(log_l.head(4), 2)) == doctest::Approx(2.0));
}

TEST_CASE("Bayesian: a valley across the axes (Zakharov 6-D) gets its direction, and a lower regret") {
    // The slab's normal in the unit cube: every parameter has the same range, so (1, 2, ..., 6).
    std::vector<double> normal;
    for (int i = 0; i < dt::dims; ++i) normal.push_back((i + 1) / std::sqrt(91.0));
    // |cosine| > 0.8 on each of 5 seeds: a direction drawn at random in 6-D passes on one seed with
    // probability 0.03. The sampler's is above 0.85 on every seed, 2048 candidates or 256 (the
    // unoptimised and sanitizer builds').
    std::vector<double> with, without;
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
        const dt::Run r = dt::run({}, dt::zakharov, 60, seed);
        REQUIRE(r.direction.size() == static_cast<std::size_t>(dt::dims));
        double cosine = 0.0;
        for (int i = 0; i < dt::dims; ++i) cosine += r.direction[static_cast<std::size_t>(i)] * normal[static_cast<std::size_t>(i)];
        INFO("seed " << seed << ": cosine with the slab's normal " << cosine);
        CHECK(std::abs(cosine) > 0.8);
        CHECK(std::ranges::any_of(r.notes, [](const std::string& n) { return n.find("oblique direction") != std::string::npos; }));
        with.push_back(r.best);
        const dt::Run off = dt::run({.active_direction = false}, dt::zakharov, 60, seed);
        CHECK(off.direction.empty());
        without.push_back(off.best);
    }
    std::printf("Zakharov 6-D, 60 evaluations, median regret over 5 seeds: %.4g with the direction, %.4g without\n",
                dt::median(with), dt::median(without));
    CHECK(dt::median(with) < dt::median(without));
}

TEST_CASE("Bayesian: the oblique direction, once taken, is kept while its fit is better") {
    // A bowl tilted by 45 degrees in 2-D, ten times steeper across its diagonal than along it. The
    // direction is taken when the fit with it beats the axes' fit by 10 nats and then kept while
    // it beats it at all. Over these 8 seeds x 120 evaluations, a margin of 10 nats at every
    // refit dropped the direction 18 times (in 2048 candidates or 256) and left it in use at the
    // end on 5 seeds; keeping it dropped it 0 times (4 with 256 candidates: fits where it no
    // longer gained) and left it in use on 8 (7). Those figures were measured without polishing,
    // which came later and changes the trials; the test keeps it off (refine = false) so that it
    // checks the direction's rule alone.
    ht::SearchSpace space;
    space.add(ht::ContinuousParameter("x", -5.0, 5.0));
    space.add(ht::ContinuousParameter("y", -5.0, 5.0));
    std::size_t drops = 0, in_use_at_end = 0;
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
        ht::Bayesian b({.candidates = dt::candidates, .refine = false});
        b.start(space, {seed, 120});
        bool taken = false, in_use = false;
        for (;;) {
            auto s = b.ask();
            if (!s.runs()) break;
            const double along = s.config.get<double>("x") + s.config.get<double>("y");
            const double across = s.config.get<double>("x") - s.config.get<double>("y");
            b.tell(s.trial, ht::Outcome::completed(0.3 * along * along + 3.0 * across * across, 1));
            const bool now = !b.direction().empty();
            if (in_use && !now) ++drops;
            taken = taken || now;
            in_use = now;
        }
        INFO("seed " << seed);
        CHECK(taken);
        in_use_at_end += in_use ? 1 : 0;
    }
    std::printf("tilted 2-D bowl, 8 seeds x 120 evaluations: the direction dropped %zu times, in use at the end on "
                "%zu seeds\n",
                drops, in_use_at_end);
    CHECK(drops <= 6);
    CHECK(in_use_at_end >= 6);
}

TEST_CASE("GP refinement: polishing follows the acquisition's gradient through the direction's input") {
    // Two continuous coordinates around a categorical one; the losses depend on the direction's
    // input alone, so the acquisition changes along the coordinates only through it.
    ht::detail::GpEncoding e(ht::SearchSpace{ht::ContinuousParameter("a", 0.0, 1.0),
                                             ht::CategoricalParameter("c", {"p", "q"}),
                                             ht::ContinuousParameter("b", 0.0, 1.0)});
    e.set_direction(Eigen::Vector2d(0.6, -0.8));
    const std::vector<std::vector<double>> points = {{0.1, 0.2, 0.9}, {0.9, 0.7, 0.1}, {0.5, 0.2, 0.5}, {0.2, 0.7, 0.3},
                                                     {0.8, 0.2, 0.8}, {0.3, 0.7, 0.6}, {0.6, 0.2, 0.2}, {0.4, 0.7, 0.95}};
    Eigen::MatrixXd x(static_cast<Eigen::Index>(points.size()), 5);
    Eigen::VectorXd y(x.rows());
    for (std::size_t r = 0; r < points.size(); ++r) {
        Eigen::VectorXd f(5);  // a row of x is not contiguous (column-major): features go through f
        e.to_features(points[r].data(), f.data());
        x.row(static_cast<Eigen::Index>(r)) = f.transpose();
        y[static_cast<Eigen::Index>(r)] = std::pow(f[4] - 0.62, 2);  // the direction's input alone
    }
    ht::detail::GaussianProcess gp;
    gp.set_data(x, y);
    ht::detail::GpHyperparameters h;
    h.log_lengthscales = Eigen::VectorXd::Constant(5, std::log(2.0));
    h.log_lengthscales[4] = std::log(0.25);  // short along the direction, long along the rest
    h.log_noise_variance = std::log(1e-6);
    REQUIRE(gp.condition(h));
    Eigen::MatrixXd workspace;
    const double best = gp.standardised_outputs().minCoeff();
    const ht::detail::GpAcquisition acquisition(gp, best, nullptr, workspace);
    const auto value_at = [&](const std::vector<double>& u, Eigen::VectorXd& g) {
        Eigen::VectorXd f(5);
        e.to_features(u.data(), f.data());
        return acquisition.at(f, g);
    };

    // The chain rule the polishing uses, against central differences in the unit cube.
    std::vector<double> u = {0.35, 0.2, 0.45};
    Eigen::VectorXd g;
    const double start = value_at(u, g);
    for (std::size_t i = 0; i < 2; ++i) {
        const std::size_t j = e.continuous()[i];
        std::vector<double> up = u, down = u;
        up[j] += 1e-6;
        down[j] -= 1e-6;
        Eigen::VectorXd unused;
        const double numeric = (value_at(up, unused) - value_at(down, unused)) / 2e-6;
        INFO("coordinate " << j);
        CHECK(e.unit_gradient(g, i) == doctest::Approx(numeric).epsilon(1e-4));
        CHECK(std::abs(numeric) > 1e-3);  // the acquisition does move along it
    }

    // Polishing from there climbs the acquisition and returns the value at the point it leaves in u.
    const ht::detail::CandidateExclusion nothing_pending(Eigen::MatrixXd(0, 3), gp.signal_variance(), 0.05);
    const double polished = ht::detail::refine_candidate(e, acquisition, nothing_pending, u, start);
    CHECK(polished > start + 0.1);
    CHECK(u[1] == 0.2);  // the categorical coordinate stays
    Eigen::VectorXd unused;
    CHECK(value_at(u, unused) == doctest::Approx(polished));
}

TEST_CASE("Bayesian: valleys along the axes get no oblique direction") {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        const dt::Run r = dt::run({}, dt::axis_ellipsoid, 60, seed);
        INFO("seed " << seed);
        CHECK(r.direction.empty());
        CHECK(std::ranges::none_of(r.notes, [](const std::string& n) { return n.find("oblique direction") != std::string::npos; }));
    }
}
