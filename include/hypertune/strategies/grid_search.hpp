// SPDX-License-Identifier: MIT
#pragma once
// GridSearch, as in SageMaker AMT: every trial runs to its full resource, configurations from
// GridSampler (integer and categorical parameters enumerate all their values; a continuous one
// needs an explicit number of points, or the search refuses to start). Points come in order, the
// first parameter varying slowest; the run ends when the grid (or max_trials) is exhausted.

#include <hypertune/samplers/grid_sampler.hpp>
#include <hypertune/scheduler.hpp>

#include <cstdint>
#include <map>
#include <string>

namespace hypertune {

struct GridSearchOptions {
    /// Points per parameter: required for continuous parameters; for an integer one it picks an
    /// evenly spaced subset when smaller than its number of values.
    std::map<std::string, std::size_t> points;
    /// The budget every trial gets (Trial::budget()).
    Resource max_resource = 1;
};

class GridSearch final : public RunToCompletion {
public:
    /// Throws InvalidArgument unless max_resource >= 1.
    explicit GridSearch(GridSearchOptions options = {})
        : RunToCompletion("GridSearch", options.max_resource, GridSampler(std::move(options.points))) {}

    /// The number of grid points (known after start()).
    [[nodiscard]] std::uint64_t size() const noexcept { return static_cast<const GridSampler&>(*sampler()).size(); }
};

}  // namespace hypertune
