// SPDX-License-Identifier: MIT
#include <doctest/doctest.h>

#include <algorithm>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <hypertune/detail/report_svg.hpp>
#include <hypertune/hypertune.hpp>
#include <hypertune/importance.hpp>
#include <hypertune/report.hpp>
#include <hypertune/strategies/asha.hpp>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

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
ht::Result asha_run(const ht::SearchSpace& space, std::size_t jobs, std::size_t parallel = 3,
                    ht::HalvingType type = ht::HalvingType::Promotion) {
    ht::Tuner tuner(space, ht::ASHA({.min_resource = 1, .max_resource = 27, .type = type}),
                    {.metric = "validation:loss",
                     .max_jobs = jobs,
                     .max_parallel_jobs = parallel,
                     .seed = 5,
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

TEST_CASE("report: several objectives get a Pareto front section, with a pairwise view for three") {
    ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0, ht::Scaling::Linear),
                          ht::ContinuousParameter("y", 0.0, 1.0, ht::Scaling::Linear)};
    auto run = [&](std::size_t objectives) {
        ht::TunerOptions o;
        o.objectives = {{"a", ht::Direction::Minimize}, {"b", ht::Direction::Maximize}};
        if (objectives == 3) o.objectives.push_back({"c", ht::Direction::Minimize});
        o.constraints = {ht::Constraint::at_most("a", 0.9)};
        o.max_jobs = 40;
        o.progress = ht::ProgressBar::Never;
        return ht::Tuner(space, ht::RandomSearch(), o).fit([&](const ht::Config& cfg) {
            const double x = cfg.get<double>("x"), y = cfg.get<double>("y");
            ht::Metrics m{{"a", x}, {"b", x * x + y}};
            if (objectives == 3) m.set("c", 1.0 - y);
            return m;
        });
    };
    auto two = run(2);
    auto html = ht::render_report(two);
    check_structure(html);
    REQUIRE(html.find("<section id=\"front\">") != std::string::npos);
    const auto front = two.pareto_front();
    CHECK(count(html, "<circle class=\"P\"") == front.size());
    CHECK(count(html, "<polyline class=\"best\"") >= 1);
    CHECK(html.find(fmt::format("{} of 40 completed trials are on the Pareto front", front.size())) != std::string::npos);
    CHECK(html.find("break a constraint") != std::string::npos);  // a > 0.9 is infeasible
    CHECK(count(html, "id=\"front\"") == 1);  // the section's; the table's was a second

    // A tie on the first objective: best() takes the trial better on the next one, and so does
    // every "best" the report shows (it circled trial 0, dominated, before).
    ht::TunerOptions tied;
    tied.objectives = {{"accuracy", ht::Direction::Maximize}, {"cost", ht::Direction::Minimize}};
    tied.max_jobs = 4;
    tied.progress = ht::ProgressBar::Never;
    const auto tie = ht::Tuner(space, ht::RandomSearch(), tied).fit([](const ht::Config&, ht::Trial& t) {
        const double accuracy[] = {0.9, 0.9, 0.5, 0.4}, cost[] = {10, 1, 5, 6};
        return ht::Metrics{{"accuracy", accuracy[t.id()]}, {"cost", cost[t.id()]}};
    });
    REQUIRE(tie.best().id == 1);
    const auto tie_html = ht::render_report(tie);
    CHECK(tie_html.find("<title>best: trial 1,") != std::string::npos);
    CHECK(tie_html.find("<title>best: trial 0,") == std::string::npos);
    auto three = ht::render_report(run(3));
    CHECK(count(three, "against") >= 3);  // a-b, a-c, b-c
    CHECK(three.find("each chart is a projection") != std::string::npos);
    // One objective: no such section.
    CHECK(ht::render_report(asha_run(space, 10)).find("<section id=\"front\">") == std::string::npos);
}

TEST_CASE("report: text from the user is escaped everywhere") {
    const std::string evil = "<script>alert(1)</script>";
    const std::string quote = "a&b\"c'";
    const std::string instances = "<img src=x onerror=alert(2)>";  // named in the billable time's row
    ht::SearchSpace space{ht::ContinuousParameter(evil, 0.0, 1.0), ht::CategoricalParameter(quote, {evil, quote, "ok"}),
                          ht::IntegerParameter(instances, 1, 4)};
    ht::Tuner tuner(space, ht::RandomSearch(),
                    {.metric = "<i>metric</i>", .max_jobs = 20, .seed = 2, .instances_parameter = instances});
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
    CHECK(html.find("<img") == std::string::npos);
    CHECK(html.find("x its &lt;img src=x onerror=alert(2)&gt;") != std::string::npos);
}

TEST_CASE("report: the colours' key names trials cut short beside those stopped early") {
    auto trainer = [](const ht::Config& c, ht::Trial& trial) {
        for (ht::Resource s = 1; s <= trial.budget(); ++s) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            trial.report(s, c.get<double>("x"));
            if (trial.should_stop()) break;
        }
        return c.get<double>("x");
    };
    // Random search stops nothing: what max_runtime_seconds cut is not early stopping.
    const auto cut = ht::Tuner(ht::SearchSpace{ht::ContinuousParameter("x", 0.0, 1.0)}, ht::RandomSearch({.max_resource = 10}),
                               {.max_jobs = 4, .max_parallel_jobs = 2, .max_runtime_seconds = 0.05})
                         .fit(trainer);
    REQUIRE(cut.count(ht::TrialStatus::Stopped) > 0);
    const auto html = ht::render_report(cut);
    CHECK(html.find("Stopped early or cut short") != std::string::npos);
    // Nothing cut: the key says stopped early alone.
    const auto full = ht::Tuner(ht::SearchSpace{ht::ContinuousParameter("x", 0.0, 1.0)}, ht::RandomSearch(), {.max_jobs = 3})
                          .fit([](const ht::Config& c) { return c.get<double>("x"); });
    const auto plain = ht::render_report(full);
    CHECK(plain.find("Stopped early") != std::string::npos);
    CHECK(plain.find("cut short") == std::string::npos);
}

