// SPDX-License-Identifier: MIT
// Several objectives and constraints through the Tuner: the Pareto front against brute force,
// its hypervolume, feasibility (an infeasible trial is never best nor on the front), the CSV,
// JSON and journal forms (load_result and resume), what the strategy is told, and misuse named
// before any trial runs.
#include "../support/same_result.hpp"

#include <hypertune/hypertune.hpp>
#include <hypertune/json.hpp>
#include <hypertune/journal.hpp>
#include <hypertune/strategies/bayesian.hpp>
#include <hypertune/strategies/model_based.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace ht = hypertune;
namespace fs = std::filesystem;

namespace {

ht::SearchSpace mo_space() {
    return ht::SearchSpace{ht::ContinuousParameter("x", 0.0, 1.0), ht::ContinuousParameter("y", 0.0, 1.0)};
}

// A larger x buys accuracy at a cost; y only hurts both. seconds_per_epoch grows with x.
ht::Metrics trade_off(const ht::Config& c) {
    const double x = c.get<double>("x"), y = c.get<double>("y");
    return {{"accuracy", 1.0 - (1.0 - x) * (1.0 - x) - 0.2 * y},
            {"cost", x + 0.5 * y},
            {"seconds_per_epoch", 10.0 + 30.0 * x}};
}

ht::TunerOptions mo_options(std::size_t jobs = 40, std::string journal = "") {
    ht::TunerOptions o;
    o.objectives = {{"accuracy", ht::Direction::Maximize}, {"cost", ht::Direction::Minimize}};
    o.constraints = {ht::Constraint::at_most("seconds_per_epoch", 30.0)};
    o.max_jobs = jobs;
    o.max_parallel_jobs = 2;
    o.seed = 9;
    o.progress = ht::ProgressBar::Never;
    o.journal = std::move(journal);
    return o;
}

std::string mo_journal(const char* name) {
    auto path = (fs::temp_directory_path() / fmt::format("hypertune-mo-{}-{}.jsonl", name, ::getpid())).string();
    fs::remove(path);
    return path;
}

std::size_t occurrences(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}

}  // namespace

TEST_CASE("several objectives: the Pareto front is exactly the feasible trials no other dominates") {
    auto result = ht::Tuner(mo_space(), ht::RandomSearch(), mo_options(60)).fit(trade_off);
    REQUIRE(result.trials().size() == 60);
    CHECK(result.objectives() == std::vector<ht::Metric>{{"accuracy", ht::Direction::Maximize},
                                                         {"cost", ht::Direction::Minimize}});
    CHECK(result.metric_names() == std::vector<std::string>{"accuracy", "cost", "seconds_per_epoch"});

    // Brute force: feasible (seconds_per_epoch <= 30, i.e. x <= 2/3) and dominated by no other.
    std::vector<ht::TrialId> expected;
    for (const auto& a : result.trials()) {
        REQUIRE(a.status == ht::TrialStatus::Completed);
        REQUIRE(a.values.size() == 3);
        CHECK(a.objective == a.values[0]);
        CHECK(a.feasible == (a.values[2] <= 30.0));
        CHECK(*result.metric(a, "cost") == a.values[1]);
        if (!a.feasible) continue;
        bool dominated = false;
        for (const auto& b : result.trials())
            dominated = dominated || (b.feasible && b.values[0] >= a.values[0] && b.values[1] <= a.values[1] &&
                                      (b.values[0] > a.values[0] || b.values[1] < a.values[1]));
        if (!dominated) expected.push_back(a.id);
    }
    auto front = result.pareto_front();
    std::vector<ht::TrialId> got;
    for (const auto& t : front) got.push_back(t.id);
    std::sort(expected.begin(), expected.end());
    auto sorted = got;
    std::sort(sorted.begin(), sorted.end());
    CHECK(sorted == expected);
    REQUIRE(front.size() >= 3);
    // Ordered by the first objective, best (highest accuracy) first; cost then rises along it.
    for (std::size_t i = 1; i < front.size(); ++i) {
        CHECK(front[i - 1].values[0] >= front[i].values[0]);
        CHECK(front[i - 1].values[1] >= front[i].values[1]);
    }
    // best() is the best feasible trial on the first objective: the front's first member.
    CHECK(result.best().id == front.front().id);
    CHECK(result.best().feasible);

    // Hypervolume in the objectives' own units: the reference is the worst acceptable accuracy
    // and the largest acceptable cost.
    std::vector<std::vector<double>> losses;
    for (const auto& t : front) losses.push_back({-t.values[0], t.values[1]});
    CHECK(result.hypervolume({0.0, 2.0}) == doctest::Approx(ht::hypervolume(losses, {-0.0, 2.0})));
    CHECK(result.hypervolume({0.0, 2.0}) > 0.5);
    CHECK_THROWS_WITH_AS((void)result.hypervolume({0.0}),
                         "Result::hypervolume: the reference point has 1 values, the run 2 objectives",
                         ht::InvalidArgument);

    auto summary = result.summary();
    CHECK(summary.find("constraints seconds_per_epoch <= 30:") != std::string::npos);
    CHECK(summary.find(fmt::format("Pareto front (Maximize accuracy, Minimize cost): {} trials", front.size())) !=
          std::string::npos);
    CHECK(summary.find("best on accuracy: trial") != std::string::npos);
}

