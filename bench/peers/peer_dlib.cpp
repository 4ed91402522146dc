// SPDX-License-Identifier: MIT
// dlib's side of the peer comparison (bench/peers/README.md): MaxLIPO+TR, the algorithm of
// dlib::find_min_global, on the functions of test_functions.hpp. Prints one JSON line per
// (sampler, function, budget, seed), as peer_functions and optuna_peers.py do:
//   {"library":"dlib","sampler":"LIPO","function":"branin","budget":50,"seed":3,"regret":...,
//    "bound_fraction":...,"seconds":...,"cpu_seconds":...}
//
//   peer_dlib [--functions a,b] [--budgets 50,200] [--seeds N] [--first-seed S] [--samplers LIPO,FindMinGlobal]
//   peer_dlib --list
//
// Samplers:
//   LIPO           dlib::global_function_search, driven one evaluation at a time with
//                  set_seed(seed): the search find_min_global runs, with its defaults (solver
//                  epsilon 0, relative noise magnitude 0.001, 5,000 Monte Carlo samples for the
//                  upper bound, a pure random step with probability 0.02, LIPO and trust-region
//                  steps alternating), as it behaves on an expensive objective.
//   FindMinGlobal  dlib::find_min_global(f, lower, upper, is_integer, max_function_calls(budget))
//                  as it is. It takes no seed: its generator always starts from dlib::rand's
//                  default seed, so repeated runs differ only through its timing rule, which
//                  shrinks the Monte Carlo sampling, and at last turns to pure random search,
//                  whenever proposing a point takes longer than evaluating the objective (always,
//                  for these cheap functions). The seed only selects the noise of noisy_hartmann6.
//
// The space as dlib sees it: every continuous parameter with min > 0 and max / min >= 1000 on a
// log scale (find_min_global's own rule; here that is the lr of mixed4 and mixed6, logarithmic on
// the other sides too), every other continuous parameter linear; integer parameters as dlib integer
// variables (linear: dlib has no logarithmic integers, so mixed4's units is searched linearly in
// 1..1000 and mixed6's width in 16..1024);
// a categorical parameter as an integer variable holding the index of its category.
// Both samplers evaluate the centre of the box first (dlib's rule), then at least
// max(3, d) - 1 random points.
//
// One run per (sampler, function, seed) goes to the largest budget and reports at every budget on
// the way: the search does not know the budget, so the first 50 evaluations of a 200-evaluation
// run are those of a 50-evaluation run (FindMinGlobal: up to its timing rule).
#include "function_runs.hpp"

#include <dlib/global_optimization.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace ht = hypertune;
using peers::TestFunction;

// How each tuned parameter maps to one dlib variable.
struct Variable {
    const ht::ParameterSpec* spec;
    bool log = false;  // dlib searches log(value)
};

struct DlibSpace {
    std::vector<Variable> variables;
    dlib::matrix<double, 0, 1> lower, upper;
    std::vector<bool> is_integer;
};

DlibSpace dlib_space(const ht::SearchSpace& space) {
    DlibSpace out;
    const auto& params = space.parameters();
    const auto d = static_cast<long>(params.size());
    out.lower.set_size(d);
    out.upper.set_size(d);
    for (long i = 0; i < d; ++i) {
        const auto& p = params[static_cast<std::size_t>(i)];
        Variable v{&p};
        switch (p.kind) {
            case ht::ParameterKind::Continuous:
                v.log = p.min > 0.0 && p.max / p.min >= 1000.0;
                out.lower(i) = v.log ? std::log(p.min) : p.min;
                out.upper(i) = v.log ? std::log(p.max) : p.max;
                out.is_integer.push_back(false);
                break;
            case ht::ParameterKind::Integer:
                out.lower(i) = p.min;
                out.upper(i) = p.max;
                out.is_integer.push_back(true);
                break;
            case ht::ParameterKind::Categorical:
                out.lower(i) = 0.0;
                out.upper(i) = static_cast<double>(p.categories.size() - 1);
                out.is_integer.push_back(true);
                break;
            case ht::ParameterKind::Static: throw std::invalid_argument("peer_dlib: static parameters are not supported");
        }
        out.variables.push_back(v);
    }
    return out;
}

