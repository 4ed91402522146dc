// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/detail/gp_refinement.hpp>: L-BFGS-B over a candidate's continuous
// coordinates. Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/detail/gp_refinement.hpp>
#include <hypertune/linkage.hpp>

#include <LBFGSB.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <exception>
#include <utility>
#include <vector>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/detail/gp_refinement.hpp> is compiled into hypertune::compiled: include <hypertune/detail/gp_refinement.hpp>"
#endif

namespace hypertune::detail {

HYPERTUNE_INLINE double refine_candidate(const GpEncoding& encoding, const GpAcquisition& acquisition,
                                         const CandidateExclusion& exclusion, std::vector<double>& u, double value,
                                         const GpRegionBox* region) {
    const std::vector<std::size_t>& continuous = encoding.continuous();
    const auto k = static_cast<Eigen::Index>(continuous.size());
    struct Objective {
        const GpEncoding& encoding;
        const GpAcquisition& acquisition;
        const CandidateExclusion& exclusion;
        Eigen::VectorXd full;
        double best_value;
        Eigen::VectorXd best_point;
        Eigen::VectorXd features;
        const Eigen::VectorXd* start = nullptr;  // set (in a region): no coordinate may move onto a face
        // Within a millionth of the range of a face counts as on it: L-BFGS-B's projection leaves
        // coordinates a rounding error inside the bound (1e-17 away), which maps to the bound itself.
        [[nodiscard]] bool onto_face(const Eigen::VectorXd& z) const {
            if (!start) return false;
            constexpr double hair = 1e-6;
            const auto at_face = [](double v) { return v <= hair || v >= 1.0 - hair; };
            for (Eigen::Index i = 0; i < z.size(); ++i)
                if (at_face(z[i]) && !at_face((*start)[i])) return true;
            return false;
        }
        double operator()(const Eigen::VectorXd& z, Eigen::VectorXd& grad) {
            const std::vector<std::size_t>& coordinates = encoding.continuous();
            for (Eigen::Index i = 0; i < z.size(); ++i)
                full[static_cast<Eigen::Index>(coordinates[static_cast<std::size_t>(i)])] = z[i];
            encoding.to_features(full.data(), features.data());
            Eigen::VectorXd g;
            const double value = acquisition.at(features, g);
            grad.resize(z.size());
            for (Eigen::Index i = 0; i < z.size(); ++i)
                grad[i] = -encoding.unit_gradient(g, static_cast<std::size_t>(i));
            if (!std::isfinite(value) || !grad.allFinite()) {
                grad.setZero();
                return 1e300;
            }
            if (value > best_value && !exclusion.near_pending(full.data()) && !onto_face(z)) {
                best_value = value;
                best_point = full;
            }
            return -value;
        }
    };
    Eigen::VectorXd full = Eigen::Map<const Eigen::VectorXd>(u.data(), static_cast<Eigen::Index>(u.size()));
    Objective objective{encoding, acquisition, exclusion, full, value, Eigen::VectorXd(),
                        Eigen::VectorXd(static_cast<Eigen::Index>(encoding.features()))};
    Eigen::VectorXd z(k);
    for (Eigen::Index i = 0; i < k; ++i) z[i] = u[continuous[static_cast<std::size_t>(i)]];
    // In a region, its box bounds the search and the candidate's own coordinates say which faces
    // of the cube it may keep (onto_face).
    const Eigen::VectorXd z_start = z;
    Eigen::VectorXd lower = Eigen::VectorXd::Zero(k), upper = Eigen::VectorXd::Ones(k);
    if (region) {
        for (Eigen::Index i = 0; i < k; ++i) {
            lower[i] = region->lower[continuous[static_cast<std::size_t>(i)]];
            upper[i] = region->upper[continuous[static_cast<std::size_t>(i)]];
            z[i] = std::clamp(z[i], lower[i], upper[i]);
        }
        objective.start = &z_start;
    }
    LBFGSpp::LBFGSBParam<double> param;
    param.max_iterations = 15;
    param.epsilon = 1e-6;
    param.max_linesearch = 20;
    LBFGSpp::LBFGSBSolver<double> solver(param);
    double fx = 0.0;
    try {
        (void)solver.minimize(objective, z, fx, lower, upper);
    } catch (const std::exception&) {
        // a failed line search: the best point seen still counts
    }
    if (objective.best_point.size() == 0) return value;
    u.assign(objective.best_point.data(), objective.best_point.data() + objective.best_point.size());
    return objective.best_value;
}

HYPERTUNE_INLINE std::vector<double> refine_best(const GpEncoding& encoding, const GpAcquisition& acquisition,
                                                 const CandidateExclusion& exclusion, const GpCandidates& c,
                                                 const std::vector<std::pair<double, Eigen::Index>>& top,
                                                 const GpRegionBox* region) {
    const std::size_t dims = encoding.dimensions();
    std::vector<double> winner(c.row(top.front().second).data(), c.row(top.front().second).data() + dims);
    double winner_value = top.front().first;
    if (!encoding.continuous().empty()) {
        for (const auto& [value, i] : top) {
            std::vector<double> u(c.row(i).data(), c.row(i).data() + dims);
            double refined = refine_candidate(encoding, acquisition, exclusion, u, value, region);
            if (refined > winner_value) {
                winner_value = refined;
                winner = u;
            }
        }
    }
    return winner;
}

}  // namespace hypertune::detail