TEST_CASE("several objectives: CSV and JSON carry each metric, feasibility and front membership") {
    auto result = ht::Tuner(mo_space(), ht::RandomSearch(), mo_options(30)).fit(trade_off);
    const auto csv = result.to_csv();
    const auto header = csv.substr(0, csv.find('\n'));
    CHECK(header ==
          "TrainingJobName,TrainingJobStatus,FinalObjectiveValue,TrainingStartTime,TrainingEndTime,"
          "TrainingElapsedTimeSeconds,accuracy,cost,seconds_per_epoch,Feasible,ParetoOptimal,x,y,TrialId,ResourceUsed,"
          "BillableSeconds,Retries,FailureReason");
    const auto front = result.pareto_front();
    // Feasible,ParetoOptimal: True,True on the front; False,False when infeasible.
    const std::size_t optimal_rows = occurrences(csv, ",True,True,");
    const std::size_t infeasible_rows = occurrences(csv, ",False,False,");
    CHECK(optimal_rows == front.size());
    std::size_t infeasible = 0;
    for (const auto& t : result.trials()) infeasible += t.feasible ? 0 : 1;
    CHECK(infeasible > 0);
    CHECK(infeasible_rows == infeasible);

    const auto j = result.to_json();
    CHECK(j["objectives"].size() == 2);
    CHECK(j["objectives"][1]["name"] == "cost");
    CHECK(j["constraints"][0]["kind"] == "<=");
    CHECK(j["pareto_front"].size() == front.size());
    const auto& t0 = j["trials"][0];
    CHECK(t0["metrics"]["cost"].get<double>() == result.trials()[0].values[1]);
    CHECK(t0["feasible"].get<bool>() == result.trials()[0].feasible);
    CHECK(t0.contains("pareto_optimal"));
}

