// SPDX-License-Identifier: MIT
// The program every package consumption test builds against hypertune (add_subdirectory,
// FetchContent, find_package from the install prefix and from the build tree): it tunes a lambda
// with 4 parallel jobs and writes trials.csv, then failures.csv from trials that fail with a
// message in Latin-1 (as a trainer's stderr may be), which pandas must read too. It must exit 0
// and print what HYPERTUNE_CONSUMER_EXPECT in tests/cmake/CMakeLists.txt expects.

#include <hypertune/hypertune.hpp>

#include <stdexcept>

int main() {
    namespace ht = hypertune;
    ht::SearchSpace space{ht::ContinuousParameter("x", -2.0, 2.0), ht::IntegerParameter("n", 1, 8),
                          ht::CategoricalParameter("kind", {"a", "b"})};
    ht::Tuner tuner(space, ht::RandomSearch(), {.max_jobs = 40, .max_parallel_jobs = 4, .seed = 1});
    auto result = tuner.fit([](const ht::Config& c) {
        double x = c.get<double>("x");
        return x * x + 0.1 * c.get<int>("n") + (c.get<std::string>("kind") == "b" ? 0.5 : 0.0);
    });
    result.to_csv("trials.csv");
    ht::Tuner failing(ht::SearchSpace{ht::ContinuousParameter("x", 0.0, 1.0)}, ht::RandomSearch(), {.max_jobs = 3});
    auto failures = failing.fit([](const ht::Config&) -> double { throw std::runtime_error("r\xE9sultat invalide"); });
    failures.to_csv("failures.csv");
    fmt::print("hypertune {} tuned {} trials, best {:.4f}\n", ht::version, result.trials().size(),
               result.best().objective);
    return result.trials().size() == 40 ? 0 : 1;
}
