// SPDX-License-Identifier: MIT
#pragma once
// The library version. CMakeLists.txt checks at configure time that these numbers match project(VERSION).

#include <string_view>

/// Major version: bumped on incompatible API changes (after 1.0).
#define HYPERTUNE_VERSION_MAJOR 0
/// Minor version: while at 0.x, a minor bump may break the API.
#define HYPERTUNE_VERSION_MINOR 1
/// Patch version: fixes only.
#define HYPERTUNE_VERSION_PATCH 0

/// The version as one comparable number, e.g. 0.1.0 -> 100, 1.2.3 -> 10203.
#define HYPERTUNE_VERSION \
    (HYPERTUNE_VERSION_MAJOR * 10000 + HYPERTUNE_VERSION_MINOR * 100 + HYPERTUNE_VERSION_PATCH)

namespace hypertune {

/// The version as "MAJOR.MINOR.PATCH".
inline constexpr std::string_view version = "0.1.0";

}  // namespace hypertune
