// SPDX-License-Identifier: MIT
// Hyperband (both modes), ASHA and median stopping driven by the real tuner, with parallel workers:
// statuses, checkpoints, decisions on record, reproducibility and stopping mid-bracket.
#include <hypertune/json.hpp>
#include <hypertune/hypertune.hpp>
#include <hypertune/strategies/asha.hpp>
#include <hypertune/strategies/hyperband.hpp>
#include <hypertune/strategies/median_stopping.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <unistd.h>

namespace ht = hypertune;
using namespace std::chrono_literals;

namespace {

ht::SearchSpace curve_space() {
    return ht::SearchSpace{ht::ContinuousParameter("x", 0.0, 1.0), ht::ContinuousParameter("rate", 0.05, 1.0)};
}

// A learning curve that saturates: loss(r) = f(x) + exp(-rate * r).
double final_loss(const ht::Config& c) { return std::abs(c.get<double>("x") - 0.3); }
double loss_at(const ht::Config& c, ht::Resource r) {
    return final_loss(c) + std::exp(-c.get<double>("rate") * static_cast<double>(r));
}

// The same curve with deterministic noise of amplitude `noise` from unit to unit, as a validation
// metric of SGD moves from epoch to epoch.
double noisy_loss_at(const ht::Config& c, ht::Resource r, double noise) {
    if (noise == 0) return loss_at(c, r);
    return loss_at(c, r) + noise * std::sin(7919.0 * c.get<double>("x") + 104.729 * static_cast<double>(r));
}

// Trains from its checkpoint (the last step reached, as text) up to its budget, each unit taking
// `unit_time`, reporting noisy_loss_at(..., noise).
double paced_trainer(const ht::Config& c, ht::Trial& trial, std::chrono::microseconds unit_time, double noise = 0) {
    ht::Resource from = 0;
    if (trial.resumed_from() > 0) {
        REQUIRE(trial.checkpoint().has_value());
        from = std::stoll(*trial.checkpoint());
        CHECK(from == trial.resumed_from());
    }
    double loss = 0.0;
    for (ht::Resource r = from + 1; r <= trial.budget(); ++r) {
        if (unit_time.count() > 0) std::this_thread::sleep_for(unit_time);
        loss = noisy_loss_at(c, r, noise);
        trial.report(r, loss);
        if (trial.should_stop()) break;
        trial.save_checkpoint(std::to_string(r));
    }
    return loss;
}

double checkpointed_trainer(const ht::Config& c, ht::Trial& trial) {
    return paced_trainer(c, trial, std::chrono::microseconds(0));
}

// A journal path of this process in the temporary folder, with no file there yet.
std::string fresh_journal(const char* name) {
    const auto path = (std::filesystem::temp_directory_path() /
                       fmt::format("hypertune-{}-{}.jsonl", name, static_cast<long>(::getpid())))
                          .string();
    std::filesystem::remove(path);
    return path;
}

std::map<ht::TrialId, std::string> decisions_by_trial(const ht::Result& r) {
    std::map<ht::TrialId, std::string> out;
    for (const auto& t : r.trials()) {
        std::string s = fmt::format("{} {} {}", ht::to_string(t.status), t.resource_used, t.objective);
        for (const auto& d : t.decisions) s += fmt::format(" {}@{}", ht::to_string(d.kind), d.resource);
        out[t.id] = s;
    }
    return out;
}

// A trial of a run that paused and promoted trials with checkpointed_trainer: it ended (nothing is
// left Paused at the end), did not fail, and its curve has one point per unit: every run after a
// promotion continued from its checkpoint, no step was trained twice.
void check_ended_and_continued(const ht::TrialRecord& t) {
    CHECK(t.status != ht::TrialStatus::Paused);
    CHECK(t.status != ht::TrialStatus::Failed);
    for (std::size_t i = 1; i < t.curve.size(); ++i) CHECK(t.curve[i].step == t.curve[i - 1].step + 1);
}

}  // namespace

TEST_CASE("synchronous Hyperband through the tuner: pause, promote from checkpoint, no trial left paused") {
    ht::Tuner tuner(curve_space(), ht::Hyperband({.min_resource = 1, .max_resource = 9, .eta = 3,
                                            .mode = ht::HyperbandMode::Synchronous}),
                    {.max_jobs = 21, .max_parallel_jobs = 4, .seed = 5});
    auto result = tuner.fit(checkpointed_trainer);
    // (1, 9, 3): brackets (9,1)(3,3)(1,9) | (5,3)(1,9) | (3,9) hold 9 + 5 + 3 = 17 configurations;
    // the remaining 4 start a new first bracket, truncated.
    CHECK(result.trials().size() == 21);
    std::size_t promoted = 0;
    for (const auto& t : result.trials()) {
        check_ended_and_continued(t);
        CHECK(t.has_objective());
        CHECK(t.curve.back().step == t.resource_used);
        if (t.status == ht::TrialStatus::Completed) CHECK(t.resource_used == 9);
        for (const auto& d : t.decisions)
            if (d.kind == ht::DecisionRecord::Kind::Promote) {
                ++promoted;
                CHECK(t.segments.size() >= 2);  // ran again after the promotion
            }
    }
    CHECK(promoted > 0);
    CHECK(result.count(ht::TrialStatus::Completed) >= 3);
    // the best completed trial is the best loss at full resource
    const auto& best = result.best();
    CHECK(best.status == ht::TrialStatus::Completed);
    CHECK(best.objective == doctest::Approx(loss_at(best.config, 9)));
}

