// SPDX-License-Identifier: MIT
#pragma once
// RankBy: which of a trial's reports ASHA and Hyperband judge it on at a rung. A trainer whose
// validation metric moves from one epoch to the next (SGD on small batches) can be ranked on one
// unlucky epoch at the rung; its best report so far (Optuna's pruners judge a trial on its best
// intermediate value) ranks it on what it has shown it can reach. The trial's result, and what
// the tuner calls its objective, is still the last report (or the objective's return).

namespace hypertune {

enum class RankBy {
    /// The loss reported at the rung's resource (Syne Tune, Ray Tune, the ASHA paper).
    LastReport,
    /// The lowest loss the trial has reported up to the rung (detail/best_reports.hpp).
    BestReport,
};

}  // namespace hypertune
