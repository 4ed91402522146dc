// SPDX-License-Identifier: MIT
// JsonValue, the JSON of the journal and the results file: what it writes reads back the same, by
// itself and by nlohmann/json (which wrote every journal before it, and reads the results file in
// users' programs); what nlohmann writes, it reads; text that is not JSON is refused with the byte.
#include <hypertune/detail/json_value.hpp>
#include <hypertune/json.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <tuple>

namespace ht = hypertune;
using ht::detail::JsonError;
using ht::detail::JsonValue;

namespace {

// A random document: nested objects and arrays of every scalar, strings with escapes, control
// characters and multi-byte UTF-8, integers and doubles across their ranges.
JsonValue random_document(std::mt19937_64& rng, int depth) {
    std::uniform_int_distribution<int> kind(0, depth > 3 ? 6 : 8);
    auto text = [&] {
        static const std::string pieces[] = {"a", "Z", "\"", "\\", "/", "\n", "\t", "\x01", "\x1f", " ",
                                             "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "{}", "[,]"};
        std::string s;
        for (int i = std::uniform_int_distribution<int>(0, 6)(rng); i > 0; --i)
            s += pieces[std::uniform_int_distribution<std::size_t>(0, std::size(pieces) - 1)(rng)];
        return s;
    };
    switch (kind(rng)) {
        case 0: return JsonValue();
        case 1: return JsonValue(rng() % 2 == 0);
        case 2: return JsonValue(static_cast<std::int64_t>(rng()));
        case 3: return JsonValue(static_cast<std::uint64_t>(rng()));
        case 4: {
            double x = std::ldexp(static_cast<double>(rng() >> 11), std::uniform_int_distribution<int>(-80, 40)(rng));
            return JsonValue(rng() % 2 == 0 ? x : -x);
        }
        case 5: return JsonValue(static_cast<double>(static_cast<std::int32_t>(rng())));  // integral doubles
        case 6: return JsonValue(text());
        case 7: {
            JsonValue a = JsonValue::array();
            for (int i = std::uniform_int_distribution<int>(0, 4)(rng); i > 0; --i) a.push_back(random_document(rng, depth + 1));
            return a;
        }
        default: {
            JsonValue o = JsonValue::object();
            for (int i = std::uniform_int_distribution<int>(0, 4)(rng); i > 0; --i) o[text()] = random_document(rng, depth + 1);
            return o;
        }
    }
}

// Same document, same types: an integral double must stay a double, an integer an integer.
bool identical(const JsonValue& a, const JsonValue& b) {
    auto family = [](const JsonValue& v) {
        return v.type() == JsonValue::Type::Unsigned ? JsonValue::Type::Integer : v.type();
    };
    if (family(a) != family(b)) return false;
    if (a.is_array()) {
        if (a.size() != b.size()) return false;
        for (std::size_t i = 0; i < a.size(); ++i)
            if (!identical(a.elements()[i], b.elements()[i])) return false;
        return true;
    }
    if (a.is_object()) {
        if (a.size() != b.size()) return false;
        for (std::size_t i = 0; i < a.size(); ++i)
            if (a.keys()[i] != b.keys()[i] || !identical(a.field(i), b.field(i)))
                return false;
        return true;
    }
    return a == b;
}

}  // namespace

TEST_CASE("JsonValue reads back what it writes, with the same types and field order, compact and indented") {
    std::mt19937_64 rng(7);
    for (int i = 0; i < 2000; ++i) {
        JsonValue doc = random_document(rng, 0);
        const std::string text = doc.dump();
        CAPTURE(text);
        JsonValue again = JsonValue::parse(text);
        CHECK(identical(doc, again));
        CHECK(again.dump() == text);
        CHECK(identical(JsonValue::parse(doc.dump(2)), doc));
        CHECK(text.find('\n') == std::string::npos);  // one journal line
    }
}

TEST_CASE("nlohmann/json reads what JsonValue writes, and JsonValue reads what nlohmann writes") {
    std::mt19937_64 rng(11);
    for (int i = 0; i < 1000; ++i) {
        JsonValue doc = random_document(rng, 0);
        CAPTURE(doc.dump());
        const auto theirs = nlohmann::ordered_json::parse(doc.dump());  // strict: throws on anything off
        CHECK(theirs == ht::detail::to_nlohmann(doc));
        CHECK(theirs == nlohmann::ordered_json::parse(doc.dump(2)));
        CHECK(identical(JsonValue::parse(theirs.dump()), doc));
        CHECK(identical(ht::detail::from_nlohmann(theirs), doc));
    }
}

TEST_CASE("numbers: a double stays a double, integers keep 64 bits, NaN and infinities become null") {
    CHECK(JsonValue(3.0).dump() == "3.0");
    CHECK(JsonValue(-0.0).dump() == "-0.0");
    CHECK(JsonValue(0.1).dump() == "0.1");
    CHECK(JsonValue(1e300).dump() == "1e+300");
    CHECK(JsonValue::parse("3.0").type() == JsonValue::Type::Real);
    CHECK(JsonValue::parse("3").type() == JsonValue::Type::Integer);
    CHECK(JsonValue::parse("1E2").as_double() == 100.0);
    constexpr auto top = std::numeric_limits<std::uint64_t>::max();
    constexpr auto bottom = std::numeric_limits<std::int64_t>::min();
    CHECK(JsonValue::parse(JsonValue(top).dump()).as_integer<std::uint64_t>() == top);
    CHECK(JsonValue::parse(JsonValue(bottom).dump()).as_integer<std::int64_t>() == bottom);
    CHECK(JsonValue::parse("18446744073709551616").type() == JsonValue::Type::Real);  // 2^64, as nlohmann reads it
    for (double x : {std::nan(""), std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()}) {
        CHECK(JsonValue(x).dump() == "null");
        CHECK(JsonValue::number_or_null(x).is_null());
    }
    CHECK(JsonValue::number_or_null(2.5).as_double() == 2.5);
    CHECK(JsonValue(1) == JsonValue(1.0));
    CHECK(JsonValue(std::uint64_t{5}) == JsonValue(5));
    CHECK(JsonValue(-1) != JsonValue(top));
    CHECK_THROWS_WITH_AS((void)JsonValue(300).as_integer<std::uint8_t>(), "integer 300 out of range", JsonError);
    CHECK_THROWS_WITH_AS((void)JsonValue(-1).as_integer<std::size_t>(), "integer -1 out of range", JsonError);
    CHECK_THROWS_WITH_AS((void)JsonValue(2.5).as_integer<int>(), "expected an integer, got number 2.5", JsonError);
}

TEST_CASE("strings: escapes and UTF-8 read back, and bytes that are not UTF-8 are written as U+FFFD") {
    CHECK(JsonValue("a\"b\\c\n\x01").dump() == R"("a\"b\\c\n\u0001")");
    CHECK(JsonValue::parse(R"("\u00e9\ud83d\ude00\/")").as_string() == "\xC3\xA9\xF0\x9F\x98\x80/");
    // A trainer's Latin-1 output quoted in a failure reason: never an error, always valid UTF-8.
    const std::string latin1 = "r\xE9sultat \xFF";
    const std::string written = JsonValue(latin1).dump();
    CHECK(written == "\"r\xEF\xBF\xBDsultat \xEF\xBF\xBD\"");
    CHECK_NOTHROW(std::ignore = nlohmann::json::parse(written));
    CHECK_THROWS_AS((void)JsonValue::parse("\"\xFF\""), JsonError);  // reading stays strict
}

TEST_CASE("text that is not JSON is refused, naming the byte") {
    CHECK_THROWS_WITH_AS((void)JsonValue::parse("{\"a\" 1}"), "not JSON at byte 6: expected ':' after a field name", JsonError);
    CHECK_THROWS_WITH_AS((void)JsonValue::parse("[1,]"), "not JSON at byte 4: expected a value", JsonError);
    CHECK_THROWS_WITH_AS((void)JsonValue::parse("{} x"), "not JSON at byte 4: unexpected text after the value", JsonError);
    CHECK_THROWS_WITH_AS((void)JsonValue::parse("1e400"), "not JSON at byte 1: the number 1e400 is out of a double's range",
                         JsonError);
    for (const char* bad : {"", "{", "[", "\"open", "01", "-", "1.", "1e", "tru", "nul", "{1:2}", "[1 2]",
                            "\"\\x\"", "\"\x01\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\u12\"", "NaN", "+1", ".5"}) {
        CAPTURE(bad);
        CHECK_THROWS_AS((void)JsonValue::parse(bad), JsonError);
        CHECK_THROWS_AS(std::ignore = nlohmann::json::parse(bad), nlohmann::json::exception);  // the same verdicts
    }
    // Deep nesting is refused, not a stack overflow.
    CHECK_THROWS_WITH_AS((void)JsonValue::parse(std::string(100000, '[')), doctest::Contains("nested more than 512 deep"),
                         JsonError);
    CHECK(JsonValue::parse(" \t\r\n{ \"a\" : [ 1 , 2 ] } \n").dump() == R"({"a":[1,2]})");
    CHECK(JsonValue::parse("\xEF\xBB\xBF[1]").dump() == "[1]");  // a byte order mark, as nlohmann reads it
    CHECK(nlohmann::json::parse("\xEF\xBB\xBF[1]").dump() == "[1]");
    CHECK_THROWS_AS((void)JsonValue::parse("[1]\xEF\xBB\xBF"), JsonError);
}

TEST_CASE("fields: order kept, lookups, and errors that name what is missing or of another type") {
    JsonValue o = JsonValue::object({{"z", 1}, {"a", "text"}});
    o["m"] = true;
    o["z"] = 2;  // set again: keeps its place
    CHECK(o.dump() == R"({"z":2,"a":"text","m":true})");
    CHECK(o.dump(2) == "{\n  \"z\": 2,\n  \"a\": \"text\",\n  \"m\": true\n}");
    CHECK(JsonValue::object({{"e", JsonValue::array()}, {"o", JsonValue::object()}}).dump(2) ==
          "{\n  \"e\": [],\n  \"o\": {}\n}");
    CHECK(o.contains("a"));
    CHECK_FALSE(o.contains("b"));
    CHECK(o.string_or("a", "-") == "text");
    CHECK(o.string_or("b", "-") == "-");
    CHECK(o.number_or("z", 0.0) == 2.0);
    CHECK(o.boolean_or("m", false));
    CHECK_THROWS_WITH_AS((void)o.at("b"), "field 'b' is missing", JsonError);
    CHECK_THROWS_WITH_AS((void)o.at("a").as_double(), "expected a number, got string \"text\"", JsonError);
    CHECK_THROWS_WITH_AS((void)o.string_or("z", ""), "expected a string, got number 2", JsonError);
    CHECK_THROWS_WITH_AS((void)o.elements(), "expected an array, got object", JsonError);
    // Equal as JSON: fields in any order (a journal written before had its fields sorted by name).
    CHECK(JsonValue::parse(R"({"a":"text","m":true,"z":2})") == o);
    CHECK(JsonValue::parse(R"({"a":"text","m":true,"z":3})") != o);
    CHECK(JsonValue::parse(R"([1,2])") != JsonValue::parse(R"([2,1])"));
}
