// SPDX-License-Identifier: MIT
#pragma once
// CommandObjective's command template: each argument parsed into literal text and {placeholders}
// (parse_argument), the built-in placeholder names, and the shell-like quoting that shows a
// command in logs and messages (quote, join_quoted).

#include <hypertune/error.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hypertune::detail::command {

/// Shell-like quoting, only to show a command in logs and messages.
inline std::string quote(std::string_view arg) {
    bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_-+=.,/:@%").find(c) != std::string_view::npos;
    });
    if (plain) return std::string(arg);
    std::string out = "'";
    for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

inline std::string join_quoted(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& a : argv) {
        if (!out.empty()) out += ' ';
        out += quote(a);  // appended, not `" " + quote(a)`: GCC 12 warns (-Wrestrict) on that at -O2
    }
    return out;
}

/// One argument of the command template: literal text and placeholders.
struct ArgumentTemplate {
    struct Piece {
        bool placeholder = false;
        std::string text;  // the literal, or the placeholder's name
    };
    std::vector<Piece> pieces;
    std::string source;
};

inline ArgumentTemplate parse_argument(std::string source) {
    ArgumentTemplate arg;
    std::string literal;
    for (std::size_t i = 0; i < source.size(); ++i) {
        char c = source[i];
        bool doubled = i + 1 < source.size() && source[i + 1] == c;
        if ((c == '{' || c == '}') && doubled) {
            literal += c;
            ++i;
        } else if (c == '{') {
            auto close = source.find('}', i);
            std::string name = close == std::string::npos ? std::string() : source.substr(i + 1, close - i - 1);
            if (name.empty() || name.find('{') != std::string::npos)
                throw InvalidArgument(fmt::format("CommandObjective: argument '{}': '{{' at {} does not open a "
                                                  "placeholder {{name}} (write '{{{{' for a literal brace)",
                                                  source, i));
            if (!literal.empty()) arg.pieces.push_back({false, std::move(literal)});
            literal.clear();
            arg.pieces.push_back({true, std::move(name)});
            i = close;
        } else if (c == '}') {
            throw InvalidArgument(fmt::format("CommandObjective: argument '{}': unmatched '}}' at {} (write '}}}}' "
                                              "for a literal brace)",
                                              source, i));
        } else {
            literal += c;
        }
    }
    if (!literal.empty()) arg.pieces.push_back({false, std::move(literal)});
    arg.source = std::move(source);
    return arg;
}

inline constexpr std::array<std::string_view, 4> builtin_placeholders{"budget", "resumed_from", "trial_id",
                                                                      "checkpoint_dir"};

}  // namespace hypertune::detail::command
