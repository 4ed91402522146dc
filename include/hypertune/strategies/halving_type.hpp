// SPDX-License-Identifier: MIT
#pragma once
// HalvingType: how ASHA and asynchronous Hyperband act on their rungs (Syne Tune's `type`).

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
