// SPDX-License-Identifier: MIT
#pragma once
// The objective: the host program's training function. It takes a configuration (and, when it
// wants to report progress or be stopped early, the Trial) and returns the final metric, or, for a
// run with several objectives or constraints, the named Metrics.

#include <hypertune/config.hpp>
#include <hypertune/metrics.hpp>
#include <hypertune/trial.hpp>

#include <concepts>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace hypertune {

/// double(const Config&, Trial&): reports intermediate values, can be stopped early.
template <class F>
concept TrialObjective = std::invocable<F&, const Config&, Trial&> &&
                         std::convertible_to<std::invoke_result_t<F&, const Config&, Trial&>, double>;

/// double(const Config&): a plain function of the configuration.
template <class F>
concept PlainObjective = std::invocable<F&, const Config&> &&
                         std::convertible_to<std::invoke_result_t<F&, const Config&>, double>;

/// Metrics(const Config&, Trial&) or Metrics(const Config&): a value per metric of the run
/// (TunerOptions::objectives and constraints).
template <class F>
concept TrialMetricsObjective = std::invocable<F&, const Config&, Trial&> &&
                                std::convertible_to<std::invoke_result_t<F&, const Config&, Trial&>, Metrics>;
template <class F>
concept PlainMetricsObjective = std::invocable<F&, const Config&> &&
                                std::convertible_to<std::invoke_result_t<F&, const Config&>, Metrics>;

template <class F>
concept Objective = TrialObjective<F> || PlainObjective<F> || TrialMetricsObjective<F> || PlainMetricsObjective<F>;

/// Either form of objective behind one callable type.
struct ObjectiveFunction {
    std::function<double(const Config&, Trial&)> call;
    /// The objective takes the Trial, and may keep a reference to it: the runner then keeps the
    /// Trial alive until the run ends (see trial.hpp). A double(const Config&) objective cannot.
    bool sees_trial = true;
    /// Set instead of `call` for an objective that returns Metrics.
    std::function<Metrics(const Config&, Trial&)> call_metrics{};
    /// What an objective that reads named metrics says of its value (CommandObjective: the metric
    /// its value is, and every metric it reads), so that the Tuner can refuse a run that optimises
    /// another of them under its name. Empty: it does not say.
    std::string returns_metric{};
    std::vector<std::string> reads_metrics{};

    [[nodiscard]] bool returns_metrics() const noexcept { return static_cast<bool>(call_metrics); }
    double operator()(const Config& config, Trial& trial) const { return call(config, trial); }
};

namespace detail {
// The call itself, in the form the objective has.
template <class F>
[[nodiscard]] ObjectiveFunction make_objective_call(F&& f) {
    ObjectiveFunction o;
    if constexpr (TrialMetricsObjective<F>) {
        o.call_metrics = std::forward<F>(f);
    } else if constexpr (PlainMetricsObjective<F>) {
        o.sees_trial = false;
        o.call_metrics = [g = std::forward<F>(f)](const Config& c, Trial&) mutable -> Metrics { return g(c); };
    } else if constexpr (TrialObjective<F>) {
        o.call = std::forward<F>(f);
    } else {
        o.sees_trial = false;
        o.call = [g = std::forward<F>(f)](const Config& c, Trial&) mutable -> double { return static_cast<double>(g(c)); };
    }
    return o;
}
}  // namespace detail

/// Wraps either form of objective into one callable type, with what it says of its metrics.
template <class F>
[[nodiscard]] ObjectiveFunction make_objective(F&& f) {
    static_assert(Objective<F>,
                  "hypertune: an objective must be callable as double(const hypertune::Config&, hypertune::Trial&) "
                  "or double(const hypertune::Config&), returning something convertible to double (or "
                  "hypertune::Metrics, for a run with several objectives or constraints)");
    std::string returns;
    std::vector<std::string> reads;
    if constexpr (requires(const std::remove_cvref_t<F>& g) {
                      { g.objective_metric() } -> std::convertible_to<std::string>;
                      { g.metric_names() } -> std::convertible_to<std::vector<std::string>>;
                  }) {
        returns = f.objective_metric();
        reads = f.metric_names();
    }
    ObjectiveFunction out = detail::make_objective_call(std::forward<F>(f));
    out.returns_metric = std::move(returns);
    out.reads_metrics = std::move(reads);
    return out;
}

}  // namespace hypertune
