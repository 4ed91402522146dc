// SPDX-License-Identifier: MIT
#include <hypertune/config.hpp>
#include <hypertune/json.hpp>
#include <hypertune/search_space.hpp>

#include <doctest/doctest.h>

namespace ht = hypertune;

TEST_CASE("typed access by name and by handle") {
    ht::SearchSpace space;
    auto depth = space.add(ht::IntegerParameter("max_depth", 1, 10));
    auto eta = space.add(ht::ContinuousParameter("eta", 0.0f, 1.0f));
    auto booster = space.add(ht::CategoricalParameter("booster", {"gbtree", "dart"}));
    auto cfg = space.make({std::int64_t{4}, 0.25, std::string("dart")});
    static_assert(std::is_same_v<decltype(cfg[depth]), int>);
    static_assert(std::is_same_v<decltype(cfg[eta]), float>);
    static_assert(std::is_same_v<decltype(cfg[booster]), std::string>);
    CHECK(cfg[depth] == 4);
    CHECK(cfg[eta] == 0.25f);
    CHECK(cfg[booster] == "dart");
    CHECK(cfg.get<std::int64_t>("max_depth") == 4);
    CHECK(cfg.get<unsigned char>("max_depth") == 4);
    CHECK(cfg.get<double>("eta") == 0.25);
    CHECK(cfg.get<std::string_view>("booster") == "dart");
}

TEST_CASE("a wrong name or type names the parameter and both types") {
    ht::SearchSpace space{ht::IntegerParameter("max_depth", 1, 300), ht::ContinuousParameter("eta", 0.0, 1.0),
                          ht::CategoricalParameter("booster", {"gbtree"})};
    auto cfg = space.make({std::int64_t{200}, 0.5, std::string("gbtree")});
    CHECK_THROWS_WITH_AS((void)cfg.get<double>("max_depth"), "parameter 'max_depth' holds int (Integer), not double",
                         ht::InvalidArgument);
    CHECK_THROWS_WITH_AS((void)cfg.get<int>("eta"), "parameter 'eta' holds double (Continuous), not int", ht::InvalidArgument);
    CHECK_THROWS_WITH_AS((void)cfg.get<double>("booster"), "parameter 'booster' holds std::string (Categorical), not double",
                         ht::InvalidArgument);
    CHECK_THROWS_WITH_AS((void)cfg.get<std::int8_t>("max_depth"), "parameter 'max_depth': value 200 does not fit in signed char",
                         ht::InvalidArgument);
    CHECK_THROWS_WITH_AS((void)cfg.get<double>("gamma"), "Config: unknown parameter 'gamma' (known: 'max_depth', 'eta', 'booster')",
                         ht::InvalidArgument);
}

TEST_CASE("an index past the configuration, or a value of another type than declared, is a clear error") {
    ht::SearchSpace space{ht::IntegerParameter("n", 1, 3), ht::ContinuousParameter("x", 0.0, 1.0)};
    const auto cfg = space.make({std::int64_t{2}, 0.5});
    // name() and parameter() read past the end (a crash on a default Config); value() threw std::out_of_range.
    CHECK_THROWS_WITH_AS((void)cfg.name(2), "Config: parameter #2 asked of a configuration of 2 parameters",
                         ht::InvalidArgument);
    CHECK_THROWS_WITH_AS((void)cfg.parameter(5), "Config: parameter #5 asked of a configuration of 2 parameters",
                         ht::InvalidArgument);
    CHECK_THROWS_WITH_AS((void)cfg.value(2), "Config: parameter #2 asked of a configuration of 2 parameters",
                         ht::InvalidArgument);
    CHECK_THROWS_WITH_AS((void)ht::Config{}.name(0), "Config: parameter #0 asked of a configuration of 0 parameters",
                         ht::InvalidArgument);
    // Built by hand with an integer where the space declares a double: the message says what it holds.
    const ht::Config odd(std::make_shared<const std::vector<ht::ParameterSpec>>(space.parameters()),
                         {std::int64_t{2}, std::int64_t{1}});
    CHECK_THROWS_WITH_AS((void)odd.get<double>("x"),
                         "parameter 'x' is declared double (Continuous) but this configuration holds an integer for it: "
                         "the configuration was not made by its search space",
                         ht::InvalidArgument);
}

TEST_CASE("configs print with fmt and serialise to JSON") {
    ht::SearchSpace space{ht::IntegerParameter("max_depth", 1, 10), ht::ContinuousParameter("eta", 0.0, 1.0),
                          ht::CategoricalParameter("booster", {"gbtree", "dart"})};
    auto cfg = space.make({std::int64_t{3}, 0.125, std::string("dart")});
    CHECK(fmt::format("{}", cfg) == "{max_depth=3, eta=0.125, booster=dart}");
    CHECK(cfg.to_json().dump() == R"({"max_depth":3,"eta":0.125,"booster":"dart"})");
    auto back = space.from_json(nlohmann::json::parse(cfg.to_json().dump()));
    CHECK(back == cfg);
    // an integral JSON number is accepted for a continuous parameter
    CHECK(space.from_json(nlohmann::json::parse(R"({"max_depth":3,"eta":1,"booster":"dart"})")).get<double>("eta") == 1.0);
}

TEST_CASE("a static number given in JSON as the other kind of number is its value, and another value is named with both") {
    ht::SearchSpace space{ht::ContinuousParameter("eta", 0.0, 1.0), ht::StaticParameter("scale", 2.0),
                          ht::StaticParameter("seed", 5)};
    // JSON.stringify(2.0) is "2": it was refused as "value differs from its fixed value".
    const auto cfg = space.from_json(nlohmann::json::parse(R"({"eta": 0.5, "scale": 2, "seed": 5.0})"));
    CHECK(cfg.get<double>("scale") == 2.0);
    CHECK(cfg.get<int>("seed") == 5);
    CHECK_THROWS_WITH_AS((void)space.from_json(nlohmann::json::parse(R"({"eta": 0.5, "seed": 6})")),
                         "StaticParameter 'seed': 6 differs from its fixed value 5", ht::InvalidArgument);
}

TEST_CASE("configs made before a parameter was added keep their own layout") {
    ht::SearchSpace space{ht::IntegerParameter("a", 1, 3)};
    auto before = space.decode(std::vector<double>{0.5});
    space.add(ht::IntegerParameter("b", 1, 3));
    CHECK(before.size() == 1);
    CHECK(before.get<int>("a") == 2);
    CHECK_THROWS_AS((void)before.get<int>("b"), ht::InvalidArgument);
}

TEST_CASE("configurations of parameters with other names are not equal, whatever their values") {
    const ht::SearchSpace a{ht::ContinuousParameter("a", 0.0, 1.0)};
    const ht::SearchSpace b{ht::ContinuousParameter("b", 0.0, 1.0)};
    const ht::SearchSpace a_again{ht::ContinuousParameter("a", 0.0, 1.0)};
    const std::vector<double> u{0.5};
    CHECK_FALSE(a.decode(u) == b.decode(u));
    CHECK(a.decode(u) == a_again.decode(u));  // another space of the same parameter: equal
    CHECK(a.decode(u) == a.decode(u));
    CHECK_FALSE(a.decode(u) == a.decode(std::vector<double>{0.25}));
}
