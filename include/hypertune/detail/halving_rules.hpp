// SPDX-License-Identifier: MIT
#pragma once
// The rules of successive halving as options (ASHA's and asynchronous Hyperband's): their checks,
// the scheduler's name and settings they make. Apart from the rungs (halving_rungs.hpp) so that the
// schedulers' headers name their rules without compiling the rungs.

#include <hypertune/error.hpp>
#include <hypertune/strategy.hpp>
#include <hypertune/strategies/halving_type.hpp>
#include <hypertune/strategies/rank_by.hpp>

#include <fmt/core.h>

#include <cmath>
#include <cstddef>
#include <optional>
#include <string>

namespace hypertune::detail {

/// The scheduler's name with its rules: "ASHA", "ASHA-wait", "ASHA-promotion", "ASHA-promotion-fill",
/// the promotion type's with "-min<n>" when a rung promotes only from n results while new trials
/// may start (min_rung_results), each with "-best" when trials are judged on their best report
/// (RankBy::BestReport) and "-noise<t>" with a noise tolerance of t.
[[nodiscard]] inline std::string halving_name(const std::string& scheduler, HalvingType type, bool wait_for_peers,
                                              bool fill_idle_workers, RankBy rank_by = RankBy::LastReport,
                                              std::size_t min_rung_results = 0, double noise_tolerance = 0.0) {
    const std::string judged = (rank_by == RankBy::BestReport ? "-best" : "") +
                               (noise_tolerance > 0 ? fmt::format("-noise{:g}", noise_tolerance) : std::string());
    if (type == HalvingType::Promotion)
        return scheduler + (fill_idle_workers ? "-promotion-fill" : "-promotion") +
               (min_rung_results > 0 ? "-min" + std::to_string(min_rung_results) : "") + judged;
    return (wait_for_peers ? scheduler + "-wait" : scheduler) + judged;
}

/// The rung rules as Settings (Scheduler::settings()), the reduction factor under the scheduler's
/// own name for it ("reduction_factor", "eta").
[[nodiscard]] inline Settings halving_settings(Resource min_resource, const char* factor_name, int factor,
                                               HalvingType type, bool wait_for_peers, bool fill_idle_workers,
                                               RankBy rank_by, std::size_t min_rung_results, double noise_tolerance) {
    const auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
    return {{"min_resource", std::to_string(min_resource)},
            {factor_name, std::to_string(factor)},
            {"type", type == HalvingType::Promotion ? "promotion" : "stop"},
            {"wait_for_peers", flag(wait_for_peers)},
            {"fill_idle_workers", flag(fill_idle_workers)},
            {"rank_by", rank_by == RankBy::BestReport ? "best_report" : "last_report"},
            {"min_rung_results", std::to_string(min_rung_results)},
            {"noise_tolerance", fmt::format("{}", noise_tolerance)}};
}

/// Whether idle workers are filled: as set, else on for the promotion type (the default, chosen by
/// measurement: README, "Idle workers").
[[nodiscard]] inline bool fills_idle_workers(HalvingType type, std::optional<bool> fill_idle_workers) noexcept {
    return fill_idle_workers.value_or(type == HalvingType::Promotion);
}

/// Throws InvalidArgument, naming `scheduler`, when an option is set for the type that ignores it:
/// wait_for_peers belongs to the stop type, fill_idle_workers (set to true) and min_rung_results
/// to the promotion type.
inline void validate_halving_rules(const char* scheduler, HalvingType type, bool wait_for_peers,
                                   std::optional<bool> fill_idle_workers, std::size_t min_rung_results = 0) {
    if (type == HalvingType::Stop && min_rung_results > 0)
        throw InvalidArgument(fmt::format("{}: min_rung_results is a rule of the promotion type (.type = "
                                          "HalvingType::Promotion); for the stop type, wait_for_peers holds the first "
                                          "arrivals at a rung",
                                          scheduler));
    if (type == HalvingType::Promotion && wait_for_peers)
        throw InvalidArgument(fmt::format("{}: wait_for_peers is a rule of the stop type; the promotion type never "
                                          "lets a trial past a rung before eta trials reached it",
                                          scheduler));
    if (type == HalvingType::Stop && fill_idle_workers.value_or(false))
        throw InvalidArgument(fmt::format("{}: fill_idle_workers is a rule of the promotion type (.type = "
                                          "HalvingType::Promotion); the stop type never leaves a worker waiting",
                                          scheduler));
}

/// Throws InvalidArgument, naming `scheduler`, when trials are to be judged on their best report
/// in a run of several objectives: a best report per objective would be a point no trial reported.
inline void validate_rank_by(const char* scheduler, RankBy rank_by, std::size_t objectives) {
    if (rank_by == RankBy::BestReport && objectives > 1)
        throw InvalidArgument(fmt::format("{}: rank_by = RankBy::BestReport judges one objective; this run has {} "
                                          "(use RankBy::LastReport, which ranks every objective's last report)",
                                          scheduler, objectives));
}

/// Throws InvalidArgument, naming `scheduler`, unless noise_tolerance is a finite number >= 0, and
/// when it is set in a run whose rungs rank by Pareto priority (several objectives, or
/// constraints): no single loss is compared with a cut-off there. `objectives` = 0: not known yet
/// (the constructor's check).
inline void validate_noise_tolerance(const char* scheduler, double noise_tolerance, std::size_t objectives = 0,
                                     bool constrained = false) {
    if (!std::isfinite(noise_tolerance) || noise_tolerance < 0)
        throw InvalidArgument(fmt::format("{}: noise_tolerance must be a finite number >= 0 (a multiple of the "
                                          "measured noise of the reports; 0: off), got {}",
                                          scheduler, noise_tolerance));
    if (noise_tolerance > 0 && (objectives > 1 || constrained))
        throw InvalidArgument(fmt::format(
            "{}: noise_tolerance compares one loss with a rung's cut-off; this run's rungs rank by Pareto "
            "priority ({}): leave noise_tolerance at 0",
            scheduler, objectives > 1 ? fmt::format("{} objectives", objectives) : std::string("constraints")));
}

}  // namespace hypertune::detail
