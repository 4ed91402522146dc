// SPDX-License-Identifier: MIT
#include <hypertune/hypertune.hpp>
#include <hypertune/importance.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>
#include <string>

namespace ht = hypertune;

namespace {

double share_sum(const std::vector<ht::ParameterImportance>& v) {
    return std::accumulate(v.begin(), v.end(), 0.0, [](double s, const auto& p) { return s + p.share; });
}

}  // namespace

TEST_CASE("importance: the 2 parameters that matter out of 7 rank first and second") {
    ht::SearchSpace space{ht::ContinuousParameter("a", 0.0, 1.0),         ht::ContinuousParameter("lr", 1e-5, 1.0),
                          ht::IntegerParameter("depth", 1, 10),            ht::ContinuousParameter("c", 0.0, 1.0),
                          ht::CategoricalParameter("kind", {"x", "y", "z"}), ht::ContinuousParameter("d", -5.0, 5.0),
                          ht::IntegerParameter("e", 0, 3)};
    ht::Tuner tuner(space, ht::RandomSearch(), {.max_jobs = 240, .max_parallel_jobs = 2, .seed = 11});
    auto result = tuner.fit([](const ht::Config& cfg) {
        // Only lr (on its log scale) and depth matter; the rest is ignored.
        double lr = std::log10(cfg.get<double>("lr")) + 2.5;
        double depth = cfg.get<int>("depth") - 7.0;
        return lr * lr + 0.3 * depth * depth;
    });
    auto imp = ht::parameter_importance(result);
    REQUIRE(imp.size() == 7);
    CHECK(((imp[0].name == "lr" && imp[1].name == "depth") || (imp[0].name == "depth" && imp[1].name == "lr")));
    CHECK(share_sum(imp) == doctest::Approx(1.0));
    CHECK(imp[0].share + imp[1].share > 0.9);
    for (const auto& p : imp) {
        CHECK(std::isfinite(p.share));
        CHECK(p.first_order >= 0.0);
        CHECK(p.first_order <= 1.0);
        CHECK(p.groups >= 2);
    }
}

TEST_CASE("importance: a categorical parameter that matters is found") {
    ht::SearchSpace space{ht::CategoricalParameter("opt", {"sgd", "adam", "rmsprop"}),
                          ht::ContinuousParameter("noise", 0.0, 1.0)};
    ht::Tuner tuner(space, ht::RandomSearch(), {.max_jobs = 60, .seed = 3});
    auto result = tuner.fit([](const ht::Config& cfg) {
        return (cfg.get<std::string>("opt") == "adam" ? 0.0 : 1.0) + 0.01 * cfg.get<double>("noise");
    });
    auto imp = ht::parameter_importance(result);
    REQUIRE(imp.size() == 2);
    CHECK(imp[0].name == "opt");
    CHECK(imp[0].groups == 3);
    CHECK(imp[0].share > 0.9);
}

TEST_CASE("importance: a constant objective gives all zeros, never NaN") {
    ht::SearchSpace space{ht::ContinuousParameter("a", 0.0, 1.0), ht::IntegerParameter("b", 1, 4)};
    ht::Tuner tuner(space, ht::RandomSearch(), {.max_jobs = 30, .seed = 1});
    auto result = tuner.fit([](const ht::Config&) { return 0.5; });
    auto imp = ht::parameter_importance(result);
    REQUIRE(imp.size() == 2);
    for (const auto& p : imp) {
        CHECK(p.share == 0.0);
        CHECK(p.first_order == 0.0);
    }
    CHECK(imp[0].name == "a");  // ties keep the parameters' order
}

TEST_CASE("importance: the same shares whatever the objective's magnitude, up to the largest doubles") {
    // Squares of objectives beyond about 1e154 overflow; the objective is scaled first.
    ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0), ht::ContinuousParameter("noise", 0.0, 1.0)};
    auto importance = [&](double scale) {
        ht::Tuner tuner(space, ht::RandomSearch(), {.max_jobs = 40, .seed = 2});
        return ht::parameter_importance(tuner.fit([&](const ht::Config& c) {
            return scale * ((c.get<double>("x") > 0.5 ? 1.0 : -1.0) + 0.1 * c.get<double>("noise"));
        }));
    };
    const auto unit = importance(1.0);
    REQUIRE(unit.size() == 2);
    CHECK(unit[0].name == "x");
    CHECK(unit[0].share > 0.8);
    for (const double scale : {1e-300, 1e155, 1e200, 1.5e307}) {
        CAPTURE(scale);
        const auto scaled = importance(scale);
        REQUIRE(scaled.size() == 2);
        for (std::size_t i = 0; i < 2; ++i) {
            CHECK(scaled[i].name == unit[i].name);
            CHECK(scaled[i].share == doctest::Approx(unit[i].share));
            CHECK(scaled[i].first_order == doctest::Approx(unit[i].first_order));
        }
    }
}

