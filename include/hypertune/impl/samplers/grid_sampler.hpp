// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/samplers/grid_sampler.hpp>: walking the grid.
// Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/samplers/grid_sampler.hpp>
#include <hypertune/linkage.hpp>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/samplers/grid_sampler.hpp> is compiled into hypertune::compiled: include <hypertune/samplers/grid_sampler.hpp>"
#endif

namespace hypertune {

HYPERTUNE_INLINE void GridSampler::start(const SearchSpace& space, const SamplerContext&) {
    space_ = space;
    shape_ = space.grid_shape(points_);
    size_ = 1;
    for (auto n : shape_) {
        if (size_ > std::numeric_limits<std::uint64_t>::max() / n)
            throw InvalidArgument("GridSearch: the grid has more than 2^64 points");
        size_ *= n;
    }
}

HYPERTUNE_INLINE std::optional<Config> GridSampler::sample(TrialId id) {
    if (id >= size_) return std::nullopt;
    return space_.grid_point(shape_, id);
}

}  // namespace hypertune
