// SPDX-License-Identifier: MIT
#include <hypertune/json.hpp>
#include <hypertune/hypertune.hpp>
#include <hypertune/strategies/bayesian.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <stdexcept>
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

TEST_CASE("warm start: a static number written as the other kind of number is the same value") {
    // 1 and 1.0 are one value (JSON writes 2.0 as 2); 2 is another, and the message says both.
    auto space_with = [](auto threads) {
        return ht::SearchSpace{ht::ContinuousParameter("lr", 0.0, 1.0), ht::StaticParameter("threads", threads)};
    };
    const auto parent = ht::Tuner(space_with(1), ht::RandomSearch(), {.max_jobs = 3})
                            .fit([](const ht::Config& c) { return c.get<double>("lr"); });
    const ht::WarmStart w{.parents = {parent}};
    CHECK(ht::prepare_warm_start(w, space_with(1.0), "objective", ht::Direction::Minimize).observations.size() == 3);
    CHECK(message_of([&] { (void)ht::prepare_warm_start(w, space_with(2.5), "objective", ht::Direction::Minimize); })
              .starts_with("warm start parent 0: static parameter 'threads' is 1 there and 2.5 here"));
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
    CHECK(prepare(other_static).starts_with("warm start parent 0: static parameter 'objective' is the text 'binary' "
                                            "there and the text 'multi' here"));
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

    // TransferLearning evaluates its configurations again: clipped ones are as good as any.
    const auto transfer = ht::WarmStartType::TransferLearning;
    auto clip = ht::prepare_warm_start({.type = transfer, .parents = {parent}}, narrower, "objective", ht::Direction::Minimize);
    CHECK(clip.observations.size() == 40 - linear);
    for (const auto& o : clip.observations) CHECK(o.config.get<double>("lr") <= 0.5);
    CHECK(contains(clip.notes, fmt::format("used, {} clipped to this run's ranges, {} dropped ('booster' a category "
                                           "this run does not have)",
                                           lr_outside, linear)));

    auto drop = ht::prepare_warm_start({.type = transfer, .parents = {parent}, .outside_range = ht::OutsideRange::Drop},
                                       narrower, "objective", ht::Direction::Minimize);
    CHECK(drop.observations.size() == both_fine);
    CHECK(contains(drop.notes, fmt::format("{} trials of 1 parent run used, 0 clipped", both_fine)));

    // IdenticalDataAndAlgorithm takes each result as an observation where it was measured: a
    // clipped one told the model of a loss at a value nobody ran (30 results on one corner drew
    // every later trial there). Out of range is dropped, and the note names each reason (it said
    // "a category this run does not have" of values out of range).
    std::size_t lr_first = 0;  // a trial is dropped for its first parameter that does not fit
    for (const auto& t : parent.trials()) lr_first += t.config.get<double>("lr") > 0.5;
    auto identical = ht::prepare_warm_start({.parents = {parent}}, narrower, "objective", ht::Direction::Minimize);
    CHECK(identical.observations.size() == both_fine);
    CHECK(contains(identical.notes, fmt::format("{} trials of 1 parent run used, 0 clipped to this run's ranges, {} "
                                                "dropped (",
                                                both_fine, 40 - both_fine)));
    CHECK(contains(identical.notes, fmt::format("{}: 'lr' outside this run's range", lr_first)));
    CHECK(contains(identical.notes, fmt::format("{}: 'booster' a category this run does not have", 40 - both_fine - lr_first)));
}

