// SPDX-License-Identifier: MIT
#pragma once
// Boxed<T>: a value of type T held behind a pointer, copied and moved as the value itself, so that
// a class can hold a T its header only declares. Each member is a template, compiled only where
// the class's own special members are defined: there T is complete (for Hyperband and ASHA, in
// impl/, so that a compiled-mode program does not compile their rungs).

#include <memory>
#include <utility>

namespace hypertune::detail {

template <class T>
class Boxed {
public:
    Boxed() : value_(std::make_unique<T>()) {}
    Boxed(const Boxed& other) : value_(std::make_unique<T>(*other.value_)) {}
    // Moves the value into a new box, so that the one moved from stays usable as T's moved-from
    // value would: moves allocate (and may throw).
    Boxed(Boxed&& other) : value_(std::make_unique<T>(std::move(*other.value_))) {}
    Boxed& operator=(const Boxed& other) {
        if (this != &other) *value_ = *other.value_;
        return *this;
    }
    Boxed& operator=(Boxed&& other) {
        if (this != &other) *value_ = std::move(*other.value_);  // a self-move would empty the value
        return *this;
    }
    ~Boxed() = default;

    [[nodiscard]] T& operator*() noexcept { return *value_; }
    [[nodiscard]] const T& operator*() const noexcept { return *value_; }
    [[nodiscard]] T* operator->() noexcept { return value_.get(); }
    [[nodiscard]] const T* operator->() const noexcept { return value_.get(); }

private:
    std::unique_ptr<T> value_;
};

}  // namespace hypertune::detail
