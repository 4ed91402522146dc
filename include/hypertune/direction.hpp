// SPDX-License-Identifier: MIT
#pragma once
// Whether the objective metric is minimised or maximised. Strategies always minimise a loss; the
// tuner negates a maximised metric for them.

#include <string_view>

namespace hypertune {

enum class Direction { Minimize, Maximize };

[[nodiscard]] inline std::string_view to_string(Direction d) noexcept {
    return d == Direction::Maximize ? "Maximize" : "Minimize";
}

}  // namespace hypertune
