// SPDX-License-Identifier: MIT
#pragma once
// RandomSampler: every tuned parameter drawn independently and uniformly in its scaling. Trial k's
// configuration depends only on (seed, k): the same seed gives the same configurations whatever
// the number of parallel workers and whatever order trials finish in. The default sampler of every
// scheduler.

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
    void start(const SearchSpace& space, const SamplerContext& ctx) override {
        space_ = space;
        seed_ = ctx.seed;
    }
    [[nodiscard]] std::optional<Config> sample(TrialId id) override { return sample(space_, seed_, id); }

    /// The configuration that trial `k` of a run seeded with `seed` gets.
    [[nodiscard]] static Config sample(const SearchSpace& space, std::uint64_t seed, std::uint64_t k) {
        constexpr std::size_t small = 16;
        auto d = space.dimensions();
        std::array<double, small> buffer{};
        std::vector<double> heap;
        double* u = buffer.data();
        if (d > small) {
            heap.resize(d);
            u = heap.data();
        }
        for (std::size_t j = 0; j < d; ++j) u[j] = detail::to_unit(detail::hash3(seed, k, j));
        return space.decode({u, d});
    }

private:
    SearchSpace space_;
    std::uint64_t seed_ = 0;
};

}  // namespace hypertune
