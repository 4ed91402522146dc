// SPDX-License-Identifier: MIT
#pragma once
// RandomSampler: every tuned parameter drawn independently and uniformly in its scaling. Trial k's
// configuration depends only on (seed, k): the same seed gives the same configurations whatever
// the number of parallel workers and whatever order trials finish in. The default sampler of every
// scheduler.

#include <hypertune/linkage.hpp>
#include <hypertune/detail/random.hpp>
#include <hypertune/sampler.hpp>
#include <hypertune/search_space.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hypertune {

class RandomSampler final : public Sampler {
public:
    [[nodiscard]] std::string name() const override { return "Random"; }
    /// It never looks at losses, so any number of objectives.
    [[nodiscard]] bool supports_objectives(std::size_t) const override { return true; }
    HYPERTUNE_INLINE void start(const SearchSpace& space, const SamplerContext& ctx) override;
    [[nodiscard]] std::optional<Config> sample(TrialId id) override { return sample(space_, seed_, id); }

    /// The configuration that trial `k` of a run seeded with `seed` gets.
    [[nodiscard]] static Config sample(const SearchSpace& space, std::uint64_t seed, std::uint64_t k);

private:
    SearchSpace space_;
    std::uint64_t seed_ = 0;
};

}  // namespace hypertune

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/samplers/random_sampler.hpp>
#endif
