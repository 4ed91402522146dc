// SPDX-License-Identifier: MIT
#pragma once
// The journal: an append-only log of a tuning run, one JSON object per line, written as trials
// progress (TunerOptions::journal). It is what makes a run survive a crash:
// - resume: a Tuner given an existing journal replays it (the strategy sees the same calls in the
//   same order, so it is back in the same state), keeps every trial that ended, re-runs the trials
//   that were in flight, and goes on appending;
// - attach: load_result(path) rebuilds the Result of a run without running anything.
// Every line is flushed when written, and the file is fsync'd when a trial ends, so a trial that
// ended is on disk. A last line cut by a crash is dropped (and said so); any other damage is an
// error naming the line.
//
// Events: run_started (format, options, strategy, search space), run_resumed, trial_started,
// report, decision, trial_ended, warning, run_ended.

#include <hypertune/error.hpp>
#include <hypertune/parameter.hpp>
#include <hypertune/result.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/strategy.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace hypertune {

namespace detail {

inline constexpr int journal_format = 1;

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

/// Names the first difference between two spaces' JSON descriptions, or returns "". The same
/// parameters in another order are said to be so (comparing them position by position would
/// compare one parameter with another).
[[nodiscard]] inline std::string space_difference(const json& journal, const json& current) {
    auto names = [](const json& space) {
        std::vector<std::string> out;
        for (const auto& p : space) out.push_back(p.value("name", "?"));
        return out;
    };
    auto then = names(journal), now = names(current);
    if (then != now && std::is_permutation(then.begin(), then.end(), now.begin(), now.end())) {
        auto list = [](const std::vector<std::string>& v) {
            std::string out;
            for (const auto& n : v) {
                out += out.empty() ? "'" : ", '";
                out += n;
                out += '\'';
            }
            return out;
        };
        return fmt::format("the same parameters in another order: the journal has {} and this search space has {} "
                           "(add them in the journal's order to resume)",
                           list(then), list(now));
    }
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
        if (!format.is_number_integer() || format != journal_format)
            throw IoError(fmt::format("journal '{}': format version {} is not the supported {}", path, format.dump(),
                                      journal_format));
    }
    return c;
}

/// Rebuilds trial records and the run's setup from journal events. Used both to attach to a run
/// and to resume one.
class RecordBuilder {
public:
    void add(const json& e, std::size_t line) {
        std::string kind;
        try {
            kind = e.at("event").get<std::string>();
            last_time_ = e.value("time", last_time_);
            if (kind == "run_started") start(e);
            else if (kind == "run_resumed") resume(e);
            else if (kind == "trial_started") trial_started(e);
            else if (kind == "report") report(e);
            else if (kind == "decision") decision(e);
            else if (kind == "trial_ended") trial_ended(e);
            else if (kind == "warning") setup_.warnings.push_back(e.at("message").get<std::string>());
            else if (kind == "warm_start") warm_start(e);
            else if (kind == "run_ended") {
                setup_.stop_reason = e.value("reason", "");
                close_session();
            } else
                throw IoError(fmt::format("unknown event '{}'", kind));
        } catch (const json::exception& x) {
            throw IoError(fmt::format("journal line {}: event '{}': {}", line, kind, x.what()));
        } catch (const IoError& x) {
            throw IoError(fmt::format("journal line {}: {}", line, x.what()));
        } catch (const InvalidArgument& x) {
            throw IoError(fmt::format("journal line {}: {}", line, x.what()));
        }
    }

    [[nodiscard]] const SearchSpace& space() const { return space_; }
    [[nodiscard]] const json& start_event() const { return start_event_; }
    [[nodiscard]] std::vector<TrialRecord>& records() { return records_; }
    [[nodiscard]] const std::unordered_map<TrialId, std::size_t>& index() const { return index_; }
    /// The Run suggestions of trials that started and have not ended (in flight at a crash).
    [[nodiscard]] std::vector<Suggestion> in_flight() const {
        std::vector<Suggestion> out;
        for (const auto& [id, s] : running_) out.push_back(s);
        std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.trial < b.trial; });
        return out;
    }

    /// Wall time of the sessions so far (each from its start to its last event).
    [[nodiscard]] double wall_seconds() const {
        return wall_ + (session_open_ ? std::max(0.0, last_time_ - session_start_) : 0.0);
    }

    [[nodiscard]] Result result() const {
        Result::Setup s = setup_;
        s.wall_seconds = wall_seconds();
        std::vector<TrialRecord> out = records_;
        for (auto& r : out)
            if (r.status == TrialStatus::Running) {
                if (!r.segments.empty() && std::isnan(r.segments.back().end)) r.segments.back().end = last_time_;
                r.status = TrialStatus::Stopped;
                r.failure_reason = "the run ended while this trial was running";
            }
        return Result(std::move(s), std::move(out));
    }

