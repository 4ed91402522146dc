// SPDX-License-Identifier: MIT
// TunerOptions::instances_parameter: each trial is billed for the instances its own configuration
// names (billable = elapsed x instances_per_trial x value), the same in the live result, in
// load_result() of the journal and after a resume; a parameter that cannot hold a count is refused.
// Time spent waiting for resources (Trial::resources_acquired) is kept apart and not billed.
#include "../support/same_result.hpp"

#include <hypertune/hypertune.hpp>
#include <hypertune/journal.hpp>
#include <hypertune/json.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

namespace ht = hypertune;

namespace {

ht::SearchSpace workers_space() {
    return ht::SearchSpace{ht::ContinuousParameter("lr", 0.01, 1.0), ht::CategoricalParameter("workers", {"1", "2", "4"})};
}

double sleep_a_little(const ht::Config& c) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return c.get<double>("lr");
}

void check_billed_per_trial(const ht::Result& r, int per_trial) {
    for (const auto& t : r.trials()) {
        const int want = per_trial * std::stoi(t.config.get<std::string>("workers"));
        CHECK(t.instances == want);
        CHECK(t.billable_seconds == doctest::Approx(want * t.elapsed_seconds));
    }
}

}  // namespace

TEST_CASE("instances_parameter: billable time is elapsed x the trial's own instance count") {
    const auto journal =
        (std::filesystem::temp_directory_path() / fmt::format("hypertune-instances-{}.jsonl", ::getpid())).string();
    std::filesystem::remove(journal);
    ht::TunerOptions options{.max_jobs = 12, .max_parallel_jobs = 2, .seed = 4, .instances_per_trial = 3,
                             .instances_parameter = "workers", .journal = journal};
    ht::Result live = ht::Tuner(workers_space(), ht::RandomSearch(), options).fit(sleep_a_little);
    REQUIRE(live.trials().size() == 12);
    check_billed_per_trial(live, 3);
    bool sizes_differ = false;
    for (const auto& t : live.trials()) sizes_differ = sizes_differ || t.instances != live.trials().front().instances;
    CHECK(sizes_differ);
    CHECK(live.setup().instances_parameter == "workers");
    CHECK(live.summary().find("billable (3 x workers)") != std::string::npos);
    double billed = 0.0;
    for (const auto& t : live.trials()) billed += t.billable_seconds;
    CHECK(live.cost().billable_seconds == doctest::Approx(billed));
    CHECK(live.cost().billable_seconds_without_early_stopping == doctest::Approx(billed));

    // The journal keeps the parameter: load_result() bills the same.
    ht::Result loaded = ht::load_result(journal);
    REQUIRE(loaded.trials().size() == live.trials().size());
    for (std::size_t i = 0; i < live.trials().size(); ++i) {
        CHECK(loaded.trials()[i].instances == live.trials()[i].instances);
        CHECK(loaded.trials()[i].billable_seconds == doctest::Approx(live.trials()[i].billable_seconds));
    }

    // A resume with another instances parameter (or none) would bill the rest differently: refused.
    options.instances_parameter = "";
    options.max_jobs = 16;
    CHECK_THROWS_WITH_AS(ht::Tuner(workers_space(), ht::RandomSearch(), options),
                         doctest::Contains("its instances_parameter (under mpi::fit, ranks_parameter) is 'workers', this tuner's "
                                           "is none"),
                         ht::InvalidArgument);
    // So would another number of instances per trial.
    options.instances_parameter = "workers";
    const int per_trial = options.instances_per_trial;
    options.instances_per_trial = per_trial + 7;
    CHECK_THROWS_WITH_AS(ht::Tuner(workers_space(), ht::RandomSearch(), options),
                         doctest::Contains(fmt::format("its instances_per_trial (under mpi::fit, ranks_per_trial) is {}, this "
                                                       "tuner's is {}",
                                                       per_trial,
                                                       per_trial + 7)
                                               .c_str()),
                         ht::InvalidArgument);
    options.instances_per_trial = per_trial;
    // The same one resumes, and the trials of both sessions are billed by their own counts.
    options.instances_parameter = "workers";
    ht::Result resumed = ht::Tuner(workers_space(), ht::RandomSearch(), options).fit(sleep_a_little);
    CHECK(resumed.trials().size() == 16);
    check_billed_per_trial(resumed, 3);
    std::filesystem::remove(journal);
}

