// SPDX-License-Identifier: MIT
#include <hypertune/detail/gaussian_process.hpp>
#include <hypertune/detail/gp_acquisition.hpp>
#include <hypertune/detail/gp_feasibility.hpp>
#include <hypertune/detail/gp_portfolio.hpp>
#include <hypertune/detail/sobol.hpp>
#include <hypertune/search_space.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

namespace hd = hypertune::detail;

namespace {

// 12 points of a scrambled Sobol sequence in 2-D with y = sin(6 x0) + x1^2.
void sample_data(Eigen::MatrixXd& x, Eigen::VectorXd& y, int n = 12) {
    hd::ScrambledSobol sobol(2, 7);
    x.resize(n, 2);
    y.resize(n);
    for (int i = 0; i < n; ++i) {
        x(i, 0) = sobol.at(static_cast<std::uint32_t>(i), 0);
        x(i, 1) = sobol.at(static_cast<std::uint32_t>(i), 1);
        y[i] = std::sin(6.0 * x(i, 0)) + x(i, 1) * x(i, 1);
    }
}

hd::GpHyperparameters hyper(double l0, double l1, double sf2, double sn2) {
    hd::GpHyperparameters h;
    h.log_lengthscales = Eigen::Vector2d(std::log(l0), std::log(l1));
    h.log_signal_variance = std::log(sf2);
    h.log_noise_variance = std::log(sn2);
    return h;
}

// The model of sample_data(), conditioned on length scales 0.3 and 0.5, signal variance 1 and
// noise 1e-3.
hd::GaussianProcess sample_model() {
    Eigen::MatrixXd x;
    Eigen::VectorXd y;
    sample_data(x, y);
    hd::GaussianProcess gp;
    gp.set_data(x, y);
    REQUIRE(gp.condition(hyper(0.3, 0.5, 1.0, 1e-3)));
    return gp;
}

// `n` points of the scrambled Sobol sequence in 2-D with `seed`, one per row.
Eigen::MatrixXd sobol_points(Eigen::Index n, std::uint64_t seed) {
    hd::ScrambledSobol s(2, seed);
    Eigen::MatrixXd p(n, 2);
    for (Eigen::Index i = 0; i < n; ++i)
        p.row(i) << s.at(static_cast<std::uint32_t>(i), 0), s.at(static_cast<std::uint32_t>(i), 1);
    return p;
}

}  // namespace

TEST_CASE("scrambled Sobol: points in (0,1), stratified, deterministic for a seed") {
    hd::ScrambledSobol a(5, 42), b(5, 42), c(5, 43);
    // The first 16 points of each coordinate put exactly one point in each sixteenth (a (0,4,s)-net
    // property that Owen scrambling keeps).
    for (std::size_t j = 0; j < 5; ++j) {
        std::vector<int> cells(16, 0);
        for (std::uint32_t i = 0; i < 16; ++i) {
            double u = a.at(i, j);
            REQUIRE(u > 0.0);
            REQUIRE(u < 1.0);
            ++cells[static_cast<std::size_t>(u * 16.0)];
            CHECK(u == b.at(i, j));
        }
        CHECK(std::all_of(cells.begin(), cells.end(), [](int k) { return k == 1; }));
    }
    CHECK(a.at(3, 2) != c.at(3, 2));
    // 2-D stratification of coordinates 0 and 1: 16 points, one per 4x4 cell.
    std::vector<int> grid(16, 0);
    for (std::uint32_t i = 0; i < 16; ++i)
        ++grid[static_cast<std::size_t>(a.at(i, 0) * 4) * 4 + static_cast<std::size_t>(a.at(i, 1) * 4)];
    CHECK(std::all_of(grid.begin(), grid.end(), [](int k) { return k == 1; }));
    // Past the table: hashed uniforms, still in (0,1) and deterministic.
    hd::ScrambledSobol wide(40, 1);
    CHECK(wide.at(5, 39) >= 0.0);
    CHECK(wide.at(5, 39) < 1.0);
    CHECK(wide.at(5, 39) == hd::ScrambledSobol(40, 1).at(5, 39));
}

