// SPDX-License-Identifier: MIT
#include <hypertune/json.hpp>
#include <hypertune/result.hpp>
#include <hypertune/samplers/random_sampler.hpp>
#include <hypertune/search_space.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <cmath>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace ht = hypertune;

TEST_CASE("a search space keeps parameters in order and refuses duplicate names") {
    ht::SearchSpace space{ht::IntegerParameter("max_depth", 1, 10), ht::ContinuousParameter("eta", 0.0, 1.0),
                          ht::StaticParameter("objective", "binary:logistic"),
                          ht::CategoricalParameter("booster", {"gbtree", "dart"})};
    CHECK(space.size() == 4);
    CHECK(space.dimensions() == 3);
    CHECK(space.parameter(2).name == "objective");
    CHECK(space.tuned_index(2) == 3);
    CHECK_THROWS_WITH_AS(space.add(ht::ContinuousParameter("eta", 0.0, 2.0)),
                         "SearchSpace: parameter 'eta' is defined twice", ht::InvalidArgument);
}

TEST_CASE("a parameter named like a column that to_csv writes is refused, naming the column") {
    // Every fixed column of the CSV header (that of a run with no parameters), not a list of its own.
    std::istringstream header(ht::Result().to_csv());
    std::string line, column;
    std::getline(header, line);
    std::istringstream fields(line);
    std::vector<std::string> columns;
    while (std::getline(fields, column, ',')) columns.push_back(column);
    REQUIRE(columns.size() == 11);
    for (const auto& name : columns) {
        CAPTURE(name);
        ht::SearchSpace space{ht::ContinuousParameter("eta", 0.0, 1.0)};
        auto expected = fmt::format("parameter '{0}' has the name of the CSV column '{0}'", name);
        CHECK_THROWS_WITH_AS(space.add(ht::IntegerParameter(name, 1, 3)), doctest::Contains(expected.c_str()),
                             ht::InvalidArgument);
        CHECK(space.size() == 1);
    }
    // Names that only resemble one are fine.
    CHECK_NOTHROW(ht::SearchSpace{ht::IntegerParameter("trialid", 1, 3), ht::ContinuousParameter("TrialId_", 0.0, 1.0)});
}

TEST_CASE("an empty space or one with only static parameters has nothing to tune") {
    ht::SearchSpace empty;
    CHECK_THROWS_WITH_AS(empty.require_tunable(), "SearchSpace: no parameters", ht::InvalidArgument);
    ht::SearchSpace fixed{ht::StaticParameter("nthread", 2)};
    CHECK_THROWS_WITH_AS(fixed.require_tunable(), "SearchSpace: no tuned parameters (all are static)",
                         ht::InvalidArgument);
}

TEST_CASE("decode and encode are inverse on the unit cube") {
    ht::SearchSpace space;
    auto depth = space.add(ht::IntegerParameter("max_depth", 1, 10));
    auto lr = space.add(ht::ContinuousParameter("lr", 1e-5, 1.0));
    auto booster = space.add(ht::CategoricalParameter("booster", {"gbtree", "dart"}));
    space.add(ht::StaticParameter("nthread", 2));
    std::vector<double> u{0.55, 0.4, 0.9};
    auto cfg = space.decode(u);
    CHECK(cfg[depth] == 6);
    CHECK(cfg[lr] == doctest::Approx(std::pow(10.0, -5.0 + 0.4 * 5.0)));
    CHECK(cfg[booster] == "dart");
    CHECK(cfg.get<int>("nthread") == 2);
    auto back = space.encode(cfg);
    REQUIRE(back.size() == 3);
    CHECK(back[0] == doctest::Approx(0.55));  // the centre of 6's slice: (6 - 0.5) / 10
    CHECK(back[1] == doctest::Approx(0.4));
    CHECK(back[2] == doctest::Approx(0.75));
    CHECK(space.decode(back) == cfg);
    CHECK_THROWS_WITH_AS((void)space.decode(std::vector<double>{0.5}),
                         "SearchSpace::decode: got 1 coordinates for 3 tuned parameters", ht::InvalidArgument);
}