private:
    void start(const json& e) {
        start_event_ = e;
        space_ = space_from_json(e.at("space"));
        setup_.metric = e.at("metric").get<std::string>();
        setup_.direction = e.at("direction").get<std::string>() == "Maximize" ? Direction::Maximize : Direction::Minimize;
        setup_.strategy = e.at("strategy").get<std::string>();
        setup_.seed = integer_at<std::uint64_t>(e, "seed");
        setup_.max_parallel_jobs = integer_at<std::size_t>(e, "max_parallel_jobs");
        setup_.instances_per_trial = integer_at<int>(e, "instances_per_trial");
        if (!e.at("max_resource").is_null()) setup_.max_resource = integer_at<Resource>(e, "max_resource");
        setup_.start_time = e.at("time").get<double>();
        for (const auto& p : space_.parameters()) setup_.parameter_names.push_back(p.name);
        session_start_ = setup_.start_time;
        session_open_ = true;
    }

    void warm_start(const json& e) {
        for (const auto& p : e.at("parents"))
            setup_.parent_bests.push_back({integer_at<std::size_t>(p, "parent"), integer_at<TrialId>(p, "trial"),
                                           number_from(p.at("objective")),
                                           space_from_json(p.at("space")).from_json(p.at("config"))});
    }

    void resume(const json& e) {
        close_session();
        session_start_ = e.at("time").get<double>();
        session_open_ = true;
        // trials in flight when the previous session died start over
        for (auto& [id, s] : running_) {
            auto& r = records_[index_.at(id)];
            if (!r.segments.empty() && std::isnan(r.segments.back().end)) r.segments.pop_back();
        }
    }

    void close_session() {
        if (session_open_) wall_ += std::max(0.0, last_time_ - session_start_);
        session_open_ = false;
    }

    TrialRecord& record(const json& e) {
        auto id = integer_at<TrialId>(e, "trial");
        auto it = index_.find(id);
        if (it == index_.end()) throw IoError(fmt::format("event for trial {} before it started", id));
        return records_[it->second];
    }

    void trial_started(const json& e) {
        auto id = integer_at<TrialId>(e, "trial");
        if (e.contains("rerun") && !e["rerun"].is_boolean()) throw IoError("'rerun' must be true or false");  // read on resume
        if (auto open = running_.find(id); open != running_.end()) {  // re-run after a crash
            auto& r = records_[index_.at(id)];
            if (!r.segments.empty() && std::isnan(r.segments.back().end)) r.segments.pop_back();
        }
        Suggestion s = Suggestion::run(id, space_.from_json(e.at("config")), integer_at<Resource>(e, "budget"),
                                       integer_at<Resource>(e, "resume_from"));
        auto it = index_.find(id);
        if (it == index_.end()) {
            index_.emplace(id, records_.size());
            records_.emplace_back();
            records_.back().id = id;
            records_.back().config = s.config;
            it = index_.find(id);
        }
        auto& r = records_[it->second];
        r.status = TrialStatus::Running;
        // as the tuner does: a promoted trial reports again the steps past resume_from (an overrun)
        if (s.resume_from > 0 && !e.value("rerun", false))
            std::erase_if(r.curve, [&](const ReportPoint& p) { return p.step > s.resume_from; });
        double t = e.at("time").get<double>();
        r.segments.push_back({t, std::numeric_limits<double>::quiet_NaN(), integer_or<std::size_t>(e, "worker", std::size_t{0})});  // open
        running_[id] = std::move(s);
    }

    void report(const json& e) {
        auto& r = record(e);
        r.curve.push_back({integer_at<Resource>(e, "step"), e.at("value").get<double>(), e.value("seconds", 0.0)});
    }

    void decision(const json& e) {
        auto& r = record(e);
        DecisionRecord d{r.id,
                         decision_kind_from(e.at("kind").get<std::string>()),
                         integer_or<int>(e, "bracket", -1),
                         integer_or<int>(e, "rung", -1),
                         integer_or<Resource>(e, "resource", Resource{0}),
                         number_from(e.at("loss")),
                         number_from(e.at("threshold")),
                         integer_or<std::size_t>(e, "peers", std::size_t{0}),
                         e.value("reason", "")};
        if (auto s = status_after(r, d)) r.status = *s;
        r.decisions.push_back(std::move(d));
    }

    void trial_ended(const json& e) {
        auto& r = record(e);
        r.status = status_from(e.at("status").get<std::string>());
        r.objective = number_from(e.at("objective"));
        r.resource_used = std::max(r.resource_used, integer_at<Resource>(e, "resource"));
        r.failure_reason = e.value("failure", "");
        auto retries = integer_or<int>(e, "retries", 0);
        if (retries < 0 || retries > std::numeric_limits<int>::max() - r.retries)
            throw IoError(fmt::format("trial {}: retries {} out of range", r.id, retries));
        r.retries += retries;
        double t = e.at("time").get<double>();
        if (!r.segments.empty()) {
            r.segments.back().end = t;
            r.elapsed_seconds += t - r.segments.back().start;
        }
        r.billable_seconds = r.elapsed_seconds * setup_.instances_per_trial;
        running_.erase(r.id);
    }

    SearchSpace space_;
    json start_event_;
    Result::Setup setup_;
    std::vector<TrialRecord> records_;
    std::unordered_map<TrialId, std::size_t> index_;
    std::unordered_map<TrialId, Suggestion> running_;
    double last_time_ = 0.0, session_start_ = 0.0, wall_ = 0.0;
    bool session_open_ = false;
};

