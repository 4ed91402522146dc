// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/config.hpp>: finding a parameter by name.
// Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/config.hpp>
#include <hypertune/linkage.hpp>
#include <fmt/format.h>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/config.hpp> is compiled into hypertune::compiled: include <hypertune/config.hpp>"
#endif

namespace hypertune {

HYPERTUNE_INLINE std::size_t Config::index_of(std::string_view name) const {
    auto i = find(name);
    if (i == npos) {
        std::string known;
        for (std::size_t j = 0; j < values_.size(); ++j)
            known += fmt::format("{}'{}'", j ? ", " : "", (*layout_)[j].name);
        throw InvalidArgument(fmt::format("Config: unknown parameter '{}' (known: {})", name, known));
    }
    return i;
}

}  // namespace hypertune
