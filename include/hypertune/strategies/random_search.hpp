// SPDX-License-Identifier: MIT
#pragma once
// RandomSearch: every trial runs to its full resource with a configuration drawn by RandomSampler
// (each tuned parameter independently and uniformly in its scaling). Trial k's configuration
// depends only on (seed, k): the same seed gives the same configurations whatever the number of
// parallel workers and whatever order trials finish in.

#include <hypertune/samplers/random_sampler.hpp>
#include <hypertune/scheduler.hpp>

#include <cstdint>
#include <string>

namespace hypertune {

struct RandomSearchOptions {
    /// The budget every trial gets (Trial::budget()); set it to the trainer's full length.
    Resource max_resource = 1;
};

class RandomSearch final : public RunToCompletion {
public:
    /// Throws InvalidArgument unless max_resource >= 1.
    explicit RandomSearch(RandomSearchOptions options = {})
        : RunToCompletion("RandomSearch", options.max_resource, RandomSampler{}) {}

    /// The configuration that trial `k` of a run seeded with `seed` gets.
    [[nodiscard]] static Config sample(const SearchSpace& space, std::uint64_t seed, std::uint64_t k) {
        return RandomSampler::sample(space, seed, k);
    }
};

}  // namespace hypertune
