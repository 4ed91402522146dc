// SPDX-License-Identifier: MIT
// Header-only link test, second translation unit (-O0, the project's warnings): runs first.cpp's
// tunings, reloads the journal, writes the result's files and report, and runs a short Bayesian
// search. Exits 0 when all agree, naming what did not otherwise.
#include "all_headers.hpp"

#include <cstdio>
#include <filesystem>

int main() {
    namespace ht = hypertune;
    const auto dir = std::filesystem::temp_directory_path() / "hypertune-header-only-test";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::string journal = (dir / "run.jsonl").string();

    ht::Result live = header_only_test::tune_with_journal(journal);
    ht::Result loaded = ht::load_result(journal);
    live.to_csv((dir / "trials.csv").string());
    live.to_json((dir / "result.json").string());
    ht::write_report(live, (dir / "report.html").string());
    const std::string command_text = header_only_test::run_a_command(dir.string());

    ht::Tuner bayes(ht::SearchSpace{ht::ContinuousParameter("x", -1.0, 1.0)}, ht::Bayesian(),
                    {.max_jobs = 8, .seed = 2, .progress = ht::ProgressBar::Never});
    ht::Result b = bayes.fit([](const ht::Config& c) { return c.get<double>("x") * c.get<double>("x"); });
    const auto importance = ht::parameter_importance(b);  // 8 completed trials of one parameter

    bool ok = true;
    auto expect = [&](bool holds, const char* what) {
        if (!holds) std::printf("header-only: FAILED: %s\n", what);
        ok = ok && holds;
    };
    expect(live.trials().size() == 12, "12 trials in the live result");
    expect(loaded.trials().size() == 12, "12 trials in the reloaded journal");
    expect(loaded.best().id == live.best().id, "the same best trial after reloading");
    expect(importance.size() == 1 && importance.front().name == "x", "the importance of the one parameter");
    expect(live.summary().find("12 trials") != std::string::npos, "a summary");
    expect(b.trials().size() == 8, "8 Bayesian trials");
    expect(std::filesystem::file_size(dir / "report.html") > 0, "a report");
    expect(command_text.find("4 trials") != std::string::npos, "4 trials of /bin/echo");
    std::printf("header-only: %zu trials, best %d, reloaded best %d, Bayesian best %.3f: %s\n", live.trials().size(),
                static_cast<int>(live.best().id), static_cast<int>(loaded.best().id), b.best().objective,
                ok ? "ok" : "MISMATCH");
    std::filesystem::remove_all(dir);
    return ok ? 0 : 1;
}