/// "pid 4242 on host node7": who takes a journal's lock, as written into its lock file.
[[nodiscard]] inline std::string journal_holder_text() {
    std::array<char, 256> host{};
    if (::gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
    return fmt::format("pid {} on host {}", ::getpid(), host[0] ? host.data() : "?");
}

/// The exclusive lock that keeps a second writer off a journal: flock(2) on "<journal>.lock", a
/// file that holds the holder's pid and host name for the message that refuses the next one. The
/// operating system drops the lock when its holder dies, however it dies (kill -9 included), so a
/// lock file left behind never blocks a resume: it is the lock that counts, not the file.
/// The descriptor is close-on-exec, so trainers started by CommandObjective never inherit it.
class JournalLock {
public:
    explicit JournalLock(const std::string& journal) : path_(journal + ".lock") {
        // The holder deletes the file when it lets go. Whoever opened it just before may then lock
        // a file no longer in the directory: that lock excludes nobody, so check and start over.
        for (int attempt = 0; attempt < 100; ++attempt) {
            fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
            if (fd_ < 0)
                throw IoError(fmt::format("cannot lock journal '{}': cannot open its lock file '{}': {}", journal,
                                          path_, std::strerror(errno)));
            if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
                int err = errno;
                std::string holder = err == EWOULDBLOCK ? read_holder() : std::string();
                release(false);
                if (err == EWOULDBLOCK)
                    throw IoError(fmt::format("journal '{}' is in use by another tuner ({}); two tuners on one "
                                              "journal would run every trial twice: let that run end, or give "
                                              "this one another journal",
                                              journal, holder));
                throw IoError(fmt::format("cannot lock journal '{}' (lock file '{}'): {}", journal, path_,
                                          std::strerror(err)));
            }
            struct stat locked{}, named{};
            if (::fstat(fd_, &locked) == 0 && ::stat(path_.c_str(), &named) == 0 && locked.st_ino == named.st_ino &&
                locked.st_dev == named.st_dev)
                break;
            release(false);
        }
        if (fd_ < 0) throw IoError(fmt::format("cannot lock journal '{}': its lock file '{}' keeps being replaced",
                                               journal, path_));
        std::string holder = journal_holder_text() + '\n';
        if (::ftruncate(fd_, 0) != 0 ||
            ::pwrite(fd_, holder.data(), holder.size(), 0) != static_cast<ssize_t>(holder.size())) {
            int err = errno;
            release(true);
            throw IoError(fmt::format("cannot write the lock file '{}' of journal '{}': {}", path_, journal,
                                      std::strerror(err)));
        }
    }
    JournalLock(const JournalLock&) = delete;
    JournalLock& operator=(const JournalLock&) = delete;
    ~JournalLock() { release(true); }

private:
    // The holder's pid and host as it wrote them; it writes them just after taking the lock, so an
    // empty file is given a moment.
    [[nodiscard]] std::string read_holder() const {
        for (int attempt = 0; attempt < 20; ++attempt) {
            std::array<char, 512> buf{};
            auto n = ::pread(fd_, buf.data(), buf.size() - 1, 0);
            std::string text(buf.data(), n > 0 ? static_cast<std::size_t>(n) : 0);
            if (auto end = text.find_first_of("\r\n"); end != std::string::npos) {
                text.resize(end);
                if (!text.empty()) {
                    if (text == journal_holder_text()) text += ", this process";
                    return fmt::format("{}; lock file '{}'", text, path_);
                }
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        return fmt::format("its pid is not known yet; lock file '{}'", path_);
    }

    // Unlinking before closing, while the lock is still held, is what makes the check above sound.
    void release(bool held) {
        if (fd_ < 0) return;
        if (held) ::unlink(path_.c_str());
        ::close(fd_);
        fd_ = -1;
    }

    std::string path_;
    int fd_ = -1;
};

/// Appends events; flushes each line and fsyncs on demand. Not thread-safe: the tuner writes
/// under its lock. It holds the journal's JournalLock from construction to destruction, so a
/// second writer (another Tuner, in this process or another) is refused before it writes anything.
class JournalWriter {
public:
    JournalWriter(const std::string& path, std::uintmax_t keep_bytes) : path_(path) {
        // 'e': close-on-exec, so trainers started by CommandObjective do not inherit the journal.
        file_ = std::fopen(path.c_str(), "abe");
        if (!file_) throw IoError(fmt::format("cannot write journal '{}': {}", path, std::strerror(errno)));
        try {
            lock_.emplace(path);
        } catch (...) {
            std::fclose(file_);
            throw;
        }
        // Cut what a crash left half-written, so the next event starts on a clean line; only now
        // that no other writer can be appending.
        if (::ftruncate(fileno(file_), static_cast<off_t>(keep_bytes)) != 0) {
            int err = errno;
            std::fclose(file_);
            throw IoError(fmt::format("cannot write journal '{}': {}", path, std::strerror(err)));
        }
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
    std::optional<JournalLock> lock_;  // released after ~JournalWriter's body has closed the file
};

[[nodiscard]] inline json decision_event(const DecisionRecord& d, double time) {
    return {{"event", "decision"},
            {"time", time},
            {"trial", d.trial},
            {"kind", std::string(to_string(d.kind))},
            {"bracket", d.bracket},
            {"rung", d.rung},
            {"resource", d.resource},
            {"loss", number_or_null(d.loss)},
            {"threshold", number_or_null(d.threshold)},
            {"peers", d.peers},
            {"reason", d.reason}};
}

}  // namespace detail

/// Rebuilds the Result of a run from its journal, without running anything (AMT's attach): the
/// same best, trials, summary and CSV as the run that wrote it. A run that did not finish shows
/// the trials it had in flight as Stopped.
[[nodiscard]] inline Result load_result(const std::string& path) {
    auto contents = detail::read_journal(path);
    if (contents.events.empty()) throw IoError(fmt::format("journal '{}' is empty", path));
    detail::RecordBuilder builder;
    for (std::size_t i = 0; i < contents.events.size(); ++i) builder.add(contents.events[i], i + 1);
    auto result = builder.result();
    if (!contents.warning.empty()) {
        auto setup = result.setup();
        setup.warnings.push_back(contents.warning);
        return Result(std::move(setup), result.trials());
    }
    return result;
}

}  // namespace hypertune
