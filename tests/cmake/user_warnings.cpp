// SPDX-License-Identifier: MIT
// Compiled, not run, by the package.user_warnings test, as a user's Release build compiles it:
// g++ -O3 -Wall -Wextra -Werror. GCC 12's flow-based warnings (-Wrestrict, -Wstringop-overflow)
// only show once the code is inlined into a caller, so this calls what users call: the result's
// files and summary, the report, CommandObjective and the formatting of a Config.
#include <hypertune/command_objective.hpp>
#include <hypertune/hypertune.hpp>
#include <hypertune/report.hpp>
#include <hypertune/strategies/asha.hpp>

#include <string>

namespace ht = hypertune;

int main() {
    ht::SearchSpace space{ht::ContinuousParameter("x", 0.0, 1.0), ht::CategoricalParameter("kind", {"a", "b"})};
    ht::CommandObjective objective({"/bin/echo", "loss={x}", "{kind}"}, {.metrics = {{"loss", "loss=(\\S+)"}}});
    objective.check(space);
    ht::Tuner tuner(space, ht::ASHA({.min_resource = 1, .max_resource = 3}), {.max_jobs = 4});
    ht::Result result = tuner.fit(objective);
    result.to_csv("trials.csv");
    result.to_json("result.json");
    ht::write_report(result, "report.html");
    std::string text = result.summary() + fmt::format("{}", result.best().config);
    return text.empty() ? 1 : 0;
}
