// SPDX-License-Identifier: MIT
// hypertune::compiled: the Gaussian-process sampler (Eigen and L-BFGS-B stay in here).
#include <hypertune/impl/strategies/bayesian.hpp>
