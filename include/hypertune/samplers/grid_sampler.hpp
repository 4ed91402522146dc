// SPDX-License-Identifier: MIT
#pragma once
// GridSampler, as in SageMaker AMT's grid search: integer and categorical parameters enumerate all
// their values; a continuous parameter needs an explicit number of points (evenly spaced in its
// scaling, both ends included) or start() refuses. Points come in order, the first parameter
// varying slowest; trial k gets point k, and there are none left after the last point.

#include <hypertune/linkage.hpp>
#include <hypertune/error.hpp>
#include <hypertune/sampler.hpp>
#include <hypertune/search_space.hpp>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hypertune {

class GridSampler final : public Sampler {
public:
    /// Points per parameter: required for continuous parameters; for an integer one it picks an
    /// evenly spaced subset when smaller than its number of values.
    explicit GridSampler(std::map<std::string, std::size_t> points = {}) : points_(std::move(points)) {}

    [[nodiscard]] std::string name() const override { return "Grid"; }
    /// It never looks at losses, so any number of objectives.
    [[nodiscard]] bool supports_objectives(std::size_t) const override { return true; }

    /// Throws InvalidArgument (naming the parameter) for a continuous parameter without points.
    HYPERTUNE_INLINE void start(const SearchSpace& space, const SamplerContext&) override;

    [[nodiscard]] HYPERTUNE_INLINE std::optional<Config> sample(TrialId id) override;
    /// A raised budget: the note on a grid larger than the budget is worded again.
    void on_max_trials(std::size_t max_trials) override { note_budget(max_trials); }

    /// The number of grid points (known after start()).
    [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
    /// The points per parameter, as given ("points": "lr=5, momentum=3").
    [[nodiscard]] HYPERTUNE_INLINE Settings settings() const override;
    /// Said when the budget of new trials is smaller than the grid (it runs the first points).
    [[nodiscard]] std::vector<Note> notes() const override { return notes_; }

private:
    std::map<std::string, std::size_t> points_;
    SearchSpace space_;
    std::vector<std::size_t> shape_;
    std::vector<std::vector<Value>> axes_;  // each tuned parameter's values, worked out once
    std::uint64_t size_ = 0;
    std::vector<Note> notes_;

    // notes_: a note when `max_trials` (0: no limit) runs only the first points of the grid.
    HYPERTUNE_INLINE void note_budget(std::size_t max_trials);
};

}  // namespace hypertune

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/samplers/grid_sampler.hpp>
#endif
