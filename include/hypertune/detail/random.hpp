// SPDX-License-Identifier: MIT
#pragma once
// Counter-based randomness: the k-th random number of a stream depends only on (seed, stream, k),
// never on the order in which other numbers were drawn. That is what makes a strategy's trial k
// the same whatever the number of parallel workers.

#include <cstdint>

namespace hypertune::detail {

[[nodiscard]] constexpr std::uint64_t splitmix64(std::uint64_t x) noexcept {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/// A 64-bit hash of (seed, stream, index).
[[nodiscard]] constexpr std::uint64_t hash3(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) noexcept {
    return splitmix64(splitmix64(splitmix64(seed) ^ stream) ^ index);
}

/// A double in [0, 1) from the top 53 bits.
[[nodiscard]] constexpr double to_unit(std::uint64_t bits) noexcept {
    return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

/// Small fast generator for sequential draws within one decision (std::uniform_random_bit_generator).
class SplitMix {
public:
    using result_type = std::uint64_t;
    explicit constexpr SplitMix(std::uint64_t seed) noexcept : state_(seed) {}
    static constexpr result_type min() noexcept { return 0; }
    static constexpr result_type max() noexcept { return ~result_type{0}; }
    constexpr result_type operator()() noexcept {
        state_ += 0x9e3779b97f4a7c15ULL;
        std::uint64_t z = state_;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    constexpr double uniform() noexcept { return to_unit((*this)()); }

private:
    std::uint64_t state_;
};

}  // namespace hypertune::detail
