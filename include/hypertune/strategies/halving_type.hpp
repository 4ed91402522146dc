// SPDX-License-Identifier: MIT
#pragma once
// HalvingType: how ASHA and asynchronous Hyperband act on their rungs (Syne Tune's `type`).
// Promotion is the default, chosen by measurement (bench/harness_recorded, README "Recorded learning
// curves"): on recorded XGBoost and softmax curves it reaches random search's best as often or more
// than Stop and, with a trainer that checkpoints, for 6-15% fewer units; a trainer that keeps no
// checkpoint trains each promoted trial again (7-43% more units than Stop), and Stop suits it.

namespace hypertune {

enum class HalvingType {
    /// Every trial runs towards max_resource; at each rung it is judged at once against the losses
    /// recorded there so far, and continues or is stopped (Ray Tune's ASHA; detail/rungs.hpp).
    Stop,
    /// A trial runs one rung at a time and pauses there; it is promoted to the next rung once it
    /// ranks in the top 1/eta of its rung, and a new trial starts only when no paused trial can be
    /// promoted (Li et al. 2020; detail/promotion_rungs.hpp). A promoted trial continues from its
    /// checkpoint, or starts over when the objective keeps none.
    Promotion,
};

}  // namespace hypertune
