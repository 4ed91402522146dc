// SPDX-License-Identifier: MIT
// The one doctest main, compiled once (OBJECT library) and linked into every test_<area> executable.

#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