TEST_CASE("importance: fewer than 3 completed trials give an empty result") {
    ht::SearchSpace space{ht::ContinuousParameter("a", 0.0, 1.0)};
    SUBCASE("two trials") {
        ht::Tuner tuner(space, ht::RandomSearch(), {.max_jobs = 2, .seed = 1});
        CHECK(ht::parameter_importance(tuner.fit([](const ht::Config& c) { return c.get<double>("a"); })).empty());
    }
    SUBCASE("many trials, all failed but two") {
        ht::Tuner tuner(space, ht::RandomSearch(), {.max_jobs = 20, .max_parallel_jobs = 1, .seed = 1});
        int calls = 0;
        auto result = tuner.fit([&](const ht::Config& c) {
            if (++calls > 2) throw std::runtime_error("diverged");
            return c.get<double>("a");
        });
        REQUIRE(result.count(ht::TrialStatus::Completed) < 3);
        CHECK(ht::parameter_importance(result).empty());
    }
    SUBCASE("no trials") { CHECK(ht::parameter_importance(ht::Result{}).empty()); }
}

TEST_CASE("importance: outliers are clamped, groups never split a value") {
    auto y = ht::detail::clamp_outliers({1.0, 2.0, 3.0, 4.0, 5.0, 1e9});
    CHECK(y[0] == 1.0);
    CHECK(y[4] == 5.0);
    CHECK(y[5] < 20.0);
    CHECK(ht::detail::clamp_outliers({1.0, 1.0, 1.0, 1.0, 7.0}).back() == 7.0);  // IQR 0: left alone
    auto [group, k] = ht::detail::value_groups({0.1, 0.1, 0.1, 0.9, 0.5, 0.5}, 2);
    CHECK(k == 2);
    CHECK(group[0] == group[1]);
    CHECK(group[1] == group[2]);
    CHECK(group[4] == group[5]);
    auto [per_value, kv] = ht::detail::value_groups({0.2, 0.8, 0.2, 0.8}, 5);
    CHECK(kv == 2);
    CHECK(per_value == std::vector<std::size_t>{0, 1, 0, 1});
    // One value held by more than a bin's share of the trials (a log-scaled integer's 1) skipped
    // bins that then held no trial but counted among the k groups the chance correction uses.
    std::vector<double> crowded(6, 0.0);
    for (int v = 1; v <= 10; ++v) crowded.push_back(0.1 * v);
    auto [dense, kd] = ht::detail::value_groups(crowded, 8);
    std::vector<std::size_t> held(kd, 0);
    for (const std::size_t g : dense) {
        REQUIRE(g < kd);
        ++held[g];
    }
    CHECK(held[0] == 6);
    CHECK(kd == 6);  // bins of 2 after the crowded first one
    CHECK(std::count(held.begin(), held.end(), std::size_t{0}) == 0);
}

TEST_CASE("importance: one diverged trial does not take all the variance") {
    ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0), ht::ContinuousParameter("spike", 0.0, 1.0)};
    ht::Tuner tuner(space, ht::RandomSearch(), {.max_jobs = 80, .seed = 8});
    auto result = tuner.fit([](const ht::Config& c) {
        double spike = c.get<double>("spike");
        return c.get<double>("x") + (spike > 0.99 ? 1e9 : 0.0);
    });
    auto imp = ht::parameter_importance(result);
    REQUIRE(imp.size() == 2);
    CHECK(imp[0].name == "x");
}

