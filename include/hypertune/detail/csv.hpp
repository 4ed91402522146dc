// SPDX-License-Identifier: MIT
#pragma once
// RFC 4180 CSV fields and ISO 8601 timestamps, as pandas reads them, and the fixed columns of
// Result::to_csv (also the names a parameter may not take).

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <ctime>
#include <string>
#include <string_view>

#include <hypertune/detail/utf8.hpp>

#include <fmt/core.h>

namespace hypertune::detail {

/// Result::to_csv's columns before the hyperparameters (AMT's) and after them. A parameter named
/// like one of them would give the CSV a duplicate header, so SearchSpace refuses such names.
inline constexpr std::array<std::string_view, 6> csv_columns_before_parameters{
    "TrainingJobName", "TrainingJobStatus", "FinalObjectiveValue", "TrainingStartTime", "TrainingEndTime",
    "TrainingElapsedTimeSeconds"};
inline constexpr std::array<std::string_view, 5> csv_columns_after_parameters{"TrialId", "ResourceUsed",
                                                                              "BillableSeconds", "Retries",
                                                                              "FailureReason"};

/// The columns a run with constraints, and one with several objectives, adds after its metrics.
inline constexpr std::string_view csv_feasible_column = "Feasible";
inline constexpr std::string_view csv_pareto_column = "ParetoOptimal";

[[nodiscard]] inline bool is_csv_column(std::string_view name) {
    auto in = [&](const auto& columns) { return std::find(columns.begin(), columns.end(), name) != columns.end(); };
    return in(csv_columns_before_parameters) || in(csv_columns_after_parameters) || name == csv_feasible_column ||
           name == csv_pareto_column;
}

/// One CSV field: quoted when it must be, and valid UTF-8 whatever the input.
[[nodiscard]] inline std::string csv_field(std::string_view s) {
    bool ascii = std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    std::string text = ascii ? std::string(s) : valid_utf8(s);
    if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
    std::string out = "\"";
    for (char c : text) {
        if (c == '"') out += '"';
        out += c;
    }
    out += '"';
    return out;
}

/// Seconds since the Unix epoch -> "2026-11-29T21:46:20.123Z".
[[nodiscard]] inline std::string iso8601(double unix_seconds) {
    // Four-digit years only (0000-01-01 to 9999-12-31), which also keeps the cast to time_t defined.
    if (!(unix_seconds >= -62167219200.0 && unix_seconds < 253402300800.0)) return "";
    auto whole = static_cast<std::time_t>(std::floor(unix_seconds));
    auto millis = static_cast<int>(std::floor((unix_seconds - static_cast<double>(whole)) * 1000.0));
    std::tm tm{};
    gmtime_r(&whole, &tm);
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                       tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
}

/// 3725.4 -> "1h 02m 05s"; short durations keep a decimal.
[[nodiscard]] inline std::string human_duration(double seconds) {
    if (!std::isfinite(seconds)) return "-";
    if (seconds < 1.0) return fmt::format("{:.1f}ms", seconds * 1000.0);
    if (seconds < 60.0) return fmt::format("{:.1f}s", seconds);
    // Past a trillion hours (a resource of 1e15 units at a second each), hours in exponent form:
    // the conversion to an integer below would overflow.
    if (seconds >= 3.6e15) return fmt::format("{:.3g}h", seconds / 3600.0);
    auto s = static_cast<long long>(std::llround(seconds));
    if (s < 3600) return fmt::format("{}m {:02}s", s / 60, s % 60);
    return fmt::format("{}h {:02}m {:02}s", s / 3600, (s / 60) % 60, s % 60);
}

}  // namespace hypertune::detail