TEST_CASE("scrambled Sobol: a run of consecutive points equals the points one by one, across 2^32 and past the table") {
    const hd::ScrambledSobol s(34, 9);
    const std::size_t count = 300;
    for (const std::uint32_t first : {0U, 1U, 1000U, 0xFFFFFF00U}) {  // the last wraps past 2^32 - 1 to 0
        for (const std::size_t dim : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{31}, std::size_t{33}}) {
            std::vector<double> run(2 * count, -1.0);
            s.coordinates(first, count, dim, run.data(), 2);
            for (std::size_t i = 0; i < count; ++i) {
                INFO("first " << first << ", dimension " << dim << ", point " << i);
                REQUIRE(run[2 * i] == s.at(first + static_cast<std::uint32_t>(i), dim));
                REQUIRE(run[2 * i + 1] == -1.0);  // the stride leaves the gaps alone
            }
        }
    }
}

TEST_CASE("log EI matches the direct formula where that is accurate and stays finite far below") {
    for (double z : {-0.9, -0.5, 0.0, 0.7, 2.0, 5.0}) {
        double h = z * hd::normal_cdf(z) + hd::normal_pdf(z);
        CHECK(hd::log_h(z).log_h == doctest::Approx(std::log(h)).epsilon(1e-12));
        CHECK(hd::log_h(z).ratio == doctest::Approx(hd::normal_cdf(z) / h).epsilon(1e-10));
    }
    // Continuity across the branch points (-1 and -30), to 1e-9 relative.
    CHECK(hd::log_h(-1.0 - 1e-12).log_h == doctest::Approx(hd::log_h(-1.0).log_h).epsilon(1e-9));
    CHECK(hd::log_h(-30.0 + 1e-9).log_h == doctest::Approx(hd::log_h(-30.0).log_h).epsilon(1e-9));
    CHECK(hd::log_h(-30.0 + 1e-9).ratio == doctest::Approx(hd::log_h(-30.0).ratio).epsilon(1e-6));
    // Direct value at z = -5 where h is still representable: 5.3e-8 (h = phi(5) - 5 Phi(-5)).
    double h5 = hd::normal_pdf(-5.0) - 5.0 * hd::normal_cdf(-5.0);
    CHECK(hd::log_h(-5.0).log_h == doctest::Approx(std::log(h5)).epsilon(1e-6));
    // Far below: h underflows to 0 but log h ~ -z^2/2 - log(2 pi)/2 - 2 log|z| stays finite and monotone.
    double far = hd::log_h(-1e3).log_h;
    CHECK(std::isfinite(far));
    CHECK(far == doctest::Approx(-0.5e6 - 0.5 * std::log(2.0 * std::numbers::pi) - 2.0 * std::log(1e3)).epsilon(1e-9));
    CHECK(hd::log_h(-40.0).log_h < hd::log_h(-39.0).log_h);
    CHECK(hd::log_h(-10.0).log_h < hd::log_h(-9.0).log_h);
}

TEST_CASE("log Phi matches the direct formula where that is accurate and stays finite far below") {
    for (double z : {-5.0, -2.0, 0.0, 1.5, 6.0}) {
        CHECK(hd::log_normal_cdf(z).log_cdf == doctest::Approx(std::log(hd::normal_cdf(z))).epsilon(1e-12));
        CHECK(hd::log_normal_cdf(z).ratio == doctest::Approx(hd::normal_pdf(z) / hd::normal_cdf(z)).epsilon(1e-10));
    }
    // Where the two branches meet, and where the series takes over, no jump.
    CHECK(hd::log_normal_cdf(-5.0 - 1e-12).log_cdf == doctest::Approx(hd::log_normal_cdf(-5.0).log_cdf).epsilon(1e-9));
    CHECK(hd::log_normal_cdf(-30.0 + 1e-9).log_cdf == doctest::Approx(hd::log_normal_cdf(-30.0).log_cdf).epsilon(1e-9));
    CHECK(hd::log_normal_cdf(-20.0).log_cdf == doctest::Approx(std::log(hd::normal_cdf(-20.0))).epsilon(1e-9));
    // Far below: Phi underflows to 0 but log Phi ~ -z^2/2 - log(2 pi)/2 - log|z| and phi / Phi ~ |z|.
    const auto far = hd::log_normal_cdf(-1e3);
    CHECK(far.log_cdf == doctest::Approx(-0.5e6 - 0.5 * std::log(2.0 * std::numbers::pi) - std::log(1e3)).epsilon(1e-9));
    CHECK(far.ratio == doctest::Approx(1e3).epsilon(1e-5));
    CHECK(hd::log_normal_cdf(-40.0).log_cdf < hd::log_normal_cdf(-39.0).log_cdf);
}

