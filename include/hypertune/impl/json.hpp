// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/json.hpp>: inline in header-only mode, compiled into hypertune::compiled
// otherwise (see <hypertune/linkage.hpp>).

#include <hypertune/json.hpp>
#include <hypertune/error.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/detail/utf8.hpp>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/json.hpp> is compiled into hypertune::compiled: include <hypertune/json.hpp>"
#endif

#include <cstdint>
#include <limits>
#include <string>

namespace hypertune {

HYPERTUNE_INLINE nlohmann::ordered_json Config::to_json() const { return detail::to_nlohmann(detail::config_json(*this)); }

HYPERTUNE_INLINE Config SearchSpace::from_json(const nlohmann::ordered_json& j) const {
    return detail::config_from_json(*this, detail::from_nlohmann(j));
}

HYPERTUNE_INLINE nlohmann::ordered_json SearchSpace::to_json() const { return detail::to_nlohmann(detail::space_json(*this)); }

HYPERTUNE_INLINE nlohmann::ordered_json Result::to_json() const { return detail::to_nlohmann(detail::result_json(*this)); }

namespace detail {

HYPERTUNE_INLINE nlohmann::ordered_json to_nlohmann(const JsonValue& v) {
    using json = nlohmann::ordered_json;
    switch (v.type()) {
        case JsonValue::Type::Null: return json(nullptr);
        case JsonValue::Type::Boolean: return json(v.as_boolean());
        case JsonValue::Type::Integer: return json(v.as_integer<std::int64_t>());
        case JsonValue::Type::Unsigned: return json(v.as_integer<std::uint64_t>());
        case JsonValue::Type::Real: return json(v.as_double());
        // A failure reason may quote a trainer's output, which need not be UTF-8: nlohmann's dump()
        // would throw on it, so it is given as the writer writes it (U+FFFD for a bad byte).
        case JsonValue::Type::String: return json(valid_utf8(v.as_string()));
        case JsonValue::Type::Array: {
            json out = json::array();
            for (const auto& e : v.elements()) out.push_back(to_nlohmann(e));
            return out;
        }
        case JsonValue::Type::Object: {
            json out = json::object();
            for (std::size_t i = 0; i < v.size(); ++i) out[valid_utf8(v.keys()[i])] = to_nlohmann(v.field(i));
            return out;
        }
    }
    return json(nullptr);
}

HYPERTUNE_INLINE JsonValue from_nlohmann(const nlohmann::ordered_json& j) {
    using json = nlohmann::ordered_json;
    switch (j.type()) {
        case json::value_t::null:
        case json::value_t::discarded: return JsonValue();
        case json::value_t::boolean: return JsonValue(j.get<bool>());
        case json::value_t::number_integer: return JsonValue(j.get<std::int64_t>());
        case json::value_t::number_unsigned: {
            // As JsonValue::parse reads it: an integer that fits int64 is a signed one.
            const auto u = j.get<std::uint64_t>();
            if (u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
                return JsonValue(static_cast<std::int64_t>(u));
            return JsonValue(u);
        }
        case json::value_t::number_float: return JsonValue(j.get<double>());
        case json::value_t::string: return JsonValue(j.get<std::string>());
        case json::value_t::array: {
            JsonValue out = JsonValue::array();
            for (const auto& e : j) out.push_back(from_nlohmann(e));
            return out;
        }
        case json::value_t::object: {
            JsonValue out = JsonValue::object();
            for (const auto& [key, value] : j.items()) out[key] = from_nlohmann(value);
            return out;
        }
        case json::value_t::binary: break;
    }
    throw InvalidArgument("JSON: a binary value has no JSON text");
}

HYPERTUNE_INLINE SearchSpace space_from_json(const nlohmann::ordered_json& j) { return space_from_json(from_nlohmann(j)); }

}  // namespace detail

}  // namespace hypertune
