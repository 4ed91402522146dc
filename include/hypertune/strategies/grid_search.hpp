// SPDX-License-Identifier: MIT
#pragma once
// GridSearch, as in SageMaker AMT: integer and categorical parameters enumerate all their values;
// a continuous parameter needs an explicit number of points (evenly spaced in its scaling, both
// ends included) or the search refuses to start. Points come in order, the first parameter
// varying slowest; the run ends when the grid (or max_trials) is exhausted.

#include <hypertune/error.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/strategy.hpp>

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace hypertune {

struct GridSearchOptions {
    /// Points per parameter: required for continuous parameters; for an integer one it picks an
    /// evenly spaced subset when smaller than its number of values.
    std::map<std::string, std::size_t> points;
    /// The budget every trial gets (Trial::budget()).
    Resource max_resource = 1;
};

class GridSearch {
public:
    explicit GridSearch(GridSearchOptions options = {}) : options_(std::move(options)) {
        if (options_.max_resource < 1)
            throw InvalidArgument(fmt::format("GridSearch: max_resource must be >= 1, got {}", options_.max_resource));
    }

    void start(const SearchSpace& space, const StrategyContext& ctx) {
        space.require_tunable();
        space_ = space;
        ctx_ = ctx;
        shape_ = space.grid_shape(options_.points);
        size_ = 1;
        for (auto n : shape_) {
            if (size_ > std::numeric_limits<std::uint64_t>::max() / n)
                throw InvalidArgument("GridSearch: the grid has more than 2^64 points");
            size_ *= n;
        }
        next_ = 0;
    }

    [[nodiscard]] Suggestion ask() {
        if (next_ >= size_ || (ctx_.max_trials != 0 && next_ >= ctx_.max_trials)) return Suggestion::done();
        TrialId id = next_++;
        return Suggestion::run(id, space_.grid_point(shape_, id), options_.max_resource);
    }

    [[nodiscard]] Decision report(TrialId, Resource, double) { return Decision::Continue; }
    void tell(TrialId, const Outcome&) {}
    [[nodiscard]] std::string name() const { return "GridSearch"; }
    [[nodiscard]] Resource max_resource() const { return options_.max_resource; }

    /// The number of grid points (known after start()).
    [[nodiscard]] std::uint64_t size() const noexcept { return size_; }

private:
    GridSearchOptions options_;
    SearchSpace space_;
    StrategyContext ctx_;
    std::vector<std::size_t> shape_;
    std::uint64_t size_ = 0;
    std::uint64_t next_ = 0;
};

}  // namespace hypertune
