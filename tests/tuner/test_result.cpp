// SPDX-License-Identifier: MIT
#include <hypertune/json.hpp>
#include <hypertune/hypertune.hpp>

#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>
#include <sstream>
#include <stdexcept>

namespace ht = hypertune;

namespace {

// A small RFC 4180 reader: enough to check what to_csv wrote.
std::vector<std::vector<std::string>> read_csv(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    std::vector<std::vector<std::string>> rows(1);
    std::string field;
    bool quoted = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += text[++i];
            else if (c == '"') quoted = false;
            else field += c;
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            rows.back().push_back(std::exchange(field, {}));
        } else if (c == '\n') {
            rows.back().push_back(std::exchange(field, {}));
            rows.emplace_back();
        } else {
            field += c;
        }
    }
    if (rows.back().empty()) rows.pop_back();
    return rows;
}

std::string temp_path(const char* name) { return fmt::format("hypertune_test_{}", name); }

}  // namespace

TEST_CASE("to_csv writes AMT's columns and every value reads back") {
    ht::SearchSpace space{ht::ContinuousParameter("eta", 0.0, 1.0), ht::IntegerParameter("max_depth", 1, 10),
                          ht::CategoricalParameter("note", {"plain", "with,comma", "with \"quotes\""})};
    ht::Tuner tuner(space, ht::RandomSearch({.max_resource = 3}),
                    {.metric = "validation:auc", .direction = ht::Direction::Maximize, .max_jobs = 12,
                     .max_parallel_jobs = 4, .seed = 9, .instances_per_trial = 3});
    auto result = tuner.fit([](const ht::Config& c, ht::Trial& trial) -> double {
        if (c.get<int>("max_depth") == 1) throw std::runtime_error("bad, \"depth\"");
        for (ht::Resource s = 1; s <= trial.budget(); ++s) trial.report(s, c.get<double>("eta") * static_cast<double>(s));
        return c.get<double>("eta");
    });
    auto path = temp_path("trials.csv");
    result.to_csv(path);
    auto rows = read_csv(path);
    REQUIRE(rows.size() == 13);
    std::vector<std::string> header{"TrainingJobName", "TrainingJobStatus", "FinalObjectiveValue", "TrainingStartTime",
                                    "TrainingEndTime", "TrainingElapsedTimeSeconds", "eta", "max_depth", "note",
                                    "TrialId", "ResourceUsed", "BillableSeconds", "Retries", "FailureReason"};
    CHECK(rows[0] == header);
    for (std::size_t i = 1; i < rows.size(); ++i) {
        const auto& row = rows[i];
        REQUIRE(row.size() == header.size());
        const auto& t = result.trials()[i - 1];
        CHECK(row[0] == fmt::format("trial-{:04}", t.id));
        CHECK(row[1] == ht::to_string(t.status));
        if (t.has_objective()) CHECK(std::stod(row[2]) == t.objective);
        else CHECK(row[2].empty());
        CHECK(row[3] == ht::detail::iso8601(t.start_time()));
        CHECK(row[3].size() == 24);  // 2026-11-29T21:46:20.123Z
        CHECK(row[4] == ht::detail::iso8601(t.end_time()));
        CHECK(std::stod(row[5]) == t.elapsed_seconds);
        CHECK(std::stod(row[6]) == t.config.get<double>("eta"));
        CHECK(std::stoi(row[7]) == t.config.get<int>("max_depth"));
        CHECK(row[8] == t.config.get<std::string>("note"));
        CHECK(std::stoull(row[9]) == t.id);
        CHECK(std::stoll(row[10]) == t.resource_used);
        CHECK(std::stod(row[11]) == doctest::Approx(3.0 * t.elapsed_seconds));
        CHECK(std::stoi(row[12]) == t.retries);
        CHECK(row[13] == t.failure_reason);
    }
    std::remove(path.c_str());
}

TEST_CASE("to_json holds the run's setup, best, cost and every trial with its curve") {
    ht::SearchSpace space{ht::ContinuousParameter("eta", 0.0, 1.0)};
    ht::Tuner tuner(space, ht::RandomSearch({.max_resource = 4}), {.max_jobs = 5, .seed = 1});
    auto result = tuner.fit([](const ht::Config& c, ht::Trial& trial) {
        for (ht::Resource s = 1; s <= trial.budget(); ++s) trial.report(s, c.get<double>("eta") / static_cast<double>(s));
        return c.get<double>("eta") / 4.0;
    });
    auto path = temp_path("result.json");
    result.to_json(path);
    std::ifstream in(path);
    auto j = nlohmann::json::parse(in);
    CHECK(j["strategy"] == "RandomSearch");
    CHECK(j["direction"] == "Minimize");
    CHECK(j["max_resource"] == 4);
    CHECK(j["best"]["TrialId"] == result.best().id);
    CHECK(j["best"]["hyperparameters"]["eta"] == result.best().config.get<double>("eta"));
    REQUIRE(j["trials"].size() == 5);
    for (std::size_t i = 0; i < 5; ++i) {
        const auto& t = result.trials()[i];
        const auto& jt = j["trials"][i];
        CHECK(jt["FinalObjectiveValue"] == t.objective);
        REQUIRE(jt["curve"].size() == 4);
        CHECK(jt["curve"][3]["step"] == 4);
        CHECK(jt["curve"][3]["value"] == t.curve[3].value);
        CHECK(jt["segments"].size() == 1);
    }
    CHECK(j["cost"]["busy_seconds"].get<double>() == doctest::Approx(result.cost().busy_seconds));
    std::remove(path.c_str());
}

