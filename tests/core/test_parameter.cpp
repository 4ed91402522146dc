// SPDX-License-Identifier: MIT
#include <hypertune/parameter.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>

namespace ht = hypertune;

namespace {
std::string message_of(auto&& f) {
    try {
        f();
    } catch (const ht::InvalidArgument& e) {
        return e.what();
    }
    return "<no exception>";
}
}  // namespace

TEST_CASE("parameter constructors deduce their value types") {
    auto depth = ht::IntegerParameter("max_depth", 1, 10);
    static_assert(std::is_same_v<decltype(depth)::value_type, int>);
    auto eta = ht::ContinuousParameter("eta", 0, 1);  // integers given: still a real parameter
    static_assert(std::is_same_v<decltype(eta)::value_type, double>);
    auto lr = ht::ContinuousParameter("lr", 1e-3f, 1.0f);
    static_assert(std::is_same_v<decltype(lr)::value_type, float>);
    CHECK(depth.spec().kind == ht::ParameterKind::Integer);
    CHECK(eta.spec().min == 0.0);
    CHECK(eta.spec().max == 1.0);
    CHECK(lr.spec().type == "float");
}

TEST_CASE("Auto scaling picks log for positive ranges spanning three orders of magnitude") {
    CHECK(ht::ContinuousParameter("a", 1e-4, 1.0).spec().scaling == ht::Scaling::Logarithmic);
    CHECK(ht::ContinuousParameter("b", 0.001, 1.0).spec().scaling == ht::Scaling::Logarithmic);
    CHECK(ht::ContinuousParameter("c", 0.01, 1.0).spec().scaling == ht::Scaling::Linear);
    CHECK(ht::ContinuousParameter("d", 0.0, 1000.0).spec().scaling == ht::Scaling::Linear);
    CHECK(ht::IntegerParameter("e", 1, 1000).spec().scaling == ht::Scaling::Logarithmic);
    CHECK(ht::IntegerParameter("f", 1, 999).spec().scaling == ht::Scaling::Linear);
    CHECK(ht::ContinuousParameter("g", 0.0, 1.0).spec().requested_scaling == ht::Scaling::Auto);
}

TEST_CASE("invalid ranges throw InvalidArgument naming the parameter and the rule") {
    CHECK(message_of([] { ht::IntegerParameter("max_depth", 10, 1); }) ==
          "IntegerParameter 'max_depth': min must be <= max, got [10, 1]");
    CHECK(message_of([] { ht::ContinuousParameter("lr", 0.1, 0.01); }) ==
          "ContinuousParameter 'lr': min must be <= max, got [0.1, 0.01]");
    CHECK(message_of([] { ht::ContinuousParameter("lr", std::nan(""), 1.0); }) ==
          "ContinuousParameter 'lr': bounds must be finite, got [nan, 1]");
    CHECK(message_of([] { ht::ContinuousParameter("lr", 0.0, INFINITY); }) ==
          "ContinuousParameter 'lr': bounds must be finite, got [0, inf]");
    CHECK(message_of([] { ht::ContinuousParameter("lr", 0.0, 1.0, ht::Scaling::Logarithmic); }) ==
          "ContinuousParameter 'lr': Logarithmic scaling needs min > 0, got min = 0");
    CHECK(message_of([] { ht::IntegerParameter("n", 0, 10, ht::Scaling::Logarithmic); }) ==
          "IntegerParameter 'n': Logarithmic scaling needs min > 0, got min = 0");
    CHECK(message_of([] { ht::ContinuousParameter("m", 0.0, 1.0, ht::Scaling::ReverseLogarithmic); }) ==
          "ContinuousParameter 'm': ReverseLogarithmic scaling needs 0 <= min and max < 1, got [0, 1]");
    CHECK(message_of([] { ht::ContinuousParameter("m", -0.1, 0.9, ht::Scaling::ReverseLogarithmic); }) ==
          "ContinuousParameter 'm': ReverseLogarithmic scaling needs 0 <= min and max < 1, got [-0.1, 0.9]");
    CHECK(message_of([] { ht::IntegerParameter("k", 1, 5, ht::Scaling::ReverseLogarithmic); }) ==
          "IntegerParameter 'k': ReverseLogarithmic scaling is only for continuous parameters");
    CHECK(message_of([] { ht::CategoricalParameter("booster", {}); }) ==
          "CategoricalParameter 'booster': needs at least one value");
    CHECK(message_of([] { ht::CategoricalParameter("booster", {"a", "b", "a"}); }) ==
          "CategoricalParameter 'booster': value 'a' is listed twice");
    CHECK(message_of([] { ht::IntegerParameter("", 1, 2); }) == "IntegerParameter: the name is empty");
    CHECK(message_of([] { ht::IntegerParameter<std::int64_t>("big", 0, std::int64_t{1} << 60); }) ==
          "IntegerParameter 'big': bounds must lie within +-2^46, got [0, 1152921504606846976]");
}

