// SPDX-License-Identifier: MIT
#pragma once
// Well-formed UTF-8 (RFC 3629), and text made so: the files a run writes (CSV, JSON) must stay
// readable by a strict UTF-8 reader whatever bytes a trainer's output put into a failure reason.

#include <cstddef>
#include <string>
#include <string_view>

namespace hypertune::detail {

/// The length of the well-formed UTF-8 sequence at the start of `s` (RFC 3629: no overlong forms,
/// no surrogates, nothing above U+10FFFF), or 0 when there is none.
[[nodiscard]] inline std::size_t utf8_sequence_length(std::string_view s) {
    auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    unsigned char b = byte(0);
    if (b < 0x80) return 1;
    std::size_t n = b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
    if (n == 0 || s.size() < n) return 0;
    // The second byte's range depends on the first (this is what excludes overlongs and surrogates).
    unsigned char lo = b == 0xE0 ? 0xA0 : b == 0xF0 ? 0x90 : 0x80;
    unsigned char hi = b == 0xED ? 0x9F : b == 0xF4 ? 0x8F : 0xBF;
    if (byte(1) < lo || byte(1) > hi) return 0;
    for (std::size_t i = 2; i < n; ++i)
        if ((byte(i) & 0xC0) != 0x80) return 0;
    return n;
}

/// `s` with every byte that does not belong to well-formed UTF-8 replaced by U+FFFD, as the JSON
/// output does: free text (a failure reason quoting a trainer's Latin-1 stderr) must not make the
/// whole file unreadable to a UTF-8 reader such as pandas.
[[nodiscard]] inline std::string valid_utf8(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    while (!s.empty()) {
        std::size_t n = utf8_sequence_length(s);
        if (n == 0) {
            out += "\xEF\xBF\xBD";  // U+FFFD
            n = 1;
        } else {
            out += s.substr(0, n);
        }
        s.remove_prefix(n);
    }
    return out;
}

}  // namespace hypertune::detail
