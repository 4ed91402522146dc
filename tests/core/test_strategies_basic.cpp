// SPDX-License-Identifier: MIT
// RandomSearch and GridSearch driven directly through ask/report/tell, without a tuner.
#include <hypertune/strategies/grid_search.hpp>
#include <hypertune/strategies/random_search.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace ht = hypertune;

static_assert(ht::Strategy<ht::RandomSearch>);
static_assert(ht::Strategy<ht::GridSearch>);
static_assert(!ht::Strategy<int>);

namespace {
ht::SearchSpace xgboost_space() {
    return ht::SearchSpace{ht::IntegerParameter("num_round", 100, 200), ht::ContinuousParameter("eta", 0.0, 1.0),
                           ht::ContinuousParameter("min_child_weight", 1.0, 10.0), ht::ContinuousParameter("alpha", 0.0, 2.0),
                           ht::IntegerParameter("max_depth", 1, 10), ht::ContinuousParameter("colsample_bylevel", 0.0, 1.0),
                           ht::ContinuousParameter("colsample_bytree", 0.0, 1.0)};
}
}  // namespace

TEST_CASE("RandomSearch: trial k depends only on (seed, k)") {
    auto space = xgboost_space();
    ht::RandomSearch a, b;
    a.start(space, {.seed = 42, .max_trials = 0});
    b.start(space, {.seed = 42, .max_trials = 0});
    std::vector<ht::Suggestion> from_a;
    for (int i = 0; i < 50; ++i) from_a.push_back(a.ask());
    for (int i = 0; i < 50; ++i) {
        auto s = b.ask();
        b.tell(s.trial, ht::Outcome::completed(1.0, 1));  // interleaving tells changes nothing
        CHECK(s.trial == from_a[static_cast<std::size_t>(i)].trial);
        CHECK(s.config == from_a[static_cast<std::size_t>(i)].config);
        CHECK(s.config == ht::RandomSearch::sample(space, 42, s.trial));
    }
    ht::RandomSearch c;
    c.start(space, {.seed = 43, .max_trials = 0});
    CHECK(c.ask().config != from_a[0].config);
}

TEST_CASE("RandomSearch: stops at max_trials and samples every integer value") {
    ht::SearchSpace space{ht::IntegerParameter("k", 1, 4)};
    ht::RandomSearch rs({.max_resource = 9});
    rs.start(space, {.seed = 1, .max_trials = 4000});
    std::map<int, int> counts;
    for (;;) {
        auto s = rs.ask();
        if (s.kind == ht::Suggestion::Kind::Done) break;
        CHECK(s.budget == 9);
        counts[s.config.get<int>("k")]++;
    }
    REQUIRE(counts.size() == 4);
    for (auto [k, c] : counts) CHECK(std::abs(c - 1000) < 120);  // binomial sd ~27: a 4.4-sigma tolerance
}

TEST_CASE("GridSearch: enumerates the grid once, in order, then is done") {
    ht::SearchSpace space{ht::IntegerParameter("depth", 1, 3), ht::ContinuousParameter("eta", 0.1, 0.3)};
    ht::GridSearch grid({.points = {{"eta", 3}}});
    grid.start(space, {.seed = 0, .max_trials = 100});
    CHECK(grid.size() == 9);
    std::set<std::pair<int, double>> seen;
    std::vector<ht::TrialId> ids;
    for (;;) {
        auto s = grid.ask();
        if (!s.runs()) {
            CHECK(s.kind == ht::Suggestion::Kind::Done);
            break;
        }
        ids.push_back(s.trial);
        seen.emplace(s.config.get<int>("depth"), std::round(s.config.get<double>("eta") * 100) / 100);
    }
    CHECK(ids.size() == 9);
    CHECK(std::is_sorted(ids.begin(), ids.end()));
    CHECK(seen.size() == 9);
    CHECK(seen.count({2, 0.2}) == 1);

    CHECK(grid.notes().empty());

    ht::GridSearch limited({.points = {{"eta", 3}}});
    limited.start(space, {.seed = 0, .max_trials = 4});
    int n = 0;
    while (limited.ask().runs()) ++n;
    CHECK(n == 4);
    // A budget under the grid's size is said, with what it leaves out.
    CHECK(limited.notes() == std::vector<std::string>{"the grid has 9 points and the budget runs the first 4 of them, "
                                                      "in order: 'depth' takes 2 of its 3 values; raise max_jobs to 9 "
                                                      "or give fewer points"});
    // A budget raised later (a resumed run given a larger max_jobs) words it again, or drops it.
    limited.set_max_trials(7);
    CHECK(limited.notes() == std::vector<std::string>{"the grid has 9 points and the budget runs the first 7 of them, "
                                                      "in order: 'depth' takes 3 of its 3 values; raise max_jobs to 9 "
                                                      "or give fewer points"});
    limited.set_max_trials(9);
    CHECK(limited.notes().empty());
    int more = 0;
    while (limited.ask().runs()) ++more;
    CHECK(more == 5);
}

TEST_CASE("GridSearch refuses a continuous parameter without a number of points") {
    ht::SearchSpace space{ht::ContinuousParameter("eta", 0.0, 1.0)};
    ht::GridSearch grid;
    CHECK_THROWS_WITH_AS(grid.start(space, {}),
                         "grid: ContinuousParameter 'eta' needs a number of grid points (GridSearchOptions::points, or "
        "GridSampler({{\"eta\", n}}))",
                         ht::InvalidArgument);
    CHECK_THROWS_WITH_AS(ht::RandomSearch({.max_resource = 0}), "RandomSearch: max_resource must be >= 1, got 0",
                         ht::InvalidArgument);
}
