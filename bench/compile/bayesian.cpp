// Compile-time probe: a tuner with Bayesian optimisation (the Gaussian process).
#include <hypertune/hypertune.hpp>
#include <hypertune/strategies/bayesian.hpp>

int main() {
    hypertune::SearchSpace space{hypertune::ContinuousParameter("lr", 1e-4, 1.0), hypertune::IntegerParameter("depth", 1, 10)};
    hypertune::Tuner tuner(space, hypertune::Bayesian{}, {.max_jobs = 20, .max_parallel_jobs = 2});
    auto result = tuner.fit([](const hypertune::Config& c) { return c.get<double>("lr") * c.get<int>("depth"); });
    return result.best().objective > 0 ? 0 : 1;
}