TEST_CASE("several objectives: load_result and a resumed run give the live run's values and front") {
    auto path = mo_journal("attach");
    auto live = ht::Tuner(mo_space(), ht::RandomSearch(), mo_options(30, path)).fit(trade_off);
    auto loaded = ht::load_result(path);
    ht::testing::check_same_result(live, loaded);
    CHECK(loaded.pareto_front().size() == live.pareto_front().size());
    CHECK(loaded.hypervolume({0.0, 2.0}) == live.hypervolume({0.0, 2.0}));
    fs::remove(path);

    // Stopped between trials, then resumed by a new tuner: the values of an uninterrupted run.
    auto reference = ht::Tuner(mo_space(), ht::RandomSearch(), mo_options(30)).fit(trade_off);
    path = mo_journal("resume");
    {
        auto o = mo_options(30, path);
        o.max_parallel_jobs = 1;
        // stop() from on_trial_end lands between two trials; the first trial waits for the handle.
        std::atomic<ht::TuningJob*> self{nullptr};
        o.on_trial_end = [&](const ht::TrialRecord& r) {
            if (r.id == 11) self.load()->stop();
        };
        ht::Tuner first(mo_space(), ht::RandomSearch(), o);
        auto job = first.start([&](const ht::Config& c) {
            while (!self.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            return trade_off(c);
        });
        self = &job;
        CHECK(job.wait().trials().size() == 12);
    }
    auto o = mo_options(30, path);
    o.max_parallel_jobs = 1;
    auto resumed = ht::Tuner(mo_space(), ht::RandomSearch(), o).fit(trade_off);
    REQUIRE(resumed.trials().size() == reference.trials().size());
    for (std::size_t i = 0; i < resumed.trials().size(); ++i) {
        CHECK(resumed.trials()[i].values == reference.trials()[i].values);
        CHECK(resumed.trials()[i].feasible == reference.trials()[i].feasible);
    }
    std::vector<ht::TrialId> a, b;
    for (const auto& t : resumed.pareto_front()) a.push_back(t.id);
    for (const auto& t : reference.pareto_front()) b.push_back(t.id);
    CHECK(a == b);
    ht::testing::check_same_result(resumed, ht::load_result(path));
    fs::remove(path);
}

TEST_CASE("a journal with its fields sorted by name, as earlier versions wrote it, loads and resumes") {
    // Journals keep their fields in the order written; before, every object's fields were sorted
    // by name. Resuming compares the journal's search space, objectives and constraints with the
    // tuner's field by field, in any order.
    auto path = mo_journal("sorted-fields");
    auto first = ht::Tuner(mo_space(), ht::RandomSearch(), mo_options(10, path)).fit(trade_off);
    std::vector<std::string> lines;
    {
        std::ifstream in(path);
        for (std::string line; std::getline(in, line);) lines.push_back(line);
    }
    std::size_t reordered = 0;
    {
        std::ofstream out(path, std::ios::trunc);
        for (const auto& line : lines) {
            const std::string sorted = nlohmann::json::parse(line).dump();  // std::map: fields by name
            reordered += sorted != line;
            out << sorted << '\n';
        }
    }
    REQUIRE(reordered > 0);
    ht::testing::check_same_result(first, ht::load_result(path));
    auto resumed = ht::Tuner(mo_space(), ht::RandomSearch(), mo_options(16, path)).fit(trade_off);
    REQUIRE(resumed.trials().size() == 16);
    for (std::size_t i = 0; i < first.trials().size(); ++i) CHECK(resumed.trials()[i].values == first.trials()[i].values);
    fs::remove(path);
}

namespace {

// One objective, the loss, and a throughput of at least 100.
ht::TunerOptions loss_at_throughput(std::size_t jobs) {
    ht::TunerOptions o;
    o.metric = "loss";
    o.constraints = {ht::Constraint::at_least("throughput", 100.0)};
    o.max_jobs = jobs;
    o.seed = 4;
    o.progress = ht::ProgressBar::Never;
    return o;
}

}  // namespace

TEST_CASE("a constraint with one objective: an infeasible trial is never best, and never ends the run") {
    ht::TunerOptions o = loss_at_throughput(40);
    // The best loss lies at x = 0, where the throughput is too low; the target is only reachable there.
    o.target_objective = 0.2;
    auto objective = [](const ht::Config& c) {
        const double x = c.get<double>("x");
        return ht::Metrics{{"loss", x}, {"throughput", 50.0 + 200.0 * x}};
    };
    auto result = ht::Tuner(ht::SearchSpace{ht::ContinuousParameter("x", 0.0, 1.0)}, ht::RandomSearch(), o).fit(objective);
    CHECK(result.stop_reason() == "max_jobs reached");
    const auto& best = result.best();
    CHECK(best.feasible);
    CHECK(*result.metric(best, "throughput") >= 100.0);
    for (const auto& t : result.trials()) {
        CHECK(t.feasible == (t.values[1] >= 100.0));
        if (t.feasible) CHECK(t.objective >= best.objective);
    }
    // the lowest loss overall is infeasible, and lower than best()'s
    double lowest = 1e9;
    for (const auto& t : result.trials()) lowest = std::min(lowest, t.objective);
    CHECK(lowest < best.objective);
    CHECK(result.to_csv().substr(0, 200).find(",loss,throughput,Feasible,x,") != std::string::npos);

    // No feasible trial at all: best() says so.
    o.constraints = {ht::Constraint::at_least("throughput", 1000.0)};
    o.target_objective.reset();
    o.max_jobs = 5;
    auto none = ht::Tuner(ht::SearchSpace{ht::ContinuousParameter("x", 0.0, 1.0)}, ht::RandomSearch(), o).fit(objective);
    CHECK_FALSE(none.has_best());
    CHECK_THROWS_WITH_AS((void)none.best(), "Result::best: none of the 5 trials met the constraints", ht::Error);
    CHECK(none.summary().find("best: none (no trial met the constraints)") != std::string::npos);
    CHECK(none.pareto_front().empty());
}

TEST_CASE("a constrained run whose trainer reports single values is warned about when the strategy judged them") {
    const ht::TunerOptions o = loss_at_throughput(12);
    const auto trainer = [](const ht::Config& c, ht::Trial& trial) {
        const double x = c.get<double>("x");
        for (ht::Resource r = trial.resumed_from() + 1; r <= trial.budget() && !trial.should_stop(); ++r)
            trial.report(r, x + 1.0 / static_cast<double>(r));  // the loss alone: no throughput
        return ht::Metrics{{"loss", x}, {"throughput", 50.0 + 200.0 * x}};
    };
    const ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0)};
    const auto asha = ht::Tuner(space, ht::ASHA({.min_resource = 1, .max_resource = 9, .type = ht::HalvingType::Stop}), o)
                          .fit(trainer);
    const auto& w = asha.setup().warnings;
    REQUIRE(w.size() == 1);
    CHECK(w[0].ends_with("carried a single value (the first: trial 0 at step 1): ASHA judged those trials as if "
                         "they met the constraints; report ht::Metrics with the constrained metrics too, so that an "
                         "infeasible trial ranks after the feasible ones"));
    // A strategy that judges nothing from reports has nothing to warn about.
    CHECK(ht::Tuner(space, ht::RandomSearch({.max_resource = 3}), o).fit(trainer).setup().warnings.empty());
    // Metrics without the constrained one are the same case, and named as such.
    const auto without = ht::Tuner(space, ht::ASHA({.min_resource = 1, .max_resource = 9, .type = ht::HalvingType::Stop}), o)
                             .fit([](const ht::Config& c, ht::Trial& trial) {
                                 const double x = c.get<double>("x");
                                 for (ht::Resource r = 1; r <= trial.budget() && !trial.should_stop(); ++r)
                                     trial.report(r, ht::Metrics{{"loss", x + 1.0 / static_cast<double>(r)}});
                                 return ht::Metrics{{"loss", x}, {"throughput", 50.0 + 200.0 * x}};
                             });
    REQUIRE(without.setup().warnings.size() == 1);
    CHECK(without.setup().warnings[0].find("of this constrained run carried no value of the constrained metric "
                                           "'throughput' (the first: trial 0 at step 1): ASHA judged those trials as "
                                           "if they met the constraints") != std::string::npos);
    // A run cut short and resumed counts every session's reports, and names the first of the whole
    // run: its warning is the uninterrupted run's, live and loaded from the journal.
    auto serial = o;
    serial.max_parallel_jobs = 1;  // the same trials and reports, session or not
    const ht::ASHA stop_asha({.min_resource = 1, .max_resource = 9, .type = ht::HalvingType::Stop});
    const auto whole = ht::Tuner(space, stop_asha, serial).fit(trainer);
    REQUIRE(whole.setup().warnings.size() == 1);
    REQUIRE(whole.setup().warnings[0].find("(the first: trial 0 at step 1)") != std::string::npos);
    auto journaled = serial;
    journaled.journal = mo_journal("plain-reports");
    int ended = 0;
    journaled.on_trial_end = [&](const ht::TrialRecord&) {
        if (++ended == 7) throw std::runtime_error("the machine went down");
    };
    const auto cut = ht::Tuner(space, stop_asha, journaled).fit(trainer);
    REQUIRE(cut.stop_reason().find("the machine went down") != std::string_view::npos);
    journaled.on_trial_end = nullptr;
    const auto resumed = ht::Tuner(space, stop_asha, journaled).fit(trainer);
    CHECK(resumed.setup().warnings == whole.setup().warnings);
    CHECK(ht::load_result(journaled.journal).setup().warnings == whole.setup().warnings);
    fs::remove(journaled.journal);
}

