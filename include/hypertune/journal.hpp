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
// appending them (JournalWriter). The events and their fields are
// in run_events.hpp; the reducer that turns them into records is in run_state.hpp.

#include <hypertune/error.hpp>
#include <hypertune/detail/json_value.hpp>
#include <hypertune/parameter.hpp>
#include <hypertune/result.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/strategy.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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

/// Journal formats this version reads (run_events.hpp says what each added).
inline constexpr int journal_format_oldest = 1;
inline constexpr int journal_format_newest = 2;

[[nodiscard]] inline double number_from(const JsonValue& j) {
    return j.is_number() ? j.as_double() : std::numeric_limits<double>::quiet_NaN();
}

/// The array `key` of `j` as numbers (null: NaN); empty when there is no such key.
[[nodiscard]] inline std::vector<double> numbers_from(const JsonValue& j, const char* key) {
    std::vector<double> out;
    if (j.contains(key))
        for (const auto& v : j.at(key).elements()) out.push_back(number_from(v));
    return out;
}

/// Numbers as a JSON array, NaN and infinities as null.
[[nodiscard]] inline JsonValue numbers_or_nulls(const std::vector<double>& xs) {
    JsonValue out = JsonValue::array();
    for (double x : xs) out.push_back(JsonValue::number_or_null(x));
    return out;
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


/// Names the first difference between two spaces' JSON descriptions, or returns "". The same
/// parameters in another order are said to be so (comparing them position by position would
/// compare one parameter with another).
[[nodiscard]] inline std::string space_difference(const JsonValue& journal, const JsonValue& current) {
    auto names = [](const JsonValue& space) {
        std::vector<std::string> out;
        for (const auto& p : space.elements()) out.push_back(p.string_or("name", "?"));
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
    const auto& was = journal.elements();
    const auto& is = current.elements();
    for (std::size_t i = 0; i < std::max(was.size(), is.size()); ++i) {
        if (i >= was.size())
            return fmt::format("parameter '{}' is not in the journal's search space", is[i].string_or("name", "?"));
        if (i >= is.size())
            return fmt::format("the journal's parameter '{}' is not in this search space", was[i].string_or("name", "?"));
        if (was[i] != is[i])
            return fmt::format("parameter '{}' differs: journal {} vs now {}", was[i].string_or("name", "?"),
                               was[i].dump(), is[i].dump());
    }
    return "";
}

/// A journal read back: its events, and what was dropped.
struct JournalContents {
    /// Each event's compact JSON text (JsonValue::dump(), about its line's size), parsed again where
    /// it is used: held parsed, a resume of 10,000 trials peaked at 196 MB instead of 61 MB
    /// (bench_tuner's Resume case).
    std::vector<std::string> events;
    std::string warning;                ///< set when a truncated last line was dropped
    std::uintmax_t valid_bytes = 0;     ///< the length of the file up to the last complete line
};

/// How every journal's first line starts (a format-1 journal's with its sorted fields).
inline constexpr std::string_view journal_first_line_start = R"({"event":"run_started")";
inline constexpr std::string_view journal_format1_first_line_start = R"({"direction":")";

/// Whether `line`, the whole of a file that ends without a newline, can be the first line of a
/// journal cut by a crash while it was written. Anything else is another file, not to be written over.
[[nodiscard]] inline bool could_start_journal(std::string_view line) {
    for (std::string_view start : {journal_first_line_start, journal_format1_first_line_start})
        if (line.substr(0, start.size()) == start.substr(0, line.size())) return true;
    return false;
}

/// What reading a journal found besides its events (see for_each_journal_event).
struct JournalRead {
    std::string warning;             ///< set when a truncated last line was dropped, or kept without its newline
    std::uintmax_t valid_bytes = 0;  ///< the length of the file up to the last complete line
};

/// Reads the journal at `path` line by line and hands each event to `on_event(event, line)` as it
/// is read, so that a reader that applies them (load_result) never holds them all: the first is
/// checked to be a run_started of a supported format before it is handed on. A truncated last
/// line is dropped (said in the warning); any other line that is not an event throws IoError
/// naming it, as does a file that is not a journal.
inline JournalRead for_each_journal_event(const std::string& path,
                                          const std::function<void(JsonValue&&, std::size_t)>& on_event) {
    // A directory opens as a stream that reads nothing, which would pass for an empty journal.
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw IoError(fmt::format("journal '{}': cannot read: {}", path, std::strerror(EISDIR)));
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IoError(fmt::format("journal '{}': cannot read: {}", path, std::strerror(errno)));
    JournalRead c;
    bool first = true;
    const auto hand_on = [&](JsonValue&& j, std::size_t number) {
        if (first) {
            first = false;
            if (j.at("event") != "run_started")
                throw IoError(fmt::format("journal '{}' line {}: expected a run_started event", path, number));
            const JsonValue* found = j.find("format");
            const JsonValue format = found ? *found : JsonValue();
            // A number past int64 reads as Unsigned (or Real), so Integer alone can be compared.
            const bool supported = format.type() == JsonValue::Type::Integer &&
                                   format.as_integer<std::int64_t>() >= journal_format_oldest &&
                                   format.as_integer<std::int64_t>() <= journal_format_newest;
            if (!supported)
                throw IoError(fmt::format("journal '{}': format version {} is not one of the supported {} to {}", path,
                                          format.dump(), journal_format_oldest, journal_format_newest));
        }
        on_event(std::move(j), number);
    };
    std::string line;
    std::size_t number = 0;
    while (std::getline(in, line)) {
        ++number;
        bool complete = !in.eof();  // getline stopped at a newline
        if (line.empty() && complete) {
            c.valid_bytes += 1;
            continue;
        }
        std::optional<JsonValue> parsed;
        try {
            parsed = JsonValue::parse(line);
        } catch (const JsonError& e) {
            if (!complete && number == 1 && !could_start_journal(line))
                throw IoError(fmt::format("journal '{}' line 1: not a journal ({}), and a journal's first line starts "
                                          "with {}; the tuner would write over this file: give it another path",
                                          path, e.what(), journal_first_line_start));
            if (!complete) {
                c.warning = fmt::format("journal '{}': dropped a truncated last line {} ({} bytes), "
                                        "most likely cut by a crash while it was written",
                                        path, number, line.size());
                break;
            }
            throw IoError(fmt::format("journal '{}' line {}: {}", path, number, e.what()));
        }
        if (!parsed->is_object() || !parsed->contains("event"))
            throw IoError(fmt::format("journal '{}' line {}: not an event object", path, number));
        c.valid_bytes += line.size() + (complete ? 1 : 0);
        if (!complete)  // a whole object without its newline: kept; JournalWriter writes the newline before it appends
            c.warning = fmt::format("journal '{}': the last line had no newline; kept it", path);
        hand_on(std::move(*parsed), number);
        if (!complete) break;
    }
    return c;
}

/// Every event of the journal at `path`, read with for_each_journal_event.
[[nodiscard]] inline JournalContents read_journal(const std::string& path) {
    JournalContents c;
    JournalRead r = for_each_journal_event(path, [&](JsonValue&& j, std::size_t) { c.events.push_back(j.dump()); });
    c.warning = std::move(r.warning);
    c.valid_bytes = r.valid_bytes;
    return c;
}

/// "pid 4242 on host node7": who takes a journal's lock, as written into its lock file.
[[nodiscard]] inline std::string journal_holder_text() {
    std::array<char, 256> host{};
    if (::gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
    return fmt::format("pid {} on host {}", ::getpid(), host[0] ? host.data() : "?");
}

/// The file a journal path names: `journal` itself, or, when it is a symbolic link, the file the
/// link leads to (followed to the end). The lock file and the checkpoint folder are named after
/// it, so that a run resumed through a link finds the checkpoints of a run made through the file,
/// and a tuner on the link is refused while one runs on the file.
[[nodiscard]] inline std::string journal_file_path(const std::string& journal) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path p = journal;
    for (int hops = 0; hops < 40 && fs::is_symlink(p, ec); ++hops) {
        fs::path target = fs::read_symlink(p, ec);
        if (ec) break;
        p = target.is_absolute() ? target : p.parent_path() / target;
    }
    return p.string();
}

/// The exclusive lock that keeps a second writer off a journal: flock(2) on "<journal>.lock", a
/// file that holds the holder's pid and host name for the message that refuses the next one. The
/// operating system drops the lock when its holder dies, however it dies (kill -9 included), so a
/// lock file left behind never blocks a resume: it is the lock that counts, not the file.
/// The journal file itself is locked too: two names of one file that the lock file's name cannot
/// tell apart (a hard link, a linked folder) still meet there. The descriptors are close-on-exec,
/// so trainers started by CommandObjective never inherit them.
class JournalLock {
public:
    explicit JournalLock(const std::string& journal) : path_(journal_file_path(journal) + ".lock") {
        // The holder deletes the file when it lets go. Whoever opened it just before may then lock
        // a file no longer in the directory: that lock excludes nobody, so check and start over.
        for (int attempt = 0; attempt < 100; ++attempt) {
            fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
            if (fd_ < 0)
                throw IoError(fmt::format("journal '{}': cannot write: cannot open its lock file '{}': {}", journal,
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
                throw IoError(fmt::format("journal '{}': cannot lock it (lock file '{}'): {}", journal, path_,
                                          std::strerror(err)));
            }
            struct stat locked{}, named{};
            if (::fstat(fd_, &locked) == 0 && ::stat(path_.c_str(), &named) == 0 && locked.st_ino == named.st_ino &&
                locked.st_dev == named.st_dev)
                break;
            release(false);
        }
        if (fd_ < 0) throw IoError(fmt::format("journal '{}': cannot lock it: its lock file '{}' keeps being replaced",
                                               journal, path_));
        lock_journal_file(journal);
        std::string holder = journal_holder_text() + '\n';
        if (::ftruncate(fd_, 0) != 0 ||
            ::pwrite(fd_, holder.data(), holder.size(), 0) != static_cast<ssize_t>(holder.size())) {
            int err = errno;
            release(true);
            throw IoError(fmt::format("journal '{}': cannot write its lock file '{}': {}", journal, path_,
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

    // The journal file's own lock (created empty when it does not exist yet, as the writer would).
    // A path that cannot be opened (a folder, say) is left to the reader and the writer, whose
    // errors name it.
    void lock_journal_file(const std::string& journal) {
        journal_fd_ = ::open(journal.c_str(), O_RDONLY | O_CLOEXEC);
        if (journal_fd_ < 0 && errno == ENOENT) journal_fd_ = ::open(journal.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
        if (journal_fd_ < 0) return;
        // A reader asking whether a tuner runs (journal_in_use) holds a shared lock for an instant:
        // a moment's wait tells it from a tuner on another name, which holds the lock for its run.
        int err = 0;
        for (int attempt = 0; attempt < 40; ++attempt) {
            if (::flock(journal_fd_, LOCK_EX | LOCK_NB) == 0) return;
            err = errno;
            if (err != EWOULDBLOCK) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        release(true);
        if (err == EWOULDBLOCK)
            throw IoError(fmt::format("journal '{}' is in use by another tuner, which opened it under another name (a "
                                      "hard link to the same file, or a path through a linked folder); two tuners "
                                      "on one journal would run every trial twice: let that run end, or give this "
                                      "one another journal",
                                      journal));
        throw IoError(fmt::format("journal '{}': cannot lock it: {}", journal, std::strerror(err)));
    }

    // Unlinking before closing, while the lock is still held, is what makes the check above sound.
    void release(bool held) {
        if (journal_fd_ >= 0) ::close(journal_fd_);
        journal_fd_ = -1;
        if (fd_ < 0) return;
        if (held) ::unlink(path_.c_str());
        ::close(fd_);
        fd_ = -1;
    }

    std::string path_;
    int fd_ = -1;
    int journal_fd_ = -1;  // the journal file's own lock
};

/// Whether a tuner is writing `journal` now (it holds the journal file's lock): true or false, or
/// nullopt when the file cannot be opened. Asked with a shared lock taken and let go at once; a
/// tuner that starts at that instant waits for it (JournalLock::lock_journal_file).
[[nodiscard]] inline std::optional<bool> journal_in_use(const std::string& journal) {
    const int fd = ::open(journal.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    std::optional<bool> in_use;
    if (::flock(fd, LOCK_SH | LOCK_NB) == 0) {
        ::flock(fd, LOCK_UN);
        in_use = false;
    } else if (errno == EWOULDBLOCK) {
        in_use = true;
    }
    ::close(fd);
    return in_use;
}

/// Appends events; flushes each line and fsyncs on demand. Not thread-safe: the tuner writes
/// under its lock. It holds the journal's JournalLock from construction to destruction, so a
/// second writer (another Tuner, in this process or another) is refused before it writes anything.
class JournalWriter {
public:
    /// `held`: the journal's lock, when the caller took it already (the Tuner does, before it
    /// reads the journal, so that a second tuner is refused before anything else).
    JournalWriter(const std::string& path, std::uintmax_t keep_bytes, std::unique_ptr<JournalLock> held = nullptr)
        : path_(path), lock_(std::move(held)) {
        // 'e': close-on-exec, so trainers started by CommandObjective do not inherit the journal.
        file_ = std::fopen(path.c_str(), "abe");
        if (!file_) throw IoError(fmt::format("journal '{}': cannot write: {}", path, std::strerror(errno)));
        try {
            if (!lock_) lock_ = std::make_unique<JournalLock>(path);
        } catch (...) {
            std::fclose(file_);
            throw;
        }
        // Cut what a crash left half-written, so the next event starts on a clean line; only now
        // that no other writer can be appending.
        if (::ftruncate(fileno(file_), static_cast<off_t>(keep_bytes)) != 0) {
            int err = errno;
            std::fclose(file_);
            throw IoError(fmt::format("journal '{}': cannot write: {}", path, std::strerror(err)));
        }
        // A last line kept whole without its newline (read_journal keeps it) gets one, or the next
        // event would be appended to it and the journal could not be read again.
        if (keep_bytes > 0 && !ends_with_newline(path, keep_bytes)) {
            if (std::fputc('\n', file_) == EOF || std::fflush(file_) != 0) {
                int err = errno;
                std::fclose(file_);
                throw IoError(fmt::format("journal '{}': cannot write: {}", path, std::strerror(err)));
            }
        }
    }
    JournalWriter(const JournalWriter&) = delete;
    JournalWriter& operator=(const JournalWriter&) = delete;
    ~JournalWriter() {
        if (file_) std::fclose(file_);
    }

    void write(const JsonValue& event) {
        // Free text (a failure reason quoting a trainer's output) may not be UTF-8: never throw on it.
        std::string line = event.dump();
        line += '\n';
        if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0)
            throw IoError(fmt::format("journal '{}': cannot write: {}", path_, std::strerror(errno)));
    }

    void sync() {
        if (::fsync(fileno(file_)) != 0)
            throw IoError(fmt::format("journal '{}': cannot sync: {}", path_, std::strerror(errno)));
    }

private:
    // Whether byte `size` - 1 of the file is '\n' (the file opened for appending cannot be read).
    [[nodiscard]] static bool ends_with_newline(const std::string& path, std::uintmax_t size) {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) throw IoError(fmt::format("journal '{}': cannot read: {}", path, std::strerror(errno)));
        char last = 0;
        const auto got = ::pread(fd, &last, 1, static_cast<off_t>(size - 1));
        const int err = errno;
        ::close(fd);
        if (got != 1) throw IoError(fmt::format("journal '{}': cannot read: {}", path, std::strerror(got < 0 ? err : EIO)));
        return last == '\n';
    }

    std::string path_;
    std::FILE* file_ = nullptr;
    std::unique_ptr<JournalLock> lock_;  // released after ~JournalWriter's body has closed the file
};

}  // namespace detail

}  // namespace hypertune
