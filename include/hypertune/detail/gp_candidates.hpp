// SPDX-License-Identifier: MIT
#pragma once
// The Gaussian-process sampler's candidate set for one suggestion: `count` scrambled Sobol points
// (a fresh block of the sequence for every trial) and count / 8 Gaussian perturbations of the
// best results (local_parents(): feasible ones first, then by loss), at six scales from 0.001 to
// 0.3, some along one coordinate only; a categorical coordinate switches to a random value
// instead. A perturbation that leaves the unit cube is reflected back into it, not clamped onto
// its face: clamping put every outward step of a parent near a face exactly on that face, and
// those trials became parents in turn. Every candidate is rounded (GpEncoding::round). The
// acquisition (detail/gp_acquisition.hpp) scores them.

#include <hypertune/detail/gp_encoding.hpp>
#include <hypertune/detail/gp_model_data.hpp>
#include <hypertune/detail/gp_trust_region.hpp>
#include <hypertune/detail/random.hpp>
#include <hypertune/detail/sobol.hpp>
#include <hypertune/parameter.hpp>
#include <hypertune/types.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

namespace hypertune::detail {

// One candidate per row, unit-cube coordinates.
using GpCandidates = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Results whose neighbourhoods the local candidates explore, at most.
inline constexpr std::size_t gp_local_parents = 5;

// A standard normal draw (Box-Muller).
[[nodiscard]] inline double gaussian(SplitMix& rng) {
    const double u1 = std::max(rng.uniform(), 1e-300);
    const double u2 = rng.uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.141592653589793 * u2);
}

// The best min(gp_local_parents, observed) observed points, best first: feasible results first
// (all are, without constraint models), then by loss.
[[nodiscard]] inline std::vector<std::size_t> local_parents(const GpModelPoints& points) {
    const std::size_t parents = std::min(gp_local_parents, points.observed.size());
    std::vector<std::size_t> best_trials = points.observed;
    std::partial_sort(best_trials.begin(), best_trials.begin() + static_cast<std::ptrdiff_t>(parents),
                      best_trials.end(), [&](std::size_t a, std::size_t b) {
                          const bool fa = points[a].feasible(), fb = points[b].feasible();
                          const double la = points[a].loss, lb = points[b].loss;
                          return fa > fb || (fa == fb && (la < lb || (la == lb && a < b)));
                      });
    best_trials.resize(parents);
    return best_trials;
}

// x folded back into [lower, upper] by reflection at its ends (a mirror, period twice the width).
[[nodiscard]] inline double reflect_into(double x, double lower, double upper) {
    const double width = upper - lower;
    if (!(width > 0.0)) return lower;
    double t = std::fmod(std::abs(x - lower) / width, 2.0);
    if (t > 1.0) t = 2.0 - t;
    return lower + t * width;
}

// The candidates of trial `id`: `count` points of `sequence`, then count / 8 perturbations of
// `parents` (none without parents), their draws from `local_stream`. With a trust region
// (detail/gp_trust_region.hpp), the sequence's points fill its box, each coordinate moved from
// the box's centre with its move probability (at least one moved), and perturbations are
// reflected into the box.
[[nodiscard]] inline GpCandidates candidate_set(const GpEncoding& encoding, const ScrambledSobol& sequence, TrialId id,
                                                std::size_t count, const GpModelPoints& points,
                                                const std::vector<std::size_t>& parents, std::uint64_t local_stream,
                                                const GpRegionBox* region = nullptr) {
    const std::size_t dims = encoding.dimensions();
    const auto d = static_cast<Eigen::Index>(dims);
    const std::size_t local = parents.empty() ? 0 : count / 8;
    const auto m = static_cast<Eigen::Index>(count + local);
    GpCandidates c(m, d);

    // the box's sides (a categorical coordinate's is the whole range); the cube without a region
    auto lower = [&](std::size_t j) { return region ? region->lower[j] : 0.0; };
    auto upper = [&](std::size_t j) { return region ? region->upper[j] : 1.0; };
    SplitMix rng(local_stream);

    // Quasi-random candidates: a fresh block of the sequence for every trial (indices modulo 2^32).
    const auto base = static_cast<std::uint32_t>(static_cast<std::uint64_t>(id) * count);
    for (std::size_t j = 0; j < dims; ++j) sequence.coordinates(base, count, j, c.data() + j, dims);
    for (std::size_t i = 0; i < count; ++i) {
        double* row = c.row(static_cast<Eigen::Index>(i)).data();
        if (region) {
            const auto forced = static_cast<std::size_t>(rng.uniform() * static_cast<double>(dims)) % dims;
            for (std::size_t j = 0; j < dims; ++j) {
                const bool moves = j == forced || rng.uniform() < region->move_probability;
                row[j] = moves ? lower(j) + (upper(j) - lower(j)) * row[j] : region->centre[j];
            }
        }
        encoding.round(row);
    }
    // Local candidates around the best results, at several scales, some along one coordinate.
    if (local > 0) {
        // The finest scales give the precision that polishing by gradient gave before (see
        // BayesianOptions::refine) without its slide onto the faces.
        static constexpr double scales[] = {0.001, 0.003, 0.01, 0.03, 0.1, 0.3};
        constexpr std::size_t scale_count = std::size(scales);
        for (std::size_t i = 0; i < local; ++i) {
            double* row = c.row(static_cast<Eigen::Index>(count + i)).data();
            const auto& parent = points[parents[i % parents.size()]].u;
            const double scale = scales[(i / parents.size()) % scale_count];
            const bool one_coordinate = (i / parents.size() / scale_count) % 2 == 1;
            const auto only = static_cast<std::size_t>(rng.uniform() * static_cast<double>(dims));
            for (std::size_t j = 0; j < dims; ++j) {
                const bool moves = !one_coordinate || j == only;
                if (encoding.spec(j).kind == ParameterKind::Categorical) {
                    // no neighbouring values: switch to a random one, more often at larger scales
                    const double switch_probability = std::min(1.0, (one_coordinate ? 3.0 : 1.0) * scale * 2.0);
                    row[j] = moves && rng.uniform() < switch_probability ? rng.uniform() : parent[j];
                    continue;
                }
                const double z = gaussian(rng);  // drawn whether or not the coordinate moves
                const double step = moves ? (one_coordinate ? 3.0 : 1.0) * scale * z : 0.0;
                row[j] = reflect_into(parent[j] + step, lower(j), upper(j));
            }
            encoding.round(row);
        }
    }
    return c;
}

}  // namespace hypertune::detail
