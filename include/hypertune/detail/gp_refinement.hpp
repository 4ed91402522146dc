// SPDX-License-Identifier: MIT
#pragma once
// The refinement of the Gaussian-process sampler's best candidates: L-BFGS-B (LBFGSpp) over the
// continuous coordinates (GpEncoding::continuous(); the others stay), maximising the acquisition
// (detail/gp_acquisition.hpp) inside the unit cube, or inside a trust region's box, from each of
// the best candidates in turn. The best admissible point evaluated (not within the pending radius,
// detail/gp_exclusion.hpp; in a region, with no coordinate moved onto a face of the cube) wins, if
// it beats the candidates' best value.
//
// The two functions' definitions (and LBFGSpp) are in <hypertune/impl/detail/gp_refinement.hpp>:
// inline in header-only mode, compiled into hypertune::compiled otherwise.

#include <hypertune/detail/gp_acquisition.hpp>
#include <hypertune/detail/gp_candidates.hpp>
#include <hypertune/detail/gp_encoding.hpp>
#include <hypertune/detail/gp_exclusion.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

namespace hypertune::detail {

// L-BFGS-B on the continuous coordinates of u (the others stay), maximising the acquisition, in
// the unit cube or, given `region`, in its box. Replaces u with the best admissible point evaluated
// and returns its value (or `value` when none beat it). In a region, a point that moved a
// coordinate onto a face of the cube is not admissible: expected improvement grows away from the
// data, and a region that reaches a face would otherwise hand the face its polished points (on the
// test functions of bench/peers, up to a third of one run's trials; with the rule the median share
// stays 0).
[[nodiscard]] double refine_candidate(const GpEncoding& encoding, const GpAcquisition& acquisition,
                                      const CandidateExclusion& exclusion, std::vector<double>& u, double value,
                                      const GpRegionBox* region = nullptr);

// The suggestion among candidates `c`: the best of `top` (best_candidates(), best first, not
// empty), or the best point its refinements found. Without continuous coordinates, `top`'s best.
[[nodiscard]] std::vector<double> refine_best(const GpEncoding& encoding, const GpAcquisition& acquisition,
                                              const CandidateExclusion& exclusion, const GpCandidates& c,
                                              const std::vector<std::pair<double, Eigen::Index>>& top,
                                              const GpRegionBox* region = nullptr);

}  // namespace hypertune::detail

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/detail/gp_refinement.hpp>
#endif
