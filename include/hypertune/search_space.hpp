// SPDX-License-Identifier: MIT
#pragma once
// SearchSpace: the ordered, uniquely named parameters of a tuning job. Maps configurations to and
// from the unit cube [0,1]^d (d = number of tuned parameters), which is what strategies work in,
// and enumerates grids.

#include <hypertune/config.hpp>
#include <hypertune/detail/csv.hpp>
#include <hypertune/error.hpp>
#include <hypertune/parameter.hpp>

#include <fmt/format.h>
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
    [[nodiscard]] static SearchSpace of(const Config& cfg) {
        SearchSpace space;
        auto layout = std::make_shared<detail::Layout>();
        for (std::size_t i = 0; i < cfg.size(); ++i) {
            layout->push_back(cfg.parameter(i));
            if (cfg.parameter(i).tuned()) space.tuned_.push_back(i);
        }
        space.layout_ = std::move(layout);
        return space;
    }

    /// Adds a parameter and returns a typed handle to read it back from a Config.
    template <Parameter P>
    ParameterHandle<typename P::value_type> add(const P& param) {
        const ParameterSpec& spec = param.spec();
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
        return ParameterHandle<typename P::value_type>{layout_->size() - 1};
    }

    /// All parameters, static ones included, in the order they were added.
    [[nodiscard]] std::size_t size() const noexcept { return layout_->size(); }
    /// The number of tuned parameters: the dimension of the unit cube.
    [[nodiscard]] std::size_t dimensions() const noexcept { return tuned_.size(); }
    [[nodiscard]] const std::vector<ParameterSpec>& parameters() const noexcept { return *layout_; }
    [[nodiscard]] const ParameterSpec& parameter(std::size_t i) const { return layout_->at(i); }
    /// The index (into parameters()) of the tuned parameter behind unit-cube coordinate `dim`.
    [[nodiscard]] std::size_t tuned_index(std::size_t dim) const { return tuned_.at(dim); }

    /// Throws InvalidArgument when there is nothing to tune.
    void require_tunable() const {
        if (tuned_.empty())
            throw InvalidArgument(layout_->empty() ? "SearchSpace: no parameters"
                                                   : "SearchSpace: no tuned parameters (all are static)");
    }

    /// The configuration at point `u` of the unit cube (u.size() == dimensions()).
    [[nodiscard]] Config decode(std::span<const double> u) const {
        if (u.size() != tuned_.size())
            throw InvalidArgument(
                fmt::format("SearchSpace::decode: got {} coordinates for {} tuned parameters", u.size(), tuned_.size()));
        std::vector<Value> values;
        values.reserve(layout_->size());
        std::size_t d = 0;
        for (const auto& p : *layout_) values.push_back(p.tuned() ? p.from_unit(u[d++]) : p.fixed);
        return Config(layout_, std::move(values));
    }

    /// The unit-cube point of `cfg` (the centre of the cell for integers and categories).
    [[nodiscard]] std::vector<double> encode(const Config& cfg) const {
        check(cfg);
        std::vector<double> u;
        u.reserve(tuned_.size());
        for (auto i : tuned_) u.push_back((*layout_)[i].to_unit(cfg.value(i)));
        return u;
    }

    /// Builds a configuration from values given in parameter order, checking each one.
    [[nodiscard]] Config make(std::vector<Value> values) const {
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
            p.check(values[i]);
        }
        return Config(layout_, std::move(values));
    }

    /// Parses {"name": value, ...}: every parameter must be present, none unknown, each in range.
    /// Static parameters may be omitted (they take their fixed value). Defined in <hypertune/json.hpp>.
    [[nodiscard]] Config from_json(const nlohmann::json& j) const;

    /// Throws InvalidArgument unless `cfg` was made for a space with the same parameters.
    void check(const Config& cfg) const {
        if (cfg.size() != layout_->size())
            throw InvalidArgument(fmt::format("configuration has {} values, the search space {} parameters",
                                              cfg.size(), layout_->size()));
        for (std::size_t i = 0; i < cfg.size(); ++i) {
            if (cfg.name(i) != (*layout_)[i].name)
                throw InvalidArgument(fmt::format("configuration parameter #{} is '{}', the search space's is '{}'", i,
                                                  cfg.name(i), (*layout_)[i].name));
            (*layout_)[i].check(cfg.value(i));
        }
    }

    /// The number of points of a tuned parameter on a grid: all values of integer and categorical
    /// parameters; for a continuous one, points.at(name), spaced evenly in its scaling.
    [[nodiscard]] std::vector<std::size_t> grid_shape(const std::map<std::string, std::size_t>& points = {}) const {
        for (const auto& [name, n] : points) {
            auto it = std::find_if(layout_->begin(), layout_->end(), [&name = name](const auto& p) { return p.name == name; });
            if (it == layout_->end())
                throw InvalidArgument(fmt::format("grid: unknown parameter '{}' in the number of points", name));
            if (n < 1) throw InvalidArgument(fmt::format("grid: parameter '{}' needs at least 1 point", name));
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
                    if (it == points.end())
                        throw InvalidArgument(fmt::format(
                            "grid: ContinuousParameter '{}' needs a number of grid points (GridSearchOptions::points)",
                            p.name));
                    shape.push_back(p.min == p.max ? 1 : it->second);
                    break;
                case ParameterKind::Static: break;
            }
        }
        return shape;
    }

    /// The grid point with mixed-radix index `k` (the first parameter varies slowest).
    [[nodiscard]] Config grid_point(std::span<const std::size_t> shape, std::uint64_t k) const {
        std::vector<double> u(shape.size());
        for (std::size_t d = shape.size(); d-- > 0;) {
            auto n = shape[d];
            auto i = k % n;
            k /= n;
            const auto& p = (*layout_)[tuned_[d]];
            bool every_value = p.kind != ParameterKind::Continuous &&
                               (p.kind == ParameterKind::Categorical || n == static_cast<std::size_t>(p.max - p.min) + 1);
            if (n == 1) u[d] = every_value ? 0.5 : 0.0;
            else if (every_value) u[d] = (static_cast<double>(i) + 0.5) / static_cast<double>(n);  // each cell's centre
            else u[d] = static_cast<double>(i) / static_cast<double>(n - 1);  // evenly spaced, both ends included
        }
        return decode(u);
    }

    /// [{"name": ..., "kind": ..., "min": ..., ...}, ...]: what a journal or report records of the
    /// space. Defined in <hypertune/json.hpp>.
    [[nodiscard]] nlohmann::ordered_json to_json() const;

private:
    std::shared_ptr<const detail::Layout> layout_;
    std::vector<std::size_t> tuned_;
};

}  // namespace hypertune
