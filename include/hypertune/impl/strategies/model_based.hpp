// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/strategies/model_based.hpp>: ModelBasedSampler's levels, observations
// and proposals. Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/detail/random.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/detail/gp_exclusion.hpp>
#include <hypertune/detail/gp_model.hpp>
#include <hypertune/strategies/bayesian.hpp>
#include <hypertune/strategies/model_based.hpp>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/strategies/model_based.hpp> is compiled into hypertune::compiled: include <hypertune/strategies/model_based.hpp>"
#endif

namespace hypertune {

HYPERTUNE_INLINE ModelBasedSampler::ModelBasedSampler(ModelBasedOptions options) : options_(options) {
    if (!(options_.random_fraction >= 0.0 && options_.random_fraction <= 1.0))
        throw InvalidArgument(fmt::format("ModelBased: random_fraction must be in [0, 1], got {}", options_.random_fraction));
    if (options_.min_points == 1) throw InvalidArgument("ModelBased: min_points must be >= 2 (or 0 for d + 2), got 1");
    if (options_.candidates < 1) throw InvalidArgument("ModelBased: candidates must be >= 1, got 0");
}

HYPERTUNE_INLINE Settings ModelBasedSampler::settings() const {
    return {{"random_fraction", fmt::format("{}", options_.random_fraction)},
            {"min_points", std::to_string(options_.min_points)},
            {"candidates", std::to_string(options_.candidates)}};
}

HYPERTUNE_INLINE void ModelBasedSampler::start(const SearchSpace& space, const SamplerContext& ctx) {
    // Its levels record losses alone, feasible or not: with constraints its model would steer new
    // trials towards the best loss among configurations that break them, without a word.
    if (ctx.constrained)
        throw InvalidArgument("ModelBased: its model learns from the loss alone, whether a trial meets the run's "
                              "constraints or not, and would steer new trials towards ones that break them; with "
                              "constraints, give the scheduler GPSampler (which models each constraint) or no "
                              "sampler (random)");
    space_ = space;
    seed_ = ctx.seed;
    resources_ = ctx.levels;
    min_points_ = options_.min_points != 0 ? options_.min_points : space.dimensions() + 2;
    levels_.assign(resources_.size(), Level{});
    fits_.assign(resources_.size(), nullptr);
    trials_.clear();
    notes_.clear();
    model_notes_seen_.clear();
    model_level_.reset();
    model_proposals_ = 0;
    model_fits_ = 0;
}

HYPERTUNE_INLINE std::optional<Config> ModelBasedSampler::sample(TrialId id) {
    TrialState t{RandomSampler::sample(space_, seed_, id), {}};
    if (!keeps_random(id))
        if (auto level = level_for_model())
            if (auto proposed = propose(id, *level)) {
                t.config = std::move(*proposed);
                t.from_model = true;
            }
    t.point = space_.encode(t.config);
    Config out = t.config;
    trials_.insert_or_assign(id, std::move(t));
    return out;
}

HYPERTUNE_INLINE void ModelBasedSampler::on_report(TrialId id, Resource step, double loss) {
    if (auto it = trials_.find(id); it != trials_.end()) record(id, it->second, step, loss);
}

HYPERTUNE_INLINE void ModelBasedSampler::on_result(TrialId id, const Outcome& outcome) {
    auto it = trials_.find(id);
    if (it == trials_.end()) return;
    TrialState& t = it->second;
    if (outcome.status == Outcome::Status::Failed || !std::isfinite(outcome.loss)) {
        // A failure at the level it was running towards: the model sees it at the worst loss there.
        t.ended = true;
        const auto next = static_cast<std::size_t>(t.last_level + 1);
        if (next < resources_.size()) {
            set_loss(next, id, std::numeric_limits<double>::quiet_NaN());
            t.last_level = static_cast<int>(next);
        }
        return;
    }
    if (outcome.status == Outcome::Status::Stopped) t.ended = true;
    record(id, t, outcome.resource, outcome.loss);
}

HYPERTUNE_INLINE void ModelBasedSampler::on_decision(const DecisionRecord& d) {
    auto it = trials_.find(d.trial);
    if (it == trials_.end()) return;
    switch (d.kind) {
        case DecisionRecord::Kind::Stop: it->second.ended = true; break;
        case DecisionRecord::Kind::Pause: it->second.paused = true; break;
        case DecisionRecord::Kind::Promote: it->second.paused = false; break;
    }
}

HYPERTUNE_INLINE std::size_t ModelBasedSampler::observations(Resource resource) const {
    auto it = std::find(resources_.begin(), resources_.end(), resource);
    return it == resources_.end() ? 0 : levels_[static_cast<std::size_t>(it - resources_.begin())].losses.size();
}

HYPERTUNE_INLINE bool ModelBasedSampler::keeps_random(TrialId id) const {
    if (options_.random_fraction >= 1.0) return true;
    return detail::to_unit(detail::hash3(seed_, stream_random_share, id)) < options_.random_fraction;
}

HYPERTUNE_INLINE std::optional<std::size_t> ModelBasedSampler::level_for_model() const {
    for (std::size_t i = levels_.size(); i-- > 0;)
        if (levels_[i].finite >= min_points_) return i;
    return std::nullopt;
}

HYPERTUNE_INLINE void ModelBasedSampler::set_loss(std::size_t level, TrialId id, double loss) {
    Level& l = levels_[level];
    auto [it, inserted] = l.losses.try_emplace(id, loss);
    if (!inserted) {
        if (std::isfinite(it->second)) --l.finite;
        it->second = loss;
    }
    if (std::isfinite(loss)) ++l.finite;
}

HYPERTUNE_INLINE void ModelBasedSampler::record(TrialId id, TrialState& t, Resource step, double loss) {
    auto above = std::upper_bound(resources_.begin(), resources_.end(), step);
    if (above == resources_.begin()) return;  // below the first level
    const auto level = static_cast<int>(above - resources_.begin()) - 1;
    const bool at_level = resources_[static_cast<std::size_t>(level)] == step;
    if (level > t.last_level || (level == t.last_level && at_level)) {
        set_loss(static_cast<std::size_t>(level), id, std::isfinite(loss) ? loss : std::numeric_limits<double>::quiet_NaN());
        t.last_level = level;
    }
}

HYPERTUNE_INLINE std::optional<Config> ModelBasedSampler::propose(TrialId id, std::size_t level) {
    const Level& l = levels_[level];
    try {
        // A fresh model per proposal, since the data change in more ways than a sampler's results
        // grow (shifted losses, trials paused or ended); a trust region would never learn, so none.
        // It goes on from the level's last fit, so that it refits as a long-lived sampler would.
        detail::GPModel model(BayesianOptions{.initial_points = min_points_,
                                              .candidates = options_.candidates,
                                              .trust_region = false});
        model.start(space_, SamplerContext{detail::hash3(seed_, stream_model, id), {}});
        if (fits_[level]) model.resume_fit(*fits_[level]);
        const std::size_t fits_before = model.model_fits();
        const auto at = static_cast<int>(level);
        const std::vector<std::optional<double>> shift = shifts_to(level);
        const double median = median_loss(l);
        std::vector<const TrialState*> left_out;  // ended below the level, not entered
        for (const auto& [trial, t] : trials_) {
            if (auto it = l.losses.find(trial); it != l.losses.end()) {
                model.observe(t.config, it->second);
            } else if (t.last_level > at) {
                continue;  // its reports skipped this level: it has losses above it
            } else if (!t.ended && !t.paused) {
                model.observe_pending(t.config);  // running: it may still get here
            } else if (t.last_level < 0) {
                left_out.push_back(&t);
            } else {
                const auto below = static_cast<std::size_t>(t.last_level);
                const double loss = levels_[below].losses.at(trial);  // NaN: it failed there
                if (std::isnan(loss) && among_failures(trial, t))
                    model.observe(t.config, loss);  // in a region that fails: a failure here too (the worst loss)
                else if (!std::isnan(loss) && shift[below] && loss + *shift[below] > median)
                    model.observe(t.config, loss + *shift[below]);
                else
                    left_out.push_back(&t);
            }
        }
        // The fresh model's trials count from 0: its random draws depend on (its seed, 0, 1, ...).
        TrialId asked = 0;
        // A repeat of a trial left out is marked pending and the model asked again (its fit is reused).
        // On a finite space the model may have nothing left: every point is tried or pending.
        std::optional<Config> proposal = model.sample(asked++);
        auto repeat_of = [&]() -> const TrialState* {
            return proposal ? nearest_within(left_out, space_.encode(*proposal)) : nullptr;
        };
        const TrialState* repeated = repeat_of();
        for (int again = 0; again < max_repeat_asks && repeated != nullptr; ++again) {
            model.observe_pending(repeated->config);
            proposal = model.sample(asked++);
            repeated = repeat_of();
        }
        if (!proposal || repeated != nullptr) {  // on a small discrete space the model can keep to a few points
            note_once(id, "the model proposed only configurations the run has tried; the configuration stays "
                          "random");
            return std::nullopt;
        }
        if (!model_level_ || *model_level_ != level) {
            if (!model_level_)
                notes_.push_back({id, fmt::format("the model takes over, fitted on the {} losses at resource {} "
                                                  "({:.0f}% of new configurations stay random)",
                                                  l.finite, resources_[level], 100.0 * options_.random_fraction)});
            else if (level > *model_level_)
                notes_.push_back(
                    {id, fmt::format("the model moves up to resource {} ({} losses)", resources_[level], l.finite)});
            model_level_ = level;
        }
        for (const Note& n : model.notes()) note_once(id, "the model: " + n.text);
        const std::size_t refits = model.model_fits() - fits_before;
        model_fits_ += refits;
        if (refits > 0)  // else the level's memory is what the model started from
            if (auto memory = model.fit_memory()) fits_[level] = std::make_shared<const detail::GpFitMemory>(std::move(*memory));
        ++model_proposals_;
        return proposal;
    } catch (const std::exception& e) {
        note_once(id, fmt::format("the model failed ({}); the configuration stays random", e.what()));
        return std::nullopt;
    }
}

HYPERTUNE_INLINE const ModelBasedSampler::TrialState* ModelBasedSampler::nearest_within(
    const std::vector<const TrialState*>& trials, const std::vector<double>& u) {
    constexpr double radius2 = GPSampler::pending_radius * GPSampler::pending_radius;
    for (const TrialState* t : trials) {
        if (detail::squared_distance(t->point.data(), u.data(), u.size()) < radius2) return t;
    }
    return nullptr;
}

HYPERTUNE_INLINE bool ModelBasedSampler::among_failures(TrialId id, const TrialState& failed) const {
    // The squared distances to the trials that recorded something, and whether each failed.
    std::vector<std::pair<double, bool>> near;
    for (const auto& [other, t] : trials_) {
        if (other == id || t.last_level < 0) continue;
        near.emplace_back(detail::squared_distance(t.point.data(), failed.point.data(), t.point.size()),
                          std::isnan(levels_[static_cast<std::size_t>(t.last_level)].losses.at(other)));
    }
    const std::size_t k = std::min(failure_neighbours, near.size());
    std::partial_sort(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(k), near.end());
    return std::any_of(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(k), [](const auto& n) { return n.second; });
}

HYPERTUNE_INLINE double ModelBasedSampler::median_loss(const Level& l) {
    std::vector<double> finite;
    for (const auto& [trial, loss] : l.losses)
        if (std::isfinite(loss)) finite.push_back(loss);
    auto middle = finite.begin() + static_cast<std::ptrdiff_t>(finite.size() / 2);
    std::nth_element(finite.begin(), middle, finite.end());
    return *middle;
}

HYPERTUNE_INLINE std::vector<std::optional<double>> ModelBasedSampler::shifts_to(std::size_t level) const {
    std::vector<std::optional<double>> shift(level);
    std::vector<double> differences;
    for (std::size_t below = 0; below < level; ++below) {
        differences.clear();
        for (const auto& [trial, loss] : levels_[level].losses) {
            auto it = levels_[below].losses.find(trial);
            if (it != levels_[below].losses.end() && std::isfinite(loss) && std::isfinite(it->second))
                differences.push_back(loss - it->second);
        }
        if (differences.size() < min_shift_pairs) continue;
        auto middle = differences.begin() + static_cast<std::ptrdiff_t>(differences.size() / 2);
        std::nth_element(differences.begin(), middle, differences.end());
        shift[below] = *middle;
    }
    return shift;
}

HYPERTUNE_INLINE void ModelBasedSampler::note_once(TrialId id, const std::string& text) {
    std::string shape;
    for (char c : text)
        if (!std::isdigit(static_cast<unsigned char>(c))) shape += c;
    if (model_notes_seen_.insert(shape).second) notes_.push_back({id, text});
}

}  // namespace hypertune