TEST_CASE("synchronous Hyperband without checkpoints: promoted trials start over") {
    std::atomic<int> restarts{0};
    ht::Tuner tuner(curve_space(), ht::Hyperband({.min_resource = 1, .max_resource = 9, .eta = 3,
                                            .mode = ht::HyperbandMode::Synchronous}),
                    {.max_jobs = 9, .max_parallel_jobs = 3, .seed = 1});
    auto result = tuner.fit([&](const ht::Config& c, ht::Trial& trial) {
        CHECK(trial.resumed_from() == 0);
        CHECK(!trial.checkpoint().has_value());
        if (trial.budget() > 1) ++restarts;
        double loss = 0.0;
        for (ht::Resource r = 1; r <= trial.budget(); ++r) trial.report(r, loss = loss_at(c, r));
        return loss;
    });
    CHECK(restarts.load() == 3 + 1);  // 3 promoted to resource 3, then 1 to resource 9
    for (const auto& t : result.trials()) {
        for (std::size_t i = 1; i < t.curve.size(); ++i) CHECK(t.curve[i].step > t.curve[i - 1].step);
        CHECK(t.status != ht::TrialStatus::Failed);
    }
    CHECK(result.count(ht::TrialStatus::Completed) == 1);
}

TEST_CASE("promotion-type ASHA through the tuner: pause at each rung, promote from checkpoint, cheaper than full training") {
    // Without filling idle workers: the units a fill spends follow the trials' measured paces, which
    // a sanitizer's scheduling decides here (the fill has its own test below).
    ht::Tuner tuner(curve_space(),
                    ht::ASHA({.min_resource = 1, .max_resource = 27, .reduction_factor = 3,
                              .type = ht::HalvingType::Promotion, .fill_idle_workers = false}),
                    {.max_jobs = 60, .max_parallel_jobs = 4, .seed = 9});
    auto result = tuner.fit(checkpointed_trainer);
    CHECK(result.setup().strategy == "ASHA-promotion");
    CHECK(result.trials().size() == 60);
    std::size_t promoted = 0;
    for (const auto& t : result.trials()) {
        check_ended_and_continued(t);
        CHECK(t.curve.back().step == t.resource_used);
        CHECK((t.resource_used == 1 || t.resource_used == 3 || t.resource_used == 9 || t.resource_used == 27));
        if (t.status == ht::TrialStatus::Completed) CHECK(t.resource_used == 27);
        for (const auto& d : t.decisions) promoted += d.kind == ht::DecisionRecord::Kind::Promote;
    }
    // 60 trials at rung 1: about 20 promoted to 3, 6 to 9, 2 to 27.
    CHECK(promoted >= 20);
    CHECK(result.count(ht::TrialStatus::Completed) >= 2);
    const auto cost = result.cost();
    CHECK(cost.resource_used < 60 * cost.full_resource / 5);
    CHECK(result.best().status == ht::TrialStatus::Completed);
}

TEST_CASE("min_rung_results through the tuner: promotions from the first rung judged on 9 results or more, and a "
          "resume needs the same rule") {
    const auto path = fresh_journal("min-results");
    auto asha = [](std::size_t min_results) {
        return ht::ASHA({.min_resource = 1, .max_resource = 27, .reduction_factor = 3,
                         .type = ht::HalvingType::Promotion, .fill_idle_workers = false,
                         .min_rung_results = min_results});
    };
    const ht::TunerOptions options{.max_jobs = 60, .max_parallel_jobs = 4, .seed = 9, .journal = path};
    const ht::Result live = ht::Tuner(curve_space(), asha(9), options).fit(checkpointed_trainer);
    CHECK(live.setup().strategy == "ASHA-promotion-min9");
    std::size_t from_first = 0;
    for (const auto& t : live.trials())
        for (const auto& d : t.decisions)
            if (d.kind == ht::DecisionRecord::Kind::Promote && d.resource == 1) {
                ++from_first;
                CHECK(d.peers >= 9);  // without the rule, the first is judged on 3
            }
    CHECK(from_first >= 20);
    CHECK(live.count(ht::TrialStatus::Completed) >= 2);
    // The journal holds the rule: a resume without it is refused, one with it replays every decision.
    CHECK_THROWS_WITH_AS((void)ht::Tuner(curve_space(), asha(0), options).fit(checkpointed_trainer),
                         doctest::Contains("its strategy is ASHA-promotion-min9, this tuner's is ASHA-promotion"),
                         ht::InvalidArgument);
    const ht::Result resumed = ht::Tuner(curve_space(), asha(9), options).fit(checkpointed_trainer);
    CHECK(decisions_by_trial(resumed) == decisions_by_trial(live));
    CHECK(decisions_by_trial(ht::load_result(path)) == decisions_by_trial(live));
    std::filesystem::remove(path);
}

TEST_CASE("noise_tolerance through the tuner: promotions within the measured noise are on record, and a resume "
          "needs the same rule") {
    const auto path = fresh_journal("noise");
    auto hyperband = [](double k) {
        return ht::Hyperband({.min_resource = 1, .max_resource = 27, .eta = 3, .noise_tolerance = k});
    };
    auto noisy = [](const ht::Config& c, ht::Trial& trial) {
        return paced_trainer(c, trial, std::chrono::microseconds(0), 0.02);
    };
    const ht::TunerOptions options{.max_jobs = 60, .max_parallel_jobs = 4, .seed = 11, .journal = path};
    const ht::Result live = ht::Tuner(curve_space(), hyperband(1), options).fit(noisy);
    CHECK(live.setup().strategy == "Hyperband-promotion-fill-noise1-brackets=2");
    std::size_t within = 0;
    for (const auto& t : live.trials())
        for (const auto& d : t.decisions)
            if (d.reason.find("within the noise tolerance") != std::string::npos) {
                ++within;
                CHECK(d.kind == ht::DecisionRecord::Kind::Promote);
                CHECK(d.loss > d.threshold);
            }
    CHECK(within >= 1);
    CHECK(live.count(ht::TrialStatus::Completed) >= 2);
    CHECK_THROWS_WITH_AS((void)ht::Tuner(curve_space(), hyperband(0), options).fit(noisy),
                         doctest::Contains("its strategy is Hyperband-promotion-fill-noise1-brackets=2, this tuner's "
                                           "is Hyperband-promotion-fill-brackets=2"),
                         ht::InvalidArgument);
    const ht::Result resumed = ht::Tuner(curve_space(), hyperband(1), options).fit(noisy);
    CHECK(decisions_by_trial(resumed) == decisions_by_trial(live));
    CHECK(decisions_by_trial(ht::load_result(path)) == decisions_by_trial(live));
    std::filesystem::remove(path);
}