TEST_CASE("to_json(path), written trial by trial, is the whole document's text byte for byte") {
    // The document of a run that reports every minibatch took about 0.9 KB a curve point as one
    // tree (bench_tuner's ResultToJson cases measure it); the file is now written a trial at a time.
    ht::SearchSpace space{ht::ContinuousParameter("eta", 0.0, 1.0), ht::CategoricalParameter("kind", {"a", "b\"q"})};
    ht::TunerOptions several{.max_jobs = 6, .seed = 2, .progress = ht::ProgressBar::Never};
    several.objectives = {{"loss", ht::Direction::Minimize}, {"size", ht::Direction::Minimize}};
    several.constraints = {ht::Constraint::at_most("latency", 0.5)};
    const std::vector<ht::Result> results{
        ht::Result{},
        ht::Tuner(space, ht::RandomSearch({.max_resource = 3}), {.max_jobs = 4, .seed = 1, .progress = ht::ProgressBar::Never})
            .fit([](const ht::Config& c, ht::Trial& trial) {
                if (c.get<std::string>("kind") == "a" && c.get<double>("eta") > 0.5) throw std::runtime_error("diverged");
                for (ht::Resource s = 1; s <= trial.budget(); ++s) trial.report(s, c.get<double>("eta") / static_cast<double>(s));
                return c.get<double>("eta") / 3.0;
            }),
        ht::Tuner(space, ht::RandomSearch(), several).fit([](const ht::Config& c) {
            const double eta = c.get<double>("eta");
            return ht::Metrics{{"loss", eta}, {"size", 1.0 - eta}, {"latency", eta * eta}};
        })};
    const auto path = temp_path("streamed.json");
    for (std::size_t i = 0; i < results.size(); ++i) {
        CAPTURE(i);
        results[i].to_json(path);
        std::ifstream in(path, std::ios::binary);
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        CHECK(text == ht::detail::result_json(results[i]).dump(2) + "\n");
    }
    std::remove(path.c_str());
}

TEST_CASE("best() and summary() when nothing produced a value") {
    ht::Result empty;
    CHECK_THROWS_WITH_AS((void)empty.best(), "Result::best: no trial ran", ht::Error);
    ht::SearchSpace space{ht::ContinuousParameter("eta", 0.0, 1.0)};
    ht::Tuner tuner(space, ht::RandomSearch(), {.max_jobs = 3});
    auto result = tuner.fit([](const ht::Config&) -> double { throw std::runtime_error("no data"); });
    CHECK_THROWS_WITH_AS((void)result.best(), "Result::best: none of the 3 trials produced a value", ht::Error);
    // overall_best() names itself, and says what the warm start gave (here nothing).
    CHECK_FALSE(result.has_overall_best());
    CHECK_THROWS_WITH_AS((void)result.overall_best(),
                         "Result::overall_best: none of the 3 trials produced a value, and there was no warm start",
                         ht::Error);
    CHECK(result.summary().find("best: none") != std::string::npos);
    CHECK(result.summary().find("3 failed") != std::string::npos);
}

TEST_CASE("writing to an unwritable path names the file and the operating system's reason") {
    ht::Result empty;
    CHECK_THROWS_WITH_AS(empty.to_csv("/nonexistent-dir/trials.csv"),
                         "CSV file '/nonexistent-dir/trials.csv': cannot write: No such file or directory", ht::IoError);
    CHECK_THROWS_WITH_AS(empty.to_json("/nonexistent-dir/result.json"),
                         "JSON file '/nonexistent-dir/result.json': cannot write: No such file or directory", ht::IoError);
    if (std::filesystem::exists("/dev/full")) {  // every write fails there with ENOSPC: a full disk
        CHECK_THROWS_WITH_AS(empty.to_csv("/dev/full"), "CSV file '/dev/full': error while writing: No space left on device",
                             ht::IoError);
        CHECK_THROWS_WITH_AS(empty.to_json("/dev/full"),
                             "JSON file '/dev/full': error while writing: No space left on device", ht::IoError);
    }
}

