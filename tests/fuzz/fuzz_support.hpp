// SPDX-License-Identifier: MIT
#pragma once
// What the fuzz targets share: a reader that turns the fuzzer's bytes into values, and the rule
// for outcomes. A target may end in a hypertune::Error (the library refused the input with a
// reason); anything else that escapes is a bug, and so is a broken invariant. Both abort, so that
// libFuzzer records the input as a crash and the replay test fails.

#include <hypertune/error.hpp>

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <typeinfo>

namespace hypertune::fuzz {

[[noreturn]] inline void fail(std::string_view what) {
    std::fprintf(stderr, "fuzz target: %.*s\n", static_cast<int>(what.size()), what.data());
    std::fflush(stderr);
    std::abort();
}

inline void require(bool ok, std::string_view what) {
    if (!ok) fail(what);
}

/// Runs `body`; a hypertune::Error is an accepted outcome, any other exception aborts with its type.
template <class F>
void expect_only_hypertune_errors(std::string_view where, F&& body) {
    try {
        body();
    } catch (const hypertune::Error&) {
        // refused with a reason: fine
    } catch (const std::exception& e) {
        fail(fmt::format("{}: exception of type {} escaped (not a hypertune::Error): {}", where, typeid(e).name(),
                         e.what()));
    } catch (...) {
        fail(fmt::format("{}: a non-standard exception escaped", where));
    }
}

/// Consumes the fuzzer's bytes front to back; once they run out every read returns zeros, so a
/// short input is still a complete (if dull) one.
class ByteReader {
public:
    ByteReader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

    [[nodiscard]] bool empty() const noexcept { return pos_ >= size_; }
    [[nodiscard]] std::size_t remaining() const noexcept { return empty() ? 0 : size_ - pos_; }

    std::uint8_t byte() { return empty() ? 0 : data_[pos_++]; }

    template <class T>
    T raw() {
        unsigned char bytes[sizeof(T)] = {};
        for (auto& b : bytes) b = byte();
        T v;
        std::memcpy(&v, bytes, sizeof(T));
        return v;
    }

    /// An index in [0, n), n > 0.
    std::size_t pick(std::size_t n) { return n <= 256 ? byte() % n : raw<std::uint32_t>() % n; }

    bool flag() { return (byte() & 1) != 0; }

    /// Up to `max` bytes as text (its length comes first).
    std::string text(std::size_t max) {
        std::size_t n = std::min<std::size_t>(byte(), max);
        std::string s;
        for (std::size_t i = 0; i < n && !empty(); ++i) s += static_cast<char>(byte());
        return s;
    }

    /// The rest of the input.
    std::string_view rest() {
        if (empty()) return {};
        std::string_view s(reinterpret_cast<const char*>(data_ + pos_), size_ - pos_);
        pos_ = size_;
        return s;
    }

private:
    const std::uint8_t* data_;
    std::size_t size_;
    std::size_t pos_ = 0;
};

}  // namespace hypertune::fuzz