TEST_CASE("instances_parameter must name an integer-valued parameter whose values are >= 1") {
    ht::SearchSpace space{ht::ContinuousParameter("lr", 0.01, 1.0), ht::CategoricalParameter("opt", {"sgd", "adam"}),
                          ht::CategoricalParameter("zero", {"0", "2"}), ht::IntegerParameter("n", 1, 8)};
    auto refused = [&](const std::string& name) {
        try {
            ht::Tuner(space, ht::RandomSearch(), {.instances_parameter = name});
        } catch (const ht::InvalidArgument& e) {
            return std::string(e.what());
        }
        return std::string("(accepted)");
    };
    CHECK(refused("workers") ==
          "TunerOptions: instances_parameter: 'workers' is not a parameter of the search space (it has: lr, opt, zero, n)");
    CHECK(refused("lr").find("parameter 'lr' must be integer-valued") != std::string::npos);
    CHECK(refused("opt").find("its value \"sgd\" is not an integer") != std::string::npos);
    CHECK(refused("zero") == "TunerOptions: instances_parameter: parameter 'zero' can take the value 0; every value must be >= 1");
    CHECK(refused("n") == "(accepted)");
    // A static count: an integer, not a real number or a bool.
    for (const auto& [fixed, why] :
         {std::pair{ht::SearchSpace{ht::StaticParameter("workers", 2.0), ht::ContinuousParameter("x", 0.0, 1.0)},
                    std::string("its fixed value 2 is a real number (give it as an integer: StaticParameter(\"workers\", "
                                "2), not 2.0)")},
          std::pair{ht::SearchSpace{ht::StaticParameter("workers", true), ht::ContinuousParameter("x", 0.0, 1.0)},
                    std::string("it holds a bool, not a count")}}) {
        CHECK_THROWS_WITH_AS(ht::Tuner(fixed, ht::RandomSearch(), {.instances_parameter = "workers"}),
                             doctest::Contains(why.c_str()), ht::InvalidArgument);
    }
    CHECK_NOTHROW(ht::Tuner(ht::SearchSpace{ht::StaticParameter("workers", 2), ht::ContinuousParameter("x", 0.0, 1.0)},
                            ht::RandomSearch(),
                            {.instances_parameter = "workers"}));
    // A count that, times instances_per_trial, an int cannot hold is refused here, not met mid-run.
    ht::SearchSpace huge{ht::CategoricalParameter("workers", {"1", "3000000000"}), ht::IntegerParameter("w", 1, 2000000000)};
    CHECK_THROWS_WITH_AS(ht::Tuner(huge, ht::RandomSearch(), {.instances_parameter = "workers"}),
                         "TunerOptions: instances_parameter: parameter 'workers' can take the value 3000000000, more "
                         "than 2147483647 (the most instances a trial can bill, 2147483647 over instances_per_trial 1)",
                         ht::InvalidArgument);
    CHECK_THROWS_WITH_AS(ht::Tuner(huge, ht::RandomSearch(), {.instances_per_trial = 2, .instances_parameter = "w"}),
                         "TunerOptions: instances_parameter: parameter 'w' can take the value 2000000000, more than "
                         "1073741823 (the most instances a trial can bill, 2147483647 over instances_per_trial 2)",
                         ht::InvalidArgument);
}

TEST_CASE("time spent waiting for resources before Trial::resources_acquired() is not billed") {
    ht::SearchSpace space{ht::CategoricalParameter("workers", {"1", "2", "4"}), ht::ContinuousParameter("x", 0.0, 1.0)};
    ht::TunerOptions o;
    o.max_jobs = 6;
    o.max_parallel_jobs = 2;
    o.instances_parameter = "workers";
    o.progress = ht::ProgressBar::Never;
    o.journal = (std::filesystem::temp_directory_path() / fmt::format("hypertune-waited-{}.jsonl", ::getpid())).string();
    std::filesystem::remove(o.journal);
    auto result = ht::Tuner(space, ht::RandomSearch(), o).fit([](const ht::Config& c, ht::Trial& trial) {
        std::this_thread::sleep_for(std::chrono::milliseconds(60));  // queued for its workers
        trial.resources_acquired();
        trial.resources_acquired();  // a second call changes nothing
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // trains
        return c.get<double>("x");
    });
    REQUIRE(result.trials().size() == 6);
    for (const auto& t : result.trials()) {
        // The wait is measured (at least the 60 ms slept before resources_acquired()) and left out of
        // the billed time: the segment is the two together. Not elapsed < waited: elapsed also holds
        // the journal's writes after the call, and an fsync can take longer than 60 ms.
        CHECK(t.waited_seconds >= 0.06);
        CHECK(t.elapsed_seconds >= 0.02);
        CHECK(t.billable_seconds == doctest::Approx(t.elapsed_seconds * t.instances));
        CHECK(t.segments.back().end - t.segments.back().start ==
              doctest::Approx(t.elapsed_seconds + t.waited_seconds));
    }
    ht::testing::check_same_result(result, ht::load_result(o.journal));
    CHECK(result.to_json()["trials"][0].contains("WaitedSeconds"));
    std::filesystem::remove(o.journal);
}