TEST_CASE("a failure reason with invalid UTF-8 still gives a CSV that is valid UTF-8, bad bytes as U+FFFD") {
    // A trainer's Latin-1 stderr, quoted in the failure reason: "\xE9" is e-acute in Latin-1, "\xFF" is never UTF-8.
    ht::SearchSpace space{ht::ContinuousParameter("eta", 0.0, 1.0), ht::CategoricalParameter("note", {"na\xC3\xAFve"})};
    ht::Tuner tuner(space, ht::RandomSearch(), {.max_jobs = 6, .seed = 2});
    auto result = tuner.fit([](const ht::Config& c) -> double {
        if (c.get<double>("eta") < 0.5) throw std::runtime_error("r\xE9sultat \xFF invalide, \"quoted\"");
        return c.get<double>("eta");
    });
    REQUIRE(result.count(ht::TrialStatus::Failed) > 0);
    auto path = temp_path("latin1.csv");
    result.to_csv(path);
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    auto text = ss.str();
    // nlohmann's strict UTF-8 check (json::dump throws type_error 316 on invalid UTF-8).
    CHECK_NOTHROW((void)nlohmann::json(text).dump());
    CHECK(text.find("r\xEF\xBF\xBDsultat \xEF\xBF\xBD invalide") != std::string::npos);
    CHECK(text.find("na\xC3\xAFve") != std::string::npos);  // valid UTF-8 is kept as it is
    // Every row still has every column: the quoting saw the replaced text.
    auto rows = read_csv(path);
    for (const auto& row : rows) CHECK(row.size() == 13);
    std::remove(path.c_str());
    // to_json() too: its dump() threw nlohmann's type_error 316 (not a hypertune error) on the reason.
    std::string dumped;
    CHECK_NOTHROW(dumped = result.to_json().dump());
    CHECK(dumped.find("r\xEF\xBF\xBDsultat \xEF\xBF\xBD invalide") != std::string::npos);
}

TEST_CASE("summary() lists early stops under a heading, and prints no heading without a stop") {
    ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0)};
    auto trial = [&](ht::TrialId id, ht::DecisionRecord::Kind kind) {
        ht::TrialRecord t;
        t.id = id;
        t.config = space.make({0.5});
        t.status = ht::TrialStatus::Completed;
        t.objective = 0.5;
        t.decisions.push_back({id, kind, 0, 0, 1, 0.5, 0.4, 3, ""});
        return t;
    };
    ht::Result::Setup setup;
    setup.strategy = "Hyperband";
    setup.parameter_names = {"x"};
    ht::Result promotions(setup, {trial(0, ht::DecisionRecord::Kind::Promote), trial(1, ht::DecisionRecord::Kind::Pause)});
    CHECK(promotions.summary().find("early-stopping decisions") == std::string::npos);
    ht::Result stops(setup, {trial(0, ht::DecisionRecord::Kind::Promote), trial(1, ht::DecisionRecord::Kind::Stop)});
    CHECK(stops.summary().find("early-stopping decisions:\n  trial 1: Stop at bracket 0 rung 0") != std::string::npos);
}

TEST_CASE("best() breaks a tie on the first objective by the next ones, so that it is on the Pareto front") {
    ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0)};
    ht::Result::Setup setup;
    setup.metric = "error";
    setup.objectives = {{"error", ht::Direction::Minimize}, {"accuracy", ht::Direction::Maximize}};
    setup.parameter_names = {"x"};
    auto trial = [&](ht::TrialId id, double error, double accuracy) {
        ht::TrialRecord t;
        t.id = id;
        t.config = space.make({0.5});
        t.status = ht::TrialStatus::Completed;
        t.objective = error;
        t.values = {error, accuracy};
        return t;
    };
    // Trials 1 and 2 tie on error; trial 2 is more accurate, so it dominates trial 1.
    const ht::Result r(setup, {trial(0, 0.3, 0.9), trial(1, 0.1, 0.5), trial(2, 0.1, 0.8), trial(3, 0.1, 0.7)});
    CHECK(r.best().id == 2);
    std::vector<ht::TrialId> front;
    for (const auto& t : r.pareto_front()) front.push_back(t.id);
    CHECK(std::find(front.begin(), front.end(), r.best().id) != front.end());
    // One objective: the earlier of two equal trials, as before.
    ht::Result::Setup single = setup;
    single.objectives.clear();
    ht::TrialRecord a = trial(0, 0.1, 0.5), b = trial(1, 0.1, 0.8);
    a.values.clear();
    b.values.clear();
    CHECK(ht::Result(single, {a, b}).best().id == 0);
}