TEST_CASE("report: a failure reason that is not UTF-8 (a trainer's Latin-1 stderr) gives U+FFFD, as CSV does") {
    ht::Tuner tuner(ht::SearchSpace{ht::ContinuousParameter("x", 0.0, 1.0)}, ht::RandomSearch(), {.max_jobs = 4});
    auto result = tuner.fit([](const ht::Config& cfg) -> double {
        if (cfg.get<double>("x") < 2.0) throw std::runtime_error("Gr\xf6\xdf" "e falsch");
        return 0.0;
    });
    const auto html = ht::render_report(result, {});
    check_structure(html);
    CHECK(html.find("Gr\xf6") == std::string::npos);
    CHECK(html.find("Gr\xEF\xBF\xBD\xEF\xBF\xBD" "e falsch") != std::string::npos);
    CHECK(result.to_csv().find("Gr\xEF\xBF\xBD\xEF\xBF\xBD" "e falsch") != std::string::npos);
}

TEST_CASE("report: bad and unusual input") {
    SUBCASE("no trials at all") {
        auto html = ht::render_report(ht::Result{});
        check_structure(html);
        CHECK(html.find("No trials.") != std::string::npos);
        CHECK(html.find("none: no trial produced a value") != std::string::npos);
        CHECK(html.find("hypertune report, no run recorded") != std::string::npos);  // not "started 1970"
        CHECK(html.find("1970") == std::string::npos);
    }
    SUBCASE("options the sections cannot draw with are refused, naming the field; the least ones work") {
        ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0)};
        const ht::Result r = asha_run(space, 12);
        auto refused = [&](const ht::ReportOptions& o) {
            try {
                (void)ht::render_report(r, o);
            } catch (const ht::InvalidArgument& e) {
                return std::string(e.what());
            }
            return std::string("accepted");
        };
        // max_points_per_curve = 0 used to end the process (SIGSEGV); the others were undefined behaviour.
        CHECK(refused({.max_points_per_curve = 0}) ==
              "ReportOptions: max_points_per_curve must be >= 2 (a curve keeps its first and last points), got 0");
        CHECK(refused({.max_points_per_curve = 1}).starts_with("ReportOptions: max_points_per_curve must be >= 2"));
        CHECK(refused({.top_fraction = -1.0}) == "ReportOptions: top_fraction must be in [0, 1], got -1");
        CHECK(refused({.top_fraction = 1e30}) == "ReportOptions: top_fraction must be in [0, 1], got 1e+30");
        CHECK(refused({.top_fraction = std::nan("")}).starts_with("ReportOptions: top_fraction must be in [0, 1]"));
        CHECK(refused({.top_min = 50, .top_max = 5}) == "ReportOptions: top_min (50) must be <= top_max (5)");
        const std::string least =
            ht::render_report(r, {.max_curves = 0, .max_points_per_curve = 2, .max_dots = 0, .top_fraction = 0.0,
                                  .top_min = 0, .top_max = 0});
        check_structure(least);
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
        CHECK(count(html, "out of memory") == 9);  // each trial's reason, and the warning that all failed
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
    SUBCASE("objectives near the largest doubles, of either sign") {
        // Their differences overflow (1e308 - -1e308): the axes take them in halves.
        ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0)};
        for (const double big : {1e300, 1.7e308}) {
            CAPTURE(big);
            ht::Tuner tuner(space, ht::RandomSearch({.max_resource = 3}), {.max_jobs = 30, .seed = 2});
            auto html = ht::render_report(tuner.fit([&](const ht::Config& c, ht::Trial& trial) {
                const double v = c.get<double>("x") > 0.5 ? big : -big;
                for (ht::Resource r = 1; r <= 3; ++r) trial.report(r, v / static_cast<double>(4 - r));
                return v;
            }));
            check_structure(html);
            CHECK(html.find("nan") == std::string::npos);
            CHECK_FALSE(std::regex_search(html, std::regex(R"([\s"\-,(]inf)")));  // no infinite coordinate
        }
    }
    SUBCASE("a constant objective and a one-point range") {
        ht::SearchSpace space{ht::ContinuousParameter("x", 2.0, 2.0), ht::IntegerParameter("n", 5, 5)};
        ht::Tuner tuner(space, ht::RandomSearch(), {.max_jobs = 5, .seed = 4});
        auto html = ht::render_report(tuner.fit([](const ht::Config&) { return 1.0; }));
        check_structure(html);
    }
}

