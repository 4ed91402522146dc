// SPDX-License-Identifier: MIT
#pragma once
// UnitPoint: the scratch coordinates of one point of the unit cube, on the stack for the spaces
// people write by hand (up to 16 tuned parameters) and on the heap beyond. Random and grid
// sampling fill one per trial before SearchSpace::decode: a heap vector there cost a malloc and a
// free a trial, about a sixth of grid search's ask + tell.

#include <array>
#include <cstddef>
#include <span>
#include <vector>

namespace hypertune::detail {

class UnitPoint {
public:
    /// `dimensions` coordinates, not initialised: write each before reading it.
    explicit UnitPoint(std::size_t dimensions) : size_(dimensions) {
        if (size_ > small) {
            heap_.resize(size_);
            data_ = heap_.data();
        }
    }
    UnitPoint(const UnitPoint&) = delete;  // data_ may point into the object itself
    UnitPoint& operator=(const UnitPoint&) = delete;

    [[nodiscard]] double& operator[](std::size_t j) noexcept { return data_[j]; }
    [[nodiscard]] std::span<const double> coordinates() const noexcept { return {data_, size_}; }

private:
    static constexpr std::size_t small = 16;
    std::size_t size_;
    std::array<double, small> stack_;
    std::vector<double> heap_;
    double* data_ = stack_.data();
};

}  // namespace hypertune::detail