TEST_CASE("GP predicts its training points (low noise) and reverts to the prior mean far away") {
    Eigen::MatrixXd x;
    Eigen::VectorXd y;
    sample_data(x, y);
    hd::GaussianProcess gp;
    gp.set_data(x, y);
    REQUIRE_FALSE(gp.constant_outputs());
    REQUIRE(gp.condition(hyper(0.3, 0.5, 1.0, 1e-8)));
    Eigen::VectorXd mean, var;
    gp.predict(x, mean, var);
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
        CHECK(mean[i] == doctest::Approx(y[i]).epsilon(1e-4).scale(1.0));
        CHECK(var[i] < 1e-5);
    }
    // 20 length scales away the correlation is ~e^-45: the mean is the outputs' mean and the
    // variance the signal variance times scale^2.
    Eigen::MatrixXd far(1, 2);
    far << 10.0, 10.0;
    gp.predict(far, mean, var);
    CHECK(mean[0] == doctest::Approx(y.mean()).epsilon(1e-9));
    const double scale2 = gp.output_scale() * gp.output_scale();
    CHECK(var[0] == doctest::Approx(scale2).epsilon(1e-9));
}

TEST_CASE("GP log marginal likelihood gradient matches central finite differences") {
    Eigen::MatrixXd x;
    Eigen::VectorXd y;
    sample_data(x, y);
    hd::GaussianProcess gp;
    gp.set_data(x, y);
    for (const auto& h : {hyper(0.3, 0.5, 1.0, 1e-2), hyper(1.5, 0.1, 0.4, 1e-4), hyper(0.05, 3.0, 2.0, 0.3)}) {
        Eigen::VectorXd theta = h.pack();
        Eigen::VectorXd grad;
        const double lml = gp.log_marginal_likelihood(theta, &grad);
        REQUIRE(std::isfinite(lml));
        for (Eigen::Index i = 0; i < theta.size(); ++i) {
            const double step = 1e-5;
            Eigen::VectorXd plus = theta, minus = theta;
            plus[i] += step;
            minus[i] -= step;
            const double fd = (gp.log_marginal_likelihood(plus, nullptr) - gp.log_marginal_likelihood(minus, nullptr)) /
                              (2.0 * step);
            INFO("parameter " << i);
            CHECK(grad[i] == doctest::Approx(fd).epsilon(1e-5).scale(1e-3));
        }
    }
    // The prior's gradient too.
    hd::GpPrior prior;
    Eigen::VectorXd theta = hyper(0.2, 0.7, 1.3, 1e-3).pack();
    Eigen::VectorXd grad;
    (void)hd::GaussianProcess::log_prior(theta, prior, &grad);
    for (Eigen::Index i = 0; i < theta.size(); ++i) {
        Eigen::VectorXd plus = theta, minus = theta;
        plus[i] += 1e-5;
        minus[i] -= 1e-5;
        const double fd = (hd::GaussianProcess::log_prior(plus, prior, nullptr) -
                           hd::GaussianProcess::log_prior(minus, prior, nullptr)) / 2e-5;
        CHECK(grad[i] == doctest::Approx(fd).epsilon(1e-6));
    }
}

TEST_CASE("K^-1 from a Cholesky factor by halving matches solving for the identity, at sizes around its leaf") {
    Eigen::MatrixXd out, scratch;  // reused from size to size, larger and smaller, as a fit reuses them
    for (const Eigen::Index n : {1, 2, 47, 48, 49, 97, 150, 301, 60}) {
        INFO("n = " << n);
        Eigen::MatrixXd a = Eigen::MatrixXd::Random(n, n);
        Eigen::MatrixXd k = a * a.transpose() + 0.1 * Eigen::MatrixXd::Identity(n, n);
        const Eigen::LLT<Eigen::MatrixXd> llt(k);
        REQUIRE(llt.info() == Eigen::Success);
        const Eigen::MatrixXd reference = llt.solve(Eigen::MatrixXd::Identity(n, n));
        hd::inverse_from_cholesky(llt.matrixLLT(), out, scratch);
        REQUIRE(out.rows() == n);
        REQUIRE(out.cols() == n);
        CHECK((out - reference).cwiseAbs().maxCoeff() <= 1e-10 * reference.cwiseAbs().maxCoeff());
        CHECK(out == out.transpose());  // both triangles, exactly symmetric
        CHECK((out * k - Eigen::MatrixXd::Identity(n, n)).cwiseAbs().maxCoeff() < 1e-8);
    }
}