TEST_CASE("filling idle workers through the tuner: a paused trial runs to the end beside the last climb, and "
          "a resume replays it") {
    // Rungs 1 and 3 below max_resource 9; 9 trials: rung 1 promotes 3, rung 3 promotes 1, which then
    // climbs 6 units while the other worker has nothing new to start. A unit takes longer the lower
    // the trial's loss at 3 (10 to 50 ms), so the climber is the slowest of the trials at rung 3:
    // each of the others has 6 units to the end that take less time than the climb still needs, and
    // runs beside it. The scheduler learns each trial's pace from the seconds of its reports; the
    // resume replays its decisions from the journaled times.
    const auto path = fresh_journal("fill");
    const ht::TunerOptions options{.max_jobs = 9, .max_parallel_jobs = 2, .seed = 4, .journal = path};
    auto paced = [](const ht::Config& c, ht::Trial& trial) {
        const double speed = std::min(1.0, loss_at(c, 3));  // the lower, the slower
        return paced_trainer(c, trial, std::chrono::microseconds(10000 + static_cast<long>(40000 * (1 - speed))));
    };
    // The paces are measured on real threads: on a loaded machine the sleeps overshoot, and the
    // trials at rung 3 whose losses are close to the climber's may measure as slow as it. So up
    // to three runs, each with a new journal, until one fills; a scheduler that never fills fails
    // all three.
    ht::Result live;
    std::size_t filled = 0;
    for (int attempt = 0; attempt < 3 && filled == 0; ++attempt) {
        std::filesystem::remove(path);
        live = ht::Tuner(curve_space(), ht::ASHA({.min_resource = 1, .max_resource = 9}), options).fit(paced);
        CHECK(live.setup().strategy == "ASHA-promotion-fill");
        CHECK(live.trials().size() == 9);  // no trial beyond max_jobs
        for (const auto& t : live.trials())
            for (const auto& d : t.decisions)
                if (d.kind == ht::DecisionRecord::Kind::Promote &&
                    d.reason.find("units to the end") != std::string::npos) {
                    ++filled;
                    CHECK(d.reason.find("s at its pace") != std::string::npos);
                    CHECK(t.status == ht::TrialStatus::Completed);
                    CHECK(t.resource_used == 9);
                }
    }
    CHECK(filled >= 1);
    CHECK(live.count(ht::TrialStatus::Completed) == 1 + filled);
    // Resuming the finished journal replays every decision through a new scheduler (a fill that the
    // replay did not make again would be refused), then has nothing left to run.
    const ht::Result resumed =
        ht::Tuner(curve_space(), ht::ASHA({.min_resource = 1, .max_resource = 9}), options).fit(paced);
    CHECK(decisions_by_trial(resumed) == decisions_by_trial(live));
    CHECK(decisions_by_trial(ht::load_result(path)) == decisions_by_trial(live));
    std::filesystem::remove(path);
}

TEST_CASE("stop-type ASHA and Hyperband without free passes through the tuner: held trials resume from checkpoint") {
    for (bool hyperband : {false, true}) {
        CAPTURE(hyperband);
        ht::AnyStrategy strategy = hyperband ? ht::AnyStrategy(ht::Hyperband({.min_resource = 1,
                                                                              .max_resource = 27,
                                                                              .eta = 3,
                                                                              .type = ht::HalvingType::Stop,
                                                                              .wait_for_peers = true}))
                                             : ht::AnyStrategy(ht::ASHA({.min_resource = 1,
                                                                         .max_resource = 27,
                                                                         .reduction_factor = 3,
                                                                         .type = ht::HalvingType::Stop,
                                                                         .wait_for_peers = true}));
        ht::Tuner tuner(curve_space(), std::move(strategy), {.max_jobs = 40, .max_parallel_jobs = 4, .seed = 3});
        auto result = tuner.fit(checkpointed_trainer);
        CHECK(result.trials().size() == 40);
        std::size_t held = 0;
        for (const auto& t : result.trials()) {
            check_ended_and_continued(t);
            for (const auto& d : t.decisions) {
                held += d.kind == ht::DecisionRecord::Kind::Pause;
                // Nothing goes past a rung on a free pass: every continuation was judged among at
                // least eta values, or was the best of a rung no more trials would reach.
                if (d.kind == ht::DecisionRecord::Kind::Promote)
                    CHECK((d.peers >= 3 || d.reason.find("no more will") != std::string::npos));
            }
        }
        CHECK(held > 0);
        CHECK(result.count(ht::TrialStatus::Completed) >= 1);
        CHECK(result.best().status == ht::TrialStatus::Completed);
    }
}

TEST_CASE("stop-type ASHA and Hyperband without free passes: a trainer that ignores its stops runs every trial, each Completed") {
    for (bool hyperband : {false, true}) {
        CAPTURE(hyperband);
        ht::AnyStrategy strategy =
            hyperband ? ht::AnyStrategy(ht::Hyperband(
                            {.max_resource = 9, .type = ht::HalvingType::Stop, .wait_for_peers = true}))
                      : ht::AnyStrategy(ht::ASHA({.max_resource = 9, .type = ht::HalvingType::Stop, .wait_for_peers = true}));
        auto result = ht::Tuner(curve_space(), std::move(strategy), {.max_jobs = 10, .seed = 3})
                          .fit([](const ht::Config& c, ht::Trial& trial) {
                              double v = 0.0;
                              for (ht::Resource e = trial.resumed_from() + 1; e <= trial.budget(); ++e) {
                                  v = c.get<double>("x") + 1.0 / static_cast<double>(e);
                                  trial.report(e, v);  // should_stop() never looked at
                              }
                              return v;
                          });
        // Held at a rung, it trained to the end anyway: nothing is left to resume, and the run goes on.
        CHECK(result.stop_reason() == "max_jobs reached");
        CHECK(result.trials().size() == 10);
        CHECK(result.count(ht::TrialStatus::Completed) == 10);
        for (const auto& t : result.trials()) CHECK(t.resource_used == 9);
        bool warned = false;
        for (const auto& w : result.setup().warnings) warned = warned || w.find("told it to stop") != std::string::npos;
        CHECK(warned);
    }
}

