// SPDX-License-Identifier: MIT
// Tuning an external trainer: each trial runs train_program (examples/train_program.cpp) as a
// command, with the trial's hyperparameters as arguments, and reads its validation loss from the
// lines it prints. ASHA stops poor trials early (their whole process group gets SIGTERM); two
// trials run at a time. Swap the command for `mpirun -n 4 ./train ...` and nothing else changes.
//
//   command_tuning [path/to/train_program] [--report]   (default: train_program next to this program)
#include <hypertune/command_objective.hpp>
#include <hypertune/hypertune.hpp>
#include <hypertune/report.hpp>
#include <hypertune/strategies/asha.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

namespace ht = hypertune;

int main(int argc, char** argv) {
    std::string trainer = (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "train_program").string();
    bool report = false;
    for (int i = 1; i < argc; ++i) {
        if (std::string_view(argv[i]) == "--report") report = true;
        else trainer = argv[i];
    }

    ht::SearchSpace space;
    space.add(ht::ContinuousParameter("learning_rate", 1e-4, 1.0));  // Auto: log scale
    space.add(ht::ContinuousParameter("l2", 1e-6, 1e-1));
    space.add(ht::IntegerParameter("batch_size", 8, 256, ht::Scaling::Logarithmic));

    // Never a shell: every value is one argument. {budget} is the epochs this trial may run.
    ht::CommandObjective objective(
        {trainer, "--lr={learning_rate}", "--l2={l2}", "--batch-size={batch_size}", "--epochs={budget}"},
        {.metrics = {{"validation:loss", R"(validation_loss=([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?))"},
                     {"validation:accuracy", R"(validation_accuracy=([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?))"}},
         .step_regex = R"(epoch=(\d+))",
         .timeout_seconds = 120,
         .kill_grace_seconds = 2,
         .log_dir = "command_tuning_logs"});
    objective.check(space);  // a misspelt placeholder fails here, before any trial runs

    bool quick = std::getenv("HYPERTUNE_CTEST") != nullptr;
    // train_program keeps no checkpoint: the stop type never resumes a trial, where the default
    // promotion type would train each promoted trial again from its first epoch.
    ht::Tuner tuner(space, ht::ASHA({.min_resource = 1, .max_resource = 27, .type = ht::HalvingType::Stop}),
                    {.metric = "validation:loss", .max_jobs = quick ? 20u : 40u, .max_parallel_jobs = 2, .seed = 11});
    ht::Result result = tuner.fit(objective);

    fmt::print("{}", result.summary());
    const auto& best = result.best();
    fmt::print("best trial's output: command_tuning_logs/trial-{}.log\n", best.id);
    result.to_csv("command_tuning_trials.csv");
    if (report) ht::write_report(result, "command_tuning_report.html");
    return 0;
}
