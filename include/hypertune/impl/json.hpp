// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/json.hpp>: inline in header-only mode, compiled into hypertune::compiled
// otherwise (see <hypertune/linkage.hpp>).

#include <hypertune/json.hpp>
#include <hypertune/linkage.hpp>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/json.hpp> is compiled into hypertune::compiled: include <hypertune/json.hpp>"
#endif

#include <algorithm>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace hypertune {

HYPERTUNE_INLINE nlohmann::ordered_json Config::to_json() const {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < values_.size(); ++i)
        std::visit([&](const auto& x) { j[(*layout_)[i].name] = x; }, values_[i]);
    return j;
}

HYPERTUNE_INLINE Config SearchSpace::from_json(const nlohmann::ordered_json& j) const {
    if (!j.is_object()) throw InvalidArgument("configuration JSON must be an object of name: value");
    for (const auto& [key, _] : j.items())
        if (std::none_of(layout_->begin(), layout_->end(), [&key = key](const auto& p) { return p.name == key; }))
            throw InvalidArgument(fmt::format("configuration JSON: unknown parameter '{}'", key));
    std::vector<Value> values;
    for (const auto& p : *layout_) {
        auto it = j.find(p.name);
        if (it == j.end()) {
            if (p.kind == ParameterKind::Static) {
                values.push_back(p.fixed);
                continue;
            }
            throw InvalidArgument(fmt::format("configuration JSON: parameter '{}' is missing", p.name));
        }
        if (it->is_string()) values.emplace_back(it->get<std::string>());
        else if (it->is_number_integer()) values.emplace_back(it->get<std::int64_t>());
        else if (it->is_number()) values.emplace_back(it->get<double>());
        else
            throw InvalidArgument(fmt::format("configuration JSON: parameter '{}' has a value of type {}", p.name,
                                              it->type_name()));
    }
    return make(std::move(values));
}

HYPERTUNE_INLINE nlohmann::ordered_json SearchSpace::to_json() const {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const auto& p : *layout_) {
        nlohmann::ordered_json e;
        e["name"] = p.name;
        e["kind"] = std::string(to_string(p.kind));
        e["type"] = std::string(p.type);
        switch (p.kind) {
            case ParameterKind::Integer:
                e["min"] = static_cast<std::int64_t>(p.min);
                e["max"] = static_cast<std::int64_t>(p.max);
                e["scaling"] = std::string(to_string(p.scaling));
                break;
            case ParameterKind::Continuous:
                e["min"] = p.min;
                e["max"] = p.max;
                e["scaling"] = std::string(to_string(p.scaling));
                break;
            case ParameterKind::Categorical: e["values"] = p.categories; break;
            case ParameterKind::Static: std::visit([&](const auto& x) { e["value"] = x; }, p.fixed); break;
        }
        j.push_back(std::move(e));
    }
    return j;
}

namespace detail {

HYPERTUNE_INLINE SearchSpace space_from_json(const nlohmann::ordered_json& j) {
    if (!j.is_array()) throw IoError("search space JSON: must be an array of parameters");
    SearchSpace space;
    for (const auto& p : j) {
        auto name = p.at("name").get<std::string>();
        auto kind = p.at("kind").get<std::string>();
        auto scaling_of = [&] {
            auto s = p.at("scaling").get<std::string>();
            for (auto sc : {Scaling::Linear, Scaling::Logarithmic, Scaling::ReverseLogarithmic})
                if (to_string(sc) == s) return sc;
            throw IoError(fmt::format("parameter '{}': unknown scaling '{}'", name, s));
        };
        if (kind == "Integer")
            space.add(IntegerParameter<std::int64_t>(name, integer_at<std::int64_t>(p, "min"), integer_at<std::int64_t>(p, "max"),
                                                     scaling_of()));
        else if (kind == "Continuous")
            space.add(ContinuousParameter<double>(name, p.at("min").get<double>(), p.at("max").get<double>(), scaling_of()));
        else if (kind == "Categorical")
            space.add(CategoricalParameter(name, p.at("values").get<std::vector<std::string>>()));
        else if (kind == "Static") {
            const auto& v = p.at("value");
            if (v.is_string()) space.add(StaticParameter(name, v.get<std::string>()));
            else if (v.is_number_integer()) space.add(StaticParameter(name, v.get<std::int64_t>()));
            else space.add(StaticParameter(name, v.get<double>()));
        } else {
            throw IoError(fmt::format("parameter '{}': unknown kind '{}'", name, kind));
        }
    }
    return space;
}

}  // namespace detail

}  // namespace hypertune