TEST_CASE("warm start: the same parent given twice is refused, naming both") {
    const auto parent = parent_run(3, 20);
    CHECK(message_of([&] {
              (void)ht::prepare_warm_start({.parents = {parent_run(1), parent, parent}}, parent_space(), "objective",
                                           ht::Direction::Minimize);
          }) == "warm start parents 1 and 2 are the same run (20 trials alike): give each earlier run once");
    // One of them resumed since, or run again longer with the same seed on the same data: its first
    // 20 trials are the other's, and were counted twice.
    CHECK(message_of([&] {
              (void)ht::prepare_warm_start({.parents = {parent, parent_run(3, 21)}}, parent_space(), "objective",
                                           ht::Direction::Minimize);
          }) == "warm start parents 0 and 1 are the same run (20 trials alike; the longer one holds all of the "
                "other's): give each earlier run once");
    // The same seed on other data (other values) is another run.
    ht::Tuner other_data(parent_space(), ht::RandomSearch(), {.max_jobs = 21, .seed = 3});
    const ht::Result other = other_data.fit([](const ht::Config& c) { return loss_of(c) + 1.0; });
    CHECK(message_of([&] {
              (void)ht::prepare_warm_start({.parents = {parent, other}}, parent_space(), "objective",
                                           ht::Direction::Minimize);
          }) == "no InvalidArgument");
}

