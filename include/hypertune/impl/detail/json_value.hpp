// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/detail/json_value.hpp>: JSON's reader and writer. Inline in
// header-only mode, compiled into hypertune::compiled otherwise (see <hypertune/linkage.hpp>).

#include <hypertune/detail/json_value.hpp>
#include <hypertune/detail/utf8.hpp>
#include <hypertune/linkage.hpp>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/detail/json_value.hpp> is compiled into hypertune::compiled: include <hypertune/detail/json_value.hpp>"
#endif

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <system_error>

namespace hypertune::detail {

HYPERTUNE_INLINE JsonValue JsonValue::object(std::initializer_list<Member> members) {
    JsonValue v;
    v.type_ = Type::Object;
    for (const Member& m : members) v[m.key] = m.value;
    return v;
}

HYPERTUNE_INLINE const char* JsonValue::type_name() const noexcept {
    switch (type_) {
        case Type::Null: return "null";
        case Type::Boolean: return "boolean";
        case Type::Integer:
        case Type::Unsigned:
        case Type::Real: return "number";
        case Type::String: return "string";
        case Type::Array: return "array";
        case Type::Object: return "object";
    }
    return "?";
}

HYPERTUNE_INLINE void JsonValue::throw_not(const char* wanted) const {
    std::string found = type_name();
    if (!is_array() && !is_object()) found += ' ' + dump();
    throw JsonError("expected " + std::string(wanted) + ", got " + found);
}

HYPERTUNE_INLINE void JsonValue::throw_not_integer() const {
    if (is_integer()) throw JsonError("integer " + dump() + " out of range");
    throw_not("an integer");
}

HYPERTUNE_INLINE bool JsonValue::as_boolean() const {
    if (!is_boolean()) throw_not("true or false");
    return boolean_;
}

HYPERTUNE_INLINE double JsonValue::as_double() const {
    switch (type_) {
        case Type::Integer: return static_cast<double>(integer_);
        case Type::Unsigned: return static_cast<double>(unsigned_);
        case Type::Real: return real_;
        default: throw_not("a number");
    }
}

HYPERTUNE_INLINE const std::string& JsonValue::as_string() const {
    if (!is_string()) throw_not("a string");
    return string_;
}

HYPERTUNE_INLINE void JsonValue::push_back(JsonValue v) {
    if (is_null()) type_ = Type::Array;
    if (!is_array()) throw_not("an array");
    elements_.push_back(std::move(v));
}

HYPERTUNE_INLINE const std::vector<JsonValue>& JsonValue::elements() const {
    if (!is_array()) throw_not("an array");
    return elements_;
}

HYPERTUNE_INLINE JsonValue& JsonValue::operator[](std::string_view key) {
    if (is_null()) type_ = Type::Object;
    if (!is_object()) throw_not("an object");
    for (std::size_t i = 0; i < keys_.size(); ++i)
        if (keys_[i] == key) return elements_[i];
    keys_.emplace_back(key);
    return elements_.emplace_back();
}

HYPERTUNE_INLINE const JsonValue* JsonValue::find(std::string_view key) const noexcept {
    if (!is_object()) return nullptr;
    for (std::size_t i = 0; i < keys_.size(); ++i)
        if (keys_[i] == key) return &elements_[i];
    return nullptr;
}

HYPERTUNE_INLINE const JsonValue& JsonValue::at(std::string_view key) const {
    if (!is_object()) throw_not("an object");
    if (const JsonValue* v = find(key)) return *v;
    throw JsonError("field '" + std::string(key) + "' is missing");
}

HYPERTUNE_INLINE const std::vector<std::string>& JsonValue::keys() const {
    if (!is_object()) throw_not("an object");
    return keys_;
}

HYPERTUNE_INLINE const JsonValue& JsonValue::field(std::size_t i) const {
    if (!is_object()) throw_not("an object");
    return elements_.at(i);
}

HYPERTUNE_INLINE std::string JsonValue::string_or(std::string_view key, std::string_view fallback) const {
    const JsonValue* v = find(key);
    return v ? v->as_string() : std::string(fallback);
}

HYPERTUNE_INLINE double JsonValue::number_or(std::string_view key, double fallback) const {
    const JsonValue* v = find(key);
    return v ? v->as_double() : fallback;
}

HYPERTUNE_INLINE bool JsonValue::boolean_or(std::string_view key, bool fallback) const {
    const JsonValue* v = find(key);
    return v ? v->as_boolean() : fallback;
}

HYPERTUNE_INLINE std::size_t JsonValue::size() const noexcept {
    return is_array() || is_object() ? elements_.size() : 0;
}

HYPERTUNE_INLINE bool JsonValue::equal(const JsonValue& a, const JsonValue& b) noexcept {
    if (a.is_number() && b.is_number()) {
        if (a.type_ == Type::Real || b.type_ == Type::Real) return a.as_double() == b.as_double();
        if (a.type_ == b.type_) return a.type_ == Type::Integer ? a.integer_ == b.integer_ : a.unsigned_ == b.unsigned_;
        const JsonValue& s = a.type_ == Type::Integer ? a : b;  // one signed, one unsigned
        const JsonValue& u = a.type_ == Type::Integer ? b : a;
        return s.integer_ >= 0 && static_cast<std::uint64_t>(s.integer_) == u.unsigned_;
    }
    if (a.type_ != b.type_) return false;
    switch (a.type_) {
        case Type::Null: return true;
        case Type::Boolean: return a.boolean_ == b.boolean_;
        case Type::String: return a.string_ == b.string_;
        case Type::Array: return a.elements_ == b.elements_;
        case Type::Object:
            if (a.keys_.size() != b.keys_.size()) return false;
            for (std::size_t i = 0; i < a.keys_.size(); ++i) {
                const JsonValue* other = b.find(a.keys_[i]);
                if (!other || !equal(a.elements_[i], *other)) return false;
            }
            return true;
        default: return false;
    }
}

namespace json_text {

inline void write_string(std::string& out, std::string_view s) {
    static constexpr char hex[] = "0123456789abcdef";
    out += '"';
    while (!s.empty()) {
        const auto c = static_cast<unsigned char>(s.front());
        std::size_t n = 1;
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20) {
                    out += "\\u00";
                    out += hex[c >> 4];
                    out += hex[c & 0xF];
                } else if (c < 0x80) {
                    out += static_cast<char>(c);
                } else if ((n = utf8_sequence_length(s)) == 0) {
                    out += "\xEF\xBF\xBD";  // U+FFFD for a byte that is not UTF-8
                    n = 1;
                } else {
                    out += s.substr(0, n);
                }
        }
        s.remove_prefix(n);
    }
    out += '"';
}

