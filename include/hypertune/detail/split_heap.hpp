// SPDX-License-Identifier: MIT
#pragma once
// SplitHeap: a multiset of doubles split into its k smallest and the rest, so that an order
// statistic (the cut-off of a rung, the median of a step) is read in O(1) and kept up to date in
// O(log n). Used by the rungs of successive halving and by the median stopping rule.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <vector>

namespace hypertune::detail {

/// The loss a rung ranks: NaN (a broken report) counts as the worst possible value.
[[nodiscard]] inline double rank_value(double loss) noexcept {
    return std::isnan(loss) ? std::numeric_limits<double>::infinity() : loss;
}

/// A multiset of doubles split into its `k` smallest values (a max-heap) and the rest (a min-heap),
/// so that the k-th smallest value and the median are read in O(1) and an insertion costs O(log n).
/// Changing k by one costs O(log n) too. Values must not be NaN.
class SplitHeap {
public:
    /// Adds `x`, keeping the lower part at its current size.
    void insert(double x) {
        if (!lower_.empty() && x < lower_.front()) {
            push(lower_, x, std::less<>{});
            move_top(lower_, std::less<>{}, upper_, std::greater<>{});
        } else {
            push(upper_, x, std::greater<>{});
        }
    }

    /// Makes the lower part hold the min(k, size()) smallest values.
    void set_lower_size(std::size_t k) {
        while (lower_.size() > k) move_top(lower_, std::less<>{}, upper_, std::greater<>{});
        while (lower_.size() < k && !upper_.empty()) move_top(upper_, std::greater<>{}, lower_, std::less<>{});
    }

    [[nodiscard]] std::size_t size() const noexcept { return lower_.size() + upper_.size(); }
    [[nodiscard]] std::size_t lower_size() const noexcept { return lower_.size(); }
    /// The largest of the lower part: the k-th smallest value. Requires lower_size() > 0.
    [[nodiscard]] double lower_max() const noexcept { return lower_.front(); }
    /// The smallest of the upper part. Requires size() > lower_size().
    [[nodiscard]] double upper_min() const noexcept { return upper_.front(); }

    /// How many values are strictly lower than `x` (a scan: O(n)).
    [[nodiscard]] std::size_t count_below(double x) const noexcept {
        auto below = [x](double v) { return v < x; };
        return static_cast<std::size_t>(std::count_if(lower_.begin(), lower_.end(), below) +
                                        std::count_if(upper_.begin(), upper_.end(), below));
    }

    /// The median (the mean of the two middle values when the size is even). Requires size() > 0.
    [[nodiscard]] double median() {
        set_lower_size((size() + 1) / 2);
        return size() % 2 == 1 ? lower_max() : 0.5 * (lower_max() + upper_min());
    }

private:
    template <class Cmp>
    static void push(std::vector<double>& heap, double x, Cmp cmp) {
        heap.push_back(x);
        std::push_heap(heap.begin(), heap.end(), cmp);
    }
    template <class From, class To>
    static void move_top(std::vector<double>& from, From from_cmp, std::vector<double>& to, To to_cmp) {
        std::pop_heap(from.begin(), from.end(), from_cmp);
        push(to, from.back(), to_cmp);
        from.pop_back();
    }

    std::vector<double> lower_;  // max-heap: the k smallest
    std::vector<double> upper_;  // min-heap: the others
};

}  // namespace hypertune::detail