TEST_CASE("report: the timeline's note gives each share with the numbers it is made of") {
    // Trials that wait for resources before training: the bars held the wait, utilisation left it
    // out, and one sentence said "0.2006 of 1.005 worker-seconds busy (20%)" beside rows at 100%.
    ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0)};
    ht::Tuner tuner(space, ht::RandomSearch(), {.max_jobs = 3, .seed = 1});
    const auto result = tuner.fit([](const ht::Config& c, ht::Trial& trial) {
        std::this_thread::sleep_for(std::chrono::milliseconds(40));  // waiting for its machines
        trial.resources_acquired();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        return c.get<double>("x");
    });
    const std::string html = ht::render_report(result);
    std::smatch m;
    REQUIRE(std::regex_search(html, m, std::regex(R"(([0-9.e+-]+) of ([0-9.e+-]+) worker-seconds held \(([0-9]+)%\))")));
    const double held = std::stod(m[1]), capacity = std::stod(m[2]);
    CHECK(std::abs(std::stod(m[3]) - 100.0 * held / capacity) <= 1.0);
    CHECK(held / capacity > 0.8);  // the waits are held time
    REQUIRE(std::regex_search(
        html, m, std::regex(R"(Utilisation: ([0-9.e+-]+) worker-seconds of training over 1 x ([0-9.e+-]+) s of wall time \(([0-9]+)%\))")));
    CHECK(std::abs(std::stod(m[3]) - 100.0 * std::stod(m[1]) / std::stod(m[2])) <= 1.0);
    CHECK(std::stod(m[3]) == doctest::Approx(std::round(100.0 * result.cost().utilisation)));
    CHECK(result.cost().utilisation < 0.5);  // the waits are not training
}

TEST_CASE("report: with constraints, the best it circles and plots is best()'s, a feasible trial") {
    ht::SearchSpace space{ht::IntegerParameter("k", 0, 2)};
    for (const bool any_feasible : {true, false}) {
        CAPTURE(any_feasible);
        ht::TunerOptions o{.metric = "accuracy", .direction = ht::Direction::Maximize, .max_jobs = 3};
        o.constraints = {ht::Constraint::at_most("latency", 5)};
        ht::Tuner tuner(space, ht::GridSearch(), o);
        auto r = tuner.fit([&](const ht::Config& c) {
            const int k = c.get<int>("k");  // k = 2 is the most accurate, and too slow
            return ht::Metrics{{"accuracy", 0.8 + 0.05 * k}, {"latency", k == 2 || !any_feasible ? 9.0 : 1.0}};
        });
        const auto html = ht::render_report(r);
        check_structure(html);
        // The constraints and how many met them, as summary() says it; the trial that breaks one
        // is marked in the table and in its own colour (a dot of the Completed colour above the
        // best line before, with nothing saying why).
        CHECK(html.find("<tr><th>constraints<td>" + ht::detail::report::esc(r.constraints_summary())) != std::string::npos);
        CHECK(r.summary().find("constraints " + r.constraints_summary()) != std::string::npos);
        CHECK(html.find("<td>Completed (breaks a constraint)") != std::string::npos);
        CHECK(html.find("class=\"dot I\"") != std::string::npos);
        CHECK(html.find("Breaks a constraint") != std::string::npos);  // the key
        if (any_feasible) {
            REQUIRE(r.best().id == 1);
            CHECK(html.find("<title>best: trial 1, k = 1</title>") != std::string::npos);
            CHECK(html.find("best: trial 2") == std::string::npos);
        } else {
            CHECK_FALSE(r.has_best());
            CHECK(html.find("<tr><th>best<td>none: no trial met the constraints") != std::string::npos);
            CHECK(html.find("No trial met the constraints.") != std::string::npos);
            CHECK(html.find("class=\"best\"") == std::string::npos);
        }
    }
}

