// SPDX-License-Identifier: MIT
// Header-only link test, first translation unit: a journaled run with ASHA (promotion type).
#include "all_headers.hpp"

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

}  // namespace header_only_test