TEST_CASE("a constraint every trial meets changes no decision of ASHA, ties included") {
    // Losses on a coarse grid (an accuracy on a small validation set), so that trials tie at a
    // rung. With a constraint the rungs rank by Pareto priority, where ties go to the trial as they
    // do by loss: the same trials stop, pause and complete, at the same resource.
    const ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0)};
    const auto trainer = [](const ht::Config& c, ht::Trial& trial) {
        const double level = std::round(4.0 * c.get<double>("x")) / 4.0;
        double loss = 0.0;
        for (ht::Resource r = trial.resumed_from() + 1; r <= trial.budget(); ++r) {
            loss = level + 1.0 / static_cast<double>(r);
            trial.report(r, ht::Metrics{{"loss", loss}, {"memory", 0.1}});
            if (trial.should_stop()) break;
        }
        return ht::Metrics{{"loss", loss}, {"memory", 0.1}};
    };
    for (const auto type : {ht::HalvingType::Stop, ht::HalvingType::Promotion}) {
        CAPTURE(type == ht::HalvingType::Stop);
        auto o = loss_at_throughput(30);
        o.constraints = {ht::Constraint::at_most("memory", 0.5)};
        o.max_parallel_jobs = 1;
        auto plain = o;
        plain.constraints.clear();
        const ht::ASHA asha({.min_resource = 1, .max_resource = 9, .type = type});
        const auto constrained = ht::Tuner(space, asha, o).fit(trainer);
        const auto reference = ht::Tuner(space, asha, plain).fit(trainer);
        REQUIRE(constrained.trials().size() == reference.trials().size());
        std::size_t early = 0;
        for (std::size_t i = 0; i < reference.trials().size(); ++i) {
            CAPTURE(i);
            CHECK(constrained.trials()[i].status == reference.trials()[i].status);
            CHECK(constrained.trials()[i].resource_used == reference.trials()[i].resource_used);
            early += reference.trials()[i].resource_used < 9;
        }
        CHECK(early > 0);  // the rungs did judge
    }
}

TEST_CASE("metrics the objective gets wrong fail that trial, naming the metric") {
    auto o = mo_options(1);
    o.max_parallel_jobs = 1;
    auto run = [&](auto objective) { return ht::Tuner(mo_space(), ht::RandomSearch(), o).fit(objective).trials().at(0); };
    auto missing = run([](const ht::Config&) { return ht::Metrics{{"accuracy", 0.9}, {"seconds_per_epoch", 3}}; });
    CHECK(missing.status == ht::TrialStatus::Failed);
    CHECK(missing.failure_reason == "the objective returned no value for metric 'cost'");
    // A name the run does not have is ignored (a command's logging-only metric), and shown when a
    // run metric is missing: a misspelt name.
    auto misspelt = run([](const ht::Config&) {
        return ht::Metrics{{"accuracy", 0.9}, {"cots", 1}, {"seconds_per_epoch", 3}};
    });
    CHECK(misspelt.failure_reason ==
          "the objective returned no value for metric 'cost' (it also returned cots, which the run does not have)");
    auto extra = run([](const ht::Config&) {
        return ht::Metrics{{"accuracy", 0.9}, {"cost", 1}, {"seconds_per_epoch", 3}, {"train_loss", 0.2}};
    });
    CHECK(extra.status == ht::TrialStatus::Completed);
    CHECK(extra.values == std::vector<double>{0.9, 1.0, 3.0});
    auto nan = run([](const ht::Config&) {
        return ht::Metrics{{"accuracy", std::nan("")}, {"cost", 1}, {"seconds_per_epoch", 3}};
    });
    CHECK(nan.failure_reason == "the objective returned accuracy = nan");
    CHECK(nan.values.empty());
    CHECK_FALSE(nan.feasible);
    auto twice = run([](const ht::Config&) { return ht::Metrics{{"cost", 1}, {"cost", 2}}; });
    CHECK(twice.failure_reason == "the objective threw: Metrics: 'cost' is given twice");
}