TEST_CASE("report: a trial that breaks a constraint is purple in the curves too, and the table shows every metric") {
    // The curves drew such a trial in its outcome's colour while the key listed purple, and the
    // table showed the first objective only: which metric broke its bound could not be read.
    ht::SearchSpace space{ht::IntegerParameter("k", 0, 3)};
    ht::TunerOptions o{.metric = "accuracy", .direction = ht::Direction::Maximize, .max_jobs = 4,
                       .progress = ht::ProgressBar::Never};
    o.objectives = {{"accuracy", ht::Direction::Maximize}, {"size", ht::Direction::Minimize}};
    o.constraints = {ht::Constraint::at_most("latency", 5)};
    const auto r = ht::Tuner(space, ht::GridSearch({.points = {}, .max_resource = 3}), o).fit([](const ht::Config& c, ht::Trial& trial) {
        const int k = c.get<int>("k");  // k = 3 breaks the latency bound
        ht::Metrics m{{"accuracy", 0.0}, {"size", 10.0 - k}, {"latency", k == 3 ? 9.25 : 1.5}};
        for (ht::Resource e = 1; e <= trial.budget(); ++e) {
            m.set("accuracy", 0.5 + 0.125 * k + 0.0625 * static_cast<double>(e));
            trial.report(e, m);
        }
        return m;
    });
    REQUIRE_FALSE(r.trials()[3].feasible);
    const auto html = ht::render_report(r);
    check_structure(html);
    const auto curves = html.substr(html.find("<section id=\"curves\">"));
    const auto curves_end = curves.find("</section>");
    CHECK(curves.find("<polyline class=\"I\"") < curves_end);
    CHECK(count(curves.substr(0, curves_end), "<polyline class=\"C\"") == 3);
    CHECK(html.find("<th>accuracy<th>size<th>latency<th>resource<th>decisions and failures") != std::string::npos);
    CHECK(html.find("<td>Completed (breaks a constraint)<td data-v=\"1.0625\">1.0625<td>7<td>9.25<td>3") != std::string::npos);
}

TEST_CASE("report: a long log axis labels at most 8 of its decades, and an edge label stays in the chart") {
    using namespace ht::detail::report;
    // Every decade was labelled: 16 labels on top of each other for 1e-12..1e3, 601 (a black bar)
    // for 1e-300..1e300.
    for (const auto& [lo, hi] : {std::pair{1e-12, 1e3}, std::pair{1e-300, 1e300}, std::pair{1e-30, 1.0}}) {
        CAPTURE(lo);
        const auto ticks = Axis{lo, hi, true}.tick_values();
        CHECK(ticks.size() >= 3);
        CHECK(ticks.size() <= 8);
        CHECK(std::is_sorted(ticks.begin(), ticks.end()));
    }
    CHECK(Axis{1e-3, 1.0, true}.tick_values() == std::vector<double>{1e-3, 1e-2, 1e-1, 1.0});
    CHECK(parameter_ticks(ht::IntegerParameter("n", 1, 1000000000, ht::Scaling::Logarithmic).spec()).size() <= 8);
    // Short exponents, so that the labels left of a chart fit its margin (the minus of -1.5e+308
    // was cut off).
    CHECK(tick_label(1e-5, 4) == "1e-5");
    CHECK(tick_label(1e9, 4) == "1e9");
    CHECK(tick_label(-1.5e308, 4) == "-1.5e308");
    CHECK(tick_label(1e-300, 4) == "1e-300");
    CHECK(tick_label(0.25, 4) == "0.25");
    // An axis across the largest doubles has ticks on both sides of 0 (i x step overflowed, and
    // the upper half had none).
    const auto across = Axis::fit({-1.68e308, 1.52e308}).tick_values();
    CHECK(across.front() < -1e308);
    CHECK(across.back() >= 1e308);
    // A label centred on the last tick of a narrow chart ran past its right edge.
    Chart ch(third, 200, "edge");
    ch.axes({{0.0, "1"}, {1.0, "1e+09"}}, {}, "n", "y");
    const std::string svg = ch.str();
    CHECK(svg.find("text-anchor=\"end\">1e+09</text>") != std::string::npos);
    CHECK(svg.find("text-anchor=\"middle\">1</text>") != std::string::npos);
}