// The configuration at dlib's point x; `searched` says whether x is on dlib's (log) scale.
ht::Config to_config(const ht::SearchSpace& space, const DlibSpace& ds, const dlib::matrix<double, 0, 1>& x, bool searched) {
    std::vector<ht::Value> values;
    for (long i = 0; i < x.size(); ++i) {
        const auto& v = ds.variables[static_cast<std::size_t>(i)];
        const auto& p = *v.spec;
        if (p.kind == ht::ParameterKind::Continuous) {
            const double value = v.log && searched ? std::exp(x(i)) : x(i);
            values.emplace_back(std::clamp(value, p.min, p.max));  // exp(log(min)) may miss min by an ulp
        } else {
            const auto k = static_cast<std::int64_t>(std::llround(x(i)));
            if (p.kind == ht::ParameterKind::Integer) values.emplace_back(k);
            else values.emplace_back(p.categories.at(static_cast<std::size_t>(k)));
        }
    }
    return space.make(std::move(values));
}

void run_lipo(const TestFunction& fn, const std::vector<std::size_t>& budgets, std::uint64_t seed) {
    const DlibSpace ds = dlib_space(fn.space);
    dlib::global_function_search search(dlib::function_spec(ds.lower, ds.upper, ds.is_integer));
    search.set_seed(static_cast<time_t>(seed));
    peers::Recorder rec("dlib", "LIPO", fn, budgets, seed);
    while (!rec.done()) {
        auto request = search.get_next_x();
        const double observed = rec.evaluate(to_config(fn.space, ds, request.x(), true));
        request.set(-observed);  // global_function_search maximises
    }
}

void run_find_min_global(const TestFunction& fn, const std::vector<std::size_t>& budgets, std::uint64_t seed) {
    const DlibSpace ds = dlib_space(fn.space);
    // find_min_global does its own log scaling and hands the objective values, so bounds in value space.
    dlib::matrix<double, 0, 1> lower = ds.lower, upper = ds.upper;
    for (long i = 0; i < lower.size(); ++i)
        if (ds.variables[static_cast<std::size_t>(i)].log) {
            lower(i) = ds.variables[static_cast<std::size_t>(i)].spec->min;
            upper(i) = ds.variables[static_cast<std::size_t>(i)].spec->max;
        }
    peers::Recorder rec("dlib", "FindMinGlobal", fn, budgets, seed);
    auto objective = [&](const dlib::matrix<double, 0, 1>& x) {
        return rec.evaluate(to_config(fn.space, ds, x, false));
    };
    (void)dlib::find_min_global(objective, lower, upper, ds.is_integer, dlib::max_function_calls(budgets.back()));
}

int usage(const char* message) {
    std::fprintf(stderr,
                 "%s\nusage: peer_dlib [--functions a,b] [--budgets 50,200] [--seeds N] [--first-seed S]\n"
                 "                 [--samplers LIPO,FindMinGlobal]\n"
                 "       peer_dlib --list\n",
                 message);
    return 2;
}

}  // namespace

int main(int argc, char** argv) try {
    const auto functions = peers::test_functions();
    peers::RunSelection selection = peers::default_selection(functions, {"LIPO"});
    bool list = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
            return argv[++i];
        };
        if (peers::read_selection_option(a, value, selection)) continue;
        if (a == "--list") list = true;
        else return usage(("unknown option " + a).c_str());
    }
    if (list) {
        peers::print_function_list(functions);
        return 0;
    }
    const std::string error = peers::for_each_run(
        functions, selection, {"LIPO", "FindMinGlobal"}, [&](const peers::TestFunction& fn, const std::string& sampler,
                                                             std::uint64_t seed) {
            if (sampler == "LIPO") run_lipo(fn, selection.budgets, seed);
            else run_find_min_global(fn, selection.budgets, seed);
        });
    return error.empty() ? 0 : usage(error.c_str());
} catch (const std::exception& e) {
    std::fprintf(stderr, "peer_dlib: %s\n", e.what());
    return 1;
}