TEST_CASE("warm start: a parent's journal given beside a copy of it taken earlier is refused as the same run") {
    // A copy of the parent's journal was kept, the parent resumed to more trials, and both given:
    // only journals alike byte for byte were refused.
    const auto dir = std::filesystem::path(HYPERTUNE_TEST_BINARY_DIR);
    const std::string grown = (dir / "same_run_grown.jsonl").string(), copy = (dir / "same_run_copy.jsonl").string();
    for (const auto& f : {grown, copy}) std::filesystem::remove(f);
    auto parent = [&](std::size_t jobs) {
        return ht::Tuner(parent_space(), ht::RandomSearch(),
                         {.max_jobs = jobs, .seed = 5, .progress = ht::ProgressBar::Never, .journal = grown})
            .fit(loss_of);
    };
    (void)parent(10);
    std::filesystem::copy_file(grown, copy);
    (void)parent(15);
    CHECK(message_of([&] {
              (void)ht::prepare_warm_start(ht::WarmStart::from_journals({copy, grown}), parent_space(), "objective",
                                           ht::Direction::Minimize);
          }) == "warm start parents 0 and 1 are the same run (10 trials alike; the longer one holds all of the "
                "other's): give each earlier run once");
    for (const auto& f : {grown, copy}) std::filesystem::remove(f);
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

TEST_CASE("warm start, Bayesian: its notes are warned about once, however often the journal is resumed") {
    const auto parent = parent_run(5, 20);
    const auto journal = std::filesystem::path(HYPERTUNE_TEST_BINARY_DIR) / "warm_start_notes.jsonl";
    std::filesystem::remove(journal);
    ht::TunerOptions options{.max_jobs = 8, .seed = 7, .journal = journal.string(), .warm_start = {.parents = {parent}}};
    const auto first = ht::Tuner(parent_space(), ht::Bayesian(), options).fit(loss_of);
    CHECK(contains(first.setup().warnings, "Bayesian: warm start: 20 results of earlier runs enter the model"));
    for (int session = 0; session < 2; ++session) {  // nothing left to run: each resume replays and ends
        const auto again = ht::Tuner(parent_space(), ht::Bayesian(), options).fit(loss_of);
        CHECK(again.setup().warnings == first.setup().warnings);
    }
    CHECK(ht::load_result(journal.string()).setup().warnings == first.setup().warnings);
    std::filesystem::remove(journal);
}

TEST_CASE("warm start, TransferLearning: parents that share trials still open the design with distinct best ones") {
    const auto parent = parent_run(5, 20);
    ht::Bayesian b;
    b.start(parent_space(), {7, 40});
    // A longer run of the same seed on other data: its first 20 configurations are the parent's.
    ht::Tuner other_data(parent_space(), ht::RandomSearch(), {.max_jobs = 26, .seed = 5});
    const ht::Result other = other_data.fit([](const ht::Config& c) { return loss_of(c) + 0.001; });
    ht::WarmStart twice{.type = ht::WarmStartType::TransferLearning, .parents = {parent, other}};
    auto prepared = ht::prepare_warm_start(twice, parent_space(), "objective", ht::Direction::Minimize);
    REQUIRE(b.warm_start(prepared.observations, twice.type));
    CHECK(b.notes() == std::vector<std::string>{fmt::format(
                           "warm start: the initial design starts with the best {} configurations of earlier runs",
                           b.initial_points())});
}

TEST_CASE("warm start from journals: a missing journal names its path, as a warm start's parent") {
    try {
        (void)ht::WarmStart::from_journals({"no-such-run.jsonl"});
        FAIL("expected IoError");
    } catch (const ht::IoError& e) {
        CHECK(std::string(e.what()).starts_with("warm start parent 0: journal 'no-such-run.jsonl': cannot read: "));
    }
}

TEST_CASE("warm start on resume: the journal's own warm start is required, and another or a new one is refused") {
    // Bayesian learns from the parents, so a resume given another warm start, or none, would
    // suggest other trials than its journal holds.
    const auto first = parent_run(5, 20);
    const auto second = parent_run(6, 20);
    const auto dir = std::filesystem::path(HYPERTUNE_TEST_BINARY_DIR);
    const std::string warm_journal = (dir / "warm_resume.jsonl").string();
    const std::string cold_journal = (dir / "cold_resume.jsonl").string();
    std::filesystem::remove(warm_journal);
    std::filesystem::remove(cold_journal);
    auto options = [&](const std::string& journal, std::vector<ht::Result> parents, std::size_t jobs) {
        ht::TunerOptions o{.max_jobs = jobs, .seed = 3, .journal = journal};
        o.warm_start.parents = std::move(parents);
        return o;
    };
    auto run = [&](const ht::TunerOptions& o) { return ht::Tuner(parent_space(), ht::Bayesian(), o).fit(loss_of); };
    (void)run(options(warm_journal, {first}, 8));
    (void)run(options(cold_journal, {}, 8));

    const std::string learnt = " (the strategy learnt from it, and the overall best counts its parents)";
    CHECK(message_of([&] { (void)run(options(warm_journal, {}, 10)); }) ==
          "journal '" + warm_journal + "' began with a warm start from 1 earlier run (20 results), and this tuner has "
          "none; resume with the same TunerOptions::warm_start" + learnt);
    CHECK(message_of([&] { (void)run(options(warm_journal, {second}, 10)); }) ==
          "journal '" + warm_journal + "' began with a warm start from 1 earlier run (20 results), and this tuner's "
          "is from 1 earlier run (20 results, other ones); resume with the warm start it began with" + learnt +
          " (the parents' trials it learnt from are not all there, or this run's search space or constraints take "
          "them otherwise)");
    // The same parent under the other type: the type is named.
    CHECK(message_of([&] {
              ht::TunerOptions o = options(warm_journal, {first}, 10);
              o.warm_start.type = ht::WarmStartType::TransferLearning;
              (void)run(o);
          }) == "journal '" + warm_journal + "' began with a warm start of type IdenticalDataAndAlgorithm, and this "
                "tuner's is of type TransferLearning; resume with WarmStart::type = IdenticalDataAndAlgorithm" + learnt);
    // A parent with failed trials: TransferLearning leaves them out, so the two types take other
    // trials of it, and the refusal spoke of parents' trials not all there. The type is named.
    const ht::Result flawed = ht::Tuner(parent_space(), ht::RandomSearch(), {.max_jobs = 12, .seed = 8})
                                  .fit([](const ht::Config& c) {
                                      if (c.get<double>("lr") < 0.4) throw std::runtime_error("diverged");
                                      return loss_of(c);
                                  });
    REQUIRE(flawed.count(ht::TrialStatus::Failed) > 0);
    const std::string flawed_journal = (dir / "warm_resume_flawed.jsonl").string();
    std::filesystem::remove(flawed_journal);
    (void)run(options(flawed_journal, {flawed}, 4));
    CHECK(message_of([&] {
              ht::TunerOptions o = options(flawed_journal, {flawed}, 6);
              o.warm_start.type = ht::WarmStartType::TransferLearning;
              (void)run(o);
          }) == "journal '" + flawed_journal + "' began with a warm start of type IdenticalDataAndAlgorithm, and "
                "this tuner's is of type TransferLearning; resume with WarmStart::type = IdenticalDataAndAlgorithm" +
                    learnt);
    CHECK(run(options(flawed_journal, {flawed}, 6)).trials().size() == 6);  // as it began, it resumes
    std::filesystem::remove(flawed_journal);
    CHECK(message_of([&] { (void)run(options(warm_journal, {first, second}, 10)); }).find(
              "and this tuner's is from 2 earlier runs (40 results);") != std::string::npos);
    CHECK(message_of([&] { (void)run(options(cold_journal, {first}, 10)); }) ==
          "journal '" + cold_journal + "' began without a warm start, and this tuner has one (from 1 earlier run); "
          "resume without TunerOptions::warm_start, or give this run a new journal (its trials were suggested "
          "without one)");
    // Nothing was lost to the refusals: each journal resumes as it began, to the raised budget.
    const ht::Result warm = run(options(warm_journal, {first}, 10));
    CHECK(warm.trials().size() == 10);
    CHECK(warm.setup().parent_bests.size() == 1);
    CHECK(run(options(cold_journal, {}, 10)).trials().size() == 10);
    std::filesystem::remove(warm_journal);
    std::filesystem::remove(cold_journal);
}

TEST_CASE("warm start on resume: a parent journal that has grown since still resumes, from the observations the run began with") {
    // The parent's journal was resumed (or still running) after the child began: its trials are
    // a superset of those the child learnt from. The child's resume was refused; now it finds its
    // observations among them and goes on as if unchanged.
    const auto dir = std::filesystem::path(HYPERTUNE_TEST_BINARY_DIR);
    const std::string parent = (dir / "grown_parent.jsonl").string(), copy = (dir / "grown_parent_copy.jsonl").string();
    const std::string child = (dir / "grown_child.jsonl").string(), reference = (dir / "grown_reference.jsonl").string();
    for (const auto& f : {parent, copy, child, reference}) std::filesystem::remove(f);
    auto parent_options = [&](std::size_t jobs) {
        return ht::TunerOptions{.max_jobs = jobs, .seed = 5, .progress = ht::ProgressBar::Never, .journal = parent};
    };
    (void)ht::Tuner(parent_space(), ht::RandomSearch(), parent_options(12)).fit(loss_of);
    std::filesystem::copy_file(parent, copy);
    auto child_run = [&](const std::string& journal, const std::string& from, std::size_t jobs) {
        ht::TunerOptions o{.max_jobs = jobs, .seed = 3, .progress = ht::ProgressBar::Never, .journal = journal};
        o.warm_start = ht::WarmStart::from_journals({from});
        return ht::Tuner(parent_space(), ht::Bayesian(), o).fit(loss_of);
    };
    (void)child_run(child, parent, 5);
    (void)child_run(reference, copy, 5);
    (void)ht::Tuner(parent_space(), ht::RandomSearch(), parent_options(20)).fit(loss_of);  // the parent grows
    REQUIRE(ht::load_result(parent).trials().size() == 20);
    const ht::Result resumed = child_run(child, parent, 8);
    const ht::Result expected = child_run(reference, copy, 8);
    REQUIRE(resumed.trials().size() == 8);
    for (std::size_t i = 0; i < 8; ++i) CHECK(resumed.trials()[i].config == expected.trials()[i].config);
    CHECK(resumed.setup().parent_bests.size() == 1);
    // A parent whose trials the run learnt from are gone (another run in its place) is still refused.
    (void)ht::Tuner(parent_space(), ht::RandomSearch(),
                    {.max_jobs = 20, .seed = 6, .progress = ht::ProgressBar::Never, .journal = (dir / "other.jsonl").string()})
        .fit(loss_of);
    CHECK(message_of([&] { (void)child_run(child, (dir / "other.jsonl").string(), 9); }).find(
              "resume with the warm start it began with") != std::string::npos);
    for (const auto& f : {parent, copy, child, reference, (dir / "other.jsonl").string()}) std::filesystem::remove(f);
}

TEST_CASE("warm start with constraints: a parent's best is its best trial known to meet this run's constraints") {
    // The parent recorded 'memory' with each trial; this run allows at most 5.
    const ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0)};
    auto metrics = [](const ht::Config& c) {
        const double x = c.get<double>("x");
        return ht::Metrics{{"loss", x}, {"memory", 10.0 * (1.0 - x)}};  // the lower the loss, the more memory
    };
    ht::Tuner parent_tuner(space, ht::RandomSearch(),
                           {.metric = "loss", .constraints = {ht::Constraint::at_most("memory", 1e9)}, .max_jobs = 30, .seed = 4});
    const ht::Result parent = parent_tuner.fit(metrics);
    const ht::Result unconstrained_parent =
        ht::Tuner(space, ht::RandomSearch(), {.metric = "loss", .max_jobs = 30, .seed = 4})
            .fit([](const ht::Config& c) { return c.get<double>("x"); });

    const auto limit = ht::Constraint::at_most("memory", 5.0);
    const ht::PreparedWarmStart p =
        ht::prepare_warm_start({.parents = {parent}}, space, "loss", ht::Direction::Minimize, {limit});
    REQUIRE(p.parent_bests.size() == 1);
    // Brute force over the parent's trials: the lowest loss among those with memory <= 5.
    double expected = std::numeric_limits<double>::infinity();
    for (const auto& t : parent.trials())
        if (*parent.metric(t, "memory") <= 5.0) expected = std::min(expected, t.objective);
    CHECK(p.parent_bests[0].objective == expected);
    CHECK(p.parent_bests[0].objective > parent.best().objective);  // the parent's own best uses too much memory

    // A parent that never recorded memory cannot be judged: no parent best, and a note says why.
    const ht::PreparedWarmStart q =
        ht::prepare_warm_start({.parents = {unconstrained_parent}}, space, "loss", ht::Direction::Minimize, {limit});
    CHECK(q.parent_bests.empty());
    CHECK(contains(q.notes, "warm start parent 0: none of its trials with a value is known to meet this run's constraints"));
    CHECK(q.observations.size() == 30);  // the strategy still learns from its trials

    // Through the tuner, both parents are counted, though only one has a best this run can use.
    ht::TunerOptions o{.metric = "loss", .constraints = {limit}, .max_jobs = 3, .seed = 5,
                       .progress = ht::ProgressBar::Never};
    o.warm_start = {.parents = {parent, unconstrained_parent}};
    const ht::Result r = ht::Tuner(space, ht::RandomSearch(), o).fit(metrics);
    CHECK(r.setup().parent_runs == 2);
    CHECK(r.setup().parent_bests.size() == 1);
    CHECK(r.summary().find("overall best (with 2 warm-start parent runs, 1 with a best trial this run can use): ") !=
          std::string::npos);
    CHECK(r.to_json().at("warm_start_parent_runs") == 2);
}