TEST_CASE("report: the trial table shows every number to 6 digits, the objective sorted on its exact value") {
    // Times were shown to 3 digits (1234.4 s and 1231 s both read 1.23e+03, so they sorted as
    // equal) and hyperparameters to 5.
    ht::SearchSpace space{ht::ContinuousParameter("lr", 0.0, 1.0)};
    ht::Result::Setup setup;
    setup.parameter_names = {"lr"};
    std::vector<ht::TrialRecord> trials(2);
    const double lr[2] = {0.1234569, 0.1234561};
    const double elapsed[2] = {1234.4, 1231.0};
    for (std::size_t i = 0; i < 2; ++i) {
        auto& t = trials[i];
        t.id = static_cast<ht::TrialId>(i);
        t.config = space.make({lr[i]});
        t.status = ht::TrialStatus::Completed;
        t.objective = 0.25 + 1e-9 * static_cast<double>(i);
        t.resource_used = 1;
        t.segments = {{1.7e9, 1.7e9 + elapsed[i], 0}};
        t.elapsed_seconds = t.billable_seconds = elapsed[i];
    }
    const std::string html = ht::render_report(ht::Result(setup, trials));
    const std::string table = html.substr(html.find("<table id=\"trials\""));
    CHECK(table.find("<td data-v=\"0.250000001\">0.25<td>") != std::string::npos);
    CHECK(table.find("<td>0.123457<td>1234.4<td>1234.4<td>0\n") != std::string::npos);
    CHECK(table.find("<td>0.123456<td>1231<td>1231<td>0\n") != std::string::npos);
}

TEST_CASE("report: 10,000 trials stay small, and every trial is in the table") {
    ht::SearchSpace space{ht::ContinuousParameter("lr", 1e-5, 1.0), ht::IntegerParameter("depth", 1, 12),
                          ht::ContinuousParameter("dropout", 0.0, 0.9), ht::CategoricalParameter("opt", {"sgd", "adam"}),
                          ht::ContinuousParameter("momentum", 0.5, 0.999, ht::Scaling::ReverseLogarithmic)};
    // The promotion type (the default) says more per trial: every trial that reaches a rung pauses
    // there before it is promoted or stopped.
    for (auto [type, limit] :
         {std::pair{ht::HalvingType::Stop, 4'500'000}, std::pair{ht::HalvingType::Promotion, 6'000'000}}) {
        CAPTURE(static_cast<int>(type));
        auto result = asha_run(space, 10000, 2, type);
        REQUIRE(result.trials().size() == 10000);
        auto html = ht::render_report(result);
        check_structure(html);
        MESSAGE("report of 10,000 " << result.setup().strategy << " trials: " << html.size() << " bytes");
        CHECK(html.size() < static_cast<std::size_t>(limit));
        CHECK(count(html, "<tr class=") == 10000);
        const ht::ReportOptions defaults;
        CHECK(count(html, "<polyline") <= defaults.max_curves + defaults.top_max + 3);
        CHECK(html.find("class=\"band\"") != std::string::npos);
        CHECK(html.find("momentum (reverse-log scale)") != std::string::npos);
        CHECK(html.find(">0.99<") != std::string::npos);
    }
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
                         "report file '/nonexistent-dir/report.html': cannot write: No such file or directory",
                         ht::IoError);
    if (std::filesystem::exists("/dev/full"))  // every write fails there with ENOSPC: a full disk
        CHECK_THROWS_WITH_AS(ht::write_report(result, "/dev/full"),
                             "report file '/dev/full': error while writing: No space left on device", ht::IoError);
}

namespace {

// `n` trials of a one-parameter space; trial i reports at steps 1..points(i) and ends Stopped
// when it reported once (as a trial stopped at the first rung does), Completed otherwise.
ht::Result made_up_run(std::size_t n, const std::function<int(std::size_t)>& points, const std::string& name = "x",
                       double wall_seconds = 100.0) {
    ht::SearchSpace space{ht::ContinuousParameter(name, 0.0, 1.0)};
    ht::Result::Setup setup;
    setup.metric = "loss";
    setup.strategy = "ASHA";
    setup.max_resource = 9;
    setup.start_time = 1'700'000'000.0;
    setup.wall_seconds = wall_seconds;
    setup.parameter_names = {name};
    std::vector<ht::TrialRecord> trials;
    for (std::size_t i = 0; i < n; ++i) {
        ht::TrialRecord t;
        t.id = i;
        t.config = space.make({static_cast<double>(i) / static_cast<double>(n)});
        int k = points(i);
        for (int s = 1; s <= k; ++s) t.curve.push_back({s, 1.0 / s + 0.01 * static_cast<double>(i), 0.1 * s});
        t.status = k == 1 ? ht::TrialStatus::Stopped : ht::TrialStatus::Completed;
        t.objective = t.curve.back().value;
        t.resource_used = k;
        t.segments.push_back({setup.start_time + static_cast<double>(i), setup.start_time + static_cast<double>(i) + 1.0, 0});
        t.elapsed_seconds = t.billable_seconds = 1.0;
        trials.push_back(std::move(t));
    }
    return ht::Result(setup, std::move(trials));
}

std::string section(const std::string& html, const std::string& id) {
    auto from = html.find(fmt::format("<section id=\"{}\">", id));
    return from == std::string::npos ? std::string() : html.substr(from, html.find("</section>", from) - from);
}

}  // namespace