template <class T>
void write_number(std::string& out, T x) {
    std::array<char, 32> buf;
    auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), x);
    out.append(buf.data(), end);
}

inline void write_real(std::string& out, double x) {
    if (!std::isfinite(x)) {
        out += "null";  // as nlohmann writes them: JSON has no NaN or infinity
        return;
    }
    const std::size_t start = out.size();
    write_number(out, x);
    // "3" would read back as an integer: keep it a real number.
    if (out.find_first_of(".e", start) == std::string::npos) out += ".0";
}

inline void new_line(std::string& out, int indent, int depth) {
    if (indent < 0) return;
    out += '\n';
    out.append(static_cast<std::size_t>(indent) * static_cast<std::size_t>(depth), ' ');
}

/// A recursive-descent reader of RFC 8259 JSON.
class Reader {
public:
    explicit Reader(std::string_view text) : text_(text) {}

    JsonValue document() {
        // A byte order mark, as an editor may put at the start of a file: skipped, as nlohmann
        // skips it (it read the journals written before this reader).
        if (text_.starts_with("\xEF\xBB\xBF")) pos_ = 3;
        JsonValue v = value(0);
        skip_space();
        if (pos_ != text_.size()) fail("unexpected text after the value");
        return v;
    }

private:
    static constexpr int max_depth = 512;  // deeper nesting is refused, not a stack overflow

