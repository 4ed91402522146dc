// SPDX-License-Identifier: MIT
// A translation unit in compiled mode that makes, copies, moves and destroys the schedulers with
// rung structures: check_out_of_line.cmake reads its object file and fails when it defines their
// constructors, special members or any member of the rungs they hold. Defined in the class, these
// are compiled in every such file (the Hyperband compile probe of bench/compile spent a fifth more
// CPU on them); declared in the class and defined in impl/, they are compiled once, into
// hypertune::compiled.
#include <hypertune/hypertune.hpp>

#include <utility>

#ifndef HYPERTUNE_COMPILED
#error "schedulers_out_of_line.cpp checks the compiled mode: link it with hypertune::compiled"
#endif

int schedulers_out_of_line() {
    hypertune::Hyperband hyperband({.max_resource = 27});
    hypertune::Hyperband hyperband_copy = hyperband;
    hyperband_copy = hyperband;
    hypertune::Hyperband hyperband_moved = std::move(hyperband);
    hyperband_moved = std::move(hyperband_copy);
    hypertune::ASHA asha({.max_resource = 27});
    hypertune::ASHA asha_copy = asha;
    asha_copy = asha;
    hypertune::ASHA asha_moved = std::move(asha);
    asha_moved = std::move(asha_copy);
    return hyperband_moved.brackets() + static_cast<int>(asha_moved.name().size());
}
