// SPDX-License-Identifier: MIT
#pragma once
// A scrambled Sobol sequence in [0,1)^d, for the Bayesian strategy's initial design and its
// acquisition candidates.
//
// - Direction numbers: Joe and Kuo (2008), new-joe-kuo-6.21201, dimensions 1 to 32 (dimension 1
//   is van der Corput). Coordinates past the 32nd are plain hashed uniforms: still deterministic
//   for a seed, but without the low-discrepancy property.
// - Scrambling: Burley's nested uniform scramble (JCGT 2020), an Owen scramble in base 2 computed
//   from a hash, one seed per dimension. It keeps the (t,m,s)-net structure (every power-of-two
//   prefix stays stratified) and removes the unscrambled sequence's corner point and its poor 2-D
//   projections.
// - Points are a pure function of (seed, index, dimension): no state, any order of access.

#include <hypertune/detail/random.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace hypertune::detail {

class ScrambledSobol {
public:
    /// Dimensions with true Sobol coordinates; later ones are hashed uniforms.
    static constexpr std::size_t sobol_dimensions = 32;

    ScrambledSobol(std::size_t dimensions, std::uint64_t seed) : dimensions_(dimensions), seed_(seed) {
        const std::size_t sobol = dimensions < sobol_dimensions ? dimensions : sobol_dimensions;
        directions_.resize(sobol);
        seeds_.resize(dimensions);
        for (std::size_t j = 0; j < dimensions; ++j)
            seeds_[j] = static_cast<std::uint32_t>(hash3(seed, 0x50b01ULL, j) >> 32);
        if (sobol == 0) return;
        for (int b = 0; b < 32; ++b) directions_[0][static_cast<std::size_t>(b)] = 1U << (31 - b);
        for (std::size_t j = 1; j < sobol; ++j) {
            const Row& row = rows()[j - 1];
            auto& v = directions_[j];
            const int s = row.s;
            for (int b = 0; b < 32; ++b) {
                const auto ub = static_cast<std::size_t>(b);
                if (b < s) {
                    v[ub] = row.m[ub] << (31 - b);
                    continue;
                }
                // Bratley and Fox's recurrence: the polynomial's inner coefficients are the bits of a.
                std::uint32_t x = v[ub - static_cast<std::size_t>(s)];
                x ^= x >> s;
                for (int k = 1; k < s; ++k)
                    if ((row.a >> (s - 1 - k)) & 1U) x ^= v[ub - static_cast<std::size_t>(k)];
                v[ub] = x;
            }
        }
    }

    [[nodiscard]] std::size_t dimensions() const noexcept { return dimensions_; }

    /// Coordinate `dim` of point `index`, in [0, 1).
    [[nodiscard]] double at(std::uint32_t index, std::size_t dim) const noexcept {
        if (dim >= directions_.size()) return to_unit(hash3(seed_, 0x50b02ULL + dim, index));
        return scrambled_unit(unscrambled(index, directions_[dim]), seeds_[dim]);
    }

    /// Coordinate `dim` of the points first, first + 1, ..., first + count - 1 (indices modulo
    /// 2^32), the i-th into out[i * stride]: at() of each, at a fraction of its cost. Going from
    /// index i to i + 1 clears i's trailing ones and sets the zero above them, so the unscrambled
    /// coordinate changes by the exclusive or of those bits' direction numbers, a prefix of them.
    void coordinates(std::uint32_t first, std::size_t count, std::size_t dim, double* out,
                     std::size_t stride) const noexcept {
        if (dim >= directions_.size()) {
            for (std::size_t i = 0; i < count; ++i) out[i * stride] = at(first + static_cast<std::uint32_t>(i), dim);
            return;
        }
        const auto& v = directions_[dim];
        std::array<std::uint32_t, 32> prefix{};  // prefix[t] = v[0] ^ ... ^ v[t]
        std::uint32_t acc = 0;
        for (std::size_t b = 0; b < 32; ++b) prefix[b] = acc ^= v[b];
        std::uint32_t index = first;
        std::uint32_t x = unscrambled(index, v);
        for (std::size_t i = 0; i < count; ++i, ++index) {
            if (i > 0) x ^= prefix[static_cast<std::size_t>(std::min(std::countr_one(index - 1), 31))];
            out[i * stride] = scrambled_unit(x, seeds_[dim]);
        }
    }