TEST_CASE("a trial stopped early that leaves its constrained metric out is Stopped and infeasible, not Failed") {
    // The model's size is known once it has trained its budget: a trial told to stop returns its
    // loss alone. Every such trial was Failed ("returned no value for metric 'model_mb'"), the
    // stops lost: 0 stopped early, and billable time with and without early stopping equal.
    const ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0)};
    ht::TunerOptions o{.metric = "loss", .constraints = {ht::Constraint::at_most("model_mb", 50.0)}, .max_jobs = 20,
                       .max_parallel_jobs = 2, .seed = 4, .progress = ht::ProgressBar::Never};
    auto trainer = [](bool forgets) {
        return [forgets](const ht::Config& c, ht::Trial& t) {
            const double x = c.get<double>("x");
            double loss = 0.0;
            for (ht::Resource e = 1; e <= t.budget(); ++e) {
                t.report(e, ht::Metrics{{"loss", loss = x + 1.0 / static_cast<double>(e)}});
                if (t.should_stop()) return ht::Metrics{{"loss", loss}};  // no final model to measure
            }
            if (forgets) return ht::Metrics{{"loss", loss}};
            return ht::Metrics{{"loss", loss}, {"model_mb", 100.0 * x}};
        };
    };
    const auto stop_type = ht::ASHA({.min_resource = 1, .max_resource = 9, .type = ht::HalvingType::Stop});
    const ht::Result r = ht::Tuner(space, stop_type, o).fit(trainer(false));
    CHECK(r.count(ht::TrialStatus::Failed) == 0);
    REQUIRE(r.count(ht::TrialStatus::Stopped) > 0);
    for (const auto& t : r.trials()) {
        if (t.status != ht::TrialStatus::Stopped) continue;
        CHECK_FALSE(t.feasible);  // not shown to meet the constraint
        CHECK(t.has_objective());
        CHECK(std::isnan(*r.metric(t, "model_mb")));
    }
    CHECK(r.cost().billable_seconds < r.cost().billable_seconds_without_early_stopping);
    REQUIRE(r.has_best());
    CHECK(r.best().status == ht::TrialStatus::Completed);
    CHECK(*r.metric(r.best(), "model_mb") <= 50.0);
    for (const auto& w : r.setup().warnings) CHECK(w.find("returned no value") == std::string::npos);

    // A trial trained in full that leaves it out is infeasible too, and that is said once.
    const ht::Result forgot = ht::Tuner(space, stop_type, o).fit(trainer(true));
    CHECK(forgot.count(ht::TrialStatus::Failed) == 0);
    CHECK_FALSE(forgot.has_best());
    CHECK(std::count_if(forgot.setup().warnings.begin(), forgot.setup().warnings.end(), [](const std::string& w) {
              return w.find("returned no value for the constrained metric 'model_mb': it cannot be shown to meet the "
                            "constraints, so it counts as breaking them") != std::string::npos;
          }) == 1);
}

