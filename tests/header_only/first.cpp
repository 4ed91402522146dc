// SPDX-License-Identifier: MIT
// Header-only link test, first translation unit, compiled as a user's Release build compiles:
// g++ -O3 -Wall -Wextra -Werror, with none of the project's -Wno-error exceptions. GCC 12's
// flow-based warnings (-Wrestrict, -Wstringop-overflow) only show once the code is inlined into a
// caller, so this calls what users call: the result's files and summary, the report,
// CommandObjective, the formatting of a Config, and a journaled ASHA run (promotion type).
#include "all_headers.hpp"

#include <string>

namespace header_only_test {

hypertune::Result tune_with_journal(const std::string& journal) {
    namespace ht = hypertune;
    ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0), ht::IntegerParameter("n", 1, 4)};
    ht::Tuner tuner(space, ht::ASHA({.max_resource = 9, .type = ht::HalvingType::Promotion}),
                    {.max_jobs = 12, .max_parallel_jobs = 2, .seed = 1, .progress = ht::ProgressBar::Never,
                     .journal = journal});
    return tuner.fit([](const ht::Config& c, ht::Trial& trial) {
        double loss = 1.0;
        for (ht::Resource r = trial.resumed_from() + 1; r <= trial.budget() && !trial.should_stop(); ++r)
            trial.report(r, loss = c.get<double>("x") + 1.0 / static_cast<double>(r * c.get<int>("n")));
        return loss;
    });
}

std::string run_a_command(const std::string& dir) {
    namespace ht = hypertune;
    ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0), ht::CategoricalParameter("kind", {"a", "b"})};
    ht::CommandObjective objective({"/bin/echo", "loss={x}", "{kind}"}, {.metrics = {{"loss", "loss=(\\S+)"}}});
    objective.check(space);
    ht::Tuner tuner(space, ht::ASHA({.min_resource = 1, .max_resource = 3}),
                    {.max_jobs = 4, .progress = ht::ProgressBar::Never});
    ht::Result result = tuner.fit(objective);
    result.to_csv(dir + "/command.csv");
    result.to_json(dir + "/command.json");
    ht::write_report(result, dir + "/command.html");
    return result.summary() + fmt::format("{}", result.best().config);
}

}  // namespace header_only_test
