// SPDX-License-Identifier: MIT
#include <hypertune/json.hpp>
#include <hypertune/hypertune.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

namespace ht = hypertune;

namespace {

ht::SearchSpace parent_space() {
    return ht::SearchSpace{ht::ContinuousParameter("lr", 0.0, 1.0), ht::IntegerParameter("depth", 1, 10),
                           ht::CategoricalParameter("booster", {"gbtree", "dart", "linear"}),
                           ht::StaticParameter("objective", std::string("binary"))};
}

double loss_of(const ht::Config& c) {
    const double lr = c.get<double>("lr");
    return (lr - 0.3) * (lr - 0.3) + 0.01 * c.get<int>("depth") + (c.get<std::string>("booster") == "dart" ? 0.0 : 0.2);
}

ht::Result parent_run(std::uint64_t seed = 1, std::size_t jobs = 20, std::string metric = "objective") {
    ht::Tuner tuner(parent_space(), ht::RandomSearch(), {.metric = std::move(metric), .max_jobs = jobs, .seed = seed});
    return tuner.fit(loss_of);
}

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const ht::InvalidArgument& e) {
        return e.what();
    }
    return "no InvalidArgument";
}

bool contains(const std::vector<std::string>& lines, std::string_view part) {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

}  // namespace

TEST_CASE("warm start: identical parents become observations in this run's space, one per usable trial") {
    ht::WarmStart w{.parents = {parent_run(1), parent_run(2)}};
    auto prepared = ht::prepare_warm_start(w, parent_space(), "objective", ht::Direction::Minimize);
    CHECK(prepared.observations.size() == 40);
    CHECK(prepared.parent_bests.size() == 2);
    for (const auto& o : prepared.observations) {
        const auto& trial = w.parents[o.parent].trials()[o.trial];
        CHECK(o.loss == doctest::Approx(trial.objective));
        CHECK(o.config.to_json() == trial.config.to_json());
    }
    CHECK(prepared.parent_bests[1].objective == w.parents[1].best().objective);
}

TEST_CASE("warm start: losses are negated when maximising, as the strategies minimise") {
    ht::Tuner tuner(parent_space(), ht::RandomSearch(), {.direction = ht::Direction::Maximize, .max_jobs = 5});
    ht::WarmStart w{.parents = {tuner.fit(loss_of)}};
    auto prepared = ht::prepare_warm_start(w, parent_space(), "objective", ht::Direction::Maximize);
    REQUIRE(prepared.observations.size() == 5);
    CHECK(prepared.observations[0].loss == doctest::Approx(-w.parents[0].trials()[0].objective));
}

TEST_CASE("warm start: parents that cannot be used are refused, naming the parent and the parameter") {
    const auto parent = parent_run();
    auto prepare = [&](ht::SearchSpace space, ht::WarmStartType type = ht::WarmStartType::IdenticalDataAndAlgorithm,
                       std::string metric = "objective", ht::Direction d = ht::Direction::Minimize) {
        return message_of([&] {
            (void)ht::prepare_warm_start({.type = type, .parents = {parent}}, space, metric, d);
        });
    };
    ht::WarmStart six{.parents = std::vector<ht::Result>(6, parent)};
    CHECK(message_of([&] { (void)ht::prepare_warm_start(six, parent_space(), "objective", ht::Direction::Minimize); }) ==
          "warm start: at most 5 parent runs, got 6");
    CHECK(prepare(parent_space(), ht::WarmStartType::IdenticalDataAndAlgorithm, "auc") ==
          "warm start parent 0: its metric is 'objective', this run's is 'auc'");
    CHECK(prepare(parent_space(), ht::WarmStartType::IdenticalDataAndAlgorithm, "objective", ht::Direction::Maximize)
              .find("it was to Minimize 'objective', this run is to Maximize it") != std::string::npos);

    ht::SearchSpace added{ht::ContinuousParameter("lr", 0.0, 1.0), ht::IntegerParameter("depth", 1, 10),
                          ht::CategoricalParameter("booster", {"gbtree", "dart", "linear"}),
                          ht::StaticParameter("objective", std::string("binary")), ht::ContinuousParameter("gamma", 0.0, 5.0)};
    CHECK(prepare(added).starts_with("warm start parent 0: parameter 'gamma' is not in its search space"));
    ht::SearchSpace removed{ht::ContinuousParameter("lr", 0.0, 1.0), ht::IntegerParameter("depth", 1, 10),
                            ht::StaticParameter("objective", std::string("binary"))};
    CHECK(prepare(removed).starts_with("warm start parent 0: its parameter 'booster' is not in this search space"));
    ht::SearchSpace retyped{ht::ContinuousParameter("lr", 0.0, 1.0), ht::ContinuousParameter("depth", 1.0, 10.0),
                            ht::CategoricalParameter("booster", {"gbtree", "dart", "linear"}),
                            ht::StaticParameter("objective", std::string("binary"))};
    CHECK(prepare(retyped).starts_with("warm start parent 0: parameter 'depth' is integer there and continuous here"));
    ht::SearchSpace other_static{ht::ContinuousParameter("lr", 0.0, 1.0), ht::IntegerParameter("depth", 1, 10),
                                 ht::CategoricalParameter("booster", {"gbtree", "dart", "linear"}),
                                 ht::StaticParameter("objective", std::string("multi"))};
    CHECK(prepare(other_static).starts_with("warm start parent 0: static parameter 'objective' has another value there"));
    // TransferLearning allows all of these except a categorical turned numeric.
    for (const auto& space : {added, removed, retyped, other_static})
        CHECK(prepare(space, ht::WarmStartType::TransferLearning) == "no InvalidArgument");
    ht::SearchSpace cat_to_number{ht::ContinuousParameter("lr", 0.0, 1.0), ht::IntegerParameter("depth", 1, 10),
                                  ht::ContinuousParameter("booster", 0.0, 1.0)};
    CHECK(prepare(cat_to_number, ht::WarmStartType::TransferLearning) ==
          "warm start parent 0: parameter 'booster' is categorical there and continuous here");
}