TEST_CASE("configurations from JSON are checked against the space") {
    ht::SearchSpace space{ht::IntegerParameter("max_depth", 1, 10), ht::ContinuousParameter("eta", 0.0, 1.0),
                          ht::StaticParameter("nthread", 2)};
    auto cfg = space.from_json(nlohmann::json::parse(R"({"max_depth": 3, "eta": 0.25})"));
    CHECK(cfg.get<int>("max_depth") == 3);
    CHECK(cfg.get<double>("eta") == 0.25);
    CHECK(cfg.get<long>("nthread") == 2);
    // round trip through the config's own JSON
    CHECK(space.from_json(nlohmann::json::parse(cfg.to_json().dump())) == cfg);
    CHECK_THROWS_WITH_AS((void)space.from_json(nlohmann::json::parse(R"({"max_depth": 3})")),
                         "configuration JSON: parameter 'eta' is missing", ht::InvalidArgument);
    CHECK_THROWS_WITH_AS((void)space.from_json(nlohmann::json::parse(R"({"max_depth": 3, "eta": 0.1, "gamma": 1})")),
                         "configuration JSON: unknown parameter 'gamma'", ht::InvalidArgument);
    CHECK_THROWS_WITH_AS((void)space.from_json(nlohmann::json::parse(R"({"max_depth": 11, "eta": 0.1})")),
                         "IntegerParameter 'max_depth': 11 is outside [1, 10]", ht::InvalidArgument);
    CHECK_THROWS_WITH_AS((void)space.from_json(nlohmann::json::parse(R"({"max_depth": 2.5, "eta": 0.1})")),
                         "IntegerParameter 'max_depth': 2.5 is not an integer of [1, 10]", ht::InvalidArgument);
    // Past 64 bits, JSON's integer is a real number: named with the range, not as "not an integer" alone.
    CHECK_THROWS_WITH_AS((void)space.from_json(nlohmann::json::parse(R"({"max_depth": 18446744073709551615, "eta": 0.1})")),
                         "IntegerParameter 'max_depth': 1.8446744073709552e+19 is not an integer of [1, 10]",
                         ht::InvalidArgument);
    CHECK_THROWS_WITH_AS((void)space.from_json(nlohmann::json::parse(R"({"max_depth": "3", "eta": 0.1})")),
                         "IntegerParameter 'max_depth': the text '3' is not an integer of [1, 10]", ht::InvalidArgument);
    CHECK_THROWS_WITH_AS((void)space.from_json(nlohmann::json::parse(R"({"max_depth": 2, "eta": "fast"})")),
                         "ContinuousParameter 'eta': the text 'fast' is not a number", ht::InvalidArgument);
    // A number where a category's name belongs is named, not a std::bad_variant_access.
    ht::SearchSpace with_category{ht::CategoricalParameter("booster", {"gbtree", "dart"})};
    CHECK_THROWS_WITH_AS((void)with_category.from_json(nlohmann::json::parse(R"({"booster": 1})")),
                         "CategoricalParameter 'booster': 1 is not one of its values (text)", ht::InvalidArgument);
    CHECK_THROWS_WITH_AS((void)with_category.from_json(nlohmann::json::parse(R"({"booster": 0.5})")),
                         "CategoricalParameter 'booster': 0.5 is not one of its values (text)", ht::InvalidArgument);
    // A static given as text where it holds a number: the text is quoted, so the two do not read alike.
    ht::SearchSpace with_static{ht::ContinuousParameter("x", 0.0, 1.0), ht::StaticParameter("threads", 7)};
    CHECK_THROWS_WITH_AS((void)with_static.from_json(nlohmann::json::parse(R"({"x": 0.5, "threads": "7"})")),
                         "StaticParameter 'threads': the text '7' differs from its fixed value 7", ht::InvalidArgument);
}

TEST_CASE("grid: a shape or index that is not the grid's is refused, naming what is wrong") {
    ht::SearchSpace space{ht::IntegerParameter("a", 1, 2), ht::CategoricalParameter("c", {"p", "q"})};
    const std::vector<std::size_t> shape = space.grid_shape();
    REQUIRE(shape == std::vector<std::size_t>{2, 2});
    // Each of these wrapped around, gave duplicates, divided by zero (SIGFPE) or read past the end.
    CHECK_THROWS_WITH_AS((void)space.grid_point(shape, 4), "grid: point 4 is past the grid's 4 points", ht::InvalidArgument);
    const std::vector<std::size_t> too_many{2, 5}, zero{0, 2}, longer{2, 2, 2};
    CHECK_THROWS_WITH_AS((void)space.grid_point(too_many, 0), "grid: parameter 'c' cannot have 5 points (it has 2 values)",
                         ht::InvalidArgument);
    CHECK_THROWS_WITH_AS((void)space.grid_point(zero, 0), "grid: parameter 'a' cannot have 0 points (it has 2 values)",
                         ht::InvalidArgument);
    CHECK_THROWS_WITH_AS((void)space.grid_point(longer, 0),
                         "grid: the shape has 3 entries for 2 tuned parameters (see grid_shape())", ht::InvalidArgument);
    CHECK(fmt::format("{}", space.grid_point(shape, 3)) == "{a=2, c=q}");
}