TEST_CASE("asynchronous Hyperband and ASHA stop trials early and cost less than full training") {
    for (int which = 0; which < 2; ++which) {
        auto strategy = which == 0 ? ht::AnyStrategy(ht::Hyperband({.min_resource = 1, .max_resource = 27}))
                                   : ht::AnyStrategy(ht::ASHA({.min_resource = 1, .max_resource = 27}));
        ht::Tuner tuner(curve_space(), std::move(strategy), {.max_jobs = 60, .max_parallel_jobs = 4, .seed = 3});
        auto result = tuner.fit([](const ht::Config& c, ht::Trial& trial) {
            double loss = 0.0;
            for (ht::Resource r = 1; r <= trial.budget(); ++r) {
                std::this_thread::sleep_for(50us);
                trial.report(r, loss = loss_at(c, r));
                if (trial.should_stop()) break;
            }
            return loss;
        });
        CAPTURE(which);
        CHECK(result.trials().size() == 60);
        CHECK(result.count(ht::TrialStatus::Stopped) > 20);
        CHECK(result.count(ht::TrialStatus::Completed) >= 1);
        for (const auto& t : result.trials()) {
            if (t.status == ht::TrialStatus::Stopped) {
                REQUIRE(!t.decisions.empty());
                const auto& d = t.decisions.back();
                CHECK(d.kind == ht::DecisionRecord::Kind::Stop);
                CHECK(d.resource == t.resource_used);
                CHECK(d.loss == doctest::Approx(loss_at(t.config, d.resource)));
                CHECK(d.loss > d.threshold);
                CHECK(d.peers >= 1);
            }
            if (t.status == ht::TrialStatus::Completed) CHECK(t.resource_used == 27);
        }
        auto cost = result.cost();
        CHECK(cost.full_resource == 27);
        CHECK(cost.resource_used < 60 * 27 / 2);
        CHECK(result.to_json()["trials"].size() == 60);
    }
}

TEST_CASE("with one worker a multi-fidelity run is the same every time, with four the configurations are") {
    auto run = [](std::size_t parallel, ht::HyperbandMode mode) {
        ht::Tuner tuner(curve_space(), ht::Hyperband({.min_resource = 1, .max_resource = 9, .mode = mode}),
                        {.max_jobs = 30, .max_parallel_jobs = parallel, .seed = 17});
        return tuner.fit(checkpointed_trainer);
    };
    for (auto mode : {ht::HyperbandMode::Asynchronous, ht::HyperbandMode::Synchronous}) {
        auto a = run(1, mode);
        auto b = run(1, mode);
        CHECK(decisions_by_trial(a) == decisions_by_trial(b));
        auto c = run(4, mode);
        std::map<ht::TrialId, std::string> configs_a, configs_c;
        for (const auto& t : a.trials()) configs_a[t.id] = fmt::format("{}", t.config);
        for (const auto& t : c.trials()) configs_c[t.id] = fmt::format("{}", t.config);
        CHECK(configs_a == configs_c);
    }
}

TEST_CASE("median stopping wraps random search inside the tuner") {
    ht::Tuner tuner(curve_space(), ht::MedianStopping(ht::RandomSearch({.max_resource = 20})),
                    {.max_jobs = 40, .max_parallel_jobs = 2, .seed = 2});
    auto result = tuner.fit(checkpointed_trainer);
    CHECK(result.setup().strategy == "MedianStopping(RandomSearch)");
    CHECK(result.count(ht::TrialStatus::Stopped) > 5);
    for (const auto& t : result.trials())
        if (t.status == ht::TrialStatus::Stopped) {
            REQUIRE(t.decisions.size() == 1);
            CHECK(t.decisions[0].loss > t.decisions[0].threshold);  // worse than the median
        }
}

TEST_CASE("stopping the tuner mid-bracket loses no completed trial") {
    for (auto mode : {ht::HyperbandMode::Asynchronous, ht::HyperbandMode::Synchronous}) {
        ht::Tuner tuner(curve_space(), ht::Hyperband({.min_resource = 1, .max_resource = 27, .mode = mode}),
                        {.max_jobs = 1000, .max_parallel_jobs = 4, .seed = 8});
        std::atomic<int> completed_runs{0};
        auto job = tuner.start([&](const ht::Config& c, ht::Trial& trial) {
            double loss = 0.0;
            for (ht::Resource r = trial.resumed_from() + 1; r <= trial.budget(); ++r) {
                std::this_thread::sleep_for(100us);
                trial.report(r, loss = loss_at(c, r));
                if (trial.should_stop()) return loss;
            }
            if (trial.budget() == 27) ++completed_runs;
            return loss;
        });
        while (completed_runs.load() < 2) std::this_thread::sleep_for(1ms);
        job.stop();
        const auto& result = job.wait();
        CHECK(result.stop_reason() == "stopped by user");
        CHECK(result.count(ht::TrialStatus::Completed) >= 2);
        CHECK(result.count(ht::TrialStatus::Running) == 0);
        CHECK(result.count(ht::TrialStatus::Paused) == 0);
        for (const auto& t : result.trials()) CHECK(t.has_objective());
    }
}

TEST_CASE("the promotion type warns once when promoted trials train again from the start, and not when they continue") {
    auto started_over = [](const ht::Result& r) {
        return std::count_if(r.setup().warnings.begin(), r.setup().warnings.end(), [](const std::string& w) {
            return w.find("saved no checkpoint, so it trained again from the start") != std::string::npos &&
                   w.find(".type = ht::HalvingType::Stop") != std::string::npos;
        });
    };
    const ht::TunerOptions options{.max_jobs = 30, .max_parallel_jobs = 2, .seed = 5};
    // ASHA's default type pauses trials at rungs 1, 3 and 9 and promotes the best.
    const auto plain = ht::Tuner(curve_space(), ht::ASHA({.min_resource = 1, .max_resource = 27}), options)
                           .fit([](const ht::Config& c, ht::Trial& trial) {
                               double loss = 0.0;
                               for (ht::Resource r = 1; r <= trial.budget() && !trial.should_stop(); ++r)
                                   trial.report(r, loss = loss_at(c, r));
                               return loss;
                           });
    REQUIRE(std::any_of(plain.trials().begin(), plain.trials().end(),
                        [](const ht::TrialRecord& t) { return t.decisions.size() > 1; }));  // some were promoted
    CHECK(started_over(plain) == 1);
    const auto kept =
        ht::Tuner(curve_space(), ht::ASHA({.min_resource = 1, .max_resource = 27}), options).fit(checkpointed_trainer);
    CHECK(started_over(kept) == 0);
    for (const auto& t : kept.trials()) check_ended_and_continued(t);
}