TEST_CASE("report: trials with a single curve point are drawn as dots, and the caption counts them") {
    // 46 of 60 stopped at their first report, as in the quickstart: each must be visible.
    auto result = made_up_run(60, [](std::size_t i) { return i < 46 ? 1 : 3; });
    auto curves = section(ht::render_report(result), "curves");
    CHECK(count(curves, "<circle class=\"S\"") == 46);
    CHECK(count(curves, "<polyline class=\"C\"") == 14);
    CHECK(curves.find("60 trials drawn one by one: 14 as curves, 46 with a single value as dots.") != std::string::npos);

    SUBCASE("in the band of curves not drawn one by one, a band over one resource still has a width") {
        ht::ReportOptions ten;
        ten.max_curves = 10;
        auto html = ht::render_report(result, ten);
        auto band = section(html, "curves");
        CHECK(band.find("10 trials drawn one by one (the best by last value): 10 as curves; the other 50 as the grey "
                        "band") != std::string::npos);
        auto only_ones = made_up_run(30, [](std::size_t) { return 1; });
        ht::ReportOptions five;
        five.max_curves = 5;
        auto ones = section(ht::render_report(only_ones, five), "curves");
        CHECK(ones.find("5 trials drawn one by one (the best by last value): 0 as curves, 5 with a single value as dots; "
                        "the other 25 as the grey band") != std::string::npos);
        // The band's outline goes 6 pixels across, and its median is a dot.
        const std::string start = "class=\"band\" d=\"M";
        auto d = ones.substr(ones.find(start) + start.size());
        double x0 = std::stod(d), x1 = std::stod(d.substr(d.find('L') + 1));
        CHECK(x1 - x0 == doctest::Approx(6.0).epsilon(0.05));
        CHECK(count(ones, "<circle class=\"R\"") == 1);
    }
}

TEST_CASE("report: times faster, slower or the same are worded as such") {
    // 60 trials of 1 s each, one after another, over a wall time of 600 s: 10x slower than sequential.
    auto slow = section(ht::render_report(made_up_run(60, [](std::size_t) { return 3; }, "x", 600.0)), "summary");
    CHECK(slow.find("(10.0x slower)") != std::string::npos);
    CHECK(slow.find("(no saving)") != std::string::npos);  // nothing stopped early: not "1.0x less"
    CHECK(slow.find("x faster") == std::string::npos);
    CHECK(slow.find("1.0x") == std::string::npos);
    auto fast = section(ht::render_report(made_up_run(60, [](std::size_t i) { return i < 30 ? 1 : 3; }, "x", 20.0)),
                        "summary");
    CHECK(fast.find("(3.0x faster)") != std::string::npos);
    auto same = section(ht::render_report(made_up_run(60, [](std::size_t) { return 3; }, "x", 60.0)), "summary");
    CHECK(same.find("(no speed-up)") != std::string::npos);
}

TEST_CASE("report: long names are cut with a tooltip, tick labels have a halo, an empty decisions column stays narrow") {
    const std::string name = "a_parameter_with_a_really_quite_long_name_that_does_not_fit_in_a_panel_title";
    auto result = made_up_run(30, [](std::size_t) { return 3; }, name);
    auto html = ht::render_report(result);
    auto panels = section(html, "parameters");
    // The panel title keeps its scale and is cut in the name; the whole of it is the tooltip.
    auto title = panels.substr(panels.find("<text class=\"ttl\""));
    title = title.substr(0, title.find("</text>"));
    CHECK(title.find(fmt::format("<title>{} (linear)</title>", name)) != std::string::npos);
    auto shown = title.substr(title.find('>') + 1, title.find("<title>") - title.find('>') - 1);
    CHECK(shown.find("\u2026 (linear)") != std::string::npos);
    CHECK(shown.size() < 60);
    // Parallel coordinates: every tick label over the trial lines is drawn with a white halo.
    auto top = section(html, "top");
    CHECK(count(top, "class=\"halo\"") > 5);
    CHECK(html.find(".halo{paint-order:stroke;stroke:#fff") != std::string::npos);
    // No decision and no failure: no cell is made wide, so nothing pushes the table into a scroll.
    auto table = section(html, "table");
    CHECK(table.find("class=why") == std::string::npos);
    CHECK(html.find("nth-child(5){min-width") == std::string::npos);
    auto failed = made_up_run(3, [](std::size_t) { return 3; });
    auto records = failed.trials();
    records[1].status = ht::TrialStatus::Failed;
    records[1].failure_reason = "out of memory";
    auto with_reason = section(ht::render_report(ht::Result(failed.setup(), records)), "table");
    CHECK(count(with_reason, "class=why") == 1);
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
    // Trial numbers: whole ticks only (0, 0.2, ... 1 and 0, 0.5, ... 2 before)
    CHECK(Axis{0.0, 1.0, false, true}.tick_values() == std::vector<double>{0.0, 1.0});
    CHECK(Axis{0.0, 2.0, false, true}.tick_values() == std::vector<double>{0.0, 1.0, 2.0});
    CHECK(Axis{0.0, 1000.0, false, true}.tick_values() == Axis{0.0, 1000.0, false}.tick_values());
}

