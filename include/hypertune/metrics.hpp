// SPDX-License-Identifier: MIT
#pragma once
// The metrics of a run beyond one objective: several objectives, each with its direction (Metric),
// bounds that a trial's metric must meet for the trial to count (Constraint, Optuna's
// semantics), and the named values an objective returns for them (Metrics).

#include <hypertune/direction.hpp>
#include <hypertune/error.hpp>

#include <cmath>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hypertune {

/// An objective of the run: a named metric and whether lower or higher is better.
struct Metric {
    std::string name;
    Direction direction = Direction::Minimize;
    friend bool operator==(const Metric&, const Metric&) = default;
};

/// A bound a trial's metric must meet for the trial to count (to be feasible):
/// `metric <= bound` (at_most) or `metric >= bound` (at_least). An infeasible trial is never
/// best() and never on the Pareto front. The metric may be an objective or a value the objective
/// returns only for this check, such as seconds per epoch.
struct Constraint {
    enum class Kind { AtMost, AtLeast };
    std::string metric;
    Kind kind = Kind::AtMost;
    double bound = 0.0;

    [[nodiscard]] static Constraint at_most(std::string metric, double bound) {
        return {std::move(metric), Kind::AtMost, bound};
    }
    [[nodiscard]] static Constraint at_least(std::string metric, double bound) {
        return {std::move(metric), Kind::AtLeast, bound};
    }
    /// False for NaN.
    [[nodiscard]] bool satisfied_by(double value) const noexcept {
        return kind == Kind::AtMost ? value <= bound : value >= bound;
    }
    /// How far `value` breaks it: value - bound for at_most, bound - value for at_least, so <= 0
    /// exactly when it is met (Optuna's constraints_func convention); NaN for NaN.
    [[nodiscard]] double violation(double value) const noexcept {
        return kind == Kind::AtMost ? value - bound : bound - value;
    }
    friend bool operator==(const Constraint&, const Constraint&) = default;
};

/// "<=" or ">=".
[[nodiscard]] inline std::string_view to_string(Constraint::Kind k) noexcept {
    return k == Constraint::Kind::AtMost ? "<=" : ">=";
}

/// What an objective returns when the run has several objectives or constraints: a value for each
/// of the run's metrics, by name, e.g. `return ht::Metrics{{"accuracy", acc}, {"seconds", s}};`.
class Metrics {
public:
    Metrics() = default;
    /// Throws InvalidArgument when a name is given twice.
    Metrics(std::initializer_list<std::pair<std::string, double>> values) {
        for (const auto& [name, value] : values) {
            if (get(name)) throw InvalidArgument("Metrics: '" + name + "' is given twice");
            values_.emplace_back(name, value);
        }
    }

    /// Sets (or replaces) one value.
    Metrics& set(std::string name, double value) {
        for (auto& [n, v] : values_)
            if (n == name) {
                v = value;
                return *this;
            }
        values_.emplace_back(std::move(name), value);
        return *this;
    }
    [[nodiscard]] std::optional<double> get(std::string_view name) const noexcept {
        for (const auto& [n, v] : values_)
            if (n == name) return v;
        return std::nullopt;
    }
    [[nodiscard]] const std::vector<std::pair<std::string, double>>& values() const noexcept { return values_; }
    [[nodiscard]] bool empty() const noexcept { return values_.empty(); }

private:
    std::vector<std::pair<std::string, double>> values_;
};

/// The values a trial of a run records, by name: the objectives, then each constrained metric that
/// is not an objective, in the order of first mention.
[[nodiscard]] inline std::vector<std::string> metric_names(const std::vector<Metric>& objectives,
                                                           const std::vector<Constraint>& constraints) {
    std::vector<std::string> names;
    for (const auto& m : objectives) names.push_back(m.name);
    for (const auto& c : constraints) {
        bool known = false;
        for (const auto& n : names) known = known || n == c.metric;
        if (!known) names.push_back(c.metric);
    }
    return names;
}

/// Whether `values` (one per metric_names(objectives, constraints), in that order) meet every
/// constraint. Without constraints, yes; with some, a trial without values cannot be shown to.
[[nodiscard]] inline bool meets_constraints(const std::vector<Constraint>& constraints,
                                            const std::vector<std::string>& names, const std::vector<double>& values) {
    if (constraints.empty()) return true;
    if (values.size() != names.size()) return false;
    for (const auto& c : constraints)
        for (std::size_t i = 0; i < names.size(); ++i)
            if (names[i] == c.metric && !c.satisfied_by(values[i])) return false;
    return true;
}

/// Each constraint's violation for `values` (one per metric_names(objectives, constraints)):
/// metric - bound for at_most, bound - metric for at_least, so <= 0 exactly when it is met
/// (Optuna's constraints_func convention); NaN where the value is missing or NaN. Empty without
/// constraints. What a sampler models to learn where the feasible region lies.
[[nodiscard]] inline std::vector<double> constraint_violations(const std::vector<Constraint>& constraints,
                                                               const std::vector<std::string>& names,
                                                               const std::vector<double>& values) {
    std::vector<double> out;
    for (const auto& c : constraints) {
        double v = std::nan("");
        for (std::size_t i = 0; i < names.size() && i < values.size(); ++i)
            if (names[i] == c.metric) v = c.violation(values[i]);
        out.push_back(v);
    }
    return out;
}

/// The first objectives.size() of `values` as losses (negated where maximised), what Pareto
/// dominance and the strategies compare.
[[nodiscard]] inline std::vector<double> objective_losses(const std::vector<Metric>& objectives,
                                                          const std::vector<double>& values) {
    std::vector<double> out;
    for (std::size_t i = 0; i < objectives.size() && i < values.size(); ++i)
        out.push_back(objectives[i].direction == Direction::Maximize ? -values[i] : values[i]);
    return out;
}

}  // namespace hypertune
