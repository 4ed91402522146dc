// SPDX-License-Identifier: MIT
// What README's C++ blocks take as given: the names a reader's program already has (a search
// space, a trainer, an objective, a result). Declared only: the blocks are compiled, not linked or
// run (they would need a trainer, MPI ranks, files). CMakeLists.txt puts each block in a function
// of its own after this header, so a block compiles exactly as README shows it.
#pragma once

#include <hypertune/hypertune.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace ht = hypertune;

namespace readme {

double train_one_epoch(double learning_rate, int max_depth);

// A model with a checkpoint, as the objective's block trains it.
struct Model {
    explicit Model(const ht::Config&);
    static Model load(const std::string& bytes);
    double train_epoch_and_validate();
    [[nodiscard]] std::string save() const;
    [[nodiscard]] double validation_auc() const;
};

// The data-parallel trainer of the MPI block; templates, so that this header needs no MPI.
template <class Comm>
double train_epoch_allreduce(const ht::Config& cfg, Comm group);
template <class Comm>
double validation_accuracy(Comm group);

double objective(const ht::Config& cfg, ht::Trial& trial);
double train(const ht::Config& cfg);

extern ht::SearchSpace space;
extern ht::SearchSpace space_with_wider_ranges;
extern const ht::ParameterHandle<double> eta;
extern const ht::Config cfg;
extern ht::TunerOptions options;
extern ht::Result result;

}  // namespace readme