TEST_CASE("a promoted trial that trains again from unit 1 tells its scheduler so, live and when its journal is replayed") {
    // ASHA as it is, recording which runs' ends say that they started over (Outcome::started_over).
    class Recording : public ht::ASHA {
    public:
        explicit Recording(std::vector<ht::TrialId>* started_over)
            : ASHA({.min_resource = 1, .max_resource = 9, .reduction_factor = 3}), started_over_(started_over) {}

    protected:
        void on_tell(ht::TrialId id, const ht::Outcome& outcome) override {
            if (outcome.started_over) started_over_->push_back(id);
            ASHA::on_tell(id, outcome);
        }

    private:
        std::vector<ht::TrialId>* started_over_;
    };
    auto no_checkpoint = [](const ht::Config& c, ht::Trial& trial) {
        double loss = 0.0;
        for (ht::Resource r = 1; r <= trial.budget() && !trial.should_stop(); ++r) trial.report(r, loss = loss_at(c, r));
        return loss;
    };
    for (bool keeps_checkpoints : {false, true}) {
        CAPTURE(keeps_checkpoints);
        const auto path = fresh_journal("started-over");
        const ht::TunerOptions options{.max_jobs = 12, .max_parallel_jobs = 1, .seed = 4, .journal = path};
        std::vector<ht::TrialId> live;
        const auto result = keeps_checkpoints
                                ? ht::Tuner(curve_space(), Recording(&live), options).fit(checkpointed_trainer)
                                : ht::Tuner(curve_space(), Recording(&live), options).fit(no_checkpoint);
        std::size_t promoted_runs = 0;  // runs of a trial after its first, each a promotion
        for (const auto& t : result.trials())
            for (const auto& d : t.decisions) promoted_runs += d.kind == ht::DecisionRecord::Kind::Promote;
        REQUIRE(promoted_runs > 0);
        CHECK(live.size() == (keeps_checkpoints ? 0 : promoted_runs));
        std::size_t journaled = 0;
        std::ifstream in(path);
        for (std::string line; std::getline(in, line);) journaled += line.find("\"started_over\":true") != std::string::npos;
        CHECK(journaled == live.size());
        // The same run again finds its journal finished: the replay tells the scheduler the same.
        std::vector<ht::TrialId> replayed;
        (void)ht::Tuner(curve_space(), Recording(&replayed), options).fit(no_checkpoint);
        CHECK(replayed == live);
        std::filesystem::remove(path);
    }
}

TEST_CASE("a trainer that reports nothing gets a warning that explains why Hyperband needs reports") {
    ht::Tuner tuner(curve_space(), ht::Hyperband({.min_resource = 1, .max_resource = 9}), {.max_jobs = 5});
    auto result = tuner.fit([](const ht::Config& c) { return final_loss(c); });
    REQUIRE(result.setup().warnings.size() == 1);
    CHECK(result.setup().warnings[0].ends_with(
        " reported no intermediate values: the objective takes no ht::Trial&, so it cannot see its budget or "
        "report along the way, and each trial counts as trained to max_resource = 9; to let "
        "Hyperband-promotion-fill-brackets=2 stop poor trials early, take (const ht::Config&, ht::Trial&) and call "
        "trial.report(step, value) after each resource unit (epoch, round...)"));
    // A trainer that takes its Trial and reports nothing is told to report.
    const auto silent = ht::Tuner(curve_space(), ht::Hyperband({.min_resource = 1, .max_resource = 9}), {.max_jobs = 5})
                            .fit([](const ht::Config& c, ht::Trial&) { return final_loss(c); });
    REQUIRE(!silent.setup().warnings.empty());
    CHECK(silent.setup().warnings[0].find("reported no intermediate values: Hyperband-promotion-fill-brackets=2 can "
                                          "only judge a trial from the values it reports along the way; call "
                                          "trial.report(step, value)") != std::string::npos);
    CHECK(result.summary().find("warning: trial") != std::string::npos);
    // It cannot see its budget, so it trains in full: the promotion type (the default) neither
    // pauses it at a rung nor runs it again.
    CHECK(result.count(ht::TrialStatus::Completed) == 5);
    for (const auto& t : result.trials()) CHECK(t.resource_used == 9);
    // Random search runs every trial to its budget: nothing judges reports, so no advice to report.
    for (const bool takes_trial : {false, true}) {
        ht::Tuner random(curve_space(), ht::RandomSearch({.max_resource = 9}), {.max_jobs = 3});
        const auto r = takes_trial ? random.fit([](const ht::Config& c, ht::Trial&) { return final_loss(c); })
                                   : random.fit([](const ht::Config& c) { return final_loss(c); });
        CHECK(r.setup().warnings.empty());
    }
}

TEST_CASE("synchronous Hyperband calls an objective that cannot see its budget once per trial") {
    // It trains in full on its first call; promoting it would only train it again.
    std::atomic<int> calls{0};
    ht::Tuner tuner(curve_space(),
                    ht::Hyperband({.min_resource = 1, .max_resource = 9, .mode = ht::HyperbandMode::Synchronous}),
                    {.max_jobs = 17, .max_parallel_jobs = 2, .seed = 6});
    auto result = tuner.fit([&](const ht::Config& c) {
        ++calls;
        return final_loss(c);
    });
    CHECK(calls.load() == 17);
    CHECK(result.count(ht::TrialStatus::Completed) == 17);
    double best = std::numeric_limits<double>::infinity();
    for (const auto& t : result.trials()) {
        CHECK(t.resource_used == 9);
        CHECK(t.decisions.empty());  // neither paused nor promoted nor stopped
        best = std::min(best, final_loss(t.config));
    }
    CHECK(result.best().objective == best);
}

