// SPDX-License-Identifier: MIT
#pragma once
// str_cat: text and integers joined into one string, sized once. Schedulers write a reason on
// every stop, pause and promotion they decide, on the path of each report; fmt::format parses its
// format string at run time on every call (about 1,400 instructions for a reason with four
// integers, most of a decision's cost), where this converts each integer with std::to_chars and
// copies the rest.
//
//     std::string why = str_cat({"not in the top 1/", eta, " (", q, " of ", m, ")"});
//
// join: strings with a separator between them, for the lists in error messages. fmt::join would
// do it, but formatting its strings makes fmt 9 emit formatter<string_view>::parse, where GCC 12
// at -O3 warns of a write past fill_t's buffer (-Wstringop-overflow, a false positive): a user's
// `g++ -O3 -Wall -Wextra -Werror` build of a small tuning program then failed in the tuner's
// header (tests/header_only, header_only_release_program, compiles one so).

#include <charconv>
#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

namespace hypertune::detail {

/// One piece of str_cat's text: a string, or an integer written in decimal. Implicit, so that a
/// call lists its pieces as they read. A string piece refers to its text without copying it: make
/// pieces in the call to str_cat, where every argument outlives them.
class TextPiece {
public:
    TextPiece(std::string_view text) noexcept : text_(text.data()), size_(text.size()) {}
    TextPiece(const char* text) noexcept : TextPiece(std::string_view(text)) {}
    TextPiece(const std::string& text) noexcept : TextPiece(std::string_view(text)) {}
    template <std::integral Integer>
        requires(!std::same_as<Integer, bool> && !std::same_as<Integer, char>)
    TextPiece(Integer value) noexcept {
        size_ = static_cast<std::size_t>(std::to_chars(digits_, digits_ + sizeof digits_, value).ptr - digits_);
    }

    // The digits live in the piece itself, so that a copy stays valid: the view is made on demand.
    [[nodiscard]] std::string_view view() const noexcept {
        return text_ != nullptr ? std::string_view(text_, size_) : std::string_view(digits_, size_);
    }

private:
    const char* text_ = nullptr;
    std::size_t size_ = 0;
    char digits_[24] = {};  // the longest 64-bit integer with its sign has 20 characters
};

/// The pieces, in order, as one string.
[[nodiscard]] inline std::string str_cat(std::initializer_list<TextPiece> pieces) {
    std::size_t size = 0;
    for (const TextPiece& p : pieces) size += p.view().size();
    std::string out(size, '\0');
    char* at = out.data();
    for (const TextPiece& p : pieces) {
        const std::string_view v = p.view();
        v.copy(at, v.size());
        at += v.size();
    }
    return out;
}

/// The strings (std::string or std::string_view) with `separator` between each two:
/// join(std::vector<std::string>{"a", "b"}, ", ") is "a, b".
template <typename Strings>
[[nodiscard]] std::string join(const Strings& parts, std::string_view separator) {
    std::string out;
    bool first = true;
    for (const auto& part : parts) {
        if (!first) out += separator;
        out += std::string_view(part);
        first = false;
    }
    return out;
}

}  // namespace hypertune::detail