TEST_CASE("report: tick labels read differently, and values a few ulps apart draw as equal") {
    using namespace ht::detail::report;
    auto labels = [](const std::vector<Tick>& ticks) {
        std::vector<std::string> out;
        for (const auto& t : ticks) out.push_back(t.label);
        return out;
    };
    auto distinct = [](std::vector<std::string> v) {
        std::sort(v.begin(), v.end());
        return std::adjacent_find(v.begin(), v.end()) == v.end();
    };
    // 4 significant digits gave 2.302 five times, 1.235e+06 five times, 1e+05 six times.
    for (const auto& [lo, hi] : {std::pair{2.30210, 2.30222}, std::pair{1234567.0, 1234567.8}, std::pair{0.0, 1.0}}) {
        CAPTURE(lo);
        const auto l = labels(Axis::fit({lo, hi}).ticks());
        CHECK(l.size() >= 3);
        CHECK(distinct(l));
    }
    CHECK(labels(Axis{0.0, 0.3, false}.ticks()) == std::vector<std::string>{"0", "0.05", "0.1", "0.15", "0.2", "0.25", "0.3"});
    const auto seed = labels(parameter_ticks(ht::IntegerParameter("seed_offset", 100000, 100010).spec()));
    CHECK(seed.size() >= 3);
    CHECK(distinct(seed));
    CHECK(seed.front() == "100000");
    const auto narrow = labels(parameter_ticks(ht::ContinuousParameter("narrow", 0.5, 0.5001).spec()));
    CHECK(distinct(narrow));
    // A reverse-log parameter's top tick is its maximum, never 1 (a value it cannot take).
    const auto beta2 =
        labels(parameter_ticks(ht::ContinuousParameter("beta2", 0.99, 0.99999, ht::Scaling::ReverseLogarithmic).spec()));
    CHECK(beta2.back() == "0.99999");
    CHECK(distinct(beta2));

    // 0.3 and 0.1 + 0.2: the step fell below an ulp and tick_values() looped until memory ran out.
    const double a = 0.3, b = 0.1 + 0.2;
    REQUIRE(a != b);
    const auto ticks = Axis::fit({a, b}).tick_values();
    CHECK(ticks.size() >= 2);
    CHECK(ticks.size() <= static_cast<std::size_t>(Axis::max_ticks));
    CHECK(Axis{a, b, false}.tick_values().size() <= static_cast<std::size_t>(Axis::max_ticks));
    ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0)};
    const auto r = ht::Tuner(space, ht::RandomSearch(), {.max_jobs = 4, .progress = ht::ProgressBar::Never})
                       .fit([&](const ht::Config&, ht::Trial& trial) {
                           const double v = trial.id() % 2 == 0 ? a : b;
                           trial.report(1, v);
                           trial.report(2, v);
                           return v;
                       });
    const std::string html = ht::render_report(r);
    check_structure(html);
}

TEST_CASE("report: an unfinished run read from its journal, and its resume with more workers") {
    const auto journal = std::filesystem::temp_directory_path() / fmt::format("hypertune_report_{}.jsonl", ::getpid());
    std::filesystem::remove(journal);
    const ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0)};
    auto trainer = [](const ht::Config& c, ht::Trial& trial) {
        for (ht::Resource s = trial.resumed_from() + 1; s <= trial.budget(); ++s) {
            trial.report(s, c.get<double>("x"));
            if (trial.should_stop()) break;
        }
        return c.get<double>("x");
    };
    auto tuner = [&](std::size_t workers) {
        return ht::Tuner(space, ht::ASHA({.max_resource = 9}),
                         {.max_jobs = 6, .max_parallel_jobs = workers, .progress = ht::ProgressBar::Never,
                          .journal = journal.string()});
    };
    (void)tuner(1).fit(trainer);
    // As a crash leaves it: trials paused at their rungs, before the run's end stopped them.
    std::vector<std::string> lines;
    {
        std::ifstream in(journal);
        for (std::string line; std::getline(in, line);) {
            if (line.find("\"kind\":\"Stop\"") != std::string::npos) break;
            lines.push_back(line);
        }
    }
    {
        std::ofstream out(journal, std::ios::trunc);
        for (const auto& line : lines) out << line << '\n';
    }
    const ht::Result unfinished = ht::load_result(journal.string());
    REQUIRE(unfinished.count(ht::TrialStatus::Paused) > 0);
    const auto html = ht::render_report(unfinished);
    check_structure(html);
    // Its dot is grey, and the key says what grey is (orange, "Stopped early", before).
    CHECK(html.find("class=\"dot R\"") != std::string::npos);
    CHECK(html.find("Unfinished (running or paused)") != std::string::npos);
    // The table sorts on exact values: each row carries its value in full.
    for (const auto& t : unfinished.trials())
        if (t.has_objective()) CHECK(html.find(fmt::format(" data-v=\"{}\">", t.objective)) != std::string::npos);

    // Resumed with 2 workers after 1: "up to 2", as summary() says (the report said "on 2").
    const ht::Result resumed = tuner(2).fit(trainer);
    REQUIRE(resumed.summary().find("wall time (up to 2 parallel)") != std::string::npos);
    CHECK(ht::render_report(resumed).find(" on up to 2 parallel jobs vs ") != std::string::npos);
    std::filesystem::remove(journal);
}

