// SPDX-License-Identifier: MIT
#pragma once
// LiveTrials<T>: a scheduler's per-trial state for the trials it has started and not yet forgotten,
// looked up by trial id on every report. The runner hands out ids 0, 1, 2, ... in order
// (Scheduler::ask), and trials end roughly in the order they started, so the live ones form a
// window of ids: a vector indexed by id - base, whose front is dropped as trials are forgotten.
// A lookup is an index, not a hash and a modulo (what std::unordered_map costs on the schedulers'
// report path); memory follows the window from the oldest live trial to the newest, not the run.
// Ids outside the window (never added, or forgotten) are simply not found.

#include <hypertune/types.hpp>

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace hypertune::detail {

template <class T>
class LiveTrials {
public:
    /// The state of trial `id`, or null when it is not live.
    [[nodiscard]] T* find(TrialId id) noexcept {
        if (id < base_ || id - base_ >= slots_.size() - head_) return nullptr;
        auto& slot = slots_[head_ + static_cast<std::size_t>(id - base_)];
        return slot ? &*slot : nullptr;
    }
    [[nodiscard]] const T* find(TrialId id) const noexcept { return const_cast<LiveTrials*>(this)->find(id); }

    /// The state of a live trial; std::out_of_range otherwise (a scheduler's own bookkeeping error).
    [[nodiscard]] T& at(TrialId id) {
        if (T* t = find(id)) return *t;
        throw std::out_of_range("LiveTrials: trial " + std::to_string(id) + " is not live");
    }

    /// Makes trial `id` live with `state` (replacing what it had).
    T& insert(TrialId id, T state) {
        if (live_ == 0) {
            slots_.clear();
            head_ = 0;
            base_ = id;
        }
        if (id < base_) {  // older than the window: grow it at the front
            slots_.insert(slots_.begin() + static_cast<std::ptrdiff_t>(head_), static_cast<std::size_t>(base_ - id),
                          std::nullopt);
            base_ = id;
        }
        const std::size_t k = head_ + static_cast<std::size_t>(id - base_);
        // Ids come one at a time from the runner; a jump this far is a bookkeeping error, refused
        // rather than allocated.
        if (k >= slots_.size() + max_jump)
            throw std::out_of_range("LiveTrials: trial " + std::to_string(id) + " is " +
                                    std::to_string(k - slots_.size()) +
                                    " ids past the newest live trial; trial ids are handed out in order");
        if (k >= slots_.size()) slots_.resize(k + 1);
        auto& slot = slots_[k];
        if (!slot) ++live_;
        slot = std::move(state);
        return *slot;
    }

    /// Forgets trial `id` (nothing when it is not live).
    void erase(TrialId id) noexcept {
        T* t = find(id);
        if (t == nullptr) return;
        slots_[head_ + static_cast<std::size_t>(id - base_)].reset();
        --live_;
        // Drop the forgotten front of the window; compact once it is most of the vector.
        while (head_ < slots_.size() && !slots_[head_]) {
            ++head_;
            ++base_;
        }
        if (head_ >= 64 && head_ * 2 >= slots_.size()) {
            slots_.erase(slots_.begin(), slots_.begin() + static_cast<std::ptrdiff_t>(head_));
            head_ = 0;
        }
    }

    /// How many trials are live.
    [[nodiscard]] std::size_t size() const noexcept { return live_; }

private:
    static constexpr std::size_t max_jump = std::size_t{1} << 20;
    std::vector<std::optional<T>> slots_;  // slots_[head_ + k]: trial base_ + k
    std::size_t head_ = 0;
    TrialId base_ = 0;
    std::size_t live_ = 0;
};

}  // namespace hypertune::detail
