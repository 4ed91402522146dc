// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/samplers/grid_sampler.hpp>: walking the grid.
// Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/samplers/grid_sampler.hpp>
#include <hypertune/linkage.hpp>

#include <fmt/format.h>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/samplers/grid_sampler.hpp> is compiled into hypertune::compiled: include <hypertune/samplers/grid_sampler.hpp>"
#endif

namespace hypertune {

HYPERTUNE_INLINE Settings GridSampler::settings() const {
    std::string points;
    for (const auto& [name, n] : points_) points += fmt::format("{}{}={}", points.empty() ? "" : ", ", name, n);
    return {{"points", points}};
}

HYPERTUNE_INLINE void GridSampler::start(const SearchSpace& space, const SamplerContext& ctx) {
    space_ = space;
    shape_ = space.grid_shape(points_);
    axes_ = space.grid_axes(shape_);
    size_ = 1;
    for (auto n : shape_) {
        if (size_ > std::numeric_limits<std::uint64_t>::max() / n)
            throw InvalidArgument("grid: the grid has 2^64 points or more, more than trials can be numbered");
        size_ *= n;
    }
    note_budget(ctx.max_trials);
}

HYPERTUNE_INLINE void GridSampler::note_budget(std::size_t max_trials) {
    // A budget under the grid's size runs its first points only, in mixed-radix order: the first
    // parameters barely move. Said once, so a cut grid is not taken for a searched one.
    notes_.clear();
    if (max_trials > 0 && max_trials < size_ && !shape_.empty()) {
        const std::uint64_t rest = size_ / shape_.front();  // the points per value of the first parameter
        const std::uint64_t reached = (max_trials + rest - 1) / rest;
        notes_.push_back({std::nullopt, fmt::format("the grid has {} points and the budget runs the first {} of them, in "
                                                    "order: '{}' takes {} of its {} values; raise max_jobs to {} or "
                                                    "give fewer points",
                                                    size_, max_trials, space_.parameter(space_.tuned_index(0)).name,
                                                    reached, shape_.front(), size_)});
    }
}

HYPERTUNE_INLINE std::optional<Config> GridSampler::sample(TrialId id) {
    if (id >= size_) return std::nullopt;
    return space_.grid_point(shape_, axes_, id);
}

}  // namespace hypertune
