// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/samplers/random_sampler.hpp>: counter-based uniform sampling.
// Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/samplers/random_sampler.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/detail/random.hpp>
#include <hypertune/detail/unit_point.hpp>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/samplers/random_sampler.hpp> is compiled into hypertune::compiled: include <hypertune/samplers/random_sampler.hpp>"
#endif

namespace hypertune {

HYPERTUNE_INLINE void RandomSampler::start(const SearchSpace& space, const SamplerContext& ctx) {
    space_ = space;
    seed_ = ctx.seed;
}

HYPERTUNE_INLINE Config RandomSampler::sample(const SearchSpace& space, std::uint64_t seed, std::uint64_t k) {
    const auto d = space.dimensions();
    detail::UnitPoint u(d);
    for (std::size_t j = 0; j < d; ++j) u[j] = detail::to_unit(detail::hash3(seed, k, j));
    return space.decode(u.coordinates());
}

}  // namespace hypertune
