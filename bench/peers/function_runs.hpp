// SPDX-License-Identifier: MIT
// What the two single-objective peer programs (peer_functions, peer_dlib) share: the selection of
// runs on the command line (--functions, --budgets, --seeds, --first-seed, --samplers), --list,
// the loop over functions, samplers and seeds, and a run's record and JSON lines.
#pragma once

#include "peer_cli.hpp"
#include "test_functions.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace peers {

struct RunSelection {
    std::vector<std::string> functions;  // names; all by default
    std::vector<std::size_t> budgets = {50, 200};
    std::vector<std::string> samplers;
    std::size_t seeds = 20;
    std::uint64_t first_seed = 1;
};

/// All the functions, with the given samplers by default.
inline RunSelection default_selection(const std::vector<TestFunction>& functions, std::vector<std::string> samplers) {
    RunSelection s;
    for (const auto& f : functions) s.functions.push_back(f.name);
    s.samplers = std::move(samplers);
    return s;
}

/// Reads `option` when it is one of the selection's (`value()` gives its argument); false otherwise.
template <class Value>
bool read_selection_option(const std::string& option, Value&& value, RunSelection& s) {
    if (option == "--functions") s.functions = split(value());
    else if (option == "--budgets") s.budgets = split_sizes(value());
    else if (option == "--seeds") s.seeds = std::stoul(value());
    else if (option == "--first-seed") s.first_seed = std::stoull(value());
    else if (option == "--samplers") s.samplers = split(value());
    else return false;
    return true;
}

/// --list: one JSON line per function.
inline void print_function_list(const std::vector<TestFunction>& functions) {
    for (const auto& f : functions) {
        nlohmann::ordered_json j;
        j["function"] = f.name;
        j["dimensions"] = f.space.dimensions();
        j["minimum"] = f.minimum;
        j["noise_sd"] = f.noise;
        print(j);
    }
}

/// One run's record: evaluates the function, keeps the best and the trials on a bound, and prints
/// a JSON line at each budget (bench/peers/README.md).
class Recorder {
public:
    Recorder(std::string library, std::string sampler, const TestFunction& fn, const std::vector<std::size_t>& budgets,
             std::uint64_t seed)
        : library_(std::move(library)), sampler_(std::move(sampler)), fn_(fn), budgets_(budgets), seed_(seed),
          t0_(now()), c0_(cpu_now()) {}

    /// Every budget reached.
    [[nodiscard]] bool done() const { return next_ >= budgets_.size(); }
    /// Evaluations so far.
    [[nodiscard]] std::size_t evaluations() const { return done_; }

    /// Adds `key` to every line printed from now on (a sampler's own diagnostics).
    void set_field(const char* key, nlohmann::ordered_json value) { fields_[key] = std::move(value); }

    /// Evaluates `c` as the run's next evaluation; returns the observed loss.
    double evaluate(const ht::Config& c) {
        const double observed = fn_.observe(c, seed_, done_);
        if (observed < best_observed_) {
            best_observed_ = observed;
            best_true_ = fn_.noise > 0.0 ? fn_.value(c) : observed;
        }
        const std::vector<std::string> bound = bound_parameters(c);
        if (!bound.empty()) ++bounded_;
        for (const auto& name : bound) ++bounded_by_[name];
        ++done_;
        while (next_ < budgets_.size() && budgets_[next_] == done_) {
            nlohmann::ordered_json j;
            j["library"] = library_;
            j["sampler"] = sampler_;
            j["function"] = fn_.name;
            j["budget"] = done_;
            j["seed"] = seed_;
            j["regret"] = best_true_ - fn_.minimum;
            j["bound_fraction"] = static_cast<double>(bounded_) / static_cast<double>(done_);
            // Which parameters those trials had on which bound (a trial counts for each of them).
            nlohmann::ordered_json by = nlohmann::ordered_json::object();
            for (const auto& [name, count] : bounded_by_) by[name] = static_cast<double>(count) / static_cast<double>(done_);
            j["bound_fraction_by_parameter"] = by;
            j["seconds"] = now() - t0_;
            j["cpu_seconds"] = cpu_now() - c0_;  // less sensitive than wall time to other load
            for (const auto& [key, value] : fields_.items()) j[key] = value;
            print(j);
            ++next_;
        }
        return observed;
    }

private:
    std::string library_, sampler_;
    const TestFunction& fn_;
    const std::vector<std::size_t>& budgets_;
    std::uint64_t seed_;
    double t0_, c0_;
    double best_observed_ = std::numeric_limits<double>::infinity();
    double best_true_ = std::numeric_limits<double>::infinity();  // f at the best observed configuration
    std::size_t done_ = 0, next_ = 0, bounded_ = 0;
    std::map<std::string, std::size_t> bounded_by_;  // per "<parameter> at min|max", trials there
    nlohmann::ordered_json fields_ = nlohmann::ordered_json::object();
};

/// Calls run(function, sampler, seed) for each selected function, sampler and seed, after checking
/// the budgets (sorted in place) and that every sampler is one of `known`. Returns what is wrong,
/// empty when all ran; an unknown function name stops the loop where it stands.
template <class Run>
std::string for_each_run(const std::vector<TestFunction>& functions, RunSelection& s,
                         const std::vector<std::string>& known, Run&& run) {
    if (!normalise_budgets(s.budgets)) return "--budgets: give positive budgets";
    for (const auto& sampler : s.samplers)
        if (std::find(known.begin(), known.end(), sampler) == known.end()) return "unknown sampler " + sampler;
    for (const auto& name : s.functions) {
        const auto it = std::find_if(functions.begin(), functions.end(), [&](const auto& f) { return f.name == name; });
        if (it == functions.end()) return "unknown function " + name;
        for (const auto& sampler : s.samplers)
            for (std::uint64_t seed = s.first_seed; seed < s.first_seed + s.seeds; ++seed) run(*it, sampler, seed);
    }
    return {};
}

}  // namespace peers