TEST_CASE("several objectives: misuse is refused before any trial runs, naming the culprit") {
    auto space = mo_space();
    auto o = mo_options(5);
    // a single number where metrics are needed
    ht::Tuner scalar(space, ht::RandomSearch(), o);
    CHECK_THROWS_WITH_AS((void)scalar.fit([](const ht::Config&) { return 1.0; }),
                         "Tuner: the run has metrics accuracy, cost, seconds_per_epoch: the objective must return "
                         "hypertune::Metrics with a value for each, not a single number",
                         ht::InvalidArgument);
    // strategies that compare one loss
    CHECK_THROWS_WITH_AS(ht::Tuner(space, ht::MedianStopping(ht::RandomSearch()), o),
                         "TunerOptions: 2 objectives (accuracy, cost), but MedianStopping(RandomSearch) optimises a "
                         "single one; RandomSearch, GridSearch, Bayesian, ASHA and asynchronous Hyperband take several",
                         ht::InvalidArgument);
    CHECK_THROWS_AS(ht::Tuner(space, ht::Hyperband({.max_resource = 9, .mode = ht::HyperbandMode::Synchronous}), o),
                    ht::InvalidArgument);
    // Constraints with one objective: synchronous Hyperband's barriers rank the loss alone.
    auto constrained = o;
    constrained.objectives.clear();
    constrained.metric = "accuracy";
    constrained.direction = ht::Direction::Maximize;
    REQUIRE_FALSE(constrained.constraints.empty());
    CHECK_THROWS_WITH_AS(ht::Tuner(space, ht::Hyperband({.max_resource = 9, .mode = ht::HyperbandMode::Synchronous}),
                                   constrained),
                         "Hyperband: the synchronous mode ranks a rung on the loss alone and cannot put trials that "
                         "break a constraint last; use the asynchronous mode or ASHA, which do",
                         ht::InvalidArgument);
    CHECK_NOTHROW(ht::Tuner(space, ht::Hyperband({.max_resource = 9}), constrained));
    // The median rule and ModelBased's model look at the loss alone: refused, not silently wrong.
    CHECK_THROWS_WITH_AS(ht::Tuner(space, ht::MedianStopping(ht::RandomSearch({.max_resource = 5})), constrained),
                         "MedianStopping(RandomSearch): the median rule compares a step's values whether the trials "
                         "meet the run's constraints or not, and would stop feasible trials against infeasible ones; "
                         "with constraints, use ASHA or asynchronous Hyperband (.type = ht::HalvingType::Stop for "
                         "final stops), which put trials that break a constraint last",
                         ht::InvalidArgument);
    CHECK_THROWS_WITH_AS(ht::Tuner(space, ht::ModelBased(ht::ASHA({.max_resource = 9})), constrained),
                         "ModelBased: its model learns from the loss alone, whether a trial meets the run's "
                         "constraints or not, and would steer new trials towards ones that break them; with "
                         "constraints, give the scheduler GPSampler (which models each constraint) or no "
                         "sampler (random)",
                         ht::InvalidArgument);
    CHECK_NOTHROW(ht::Tuner(space, ht::ASHA({.max_resource = 9}, ht::GPSampler()), constrained));
    auto unconstrained = constrained;
    unconstrained.constraints.clear();
    CHECK_NOTHROW(ht::Tuner(space, ht::ModelBased(ht::ASHA({.max_resource = 9})), unconstrained));
    CHECK_NOTHROW(ht::Tuner(space, ht::MedianStopping(ht::RandomSearch({.max_resource = 5})), unconstrained));
    CHECK_NOTHROW(ht::Tuner(space, ht::ASHA({.max_resource = 9}), o));  // MO-ASHA
    CHECK_NOTHROW(ht::Tuner(space, ht::Hyperband({.max_resource = 9}), o));
    CHECK_NOTHROW(ht::Tuner(space, ht::Bayesian(), o));  // ParEGO
    CHECK_NOTHROW(ht::Tuner(space, ht::GridSearch({.points = {{"x", 3}, {"y", 3}}}), o));
    // names
    auto bad = o;
    bad.objectives.push_back({"accuracy", ht::Direction::Minimize});
    CHECK_THROWS_WITH_AS(ht::Tuner(space, ht::RandomSearch(), bad), "TunerOptions: objective 'accuracy' is given twice",
                         ht::InvalidArgument);
    bad = o;
    bad.constraints = {ht::Constraint::at_most("memory", 1.0), ht::Constraint::at_least("memory", 2.0)};
    CHECK_THROWS_WITH_AS(ht::Tuner(space, ht::RandomSearch(), bad),
                         "TunerOptions: constraints 'memory <= 1' and 'memory >= 2' exclude each other: no trial could "
                         "meet both",
                         ht::InvalidArgument);
    bad.constraints = {ht::Constraint::at_most("memory", 2.0), ht::Constraint::at_least("memory", 2.0)};  // = 2 only
    CHECK_NOTHROW(ht::Tuner(space, ht::RandomSearch(), bad));
    bad = o;
    bad.constraints = {ht::Constraint::at_most("x", 1.0)};
    CHECK_THROWS_WITH_AS(ht::Tuner(space, ht::RandomSearch(), bad),
                         "TunerOptions: metric 'x' is named like a hyperparameter; choose another name",
                         ht::InvalidArgument);
    bad = o;
    bad.objectives[1].name = "TrialId";
    CHECK_THROWS_WITH_AS(ht::Tuner(space, ht::RandomSearch(), bad),
                         "TunerOptions: metric 'TrialId' is named like a column of Result::to_csv; choose another name",
                         ht::InvalidArgument);
    bad = o;
    bad.metric = "loss";
    CHECK_THROWS_WITH_AS(ht::Tuner(space, ht::RandomSearch(), bad),
                         "TunerOptions: metric 'loss' (Minimize) and objectives (first: 'accuracy', Maximize) "
                         "disagree: give the objectives alone",
                         ht::InvalidArgument);
    bad = o;
    bad.constraints = {ht::Constraint::at_most("seconds_per_epoch", std::nan(""))};
    CHECK_THROWS_AS(ht::Tuner(space, ht::RandomSearch(), bad), ht::InvalidArgument);
    bad = o;
    bad.target_objective = 0.9;
    CHECK_THROWS_WITH_AS(ht::Tuner(space, ht::RandomSearch(), bad),
                         "TunerOptions: target_objective needs a single objective; this run has 2",
                         ht::InvalidArgument);
    // a journal of a run with other objectives is another run
    auto path = mo_journal("other-objectives");
    (void)ht::Tuner(space, ht::RandomSearch(), mo_options(3, path)).fit(trade_off);
    auto other = mo_options(5, path);
    other.objectives[1].direction = ht::Direction::Maximize;
    CHECK_THROWS_WITH_AS(ht::Tuner(space, ht::RandomSearch(), other),
                         doctest::Contains("belongs to another run: its objectives are"), ht::InvalidArgument);
    // One objective is said as such, not as an empty list; so is no constraint.
    auto one = mo_options(5, path);
    one.objectives.resize(1);
    one.constraints.clear();
    try {
        (void)ht::Tuner(space, ht::RandomSearch(), one);
        FAIL("a journal of a run with two objectives was taken for one with a single objective");
    } catch (const ht::InvalidArgument& e) {
        CHECK(std::string(e.what()).ends_with("this tuner's are the metric 'accuracy' alone"));
    }
    fs::remove(path);
}

