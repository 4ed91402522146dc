// SPDX-License-Identifier: MIT
// hypertune::compiled: ModelBasedSampler, the multi-fidelity sampler of model-based Hyperband
// (ModelBased<Hyperband>, ModelBased<ASHA>; the template stays in the header).
#include <hypertune/impl/strategies/model_based.hpp>