TEST_CASE("max_trial_seconds limits each run of a promoted trial, not its total") {
    // 10 ms per unit against a limit of 0.1 s. ASHA's runs are 1, 2, 6 and 18 units long; the last
    // one, from 9 to 27, is cut after about 10 units. A limit on the total would cut it by step 10.
    ht::TunerOptions options{.max_jobs = 27, .max_parallel_jobs = 2, .seed = 2, .max_trial_seconds = 0.1};
    auto result = ht::Tuner(curve_space(), ht::ASHA({.min_resource = 1, .max_resource = 27}), options)
                      .fit([](const ht::Config& c, ht::Trial& trial) {
                          ht::Resource from = trial.checkpoint() ? std::stoll(*trial.checkpoint()) : 0;
                          double loss = 0.0;
                          for (ht::Resource r = from + 1; r <= trial.budget(); ++r) {
                              std::this_thread::sleep_for(std::chrono::milliseconds(10));
                              trial.report(r, loss = loss_at(c, r));
                              if (trial.should_stop()) break;
                              trial.save_checkpoint(std::to_string(r));
                          }
                          return loss;
                      });
    std::size_t cut = 0;
    for (const auto& t : result.trials()) {
        CAPTURE(t.id);
        CHECK(t.status != ht::TrialStatus::Failed);
        if (t.resource_used <= 9) continue;  // runs of at most 6 units fit in the limit
        // Promoted to 27: stopped by the limit after more than 10 units in all.
        CHECK(t.status == ht::TrialStatus::Stopped);
        CHECK(t.resource_used > 11);
        CHECK(t.resource_used < 27);
        ++cut;
    }
    CHECK(cut >= 1);
}

TEST_CASE("a trial that throws mid-rung or returns NaN is Failed and the brackets go on") {
    ht::Tuner tuner(curve_space(), ht::Hyperband({.min_resource = 1, .max_resource = 9,
                                            .mode = ht::HyperbandMode::Synchronous}),
                    {.max_jobs = 17, .max_parallel_jobs = 2, .seed = 4});
    auto result = tuner.fit([](const ht::Config& c, ht::Trial& trial) -> double {
        for (ht::Resource r = 1; r <= trial.budget(); ++r) {
            if (trial.id() == 2 && r == 2) throw std::runtime_error("worker lost");
            trial.report(r, loss_at(c, r));
        }
        return trial.id() == 5 ? std::nan("") : loss_at(c, trial.budget());
    });
    std::map<ht::TrialId, const ht::TrialRecord*> by_id;
    for (const auto& t : result.trials()) by_id[t.id] = &t;
    CHECK(result.trials().size() == 17);
    CHECK(by_id.at(5)->status == ht::TrialStatus::Failed);
    CHECK(by_id.at(5)->failure_reason == "the objective returned nan");
    CHECK(result.count(ht::TrialStatus::Completed) >= 2);
    if (by_id.at(2)->status == ht::TrialStatus::Failed) CHECK(by_id.at(2)->failure_reason == "the objective threw: worker lost");
}

TEST_CASE("a small budget, or a sampler that runs out, still trains a trial in full: a ladder's top rung goes on") {
    // The promotion type pauses a trial at a rung until it ranks in the top 1/eta there. With 2
    // trials, or a grid of 5 configurations, or the Gaussian-process sampler on a space of 9, no
    // rung near the top ever held eta results: every trial ended paused, best() was judged on part
    // of its training (a third of it), and the run only warned. Once nothing runs and nothing new
    // may start, the best at a ladder's highest rung that promoted none goes on, as a truncated
    // synchronous bracket keeps one.
    auto trainer = [](const ht::Config& c, ht::Trial& trial) {
        double loss = 0.0;
        for (ht::Resource r = trial.resumed_from() + 1; r <= trial.budget() && !trial.should_stop(); ++r)
            trial.report(r, loss = loss_at(c, r));
        return loss;
    };
    auto trained_in_full_at_the_end = [](const ht::Result& r, ht::Resource max_resource) {
        CHECK(r.best().status == ht::TrialStatus::Completed);
        CHECK(r.best().resource_used == max_resource);
        for (const auto& w : r.setup().warnings) CHECK_FALSE(w.starts_with("no trial trained"));
        bool at_end = false;
        for (const auto& t : r.trials())
            for (const auto& d : t.decisions)
                at_end = at_end || (d.kind == ht::DecisionRecord::Kind::Promote &&
                                    d.reason.starts_with("nothing runs and no new trial may start: the best of "));
        CHECK(at_end);
    };
    const auto few = ht::Tuner(curve_space(), ht::ASHA({.min_resource = 1, .max_resource = 9}),
                               {.max_jobs = 2, .max_parallel_jobs = 1, .progress = ht::ProgressBar::Never})
                         .fit(trainer);
    trained_in_full_at_the_end(few, 9);
    // The better of the two: the one trained in full is the one that ranked first at resource 1.
    const auto& first = few.trials()[0];
    const auto& second = few.trials()[1];
    CHECK(few.best().id == (loss_at(first.config, 1) <= loss_at(second.config, 1) ? first.id : second.id));

    // A grid that ran out, with two workers: the best of 5 (k = 0) trains to 9.
    const auto grid = ht::Tuner(ht::SearchSpace{ht::IntegerParameter("k", 0, 4)},
                                ht::ASHA({.min_resource = 1, .max_resource = 9}, ht::GridSampler()),
                                {.max_jobs = 1000, .max_parallel_jobs = 2, .progress = ht::ProgressBar::Never})
                          .fit([](const ht::Config& c, ht::Trial& trial) {
                              double loss = 0.0;
                              for (ht::Resource r = trial.resumed_from() + 1; r <= trial.budget() && !trial.should_stop(); ++r)
                                  trial.report(r, loss = c.get<int>("k") + 1.0 / static_cast<double>(r));
                              return loss;
                          });
    REQUIRE(grid.stop_reason() == "strategy finished");
    trained_in_full_at_the_end(grid, 9);
    CHECK(grid.best().config.get<int>("k") == 0);

    // Asynchronous Hyperband's two ladders with the Gaussian-process sampler on 9 configurations.
    const ht::SearchSpace nine{ht::IntegerParameter("a", 1, 3), ht::CategoricalParameter("b", {"u", "v", "w"})};
    const auto gp = ht::Tuner(nine, ht::Hyperband({.max_resource = 27}, ht::GPSampler{}),
                              {.max_jobs = 30, .max_parallel_jobs = 1, .progress = ht::ProgressBar::Never})
                        .fit([](const ht::Config& c, ht::Trial& trial) {
                            const double base = std::abs(c.get<int>("a") - 2) + (c.get<std::string>("b") == "v" ? 0.0 : 1.0);
                            double loss = 0.0;
                            for (ht::Resource r = trial.resumed_from() + 1; r <= trial.budget() && !trial.should_stop(); ++r)
                                trial.report(r, loss = base + 1.0 / static_cast<double>(r));
                            return loss;
                        });
    REQUIRE(gp.stop_reason() == "strategy finished");
    trained_in_full_at_the_end(gp, 27);
    CHECK(gp.best().config.get<int>("a") == 2);
    CHECK(gp.best().config.get<std::string>("b") == "v");
}