TEST_CASE("report: a warm-started run shows the overall best over its parents, as summary() does") {
    const ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0)};
    auto loss = [](const ht::Config& c) { return std::abs(c.get<double>("x") - 0.3); };
    const ht::Result parent =
        ht::Tuner(space, ht::RandomSearch(), {.max_jobs = 40, .progress = ht::ProgressBar::Never}).fit(loss);
    ht::TunerOptions child{.max_jobs = 2, .seed = 3, .progress = ht::ProgressBar::Never};
    child.warm_start = {.parents = {parent}};
    const ht::Result r = ht::Tuner(space, ht::RandomSearch(), child).fit(loss);
    const std::string overall = r.overall_best_summary();
    REQUIRE(overall.starts_with("(with 1 warm-start parent run): parent 0 trial "));
    CHECK(r.summary().find("overall best " + overall) != std::string::npos);
    CHECK(ht::render_report(r).find("<tr><th>overall best<td>" + overall) != std::string::npos);
    CHECK(ht::Result{}.overall_best_summary().empty());
}

TEST_CASE("report: the resource axis of the curves has whole ticks") {
    ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0)};
    ht::Tuner tuner(space, ht::ASHA({.max_resource = 4}), {.max_jobs = 12, .progress = ht::ProgressBar::Never});
    const auto r = tuner.fit([](const ht::Config& c, ht::Trial& trial) {
        double loss = 0.0;
        for (ht::Resource s = 1; s <= trial.budget(); ++s) {
            loss = c.get<double>("x") + 1.0 / static_cast<double>(s);
            trial.report(s, loss);
            if (trial.should_stop()) break;
        }
        return loss;
    });
    const std::string html = ht::render_report(r);
    const auto chart = html.find("against resource");
    REQUIRE(chart != std::string::npos);
    const std::string part = html.substr(chart, html.find("</svg>", chart) - chart);
    CHECK(part.find("text-anchor=\"middle\">4</text>") != std::string::npos);
    CHECK(part.find("text-anchor=\"middle\">1.5</text>") == std::string::npos);  // 1, 1.5, ... 4 before
}

TEST_CASE("report: one trial's run says 1 trial, and its trial-number axis has whole ticks") {
    ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0)};
    const auto r = ht::Tuner(space, ht::RandomSearch(), {.max_jobs = 1, .progress = ht::ProgressBar::Never})
                       .fit([](const ht::Config& c) { return c.get<double>("x"); });
    CHECK(r.summary().starts_with("1 trial of RandomSearch (Minimize objective): 1 completed"));
    const std::string html = ht::render_report(r);
    const auto chart = html.find("best so far against trial number");
    REQUIRE(chart != std::string::npos);
    const std::string part = html.substr(chart, html.find("</svg>", chart) - chart);
    // x ticks are the middle-anchored labels: 0 and 1, no fraction (y's are anchored at the end)
    CHECK(part.find("e-10") == std::string::npos);
    CHECK(part.find("text-anchor=\"middle\">1</text>") != std::string::npos);
    CHECK(part.find("text-anchor=\"middle\">0.2</text>") == std::string::npos);
}

TEST_CASE("report: importance that no parameter explains says so, not '0% explained'") {
    ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0), ht::ContinuousParameter("y", 0.0, 1.0)};
    const auto flat = ht::Tuner(space, ht::RandomSearch(), {.max_jobs = 12, .progress = ht::ProgressBar::Never})
                          .fit([](const ht::Config&) { return 1.0; });
    const auto importance = ht::parameter_importance(flat);
    REQUIRE(importance.size() == 2);
    for (const auto& p : importance) CHECK(p.share == 0.0);
    const auto html = ht::render_report(flat);
    CHECK(html.find("No parameter explains more of it than chance would") != std::string::npos);
    CHECK(html.find("Together they explain 0%") == std::string::npos);
}