TEST_CASE("grid: points of a range narrow for its magnitude stay apart, or the grid is refused") {
    // Rounded to 15 significant digits, every point of [1, 1 + 4e-15] was 1: five trials of one
    // configuration, with no word.
    const ht::SearchSpace narrow{ht::ContinuousParameter("x", 1.0, 1.0 + 4e-15)};
    const auto shape = narrow.grid_shape({{"x", 5}});
    const auto axes = narrow.grid_axes(shape);
    std::set<double> seen;
    for (std::uint64_t k = 0; k < 5; ++k) seen.insert(narrow.grid_point(shape, axes, k).get<double>("x"));
    CHECK(seen.size() == 5);
    CHECK(*seen.begin() == 1.0);
    CHECK(*seen.rbegin() == 1.0 + 4e-15);
    // The same at a large magnitude.
    const ht::SearchSpace large{ht::ContinuousParameter("y", 1e15, 1e15 + 8)};
    const auto large_shape = large.grid_shape({{"y", 9}});
    const auto large_axes = large.grid_axes(large_shape);
    for (std::uint64_t k = 0; k < 9; ++k)
        CHECK(large.grid_point(large_shape, large_axes, k).get<double>("y") == 1e15 + static_cast<double>(k));
    // Points a range cannot hold are refused, naming the parameter.
    const ht::SearchSpace tiny{ht::ContinuousParameter("z", 1.0, std::nextafter(1.0, 2.0))};
    CHECK_THROWS_WITH_AS((void)tiny.grid_axes(tiny.grid_shape({{"z", 3}})),
                         doctest::Contains("grid: ContinuousParameter 'z' [1, 1.0000000000000002] holds fewer than 3 "
                                           "distinct numbers (points "),
                         ht::InvalidArgument);
    // Rounding still cleans what a user would write.
    const ht::SearchSpace logs{ht::ContinuousParameter("lr", 1e-4, 1.0, ht::Scaling::Logarithmic)};
    const auto log_shape = logs.grid_shape({{"lr", 5}});
    CHECK(logs.grid_point(log_shape, logs.grid_axes(log_shape), 1).get<double>("lr") == 1e-3);
}