TEST_CASE("GP log marginal likelihood gradient matches finite differences past the inverse's leaf size") {
    // 120 points: K^-1 comes from two levels of halving (cholesky_inverse.hpp), not the leaf alone.
    Eigen::MatrixXd x;
    Eigen::VectorXd y;
    sample_data(x, y, 120);
    hd::GaussianProcess gp;
    gp.set_data(x, y);
    const Eigen::VectorXd theta = hyper(0.2, 0.6, 1.2, 1e-3).pack();
    Eigen::VectorXd grad;
    hd::GaussianProcess::LikelihoodWorkspace workspace;
    REQUIRE(std::isfinite(gp.log_marginal_likelihood(theta, &grad, workspace)));
    for (Eigen::Index i = 0; i < theta.size(); ++i) {
        Eigen::VectorXd plus = theta, minus = theta;
        plus[i] += 1e-5;
        minus[i] -= 1e-5;
        const double fd = (gp.log_marginal_likelihood(plus, nullptr) - gp.log_marginal_likelihood(minus, nullptr)) / 2e-5;
        INFO("parameter " << i);
        CHECK(grad[i] == doctest::Approx(fd).epsilon(1e-5).scale(1e-2));
    }
}

TEST_CASE("GP prediction gradients match finite differences") {
    const hd::GaussianProcess gp = sample_model();
    Eigen::VectorXd p(2);
    p << 0.37, 0.61;
    double mean = 0, var = 0;
    Eigen::VectorXd dmean, dvar;
    gp.predict_with_gradient(p, mean, var, dmean, dvar);
    Eigen::VectorXd m, v;
    gp.predict_standardised(p.transpose(), m, v);
    CHECK(mean == doctest::Approx(m[0]).epsilon(1e-10));
    CHECK(var == doctest::Approx(v[0]).epsilon(1e-8));
    for (Eigen::Index i = 0; i < 2; ++i) {
        Eigen::VectorXd a = p, b = p;
        a[i] += 1e-6;
        b[i] -= 1e-6;
        double ma = 0, va = 0, mb = 0, vb = 0;
        Eigen::VectorXd t1, t2;
        gp.predict_with_gradient(a, ma, va, t1, t2);
        gp.predict_with_gradient(b, mb, vb, t1, t2);
        CHECK(dmean[i] == doctest::Approx((ma - mb) / 2e-6).epsilon(1e-5).scale(1e-4));
        CHECK(dvar[i] == doctest::Approx((va - vb) / 2e-6).epsilon(1e-5).scale(1e-4));
    }
    // The cheap variance bound is an upper bound of the exact variance.
    const Eigen::MatrixXd probe = sobol_points(50, 99);
    Eigen::MatrixXd cross = gp.cross_kernel(probe);
    Eigen::VectorXd exact = gp.variance_from(cross);
    Eigen::VectorXd bound = gp.variance_bound_from(cross);
    for (Eigen::Index i = 0; i < 50; ++i) CHECK(bound[i] >= exact[i] - 1e-12);
}

TEST_CASE("GP fitted means: the posterior mean at the model's own inputs, without a cross kernel") {
    const hd::GaussianProcess gp = sample_model();
    const Eigen::VectorXd direct = gp.mean_from(gp.cross_kernel(gp.inputs()));
    const Eigen::VectorXd fitted = gp.fitted_means();
    REQUIRE(fitted.size() == direct.size());
    for (Eigen::Index i = 0; i < fitted.size(); ++i) CHECK(fitted[i] == doctest::Approx(direct[i]).epsilon(1e-9).scale(1e-9));
    // with noise 1e-3 the fit stays near the data, not on it
    CHECK((fitted - gp.standardised_outputs()).norm() > 0.0);
}

