// SPDX-License-Identifier: MIT
#pragma once
// The two build modes. Header-only (the default): every definition is in the headers, marked
// inline, and compiled in each translation unit that uses it. Compiled: a program that links the
// CMake target hypertune::compiled gets HYPERTUNE_COMPILED defined, the heavy non-template
// definitions (the runner, results, JSON, report, Gaussian process, parameters and search space,
// samplers and schedulers, ModelBasedSampler, CommandObjective) are compiled once into that
// library, and its translation units only see their declarations, as fmt's and spdlog's compiled
// modes do.
//
// hypertune::mpi (mpi.hpp, mpi/*.hpp) needs MPI, so it has a library and a switch of its own: a
// program that links the CMake target hypertune::compiled_mpi (built when CMake finds MPI; it links
// hypertune::compiled and MPI) gets HYPERTUNE_COMPILED_MPI defined and the MPI part's definitions
// from that library. Any other program, in either mode, compiles them inline from the headers.
//
// A header <hypertune/X.hpp> that has such definitions declares them and, in header-only mode,
// includes <hypertune/impl/X.hpp> at its end, where they are written as
// `HYPERTUNE_INLINE <declaration> { ... }`.

// Concepts, designated initialisers, std::span...: an older standard is refused here by name
// (pkg-config's flags leave the standard to the user).
#if defined(_MSVC_LANG)
#if _MSVC_LANG < 202002L
#error "hypertune needs C++20 or later: compile with /std:c++20"
#endif
#elif __cplusplus < 202002L
#error "hypertune needs C++20 or later: compile with -std=c++20"
#endif

#ifdef HYPERTUNE_COMPILED
#define HYPERTUNE_INLINE
#else
#define HYPERTUNE_INLINE inline
#endif

// The same for the definitions of hypertune::mpi, in <hypertune/impl/mpi/...> and
// <hypertune/impl/mpi.hpp>.
#ifdef HYPERTUNE_COMPILED_MPI
#define HYPERTUNE_MPI_INLINE
#else
#define HYPERTUNE_MPI_INLINE inline
#endif

// Each impl/ header refuses to be included by a program in compiled mode (its functions would
// then be defined twice): only the library's sources, which define HYPERTUNE_BUILDING_LIBRARY,
// include them there.
