// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/strategies/bayesian.hpp>: GPSampler forwards to the model.
// Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/detail/gp_model.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/strategies/bayesian.hpp>

#include <memory>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/strategies/bayesian.hpp> is compiled into hypertune::compiled: include <hypertune/strategies/bayesian.hpp>"
#endif

namespace hypertune {

HYPERTUNE_INLINE GPSampler::GPSampler(BayesianOptions options) : model_(std::make_unique<detail::GPModel>(options)) {}
HYPERTUNE_INLINE Settings GPSampler::settings() const {
    const BayesianOptions& o = model_->options();
    const auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
    return {{"initial_points", std::to_string(o.initial_points)},
            {"centre_first", flag(o.centre_first)},
            {"design_margin", fmt::format("{}", o.design_margin)},
            {"candidates", std::to_string(o.candidates)},
            {"max_model_points", std::to_string(o.max_model_points)},
            {"refit_every", std::to_string(o.refit_every)},
            {"model_constraints", flag(o.model_constraints)},
            {"refine", o.refine ? flag(*o.refine) : "auto"},
            {"trust_region", flag(o.trust_region)},
            {"active_direction", flag(o.active_direction)},
            {"random_proposals", fmt::format("{}", o.random_proposals)},
            {"portfolio", flag(o.portfolio)},
            {"discrete_end_margin", fmt::format("{}", o.discrete_end_margin)}};
}

HYPERTUNE_INLINE GPSampler::GPSampler(const GPSampler& other)
    : Sampler(other), model_(std::make_unique<detail::GPModel>(*other.model_)) {}
HYPERTUNE_INLINE GPSampler& GPSampler::operator=(const GPSampler& other) {
    if (this != &other) model_ = std::make_unique<detail::GPModel>(*other.model_);
    return *this;
}
HYPERTUNE_INLINE GPSampler::GPSampler(GPSampler&&) noexcept = default;
HYPERTUNE_INLINE GPSampler& GPSampler::operator=(GPSampler&&) noexcept = default;
HYPERTUNE_INLINE GPSampler::~GPSampler() = default;

HYPERTUNE_INLINE void GPSampler::start(const SearchSpace& space, const SamplerContext& ctx) { model_->start(space, ctx); }
HYPERTUNE_INLINE std::optional<Config> GPSampler::sample(TrialId id) { return model_->sample(id); }
HYPERTUNE_INLINE void GPSampler::on_result(TrialId id, const Outcome& outcome) { model_->on_result(id, outcome); }
HYPERTUNE_INLINE bool GPSampler::warm_start(const std::vector<WarmStartObservation>& observations, WarmStartType type) {
    return model_->warm_start(observations, type);
}
HYPERTUNE_INLINE std::vector<Note> GPSampler::notes() const { return model_->notes(); }
HYPERTUNE_INLINE void GPSampler::observe(const Config& cfg, double loss) { model_->observe(cfg, loss); }
HYPERTUNE_INLINE void GPSampler::observe_pending(const Config& cfg) { model_->observe_pending(cfg); }
HYPERTUNE_INLINE void GPSampler::seed_initial_design(const std::vector<Config>& configs) {
    model_->seed_initial_design(configs);
}
HYPERTUNE_INLINE std::size_t GPSampler::initial_points() const noexcept { return model_->initial_points(); }
HYPERTUNE_INLINE std::size_t GPSampler::model_fits() const noexcept { return model_->model_fits(); }
HYPERTUNE_INLINE std::vector<double> GPSampler::lengthscales() const { return model_->lengthscales(); }
HYPERTUNE_INLINE std::vector<double> GPSampler::direction() const { return model_->direction(); }
HYPERTUNE_INLINE bool GPSampler::trust_region() const noexcept { return model_->trust_region(); }
HYPERTUNE_INLINE double GPSampler::trust_region_length() const noexcept { return model_->trust_region_length(); }
HYPERTUNE_INLINE std::size_t GPSampler::trust_region_restarts() const noexcept { return model_->trust_region_restarts(); }
HYPERTUNE_INLINE std::vector<std::size_t> GPSampler::portfolio_picks() const { return model_->portfolio_picks(); }

}  // namespace hypertune