TEST_CASE("GP screening of a candidate set, a block of rows at a time, matches the whole cross kernel") {
    const hd::GaussianProcess gp = sample_model();
    // Two full blocks and a partial one, so that every boundary between blocks is crossed.
    const Eigen::Index m = 2 * hd::GaussianProcess::screen_block + 37;
    Eigen::MatrixXd probe = sobol_points(m, 7);
    probe.row(m - 1) = gp.inputs().row(3);  // a model point itself: the nearest correlation is the signal variance
    const hd::GaussianProcess::Screening screening = gp.screen(probe);
    const Eigen::MatrixXd cross = gp.cross_kernel(probe);
    const Eigen::VectorXd mean = gp.mean_from(cross);
    const Eigen::VectorXd bound = gp.variance_bound_from(cross);
    REQUIRE(screening.mean.size() == m);
    for (Eigen::Index i = 0; i < m; ++i) {
        CHECK(screening.mean[i] == doctest::Approx(mean[i]).epsilon(1e-12).scale(1.0));
        CHECK(screening.nearest[i] == doctest::Approx(cross.row(i).maxCoeff()).epsilon(1e-12));
        CHECK(screening.bound[i] == doctest::Approx(bound[i]).epsilon(1e-12).scale(1.0));
    }
    CHECK(screening.nearest[m - 1] == doctest::Approx(gp.signal_variance()).epsilon(1e-12));
}

TEST_CASE("GP screening with one workspace kept across models of growing and shrinking size matches a fresh one") {
    Eigen::MatrixXd workspace;
    const Eigen::MatrixXd probe = sobol_points(hd::GaussianProcess::screen_block + 11, 5);
    for (const int n : {12, 70, 71, 30, 130}) {
        INFO("n = " << n);
        Eigen::MatrixXd x;
        Eigen::VectorXd y;
        sample_data(x, y, n);
        hd::GaussianProcess gp;
        gp.set_data(x, y);
        REQUIRE(gp.condition(hyper(0.3, 0.5, 1.0, 1e-3)));
        const hd::GaussianProcess::Screening kept = gp.screen(probe, workspace);
        const hd::GaussianProcess::Screening fresh = gp.screen(probe);
        CHECK(kept.mean == fresh.mean);
        CHECK(kept.nearest == fresh.nearest);
        CHECK(kept.bound == fresh.bound);
        CHECK(workspace.size() >= std::min<Eigen::Index>(probe.rows(), hd::GaussianProcess::screen_block) * n);
    }
}

