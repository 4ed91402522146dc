// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/search_space.hpp>: adding parameters, the unit-cube encoding, checks and grids.
// Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/search_space.hpp>
#include <hypertune/linkage.hpp>
#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/search_space.hpp> is compiled into hypertune::compiled: include <hypertune/search_space.hpp>"
#endif

namespace hypertune {

HYPERTUNE_INLINE SearchSpace SearchSpace::of(const Config& cfg) {
    SearchSpace space;
    auto layout = std::make_shared<detail::Layout>();
    for (std::size_t i = 0; i < cfg.size(); ++i) {
        layout->push_back(cfg.parameter(i));
        if (cfg.parameter(i).tuned()) space.tuned_.push_back(i);
    }
    space.layout_ = std::move(layout);
    return space;
}

HYPERTUNE_INLINE std::size_t SearchSpace::add_spec(const ParameterSpec& given) {
    // A spec may come from a type of the user's own (the Parameter concept) or be written by hand:
    // it gets the checks the library's parameter types make in their constructors.
    const ParameterSpec spec = detail::checked_spec(given);
    for (const auto& p : *layout_)
        if (p.name == spec.name)
            throw InvalidArgument(fmt::format("SearchSpace: parameter '{}' is defined twice", spec.name));
    if (detail::is_csv_column(spec.name))
        throw InvalidArgument(fmt::format("SearchSpace: parameter '{0}' has the name of the CSV column '{0}' that "
                                          "Result::to_csv writes for every trial; rename the parameter",
                                          spec.name));
    // Configs made earlier keep the layout they were made with.
    auto next = std::make_shared<detail::Layout>(*layout_);
    next->push_back(spec);
    layout_ = std::move(next);
    if (spec.tuned()) tuned_.push_back(layout_->size() - 1);
    return layout_->size() - 1;
}

HYPERTUNE_INLINE void SearchSpace::require_tunable() const {
    if (tuned_.empty())
        throw InvalidArgument(layout_->empty() ? "SearchSpace: no parameters"
                                               : "SearchSpace: no tuned parameters (all are static)");
}

HYPERTUNE_INLINE Config SearchSpace::decode(std::span<const double> u) const {
    if (u.size() != tuned_.size())
        throw InvalidArgument(
            fmt::format("SearchSpace::decode: got {} coordinates for {} tuned parameters", u.size(), tuned_.size()));
    std::vector<Value> values;
    values.reserve(layout_->size());
    std::size_t d = 0;
    for (const auto& p : *layout_) values.push_back(p.tuned() ? p.from_unit(u[d++]) : p.fixed);
    return Config(layout_, std::move(values));
}

HYPERTUNE_INLINE std::vector<double> SearchSpace::encode(const Config& cfg) const {
    check(cfg);
    std::vector<double> u;
    u.reserve(tuned_.size());
    for (auto i : tuned_) u.push_back((*layout_)[i].to_unit(cfg.value(i)));
    return u;
}

HYPERTUNE_INLINE Config SearchSpace::make(std::vector<Value> values) const {
    if (values.size() != layout_->size())
        throw InvalidArgument(fmt::format("SearchSpace::make: got {} values for {} parameters", values.size(),
                                          layout_->size()));
    for (std::size_t i = 0; i < values.size(); ++i) {
        const auto& p = (*layout_)[i];
        // Integral reals (from JSON, say) are accepted for integer parameters.
        if (p.kind == ParameterKind::Integer)
            if (auto* x = std::get_if<double>(&values[i]);
                x && std::floor(*x) == *x && std::abs(*x) <= detail::max_exact_integer)
                values[i] = static_cast<std::int64_t>(*x);
        if (p.kind == ParameterKind::Continuous)
            if (auto* x = std::get_if<std::int64_t>(&values[i])) values[i] = static_cast<double>(*x);
        // A static number given as the other kind of number (JSON writes 2.0 as 2), equal to it.
        if (p.kind == ParameterKind::Static && detail::same_value(values[i], p.fixed)) values[i] = p.fixed;
        p.check(values[i]);
    }
    return Config(layout_, std::move(values));
}

HYPERTUNE_INLINE void SearchSpace::check(const Config& cfg) const {
    if (cfg.size() != layout_->size())
        throw InvalidArgument(fmt::format("SearchSpace: the configuration has {} values, the search space {} parameters",
                                          cfg.size(), layout_->size()));
    for (std::size_t i = 0; i < cfg.size(); ++i) {
        if (cfg.name(i) != (*layout_)[i].name)
            throw InvalidArgument(fmt::format("SearchSpace: configuration parameter #{} is '{}', the search space's is '{}'", i,
                                              cfg.name(i), (*layout_)[i].name));
        (*layout_)[i].check(cfg.value(i));
    }
}

HYPERTUNE_INLINE std::vector<std::size_t> SearchSpace::grid_shape(const std::map<std::string, std::size_t>& points) const {
    for (const auto& [name, n] : points) {
        auto it = std::find_if(layout_->begin(), layout_->end(), [&name = name](const auto& p) { return p.name == name; });
        if (it == layout_->end())
            throw InvalidArgument(fmt::format("grid: unknown parameter '{}' in the number of points", name));
        if (n < 1) throw InvalidArgument(fmt::format("grid: parameter '{}' needs at least 1 point", name));
        if (it->kind == ParameterKind::Categorical || it->kind == ParameterKind::Static)
            throw InvalidArgument(fmt::format("grid: parameter '{}' is {}: the grid takes {}, so a number of points "
                                              "applies to integer and continuous parameters only",
                                              name, to_string(it->kind),
                                              it->kind == ParameterKind::Static ? "its one value" : "every category"));
    }
    std::vector<std::size_t> shape;
    for (auto i : tuned_) {
        const auto& p = (*layout_)[i];
        auto it = points.find(p.name);
        switch (p.kind) {
            case ParameterKind::Integer: {
                auto all = static_cast<std::size_t>(p.max - p.min) + 1;
                shape.push_back(it == points.end() ? all : std::min(all, it->second));
                break;
            }
            case ParameterKind::Categorical: shape.push_back(p.categories.size()); break;
            case ParameterKind::Continuous:
                // A range of one value (min == max) is one grid point without being told.
                if (it == points.end() && p.min != p.max)
                    throw InvalidArgument(fmt::format(
                        "grid: ContinuousParameter '{}' needs a number of grid points (GridSearchOptions::points, or "
                        "GridSampler({{{{\"{}\", n}}}}))",
                        p.name, p.name));
                shape.push_back(p.min == p.max ? 1 : it->second);
                break;
            case ParameterKind::Static: break;
        }
    }
    return shape;
}

HYPERTUNE_INLINE std::uint64_t SearchSpace::grid_size(std::span<const std::size_t> shape) const {
    if (shape.size() != tuned_.size())
        throw InvalidArgument(fmt::format("grid: the shape has {} entries for {} tuned parameters (see grid_shape())",
                                          shape.size(), tuned_.size()));
    std::uint64_t points = 1;
    for (std::size_t d = 0; d < shape.size(); ++d) {
        const auto& p = (*layout_)[tuned_[d]];
        const bool finite = p.kind != ParameterKind::Continuous;
        // integers (within +-2^46) and categories (min 0); a continuous range has no count
        const std::uint64_t values = finite ? static_cast<std::uint64_t>(p.max - p.min) + 1 : 0;
        if (shape[d] < 1 || (finite && shape[d] > values))
            throw InvalidArgument(fmt::format("grid: parameter '{}' cannot have {} points{}", p.name, shape[d],
                                              finite ? fmt::format(" (it has {} values)", values) : std::string()));
        points = shape[d] > std::numeric_limits<std::uint64_t>::max() / points
                     ? std::numeric_limits<std::uint64_t>::max()
                     : points * shape[d];
    }
    return points;
}

HYPERTUNE_INLINE Value SearchSpace::grid_value(std::size_t d, std::size_t n, std::size_t i) const {
    const auto& p = (*layout_)[tuned_[d]];
    const bool every_value = p.kind != ParameterKind::Continuous &&
                             (p.kind == ParameterKind::Categorical || n == static_cast<std::size_t>(p.max - p.min) + 1);
    // Every category, or every value of a linear integer (equal slices): each one's centre.
    const bool equal_slices = p.kind == ParameterKind::Categorical || p.scaling == Scaling::Linear;
    double u = 0.0;
    if (n == 1) u = every_value ? 0.5 : 0.0;
    else if (every_value && equal_slices) u = (static_cast<double>(i) + 0.5) / static_cast<double>(n);
    else if (p.kind == ParameterKind::Integer) u = grid_integer(p, n, i);
    else u = static_cast<double>(i) / static_cast<double>(n - 1);  // evenly spaced, both ends included
    Value v = p.from_unit(u);
    // A continuous point is the scaling's arithmetic, off by a rounding of what a user would write
    // (0.0010000000000000002 for the second of 5 points on a logarithmic [1e-4, 1], 0.30000000000000004
    // for 0.3): it is taken to 15 significant digits, which a double holds as written, unless that
    // moves it by more than a thousandth of the way to a neighbouring point (a range narrow for
    // its magnitude, [1, 1 + 4e-15], whose points all rounded to 1).
    if (p.kind == ParameterKind::Continuous) {
        const double raw = std::get<double>(v);
        const double rounded = std::clamp(std::strtod(fmt::format("{:.15g}", raw).c_str(), nullptr), p.min, p.max);
        double gap = std::numeric_limits<double>::infinity();
        for (const std::size_t j : {i - 1, i + 1})
            if (n > 1 && i < n && j < n)  // i - 1 wraps past n at i = 0
                gap = std::min(gap, std::abs(std::get<double>(p.from_unit(static_cast<double>(j) /
                                                                          static_cast<double>(n - 1))) - raw));
        v = std::abs(rounded - raw) <= gap / 1000 ? rounded : raw;
    }
    return v;
}

HYPERTUNE_INLINE Config SearchSpace::grid_point(std::span<const std::size_t> shape, std::uint64_t k) const {
    return grid_point(shape, std::vector<std::vector<Value>>(shape.size()), k);
}

HYPERTUNE_INLINE std::vector<std::vector<Value>> SearchSpace::grid_axes(std::span<const std::size_t> shape) const {
    (void)grid_size(shape);
    std::vector<std::vector<Value>> axes(shape.size());
    for (std::size_t d = 0; d < shape.size(); ++d) {
        // A continuous axis has the points asked for; a whole integer range may be far too long to hold.
        if ((*layout_)[tuned_[d]].kind != ParameterKind::Continuous && shape[d] > max_tabulated_grid_values) continue;
        axes[d].reserve(shape[d]);
        for (std::size_t i = 0; i < shape[d]; ++i) axes[d].push_back(grid_value(d, shape[d], i));
        // More points than a narrow range holds doubles would try one configuration several times.
        for (std::size_t i = 1; i < axes[d].size(); ++i)
            if (axes[d][i] == axes[d][i - 1])
                throw InvalidArgument(fmt::format("grid: ContinuousParameter '{}' [{}, {}] holds fewer than {} distinct "
                                                  "numbers (points {} and {} are both {}): give it fewer points",
                                                  (*layout_)[tuned_[d]].name, (*layout_)[tuned_[d]].min,
                                                  (*layout_)[tuned_[d]].max, shape[d], i - 1, i,
                                                  std::get<double>(axes[d][i])));
    }
    return axes;
}

HYPERTUNE_INLINE Config SearchSpace::grid_point(std::span<const std::size_t> shape,
                                                const std::vector<std::vector<Value>>& axes, std::uint64_t k) const {
    if (axes.size() != shape.size())
        throw InvalidArgument(fmt::format("grid: {} axes for a shape of {} entries (see grid_axes())", axes.size(),
                                          shape.size()));
    const std::uint64_t points = grid_size(shape);
    if (k >= points)
        throw InvalidArgument(fmt::format("grid: point {} is past the grid's {} points", k, points));
    std::vector<Value> values;
    values.reserve(layout_->size());
    for (const auto& p : *layout_) values.push_back(p.fixed);
    for (std::size_t d = shape.size(); d-- > 0;) {
        const std::size_t i = k % shape[d];
        k /= shape[d];
        if (axes[d].empty()) values[tuned_[d]] = grid_value(d, shape[d], i);
        else if (axes[d].size() == shape[d]) values[tuned_[d]] = axes[d][i];
        else
            throw InvalidArgument(fmt::format("grid: axis {} has {} values for {} points (see grid_axes())", d,
                                              axes[d].size(), shape[d]));
    }
    return Config(layout_, std::move(values));
}

// Evenly spaced points of a logarithmic integer range round to the same small values (1, 1, 1, 2,
// 2, 3... on [1, 100] with 20 points). The evenly spaced value is the scaling's between min and
// max themselves (1, 10, 100, 1000 for 4 points on [1, 1000]; the slices that sampling gives each
// integer, [v - 0.5, v + 0.5], would make it 1, 6, 79, 1000). Point i takes i + w_i, w_i = the
// evenly spaced value minus i, kept within [min, max - (n - 1)]: where the scaling's points are denser than the integers
// (a logarithmic range's low end, where the value minus i falls below min) the points are min,
// min + 1, ...; where they are sparser (its slope is 1 or more, and rounding keeps steps of at
// least 1) they are the scaling's own. An integer scaling is linear or logarithmic, whose value
// minus i falls then rises, so w_i never decreases: the n values are distinct, increasing, both
// ends included (with as many points as values, every value once), each in O(1). Declared cold,
// so it stays out of line: inlined, it made every grid point 25% slower (GridSearch ask + tell, 70
// to 88 ns), the other branches included.
HYPERTUNE_INLINE double SearchSpace::grid_integer(const ParameterSpec& p, std::size_t n, std::size_t i) {
    const auto lowest = static_cast<std::int64_t>(p.min);
    const auto highest = static_cast<std::int64_t>(p.max) - static_cast<std::int64_t>(n - 1);
    const double t = static_cast<double>(i) / static_cast<double>(n - 1);
    const auto even = static_cast<std::int64_t>(std::llround(
        p.scaling == Scaling::Logarithmic ? std::exp(std::log(p.min) + t * (std::log(p.max) - std::log(p.min)))
                                          : p.min + t * (p.max - p.min)));
    const auto index = static_cast<std::int64_t>(i);
    return p.to_unit(Value{index + std::min(highest, std::max(lowest, even - index))});
}

}  // namespace hypertune
