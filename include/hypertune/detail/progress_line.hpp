// SPDX-License-Identifier: MIT
#pragma once
// The progress line on stderr ("[hypertune] 12/60 trials, 4 running, 0 failed, best ..."): an
// observer of the run's events, redrawn when a trial ends (at most every 0.1 s) and once more,
// with a newline, when the run ends. It reads everything from the RunState, and steps aside while
// user code that may print runs (hold/release).

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
        // At the end every trial has ended, those still paused at a rung too (cut short with the run).
        const std::size_t ended = final_line ? state.records().size()
                                             : state.count(TrialStatus::Completed) + state.count(TrialStatus::Stopped) +
                                                   state.count(TrialStatus::Failed);
        std::string text = fmt::format("[hypertune] {}/{} trials, {} running, {} failed, best {}, {}", ended, max_jobs_,
                                       final_line ? 0 : state.count(TrialStatus::Running),
                                       state.count(TrialStatus::Failed), best, human_duration(seconds));
        if (holds_ > 0 && !final_line) {
            last_text_ = std::move(text);  // drawn when the user code returns
            return;
        }
        draw(std::move(text), final_line);
    }

    /// Around user code that may print (a callback, an observer): the line is erased first and not
    /// drawn meanwhile, so that what the code prints starts a line of its own rather than
    /// following the progress text; release() draws it again. Nestable; the caller serialises.
    void hold() {
        if (holds_++ > 0 || !drawn_) return;
        std::fprintf(stderr, "\r%*s\r", static_cast<int>(last_text_.size()), "");
        std::fflush(stderr);
        drawn_ = false;
    }
    void release() {
        if (--holds_ > 0 || ended_ || last_text_.empty()) return;
        draw(last_text_, false);
    }

private:
    void draw(std::string text, bool final_line) {
        // Spaces over what a longer line before left (a best of -1 after 1.23457e-05).
        const std::size_t pad = drawn_ && last_text_.size() > text.size() ? last_text_.size() - text.size() : 0;
        std::fprintf(stderr, "\r%s%*s%s", text.c_str(), static_cast<int>(pad), "", final_line ? "\n" : "");
        std::fflush(stderr);
        last_text_ = std::move(text);
        drawn_ = !final_line;
        ended_ = final_line;
    }

    std::size_t max_jobs_;
    double last_draw_ = -1.0;
    std::string last_text_;  // the latest line, drawn or held
    bool drawn_ = false;     // a line without its newline is on the screen
    bool ended_ = false;     // the final line, with its newline, is drawn
    int holds_ = 0;
};

}  // namespace hypertune::detail
