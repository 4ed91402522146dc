// SPDX-License-Identifier: MIT
#pragma once
// Writing a whole output file (CSV, JSON, the HTML report) with errors that say why: the path and
// the operating system's reason (a missing directory, no permission, a full disk).

#include <hypertune/error.hpp>

#include <fmt/core.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <string_view>
#include <system_error>

namespace hypertune::detail {

/// The text of an errno value ("No such file or directory"); thread-safe, unlike strerror.
[[nodiscard]] inline std::string os_reason(int err) {
    return err == 0 ? std::string("unknown error") : std::error_code(err, std::generic_category()).message();
}

/// Replaces `path` with `content`. `what` names the kind of file in messages ("CSV file").
inline void write_whole_file(const std::string& path, std::string_view what, std::string_view content) {
    errno = 0;
    std::FILE* f = std::fopen(path.c_str(), "wbe");  // 'e': close-on-exec, so no trainer inherits it
    if (!f) throw IoError(fmt::format("{} '{}': cannot write: {}", what, path, os_reason(errno)));
    errno = 0;
    bool written = std::fwrite(content.data(), 1, content.size(), f) == content.size() && std::fflush(f) == 0;
    int err = errno;
    // fclose can report what fflush did not (a delayed write error on a network file system).
    if (std::fclose(f) != 0 && written) {
        written = false;
        err = errno;
    }
    if (!written) throw IoError(fmt::format("{} '{}': error while writing: {}", what, path, os_reason(err)));
}

}  // namespace hypertune::detail