TEST_CASE("a scheduler that leaves every trial paused short of max_resource: the run says best() is judged on partial training") {
    // A scheduler of the user's own that pauses each trial at 1 unit and never promotes one.
    class PauseAtOne : public ht::Scheduler {
    public:
        std::string name() const override { return "PauseAtOne"; }
        std::optional<ht::Resource> max_resource() const override { return 9; }

    protected:
        ht::Suggestion next(const ht::TrialBudget& budget) override { return start_new(budget, 1); }
        void on_tell(ht::TrialId id, const ht::Outcome& outcome) override {
            decide({id, ht::DecisionRecord::Kind::Pause, -1, 0, 1, outcome.loss,
                    std::numeric_limits<double>::quiet_NaN(), 1, "for ever"});
        }
    };
    auto trainer = [](const ht::Config& c, ht::Trial& trial) {
        double loss = 0.0;
        for (ht::Resource r = trial.resumed_from() + 1; r <= trial.budget() && !trial.should_stop(); ++r)
            trial.report(r, loss = loss_at(c, r));
        return loss;
    };
    const auto few = ht::Tuner(curve_space(), PauseAtOne{},
                               {.max_jobs = 2, .max_parallel_jobs = 1, .progress = ht::ProgressBar::Never})
                         .fit(trainer);
    REQUIRE(few.has_best());
    CHECK(few.best().resource_used == 1);
    REQUIRE(few.setup().warnings.size() == 1);
    CHECK(few.setup().warnings.front() ==
          "no trial trained to max_resource = 9 (the most any did: 1, trial 0), so best() is a trial judged on part of "
          "its training: PauseAtOne goes past a rung only with trials that rank in its top fraction there, and 2 "
          "trials did not get that far; raise max_jobs");
}

TEST_CASE("a trainer that trains a unit past each budget continues from its checkpoint, with or without a journal") {
    // It saves after each unit and stops one unit late: its checkpoint is past the rung. A
    // promotion resumes it from there (in memory the store keeps only the newest checkpoint: one
    // past the rung used to be dropped, the trial trained again from scratch, and the warning said
    // it had saved none).
    for (const bool journaled : {false, true}) {
        CAPTURE(journaled);
        const auto path = journaled ? fresh_journal("overrun") : std::string();
        std::atomic<int> promoted{0}, mismatched{0};
        auto trainer = [&](const ht::Config& c, ht::Trial& trial) {
            ht::Resource state = trial.checkpoint() ? std::stoll(*trial.checkpoint()) : 0;
            if (trial.resumed_from() > 0) {
                ++promoted;
                if (state != trial.resumed_from()) ++mismatched;
            }
            double loss = 0.0;
            for (ht::Resource r = state + 1;; ++r) {
                trial.report(r, loss = loss_at(c, r));
                trial.save_checkpoint(std::to_string(r));
                if (trial.should_stop() || r > trial.budget()) break;  // one unit late
            }
            return loss;
        };
        const auto result = ht::Tuner(curve_space(), ht::ASHA({.min_resource = 1, .max_resource = 9}),
                                      {.max_jobs = 12, .max_parallel_jobs = 2, .progress = ht::ProgressBar::Never,
                                       .journal = path})
                                .fit(trainer);
        CHECK(promoted > 0);
        CHECK(mismatched == 0);
        for (const auto& w : result.setup().warnings) CHECK(w.find("saved no checkpoint") == std::string::npos);
        if (journaled) std::filesystem::remove(path);
    }
}

TEST_CASE("a run extended by a larger max_jobs drops what its earlier end said of the whole run") {
    // The first session of 2 trials ends by promoting its best to max_resource, as nothing new
    // may start; raised to 30 trials, the run replays those promotions and goes on, and ends with
    // the warnings of a run of 30 from the start, live and loaded. One whose trials all failed,
    // resumed with the objective fixed, keeps no "all trials failed".
    const auto trainer = checkpointed_trainer;
    auto run = [&](std::size_t max_jobs, const std::string& journal, auto objective) {
        return ht::Tuner(curve_space(), ht::ASHA({.min_resource = 1, .max_resource = 9}),
                         {.max_jobs = max_jobs, .max_parallel_jobs = 1, .progress = ht::ProgressBar::Never,
                          .journal = journal})
            .fit(objective);
    };
    auto warned = [](const ht::Result& r, std::string_view start) {
        return std::any_of(r.setup().warnings.begin(), r.setup().warnings.end(),
                           [&](const std::string& w) { return w.starts_with(start); });
    };
    const auto path = fresh_journal("extended-warnings");
    const auto small = run(2, path, trainer);  // its one trial trained in full is promoted as the run ends
    CHECK(small.best().resource_used == 9);
    CHECK(small.setup().warnings == ht::load_result(path).setup().warnings);
    const auto extended = run(30, path, trainer);
    CHECK(extended.best().resource_used == 9);
    CHECK_FALSE(warned(extended, "no trial trained"));
    CHECK(extended.setup().warnings == ht::load_result(path).setup().warnings);
    CHECK(extended.setup().warnings == run(30, "", trainer).setup().warnings);
    // Attached again with the same budget, it says again what still holds, once.
    CHECK(run(30, path, trainer).setup().warnings == extended.setup().warnings);

    const auto failing = fresh_journal("extended-failures");
    const auto failed = run(3, failing, [](const ht::Config&, ht::Trial&) -> double { throw std::runtime_error("typo"); });
    CHECK(warned(failed, "all 3 trials failed; the first, trial 0: the objective threw: typo"));
    const auto fixed = run(6, failing, trainer);
    CHECK(fixed.count(ht::TrialStatus::Failed) == 3);
    CHECK_FALSE(warned(fixed, "all "));
    CHECK_FALSE(warned(ht::load_result(failing), "all "));
    std::filesystem::remove(path);
    std::filesystem::remove(failing);
}