namespace {

// Records what it is told; any number of objectives.
class Listening final : public ht::Sampler {
public:
    std::string name() const override { return "Listening"; }
    void start(const ht::SearchSpace& space, const ht::SamplerContext&) override { space_ = space; }
    std::optional<ht::Config> sample(ht::TrialId id) override {
        return space_.decode(std::vector<double>{0.1 * static_cast<double>(id % 10), 0.5});
    }
    void on_result(ht::TrialId, const ht::Outcome& o) override {
        std::lock_guard lk(*mu_);
        told_->push_back(o.losses);
        violations_->push_back(o.violations);
    }
    bool supports_objectives(std::size_t) const override { return true; }

    std::shared_ptr<std::mutex> mu_ = std::make_shared<std::mutex>();
    std::shared_ptr<std::vector<std::vector<double>>> told_ = std::make_shared<std::vector<std::vector<double>>>();
    std::shared_ptr<std::vector<std::vector<double>>> violations_ = std::make_shared<std::vector<std::vector<double>>>();

private:
    ht::SearchSpace space_;
};

}  // namespace

TEST_CASE("the sampler is told every objective as a loss, each in its own direction") {
    Listening sampler;
    auto told = sampler.told_;
    auto o = mo_options(6);
    o.max_parallel_jobs = 1;
    auto result = ht::Tuner(mo_space(), ht::RunToCompletion(1, sampler), o).fit(trade_off);
    REQUIRE(told->size() == 6);
    for (std::size_t i = 0; i < 6; ++i) {
        const auto& t = result.trials()[i];
        CHECK((*told)[i] == std::vector<double>{-t.values[0], t.values[1]});
        CHECK((*told)[i] == result.losses(t));
    }
}

TEST_CASE("the sampler is told each constraint's violation, <= 0 when met, live and when the journal is replayed") {
    auto o = mo_options(6, mo_journal("violations"));
    o.max_parallel_jobs = 1;
    o.constraints = {ht::Constraint::at_most("seconds_per_epoch", 30.0), ht::Constraint::at_least("accuracy", 0.5)};
    Listening live;
    auto result = ht::Tuner(mo_space(), ht::RunToCompletion(1, live), o).fit(trade_off);
    REQUIRE(live.violations_->size() == 6);
    for (std::size_t i = 0; i < 6; ++i) {
        const auto& t = result.trials()[i];
        const double seconds = *result.metric(t, "seconds_per_epoch"), accuracy = *result.metric(t, "accuracy");
        CHECK((*live.violations_)[i] == std::vector<double>{seconds - 30.0, 0.5 - accuracy});
        CHECK(t.feasible == (seconds <= 30.0 && accuracy >= 0.5));
    }
    // Resumed with a larger budget: the replayed trials reach the new sampler with the same values.
    Listening replayed;
    o.max_jobs = 8;
    auto more = ht::Tuner(mo_space(), ht::RunToCompletion(1, replayed), o).fit(trade_off);
    REQUIRE(more.trials().size() == 8);
    REQUIRE(replayed.violations_->size() == 8);
    CHECK(std::equal(live.violations_->begin(), live.violations_->end(), replayed.violations_->begin()));
    // Without constraints, nothing.
    Listening plain;
    auto unconstrained = mo_options(3);
    unconstrained.constraints.clear();
    (void)ht::Tuner(mo_space(), ht::RunToCompletion(1, plain), unconstrained).fit(trade_off);
    for (const auto& v : *plain.violations_) CHECK(v.empty());
    fs::remove(o.journal);
}

// ---- multi-objective early stopping (MO-ASHA) through the tuner --------------------------------

namespace {

// trade_off() learnt over `epochs` epochs: accuracy rises towards its final value, cost grows with
// the epochs run. Every epoch reports every metric; a stopped trial returns its metrics so far.
ht::Metrics train_reporting(const ht::Config& c, ht::Trial& trial) {
    const ht::Metrics final_metrics = trade_off(c);
    ht::Metrics now;
    for (ht::Resource epoch = trial.resumed_from() + 1; epoch <= trial.budget(); ++epoch) {
        const double progress = static_cast<double>(epoch) / 9.0;
        now = ht::Metrics{{"accuracy", *final_metrics.get("accuracy") * (1.0 - 0.5 / static_cast<double>(epoch))},
                          {"cost", *final_metrics.get("cost") * progress},
                          {"seconds_per_epoch", *final_metrics.get("seconds_per_epoch")}};
        trial.report(epoch, now);
        if (trial.should_stop()) break;
    }
    return now;
}

}  // namespace