TEST_CASE("integers under Linear scaling: every value equally likely and reachable") {
    auto p = ht::IntegerParameter("k", -2, 3).spec();  // 6 values
    std::map<std::int64_t, int> counts;
    const int n = 60000;
    for (int i = 0; i < n; ++i) {
        double u = (i + 0.5) / n;  // a fine uniform sweep of [0, 1]
        counts[std::get<std::int64_t>(p.from_unit(u))]++;
    }
    REQUIRE(counts.size() == 6);
    for (auto [value, c] : counts) {
        CHECK(value >= -2);
        CHECK(value <= 3);
        CHECK(c == n / 6);  // exact: each value owns a slice of width 1/6
    }
    CHECK(std::get<std::int64_t>(p.from_unit(0.0)) == -2);
    CHECK(std::get<std::int64_t>(p.from_unit(1.0)) == 3);
    for (std::int64_t v = -2; v <= 3; ++v) CHECK(std::get<std::int64_t>(p.from_unit(p.to_unit(v))) == v);
}

TEST_CASE("log-scaled integers and reals round-trip through the unit interval") {
    auto k = ht::IntegerParameter("k", 1, 1000, ht::Scaling::Logarithmic).spec();
    for (std::int64_t v : {1, 2, 3, 10, 99, 500, 1000}) CHECK(std::get<std::int64_t>(k.from_unit(k.to_unit(v))) == v);
    // log-uniform over the slices [0.5, 1000.5]: the midpoint is sqrt(0.5 * 1000.5) = 22.4
    CHECK(std::get<std::int64_t>(k.from_unit(0.5)) == 22);

    auto lr = ht::ContinuousParameter("lr", 1e-5, 1e-1, ht::Scaling::Logarithmic).spec();
    CHECK(std::get<double>(lr.from_unit(0.0)) == doctest::Approx(1e-5));
    CHECK(std::get<double>(lr.from_unit(0.5)) == doctest::Approx(1e-3));
    CHECK(std::get<double>(lr.from_unit(1.0)) == doctest::Approx(1e-1));
    CHECK(lr.to_unit(1e-4) == doctest::Approx(0.25));
}

TEST_CASE("reverse-logarithmic scaling is dense near 1") {
    auto m = ht::ContinuousParameter("momentum", 0.0, 0.999, ht::Scaling::ReverseLogarithmic).spec();
    CHECK(std::get<double>(m.from_unit(0.0)) == doctest::Approx(0.0));
    CHECK(std::get<double>(m.from_unit(1.0)) == doctest::Approx(0.999));
    // 1 - x is log-uniform in [0.001, 1]: the midpoint is 1 - sqrt(0.001)
    CHECK(std::get<double>(m.from_unit(0.5)) == doctest::Approx(1.0 - std::sqrt(0.001)));
    for (double x : {0.0, 0.5, 0.9, 0.99, 0.999}) CHECK(std::get<double>(m.from_unit(m.to_unit(x))) == doctest::Approx(x));
}

TEST_CASE("categorical values split the unit interval evenly") {
    auto b = ht::CategoricalParameter("booster", {"gbtree", "dart", "gblinear"}).spec();
    CHECK(std::get<std::string>(b.from_unit(0.0)) == "gbtree");
    CHECK(std::get<std::string>(b.from_unit(0.5)) == "dart");
    CHECK(std::get<std::string>(b.from_unit(1.0)) == "gblinear");
    CHECK(b.to_unit(std::string("dart")) == doctest::Approx(0.5));
    CHECK_THROWS_WITH_AS((void)b.to_unit(std::string("none")), "CategoricalParameter 'booster': 'none' is not one of its values",
                         ht::InvalidArgument);
}

TEST_CASE("static parameters keep their value") {
    auto s = ht::StaticParameter("objective", "binary:logistic").spec();
    CHECK(s.kind == ht::ParameterKind::Static);
    CHECK(!s.tuned());
    CHECK(std::get<std::string>(s.fixed) == "binary:logistic");
    CHECK(std::get<std::int64_t>(ht::StaticParameter("nthread", 2).spec().fixed) == 2);
    CHECK_THROWS_AS(ht::StaticParameter("x", std::nan("")), ht::InvalidArgument);
}
