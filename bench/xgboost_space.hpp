// SPDX-License-Identifier: MIT
#pragma once
// The 7-parameter space of the XGBoost use case (SageMaker AMT's Hyperband example), shared by
// the benchmarks so that every figure is measured on the same space, and a synthetic loss on it for
// the overhead benchmarks (bench_bayesian, peer_functions --overhead; optuna_overhead.py has its
// Python twin).

#include <hypertune/config.hpp>
#include <hypertune/search_space.hpp>

#include <cmath>

namespace hypertune::bench {

inline SearchSpace xgboost_space() {
    return SearchSpace{IntegerParameter("num_round", 100, 200),       ContinuousParameter("eta", 0.0, 1.0),
                       ContinuousParameter("min_child_weight", 1.0, 10.0), ContinuousParameter("alpha", 0.0, 2.0),
                       IntegerParameter("max_depth", 1, 10),           ContinuousParameter("colsample_bylevel", 0.0, 1.0),
                       ContinuousParameter("colsample_bytree", 0.0, 1.0)};
}

// Smooth, with an interaction: stands in for a validation loss on xgboost_space().
inline double synthetic_loss(const Config& c) {
    const double eta = c.get<double>("eta");
    const double depth = c.get<int>("max_depth");
    const double rounds = c.get<int>("num_round");
    const double mcw = c.get<double>("min_child_weight");
    const double alpha = c.get<double>("alpha");
    const double lvl = c.get<double>("colsample_bylevel");
    const double tree = c.get<double>("colsample_bytree");
    return std::pow(std::log(eta + 1e-3) + 2.0, 2) + 0.05 * (depth - 6) * (depth - 6) + 0.3 * (rounds - 150) / 50.0 * eta +
           0.02 * (mcw - 3) * (mcw - 3) + 0.1 * alpha + 0.5 * (lvl - 0.7) * (lvl - 0.7) + 0.5 * (tree - 0.8) * (tree - 0.8);
}

}  // namespace hypertune::bench
