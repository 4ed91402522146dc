// SPDX-License-Identifier: MIT
#pragma once
// Definitions of <hypertune/warm_start.hpp>: reading the parents and translating their trials.
// Inline in header-only mode, compiled into hypertune::compiled otherwise (see
// <hypertune/linkage.hpp>).

#include <hypertune/warm_start.hpp>
#include <hypertune/detail/config_json.hpp>
#include <hypertune/linkage.hpp>
#include <hypertune/run_state.hpp>
#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <unordered_map>

#if defined(HYPERTUNE_COMPILED) && !defined(HYPERTUNE_BUILDING_LIBRARY)
#error "<hypertune/impl/warm_start.hpp> is compiled into hypertune::compiled: include <hypertune/warm_start.hpp>"
#endif

namespace hypertune {

namespace detail {

HYPERTUNE_INLINE std::string warm_start_fingerprint(const std::vector<WarmStartObservation>& observations,
                                                  WarmStartType type) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    auto mix = [&](std::string_view bytes) {
        for (const char c : bytes) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
    };
    mix(to_string(type));
    for (const WarmStartObservation& o : observations) {
        std::uint64_t bits = 0;
        static_assert(sizeof bits == sizeof o.loss);
        std::memcpy(&bits, &o.loss, sizeof bits);
        mix(fmt::format("|{}|{}|{:x}|", o.parent, o.trial, bits));
        mix(config_json(o.config).dump());
    }
    return fmt::format("{:016x}", h);
}

[[nodiscard]] inline std::string_view kind_name(ParameterKind k) noexcept {
    switch (k) {
        case ParameterKind::Integer: return "integer";
        case ParameterKind::Continuous: return "continuous";
        case ParameterKind::Categorical: return "categorical";
        case ParameterKind::Static: return "static";
    }
    return "?";
}

// Where each of this run's parameters comes from in one parent; throws on what the type forbids.
[[nodiscard]] inline std::vector<std::optional<std::size_t>> match_parameters(const Config& parent_config,
                                                                            const SearchSpace& space,
                                                                            WarmStartType type, std::size_t parent,
                                                                            std::vector<std::string>& notes) {
    const bool identical = type == WarmStartType::IdenticalDataAndAlgorithm;
    auto refuse = [&](const std::string& what) {
        return InvalidArgument(fmt::format("warm start parent {}: {}{}", parent, what,
                                           identical ? " (IdenticalDataAndAlgorithm needs the same parameters; "
                                                       "TransferLearning allows changes)"
                                                     : ""));
    };
    std::vector<std::optional<std::size_t>> from;
    for (const auto& p : space.parameters()) {
        std::optional<std::size_t> found;
        for (std::size_t i = 0; i < parent_config.size(); ++i)
            if (parent_config.name(i) == p.name) found = i;
        if (!found) {
            if (identical) throw refuse(fmt::format("parameter '{}' is not in its search space", p.name));
            if (p.tuned())
                notes.push_back(fmt::format("warm start parent {}: parameter '{}' is new; its trials take the middle "
                                            "of the range",
                                            parent, p.name));
            from.push_back(std::nullopt);
            continue;
        }
        const auto& q = parent_config.parameter(*found);
        const bool numeric_pair = (p.kind == ParameterKind::Integer || p.kind == ParameterKind::Continuous) &&
                                  (q.kind == ParameterKind::Integer || q.kind == ParameterKind::Continuous);
        if (p.kind != q.kind) {
            const bool static_change = p.kind == ParameterKind::Static || q.kind == ParameterKind::Static;
            if (identical || (!numeric_pair && !static_change))
                throw refuse(fmt::format("parameter '{}' is {} there and {} here", p.name, kind_name(q.kind),
                                         kind_name(p.kind)));
        } else if (p.kind == ParameterKind::Static && identical && !same_value(p.fixed, q.fixed)) {
            throw refuse(fmt::format("static parameter '{}' is {} there and {} here", p.name,
                                     detail::given_value(q.fixed), detail::given_value(p.fixed)));
        }
        from.push_back(p.kind == ParameterKind::Static ? std::nullopt : found);
    }
    for (std::size_t i = 0; i < parent_config.size(); ++i) {
        const auto& name = parent_config.name(i);
        const bool known = std::any_of(space.parameters().begin(), space.parameters().end(),
                                       [&](const ParameterSpec& p) { return p.name == name; });
        if (known) continue;
        if (identical) throw refuse(fmt::format("its parameter '{}' is not in this search space", name));
        notes.push_back(fmt::format("warm start parent {}: its parameter '{}' is not in this search space and is "
                                    "ignored",
                                    parent, name));
    }
    return from;
}

// Kept or clipped, or why it was dropped.
enum class Translation { Kept, Clipped, OutsideRange, NoSuchCategory, NotANumber };

// Why a trial was dropped, for the note: the parameter and the reason.
[[nodiscard]] inline std::string drop_reason(Translation t, const ParameterSpec& p) {
    switch (t) {
        case Translation::OutsideRange: return fmt::format("'{}' outside this run's range", p.name);
        case Translation::NoSuchCategory: return fmt::format("'{}' a category this run does not have", p.name);
        case Translation::NotANumber: return fmt::format("'{}' not a number", p.name);
        default: return "";
    }
}

// One parent value as a value of `p`, clipped into range or refused.
[[nodiscard]] inline Translation translate(const Value& v, const ParameterSpec& p, OutsideRange outside, Value& out) {
    if (p.kind == ParameterKind::Categorical) {
        const auto* s = std::get_if<std::string>(&v);
        if (!s || std::find(p.categories.begin(), p.categories.end(), *s) == p.categories.end())
            return Translation::NoSuchCategory;
        out = *s;
        return Translation::Kept;
    }
    double x = std::holds_alternative<std::int64_t>(v) ? static_cast<double>(std::get<std::int64_t>(v))
               : std::holds_alternative<double>(v)   ? std::get<double>(v)
                                                     : std::nan("");
    if (!std::isfinite(x)) return Translation::NotANumber;
    if (p.kind == ParameterKind::Integer) x = std::round(x);
    Translation t = Translation::Kept;
    if (x < p.min || x > p.max) {
        if (outside == OutsideRange::Drop) return Translation::OutsideRange;
        x = std::clamp(x, p.min, p.max);
        t = Translation::Clipped;
    }
    if (p.kind == ParameterKind::Integer) out = static_cast<std::int64_t>(x);
    else out = x;
    return t;
}

// The trials two parents have alike when they are one run, possibly at two moments (a copy of its
// journal, and the journal grown since), or 0: every trial id both hold names the same
// configuration, and every trial that ended in both ended alike, with the same values, and at
// least one did. Two runs on other data differ in their values; two on the same data and seed
// with a deterministic objective are the same observations all the same.
HYPERTUNE_INLINE std::size_t same_run_trials(const Result& a, const Result& b) {
    auto ended = [](TrialStatus s) { return s != TrialStatus::Running && s != TrialStatus::Paused; };
    auto same_value = [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); };
    std::unordered_map<TrialId, const TrialRecord*> in_a;
    for (const TrialRecord& t : a.trials()) in_a.emplace(t.id, &t);
    std::size_t alike = 0, ended_alike = 0;
    for (const TrialRecord& y : b.trials()) {
        const auto it = in_a.find(y.id);
        if (it == in_a.end()) continue;
        const TrialRecord& x = *it->second;
        if (x.config != y.config) return 0;
        ++alike;
        if (!ended(x.status) || !ended(y.status)) continue;
        if (x.status != y.status || x.values != y.values || !same_value(x.objective, y.objective)) return 0;
        ++ended_alike;
    }
    return ended_alike > 0 ? alike : 0;
}

}  // namespace detail

