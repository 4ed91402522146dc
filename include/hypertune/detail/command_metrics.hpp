// SPDX-License-Identifier: MIT
#pragma once
// CommandObjective's metric reading: Pattern (a metric or step regex with one capture group,
// checked when it is built) and the strict parsing of what it captures (parse_number,
// stops_inside_number). The only command header that includes <regex>.

#include <hypertune/error.hpp>

#include <fmt/core.h>

#include <cctype>
#include <charconv>
#include <cstddef>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

namespace hypertune::detail::command {

inline std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

/// The whole of `text` (trimmed, an optional '+') as a T, or nothing.
template <class T>
std::optional<T> parse_number(std::string_view text) {
    text = trim(text);
    if (!text.empty() && text.front() == '+') {
        text.remove_prefix(1);
        if (!text.empty() && text.front() == '-') return std::nullopt;  // from_chars would read "+-1" as -1
    }
    T v{};
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if constexpr (std::is_floating_point_v<T>) {
        // Too small for a double ("1e-400", a long double printed in full) is zero, not "not a
        // finite number"; too large stays refused.
        if (ec == std::errc::result_out_of_range && end == text.data() + text.size()) {
            const auto exponent = text.find_last_of("eEpP");
            if (exponent != std::string_view::npos && exponent + 1 < text.size() && text[exponent + 1] == '-')
                return text.front() == '-' ? -T{0} : T{0};
        }
    }
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
    return v;
}

/// True when `capture` (a view into `line`) stops inside a number: the line goes on with a digit,
/// or with '.', ',' or an exponent and then a digit, or the capture is a 0 that a hexadecimal
/// number goes on from ("0x1p-2", as printf's %a writes). "validation_loss=0,731" read with the
/// regex validation_loss=([0-9.eE+-]+) captures "0"; that is a decimal comma, not the value 0.
[[nodiscard]] inline bool stops_inside_number(std::string_view line, std::string_view capture) {
    if (capture.empty() || capture.data() < line.data() || capture.data() + capture.size() > line.data() + line.size())
        return false;
    auto rest = line.substr(static_cast<std::size_t>(capture.data() - line.data()) + capture.size());
    auto digit = [&](std::size_t i) { return i < rest.size() && rest[i] >= '0' && rest[i] <= '9'; };
    if (rest.empty()) return false;
    if (digit(0)) return true;
    if ((rest[0] == '.' || rest[0] == ',') && digit(1)) return true;
    if (rest[0] == 'e' || rest[0] == 'E') return digit(1) || (rest.size() > 1 && (rest[1] == '+' || rest[1] == '-') && digit(2));
    if ((rest[0] == 'x' || rest[0] == 'X') && rest.size() > 1 && (std::isxdigit(static_cast<unsigned char>(rest[1])) || rest[1] == '.')) {
        std::string_view number = trim(capture);
        if (!number.empty() && (number.front() == '+' || number.front() == '-')) number.remove_prefix(1);
        return number == "0";
    }
    return false;
}

/// A compiled metric regex with exactly one capture group.
class Pattern {
public:
    Pattern(std::string_view what, std::string source) : source_(std::move(source)) {
        if (has_oversized_number(source_))
            throw InvalidArgument(fmt::format("CommandObjective: {}: regex '{}': a repeat count or back-reference "
                                              "has more than 9 digits",
                                              what, source_));
        try {
            re_ = std::regex(source_, std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
            throw InvalidArgument(fmt::format("CommandObjective: {}: invalid regex '{}': {}", what, source_, e.what()));
        }
        if (re_.mark_count() != 1)
            throw InvalidArgument(fmt::format("CommandObjective: {}: regex '{}' must have exactly one capture group "
                                              "(the value), it has {}",
                                              what, source_, re_.mark_count()));
        literal_ = required_prefix(source_);
        value_follows_literal_ = !literal_.empty() && source_.size() > literal_.size() && source_[literal_.size()] == '(';
    }

    /// For a regex that is a literal and then its capture group ("loss=([0-9.]+)", the usual
    /// form): a "nan" or "inf" (any case, signed) where the value stands on `line`. Such a regex
    /// cannot capture it, and the line would pass for one without the metric.
    [[nodiscard]] std::optional<std::string_view> non_finite(std::string_view line) const {
        if (!value_follows_literal_) return std::nullopt;
        for (auto at = line.find(literal_); at != std::string_view::npos; at = line.find(literal_, at + 1)) {
            const std::string_view rest = line.substr(at + literal_.size());
            std::size_t i = 0;
            while (i < rest.size() && rest[i] == ' ') ++i;
            const std::size_t start = i;
            if (i < rest.size() && (rest[i] == '+' || rest[i] == '-')) ++i;
            const auto is = [&](std::string_view word) {
                if (rest.size() - i < word.size()) return false;
                for (std::size_t k = 0; k < word.size(); ++k)
                    if (std::tolower(static_cast<unsigned char>(rest[i + k])) != word[k]) return false;
                return true;
            };
            const std::size_t n = is("infinity") ? 8 : is("inf") || is("nan") ? 3 : 0;
            if (n == 0) continue;
            const std::size_t end = i + n;
            if (end < rest.size() && std::isalnum(static_cast<unsigned char>(rest[end]))) continue;  // "nano", "info"
            return rest.substr(start, end - start);
        }
        return std::nullopt;
    }

    /// The captured text when `line` matches. With `ends_match`, also whether the capture ends
    /// where the whole match does (nothing after it in the regex consumed any text).
    [[nodiscard]] std::optional<std::string_view> capture(std::string_view line, bool* ends_match = nullptr) const {
        // std::regex is slow (microseconds per line); a literal the match must contain skips most lines.
        if (!literal_.empty() && line.find(literal_) == std::string_view::npos) return std::nullopt;
        std::cmatch m;
        if (!std::regex_search(line.data(), line.data() + line.size(), m, re_)) return std::nullopt;
        if (ends_match) *ends_match = m[1].matched && m[1].second == m[0].second;
        if (!m[1].matched) return std::string_view{};
        return std::string_view(m[1].first, static_cast<std::size_t>(m[1].length()));
    }

    [[nodiscard]] const std::string& source() const noexcept { return source_; }

private:
    // libstdc++ 12 overflows a long (undefined behaviour) on a repeat count or back-reference of 19
    // digits; none of more than 9 makes sense in a metric regex.
    static bool has_oversized_number(std::string_view re) {
        auto digits_from = [&](std::size_t i) {
            std::size_t n = 0;
            while (i + n < re.size() && re[i + n] >= '0' && re[i + n] <= '9') ++n;
            return n;
        };
        for (std::size_t i = 0; i < re.size(); ++i) {
            if (re[i] == '\\') {
                if (digits_from(i + 1) > 9) return true;
                ++i;
            } else if (re[i] == '{') {
                for (auto j = i + 1; j < re.size() && re[j] != '}'; ++j)
                    if (digits_from(j) > 9) return true;
            }
        }
        return false;
    }

    // The literal characters the regex starts with; every match contains them. Empty when unsure.
    static std::string required_prefix(std::string_view re) {
        if (re.find('|') != std::string_view::npos) return {};
        std::string out;
        for (char c : re) {
            if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) {
                if ((c == '?' || c == '*' || c == '{') && !out.empty()) out.pop_back();  // the last one is optional
                break;
            }
            out += c;
        }
        return out;
    }

    std::string source_;
    std::regex re_;
    std::string literal_;
    bool value_follows_literal_ = false;  // the regex is literal_ and then its capture group
};

}  // namespace hypertune::detail::command