TEST_CASE("GP acquisition: screened top candidates equal exact scoring, for EI and the confidence bounds alike") {
    const hd::GaussianProcess gp = sample_model();
    const hd::GpEncoding encoding(hypertune::SearchSpace{hypertune::ContinuousParameter("a", 0.0, 1.0),
                                                         hypertune::ContinuousParameter("b", 0.0, 1.0)});
    const Eigen::Index m = 600;
    const hd::GpCandidates c = sobol_points(m, 11);
    Eigen::MatrixXd pending(1, 2);
    pending << 0.5, 0.5;
    const hd::CandidateExclusion exclusion(pending, gp.signal_variance(), 0.05);
    const Eigen::MatrixXd cross = gp.cross_kernel(Eigen::MatrixXd(c));
    const Eigen::VectorXd mean = gp.mean_from(cross);
    const Eigen::VectorXd var = gp.variance_from(cross);
    const double best = gp.standardised_outputs().minCoeff();
    Eigen::MatrixXd workspace;
    const hd::GpAcquisition ei(gp, best, nullptr, workspace);
    hd::GpAcquisition::Screened shared = ei.screen(encoding, c, exclusion);
    CHECK(shared.admissible.size() < static_cast<std::size_t>(m));  // the pending point excludes some
    for (const hd::AcquisitionFunction& f : hd::GpPortfolio::members) {
        const hd::GpAcquisition acquisition(gp, best, nullptr, workspace, f);
        // brute force: every admissible candidate scored exactly
        std::vector<std::pair<double, Eigen::Index>> all;
        for (Eigen::Index i = 0; i < m; ++i)
            if (!exclusion.near_pending(c.row(i).data())) all.emplace_back(acquisition.value(mean[i], var[i]), i);
        std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
        const auto top = acquisition.best_candidates(encoding, c, exclusion, static_cast<std::size_t>(m), 3);
        const auto top_shared = acquisition.top(shared, static_cast<std::size_t>(m), 3);  // after the other functions'
        REQUIRE(top.size() == 3);
        REQUIRE(top_shared.size() == 3);
        for (std::size_t k = 0; k < 3; ++k) {
            CHECK(top[k].second == all[k].second);
            CHECK(top[k].first == doctest::Approx(all[k].first).epsilon(1e-9));
            CHECK(top_shared[k].second == all[k].second);
        }
        // the value at one point agrees with the scoring, and its gradient with finite differences
        Eigen::VectorXd p(2), g;
        p << 0.37, 0.61;
        double pm = 0, pv = 0;
        Eigen::VectorXd dm, dv;
        gp.predict_with_gradient(p, pm, pv, dm, dv);
        CHECK(acquisition.at(p, g) == doctest::Approx(acquisition.value(pm, pv)).epsilon(1e-9));
        for (Eigen::Index i = 0; i < 2; ++i) {
            Eigen::VectorXd a = p, b = p, ignored;
            a[i] += 1e-6;
            b[i] -= 1e-6;
            CHECK(g[i] == doctest::Approx((acquisition.at(a, ignored) - acquisition.at(b, ignored)) / 2e-6).epsilon(1e-4).scale(1e-3));
        }
    }
    // The confidence bound at 2 standard deviations goes where the model knows less than EI's pick.
    const auto ei_top = ei.top(shared, static_cast<std::size_t>(m), 1);
    const auto explore_top = hd::GpAcquisition(gp, best, nullptr, workspace, hd::GpPortfolio::members[1]).top(shared, static_cast<std::size_t>(m), 1);
    const auto exploit_top = hd::GpAcquisition(gp, best, nullptr, workspace, hd::GpPortfolio::members[2]).top(shared, static_cast<std::size_t>(m), 1);
    CHECK(var[explore_top[0].second] >= var[exploit_top[0].second]);
    CHECK(mean[exploit_top[0].second] <= mean[explore_top[0].second]);
    CHECK(ei_top.size() == 1);
}

TEST_CASE("GP-Hedge portfolio: chooses by exp(eta x gain), rewards every nominee by the model's mean once its trial is in") {
    hd::GpPortfolio portfolio;
    // equal gains: the members share [0, 1) in thirds
    CHECK(portfolio.choose(0.0) == 0);
    CHECK(portfolio.choose(0.34) == 1);
    CHECK(portfolio.choose(0.99) == 2);

    const hd::GaussianProcess gp = sample_model();
    const hd::GpEncoding encoding(hypertune::SearchSpace{hypertune::ContinuousParameter("a", 0.0, 1.0),
                                                         hypertune::ContinuousParameter("b", 0.0, 1.0)});
    const std::array<std::vector<double>, 3> nominees{{{0.1, 0.2}, {0.8, 0.9}, {0.4, 0.4}}};
    portfolio.nominate(1, nominees, 2);
    portfolio.nominate(2, nominees, 0);
    // trial 2 is still running: only trial 1 rewards
    portfolio.reward(encoding, gp, [](hypertune::TrialId id) { return id == 1; });
    Eigen::MatrixXd at(3, 2);
    for (Eigen::Index k = 0; k < 3; ++k) at.row(k) << nominees[static_cast<std::size_t>(k)][0], nominees[static_cast<std::size_t>(k)][1];
    const Eigen::VectorXd mean = gp.mean_from(gp.cross_kernel(at));
    for (std::size_t k = 0; k < 3; ++k) CHECK(portfolio.gains()[k] == doctest::Approx(-mean[static_cast<Eigen::Index>(k)]));
    CHECK(portfolio.picks()[0] == 1);
    CHECK(portfolio.picks()[2] == 1);
    // trial 1 is forgotten once rewarded; trial 2 rewards once, when it is in
    portfolio.reward(encoding, gp, [](hypertune::TrialId) { return true; });
    portfolio.reward(encoding, gp, [](hypertune::TrialId) { return true; });
    for (std::size_t k = 0; k < 3; ++k) CHECK(portfolio.gains()[k] == doctest::Approx(-2.0 * mean[static_cast<Eigen::Index>(k)]));

    // the choice's probabilities are exp(eta x gain) normalised, measured over a fine grid of draws
    std::array<double, 3> weight{};
    double total = 0.0;
    for (std::size_t k = 0; k < 3; ++k) total += weight[k] = std::exp(hd::GpPortfolio::eta * portfolio.gains()[k]);
    std::array<int, 3> count{};
    const int draws = 100000;
    for (int i = 0; i < draws; ++i) ++count[portfolio.choose((i + 0.5) / draws)];
    for (std::size_t k = 0; k < 3; ++k) CHECK(count[k] / double(draws) == doctest::Approx(weight[k] / total).epsilon(1e-3));
}

