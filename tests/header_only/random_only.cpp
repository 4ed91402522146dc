// SPDX-License-Identifier: MIT
// A translation unit that includes <hypertune/hypertune.hpp> but tunes with random search only:
// check_vtables.cmake reads its object file and fails when it holds the virtual functions of a
// scheduler or sampler it never constructs. A class whose virtual functions are defined out of line
// gets its vtable (and every virtual function) compiled wherever the first of them is defined,
// unless each is declared HYPERTUNE_INLINE in the class (see linkage.hpp); header-only mode would
// then compile every scheduler into every file that includes the core.
#include <hypertune/hypertune.hpp>

int random_only() {
    hypertune::SearchSpace space{hypertune::ContinuousParameter("lr", 1e-4, 1.0)};
    hypertune::Tuner tuner(space, hypertune::RandomSearch{}, {.max_jobs = 4, .max_parallel_jobs = 1});
    auto result = tuner.fit([](const hypertune::Config& c) { return c.get<double>("lr"); });
    return result.best().objective > 0 ? 0 : 1;
}