HYPERTUNE_INLINE WarmStart WarmStart::from_journals(const std::vector<std::string>& paths,
                                                 WarmStartType type) {
    WarmStart w;
    w.type = type;
    for (std::size_t k = 0; k < paths.size(); ++k) {
        try {
            w.parents.push_back(load_result(paths[k]));
        } catch (const IoError& e) {  // say what the journal was read for
            throw IoError(fmt::format("warm start parent {}: {}", k, e.what()));
        }
    }
    return w;
}

HYPERTUNE_INLINE PreparedWarmStart prepare_warm_start(const WarmStart& w, const SearchSpace& space,
                                                          const std::string& metric, Direction direction,
                                                          const std::vector<Constraint>& constraints) {
    PreparedWarmStart out;
    if (w.parents.size() > WarmStart::max_parents)
        throw InvalidArgument(fmt::format("warm start: at most {} parent runs, got {}", WarmStart::max_parents,
                                          w.parents.size()));
    // The same run given twice would count each of its results twice, also when one of its journals
    // is a later state of the other (the run resumed, or still running, since the copy was taken).
    for (std::size_t k = 0; k < w.parents.size(); ++k)
        for (std::size_t j = 0; j < k; ++j)
            if (const std::size_t alike = detail::same_run_trials(w.parents[j], w.parents[k]); alike > 0)
                throw InvalidArgument(fmt::format("warm start parents {} and {} are the same run ({} trials alike{}): "
                                                  "give each earlier run once",
                                                  j, k, alike,
                                                  w.parents[j].trials().size() != w.parents[k].trials().size() &&
                                                          alike == std::min(w.parents[j].trials().size(),
                                                                            w.parents[k].trials().size())
                                                      ? "; the longer one holds all of the other's"
                                                      : ""));
    std::size_t used = 0, clipped = 0, dropped = 0, unjudged = 0, infeasible = 0;
    std::vector<std::pair<std::string, std::size_t>> drop_reasons;  // (reason, trials), in order of first
    for (std::size_t k = 0; k < w.parents.size(); ++k) {
        const Result& parent = w.parents[k];
        if (parent.setup().metric != metric)
            throw InvalidArgument(fmt::format("warm start parent {}: its metric is '{}', this run's is '{}'", k,
                                              parent.setup().metric, metric));
        if (parent.setup().direction != direction)
            throw InvalidArgument(fmt::format("warm start parent {}: it was to {} '{}', this run is to {} it", k,
                                              to_string(parent.setup().direction), metric, to_string(direction)));
        if (parent.trials().empty()) {
            out.notes.push_back(fmt::format("warm start parent {} has no trials", k));
            continue;
        }
        const auto from = detail::match_parameters(parent.trials().front().config, space, w.type, k, out.notes);
        if (constraints.empty()) {
            if (parent.has_best()) {
                const auto& b = parent.best();
                out.parent_bests.push_back({k, b.id, b.objective, b.config});
            }
        } else if (const TrialRecord* b = parent.best_among([&](const TrialRecord& t) {
                       // judged on the metrics the parent recorded; one it did not record cannot be
                       return std::all_of(constraints.begin(), constraints.end(), [&](const Constraint& c) {
                           const std::optional<double> v = parent.metric(t, c.metric);
                           return v && !std::isnan(*v) && c.satisfied_by(*v);
                       });
                   })) {
            out.parent_bests.push_back({k, b->id, b->objective, b->config});
        } else if (parent.has_best()) {
            out.notes.push_back(fmt::format("warm start parent {}: none of its trials with a value is known to meet this "
                                            "run's constraints (a constrained metric it did not record cannot be "
                                            "judged); it does not count towards the overall best",
                                            k));
        }
        for (const auto& t : parent.trials()) {
            const bool completed = t.status == TrialStatus::Completed && t.has_objective();
            const bool failed = t.status == TrialStatus::Failed;
            if (!completed && !(failed && w.type == WarmStartType::IdenticalDataAndAlgorithm)) continue;
            std::vector<Value> values;
            std::string drop;
            bool clip = false;
            for (std::size_t i = 0; i < space.size() && drop.empty(); ++i) {
                const auto& p = space.parameter(i);
                if (p.kind == ParameterKind::Static) values.push_back(p.fixed);
                else if (!from[i]) values.push_back(p.from_unit(0.5));
                else {
                    Value v;
                    // A result moved into range would tell the model of a value nobody measured:
                    // IdenticalDataAndAlgorithm keeps a trial only where it ran. (TransferLearning
                    // evaluates its configurations again, so a clipped one is as good as any.)
                    auto r = detail::translate(t.config.value(*from[i]), p,
                                               w.type == WarmStartType::IdenticalDataAndAlgorithm ? OutsideRange::Drop
                                                                                                  : w.outside_range,
                                               v);
                    drop = detail::drop_reason(r, p);
                    clip = clip || r == detail::Translation::Clipped;
                    values.push_back(std::move(v));
                }
            }
            if (!drop.empty()) {
                ++dropped;
                auto it = std::find_if(drop_reasons.begin(), drop_reasons.end(),
                                       [&](const auto& r) { return r.first == drop; });
                if (it == drop_reasons.end()) drop_reasons.emplace_back(std::move(drop), 1);
                else ++it->second;
                continue;
            }
            // This run's constraints on the metrics the parent recorded: a trial that breaks one is
            // no good result here, however low its loss (a sampler that models the constraints
            // learns where it stands; one that does not, that its region fails them). One missing
            // a constrained metric cannot be judged: its loss still tells about the objective, and
            // is no feasible result for a sampler that models them (WarmStartObservation::judged; the
            // note says how many).
            std::vector<double> violations;
            bool judged = true;
            if (completed && !constraints.empty()) {
                for (const Constraint& c : constraints) {
                    const std::optional<double> v = parent.metric(t, c.metric);
                    if (!v || std::isnan(*v)) break;
                    violations.push_back(c.violation(*v));
                }
                if (violations.size() < constraints.size()) {
                    ++unjudged;
                    judged = false;
                    violations.clear();
                }
            }
            const bool feasible = std::all_of(violations.begin(), violations.end(), [](double v) { return v <= 0.0; });
            infeasible += feasible ? 0 : 1;
            clipped += clip ? 1 : 0;
            ++used;
            const double loss = completed ? (direction == Direction::Maximize ? -t.objective : t.objective)
                                          : std::numeric_limits<double>::quiet_NaN();
            out.observations.push_back(
                {space.make(std::move(values)), loss, k, t.id, std::move(violations), feasible, judged});
        }
    }
    out.parent_runs = w.parents.size();
    out.type = w.type;
    if (!w.parents.empty()) out.fingerprint = detail::warm_start_fingerprint(out.observations, w.type);
    if (!w.parents.empty()) {
        std::string why;
        for (const auto& [reason, count] : drop_reasons)
            why += fmt::format("{}{}{}", why.empty() ? " (" : "; ", dropped == count ? "" : fmt::format("{}: ", count),
                               reason);
        std::string judged;
        if (!constraints.empty())
            judged = fmt::format(", {} of those used break this run's constraints{}", infeasible,
                                 unjudged == 0 ? std::string()
                                               : fmt::format(", {} not known to (a constrained metric not recorded: "
                                                             "taken as meeting them)",
                                                             unjudged));
        out.notes.push_back(fmt::format("warm start ({}): {} trials of {} parent run{} used, {} clipped to this run's "
                                        "ranges, {} dropped{}{}",
                                        to_string(w.type), used, w.parents.size(), w.parents.size() == 1 ? "" : "s",
                                        clipped, dropped, why.empty() ? "" : why + ")", judged));
    }
    return out;
}

}  // namespace hypertune
