// SPDX-License-Identifier: MIT
#include <hypertune/hypertune.hpp>
#include <hypertune/report.hpp>
#include <hypertune/strategies/asha.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace ht = hypertune;

namespace {

std::size_t count(const std::string& s, std::string_view what) {
    std::size_t n = 0;
    for (auto i = s.find(what); i != std::string::npos; i = s.find(what, i + what.size())) ++n;
    return n;
}

// Every section is there and every <svg> is closed.
void check_structure(const std::string& html) {
    for (auto id : {"summary", "progress", "curves", "timeline", "parameters", "top", "importance", "table"})
        CHECK(html.find(fmt::format("<section id=\"{}\">", id)) != std::string::npos);
    CHECK(count(html, "<svg") == count(html, "</svg>"));
    CHECK(count(html, "<script>") == 1);
    CHECK(html.find("nan") == std::string::npos);
    CHECK(html.find("inf\"") == std::string::npos);
}

// An ASHA run whose loss falls with the resource; some trials fail.
ht::Result asha_run(const ht::SearchSpace& space, std::size_t jobs, std::size_t parallel = 3) {
    ht::Tuner tuner(space, ht::ASHA({.min_resource = 1, .max_resource = 27}),
                    {.metric = "validation:loss", .max_jobs = jobs, .max_parallel_jobs = parallel, .seed = 5,
                     .instances_per_trial = 2});
    return tuner.fit([](const ht::Config& cfg, ht::Trial& trial) {
        const ht::ParameterSpec& p = cfg.parameter(0);
        double u = p.to_unit(cfg.value(0));
        if (u > 0.97) throw std::runtime_error("diverged <b>loss</b> & \"quoted\"");
        double loss = 0.0;
        for (ht::Resource s = 1; s <= trial.budget(); ++s) {
            loss = std::abs(u - 0.3) + 1.0 / static_cast<double>(s);
            trial.report(s, loss);
            if (trial.should_stop()) break;
        }
        return loss;
    });
}

}  // namespace

TEST_CASE("report: every section of a multi-fidelity run, with rungs and decisions") {
    ht::SearchSpace space{ht::ContinuousParameter("lr", 1e-4, 1.0), ht::IntegerParameter("depth", 1, 10),
                          ht::CategoricalParameter("booster", {"gbtree", "dart"}),
                          ht::StaticParameter("objective", std::string("binary:logistic"))};
    auto result = asha_run(space, 60);
    auto html = ht::render_report(result);
    check_structure(html);
    CHECK(html.find("ASHA") != std::string::npos);
    CHECK(html.find("lr (log scale)") != std::string::npos);
    CHECK(html.find("booster (categories)") != std::string::npos);
    CHECK(html.find("objective (") == std::string::npos);  // static parameters get no plot
    CHECK(html.find(">0.001<") != std::string::npos);        // decade ticks on the log axis
    CHECK(html.find("rung 1") != std::string::npos);
    CHECK(html.find("rung 3") != std::string::npos);
    CHECK(html.find("class=\"rung\"") != std::string::npos);
    CHECK(html.find("worker 2") != std::string::npos);
    CHECK(count(html, "<tr class=") == result.trials().size());
    // Each decision's explanation, as Result::describe words it, is in the table.
    std::size_t decisions = 0;
    for (const auto& t : result.trials())
        for (const auto& d : t.decisions) {
            ++decisions;
            CHECK(html.find(ht::detail::report::esc(result.describe(d))) != std::string::npos);
        }
    CHECK(decisions > 0);
    CHECK(html.find("diverged &lt;b&gt;loss&lt;/b&gt; &amp; &quot;quoted&quot;") != std::string::npos);
    CHECK(html.find("Completed at") == std::string::npos);
}

TEST_CASE("report: text from the user is escaped everywhere") {
    const std::string evil = "<script>alert(1)</script>";
    const std::string quote = "a&b\"c'";
    ht::SearchSpace space{ht::ContinuousParameter(evil, 0.0, 1.0), ht::CategoricalParameter(quote, {evil, quote, "ok"})};
    ht::Tuner tuner(space, ht::RandomSearch(), {.metric = "<i>metric</i>", .max_jobs = 20, .seed = 2});
    auto result = tuner.fit([&](const ht::Config& cfg) -> double {
        if (cfg.get<std::string>(quote) == "ok") throw std::runtime_error(evil);
        return cfg.get<double>(evil);
    });
    REQUIRE(result.count(ht::TrialStatus::Failed) > 0);
    auto html = ht::render_report(result, {.title = evil});
    check_structure(html);
    CHECK(html.find("alert(1)</script>") == std::string::npos);
    CHECK(html.find("<i>metric") == std::string::npos);
    CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
    CHECK(html.find("a&amp;b&quot;c&#39;") != std::string::npos);
    CHECK(html.find("a&b") == std::string::npos);
    CHECK(html.find("&lt;i&gt;metric&lt;/i&gt;") != std::string::npos);
}