    /// Point `index` into `out` (out.size() == dimensions()).
    void point(std::uint32_t index, std::span<double> out) const noexcept {
        for (std::size_t j = 0; j < out.size(); ++j) out[j] = at(index, j);
    }

private:
    struct Row {
        int s;
        std::uint32_t a;
        std::array<std::uint32_t, 7> m;
    };

    // Joe-Kuo rows for dimensions 2..32: degree s, coefficients a, initial m_1..m_s.
    static const std::array<Row, 31>& rows() noexcept {
        static const std::array<Row, 31> table{{
            {1, 0, {1}},
            {2, 1, {1, 3}},
            {3, 1, {1, 3, 1}},
            {3, 2, {1, 1, 1}},
            {4, 1, {1, 1, 3, 3}},
            {4, 4, {1, 3, 5, 13}},
            {5, 2, {1, 1, 5, 5, 17}},
            {5, 4, {1, 1, 5, 5, 5}},
            {5, 7, {1, 1, 7, 11, 19}},
            {5, 11, {1, 1, 5, 1, 1}},
            {5, 13, {1, 1, 1, 3, 11}},
            {5, 14, {1, 3, 5, 5, 31}},
            {6, 1, {1, 3, 3, 9, 7, 49}},
            {6, 13, {1, 1, 1, 15, 21, 21}},
            {6, 16, {1, 3, 1, 13, 27, 49}},
            {6, 19, {1, 1, 1, 15, 7, 5}},
            {6, 22, {1, 3, 1, 15, 13, 25}},
            {6, 25, {1, 1, 5, 5, 19, 61}},
            {7, 1, {1, 3, 7, 11, 23, 15, 103}},
            {7, 4, {1, 3, 7, 13, 13, 15, 69}},
            {7, 7, {1, 1, 3, 13, 7, 35, 63}},
            {7, 8, {1, 3, 5, 9, 1, 25, 53}},
            {7, 14, {1, 3, 1, 13, 9, 35, 107}},
            {7, 19, {1, 3, 1, 5, 27, 61, 31}},
            {7, 21, {1, 1, 5, 11, 19, 41, 61}},
            {7, 28, {1, 3, 5, 3, 3, 13, 69}},
            {7, 31, {1, 1, 7, 13, 1, 19, 1}},
            {7, 32, {1, 3, 7, 5, 13, 19, 59}},
            {7, 37, {1, 1, 3, 9, 25, 29, 41}},
            {7, 41, {1, 3, 5, 13, 23, 1, 55}},
            {7, 42, {1, 3, 7, 3, 13, 59, 17}},
        }};
        return table;
    }

    static constexpr std::uint32_t reverse_bits(std::uint32_t x) noexcept {
        x = ((x >> 1) & 0x55555555U) | ((x & 0x55555555U) << 1);
        x = ((x >> 2) & 0x33333333U) | ((x & 0x33333333U) << 2);
        x = ((x >> 4) & 0x0f0f0f0fU) | ((x & 0x0f0f0f0fU) << 4);
        x = ((x >> 8) & 0x00ff00ffU) | ((x & 0x00ff00ffU) << 8);
        return (x >> 16) | (x << 16);
    }

    // The unscrambled coordinate: the exclusive or of the direction numbers of index's set bits.
    static std::uint32_t unscrambled(std::uint32_t index, const std::array<std::uint32_t, 32>& v) noexcept {
        std::uint32_t x = 0;
        for (std::size_t b = 0; index != 0; ++b, index >>= 1)
            if (index & 1U) x ^= v[b];
        return x;
    }

    // 32 scrambled bits plus a half-cell offset, in [0, 1): never exactly 0, never 1.
    static double scrambled_unit(std::uint32_t x, std::uint32_t seed) noexcept {
        return (static_cast<double>(scramble(x, seed)) + 0.5) * 0x1.0p-32;
    }

    // Laine-Karras permutation on the reversed bits: a bit flips depending only on higher bits.
    static constexpr std::uint32_t scramble(std::uint32_t x, std::uint32_t seed) noexcept {
        x = reverse_bits(x);
        x += seed;
        x ^= x * 0x6c50b47cU;
        x ^= x * 0xb82f1e52U;
        x ^= x * 0xc7afe638U;
        x ^= x * 0x8d22f6e6U;
        return reverse_bits(x);
    }

    std::size_t dimensions_;
    std::uint64_t seed_;
    std::vector<std::array<std::uint32_t, 32>> directions_;
    std::vector<std::uint32_t> seeds_;
};

}  // namespace hypertune::detail
