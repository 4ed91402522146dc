// SPDX-License-Identifier: MIT
#pragma once
// The journal: an append-only log of a tuning run, one JSON object per line, written as trials
// progress (TunerOptions::journal). It is what makes a run survive a crash:
// - resume: a Tuner given an existing journal replays it (the strategy sees the same calls in the
//   same order, so it is back in the same state), keeps every trial that ended, re-runs the trials
//   that were in flight, and goes on appending;
// - attach: load_result(path) (run_state.hpp) rebuilds the Result of a run without running anything.
// Every line is flushed when written, and the file is fsync'd when a trial ends, so a trial that
// ended is on disk. A last line cut by a crash is dropped (and said so); any other damage is an
// error naming the line. This file holds the file's side: reading the lines (read_journal),
// appending them (JournalWriter), and the JSON of a search space. The events and their fields are
// in run_events.hpp; the reducer that turns them into records is in run_state.hpp.

#include <hypertune/error.hpp>
#include <hypertune/parameter.hpp>
#include <hypertune/result.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/strategy.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <unistd.h>

namespace hypertune {

namespace detail {

/// Journal formats this version reads (run_events.hpp says what each added).
inline constexpr int journal_format_oldest = 1;
inline constexpr int journal_format_newest = 2;

using json = nlohmann::json;

[[nodiscard]] inline double number_from(const json& j) {
    return j.is_number() ? j.get<double>() : std::numeric_limits<double>::quiet_NaN();
}

/// An integer field. A real number is refused, not converted: out of range, that is undefined.
template <class T>
[[nodiscard]] T integer_at(const json& j, const char* key) {
    const auto& v = j.at(key);
    if (!v.is_number_integer()) throw IoError(fmt::format("'{}' must be an integer, got {}", key, v.dump()));
    return v.get<T>();
}

template <class T>
[[nodiscard]] T integer_or(const json& j, const char* key, T fallback) {
    return j.contains(key) ? integer_at<T>(j, key) : fallback;
}

[[nodiscard]] inline TrialStatus status_from(std::string_view s) {
    for (auto st : {TrialStatus::Running, TrialStatus::Paused, TrialStatus::Completed, TrialStatus::Failed,
                    TrialStatus::Stopped})
        if (to_string(st) == s) return st;
    throw IoError(fmt::format("unknown trial status '{}'", s));
}

[[nodiscard]] inline DecisionRecord::Kind decision_kind_from(std::string_view s) {
    for (auto k : {DecisionRecord::Kind::Stop, DecisionRecord::Kind::Pause, DecisionRecord::Kind::Promote})
        if (to_string(k) == s) return k;
    throw IoError(fmt::format("unknown decision kind '{}'", s));
}

/// The status a decision moves a trial to, if any: a Pause parks a trial that ran to its rung; a
/// Stop ends a paused one. (A Stop on a running trial takes effect when it returns.)
[[nodiscard]] inline std::optional<TrialStatus> status_after(const TrialRecord& r, const DecisionRecord& d) {
    if (d.kind == DecisionRecord::Kind::Pause &&
        (r.status == TrialStatus::Completed || r.status == TrialStatus::Stopped))
        return TrialStatus::Paused;
    if (d.kind == DecisionRecord::Kind::Stop && r.status == TrialStatus::Paused) return TrialStatus::Stopped;
    return std::nullopt;
}

/// Rebuilds a search space from SearchSpace::to_json().
[[nodiscard]] inline SearchSpace space_from_json(const json& j) {
    if (!j.is_array()) throw IoError("the search space must be a JSON array");
    SearchSpace space;
    for (const auto& p : j) {
        auto name = p.at("name").get<std::string>();
        auto kind = p.at("kind").get<std::string>();
        auto scaling_of = [&] {
            auto s = p.at("scaling").get<std::string>();
            for (auto sc : {Scaling::Linear, Scaling::Logarithmic, Scaling::ReverseLogarithmic})
                if (to_string(sc) == s) return sc;
            throw IoError(fmt::format("parameter '{}': unknown scaling '{}'", name, s));
        };
        if (kind == "Integer")
            space.add(IntegerParameter<std::int64_t>(name, integer_at<std::int64_t>(p, "min"), integer_at<std::int64_t>(p, "max"),
                                                     scaling_of()));
        else if (kind == "Continuous")
            space.add(ContinuousParameter<double>(name, p.at("min").get<double>(), p.at("max").get<double>(), scaling_of()));
        else if (kind == "Categorical")
            space.add(CategoricalParameter(name, p.at("values").get<std::vector<std::string>>()));
        else if (kind == "Static") {
            const auto& v = p.at("value");
            if (v.is_string()) space.add(StaticParameter(name, v.get<std::string>()));
            else if (v.is_number_integer()) space.add(StaticParameter(name, v.get<std::int64_t>()));
            else space.add(StaticParameter(name, v.get<double>()));
        } else {
            throw IoError(fmt::format("parameter '{}': unknown kind '{}'", name, kind));
        }
    }
    return space;
}

/// Names the first difference between two spaces' JSON descriptions, or returns "".
[[nodiscard]] inline std::string space_difference(const json& journal, const json& current) {
    for (std::size_t i = 0; i < std::max(journal.size(), current.size()); ++i) {
        if (i >= journal.size())
            return fmt::format("parameter '{}' is not in the journal's search space", current[i].value("name", "?"));
        if (i >= current.size())
            return fmt::format("the journal's parameter '{}' is not in this search space", journal[i].value("name", "?"));
        if (journal[i] != current[i])
            return fmt::format("parameter '{}' differs: journal {} vs now {}", journal[i].value("name", "?"),
                               journal[i].dump(), current[i].dump());
    }
    return "";
}

/// A journal read back: its events, and what was dropped.
struct JournalContents {
    std::vector<json> events;
    std::string warning;                ///< set when a truncated last line was dropped
    std::uintmax_t valid_bytes = 0;     ///< the length of the file up to the last complete line
};

[[nodiscard]] inline JournalContents read_journal(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IoError(fmt::format("cannot read journal '{}': {}", path, std::strerror(errno)));
    JournalContents c;
    std::string line;
    std::size_t number = 0;
    while (std::getline(in, line)) {
        ++number;
        bool complete = !in.eof();  // getline stopped at a newline
        if (line.empty() && complete) {
            c.valid_bytes += 1;
            continue;
        }
        try {
            auto j = json::parse(line);
            if (!j.is_object() || !j.contains("event"))
                throw IoError(fmt::format("journal '{}' line {}: not an event object", path, number));
            if (!complete) {
                // A whole object without its newline: keep it, and let appends start on a new line.
                c.events.push_back(std::move(j));
                c.valid_bytes += line.size();
                c.warning = fmt::format("journal '{}': the last line had no newline; kept it", path);
                break;
            }
            c.events.push_back(std::move(j));
            c.valid_bytes += line.size() + 1;
        } catch (const json::exception& e) {
            if (!complete) {
                c.warning = fmt::format("journal '{}': dropped a truncated last line {} ({} bytes), "
                                        "most likely cut by a crash while it was written",
                                        path, number, line.size());
                break;
            }
            throw IoError(fmt::format("journal '{}' line {}: {}", path, number, e.what()));
        }
    }
    if (!c.events.empty()) {
        const auto& first = c.events.front();
        if (first["event"] != "run_started")
            throw IoError(fmt::format("journal '{}' line 1: expected a run_started event", path));
        auto format = first.contains("format") ? first["format"] : json();
        if (!format.is_number_integer() || format.get<std::int64_t>() < journal_format_oldest ||
            format.get<std::int64_t>() > journal_format_newest)
            throw IoError(fmt::format("journal '{}': format version {} is not one of the supported {} to {}", path,
                                      format.dump(), journal_format_oldest, journal_format_newest));
    }
    return c;
}

/// Appends events; flushes each line and fsyncs on demand. Not thread-safe: the tuner writes
/// under its lock.
class JournalWriter {
public:
    JournalWriter(const std::string& path, std::uintmax_t keep_bytes) : path_(path) {
        // Cut what a crash left half-written, so the next event starts on a clean line.
        if (::truncate(path.c_str(), static_cast<off_t>(keep_bytes)) != 0 && errno != ENOENT)
            throw IoError(fmt::format("cannot write journal '{}': {}", path, std::strerror(errno)));
        file_ = std::fopen(path.c_str(), "ab");
        if (!file_) throw IoError(fmt::format("cannot write journal '{}': {}", path, std::strerror(errno)));
    }
    JournalWriter(const JournalWriter&) = delete;
    JournalWriter& operator=(const JournalWriter&) = delete;
    ~JournalWriter() {
        if (file_) std::fclose(file_);
    }

    void write(const json& event) {
        // Free text (a failure reason quoting a trainer's output) may not be UTF-8: never throw on it.
        std::string line = event.dump(-1, ' ', false, json::error_handler_t::replace);
        line += '\n';
        if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0)
            throw IoError(fmt::format("cannot write journal '{}': {}", path_, std::strerror(errno)));
    }

    void sync() {
        if (::fsync(fileno(file_)) != 0)
            throw IoError(fmt::format("cannot sync journal '{}': {}", path_, std::strerror(errno)));
    }

private:
    std::string path_;
    std::FILE* file_ = nullptr;
};

}  // namespace detail

}  // namespace hypertune
