// SPDX-License-Identifier: MIT
#pragma once
// The properties every valid search space must have, whatever its ranges: decoding any point of
// the unit cube gives a configuration the space accepts; encoding stays in [0,1]; integers and
// categories survive decode(encode(.)) exactly; sampling and grid points are valid; and the space
// and its configurations survive the JSON text round trip that the journal puts them through.

#include "fuzz_support.hpp"

#include <hypertune/journal.hpp>
#include <hypertune/json.hpp>
#include <hypertune/search_space.hpp>
#include <hypertune/strategies/random_search.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace hypertune::fuzz {

/// Runs `body`, where the input is valid: any exception at all is a bug.
template <class F>
void must_succeed(std::string_view where, F&& body) {
    try {
        body();
    } catch (const std::exception& e) {
        fail(fmt::format("{}: unexpected {}: {}", where, typeid(e).name(), e.what()));
    }
}

inline std::string describe(const Value& v) {
    return std::visit([](const auto& x) { return fmt::format("{}", x); }, v);
}

/// Every value within its parameter's range, of the right type; and the space agrees.
inline void require_valid(const SearchSpace& space, const Config& cfg, std::string_view where) {
    require(cfg.size() == space.size(), fmt::format("{}: {} values for {} parameters", where, cfg.size(), space.size()));
    for (std::size_t i = 0; i < cfg.size(); ++i) {
        const auto& p = space.parameter(i);
        const auto& v = cfg.value(i);
        bool ok = false;
        switch (p.kind) {
            case ParameterKind::Integer:
                if (auto* x = std::get_if<std::int64_t>(&v))
                    ok = static_cast<double>(*x) >= p.min && static_cast<double>(*x) <= p.max;
                break;
            case ParameterKind::Continuous:
                if (auto* x = std::get_if<double>(&v)) ok = std::isfinite(*x) && *x >= p.min && *x <= p.max;
                break;
            case ParameterKind::Categorical:
                if (auto* x = std::get_if<std::string>(&v))
                    ok = std::find(p.categories.begin(), p.categories.end(), *x) != p.categories.end();
                break;
            case ParameterKind::Static: ok = v == p.fixed; break;
        }
        require(ok, fmt::format("{}: parameter '{}' ({} [{}, {}], {}) got {}", where, p.name, to_string(p.kind), p.min,
                                p.max, to_string(p.scaling), describe(v)));
    }
    must_succeed(fmt::format("{}: SearchSpace::check", where), [&] { space.check(cfg); });
}

/// A unit-interval coordinate: mostly spread over [0,1], sometimes an edge or a value outside
/// (decode clamps those).
inline double unit_coordinate(ByteReader& in) {
    constexpr double specials[] = {0.0,
                                   1.0,
                                   0.5,
                                   -0.0,
                                   0x1.fffffffffffffp-1,  // the largest double below 1
                                   std::numeric_limits<double>::denorm_min(),
                                   std::numeric_limits<double>::min(),
                                   1e-300,
                                   -0.25,
                                   1.25,
                                   -std::numeric_limits<double>::infinity(),
                                   std::numeric_limits<double>::infinity(),
                                   std::numeric_limits<double>::quiet_NaN()};
    auto selector = in.byte();
    if (selector < std::size(specials)) return specials[selector];
    return static_cast<double>(in.raw<std::uint64_t>() >> 11) * 0x1p-53;
}

inline void check_config_round_trips(const SearchSpace& space, const Config& cfg, std::string_view where) {
    require_valid(space, cfg, where);
    std::vector<double> u;
    must_succeed(fmt::format("{}: encode", where), [&] { u = space.encode(cfg); });
    require(u.size() == space.dimensions(), fmt::format("{}: encode gave {} coordinates", where, u.size()));
    for (double x : u) require(x >= 0.0 && x <= 1.0, fmt::format("{}: encode gave {} (outside [0,1])", where, x));

    Config again;
    must_succeed(fmt::format("{}: decode(encode)", where), [&] { again = space.decode(u); });
    require_valid(space, again, fmt::format("{}: decode(encode)", where));
    for (std::size_t i = 0; i < cfg.size(); ++i) {
        auto kind = space.parameter(i).kind;
        if (kind == ParameterKind::Integer || kind == ParameterKind::Categorical)
            require(again.value(i) == cfg.value(i),
                    fmt::format("{}: parameter '{}': decode(encode({})) = {}", where, space.parameter(i).name,
                                describe(cfg.value(i)), describe(again.value(i))));
    }

    // The journal writes configurations as JSON text and reads them back with from_json.
    Config parsed;
    must_succeed(fmt::format("{}: from_json(to_json)", where), [&] {
        parsed = space.from_json(nlohmann::json::parse(cfg.to_json().dump()));
    });
    require(parsed == cfg, fmt::format("{}: from_json(to_json({})) = {}", where, cfg, parsed));
}

inline void check_space_json_round_trip(const SearchSpace& space) {
    auto described = space.to_json();
    SearchSpace rebuilt;
    must_succeed("space_from_json(to_json)",
                 [&] { rebuilt = detail::space_from_json(nlohmann::json::parse(described.dump())); });
    auto again = rebuilt.to_json();
    // The declared C++ type is informative only; the journal's copy holds int64 and double.
    for (auto* j : {&described, &again})
        for (auto& p : *j) p.erase("type");
    require(again == described,
            fmt::format("space_from_json(to_json) changed the space:\n  {}\n  {}", described.dump(), again.dump()));
}

/// Checks every property above on `space`, using `in` to choose the points.
inline void check_space(const SearchSpace& space, ByteReader& in) {
    check_space_json_round_trip(space);
    const auto d = space.dimensions();

    for (int n = 1 + static_cast<int>(in.pick(4)); n-- > 0;) {
        std::vector<double> u(d);
        for (auto& x : u) x = unit_coordinate(in);
        std::optional<Config> cfg;
        // A NaN coordinate is no point at all: refusing it is fine too. Anything else clamps.
        if (std::any_of(u.begin(), u.end(), [](double x) { return std::isnan(x); }))
            expect_only_hypertune_errors("decode (NaN)", [&] { cfg = space.decode(u); });
        else
            must_succeed("decode", [&] { cfg = space.decode(u); });
        if (cfg) check_config_round_trips(space, *cfg, "decode");
    }

    auto seed = in.raw<std::uint64_t>();
    for (std::uint64_t k = 0; k < 3; ++k) {
        Config cfg;
        must_succeed("RandomSearch::sample", [&] { cfg = RandomSearch::sample(space, seed, k); });
        check_config_round_trips(space, cfg, "RandomSearch::sample");
    }

    if (d == 0) return;
    std::map<std::string, std::size_t> points;
    for (const auto& p : space.parameters())
        if (p.kind == ParameterKind::Continuous) points[p.name] = 1 + in.pick(5);
    std::vector<std::size_t> shape;
    must_succeed("grid_shape", [&] { shape = space.grid_shape(points); });
    std::uint64_t total = 1;
    for (auto n : shape) {
        require(n >= 1, "grid_shape: a dimension with no points");
        total = total > std::numeric_limits<std::uint64_t>::max() / n ? std::numeric_limits<std::uint64_t>::max()
                                                                       : total * n;
    }
    for (std::uint64_t k : {std::uint64_t{0}, total - 1, in.raw<std::uint64_t>() % total}) {
        Config cfg;
        must_succeed("grid_point", [&] { cfg = space.grid_point(shape, k); });
        check_config_round_trips(space, cfg, "grid_point");
    }
}

}  // namespace hypertune::fuzz
