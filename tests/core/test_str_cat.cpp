// SPDX-License-Identifier: MIT
// str_cat, the schedulers' writer of decision reasons: the same text fmt::format gives for text and
// integers of every width and sign, including their extremes.
#include <hypertune/detail/str_cat.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace ht = hypertune;

TEST_CASE("str_cat writes text and integers as fmt::format does") {
    using ht::detail::str_cat;
    CHECK(str_cat({}).empty());
    CHECK(str_cat({""}).empty());
    CHECK(str_cat({"not in the top 1/", 3, " (", std::size_t{5}, " of ", std::size_t{16}, ") at resource ",
                   std::int64_t{9}, ""}) == "not in the top 1/3 (5 of 16) at resource 9");
    const std::string owned = "why";
    const std::string_view view = "view";
    CHECK(str_cat({owned, ": ", view, " ", 0}) == "why: view 0");

    CHECK(str_cat({std::numeric_limits<std::int64_t>::min()}) == fmt::format("{}", std::numeric_limits<std::int64_t>::min()));
    CHECK(str_cat({std::numeric_limits<std::uint64_t>::max()}) == fmt::format("{}", std::numeric_limits<std::uint64_t>::max()));
    CHECK(str_cat({std::numeric_limits<int>::min(), "|", std::numeric_limits<unsigned short>::max()}) ==
          fmt::format("{}|{}", std::numeric_limits<int>::min(), std::numeric_limits<unsigned short>::max()));

    std::mt19937_64 rng(11);
    for (int i = 0; i < 1000; ++i) {
        const auto a = static_cast<std::int64_t>(rng());
        const auto b = static_cast<std::uint64_t>(rng() >> (rng() % 64));
        const auto c = static_cast<int>(rng() % 2001) - 1000;
        CHECK(str_cat({"a=", a, ", b=", b, ", c=", c}) == fmt::format("a={}, b={}, c={}", a, b, c));
    }
}

TEST_CASE("a str_cat piece holding digits stays valid when copied") {
    // The digits live inside the piece: a copy must read its own, not the original's.
    std::vector<ht::detail::TextPiece> pieces;
    for (int k = 0; k < 40; ++k) pieces.emplace_back(k * 1000);  // the vector reallocates: every piece moves
    for (int k = 0; k < 40; ++k) CHECK(pieces[static_cast<std::size_t>(k)].view() == std::to_string(k * 1000));
}
