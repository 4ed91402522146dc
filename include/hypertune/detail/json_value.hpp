// SPDX-License-Identifier: MIT
#pragma once
// JsonValue: the JSON of the files a run writes and reads itself (the journal's lines, the results
// file), with its own reader and writer. The runner needs a small part of JSON: objects that keep
// their fields in the order written, arrays, strings, 64-bit integers and doubles. nlohmann/json
// gives far more, but its templates cost every file that includes the tuner seconds of compile
// time; it stays the type of the public JSON add-on (<hypertune/json.hpp>), which converts.

#include <hypertune/error.hpp>
#include <hypertune/linkage.hpp>

#include <cmath>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace hypertune::detail {

/// A document that is not JSON, or a field that is missing or of another type. The journal's
/// reader adds the file and the line to its message.
class JsonError : public IoError {
public:
    using IoError::IoError;
};

class JsonValue {
public:
    enum class Type { Null, Boolean, Integer, Unsigned, Real, String, Array, Object };
    struct Member;

    JsonValue() noexcept = default;
    JsonValue(std::nullptr_t) noexcept {}
    JsonValue(bool b) noexcept : type_(Type::Boolean), boolean_(b) {}
    template <std::integral T>
        requires(!std::same_as<T, bool>)
    JsonValue(T x) noexcept {
        if constexpr (std::is_signed_v<T>) {
            type_ = Type::Integer;
            integer_ = x;
        } else {
            type_ = Type::Unsigned;
            unsigned_ = x;
        }
    }
    JsonValue(double x) noexcept : type_(Type::Real), real_(x) {}
    JsonValue(std::string s) noexcept : type_(Type::String), string_(std::move(s)) {}
    JsonValue(std::string_view s) : JsonValue(std::string(s)) {}
    JsonValue(const char* s) : JsonValue(std::string(s)) {}
    /// A finite number, or null for NaN and the infinities (JSON has neither).
    [[nodiscard]] static JsonValue number_or_null(double x) noexcept {
        return std::isfinite(x) ? JsonValue(x) : JsonValue();
    }

    [[nodiscard]] static JsonValue array() {
        JsonValue v;
        v.type_ = Type::Array;
        return v;
    }
    [[nodiscard]] static JsonValue object() {
        JsonValue v;
        v.type_ = Type::Object;
        return v;
    }
    /// An object of these fields, in this order.
    [[nodiscard]] static JsonValue object(std::initializer_list<Member> members);

    [[nodiscard]] Type type() const noexcept { return type_; }
    [[nodiscard]] bool is_null() const noexcept { return type_ == Type::Null; }
    [[nodiscard]] bool is_boolean() const noexcept { return type_ == Type::Boolean; }
    [[nodiscard]] bool is_integer() const noexcept { return type_ == Type::Integer || type_ == Type::Unsigned; }
    [[nodiscard]] bool is_number() const noexcept { return is_integer() || type_ == Type::Real; }
    [[nodiscard]] bool is_string() const noexcept { return type_ == Type::String; }
    [[nodiscard]] bool is_array() const noexcept { return type_ == Type::Array; }
    [[nodiscard]] bool is_object() const noexcept { return type_ == Type::Object; }
    /// "null", "boolean", "number", "string", "array" or "object" (nlohmann's words).
    [[nodiscard]] const char* type_name() const noexcept;

    // Scalars; each throws JsonError naming the type found when it is another.
    [[nodiscard]] bool as_boolean() const;
    [[nodiscard]] double as_double() const;  ///< any number
    [[nodiscard]] const std::string& as_string() const;
    /// An integer that fits T. A real number is refused, not converted: out of range, that is
    /// undefined.
    template <std::integral T>
    [[nodiscard]] T as_integer() const {
        if (type_ == Type::Integer && std::in_range<T>(integer_)) return static_cast<T>(integer_);
        if (type_ == Type::Unsigned && std::in_range<T>(unsigned_)) return static_cast<T>(unsigned_);
        throw_not_integer();
    }

    // Arrays.
    void push_back(JsonValue v);
    [[nodiscard]] const std::vector<JsonValue>& elements() const;

    // Objects, whose fields keep the order in which they were first set.
    /// The field `key`, set to null first when there is none (like a std::map's operator[]).
    JsonValue& operator[](std::string_view key);
    [[nodiscard]] const JsonValue* find(std::string_view key) const noexcept;
    [[nodiscard]] bool contains(std::string_view key) const noexcept { return find(key) != nullptr; }
    /// The field `key`; throws JsonError when there is none.
    [[nodiscard]] const JsonValue& at(std::string_view key) const;
    /// The fields' names, in order; field(i) is the value of keys()[i].
    [[nodiscard]] const std::vector<std::string>& keys() const;
    [[nodiscard]] const JsonValue& field(std::size_t i) const;
    // A field that may be missing: its value, or `fallback` when there is no such field (or this
    // is not an object); JsonError when it is there with another type.
    [[nodiscard]] std::string string_or(std::string_view key, std::string_view fallback) const;
    [[nodiscard]] double number_or(std::string_view key, double fallback) const;
    [[nodiscard]] bool boolean_or(std::string_view key, bool fallback) const;

    /// The number of elements of an array or fields of an object; 0 for anything else.
    [[nodiscard]] std::size_t size() const noexcept;

    /// Compact text, as one journal line: no spaces, no newline. Strings are written as valid
    /// UTF-8 whatever their bytes (a byte that is not becomes U+FFFD), numbers as the shortest text
    /// that reads back the same double.
    [[nodiscard]] std::string dump() const;
    /// Indented text (`indent` spaces a level), as the results file.
    [[nodiscard]] std::string dump(int indent) const;
    /// Appends dump(indent) of this value as it reads `depth` levels down a document, so that a
    /// large document can be written a part at a time (the results file, trial by trial).
    void dump_to(std::string& out, int indent, int depth) const { write(out, indent, depth); }
    /// Reads one JSON document (RFC 8259); throws JsonError naming the byte where it is not JSON.
    [[nodiscard]] static JsonValue parse(std::string_view text);

    /// Equal as JSON: an object's fields in any order, numbers by value.
    friend bool operator==(const JsonValue& a, const JsonValue& b) noexcept { return equal(a, b); }

private:
    [[noreturn]] void throw_not_integer() const;
    [[noreturn]] void throw_not(const char* wanted) const;
    [[nodiscard]] static bool equal(const JsonValue& a, const JsonValue& b) noexcept;
    void write(std::string& out, int indent, int depth) const;

    Type type_ = Type::Null;
    bool boolean_ = false;
    std::int64_t integer_ = 0;
    std::uint64_t unsigned_ = 0;
    double real_ = 0.0;
    std::string string_;
    std::vector<JsonValue> elements_;  // an array's elements, or an object's values
    std::vector<std::string> keys_;    // an object's field names, one for each of elements_
};

struct JsonValue::Member {
    std::string key;
    JsonValue value;
};

}  // namespace hypertune::detail

#ifndef HYPERTUNE_COMPILED
#include <hypertune/impl/detail/json_value.hpp>
#endif
