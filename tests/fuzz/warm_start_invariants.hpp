// SPDX-License-Identifier: MIT
#pragma once
// A loaded Result as a warm-start parent: prepare_warm_start must either refuse it with a
// hypertune::Error or translate its trials into configurations valid in this run's space.
#include "fuzz_support.hpp"
#include "space_invariants.hpp"

#include <hypertune/result.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/warm_start.hpp>

namespace hypertune::fuzz {

/// A later run's space for the seed runs' parameters (x, k, kind): narrower ranges, a category
/// dropped and one added, a new parameter; so that values get clipped, trials dropped, and
/// IdenticalDataAndAlgorithm refuses while TransferLearning translates.
inline const SearchSpace& changed_seed_space() {
    static const SearchSpace space{ContinuousParameter("x", 0.2, 0.5), IntegerParameter("k", 1, 3),
                                   CategoricalParameter("kind", {"a", "c"}), ContinuousParameter("lr", 1e-4, 1.0)};
    return space;
}

inline void check_warm_start(const Result& parent, const SearchSpace& here) {
    for (auto type : {WarmStartType::IdenticalDataAndAlgorithm, WarmStartType::TransferLearning})
        for (auto outside : {OutsideRange::Clip, OutsideRange::Drop}) {
            WarmStart w{.type = type, .parents = {parent}, .outside_range = outside};
            expect_only_hypertune_errors("prepare_warm_start", [&] {
                auto prepared = prepare_warm_start(w, here, parent.setup().metric, parent.setup().direction);
                require(prepared.observations.size() <= parent.trials().size(),
                        "prepare_warm_start made more observations than the parent has trials");
                for (const auto& o : prepared.observations) require_valid(here, o.config, "warm-start observation");
            });
        }
}

}  // namespace hypertune::fuzz
