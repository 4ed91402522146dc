// SPDX-License-Identifier: MIT
#pragma once
// Writing an output file (CSV, JSON, the HTML report), whole or in pieces, with errors that say
// why: the path and the operating system's reason (a missing directory, no permission, a full disk).

#include <hypertune/error.hpp>

#include <fmt/core.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

namespace hypertune::detail {

/// The text of an errno value ("No such file or directory"); thread-safe, unlike strerror.
[[nodiscard]] inline std::string os_reason(int err) {
    return err == 0 ? std::string("unknown error") : std::error_code(err, std::generic_category()).message();
}

/// A file written in pieces (the results file, trial by trial), replacing what `path` held. `what`
/// names the kind of file in messages ("JSON file"); a failure throws IoError with the path and
/// the operating system's reason, at the opening or, for a write, at close().
class OutputFile {
public:
    OutputFile(const std::string& path, std::string_view what) : path_(path), what_(what) {
        errno = 0;
        file_ = std::fopen(path.c_str(), "wbe");  // 'e': close-on-exec, so no trainer inherits it
        if (!file_) throw IoError(fmt::format("{} '{}': cannot write: {}", what_, path_, os_reason(errno)));
    }
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;
    ~OutputFile() {
        if (file_) std::fclose(file_);
    }

    /// Appends `text`; the first failure is kept for close().
    void write(std::string_view text) {
        errno = 0;
        if (err_ == 0 && std::fwrite(text.data(), 1, text.size(), file_) != text.size()) err_ = errno ? errno : EIO;
    }

    /// Flushes and closes, or throws IoError with the first failure.
    void close() {
        errno = 0;
        if (err_ == 0 && std::fflush(file_) != 0) err_ = errno ? errno : EIO;
        // fclose can report what fflush did not (a delayed write error on a network file system).
        if (std::fclose(std::exchange(file_, nullptr)) != 0 && err_ == 0) err_ = errno ? errno : EIO;
        if (err_ != 0) throw IoError(fmt::format("{} '{}': error while writing: {}", what_, path_, os_reason(err_)));
    }

private:
    std::string path_;
    std::string what_;
    std::FILE* file_ = nullptr;
    int err_ = 0;
};

/// Replaces `path` with `content`. `what` names the kind of file in messages ("CSV file").
inline void write_whole_file(const std::string& path, std::string_view what, std::string_view content) {
    OutputFile file(path, what);
    file.write(content);
    file.close();
}

}  // namespace hypertune::detail