TEST_CASE("feasibility model: its bound holds, its gradient matches finite differences, its probability is right") {
    // Two constraints on the sample points: x0 - 0.5 <= 0 and 0.3 - x1 <= 0 (feasible: x0 <= 0.5, x1 >= 0.3).
    Eigen::MatrixXd x;
    Eigen::VectorXd y;
    sample_data(x, y, 40);
    Eigen::MatrixXd v(x.rows(), 2);
    v.col(0) = x.col(0).array() - 0.5;
    v.col(1) = 0.3 - x.col(1).array();
    hd::FeasibilityModel model;
    REQUIRE(model.set(x, v, {hyper(0.4, 0.4, 1.0, 1e-4), hyper(0.4, 0.4, 1.0, 1e-4)}));

    Eigen::MatrixXd probe(200, 2);
    hd::ScrambledSobol s(2, 5);
    for (Eigen::Index i = 0; i < 200; ++i) probe.row(i) << s.at(static_cast<std::uint32_t>(i), 0), s.at(static_cast<std::uint32_t>(i), 1);
    const Eigen::VectorXd bound = model.upper_bounds(probe);
    std::vector<Eigen::Index> rows(200);
    for (Eigen::Index i = 0; i < 200; ++i) rows[static_cast<std::size_t>(i)] = i;
    const Eigen::VectorXd exact = model.exact(rows);
    const std::vector<bool> likely = model.likely_feasible(probe);
    std::size_t agree = 0;
    for (Eigen::Index i = 0; i < 200; ++i) {
        CHECK(exact[i] <= 0.0);
        CHECK(bound[i] >= exact[i] - 1e-12);
        Eigen::VectorXd g;
        CHECK(model.at(probe.row(i).transpose(), g) == doctest::Approx(exact[i]).epsilon(1e-9).scale(1e-9));
        const bool truly = probe(i, 0) <= 0.5 && probe(i, 1) >= 0.3;
        agree += likely[static_cast<std::size_t>(i)] == truly ? 1 : 0;
        // well inside or well outside the region, the probability says so
        if (probe(i, 0) < 0.35 && probe(i, 1) > 0.45) CHECK(exact[i] > std::log(0.9));
        if (probe(i, 0) > 0.7) CHECK(exact[i] < std::log(0.1));
    }
    CHECK(agree >= 190);  // linear violations: the means get the boundary right but for a few near it

    Eigen::VectorXd p(2);
    p << 0.47, 0.33;  // near both boundaries, where the gradient is steep
    Eigen::VectorXd grad;
    (void)model.at(p, grad);
    for (Eigen::Index i = 0; i < 2; ++i) {
        Eigen::VectorXd a = p, b = p, unused;
        a[i] += 1e-6;
        b[i] -= 1e-6;
        CHECK(grad[i] == doctest::Approx((model.at(a, unused) - model.at(b, unused)) / 2e-6).epsilon(1e-5).scale(1e-4));
    }
}