TEST_CASE("grid: integers and categories enumerate, continuous parameters need a number of points") {
    ht::SearchSpace space{ht::IntegerParameter("depth", 1, 3), ht::CategoricalParameter("booster", {"a", "b"}),
                          ht::ContinuousParameter("eta", 0.0, 1.0)};
    CHECK_THROWS_WITH_AS(
        space.grid_shape(),
        "grid: ContinuousParameter 'eta' needs a number of grid points (GridSearchOptions::points, or "
        "GridSampler({{\"eta\", n}}))",
        ht::InvalidArgument);
    CHECK_THROWS_WITH_AS((void)space.grid_shape({{"gamma", 3}}), "grid: unknown parameter 'gamma' in the number of points",
                         ht::InvalidArgument);
    auto shape = space.grid_shape({{"eta", 3}});
    CHECK(shape == std::vector<std::size_t>{3, 2, 3});
    // A continuous range of one value needs no count: it is one point.
    const ht::SearchSpace single{ht::IntegerParameter("depth", 1, 3), ht::ContinuousParameter("eta", 0.3, 0.3)};
    CHECK(single.grid_shape() == std::vector<std::size_t>{3, 1});
    std::set<std::string> seen;
    for (std::uint64_t k = 0; k < 18; ++k) seen.insert(fmt::format("{}", space.grid_point(shape, k)));
    CHECK(seen.size() == 18);
    auto first = space.grid_point(shape, 0);
    auto last = space.grid_point(shape, 17);
    CHECK(first.get<int>("depth") == 1);
    CHECK(first.get<std::string>("booster") == "a");
    CHECK(first.get<double>("eta") == 0.0);
    CHECK(last.get<int>("depth") == 3);
    CHECK(last.get<std::string>("booster") == "b");
    CHECK(last.get<double>("eta") == 1.0);
    CHECK(space.grid_point(shape, 1).get<double>("eta") == 0.5);  // the last parameter varies fastest
    // an integer with fewer points than values: evenly spaced, ends included
    ht::SearchSpace wide{ht::IntegerParameter("n", 0, 100)};
    auto s2 = wide.grid_shape({{"n", 5}});
    CHECK(wide.grid_point(s2, 0).get<int>("n") == 0);
    CHECK(wide.grid_point(s2, 2).get<int>("n") == 50);
    CHECK(wide.grid_point(s2, 4).get<int>("n") == 100);
    // On a logarithmic integer range evenly spaced points would round to the same small values:
    // the grid's are distinct, increasing, with both ends, and log-spaced where integers allow.
    for (const auto& [top, points] : {std::pair{100, std::size_t{20}}, std::pair{1000, std::size_t{200}},
                                      std::pair{1000, std::size_t{1000}}, std::pair{1 << 20, std::size_t{7}}}) {
        CAPTURE(top);
        CAPTURE(points);
        ht::SearchSpace logs{ht::IntegerParameter("n", 1, top, ht::Scaling::Logarithmic)};
        auto axis = logs.grid_shape({{"n", points}});
        REQUIRE(axis.front() == points);
        std::vector<int> values;
        for (std::uint64_t k = 0; k < points; ++k) values.push_back(logs.grid_point(axis, k).get<int>("n"));
        CHECK(values.front() == 1);
        CHECK(values.back() == top);
        CHECK(std::adjacent_find(values.begin(), values.end(), std::greater_equal<>()) == values.end());
    }
    // Every range, scaling and number of points: distinct, increasing, both ends.
    for (const auto scaling : {ht::Scaling::Linear, ht::Scaling::Logarithmic})
        for (const int low : {-7, 1, 5})
            for (const int high : {low + 1, low + 2, low + 9, 37, 100, 1000, 12345, 1 << 20}) {
                if (high <= low || (scaling == ht::Scaling::Logarithmic && low <= 0)) continue;
                const auto all = static_cast<std::size_t>(high - low) + 1;
                for (const std::size_t points : {std::size_t{2}, std::size_t{3}, std::size_t{7}, std::size_t{20}, all - 1, all}) {
                    if (points < 2 || points > all || points > 5000) continue;
                    CAPTURE(low);
                    CAPTURE(high);
                    CAPTURE(points);
                    ht::SearchSpace one{ht::IntegerParameter("n", low, high, scaling)};
                    const auto axis = one.grid_shape({{"n", points}});
                    int previous = low - 1;
                    for (std::uint64_t k = 0; k < points; ++k) {
                        const int v = one.grid_point(axis, k).get<int>("n");
                        CHECK(v > previous);
                        if (k == 0) CHECK(v == low);
                        previous = v;
                    }
                    CHECK(previous == high);
                }
            }
    // Where integers are sparse enough, the points are the scaling's own between min and max: the
    // middle one is their geometric middle (the sampling slices' [0.5, 2^20 + 0.5] gave 724), and
    // decades fall on powers of ten (they were 1 6 79 1000 and 1 7 100).
    ht::SearchSpace log7{ht::IntegerParameter("n", 1, 1 << 20, ht::Scaling::Logarithmic)};
    auto s7 = log7.grid_shape({{"n", 7}});
    CHECK(log7.grid_point(s7, 3).get<int>("n") == 1024);
    auto values = [](int low, int high, std::size_t points) {
        ht::SearchSpace s{ht::IntegerParameter("n", low, high, ht::Scaling::Logarithmic)};
        const auto axis = s.grid_shape({{"n", points}});
        std::vector<int> out;
        for (std::uint64_t k = 0; k < points; ++k) out.push_back(s.grid_point(axis, k).get<int>("n"));
        return out;
    };
    CHECK(values(1, 1000, 4) == std::vector<int>{1, 10, 100, 1000});
    CHECK(values(1, 100, 3) == std::vector<int>{1, 10, 100});
    CHECK(values(10, 10000, 4) == std::vector<int>{10, 100, 1000, 10000});
    // Continuous points are as a user would write them, not the scaling's arithmetic
    // (0.0010000000000000002, 0.30000000000000004), within the range.
    auto reals = [](const auto& parameter, std::size_t points) {
        const ht::SearchSpace s{parameter};
        const auto axis = s.grid_shape({{"x", points}});
        std::vector<double> out;
        for (std::uint64_t k = 0; k < points; ++k) out.push_back(s.grid_point(axis, k).get<double>("x"));
        return out;
    };
    CHECK(reals(ht::ContinuousParameter("x", 1e-4, 1.0, ht::Scaling::Logarithmic), 5) ==
          std::vector<double>{1e-4, 1e-3, 1e-2, 0.1, 1.0});
    CHECK(reals(ht::ContinuousParameter("x", 0.0, 1.0), 11) ==
          std::vector<double>{0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0});
    CHECK(reals(ht::ContinuousParameter("x", 0.9, 0.999, ht::Scaling::ReverseLogarithmic), 3) ==
          std::vector<double>{0.9, 0.99, 0.999});
    for (const double x : reals(ht::ContinuousParameter("x", 0.1, 0.1 + 1e-14), 7)) CHECK((x >= 0.1 && x <= 0.1 + 1e-14));
    // The walk from worked-out axes gives the same points; a long integer axis is left to each point.
    ht::SearchSpace mixed{ht::IntegerParameter("n", 1, 1 << 20, ht::Scaling::Logarithmic),
                          ht::CategoricalParameter("c", {"a", "b", "c"}), ht::StaticParameter("s", 7),
                          ht::ContinuousParameter("x", 1e-3, 10.0, ht::Scaling::Logarithmic)};
    const auto mixed_shape = mixed.grid_shape({{"n", 5}, {"x", 4}});
    const auto axes = mixed.grid_axes(mixed_shape);
    REQUIRE(axes.size() == 3);
    CHECK(axes[2] == std::vector<ht::Value>{1e-3, 0.0215443469003188, 0.464158883361278, 10.0});
    for (std::uint64_t k = 0; k < 60; ++k) CHECK(mixed.grid_point(mixed_shape, axes, k) == mixed.grid_point(mixed_shape, k));
    const auto whole = mixed.grid_shape({{"x", 2}});
    CHECK(mixed.grid_axes(whole)[0].empty());  // 2^20 integers: worked out per point
    CHECK(mixed.grid_point(whole, mixed.grid_axes(whole), 12345).get<int>("n") ==
          mixed.grid_point(whole, 12345).get<int>("n"));
    CHECK_THROWS_WITH_AS((void)mixed.grid_point(mixed_shape, mixed.grid_axes(whole), 0),
                         "grid: axis 2 has 2 values for 4 points (see grid_axes())", ht::InvalidArgument);
    CHECK_THROWS_WITH_AS((void)mixed.grid_point(mixed_shape, axes, 60), "grid: point 60 is past the grid's 60 points",
                         ht::InvalidArgument);
    // A number of points for a categorical or static parameter would be ignored: refused.
    CHECK_THROWS_WITH_AS((void)space.grid_shape({{"eta", 3}, {"booster", 1}}),
                         "grid: parameter 'booster' is Categorical: the grid takes every category, so a number of "
                         "points applies to integer and continuous parameters only",
                         ht::InvalidArgument);
}

