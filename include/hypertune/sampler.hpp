// SPDX-License-Identifier: MIT
#pragma once
// Sampler: the role that chooses configurations (Optuna's samplers, Syne Tune's searchers). A
// scheduler (scheduler.hpp) asks its sampler for the configuration of each new trial and tells it
// what happens to the trials; it never decides when trials run or stop. Every hook but sample()
// has a default that does nothing, so a custom sampler is a few lines:
//
//     class Corners : public ht::Sampler {
//     public:
//         std::string name() const override { return "Corners"; }
//         void start(const ht::SearchSpace& space, const ht::SamplerContext&) override { space_ = space; }
//         std::optional<ht::Config> sample(ht::TrialId id) override {
//             std::vector<double> u(space_.dimensions(), id % 2 == 0 ? 0.0 : 1.0);
//             return space_.decode(u);
//         }
//     private:
//         ht::SearchSpace space_;
//     };
//
// Samplers are held by value through AnySampler, which copies them when the scheduler is copied.

#include <hypertune/config.hpp>
#include <hypertune/error.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/strategy.hpp>

#include <fmt/core.h>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace hypertune {

/// What a sampler is started with besides the space.
struct SamplerContext {
    std::uint64_t seed = 0;
    /// The resources at which the scheduler compares trials, increasing, the full resource last
    /// (a multi-fidelity scheduler's rungs); one entry for a scheduler that runs every trial to
    /// its end.
    std::vector<Resource> levels{};
    /// New trials the run planned in all (StrategyContext::planned_trials, else max_trials: the
    /// budget the run began with, whatever a resume raised it to); 0 = no limit. A sampler may
    /// size its own phases by it (the Gaussian-process sampler's initial design).
    std::size_t max_trials = 0;
    /// Whether the run has constraints (StrategyContext::constrained): outcomes then say whether
    /// they are met, and a sampler that learns from losses alone would steer towards breaking them.
    bool constrained = false;
};

/// Chooses the configurations of new trials. Override sample(); the other hooks are optional.
class Sampler {
public:
    virtual ~Sampler() = default;

    /// The sampler's name, for output.
    [[nodiscard]] virtual std::string name() const = 0;
    /// Called once before the first sample(); calling it again starts afresh.
    virtual void start(const SearchSpace& space, const SamplerContext& ctx) = 0;
    /// The configuration of new trial `id`; empty when the sampler has none left (a finished grid).
    [[nodiscard]] virtual std::optional<Config> sample(TrialId id) = 0;
    /// The run's budget of new trials changed after start() (a resumed run raised max_jobs):
    /// what the sampler planned or said of it may be out of date.
    virtual void on_max_trials(std::size_t /*max_trials*/) {}

    /// A trial reported `loss` after `step` resource units.
    virtual void on_report(TrialId /*id*/, Resource /*step*/, double /*loss*/) {}
    /// A trial's run ended (a paused trial may run again later).
    virtual void on_result(TrialId /*id*/, const Outcome& /*outcome*/) {}
    /// The scheduler stopped, paused or promoted a trial.
    virtual void on_decision(const DecisionRecord& /*decision*/) {}
    /// Earlier runs' trials (called once, after start()); false when the sampler does not use them.
    virtual bool warm_start(const std::vector<WarmStartObservation>& /*observations*/, WarmStartType /*type*/) {
        return false;
    }
    /// Whether it can choose configurations for a run with `objectives` objectives (given as
    /// Outcome::losses). By default, one; a sampler that never looks at losses takes any number.
    [[nodiscard]] virtual bool supports_objectives(std::size_t objectives) const { return objectives == 1; }
    /// Its fallbacks and changes of model, for the result's warnings.
    [[nodiscard]] virtual std::vector<Note> notes() const { return {}; }
    /// The options that decide what it suggests, beyond its name (Settings).
    [[nodiscard]] virtual Settings settings() const { return {}; }

protected:
    Sampler() = default;
    Sampler(const Sampler&) = default;
    Sampler& operator=(const Sampler&) = default;
};

/// Any Sampler, held by value: copying it copies the sampler.
class AnySampler {
public:
    /// Empty: for a scheduler that chooses no configurations itself (one that wraps another).
    AnySampler() = default;

    template <class S>
        requires std::derived_from<std::remove_cvref_t<S>, Sampler>
    AnySampler(S&& sampler)  // NOLINT: implicit on purpose, Hyperband(options, GridSampler{...})
        : impl_(std::make_unique<std::remove_cvref_t<S>>(std::forward<S>(sampler))) {
        using T = std::remove_cvref_t<S>;
        if constexpr (std::copy_constructible<T>)
            copy_ = [](const Sampler& s) -> std::unique_ptr<Sampler> {
                return std::make_unique<T>(static_cast<const T&>(s));
            };
    }

    AnySampler(const AnySampler& other) : impl_(other.clone()), copy_(other.copy_) {}
    AnySampler& operator=(const AnySampler& other) {
        if (this != &other) {
            impl_ = other.clone();
            copy_ = other.copy_;
        }
        return *this;
    }
    AnySampler(AnySampler&&) noexcept = default;
    AnySampler& operator=(AnySampler&&) noexcept = default;

    [[nodiscard]] explicit operator bool() const noexcept { return impl_ != nullptr; }
    Sampler* operator->() const noexcept { return impl_.get(); }
    Sampler& operator*() const noexcept { return *impl_; }
    [[nodiscard]] Sampler* get() const noexcept { return impl_.get(); }

private:
    [[nodiscard]] std::unique_ptr<Sampler> clone() const {
        if (!impl_) return nullptr;
        if (!copy_) throw Error(fmt::format("sampler '{}' cannot be copied", impl_->name()));
        return copy_(*impl_);
    }

    std::unique_ptr<Sampler> impl_;
    std::unique_ptr<Sampler> (*copy_)(const Sampler&) = nullptr;
};

}  // namespace hypertune