TEST_CASE("GP Cholesky recovers from duplicate points with zero noise by adding jitter") {
    Eigen::MatrixXd x(6, 2);
    x << 0.1, 0.2, 0.1, 0.2, 0.1, 0.2, 0.5, 0.5, 0.9, 0.3, 0.9, 0.3;
    Eigen::VectorXd y(6);
    y << 1.0, 1.1, 0.9, 2.0, 3.0, 3.0;
    hd::GaussianProcess gp;
    gp.set_data(x, y);
    hd::GpHyperparameters h = hyper(0.3, 0.3, 1.0, 1e-300);  // effectively no noise: K is singular
    REQUIRE(gp.condition(h));
    CHECK(gp.jitter() > 0.0);
    Eigen::VectorXd mean, var;
    gp.predict(x, mean, var);
    CHECK(mean.allFinite());
    CHECK(var.allFinite());
    // The duplicated point is predicted near its observations' average.
    CHECK(mean[0] == doctest::Approx(1.0).epsilon(0.05));
    // Fitting with duplicates works too and keeps the noise within its bounds.
    auto fit = gp.fit({hd::GpPrior{}.mean(2)}, hd::GpPrior{});
    REQUIRE(fit.ok);
    CHECK(std::exp(fit.hyperparameters.log_noise_variance) >= 1e-6 * (1 - 1e-9));
    CHECK(gp.condition(fit.hyperparameters));
}

TEST_CASE("GP standardisation: constant outputs are flagged and predicted exactly, without NaN") {
    Eigen::MatrixXd x;
    Eigen::VectorXd y;
    sample_data(x, y, 6);
    y.setConstant(4.25);
    hd::GaussianProcess gp;
    gp.set_data(x, y);
    CHECK(gp.constant_outputs());
    CHECK(gp.output_scale() == 4.25);  // the outputs' own unit, the largest |y|
    CHECK(gp.output_mean() == 4.25);
    // Varying outputs are never taken for constant because of their units: 1e-14 and 1e155 times
    // the same data standardise alike (an absolute threshold and an overflow used to flatten them).
    for (const double unit : {1e-14, 1e155}) {
        CAPTURE(unit);
        Eigen::VectorXd varied = Eigen::VectorXd::LinSpaced(6, 1.0, 2.0) * unit;
        hd::GaussianProcess scaled;
        scaled.set_data(x, varied);
        CHECK_FALSE(scaled.constant_outputs());
        CHECK(std::isfinite(scaled.output_scale()));
        CHECK(scaled.output_mean() == doctest::Approx(1.5 * unit));
    }
    REQUIRE(gp.condition(hyper(0.3, 0.3, 1.0, 1e-4)));
    Eigen::MatrixXd probe(2, 2);
    probe << 0.3, 0.3, 5.0, 5.0;
    Eigen::VectorXd mean, var;
    gp.predict(probe, mean, var);
    CHECK(mean[0] == doctest::Approx(4.25));
    CHECK(mean[1] == doctest::Approx(4.25));
    CHECK(var.allFinite());
    // Non-constant outputs are standardised to mean 0 and standard deviation 1.
    sample_data(x, y);
    gp.set_data(x, y);
    const auto& z = gp.standardised_outputs();
    CHECK(z.mean() == doctest::Approx(0.0).scale(1.0));
    CHECK(std::sqrt(z.array().square().mean()) == doctest::Approx(1.0));
}

TEST_CASE("GP hyperparameter fit improves the log posterior and finds the relevant dimension") {
    // y depends on x0 only: the fitted length scale of x1 must be much longer than that of x0.
    hd::ScrambledSobol s(2, 3);
    const int n = 30;
    Eigen::MatrixXd x(n, 2);
    Eigen::VectorXd y(n);
    for (int i = 0; i < n; ++i) {
        x(i, 0) = s.at(static_cast<std::uint32_t>(i), 0);
        x(i, 1) = s.at(static_cast<std::uint32_t>(i), 1);
        y[i] = std::sin(6.0 * x(i, 0));
    }
    hd::GaussianProcess gp;
    gp.set_data(x, y);
    hd::GpPrior prior;
    auto start = prior.mean(2);
    Eigen::VectorXd g;
    const double before = gp.log_marginal_likelihood(start.pack(), nullptr) +
                          hd::GaussianProcess::log_prior(start.pack(), prior, &g);
    auto fit = gp.fit({start}, prior);
    REQUIRE(fit.ok);
    CHECK(fit.log_posterior > before);
    CHECK(fit.hyperparameters.log_lengthscales[1] > fit.hyperparameters.log_lengthscales[0] + 1.0);
}
