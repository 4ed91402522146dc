// SPDX-License-Identifier: MIT
#pragma once
// RandomSearch: every tuned parameter drawn independently and uniformly in its scaling.
// Trial k's configuration depends only on (seed, k): the same seed gives the same configurations
// whatever the number of parallel workers and whatever order trials finish in.

#include <hypertune/detail/random.hpp>
#include <hypertune/error.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/strategy.hpp>

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <vector>

namespace hypertune {

struct RandomSearchOptions {
    /// The budget every trial gets (Trial::budget()); set it to the trainer's full length.
    Resource max_resource = 1;
};

class RandomSearch {
public:
    explicit RandomSearch(RandomSearchOptions options = {}) : options_(options) {
        if (options_.max_resource < 1)
            throw InvalidArgument(fmt::format("RandomSearch: max_resource must be >= 1, got {}", options_.max_resource));
    }

    void start(const SearchSpace& space, const StrategyContext& ctx) {
        space.require_tunable();
        space_ = space;
        ctx_ = ctx;
        next_ = 0;
    }

    [[nodiscard]] Suggestion ask() {
        if (ctx_.max_trials != 0 && next_ >= ctx_.max_trials) return Suggestion::done();
        TrialId id = next_++;
        return Suggestion::run(id, sample(space_, ctx_.seed, id), options_.max_resource);
    }

    [[nodiscard]] Decision report(TrialId, Resource, double) { return Decision::Continue; }
    void tell(TrialId, const Outcome&) {}
    [[nodiscard]] std::string name() const { return "RandomSearch"; }
    [[nodiscard]] Resource max_resource() const { return options_.max_resource; }

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
    RandomSearchOptions options_;
    SearchSpace space_;
    StrategyContext ctx_;
    TrialId next_ = 0;
};

}  // namespace hypertune
