// SPDX-License-Identifier: MIT
#pragma once
// The progress line on stderr ("[hypertune] 12/60 trials, 4 running, 0 failed, best ..."): an
// observer of the run's events, redrawn when a trial ends (at most every 0.1 s) and once more,
// with a newline, when the run ends. It reads everything from the RunState.

#include <hypertune/result.hpp>
#include <hypertune/run_events.hpp>
#include <hypertune/run_state.hpp>

#include <fmt/core.h>

#include <cstdio>
#include <string>
#include <variant>

namespace hypertune::detail {

class ProgressLine {
public:
    explicit ProgressLine(std::size_t max_jobs) : max_jobs_(max_jobs) {}

    /// Called after `event` was applied to `state`, `seconds` into this session.
    void operator()(const RunEvent& event, const RunState& state, double seconds) {
        const bool final_line = std::holds_alternative<RunEnded>(event);
        if (!final_line && !std::holds_alternative<TrialEnded>(event)) return;
        if (!final_line && seconds - last_draw_ < 0.1) return;
        last_draw_ = seconds;
        std::string best = "-";
        if (auto id = state.best()) best = fmt::format("{:.6g} (trial {})", state.record(*id).objective, *id);
        std::fprintf(stderr, "\r[hypertune] %zu/%zu trials, %zu running, %zu failed, best %s, %s   %s",
                     state.count(TrialStatus::Completed) + state.count(TrialStatus::Stopped) +
                         state.count(TrialStatus::Failed),
                     max_jobs_, state.count(TrialStatus::Running), state.count(TrialStatus::Failed), best.c_str(),
                     human_duration(seconds).c_str(), final_line ? "\n" : "");
        std::fflush(stderr);
    }

private:
    std::size_t max_jobs_;
    double last_draw_ = -1.0;
};

}  // namespace hypertune::detail
