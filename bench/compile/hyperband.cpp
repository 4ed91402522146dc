// Compile-time probe: a tuner with Hyperband and intermediate reports.
#include <hypertune/hypertune.hpp>
#include <hypertune/strategies/hyperband.hpp>

int main() {
    hypertune::SearchSpace space{hypertune::ContinuousParameter("lr", 1e-4, 1.0), hypertune::IntegerParameter("depth", 1, 10)};
    hypertune::Tuner tuner(space, hypertune::Hyperband({.max_resource = 27}), {.max_jobs = 20, .max_parallel_jobs = 2});
    auto result = tuner.fit([](const hypertune::Config& c, hypertune::Trial& trial) {
        double loss = 1.0;
        for (hypertune::Resource r = 1; r <= trial.budget() && !trial.should_stop(); ++r)
            trial.report(r, loss = c.get<double>("lr") / static_cast<double>(r));
        return loss;
    });
    return result.best().objective > 0 ? 0 : 1;
}