TEST_CASE("importance: the p-value is the F test's, at the critical values of the published tables") {
    // F(d1, d2) at its tabled 5% or 1% point: P(F >= f) = I_w(d2 / 2, d1 / 2), w = d2 / (d2 + d1 f).
    struct Row {
        std::size_t d1, d2;
        double f, p;
    };
    for (const Row r : {Row{2, 10, 4.103, 0.05}, Row{1, 1, 161.45, 0.05}, Row{3, 20, 4.938, 0.01}, Row{9, 15, 2.588, 0.05},
                        Row{1, 100, 3.936, 0.05}}) {
        CAPTURE(r.d1);
        CAPTURE(r.d2);
        const double w = static_cast<double>(r.d2) / (static_cast<double>(r.d2) + static_cast<double>(r.d1) * r.f);
        CHECK(ht::detail::incomplete_beta_halves(r.d2, r.d1, w) == doctest::Approx(r.p).epsilon(0.002));
    }
    CHECK(ht::detail::incomplete_beta_halves(4, 2, 0.0) == 0.0);
    CHECK(ht::detail::incomplete_beta_halves(4, 2, 1.0) == 1.0);
}

TEST_CASE("importance: a categorical parameter with more categories than bins is grouped per category") {
    // 10 optimizers, half of them bad, over 25 trials (5 bins): equal-count bins by category index
    // merged unrelated categories, and a parameter with no effect came first on some seeds, with
    // the whole share.
    ht::SearchSpace space{ht::CategoricalParameter("optimizer", {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}),
                          ht::ContinuousParameter("x", 0.0, 1.0), ht::IntegerParameter("k", 1, 20)};
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
        CAPTURE(seed);
        const auto result = ht::Tuner(space, ht::RandomSearch(), {.max_jobs = 25, .seed = seed})
                                .fit([](const ht::Config& c, ht::Trial& t) {
                                    const std::string opt = c.get<std::string>("optimizer");
                                    const double noise = 0.2 * std::sin(12.9898 * static_cast<double>(t.id()) + 4.1);
                                    return (opt < "f" ? 1.0 : 0.0) + noise;
                                });
        const auto imp = ht::parameter_importance(result);
        REQUIRE(imp.size() == 3);
        CHECK(imp[0].name == "optimizer");
        CHECK(imp[0].share > 0.9);
        CHECK(imp[0].first_order > 0.6);
        std::set<std::string> present;
        for (const auto& t : result.trials()) present.insert(t.config.get<std::string>("optimizer"));
        CHECK(imp[0].groups == present.size());
    }
}

TEST_CASE("importance: an objective of pure noise gives no parameter a share in nearly every run") {
    // Epsilon-squared is positive for about half of the parameters of pure noise: the one left
    // took a share of 1 in most runs. The F test with Bonferroni's bound keeps them all out in
    // about 95% of runs.
    ht::SearchSpace space{ht::ContinuousParameter("a", 0.0, 1.0), ht::IntegerParameter("b", 1, 8),
                          ht::CategoricalParameter("c", {"u", "v", "w"})};
    int all_zero = 0;
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
        const auto result = ht::Tuner(space, ht::RandomSearch(), {.max_jobs = 50, .seed = seed})
                                .fit([seed](const ht::Config&, ht::Trial& t) {
                                    std::mt19937_64 rng(seed * 1000 + t.id());
                                    return std::normal_distribution<double>(0.0, 1.0)(rng);
                                });
        const auto imp = ht::parameter_importance(result);
        REQUIRE(imp.size() == 3);
        if (share_sum(imp) == 0.0) ++all_zero;
        else CHECK(share_sum(imp) == doctest::Approx(1.0));
        for (const auto& p : imp) CHECK((p.share == 0.0) == (p.p_value >= 0.05 / 3));
    }
    MESSAGE("every share 0 in " << all_zero << " of 20 runs");
    CHECK(all_zero >= 17);
}

TEST_CASE("importance: three trials are too few to tell which parameter matters") {
    ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0), ht::ContinuousParameter("lr", 0.0, 1.0)};
    const auto imp = ht::parameter_importance(
        ht::Tuner(space, ht::RandomSearch(), {.max_jobs = 3, .seed = 4}).fit([](const ht::Config& c) {
            return c.get<double>("x");
        }));
    REQUIRE(imp.size() == 2);
    for (const auto& p : imp) CHECK(p.share == 0.0);  // each had half before
}