TEST_CASE("report: bad and unusual input") {
    SUBCASE("no trials at all") {
        auto html = ht::render_report(ht::Result{});
        check_structure(html);
        CHECK(html.find("No trials.") != std::string::npos);
        CHECK(html.find("none: no trial produced a value") != std::string::npos);
    }
    SUBCASE("only failed trials") {
        ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0), ht::IntegerParameter("n", 1, 3)};
        ht::Tuner tuner(space, ht::RandomSearch({.max_resource = 3}), {.max_jobs = 8, .max_parallel_jobs = 2, .seed = 1});
        auto result = tuner.fit([](const ht::Config&, ht::Trial& trial) -> double {
            trial.report(1, 0.5);
            throw std::runtime_error("out of memory");
        });
        REQUIRE(result.count(ht::TrialStatus::Failed) == 8);
        auto html = ht::render_report(result);
        check_structure(html);
        CHECK(count(html, "out of memory") == 8);
        CHECK(html.find("No trial produced a value.") != std::string::npos);
        CHECK(html.find("Needs at least 3 trials") != std::string::npos);
        CHECK(html.find("class=\"F\"") != std::string::npos);  // the partial curves, in the failure colour
    }
    SUBCASE("one parameter") {
        ht::SearchSpace space{ht::ContinuousParameter("x", -1.0, 1.0)};
        ht::Tuner tuner(space, ht::RandomSearch(), {.max_jobs = 10, .seed = 4});
        auto html = ht::render_report(tuner.fit([](const ht::Config& c) { return c.get<double>("x") * c.get<double>("x"); }));
        check_structure(html);
        CHECK(html.find("x (linear)") != std::string::npos);
        CHECK(html.find("No trial reported intermediate values.") != std::string::npos);
    }
    SUBCASE("only categorical parameters") {
        ht::SearchSpace space{ht::CategoricalParameter("opt", {"sgd", "adam"}),
                              ht::CategoricalParameter("act", {"relu", "tanh", "gelu"})};
        ht::Tuner tuner(space, ht::RandomSearch(), {.max_jobs = 12, .seed = 4});
        auto html = ht::render_report(tuner.fit([](const ht::Config& c) {
            return (c.get<std::string>("opt") == "adam" ? 0.1 : 0.5) + (c.get<std::string>("act") == "gelu" ? 0.0 : 0.2);
        }));
        check_structure(html);
        CHECK(html.find("opt (categories)") != std::string::npos);
        CHECK(html.find(">gelu<") != std::string::npos);
        CHECK(html.find("class=\"cat\"") != std::string::npos);
    }
    SUBCASE("a constant objective and a one-point range") {
        ht::SearchSpace space{ht::ContinuousParameter("x", 2.0, 2.0), ht::IntegerParameter("n", 5, 5)};
        ht::Tuner tuner(space, ht::RandomSearch(), {.max_jobs = 5, .seed = 4});
        auto html = ht::render_report(tuner.fit([](const ht::Config&) { return 1.0; }));
        check_structure(html);
    }
}

TEST_CASE("report: 10,000 trials stay small, and every trial is in the table") {
    ht::SearchSpace space{ht::ContinuousParameter("lr", 1e-5, 1.0), ht::IntegerParameter("depth", 1, 12),
                          ht::ContinuousParameter("dropout", 0.0, 0.9), ht::CategoricalParameter("opt", {"sgd", "adam"}),
                          ht::ContinuousParameter("momentum", 0.5, 0.999, ht::Scaling::ReverseLogarithmic)};
    auto result = asha_run(space, 10000, 2);
    REQUIRE(result.trials().size() == 10000);
    auto html = ht::render_report(result);
    check_structure(html);
    MESSAGE("report of 10,000 ASHA trials: " << html.size() << " bytes");
    CHECK(html.size() < 4'000'000);
    CHECK(count(html, "<tr class=") == 10000);
    const ht::ReportOptions defaults;
    CHECK(count(html, "<polyline") <= defaults.max_curves + defaults.top_max + 3);
    CHECK(html.find("class=\"band\"") != std::string::npos);
    CHECK(html.find("momentum (reverse-log scale)") != std::string::npos);
    CHECK(html.find(">0.99<") != std::string::npos);
}

TEST_CASE("report: write_report writes the file, or throws IoError with the operating system's reason") {
    ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0)};
    ht::Tuner tuner(space, ht::RandomSearch(), {.max_jobs = 4, .seed = 1});
    auto result = tuner.fit([](const ht::Config& c) { return c.get<double>("x"); });
    ht::write_report(result, "hypertune_test_report.html");
    std::ifstream in("hypertune_test_report.html", std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    CHECK(ss.str() == ht::render_report(result));
    CHECK_THROWS_WITH_AS(ht::write_report(result, "/nonexistent-dir/report.html"),
                         "cannot write report file '/nonexistent-dir/report.html': No such file or directory",
                         ht::IoError);
    if (std::filesystem::exists("/dev/full"))  // every write fails there with ENOSPC: a full disk
        CHECK_THROWS_WITH_AS(ht::write_report(result, "/dev/full"),
                             "error while writing report file '/dev/full': No space left on device", ht::IoError);
}

TEST_CASE("report: helpers") {
    using namespace ht::detail::report;
    CHECK(esc("<a href='x'>&\"") == "&lt;a href=&#39;x&#39;&gt;&amp;&quot;");
    CHECK(thin(10, 3) == std::vector<std::size_t>{0, 4, 9});
    CHECK(thin(2, 5) == std::vector<std::size_t>{0, 1});
    CHECK(thin(0, 5).empty());
    CHECK(Axis{0.0, 1.0, false}.tick_values().size() >= 3);
    CHECK(Axis{1e-4, 1.0, true}.tick_values() == std::vector<double>{1e-4, 1e-3, 1e-2, 1e-1, 1.0});
    CHECK(clip("\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9", 4) == "\u00e9\u2026");  // never cuts a character in two
    auto fitted = Axis::fit({1.0, 1.0, 1.0});
    CHECK(fitted.hi > fitted.lo);
}
