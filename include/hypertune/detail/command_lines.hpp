// SPDX-License-Identifier: MIT
#pragma once
// CommandObjective's output handling: LineSplitter cuts the trainer's byte streams into bounded
// lines, TrialLog writes them to trial-<id>.log between "# hypertune: ..." notes.

#include <hypertune/detail/command_process.hpp>  // errno_text
#include <hypertune/error.hpp>
#include <hypertune/types.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace hypertune::detail::command {

/// Splits a byte stream into lines, keeping at most max_bytes of each.
class LineSplitter {
public:
    explicit LineSplitter(std::size_t max_bytes) : max_(max_bytes) {}

    /// Calls on_line(text, truncated) for every line completed by `chunk`.
    template <class F>
    void feed(std::string_view chunk, F&& on_line) {
        while (!chunk.empty()) {
            auto end = chunk.find_first_of("\r\n");
            auto piece = chunk.substr(0, end);
            auto room = max_ - std::min(max_, line_.size());
            if (piece.size() > room) truncated_ = true;
            line_.append(piece.substr(0, room));
            if (end == std::string_view::npos) return;
            emit(on_line);
            chunk.remove_prefix(end + 1);
        }
    }

    /// The last line, when the stream ended without a newline.
    template <class F>
    void finish(F&& on_line) {
        emit(on_line);
    }

private:
    template <class F>
    void emit(F& on_line) {
        if (!line_.empty()) on_line(std::string_view(line_), truncated_);
        line_.clear();
        truncated_ = false;
    }

    std::size_t max_;
    std::string line_;
    bool truncated_ = false;
};

/// trial-<id>.log in the log directory, or nothing.
class TrialLog {
public:
    TrialLog(const std::string& dir, TrialId id) {
        if (dir.empty()) return;
        std::error_code ec;
        std::filesystem::create_directories(dir, ec);
        auto path = std::filesystem::path(dir) / fmt::format("trial-{}.log", id);
        file_ = std::fopen(path.c_str(), "ae");  // 'e': close-on-exec, not inherited by other trials' trainers
        if (!file_) throw IoError(fmt::format("CommandObjective: cannot open log file '{}': {}", path.string(),
                                              errno_text(errno)));
    }
    TrialLog(const TrialLog&) = delete;
    TrialLog& operator=(const TrialLog&) = delete;
    ~TrialLog() {
        if (file_) std::fclose(file_);
    }

    void line(std::string_view text, bool truncated) {
        if (!file_) return;
        std::fwrite(text.data(), 1, text.size(), file_);
        std::fputs(truncated ? " [line cut]\n" : "\n", file_);
    }
    void note(std::string_view text) {
        if (!file_) return;
        fmt::print(file_, "# hypertune: {}\n", text);
        flush();
    }
    void flush() {
        if (file_) std::fflush(file_);
    }

private:
    std::FILE* file_ = nullptr;
};

}  // namespace hypertune::detail::command
