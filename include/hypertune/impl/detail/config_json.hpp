// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/detail/config_json.hpp>. Inline in header-only mode, compiled into
// hypertune::compiled otherwise (see <hypertune/linkage.hpp>).

#include <hypertune/detail/config_json.hpp>
#include <hypertune/error.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/parameter.hpp>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/detail/config_json.hpp> is compiled into hypertune::compiled: include <hypertune/detail/config_json.hpp>"
#endif

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace hypertune::detail {

namespace config_json_parts {

inline JsonValue value_json(const Value& v) {
    if (const auto* i = std::get_if<std::int64_t>(&v)) return JsonValue(*i);
    if (const auto* d = std::get_if<double>(&v)) return JsonValue(*d);
    return JsonValue(std::get<std::string>(v));
}

}  // namespace config_json_parts

HYPERTUNE_INLINE JsonValue config_json(const Config& config) {
    JsonValue j = JsonValue::object();
    for (std::size_t i = 0; i < config.size(); ++i) j[config.name(i)] = config_json_parts::value_json(config.value(i));
    return j;
}

HYPERTUNE_INLINE Config config_from_json(const SearchSpace& space, const JsonValue& j) {
    if (!j.is_object()) throw InvalidArgument("configuration JSON must be an object of name: value");
    const auto& parameters = space.parameters();
    for (const auto& key : j.keys())
        if (std::none_of(parameters.begin(), parameters.end(), [&](const auto& p) { return p.name == key; }))
            throw InvalidArgument(fmt::format("configuration JSON: unknown parameter '{}'", key));
    std::vector<Value> values;
    values.reserve(parameters.size());
    for (const auto& p : parameters) {
        const JsonValue* v = j.find(p.name);
        if (!v) {
            if (p.kind == ParameterKind::Static) {
                values.push_back(p.fixed);
                continue;
            }
            throw InvalidArgument(fmt::format("configuration JSON: parameter '{}' is missing", p.name));
        }
        if (v->is_string()) values.emplace_back(v->as_string());
        else if (v->is_boolean() && p.kind == ParameterKind::Static && p.type == type_name<bool>())
            values.emplace_back(std::int64_t{v->as_boolean() ? 1 : 0});  // a bool is held as 0 or 1
        else if (v->type() == JsonValue::Type::Integer) values.emplace_back(v->as_integer<std::int64_t>());
        else if (v->is_number()) values.emplace_back(v->as_double());
        else
            throw InvalidArgument(
                fmt::format("configuration JSON: parameter '{}' has a value of type {}", p.name, v->type_name()));
    }
    return space.make(std::move(values));
}

HYPERTUNE_INLINE JsonValue space_json(const SearchSpace& space) {
    JsonValue j = JsonValue::array();
    for (const auto& p : space.parameters()) {
        JsonValue e = JsonValue::object({{"name", p.name}, {"kind", to_string(p.kind)}, {"type", p.type}});
        switch (p.kind) {
            case ParameterKind::Integer:
                e["min"] = static_cast<std::int64_t>(p.min);
                e["max"] = static_cast<std::int64_t>(p.max);
                e["scaling"] = to_string(p.scaling);
                break;
            case ParameterKind::Continuous:
                e["min"] = p.min;
                e["max"] = p.max;
                e["scaling"] = to_string(p.scaling);
                break;
            case ParameterKind::Categorical: {
                JsonValue values = JsonValue::array();
                for (const auto& c : p.categories) values.push_back(c);
                e["values"] = std::move(values);
                break;
            }
            case ParameterKind::Static: e["value"] = config_json_parts::value_json(p.fixed); break;
        }
        j.push_back(std::move(e));
    }
    return j;
}

HYPERTUNE_INLINE SearchSpace space_from_json(const JsonValue& j) {
    if (!j.is_array()) throw IoError("search space JSON: must be an array of parameters");
    SearchSpace space;
    for (const auto& p : j.elements()) {
        const std::string& name = p.at("name").as_string();
        const std::string& kind = p.at("kind").as_string();
        auto scaling_of = [&] {
            const std::string& s = p.at("scaling").as_string();
            for (auto sc : {Scaling::Linear, Scaling::Logarithmic, Scaling::ReverseLogarithmic})
                if (to_string(sc) == s) return sc;
            throw IoError(fmt::format("parameter '{}': unknown scaling '{}'", name, s));
        };
        auto integer_bound = [&](const char* key) {
            const JsonValue& v = p.at(key);
            if (!v.is_integer())
                throw IoError(fmt::format("parameter '{}': '{}' must be an integer, got {}", name, key, v.dump()));
            return v.as_integer<std::int64_t>();
        };
        if (kind == "Integer") {
            space.add(IntegerParameter<std::int64_t>(name, integer_bound("min"), integer_bound("max"), scaling_of()));
        } else if (kind == "Continuous") {
            space.add(ContinuousParameter<double>(name, p.at("min").as_double(), p.at("max").as_double(), scaling_of()));
        } else if (kind == "Categorical") {
            std::vector<std::string> values;
            for (const auto& v : p.at("values").elements()) values.push_back(v.as_string());
            space.add(CategoricalParameter(name, std::move(values)));
        } else if (kind == "Static") {
            const JsonValue& v = p.at("value");
            // A bool is written as 0 or 1 with its declared type: read back as a bool, so that
            // get<bool> works on a resumed or loaded run's configurations as on the live ones.
            const bool is_bool = v.is_boolean() || (p.string_or("type", "") == type_name<bool>() && v.is_integer() &&
                                                    (v.as_integer<std::int64_t>() == 0 || v.as_integer<std::int64_t>() == 1));
            if (is_bool) space.add(StaticParameter(name, v.is_boolean() ? v.as_boolean() : v.as_integer<std::int64_t>() == 1));
            else if (v.is_string()) space.add(StaticParameter(name, v.as_string()));
            else if (v.type() == JsonValue::Type::Integer) space.add(StaticParameter(name, v.as_integer<std::int64_t>()));
            else space.add(StaticParameter(name, v.as_double()));
        } else {
            throw IoError(fmt::format("parameter '{}': unknown kind '{}'", name, kind));
        }
    }
    return space;
}

HYPERTUNE_INLINE JsonValue objectives_to_json(const std::vector<Metric>& objectives) {
    JsonValue out = JsonValue::array();
    for (const auto& m : objectives) out.push_back(JsonValue::object({{"name", m.name}, {"direction", to_string(m.direction)}}));
    return out;
}

HYPERTUNE_INLINE JsonValue constraints_to_json(const std::vector<Constraint>& constraints) {
    JsonValue out = JsonValue::array();
    for (const auto& c : constraints)
        out.push_back(JsonValue::object({{"metric", c.metric}, {"kind", to_string(c.kind)}, {"bound", c.bound}}));
    return out;
}

HYPERTUNE_INLINE std::vector<Metric> objectives_from_json(const JsonValue& j) {
    std::vector<Metric> out;
    for (const auto& m : j.elements()) {
        const std::string& direction = m.at("direction").as_string();
        if (direction != "Minimize" && direction != "Maximize")
            throw IoError(fmt::format("objective direction '{}' is neither Minimize nor Maximize", direction));
        out.push_back({m.at("name").as_string(), direction == "Maximize" ? Direction::Maximize : Direction::Minimize});
    }
    return out;
}

HYPERTUNE_INLINE std::vector<Constraint> constraints_from_json(const JsonValue& j) {
    std::vector<Constraint> out;
    for (const auto& c : j.elements()) {
        const std::string& kind = c.at("kind").as_string();
        if (kind != "<=" && kind != ">=") throw IoError(fmt::format("constraint kind '{}' is neither <= nor >=", kind));
        out.push_back({c.at("metric").as_string(), kind == "<=" ? Constraint::Kind::AtMost : Constraint::Kind::AtLeast,
                       c.at("bound").as_double()});
    }
    return out;
}

}  // namespace hypertune::detail
