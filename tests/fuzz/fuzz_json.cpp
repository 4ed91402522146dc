// SPDX-License-Identifier: MIT
// The JSON loaders: a search space (detail::space_from_json, what a journal's run_started holds), a
// configuration (SearchSpace::from_json) and a result's trials (Result::to_json's layout:
// configurations with their final values), which then warm-start a run (prepare_warm_start). The
// input is one JSON document; whichever of these it holds is loaded:
//   [ {parameter}, ... ]                                   a search space
//   {"space": [...], "config": {...}}                      a configuration of that space
//   {"space": [...], "trials": [{"hyperparameters": {...}, "FinalObjectiveValue": 0.5, ...}]}
// Without a usable "space" the configurations are read against a fixed space with every kind of
// parameter. Configurations from from_json must be valid and survive the round trips of
// space_invariants.hpp; the trials are made into a Result whose summary, CSV and JSON must work.
#include "fuzz_support.hpp"
#include "space_invariants.hpp"
#include "warm_start_invariants.hpp"

#include <hypertune/journal.hpp>
#include <hypertune/json.hpp>
#include <hypertune/result.hpp>
#include <hypertune/search_space.hpp>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace {

using namespace hypertune;
using json = nlohmann::json;

const SearchSpace& fixed_space() {
    static const SearchSpace space{
        IntegerParameter("num_round", 100, 200),
        IntegerParameter("max_depth", 1, 1000, Scaling::Logarithmic),
        ContinuousParameter("eta", 1e-4, 1.0),
        ContinuousParameter("momentum", 0.0, 0.999, Scaling::ReverseLogarithmic),
        ContinuousParameter("alpha", -2.0, 2.0),
        CategoricalParameter("booster", {"gbtree", "dart", "gblinear"}),
        StaticParameter("objective", "binary:logistic"),
        StaticParameter("threads", 4),
        StaticParameter("scale", 0.5),
    };
    return space;
}

// detail::space_from_json is for the journal reader, which turns nlohmann's exceptions into
// IoError naming the line; so here those are accepted too, and nothing else.
std::optional<SearchSpace> load_space(const json& j) {
    try {
        return detail::space_from_json(j);
    } catch (const Error&) {
    } catch (const json::exception&) {
    } catch (const std::exception& e) {
        fuzz::fail(fmt::format("space_from_json: {} escaped: {}", typeid(e).name(), e.what()));
    }
    return std::nullopt;
}

std::optional<Config> load_config(const SearchSpace& space, const json& j) {
    std::optional<Config> cfg;
    fuzz::expect_only_hypertune_errors("SearchSpace::from_json", [&] { cfg = space.from_json(j); });
    if (cfg) fuzz::check_config_round_trips(space, *cfg, "from_json");
    return cfg;
}

// A result's trials (each configuration and final value) as a Result, then used to warm-start
// a run in the same space and in a changed one.
void load_trials(const SearchSpace& space, const json& doc) {
    const json& trials = doc["trials"];
    Result::Setup setup;
    if (auto m = doc.find("metric"); m != doc.end() && m->is_string()) setup.metric = m->get<std::string>();
    if (auto d = doc.find("direction"); d != doc.end() && *d == "Maximize") setup.direction = Direction::Maximize;
    for (const auto& p : space.parameters()) setup.parameter_names.push_back(p.name);
    std::vector<TrialRecord> records;
    for (const auto& t : trials) {
        if (!t.is_object()) continue;
        auto hyperparameters = t.find("hyperparameters");
        if (hyperparameters == t.end()) continue;
        auto cfg = load_config(space, *hyperparameters);
        if (!cfg) continue;
        TrialRecord r;
        r.id = records.size();
        r.config = std::move(*cfg);
        r.status = TrialStatus::Completed;
        if (auto v = t.find("FinalObjectiveValue"); v != t.end()) r.objective = detail::number_from(detail::from_nlohmann(*v));
        if (auto s = t.find("TrainingJobStatus"); s != t.end() && s->is_string())
            fuzz::expect_only_hypertune_errors("status_from", [&] { r.status = detail::status_from(s->get<std::string>()); });
        records.push_back(std::move(r));
    }
    Result result(std::move(setup), std::move(records));
    fuzz::expect_only_hypertune_errors("Result", [&] {
        (void)result.summary();
        (void)result.to_csv();
        (void)result.to_json().dump();
        if (result.has_best()) fuzz::require(result.best().has_objective(), "best() has no value");
    });
    fuzz::check_warm_start(result, space);
    fuzz::check_warm_start(result, fuzz::changed_seed_space());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // Not JSON at all is nlohmann's business, not ours.
    json doc = json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return 0;

    std::optional<SearchSpace> space;
    if (doc.is_array()) space = load_space(doc);
    else if (doc.is_object() && doc.contains("space")) space = load_space(doc["space"]);
    if (space) {
        // The points come from the document's own bytes, so they vary with it.
        fuzz::ByteReader points(data, size);
        fuzz::check_space(*space, points);
    }
    const SearchSpace& target = space ? *space : fixed_space();

    if (!doc.is_object()) return 0;
    if (auto c = doc.find("config"); c != doc.end()) (void)load_config(target, *c);
    if (auto t = doc.find("trials"); t != doc.end() && t->is_array()) load_trials(target, doc);
    if (!doc.contains("space") && !doc.contains("trials") && !doc.contains("config")) (void)load_config(target, doc);
    return 0;
}
