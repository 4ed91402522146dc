// SPDX-License-Identifier: MIT
// Writing your own strategy: a scheduler (when trials stop) and a sampler (which configuration
// next), each a few lines, run together by the Tuner.
//
// - FirstReportMedian, a scheduler: every trial runs up to 20 epochs, and is stopped at its first
//   report when that is worse than the median of the first reports seen so far.
// - PerturbBest, a sampler: random configurations for the first 8 trials, then the best
//   completed configuration so far with its coordinates moved a little (a simple local search).
//
// The same scheduler runs with the default random sampler and with PerturbBest, for comparison.
//
// The base classes own everything else: trial ids, the max_jobs budget, passing results to the
// sampler, and the records of each decision. Run it with no arguments.

#include <hypertune/hypertune.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <vector>

namespace ht = hypertune;

// ---- a scheduler in 20 lines -------------------------------------------------------------------
class FirstReportMedian : public ht::Scheduler {
public:
    explicit FirstReportMedian(ht::AnySampler sampler = ht::RandomSampler{}) : Scheduler(std::move(sampler)) {}
    std::string name() const override { return with_sampler_name("FirstReportMedian"); }
    std::optional<ht::Resource> max_resource() const override { return 20; }

protected:
    ht::Suggestion next(const ht::TrialBudget& budget) override { return start_new(budget, 20); }
    ht::Decision on_report(ht::TrialId id, ht::Resource step, double loss) override {
        if (step != 1) return ht::Decision::Continue;
        std::vector<double> seen = firsts_;
        firsts_.push_back(loss);
        if (seen.size() < 3) return ht::Decision::Continue;
        std::nth_element(seen.begin(), seen.begin() + seen.size() / 2, seen.end());
        const double median = seen[seen.size() / 2];
        if (loss <= median) return ht::Decision::Continue;
        decide({id, ht::DecisionRecord::Kind::Stop, -1, 0, step, loss, median, seen.size(), "first report above the median"});
        return ht::Decision::Stop;
    }

private:
    std::vector<double> firsts_;
};

// ---- a sampler in 20 lines ---------------------------------------------------------------------
class PerturbBest : public ht::Sampler {
public:
    std::string name() const override { return "PerturbBest"; }
    void start(const ht::SearchSpace& space, const ht::SamplerContext& ctx) override { space_ = space, seed_ = ctx.seed; }
    std::optional<ht::Config> sample(ht::TrialId id) override {
        std::vector<double> u = space_.encode(ht::RandomSampler::sample(space_, seed_, id));
        if (id >= 8 && !best_.empty()) {
            std::mt19937_64 rng(seed_ + id);
            std::normal_distribution<double> move(0.0, 0.05);
            for (std::size_t j = 0; j < u.size(); ++j) u[j] = std::clamp(best_[j] + move(rng), 0.0, 1.0);
        }
        return space_.decode(points_[id] = u);
    }
    void on_result(ht::TrialId id, const ht::Outcome& o) override {
        if (o.status == ht::Outcome::Status::Completed && o.loss < best_loss_) best_loss_ = o.loss, best_ = points_[id];
    }

private:
    ht::SearchSpace space_;
    std::uint64_t seed_ = 0;
    std::map<ht::TrialId, std::vector<double>> points_;  // each trial's point in the unit cube
    std::vector<double> best_;
    double best_loss_ = INFINITY;
};

int main() {
    ht::SearchSpace space;
    auto lr = space.add(ht::ContinuousParameter("learning_rate", 1e-4, 1.0));
    auto momentum = space.add(ht::ContinuousParameter("momentum", 0.0, 0.99));

    // A learning curve: the loss falls with the epochs towards a floor set by the hyperparameters.
    auto train = [&](const ht::Config& cfg, ht::Trial& trial) {
        const double floor = std::pow(std::log10(cfg[lr]) + 2.0, 2) + std::pow(cfg[momentum] - 0.9, 2);
        double loss = 0.0;
        for (ht::Resource epoch = 1; epoch <= trial.budget() && !trial.should_stop(); ++epoch) {
            loss = floor + 1.0 / static_cast<double>(epoch);
            trial.report(epoch, loss);
        }
        return loss;
    };

    const ht::TunerOptions options{.metric = "loss", .max_jobs = 40, .max_parallel_jobs = 2, .seed = 5};
    ht::Result random = ht::Tuner(space, FirstReportMedian(), options).fit(train);
    ht::Result local = ht::Tuner(space, FirstReportMedian(PerturbBest{}), options).fit(train);
    fmt::print("{}", local.summary());
    for (const ht::Result* r : {&random, &local})
        fmt::print("{}: best learning_rate = {:.4g}, momentum = {:.3f}, loss {:.4f} (trial {}); {} of {} stopped at "
                   "their first report\n",
                   r->setup().strategy, r->best().config[lr], r->best().config[momentum], r->best().objective,
                   r->best().id, r->count(ht::TrialStatus::Stopped), r->trials().size());
}
