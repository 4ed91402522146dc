// SPDX-License-Identifier: MIT
#pragma once
// How many acquisition candidates the Gaussian-process tests score: fewer in unoptimised and
// sanitizer builds (the CI's ASan run among them), so that the statistical tests stay within
// seconds there; the algorithm under test is the same.

#include <cstddef>

namespace hypertune::testing {

#if !defined(__OPTIMIZE__) || defined(__SANITIZE_ADDRESS__) || defined(HYPERTUNE_TEST_FEW_CANDIDATES)
inline constexpr bool few_candidates = true;
#else
inline constexpr bool few_candidates = false;
#endif

/// `full` candidates in an optimised build, 256 in an unoptimised or sanitizer one.
[[nodiscard]] constexpr std::size_t test_candidates(std::size_t full) { return few_candidates ? 256 : full; }

}  // namespace hypertune::testing
