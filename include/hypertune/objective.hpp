// SPDX-License-Identifier: MIT
#pragma once
// The objective: the host program's training function. It takes a configuration (and, when it
// wants to report progress or be stopped early, the Trial) and returns the final metric.

#include <hypertune/config.hpp>
#include <hypertune/trial.hpp>

#include <concepts>
#include <functional>
#include <type_traits>
#include <utility>

namespace hypertune {

/// double(const Config&, Trial&): reports intermediate values, can be stopped early.
template <class F>
concept TrialObjective = std::invocable<F&, const Config&, Trial&> &&
                         std::convertible_to<std::invoke_result_t<F&, const Config&, Trial&>, double>;

/// double(const Config&): a plain function of the configuration.
template <class F>
concept PlainObjective = std::invocable<F&, const Config&> &&
                         std::convertible_to<std::invoke_result_t<F&, const Config&>, double>;

template <class F>
concept Objective = TrialObjective<F> || PlainObjective<F>;

/// Either form of objective behind one callable type.
struct ObjectiveFunction {
    std::function<double(const Config&, Trial&)> call;
    /// The objective takes the Trial, and may keep a reference to it: the runner then keeps the
    /// Trial alive until the run ends (see trial.hpp). A double(const Config&) objective cannot.
    bool sees_trial = true;

    double operator()(const Config& config, Trial& trial) const { return call(config, trial); }
};

/// Wraps either form of objective into one callable type.
template <class F>
[[nodiscard]] ObjectiveFunction make_objective(F&& f) {
    static_assert(Objective<F>,
                  "hypertune: an objective must be callable as double(const hypertune::Config&, hypertune::Trial&) "
                  "or double(const hypertune::Config&), returning something convertible to double");
    if constexpr (TrialObjective<F>) {
        return ObjectiveFunction{std::forward<F>(f), true};
    } else {
        return ObjectiveFunction{
            [g = std::forward<F>(f)](const Config& c, Trial&) mutable -> double { return static_cast<double>(g(c)); },
            false};
    }
}

}  // namespace hypertune
