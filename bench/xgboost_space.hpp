// SPDX-License-Identifier: MIT
#pragma once
// The 7-parameter space of the XGBoost use case (SageMaker AMT's Hyperband example), shared by
// the benchmarks so that every figure is measured on the same space.

#include <hypertune/search_space.hpp>

namespace hypertune::bench {

inline SearchSpace xgboost_space() {
    return SearchSpace{IntegerParameter("num_round", 100, 200),       ContinuousParameter("eta", 0.0, 1.0),
                       ContinuousParameter("min_child_weight", 1.0, 10.0), ContinuousParameter("alpha", 0.0, 2.0),
                       IntegerParameter("max_depth", 1, 10),           ContinuousParameter("colsample_bylevel", 0.0, 1.0),
                       ContinuousParameter("colsample_bytree", 0.0, 1.0)};
}

}  // namespace hypertune::bench
