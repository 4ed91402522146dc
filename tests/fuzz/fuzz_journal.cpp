// SPDX-License-Identifier: MIT
// The journal reader. The bytes are written to a file, which is then
//   1. attached to with load_result(), whose Result must give its summary, CSV and JSON and serve
//      as a warm-start parent (prepare_warm_start);
//   2. resumed by a Tuner with the space, strategy, seed and metric of the run that wrote the seed
//      journals (corpus/journal/), so that their mutations get past the check that a journal
//      belongs to this run, are replayed into the strategy, and the missing trials run.
// Refusing a damaged journal with a hypertune::Error (IoError, InvalidArgument) is fine; any other
// exception, a crash, undefined behaviour or a hang is a bug.
#include "fuzz_support.hpp"
#include "warm_start_invariants.hpp"

#include <hypertune/journal.hpp>
#include <hypertune/json.hpp>
#include <hypertune/strategies/asha.hpp>
#include <hypertune/tuner.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include <unistd.h>

namespace {

using namespace hypertune;

// The run that wrote the seed journals; keep in step with them.
SearchSpace seed_space() {
    return SearchSpace{ContinuousParameter("x", 0.0, 1.0), IntegerParameter("k", 1, 5),
                       CategoricalParameter("kind", {"a", "b"})};
}

TunerOptions seed_options(const std::string& journal) {
    return {.metric = "loss", .max_jobs = 3, .max_parallel_jobs = 1, .seed = 3, .progress = ProgressBar::Never,
            .journal = journal};
}

ASHA seed_strategy() { return ASHA({.min_resource = 1, .max_resource = 3, .reduction_factor = 3}); }

double seed_trainer(const Config& c, Trial& trial) {
    double loss = 0.0;
    for (Resource r = trial.resumed_from() + 1; r <= trial.budget(); ++r) {
        loss = std::abs(c.get<double>("x") - 0.3) + 0.01 * c.get<int>("k") + 1.0 / static_cast<double>(r);
        trial.report(r, loss);
        if (trial.should_stop()) break;
    }
    return loss;
}

// One file per process, so that fuzzers running side by side do not share it.
const std::string& journal_path() {
    static const std::string path =
        (std::filesystem::temp_directory_path() / fmt::format("hypertune-fuzz-journal-{}.jsonl", ::getpid())).string();
    return path;
}

void write_file(const std::string& path, const std::uint8_t* data, std::size_t size) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) fuzz::fail(fmt::format("cannot write '{}'", path));
    bool written = size == 0 || std::fwrite(data, 1, size, f) == size;
    if (std::fclose(f) != 0 || !written) fuzz::fail(fmt::format("cannot write '{}'", path));
}

void attach(const std::string& path) {
    fuzz::expect_only_hypertune_errors("load_result", [&] {
        Result r = load_result(path);
        (void)r.summary();
        (void)r.to_csv();
        (void)r.to_json().dump();
        (void)r.cost();
        if (r.has_best()) fuzz::require(r.best().has_objective(), "best() has no value");
        fuzz::check_warm_start(r, seed_space());
        fuzz::check_warm_start(r, fuzz::changed_seed_space());
    });
}

void resume(const std::string& path) {
    fuzz::expect_only_hypertune_errors("Tuner (resume)", [&] {
        Tuner tuner(seed_space(), seed_strategy(), seed_options(path));
        Result r = tuner.fit(seed_trainer);
        (void)r.summary();
        (void)r.to_csv();
    });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto& path = journal_path();
    write_file(path, data, size);
    attach(path);
    // A file without events would start a fresh run, with nothing of the input left in it.
    bool has_events = false;
    try {
        has_events = !detail::read_journal(path).events.empty();
    } catch (const std::exception&) {
        // attach() has judged this exception already
    }
    if (has_events) resume(path);  // appends to the file, which is written anew for every input
    std::remove(path.c_str());
    return 0;
}
