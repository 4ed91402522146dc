// SPDX-License-Identifier: MIT
#pragma once
// The reports of a constrained run that cannot say whether their trial meets the constraints (a
// single value, or metrics without a constrained one): the strategy judges such a trial as if it
// met them, and the run's end says so, with their count over the whole run and the first of them.
// The live run counts them as they come and a resumed run recounts the journal's, by this one
// rule, so that the end of an extended run says what a run of its size from the start would.

#include <hypertune/metrics.hpp>
#include <hypertune/types.hpp>

#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace hypertune::detail {

struct PlainReports {
    std::size_t count = 0;
    TrialId first_trial = 0;
    Resource first_step = 0;
    std::string first_missing;  // the constrained metric the first left out; empty: a single value

    /// Counts trial `trial`'s report at `step` when it is plain: `values` in `metric_names` order
    /// (empty: a single value), a constrained metric NaN when the report left it out.
    void note(const std::vector<Constraint>& constraints, const std::vector<std::string>& metric_names,
              TrialId trial, Resource step, const std::vector<double>& values) {
        if (constraints.empty()) return;
        std::string missing;
        if (!values.empty())
            for (const Constraint& c : constraints)
                for (std::size_t i = 0; i < metric_names.size() && i < values.size(); ++i)
                    if (metric_names[i] == c.metric && std::isnan(values[i]) && missing.empty()) missing = c.metric;
        if (!values.empty() && missing.empty()) return;
        if (count++ == 0) {
            first_trial = trial;
            first_step = step;
            first_missing = std::move(missing);
        }
    }
};

}  // namespace hypertune::detail
