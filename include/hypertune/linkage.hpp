// SPDX-License-Identifier: MIT
#pragma once
// The two build modes. Header-only (the default): every definition is in the headers, marked
// inline, and compiled in each translation unit that uses it. Compiled: a program that links the
// CMake target hypertune::compiled gets HYPERTUNE_COMPILED defined, the heavy non-template
// definitions (the runner, results, JSON, report, Gaussian process, parameters and search space,
// samplers and schedulers, CommandObjective) are compiled once into that library, and its
// translation units only see their declarations, as fmt's and spdlog's compiled modes do.
// ModelBased and mpi.hpp are not in the library yet.
//
// A header <hypertune/X.hpp> that has such definitions declares them and, in header-only mode,
// includes <hypertune/impl/X.hpp> at its end, where they are written as
// `HYPERTUNE_INLINE <declaration> { ... }`.

#ifdef HYPERTUNE_COMPILED
#define HYPERTUNE_INLINE
#else
#define HYPERTUNE_INLINE inline
#endif

// Each impl/ header refuses to be included by a program in compiled mode (its functions would
// then be defined twice): only the library's sources, which define HYPERTUNE_BUILDING_LIBRARY,
// include them there.