    [[noreturn]] void fail(const std::string& what) const {
        throw JsonError("not JSON at byte " + std::to_string(pos_ + 1) + ": " + what);
    }

    void skip_space() {
        while (pos_ < text_.size() &&
               (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
            ++pos_;
    }

    /// Skips spaces, then `c` if it is next: whether it was.
    bool consume(char c) {
        skip_space();
        if (pos_ >= text_.size() || text_[pos_] != c) return false;
        ++pos_;
        return true;
    }

    void expect_word(std::string_view word) {
        if (text_.substr(pos_, word.size()) != word) fail("expected a value");
        pos_ += word.size();
    }

    JsonValue value(int depth) {
        if (depth > max_depth) fail("nested more than 512 deep");
        skip_space();
        if (pos_ >= text_.size()) fail("the text ends where a value should be");
        switch (text_[pos_]) {
            case '{': return object(depth);
            case '[': return array(depth);
            case '"': return JsonValue(string());
            case 't': expect_word("true"); return JsonValue(true);
            case 'f': expect_word("false"); return JsonValue(false);
            case 'n': expect_word("null"); return JsonValue();
            default: return number();
        }
    }

    JsonValue object(int depth) {
        JsonValue v = JsonValue::object();
        ++pos_;
        if (consume('}')) return v;
        do {
            skip_space();
            if (pos_ >= text_.size() || text_[pos_] != '"') fail("expected a field name in quotes");
            std::string key = string();
            if (!consume(':')) fail("expected ':' after a field name");
            v[key] = value(depth + 1);
        } while (consume(','));
        if (!consume('}')) fail("expected ',' or '}' in an object");
        return v;
    }

    JsonValue array(int depth) {
        JsonValue v = JsonValue::array();
        ++pos_;
        if (consume(']')) return v;
        do {
            v.push_back(value(depth + 1));
        } while (consume(','));
        if (!consume(']')) fail("expected ',' or ']' in an array");
        return v;
    }

    unsigned hex4() {
        if (text_.size() - pos_ < 4) fail("a \\u escape needs four hex digits");
        unsigned v = 0;
        for (int i = 0; i < 4; ++i) {
            const char c = text_[pos_++];
            v <<= 4;
            if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
            else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
            else fail("a \\u escape needs four hex digits");
        }
        return v;
    }

    static void append_utf8(std::string& out, unsigned cp) {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }

    std::string string() {
        ++pos_;  // the opening quote
        std::string out;
        for (;;) {
            if (pos_ >= text_.size()) fail("a string is not closed");
            const auto c = static_cast<unsigned char>(text_[pos_]);
            if (c == '"') {
                ++pos_;
                return out;
            }
            if (c < 0x20) fail("a control character in a string must be escaped");
            if (c == '\\') {
                if (++pos_ >= text_.size()) fail("a string is not closed");
                const char e = text_[pos_++];
                switch (e) {
                    case '"': out += '"'; break;
                    case '\\': out += '\\'; break;
                    case '/': out += '/'; break;
                    case 'b': out += '\b'; break;
                    case 'f': out += '\f'; break;
                    case 'n': out += '\n'; break;
                    case 'r': out += '\r'; break;
                    case 't': out += '\t'; break;
                    case 'u': {
                        unsigned cp = hex4();
                        if (cp >= 0xDC00 && cp <= 0xDFFF) fail("a \\u escape of a lone low surrogate");
                        if (cp >= 0xD800 && cp <= 0xDBFF) {
                            if (text_.substr(pos_, 2) != "\\u") fail("a high surrogate without its low one");
                            pos_ += 2;
                            const unsigned low = hex4();
                            if (low < 0xDC00 || low > 0xDFFF) fail("a high surrogate without its low one");
                            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                        }
                        append_utf8(out, cp);
                        break;
                    }
                    default: --pos_; fail("an unknown escape in a string");
                }
                continue;
            }
            if (c < 0x80) {
                out += static_cast<char>(c);
                ++pos_;
                continue;
            }
            const std::size_t n = utf8_sequence_length(text_.substr(pos_));
            if (n == 0) fail("a string that is not valid UTF-8");
            out += text_.substr(pos_, n);
            pos_ += n;
        }
    }

    JsonValue number() {
        const std::size_t start = pos_;
        auto digits = [&] {
            const std::size_t from = pos_;
            while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
            return pos_ - from;
        };
        const bool negative = pos_ < text_.size() && text_[pos_] == '-';
        if (negative) ++pos_;
        if (pos_ < text_.size() && text_[pos_] == '0') ++pos_;
        else if (digits() == 0) fail("expected a value");
        bool integer = true;
        if (pos_ < text_.size() && text_[pos_] == '.') {
            ++pos_;
            integer = false;
            if (digits() == 0) fail("expected a digit after the decimal point");
        }
        if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
            ++pos_;
            integer = false;
            if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
            if (digits() == 0) fail("expected a digit in the exponent");
        }
        const char* first = text_.data() + start;
        const char* last = text_.data() + pos_;
        if (integer) {
            if (negative) {
                std::int64_t i = 0;
                if (auto r = std::from_chars(first, last, i); r.ec == std::errc() && r.ptr == last) return JsonValue(i);
            } else {
                std::uint64_t u = 0;
                if (auto r = std::from_chars(first, last, u); r.ec == std::errc() && r.ptr == last) {
                    if (u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
                        return JsonValue(static_cast<std::int64_t>(u));
                    return JsonValue(u);
                }
            }
            // Beyond 64 bits: a real number, as nlohmann reads it.
        }
        double x = 0.0;
        auto r = std::from_chars(first, last, x);
        if (r.ec == std::errc::result_out_of_range) {
            pos_ = start;
            fail("the number " + std::string(first, last) + " is out of a double's range");
        }
        if (r.ec != std::errc() || r.ptr != last) fail("expected a value");
        return JsonValue(x);
    }

    std::string_view text_;
    std::size_t pos_ = 0;
};

}  // namespace json_text

HYPERTUNE_INLINE void JsonValue::write(std::string& out, int indent, int depth) const {
    switch (type_) {
        case Type::Null: out += "null"; return;
        case Type::Boolean: out += boolean_ ? "true" : "false"; return;
        case Type::Integer: json_text::write_number(out, integer_); return;
        case Type::Unsigned: json_text::write_number(out, unsigned_); return;
        case Type::Real: json_text::write_real(out, real_); return;
        case Type::String: json_text::write_string(out, string_); return;
        case Type::Array:
            out += '[';
            for (std::size_t i = 0; i < elements_.size(); ++i) {
                if (i > 0) out += ',';
                json_text::new_line(out, indent, depth + 1);
                elements_[i].write(out, indent, depth + 1);
            }
            if (!elements_.empty()) json_text::new_line(out, indent, depth);
            out += ']';
            return;
        case Type::Object:
            out += '{';
            for (std::size_t i = 0; i < keys_.size(); ++i) {
                if (i > 0) out += ',';
                json_text::new_line(out, indent, depth + 1);
                json_text::write_string(out, keys_[i]);
                out += indent < 0 ? ":" : ": ";
                elements_[i].write(out, indent, depth + 1);
            }
            if (!keys_.empty()) json_text::new_line(out, indent, depth);
            out += '}';
            return;
    }
}

HYPERTUNE_INLINE std::string JsonValue::dump() const {
    std::string out;
    write(out, -1, 0);
    return out;
}

HYPERTUNE_INLINE std::string JsonValue::dump(int indent) const {
    std::string out;
    write(out, indent, 0);
    return out;
}

HYPERTUNE_INLINE JsonValue JsonValue::parse(std::string_view text) { return json_text::Reader(text).document(); }

}  // namespace hypertune::detail
