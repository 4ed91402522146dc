// SPDX-License-Identifier: MIT
#pragma once
// SearchSpace: the ordered, uniquely named parameters of a tuning job. Maps configurations to and
// from the unit cube [0,1]^d (d = number of tuned parameters), which is what strategies work in,
// and enumerates grids.

#include <hypertune/linkage.hpp>
#include <hypertune/config.hpp>
#include <hypertune/detail/csv.hpp>
#include <hypertune/error.hpp>
#include <hypertune/parameter.hpp>

#include <fmt/core.h>
#include <nlohmann/json_fwd.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace hypertune {

class SearchSpace {
public:
    SearchSpace() : layout_(std::make_shared<detail::Layout>()) {}

    /// SearchSpace{IntegerParameter("max_depth", 1, 10), ContinuousParameter("eta", 0.0, 1.0)}
    template <Parameter... P>
    explicit SearchSpace(const P&... params) : SearchSpace() {
        (add(params), ...);
    }

    /// The space a configuration was made in (e.g. an earlier run's, for warm start).
    [[nodiscard]] static SearchSpace of(const Config& cfg);

    /// Adds a parameter and returns a typed handle to read it back from a Config.
    template <Parameter P>
    ParameterHandle<typename P::value_type> add(const P& param) {
        return ParameterHandle<typename P::value_type>{add_spec(param.spec())};
    }

    /// Adds a parameter as its description; returns its index. Throws InvalidArgument for a name
    /// already used, or one that Result::to_csv writes as a column of its own.
    std::size_t add_spec(const ParameterSpec& spec);

    /// All parameters, static ones included, in the order they were added.
    [[nodiscard]] std::size_t size() const noexcept { return layout_->size(); }
    /// The number of tuned parameters: the dimension of the unit cube.
    [[nodiscard]] std::size_t dimensions() const noexcept { return tuned_.size(); }
    [[nodiscard]] const std::vector<ParameterSpec>& parameters() const noexcept { return *layout_; }
    [[nodiscard]] const ParameterSpec& parameter(std::size_t i) const { return layout_->at(i); }
    /// The index (into parameters()) of the tuned parameter behind unit-cube coordinate `dim`.
    [[nodiscard]] std::size_t tuned_index(std::size_t dim) const { return tuned_.at(dim); }

    /// Throws InvalidArgument when there is nothing to tune.
    void require_tunable() const;

    /// The configuration at point `u` of the unit cube (u.size() == dimensions()).
    [[nodiscard]] Config decode(std::span<const double> u) const;

    /// The unit-cube point of `cfg` (the centre of the cell for integers and categories).
    [[nodiscard]] std::vector<double> encode(const Config& cfg) const;

    /// Builds a configuration from values given in parameter order, checking each one.
    [[nodiscard]] Config make(std::vector<Value> values) const;

    /// Parses {"name": value, ...}: every parameter must be present, none unknown, each in range.
    /// Static parameters may be omitted (they take their fixed value). Defined in <hypertune/json.hpp>.
    [[nodiscard]] Config from_json(const nlohmann::ordered_json& j) const;

    /// Throws InvalidArgument unless `cfg` was made for a space with the same parameters.
    void check(const Config& cfg) const;

    /// The number of points of a tuned parameter on a grid: all values of integer and categorical
    /// parameters; for a continuous one, points.at(name), spaced evenly in its scaling.
    [[nodiscard]] std::vector<std::size_t> grid_shape(const std::map<std::string, std::size_t>& points = {}) const;

    /// The grid point with mixed-radix index `k` (the first parameter varies slowest). An integer
    /// parameter with fewer points than values takes n distinct values, both ends included.
    [[nodiscard]] Config grid_point(std::span<const std::size_t> shape, std::uint64_t k) const;

    /// The values of each tuned parameter along the grid, worked out once, and the point `k` built
    /// from them: the same configuration as grid_point(shape, k) without working each value out
    /// again (what GridSampler walks). An axis of more than max_tabulated_grid_values integers or
    /// categories is left empty and worked out per point. A continuous parameter's points are
    /// evenly spaced in its scaling and given to 15 significant digits (1e-3, not 0.0010000000000000002).
    static constexpr std::size_t max_tabulated_grid_values = 1 << 16;
    [[nodiscard]] std::vector<std::vector<Value>> grid_axes(std::span<const std::size_t> shape) const;
    [[nodiscard]] Config grid_point(std::span<const std::size_t> shape, const std::vector<std::vector<Value>>& axes,
                                    std::uint64_t k) const;

    /// [{"name": ..., "kind": ..., "min": ..., ...}, ...]: what a journal or report records of the
    /// space. Defined in <hypertune/json.hpp>.
    [[nodiscard]] nlohmann::ordered_json to_json() const;

private:
    // The unit coordinate of the i-th of n distinct values of integer parameter `p` on a grid
    // (grid_point()).
    [[nodiscard, gnu::cold]] static double grid_integer(const ParameterSpec& p, std::size_t n, std::size_t i);
    // The number of points of a valid grid shape (saturating at 2^64 - 1); throws naming the
    // parameter whose count is wrong.
    [[nodiscard]] std::uint64_t grid_size(std::span<const std::size_t> shape) const;
    // The i-th of n grid values of tuned parameter `d`.
    [[nodiscard]] Value grid_value(std::size_t d, std::size_t n, std::size_t i) const;
    std::shared_ptr<const detail::Layout> layout_;
    std::vector<std::size_t> tuned_;
};

}  // namespace hypertune

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/search_space.hpp>
#endif