TEST_CASE("random and grid points are the same whether their coordinates fit the stack buffer or not") {
    // Up to 16 tuned parameters the unit-cube coordinates of a point live on the stack, beyond on
    // the heap (detail::UnitPoint). Each parameter of a 15- to 18-parameter space must get the
    // value it gets in a space of its own: trial k's coordinate j is hash3(seed, k, j).
    for (std::size_t d : {15, 16, 17, 18}) {
        CAPTURE(d);
        ht::SearchSpace space;
        for (std::size_t j = 0; j < d; ++j)
            space.add(ht::ContinuousParameter(fmt::format("x{}", j), 0.0, 1.0, ht::Scaling::Linear));
        for (std::uint64_t k = 0; k < 5; ++k) {
            const ht::Config c = ht::RandomSampler::sample(space, 42, k);
            for (std::size_t j = 0; j < d; ++j)
                CHECK(c.get<double>(fmt::format("x{}", j)) == ht::detail::to_unit(ht::detail::hash3(42, k, j)));
        }
        std::map<std::string, std::size_t> points;
        for (std::size_t j = 0; j < d; ++j) points[fmt::format("x{}", j)] = 2;
        const auto shape = space.grid_shape(points);
        const ht::Config first = space.grid_point(shape, 0), last = space.grid_point(shape, (1ULL << d) - 1);
        const ht::Config one = space.grid_point(shape, 1);  // the last parameter varies fastest
        for (std::size_t j = 0; j < d; ++j) {
            const std::string name = fmt::format("x{}", j);
            CHECK(first.get<double>(name) == 0.0);
            CHECK(last.get<double>(name) == 1.0);
            CHECK(one.get<double>(name) == (j + 1 == d ? 1.0 : 0.0));
        }
    }
}