TEST_CASE("warm start with constraints: each observation carries this run's verdict, and Bayesian learns from it") {
    // The lower x, the lower the loss, and the further below the bound: the parent's best results
    // all break this run's constraint x >= 0.5. They went to the model as plain results, and the
    // warm-started run suggested no feasible trial at all (0 of 10 under IdenticalDataAndAlgorithm;
    // 5 of 10 cold); TransferLearning opened its design with them (4 of 10).
    const ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0)};
    auto metrics = [](const ht::Config& c) {
        const double x = c.get<double>("x");
        return ht::Metrics{{"loss", x}, {"x_metric", x}};
    };
    const ht::Result parent = ht::Tuner(space, ht::RandomSearch(),
                                        {.metric = "loss", .constraints = {ht::Constraint::at_least("x_metric", -1.0)},
                                         .max_jobs = 20, .seed = 11})
                                  .fit(metrics);
    const auto limit = ht::Constraint::at_least("x_metric", 0.5);
    const ht::PreparedWarmStart p =
        ht::prepare_warm_start({.parents = {parent}}, space, "loss", ht::Direction::Minimize, {limit});
    REQUIRE(p.observations.size() == 20);
    std::size_t breaking = 0;
    for (const auto& o : p.observations) {
        const double x = o.config.get<double>("x");
        CHECK(o.feasible == (x >= 0.5));
        REQUIRE(o.violations.size() == 1);
        CHECK(o.violations[0] == doctest::Approx(0.5 - x));
        breaking += !o.feasible;
    }
    REQUIRE(breaking > 0);
    CHECK(contains(p.notes, fmt::format(", {} of those used break this run's constraints", breaking)));

    for (const auto type : {ht::WarmStartType::IdenticalDataAndAlgorithm, ht::WarmStartType::TransferLearning}) {
        CAPTURE(ht::to_string(type));
        ht::TunerOptions o{.metric = "loss", .constraints = {limit}, .max_jobs = 10, .seed = 3,
                           .progress = ht::ProgressBar::Never};
        o.warm_start = {.type = type, .parents = {parent}};
        const ht::Result r = ht::Tuner(space, ht::Bayesian(), o).fit(metrics);
        std::size_t feasible = 0;
        for (const auto& t : r.trials()) feasible += t.feasible;
        REQUIRE(r.has_best());
        MESSAGE(feasible, " of 10 feasible, best ", r.best().objective);
        CHECK(feasible >= 5);  // the optimum is on the constraint's edge: trials near it fall on both sides
        CHECK(r.best().objective < 0.51);  // the constrained optimum is 0.5
        if (type == ht::WarmStartType::TransferLearning)  // the design opens with the parent's best feasible ones
            CHECK(r.trials().front().config.get<double>("x") >= 0.5);
    }
}