TEST_CASE("MO-ASHA through the tuner: rungs rank every objective, feasible first, and the journal replays it") {
    auto options = [](std::string journal) {
        auto o = mo_options(40, std::move(journal));
        o.max_parallel_jobs = 1;  // one order of events: the runs below can be compared trial by trial
        return o;
    };
    auto asha = [] {
        return ht::ASHA({.min_resource = 1, .max_resource = 9, .reduction_factor = 3, .type = ht::HalvingType::Stop});
    };
    auto path = mo_journal("mo-asha");
    auto live = ht::Tuner(mo_space(), asha(), options(path)).fit(train_reporting);
    REQUIRE(live.trials().size() == 40);
    std::size_t stopped = 0, pareto_decisions = 0;
    for (const auto& t : live.trials()) {
        if (t.status == ht::TrialStatus::Stopped) ++stopped;
        for (const auto& d : t.decisions)
            if (d.reason.find("by Pareto priority") != std::string::npos) ++pareto_decisions;
    }
    CHECK(stopped >= 20);
    CHECK(pareto_decisions >= 30);
    CHECK_FALSE(live.pareto_front().empty());
    for (const auto& t : live.pareto_front()) CHECK(t.feasible);
    // The journal keeps each report's metrics; load_result gives the live run back.
    std::ifstream in(path);
    std::string journal((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(journal.find("\"event\":\"report\"") != std::string::npos);
    CHECK(occurrences(journal, "\"values\":[") > 40);
    ht::testing::check_same_result(live, ht::load_result(path));

    // Cut by a crash after a Stop decision and before its trial's end: resumed, the trial ends
    // with every metric of its last report, feasible as it was (it ended with none, infeasible).
    std::vector<std::string> lines;
    {
        std::istringstream all(journal);
        for (std::string line; std::getline(all, line);) lines.push_back(line);
    }
    std::size_t cuts = 0;
    for (std::size_t i = 0; i + 1 < lines.size() && cuts < 4; ++i) {
        if (lines[i].find("\"event\":\"decision\"") == std::string::npos ||
            lines[i].find("\"kind\":\"Stop\"") == std::string::npos ||
            lines[i + 1].find("\"event\":\"trial_ended\"") == std::string::npos)
            continue;
        CAPTURE(i);
        ++cuts;
        {
            std::ofstream cut(path, std::ios::trunc);
            for (std::size_t k = 0; k <= i; ++k) cut << lines[k] << '\n';
        }
        auto again = ht::Tuner(mo_space(), asha(), options(path)).fit(train_reporting);
        REQUIRE(again.trials().size() == live.trials().size());
        for (std::size_t k = 0; k < live.trials().size(); ++k) {
            CAPTURE(k);
            CHECK(again.trials()[k].values == live.trials()[k].values);
            CHECK(again.trials()[k].feasible == live.trials()[k].feasible);
            CHECK(again.trials()[k].status == live.trials()[k].status);
        }
    }
    CHECK(cuts == 4);
    fs::remove(path);

    // Stopped after 15 trials and resumed: the decisions of an uninterrupted run.
    path = mo_journal("mo-asha-resume");
    {
        auto o = options(path);
        std::atomic<ht::TuningJob*> self{nullptr};
        o.on_trial_end = [&](const ht::TrialRecord& r) {
            if (r.id == 14) self.load()->stop();
        };
        ht::Tuner first(mo_space(), asha(), o);
        auto job = first.start([&](const ht::Config& c, ht::Trial& t) {
            while (!self.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            return train_reporting(c, t);
        });
        self = &job;
        CHECK(job.wait().trials().size() < 40);
    }
    auto resumed = ht::Tuner(mo_space(), asha(), options(path)).fit(train_reporting);
    REQUIRE(resumed.trials().size() == live.trials().size());
    for (std::size_t i = 0; i < live.trials().size(); ++i) {
        CAPTURE(i);
        CHECK(resumed.trials()[i].status == live.trials()[i].status);
        CHECK(resumed.trials()[i].values == live.trials()[i].values);
        CHECK(resumed.trials()[i].decisions.size() == live.trials()[i].decisions.size());
    }
    ht::testing::check_same_result(resumed, ht::load_result(path));
    fs::remove(path);
}

TEST_CASE("MO-ASHA: a report that lacks an objective fails that trial, naming what is missing, and is not journaled") {
    auto path = mo_journal("mo-asha-bad-report");
    auto o = mo_options(6, path);
    o.max_parallel_jobs = 1;
    auto result = ht::Tuner(mo_space(), ht::ASHA({.max_resource = 9}), o).fit([](const ht::Config& c, ht::Trial& t) {
        if (t.id() == 1) t.report(1, 0.5);  // one value where two objectives are ranked
        if (t.id() == 2) t.report(1, ht::Metrics{{"accuracy", 0.5}});  // cost is missing
        if (t.id() == 3) t.report(1, ht::Metrics{{"accuracy", 0.5}, {"Cost", 2.0}});  // misspelt
        return train_reporting(c, t);
    });
    REQUIRE(result.trials().size() == 6);
    CHECK(result.trials()[3].status == ht::TrialStatus::Failed);
    CHECK(result.trials()[3].failure_reason.find("trial 3: the report at step 1 has no value for objective 'cost' (it "
                                                 "also has Cost, which the run does not have)") != std::string::npos);
    CHECK(result.trials()[0].status != ht::TrialStatus::Failed);
    CHECK(result.trials()[1].status == ht::TrialStatus::Failed);
    CHECK(result.trials()[1].failure_reason.find("ASHA ranks trials on 2 objectives, but trial 1 reported a single value at "
                                          "step 1: report every objective") != std::string::npos);
    CHECK(result.trials()[2].status == ht::TrialStatus::Failed);
    CHECK(result.trials()[2].failure_reason.find("trial 2: the report at step 1 has no value for objective 'cost'") !=
          std::string::npos);
    for (std::size_t i = 4; i < 6; ++i) CHECK(result.trials()[i].status != ht::TrialStatus::Failed);
    CHECK(result.trials()[1].curve.empty());
    CHECK(result.trials()[2].curve.empty());
    ht::testing::check_same_result(result, ht::load_result(path));
    fs::remove(path);
}
