// SPDX-License-Identifier: MIT
#include <hypertune/json.hpp>
#include <hypertune/parameter.hpp>
#include <hypertune/search_space.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
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

TEST_CASE("a parameter type of the user's own, or a spec added by hand, gets the constructors' checks") {
    struct Spec {  // models the Parameter concept with any spec it is given
        using value_type = double;
        ht::ParameterSpec s;
        [[nodiscard]] const ht::ParameterSpec& spec() const { return s; }
    };
    auto refused = [](ht::ParameterSpec s) {
        ht::SearchSpace space;
        try {
            space.add(Spec{std::move(s)});
        } catch (const ht::InvalidArgument& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    using K = ht::ParameterKind;
    using S = ht::Scaling;
    // A logarithmic range from 0 gave configurations of NaN; an empty category list crashed.
    CHECK(refused({.name = "lr", .kind = K::Continuous, .scaling = S::Logarithmic, .min = 0.0, .max = 1.0}) ==
          "ContinuousParameter 'lr': Logarithmic scaling needs min > 0, got min = 0");
    CHECK(refused({.name = "opt", .kind = K::Categorical}) == "CategoricalParameter 'opt': needs at least one value");
    CHECK(refused({.name = "opt", .kind = K::Categorical, .categories = {"a", "b", "a"}}) ==
          "CategoricalParameter 'opt': value 'a' is listed twice");
    CHECK(refused({.name = "x", .kind = K::Continuous, .min = 2.0, .max = 1.0}) ==
          "ContinuousParameter 'x': bounds must be finite with min <= max, got [2, 1]");
    CHECK(refused({.name = "x", .kind = K::Continuous, .min = std::nan(""), .max = 1.0}).starts_with(
        "ContinuousParameter 'x': bounds must be finite"));
    CHECK(refused({.name = "n", .kind = K::Integer, .min = 0.5, .max = 3.0}) ==
          "IntegerParameter 'n': bounds must be integers within +-2^46, got [0.5, 3]");
    CHECK(refused({.name = "", .kind = K::Continuous, .max = 1.0}) == "ContinuousParameter: the name is empty");
    CHECK(refused({.name = "s", .kind = K::Static, .fixed = std::nan("")}) == "StaticParameter 's': the value must be finite");
    // Auto is resolved, and a categorical range is set from its categories.
    ht::SearchSpace space;
    space.add(Spec{{.name = "lr", .kind = K::Continuous, .scaling = S::Auto, .min = 1e-5, .max = 1.0}});
    space.add(Spec{{.name = "opt", .kind = K::Categorical, .max = 7.0, .categories = {"sgd", "adam"}}});
    CHECK(space.parameter(0).scaling == S::Logarithmic);
    CHECK(space.parameter(1).max == 1.0);
    for (double u : {0.0, 0.5, 0.999}) CHECK(std::isfinite(space.decode(std::vector<double>{u, u}).get<double>("lr")));
}

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
    // Exactly three decades whose ratio rounds a little short of 1000 (they were Linear).
    CHECK(ht::ContinuousParameter("h", 1e-5, 0.01).spec().scaling == ht::Scaling::Logarithmic);
    CHECK(ht::ContinuousParameter("i", 0.07, 70.0).spec().scaling == ht::Scaling::Logarithmic);
    CHECK(ht::ContinuousParameter("j", 1e-3f, 1.0f).spec().scaling == ht::Scaling::Logarithmic);
    CHECK(ht::ContinuousParameter("k", 1e-3, 0.999).spec().scaling == ht::Scaling::Linear);
}

TEST_CASE("float bounds are the decimals written, so a configuration at a bound written in JSON is inside") {
    const auto spec = ht::ContinuousParameter("dropout", 0.1f, 0.5f).spec();
    CHECK(spec.min == 0.1);  // not 0.10000000149011612, the float's binary value
    CHECK(spec.max == 0.5);
    ht::SearchSpace space{ht::ContinuousParameter("dropout", 0.1f, 0.5f)};
    const auto at_min = space.from_json(nlohmann::json::parse(R"({"dropout": 0.1})"));
    CHECK(at_min.get<float>("dropout") == 0.1f);
    CHECK(space.decode(std::vector<double>{0.0}).get<float>("dropout") == 0.1f);
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
    // The summary, the progress line and the report print a name on one line, as for metrics: a
    // newline in a parameter's name broke the summary's lines.
    CHECK(message_of([] { ht::ContinuousParameter("learning\nrate", 0.0, 1.0); }) ==
          "ContinuousParameter 'learning\\x0arate': the name has a control character (0x0a at byte 8)");
    CHECK(message_of([] { ht::CategoricalParameter("opt\t", {"a"}); }) ==
          "CategoricalParameter 'opt\\x09': the name has a control character (0x09 at byte 3)");
    CHECK(message_of([] { ht::StaticParameter(std::string("a\0b", 3), 1); }) ==
          "StaticParameter 'a\\x00b': the name has a control character (0x00 at byte 1)");
    CHECK(message_of([] { ht::IntegerParameter("depth\xE9", 1, 2); }) ==
          "IntegerParameter 'depth\xE9': the name is not valid UTF-8");
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

TEST_CASE("a continuous range's ends are exact in every scaling, and reverse-log keeps its precision near 0") {
    // 1000 came back as 999.9999999999998, 0.3 as 0.30000000000000004, 1e-8 as 1.0000000050247593e-08.
    const auto log = ht::ContinuousParameter("lr", 1.0, 1000.0, ht::Scaling::Logarithmic).spec();
    const auto lin = ht::ContinuousParameter("w", -0.7, 0.3, ht::Scaling::Linear).spec();
    const auto rev = ht::ContinuousParameter("momentum", 1e-8, 0.9, ht::Scaling::ReverseLogarithmic).spec();
    for (const auto* p : {&log, &lin, &rev}) {
        CAPTURE(p->name);
        CHECK(std::get<double>(p->from_unit(0.0)) == p->min);
        CHECK(std::get<double>(p->from_unit(1.0)) == p->max);
    }
    // Near 0, 1 - e^y cancelled to multiples of 1.1e-16; -expm1(y) keeps the relative precision.
    const double tiny = std::get<double>(rev.from_unit(1e-12));
    CHECK(tiny > rev.min);
    CHECK(std::abs(rev.to_unit(tiny) - 1e-12) < 1e-20);
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
    // An unsigned value past what a configuration holds is refused, not wrapped to a negative one.
    CHECK(std::get<std::int64_t>(ht::StaticParameter("u", std::uint64_t{1} << 62).spec().fixed) == std::int64_t{1} << 62);
    CHECK_THROWS_WITH_AS(ht::StaticParameter("u", std::numeric_limits<std::uint64_t>::max()),
                         "StaticParameter 'u': 18446744073709551615 is past the largest integer a configuration holds "
                         "(9223372036854775807)",
                         ht::InvalidArgument);
    // A float as written, as a float bound is.
    CHECK(std::get<double>(ht::StaticParameter("f", 0.1f).spec().fixed) == 0.1);
}

TEST_CASE("a static bool is read back as a bool, by name and by handle") {
    ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0)};
    auto verbose = space.add(ht::StaticParameter("verbose", true));
    auto quiet = space.add(ht::StaticParameter("quiet", false));
    const auto cfg = space.decode(std::vector<double>{0.5});
    CHECK(cfg[verbose]);
    CHECK_FALSE(cfg[quiet]);
    CHECK(cfg.get<bool>("verbose"));
    // A tuned integer is not a bool: the message names both types, as for any other mismatch.
    CHECK_THROWS_WITH_AS((void)cfg.get<bool>("x"), "parameter 'x' holds double (Continuous), not bool", ht::InvalidArgument);
    // The space as a journal records it, read back (a resumed or loaded run's configurations):
    // still a bool, as written (0 or 1) or as JSON true and false.
    const ht::SearchSpace again = ht::detail::space_from_json(space.to_json());
    const auto back = again.from_json(cfg.to_json());
    CHECK(back.get<bool>("verbose"));
    CHECK_FALSE(back.get<bool>("quiet"));
    const auto from_bools = space.from_json(nlohmann::ordered_json::parse(R"({"x": 0.25, "verbose": true, "quiet": false})"));
    CHECK(from_bools[verbose]);
    CHECK_FALSE(from_bools[quiet]);
    CHECK(from_bools.get<double>("x") == 0.25);
    // true for another kind of parameter is still refused, naming it
    CHECK_THROWS_WITH_AS((void)space.from_json(nlohmann::ordered_json::parse(R"({"x": true})")),
                         "configuration JSON: parameter 'x' has a value of type boolean", ht::InvalidArgument);
}