TEST_CASE("every built-in scheduler's decisions pass the tuner's checks, whatever the trainer does") {
    // The tuner refuses a decision the trial's state does not allow (test_scheduler.cpp); the
    // built-in schedulers must never meet that refusal. Each scheduler, under trainers that fail,
    // ignore stops, overrun or stop short of their budget, report sparsely, return NaN, throw at
    // their last step or continue from checkpoints; one and three workers; with and without a
    // retry; the run then resumed from its journal with a larger budget.
    const ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0), ht::IntegerParameter("k", 1, 4)};
    const std::vector<std::pair<std::string, std::function<ht::AnyStrategy()>>> schedulers{
        {"ASHA", [] { return ht::AnyStrategy(ht::ASHA({.max_resource = 27})); }},
        {"ASHA stop", [] { return ht::AnyStrategy(ht::ASHA({.max_resource = 27, .type = ht::HalvingType::Stop})); }},
        {"ASHA stop, no wait",
         [] {
             return ht::AnyStrategy(ht::ASHA({.max_resource = 27, .type = ht::HalvingType::Stop, .wait_for_peers = false}));
         }},
        {"Hyperband", [] { return ht::AnyStrategy(ht::Hyperband({.max_resource = 27})); }},
        {"Hyperband stop", [] { return ht::AnyStrategy(ht::Hyperband({.max_resource = 27, .type = ht::HalvingType::Stop})); }},
        {"Hyperband sync",
         [] { return ht::AnyStrategy(ht::Hyperband({.max_resource = 27, .mode = ht::HyperbandMode::Synchronous})); }},
        {"MedianStopping", [] { return ht::AnyStrategy(ht::MedianStopping(ht::RandomSearch({.max_resource = 27}))); }},
        {"MedianStopping, own epochs", [] { return ht::AnyStrategy(ht::MedianStopping(ht::RandomSearch())); }},
        {"MedianStopping(ASHA stop)",
         [] { return ht::AnyStrategy(ht::MedianStopping(ht::ASHA({.max_resource = 27, .type = ht::HalvingType::Stop}))); }},
    };
    const std::vector<std::string> trainers{"well", "ignores stops", "fails", "overruns", "sparse", "short",
                                            "NaN",  "throws last",   "checkpoints"};
    const auto journal = (std::filesystem::temp_directory_path() / fmt::format("hypertune-decisions-{}.jsonl", ::getpid())).string();
    for (const auto& [name, make] : schedulers)
        for (const auto& how : trainers)
            for (const std::size_t workers : {std::size_t{1}, std::size_t{3}})
                for (const int retries : {0, 1}) {
                    CAPTURE(name);
                    CAPTURE(how);
                    CAPTURE(workers);
                    CAPTURE(retries);
                    auto trainer = [&](const ht::Config& c, ht::Trial& t) {
                        const ht::Resource from = how == "checkpoints" && t.checkpoint() ? std::stoll(*t.checkpoint()) : 0;
                        const ht::Resource end = how == "overruns" ? t.budget() + 2
                                                 : how == "short" ? std::max<ht::Resource>(1, t.budget() / 2)
                                                                  : t.budget();
                        double v = 1.0;
                        for (ht::Resource s = from + 1; s <= end; ++s) {
                            if (how == "fails" && t.id() % 5 == 3 && s == 2) throw std::runtime_error("boom");
                            if (how == "throws last" && t.id() % 4 == 1 && s == t.budget()) throw std::runtime_error("late");
                            v = how == "NaN" && t.id() % 6 == 2
                                    ? std::nan("")
                                    : c.get<double>("x") + 1.0 / static_cast<double>(s) + 0.01 * c.get<int>("k");
                            if (how != "sparse" || s % 3 == 0 || s == end) t.report(s, v);
                            if (how == "checkpoints") t.save_checkpoint(std::to_string(s));
                            if (how != "ignores stops" && how != "overruns" && t.should_stop()) break;
                        }
                        return v;
                    };
                    // The journal's sessions only where they are cheap: one worker, no retry.
                    const bool sessions = workers == 1 && retries == 0;
                    std::filesystem::remove(journal);
                    std::filesystem::remove_all(journal + ".checkpoints");
                    ht::TunerOptions o{.max_jobs = sessions ? 15u : 30u, .max_parallel_jobs = workers, .seed = 7,
                                       .max_retries = retries, .progress = ht::ProgressBar::Never,
                                       .journal = sessions ? journal : std::string()};
                    for (const std::size_t budget : sessions ? std::vector<std::size_t>{15, 30} : std::vector<std::size_t>{30}) {
                        o.max_jobs = budget;
                        const ht::Result r = ht::Tuner(space, make(), o).fit(trainer);
                        CHECK_MESSAGE(r.stop_reason().find("strategy '") == std::string::npos, r.stop_reason());
                        CHECK(r.trials().size() <= budget);
                    }
                }
    std::filesystem::remove(journal);
    std::filesystem::remove(journal + ".lock");
    std::filesystem::remove_all(journal + ".checkpoints");
}