TEST_CASE("warm start with constraints: a parent trial that cannot be judged informs the model but is no feasible result") {
    // The parent did not record the constrained metric. Its trials entered the model as feasible
    // results, its lowest losses (x near 0, where this run's constraint x >= 0.5 is broken) the
    // incumbent and trust-region centre: 0 of 20 trials of the warm-started run were feasible.
    const ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0)};
    const ht::Result parent = ht::Tuner(space, ht::RandomSearch(), {.metric = "loss", .max_jobs = 8, .seed = 2})
                                  .fit([](const ht::Config& c) { return c.get<double>("x"); });
    const auto limit = ht::Constraint::at_least("x_metric", 0.5);
    const ht::PreparedWarmStart p =
        ht::prepare_warm_start({.parents = {parent}}, space, "loss", ht::Direction::Minimize, {limit});
    REQUIRE(p.observations.size() == 8);
    for (const auto& o : p.observations) {
        CHECK_FALSE(o.judged);
        CHECK(o.feasible);  // counts as meeting them, as the warm start's note says
        CHECK(o.violations.empty());
    }
    auto metrics = [](const ht::Config& c) {
        const double x = c.get<double>("x");
        return ht::Metrics{{"loss", x}, {"x_metric", x}};
    };
    for (std::uint64_t seed : {1, 2, 3}) {
        CAPTURE(seed);
        ht::TunerOptions o{.metric = "loss", .constraints = {limit}, .max_jobs = 20, .seed = seed,
                           .progress = ht::ProgressBar::Never};
        o.warm_start = {.parents = {parent}};
        const ht::Result r = ht::Tuner(space, ht::Bayesian(), o).fit(metrics);
        std::size_t feasible = 0;
        for (const auto& t : r.trials()) feasible += t.feasible;
        MESSAGE(feasible, " of 20 feasible");
        CHECK(feasible >= 5);
        REQUIRE(r.has_best());
        CHECK(r.best().objective < 0.51);  // the constrained optimum is 0.5
    }
}

TEST_CASE("warm start from a parent trained to another max_resource is noted, naming both") {
    // Its values were measured at resource 1 and entered as values at 9, without a word.
    ht::TunerOptions o{.max_jobs = 2, .seed = 3, .progress = ht::ProgressBar::Never};
    o.warm_start = {.parents = {parent_run(2, 5)}};
    const ht::Result r = ht::Tuner(parent_space(), ht::RandomSearch({.max_resource = 9}), o)
                             .fit([](const ht::Config& c, ht::Trial&) { return loss_of(c); });
    CHECK(contains(r.setup().warnings, "warm start parent 0 trained its trials to max_resource = 1, this run's is 9: "
                                       "its values were measured at another resource, and are used as this run's"));
    const ht::Result same = ht::Tuner(parent_space(), ht::RandomSearch(), o).fit(loss_of);
    CHECK_FALSE(contains(same.setup().warnings, "trained its trials to max_resource"));
}