TEST_CASE("warm start: values outside the new ranges are clipped or dropped, and the note says how many") {
    const auto parent = parent_run(3, 40);
    ht::SearchSpace narrower{ht::ContinuousParameter("lr", 0.0, 0.5), ht::IntegerParameter("depth", 1, 10),
                             ht::CategoricalParameter("booster", {"gbtree", "dart"}),
                             ht::StaticParameter("objective", std::string("binary"))};
    std::size_t lr_outside = 0, linear = 0, both_fine = 0;
    for (const auto& t : parent.trials()) {
        const bool out = t.config.get<double>("lr") > 0.5, lin = t.config.get<std::string>("booster") == "linear";
        lr_outside += out && !lin;
        linear += lin;
        both_fine += !out && !lin;
    }
    REQUIRE(lr_outside > 0);
    REQUIRE(linear > 0);

    auto clip = ht::prepare_warm_start({.parents = {parent}}, narrower, "objective", ht::Direction::Minimize);
    CHECK(clip.observations.size() == 40 - linear);
    for (const auto& o : clip.observations) CHECK(o.config.get<double>("lr") <= 0.5);
    CHECK(contains(clip.notes, fmt::format("used, {} clipped to this run's ranges, {} dropped", lr_outside, linear)));

    auto drop = ht::prepare_warm_start({.parents = {parent}, .outside_range = ht::OutsideRange::Drop}, narrower,
                                       "objective", ht::Direction::Minimize);
    CHECK(drop.observations.size() == both_fine);
    CHECK(contains(drop.notes, fmt::format("{} trials of 1 parent run used, 0 clipped", both_fine)));
}

TEST_CASE("warm start, TransferLearning: a new parameter takes the middle of its range, a removed one is ignored") {
    ht::SearchSpace changed{ht::ContinuousParameter("lr", 0.0, 1.0), ht::ContinuousParameter("gamma", 0.0, 4.0),
                            ht::CategoricalParameter("booster", {"gbtree", "dart", "linear"})};
    auto prepared = ht::prepare_warm_start({.type = ht::WarmStartType::TransferLearning, .parents = {parent_run()}},
                                           changed, "objective", ht::Direction::Minimize);
    REQUIRE(prepared.observations.size() == 20);
    for (const auto& o : prepared.observations) CHECK(o.config.get<double>("gamma") == doctest::Approx(2.0));
    CHECK(contains(prepared.notes, "parameter 'gamma' is new"));
    CHECK(contains(prepared.notes, "its parameter 'depth' is not in this search space and is ignored"));
}

TEST_CASE("warm start through the Tuner: the overall best spans the parents, and a journal keeps it") {
    const auto strong = parent_run(5, 60);  // many trials: its best is hard to beat in 3
    const auto weak = parent_run(6, 2);
    const auto journal = std::filesystem::path(HYPERTUNE_TEST_BINARY_DIR) / "warm_start.jsonl";
    std::filesystem::remove(journal);
    ht::TunerOptions options{.max_jobs = 3, .seed = 7, .journal = journal.string(),
                             .warm_start = {.parents = {weak, strong}}};
    ht::Tuner tuner(parent_space(), ht::RandomSearch(), options);
    auto result = tuner.fit(loss_of);
    REQUIRE(result.has_overall_best());
    auto overall = result.overall_best();
    const bool parent_wins = strong.best().objective < result.best().objective;
    if (parent_wins) {
        REQUIRE(overall.parent.has_value());
        CHECK(*overall.parent == 1);
        CHECK(overall.trial == strong.best().id);
        CHECK(overall.objective == strong.best().objective);
        CHECK(result.summary().find("overall best (with 2 warm-start parent runs): parent 1 trial") != std::string::npos);
    } else {
        CHECK_FALSE(overall.parent.has_value());
    }
    CHECK(result.to_json().at("warm_start_parents").size() == 2);
    // RandomSearch does not use the observations, and says so.
    CHECK(contains(result.setup().warnings, "RandomSearch does not learn from earlier runs"));

    auto attached = ht::load_result(journal.string());
    REQUIRE(attached.setup().parent_bests.size() == 2);
    CHECK(attached.overall_best().objective == overall.objective);
    CHECK(attached.overall_best().config.to_json() == overall.config.to_json());
    CHECK(attached.setup().warnings == result.setup().warnings);

    // Resuming the finished run adds no trial and no second copy of the notes.
    ht::Tuner again(parent_space(), ht::RandomSearch(), options);
    auto resumed = again.fit(loss_of);
    CHECK(resumed.trials().size() == 3);
    CHECK(resumed.setup().warnings == result.setup().warnings);
}

TEST_CASE("warm start from journals: a missing journal names its path") {
    try {
        (void)ht::WarmStart::from_journals({"no-such-run.jsonl"});
        FAIL("expected IoError");
    } catch (const ht::IoError& e) {
        CHECK(std::string(e.what()).find("no-such-run.jsonl") != std::string::npos);
    }
}
