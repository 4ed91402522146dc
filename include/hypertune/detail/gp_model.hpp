// SPDX-License-Identifier: MIT
#pragma once
// GPModel: the Gaussian-process sampler's state and logic (initial design, model points, fits,
// candidates and acquisition). Behind GPSampler (strategies/bayesian.hpp), so that a program
// that only names GPSampler or Bayesian does not compile Eigen and L-BFGS-B in compiled mode.

#include <hypertune/config.hpp>
#include <hypertune/detail/gaussian_process.hpp>
#include <hypertune/detail/gp_feasibility.hpp>
#include <hypertune/detail/random.hpp>
#include <hypertune/detail/sobol.hpp>
#include <hypertune/error.hpp>
#include <hypertune/sampler.hpp>
#include <hypertune/strategies/bayesian_options.hpp>
#include <hypertune/scheduler.hpp>
#include <hypertune/search_space.hpp>

#include <Eigen/Core>
#include <LBFGSB.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hypertune::detail {

// The whole of GPSampler's state and logic (see the top of strategies/bayesian.hpp); GPSampler
// holds one and forwards to it.
class GPModel {
public:
    explicit GPModel(BayesianOptions options) : options_(options) {
        if (options_.candidates < 1) throw InvalidArgument("Bayesian: candidates must be >= 1, got 0");
        if (options_.max_model_points < 2)
            throw InvalidArgument(
                fmt::format("Bayesian: max_model_points must be >= 2, got {}", options_.max_model_points));
        if (options_.refit_every < 1) throw InvalidArgument("Bayesian: refit_every must be >= 1, got 0");
    }

    void start(const SearchSpace& space, const SamplerContext& ctx) {
        space_ = space;
        seed_ = ctx.seed;
        dims_ = space.dimensions();
        specs_.clear();
        continuous_.clear();
        for (std::size_t j = 0; j < dims_; ++j) {
            const ParameterSpec& p = space.parameter(space.tuned_index(j));
            specs_.push_back(p);
            if (p.kind == ParameterKind::Continuous && p.min < p.max) continuous_.push_back(j);
        }
        initial_ = options_.initial_points != 0 ? options_.initial_points : std::max<std::size_t>(5, dims_ + 1);
        design_ = detail::ScrambledSobol(dims_, detail::hash3(ctx.seed, stream_design, 0));
        candidate_sequence_ = detail::ScrambledSobol(dims_, detail::hash3(ctx.seed, stream_candidates, 0));
        next_design_ = 0;
        feature_of_.clear();
        features_ = 0;
        for (const ParameterSpec& p : specs_) {
            feature_of_.push_back(features_);
            features_ += p.kind == ParameterKind::Categorical ? p.categories.size() : 1;
        }
        trials_.clear();
        position_.clear();
        earlier_.clear();
        seeded_.clear();
        points_.clear();
        notes_.clear();
        last_note_.clear();
        hyper_.reset();
        warp_ = {};
        warned_warp_ = false;
        last_fit_count_ = 0;
        fits_ = 0;
        objectives_ = 1;
        constraint_hyper_.clear();
    }

    /// The k-th configuration asked for (k counts this sampler's trials): a seeded one, a point of
    /// the initial design, then the model's. Every random draw depends on (seed, id).
    [[nodiscard]] std::optional<Config> sample(TrialId id) {
        const std::size_t k = trials_.size();
        std::vector<double> u;
        if (k < seeded_.size()) u = seeded_[k];
        else if (k + evaluated_earlier() < initial_) u = space_filling();
        else u = suggest(id);
        Config cfg = space_.decode(u);
        position_[id] = k;
        trials_.push_back({space_.encode(cfg), State::Pending, std::numeric_limits<double>::quiet_NaN()});
        return cfg;
    }

    /// Completed and stopped trials with a finite loss are results; anything else counts as failed.
    void on_result(TrialId id, const Outcome& outcome) {
        auto at = position_.find(id);
        if (at == position_.end()) return;
        TrialData& t = trials_[at->second];
        // With its constraints' violations, a trial enters the model with its own loss and the
        // constraint models learn where it stands; without them (options_.model_constraints off, or
        // a constrained metric missing), a trial that breaks a constraint enters as a failed one
        // does, at the worst loss: its region is discouraged whatever its own loss.
        const bool modelled = options_.model_constraints && !outcome.violations.empty() &&
                              std::all_of(outcome.violations.begin(), outcome.violations.end(),
                                          [](double v) { return std::isfinite(v); });
        bool usable = outcome.status != Outcome::Status::Failed && (outcome.feasible || modelled) &&
                      std::isfinite(outcome.loss);
        if (outcome.losses.size() > 1) {
            objectives_ = outcome.losses.size();
            usable = usable && std::all_of(outcome.losses.begin(), outcome.losses.end(),
                                           [](double l) { return std::isfinite(l); });
            t.losses = outcome.losses;
        } else if (objectives_ > 1) {
            usable = false;  // a run of several objectives: one loss alone cannot be placed
        }
        t.state = usable ? State::Observed : State::Failed;
        t.loss = usable ? outcome.loss : std::numeric_limits<double>::quiet_NaN();
        t.violations = usable && modelled ? outcome.violations : std::vector<double>{};
        // one model per constraint, from the first result that carries them
        if (t.violations.size() > constraint_hyper_.size()) constraint_hyper_.resize(t.violations.size());
    }

    /// An evaluation made outside this run's trials (a warm-start parent's result, or a result at
    /// another fidelity): it enters the model like a trial's result and counts towards the initial
    /// design. A non-finite loss counts as a failed evaluation. Call after start(); `cfg` must
    /// belong to the space given to start().
    void observe(const Config& cfg, double loss) {
        space_.check(cfg);
        const bool usable = std::isfinite(loss);
        earlier_.push_back({space_.encode(cfg), usable ? State::Observed : State::Failed,
                            usable ? loss : std::numeric_limits<double>::quiet_NaN()});
    }
    /// A configuration under evaluation elsewhere: the model treats it like a pending trial.
    void observe_pending(const Config& cfg) {
        space_.check(cfg);
        earlier_.push_back({space_.encode(cfg), State::Pending, std::numeric_limits<double>::quiet_NaN()});
    }
    /// The first trials evaluate these configurations (in order) before the space-filling design
    /// goes on; call after start(). Repeats are dropped.
    void seed_initial_design(const std::vector<Config>& configs) {
        for (const Config& cfg : configs) {
            space_.check(cfg);
            std::vector<double> u = space_.encode(cfg);
            const bool repeat = std::any_of(seeded_.begin(), seeded_.end(), [&](const std::vector<double>& v) {
                return squared_distance(v.data(), u.data(), dims_) < 1e-18;
            });
            if (!repeat) seeded_.push_back(std::move(u));
        }
    }

    /// Earlier runs' trials (the Tuner's TunerOptions::warm_start). IdenticalDataAndAlgorithm:
    /// every one is an observation (failed ones discourage their region). TransferLearning: the
    /// best `initial_points` of them open the initial design, to be evaluated again here; they do
    /// not enter the model, since the objective may have changed.
    bool warm_start(const std::vector<WarmStartObservation>& observations, WarmStartType type) {
        if (type == WarmStartType::IdenticalDataAndAlgorithm) {
            for (const auto& o : observations) observe(o.config, o.loss);
            notes_.push_back({std::nullopt, fmt::format("warm start: {} results of earlier runs enter the model",
                                                        observations.size())});
            return true;
        }
        std::vector<const WarmStartObservation*> usable;
        for (const auto& o : observations)
            if (std::isfinite(o.loss)) usable.push_back(&o);
        std::stable_sort(usable.begin(), usable.end(), [](auto* a, auto* b) { return a->loss < b->loss; });
        std::vector<Config> design;
        for (std::size_t i = 0; i < usable.size() && i < initial_; ++i) design.push_back(usable[i]->config);
        seed_initial_design(design);
        notes_.push_back({std::nullopt, fmt::format("warm start: the initial design starts with the best {} "
                                                    "configurations of earlier runs",
                                                    seeded_.size())});
        return true;
    }

    /// Why suggestions fell back from the model, one per change of reason, with the trial.
    [[nodiscard]] std::vector<Note> notes() const { return notes_; }
    /// The size of the initial design, once started.
    [[nodiscard]] std::size_t initial_points() const noexcept { return initial_; }
    /// Hyperparameter fits so far.
    [[nodiscard]] std::size_t model_fits() const noexcept { return fits_; }
    /// The fitted length scales (unit-cube units), one per model input: one per tuned parameter,
    /// except that a categorical parameter has one per value (one-hot). Empty before a fit.
    [[nodiscard]] std::vector<double> lengthscales() const {
        std::vector<double> out;
        if (hyper_)
            for (Eigen::Index i = 0; i < hyper_->log_lengthscales.size(); ++i)
                out.push_back(std::exp(hyper_->log_lengthscales[i]));
        return out;
    }

private:
    enum class State { Pending, Observed, Failed };
    struct TrialData {
        std::vector<double> u;  // encode(decode(...)): rounded
        State state;
        double loss;
        std::vector<double> losses{};  // several objectives: each one's; `loss` is then a scalarisation
        std::vector<double> violations{};  // each constraint's (<= 0 when met); empty: not modelled

        // Feasible as far as the model knows: no modelled violation above 0.
        [[nodiscard]] bool feasible() const {
            return std::all_of(violations.begin(), violations.end(), [](double v) { return v <= 0.0; });
        }
    };

    static constexpr std::uint64_t stream_design = 0xb0001;
    static constexpr std::uint64_t stream_candidates = 0xb0002;
    static constexpr std::uint64_t stream_local = 0xb0003;
    static constexpr std::uint64_t stream_fit = 0xb0004;
    static constexpr std::uint64_t stream_weights = 0xb0005;
    static constexpr std::uint64_t stream_constraint_fit = 0xb0006;
    // ParEGO's augmented Tchebycheff scalarisation: max_i w_i f_i + rho * sum_i w_i f_i.
    static constexpr double tchebycheff_rho = 0.05;
    static constexpr std::size_t fit_points = 100;
    static constexpr std::size_t refit_always_below = 20;
    static constexpr std::size_t refine_starts = 3;
    static constexpr std::size_t local_parents = 5;
    static constexpr double heavy_tail_ratio = 10.0;  // (worst - best) / (median - best) that warps
    // The prior's median length scale, times sqrt(d). Several objectives: ParEGO's scalarisation is
    // a max of weighted objectives, with kinks where the largest term changes, and a shorter prior
    // fits it better. Measured on DTLZ2 at 50 evaluations, median hypervolume of 10 seeds (2 / 3
    // objectives): 0.271 / 0.254 with 0.5, 0.315 / 0.394 with 0.15, 0.320 / 0.406 on 10 other
    // seeds; ZDT1 and ZDT2 within 0.3%, and no change at 200 evaluations.
    static constexpr double prior_lengthscale = 0.5;
    static constexpr double scalarised_prior_lengthscale = 0.15;

    void note(TrialId id, const std::string& key, const std::string& text) {
        if (key == last_note_) return;
        last_note_ = key;
        notes_.push_back({id, text});
    }

    // Rounds the discrete coordinates to their cell centres, as decode then encode would.
    void round(double* u) const {
        for (std::size_t j = 0; j < dims_; ++j) {
            const ParameterSpec& p = specs_[j];
            double x = std::clamp(u[j], 0.0, 1.0);
            switch (p.kind) {
                case ParameterKind::Integer: x = p.to_unit(p.from_unit(x)); break;
                case ParameterKind::Categorical: {
                    const auto k = static_cast<double>(p.categories.size());
                    x = (std::min(std::floor(x * k), k - 1.0) + 0.5) / k;
                    break;
                }
                case ParameterKind::Continuous:
                    if (!(p.min < p.max)) x = 0.5;
                    break;
                case ParameterKind::Static: break;
            }
            u[j] = x;
        }
    }

    [[nodiscard]] static double squared_distance(const double* a, const double* b, std::size_t d) {
        double s = 0.0;
        for (std::size_t j = 0; j < d; ++j) s += (a[j] - b[j]) * (a[j] - b[j]);
        return s;
    }

    [[nodiscard]] std::size_t evaluated_earlier() const {
        return static_cast<std::size_t>(std::count_if(earlier_.begin(), earlier_.end(),
                                                      [](const TrialData& t) { return t.state != State::Pending; }));
    }

    // The model's inputs for a (rounded) unit-cube point: categorical coordinates one-hot.
    void to_features(const double* u, double* f) const {
        for (std::size_t j = 0; j < dims_; ++j) {
            const std::size_t at = feature_of_[j];
            if (specs_[j].kind == ParameterKind::Categorical) {
                const std::size_t k = specs_[j].categories.size();
                const auto value = std::min(static_cast<std::size_t>(std::max(u[j], 0.0) * static_cast<double>(k)), k - 1);
                for (std::size_t c = 0; c < k; ++c) f[at + c] = c == value ? 1.0 : 0.0;
            } else {
                f[at] = u[j];
            }
        }
    }

    [[nodiscard]] Eigen::MatrixXd feature_rows(const std::vector<const double*>& rows) const {
        Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> f(static_cast<Eigen::Index>(rows.size()),
                                                                                 static_cast<Eigen::Index>(features_));
        for (std::size_t r = 0; r < rows.size(); ++r) to_features(rows[r], f.row(static_cast<Eigen::Index>(r)).data());
        return f;
    }

    // The model's data: results (and failed trials at the worst loss) as feature rows and losses.
    [[nodiscard]] std::pair<Eigen::MatrixXd, Eigen::VectorXd> model_data(
        const std::vector<std::pair<std::size_t, double>>& chosen) const {
        std::vector<const double*> rows;
        Eigen::VectorXd y(static_cast<Eigen::Index>(chosen.size()));
        for (std::size_t r = 0; r < chosen.size(); ++r) {
            rows.push_back(points_[chosen[r].first]->u.data());
            y[static_cast<Eigen::Index>(r)] = chosen[r].second;
        }
        if (warp_.on) y = (y.array() - warp_.lowest + warp_.offset).log().matrix();
        return {feature_rows(rows), y};
    }

    // Losses whose worst lies orders of magnitude above their median (a heavy right tail, as in
    // Rosenbrock-like valleys) dominate a Gaussian process's fit. Then the model sees
    // log(loss - best + s), s = median - best: about linear near the best, logarithmic in the
    // tail. The order of the losses is kept, so expected improvement stays valid. Decided on all
    // the model's results, so the hyperparameter fit on a subset sees the same transformation.
    void choose_warp(TrialId id, const std::vector<std::pair<std::size_t, double>>& results) {
        std::vector<double> sorted;
        for (const auto& r : results) sorted.push_back(r.second);
        std::sort(sorted.begin(), sorted.end());
        warp_ = {};
        if (sorted.size() < 3) return;
        const double spread = sorted[sorted.size() / 2] - sorted.front();
        if (!(spread > 0.0) || sorted.back() - sorted.front() < heavy_tail_ratio * spread) return;
        warp_ = {true, sorted.front(), spread};
        if (!warned_warp_)
            notes_.push_back({id, fmt::format("the losses span orders of magnitude (worst - best > {} x median - "
                                              "best); the model sees their logarithm above the best",
                                              heavy_tail_ratio)});
        warned_warp_ = true;
    }

    // The next Sobol point that does not repeat a trial's configuration (64 tries, then any).
    [[nodiscard]] std::vector<double> space_filling() {
        std::vector<double> u(dims_);
        for (int attempt = 0; attempt < 64; ++attempt) {
            design_.point(static_cast<std::uint32_t>(next_design_++), u);
            round(u.data());
            auto same = [&](const TrialData& t) { return squared_distance(t.u.data(), u.data(), dims_) < 1e-18; };
            const bool repeat = std::any_of(trials_.begin(), trials_.end(), same) ||
                                std::any_of(earlier_.begin(), earlier_.end(), same) ||
                                std::any_of(seeded_.begin(), seeded_.end(), [&](const std::vector<double>& v) {
                                    return squared_distance(v.data(), u.data(), dims_) < 1e-18;
                                });
            if (!repeat) break;
        }
        return u;
    }

    [[nodiscard]] std::vector<double> fallback(TrialId id, const std::string& key, const std::string& text) {
        note(id, key, text + "; suggesting a space-filling point");
        return space_filling();
    }

    // Several objectives (ParEGO, Knowles 2006): each suggestion models one random weighting of
    // them. Each objective is scaled to [0, 1] over the results so far, and a trial's loss becomes
    // the augmented Tchebycheff scalarisation max_i w_i f_i + rho sum_i w_i f_i, with weights w
    // drawn uniformly from the simplex for (seed, id). Maximising expected improvement of it
    // finds a point of the front in that direction; over many suggestions, the front.
    void scalarise(TrialId id) {
        std::vector<double> low(objectives_, std::numeric_limits<double>::infinity());
        std::vector<double> high(objectives_, -std::numeric_limits<double>::infinity());
        for (const TrialData& t : trials_)
            if (t.state == State::Observed && t.losses.size() == objectives_)
                for (std::size_t i = 0; i < objectives_; ++i) {
                    low[i] = std::min(low[i], t.losses[i]);
                    high[i] = std::max(high[i], t.losses[i]);
                }
        detail::SplitMix rng(detail::hash3(seed_, stream_weights, id));
        std::vector<double> w(objectives_);
        double total = 0.0;
        for (double& x : w) total += x = -std::log(1.0 - rng.uniform());  // Dirichlet(1, ..., 1)
        for (double& x : w) x /= total;
        for (TrialData& t : trials_) {
            if (t.state != State::Observed || t.losses.size() != objectives_) continue;
            double worst = 0.0, sum = 0.0;
            for (std::size_t i = 0; i < objectives_; ++i) {
                const double range = high[i] - low[i];
                const double f = range > 0.0 ? (t.losses[i] - low[i]) / range : 0.0;
                worst = std::max(worst, w[i] * f);
                sum += w[i] * f;
            }
            t.loss = worst + tchebycheff_rho * sum;
        }
    }

    [[nodiscard]] std::vector<double> suggest(TrialId id) {
        if (objectives_ > 1) scalarise(id);
        // Earlier evaluations first, then the trials: index order is recency for select().
        points_.clear();
        for (const TrialData& t : earlier_) points_.push_back(&t);
        for (const TrialData& t : trials_) points_.push_back(&t);
        std::vector<std::size_t> observed, failed, pending;
        for (std::size_t i = 0; i < points_.size(); ++i) {
            switch (points_[i]->state) {
                case State::Observed: observed.push_back(i); break;
                case State::Failed: failed.push_back(i); break;
                case State::Pending: pending.push_back(i); break;
            }
        }
        if (observed.size() < 2)
            return fallback(id, "few", fmt::format("{} of {} finished trials have a finite loss, the model needs 2",
                                                   observed.size(), observed.size() + failed.size()));
        double worst = -std::numeric_limits<double>::infinity();
        double lowest = std::numeric_limits<double>::infinity();
        for (auto i : observed) {
            worst = std::max(worst, points_[i]->loss);
            lowest = std::min(lowest, points_[i]->loss);
        }
        if (!(worst > lowest))
            return fallback(id, "constant",
                            fmt::format("all {} finite losses are equal ({}): nothing for a model to learn",
                                        observed.size(), worst));

        // Results, failed trials at the worst loss, capped: best half, then the most recent.
        std::vector<std::pair<std::size_t, double>> results;
        for (auto i : observed) results.emplace_back(i, points_[i]->loss);
        for (auto i : failed) results.emplace_back(i, worst);
        const std::size_t count = results.size();
        auto chosen = select(results, options_.max_model_points);
        choose_warp(id, chosen);
        if (chosen.size() < count)
            note(id, "cap", fmt::format("the model uses {} of {} results (the best {} and the most recent)",
                                        chosen.size(), count, options_.max_model_points / 2));

        auto [x, y] = model_data(chosen);
        const Eigen::Index n = x.rows();
        detail::GaussianProcess gp;
        gp.set_data(x, y);

        const bool refit = !hyper_ || (count > last_fit_count_ &&
                                       (count < refit_always_below || count >= last_fit_count_ + options_.refit_every));
        if (refit) fit_hyperparameters(id, chosen, count);
        if (!gp.condition(*hyper_))
            return fallback(id, "cholesky", "the covariance matrix could not be factorised even with jitter");
        FeasibilityModel feasibility;
        const bool constrained = !constraint_hyper_.empty() && model_constraints(id, chosen, refit, count, feasibility);

        // The incumbent: the best result, or with constraint models the best feasible one; while
        // no result is feasible, the acquisition is the probability of feasibility alone.
        std::optional<double> best;
        if (!constrained) {
            best = gp.standardised_outputs().minCoeff();
        } else {
            for (std::size_t r = 0; r < chosen.size(); ++r) {
                const TrialData& t = *points_[chosen[r].first];
                if (t.state == State::Observed && t.feasible())
                    best = std::min(best.value_or(std::numeric_limits<double>::infinity()),
                                    gp.standardised_outputs()[static_cast<Eigen::Index>(r)]);
            }
            if (!best) note(id, "infeasible", "no trial is feasible yet: suggesting where the constraint models "
                                               "expect the constraints met");
        }

        // Kriging believer: pending points enter with the posterior mean as their loss.
        detail::GaussianProcess model_with_pending;
        const detail::GaussianProcess* model = &gp;
        const auto d = static_cast<Eigen::Index>(dims_);
        Eigen::MatrixXd pu(static_cast<Eigen::Index>(pending.size()), d);  // unit cube, for the exclusion radius
        std::vector<const double*> pending_rows;
        for (std::size_t p = 0; p < pending.size(); ++p) {
            pending_rows.push_back(points_[pending[p]]->u.data());
            for (Eigen::Index c = 0; c < d; ++c)
                pu(static_cast<Eigen::Index>(p), c) = points_[pending[p]]->u[static_cast<std::size_t>(c)];
        }
        if (!pending.empty()) {
            Eigen::MatrixXd px = feature_rows(pending_rows);
            Eigen::VectorXd fantasy = gp.mean_from(gp.cross_kernel(px));
            // A pending trial's fantasy is an incumbent only where the constraints are expected met.
            const std::vector<bool> counts =
                constrained ? feasibility.likely_feasible(px) : std::vector<bool>(pending.size(), true);
            for (std::size_t p = 0; p < pending.size() && best; ++p)
                if (counts[p]) best = std::min(*best, fantasy[static_cast<Eigen::Index>(p)]);
            Eigen::MatrixXd xa(n + px.rows(), x.cols());
            xa << x, px;
            Eigen::VectorXd ya(n + px.rows());
            ya << y, (fantasy.array() * gp.output_scale() + gp.output_mean()).matrix();
            model_with_pending.set_data(std::move(xa), ya, gp.output_mean(), gp.output_scale());
            if (model_with_pending.condition(*hyper_)) model = &model_with_pending;
            else note(id, "pending-cholesky", "the model with pending trials could not be factorised; ignoring them");
        }

        auto pick = maximise_acquisition(id, *model, best, observed, pu, constrained ? &feasibility : nullptr);
        if (!pick)
            return fallback(id, "excluded",
                            "every candidate repeats an evaluated configuration or is next to a pending one");
        return *pick;
    }

    // The results the model uses: all when they fit, else the best half and the most recent.
    [[nodiscard]] static std::vector<std::pair<std::size_t, double>> select(
        std::vector<std::pair<std::size_t, double>> results, std::size_t cap) {
        if (results.size() <= cap) return results;
        std::sort(results.begin(), results.end(), [](const auto& a, const auto& b) {
            return a.second < b.second || (a.second == b.second && a.first < b.first);
        });
        const std::size_t best = cap / 2;
        std::vector<std::pair<std::size_t, double>> out(results.begin(), results.begin() + static_cast<std::ptrdiff_t>(best));
        std::sort(results.begin() + static_cast<std::ptrdiff_t>(best), results.end(),
                  [](const auto& a, const auto& b) { return a.first > b.first; });
        out.insert(out.end(), results.begin() + static_cast<std::ptrdiff_t>(best),
                   results.begin() + static_cast<std::ptrdiff_t>(cap));
        return out;
    }

    void fit_hyperparameters(TrialId id, const std::vector<std::pair<std::size_t, double>>& chosen, std::size_t count) {
        auto [x, y] = model_data(select(chosen, fit_points));
        const bool early = count < refit_always_below || !hyper_;
        hyper_ = fit(id, std::move(x), y, hyper_, early, detail::hash3(seed_, stream_fit, id),
                     objectives_ > 1 ? scalarised_prior_lengthscale : prior_lengthscale);
        ++fits_;
        last_fit_count_ = count;
    }

    // MAP hyperparameters for outputs y at rows x, under a prior whose median length scale is
    // `lengthscale` sqrt(d), from the last fit `last` (if any), the prior's mean and random starts
    // (`warm_only`: from the last fit alone, once past the early fits); the last fit (or the prior's
    // mean, noted) when no start finds a finite likelihood.
    [[nodiscard]] detail::GpHyperparameters fit(TrialId id, Eigen::MatrixXd x, const Eigen::VectorXd& y,
                                                const std::optional<detail::GpHyperparameters>& last, bool early,
                                                std::uint64_t stream, double lengthscale, bool warm_only = false) {
        const auto d = static_cast<Eigen::Index>(features_);
        detail::GaussianProcess gp;
        gp.set_data(std::move(x), y);

        detail::GpPrior prior;
        prior.log_lengthscale_mean = std::log(lengthscale * std::sqrt(static_cast<double>(dims_)));
        std::vector<detail::GpHyperparameters> starts;
        // Few results: the prior's mean and two random starts (plus the last fit). Later: the last
        // fit, and one other start that alternates between the prior's mean and a random one.
        if (last) starts.push_back(*last);
        const bool more = early || !warm_only || !last;
        if (more && (early || fits_ % 2 == 0)) starts.push_back(prior.mean(d));
        detail::SplitMix rng(stream);
        const int randoms = !more ? 0 : early ? 2 : (fits_ % 2 == 1 ? 1 : 0);
        for (int s = 0; s < randoms; ++s) {
            detail::GpHyperparameters h = prior.mean(d);
            for (Eigen::Index i = 0; i < d; ++i) h.log_lengthscales[i] += 2.0 * (rng.uniform() - 0.5) * 1.5;
            h.log_signal_variance += 2.0 * (rng.uniform() - 0.5);
            h.log_noise_variance += 4.0 * (rng.uniform() - 0.5) * 2.0;
            starts.push_back(std::move(h));
        }
        auto result = gp.fit(starts, prior, early ? 40 : 25);
        if (result.ok) return result.hyperparameters;
        if (last) return *last;
        note(id, "fit", "the hyperparameter fit found no finite likelihood; using the prior's mean");
        return prior.mean(d);
    }

    // The constraint models (detail/gp_feasibility.hpp) over the chosen results that carry every
    // constraint's violation, their hyperparameters refitted when the objective's are (or first
    // needed). False, with a note, when fewer than two results carry them or a factorisation
    // fails: the suggestion then goes by expected improvement alone.
    [[nodiscard]] bool model_constraints(TrialId id, const std::vector<std::pair<std::size_t, double>>& chosen,
                                         bool refit, std::size_t count, FeasibilityModel& out) {
        const std::size_t constraints = constraint_hyper_.size();
        std::vector<std::pair<std::size_t, double>> rows;
        for (const auto& r : chosen)
            if (points_[r.first]->violations.size() == constraints) rows.push_back(r);
        if (rows.size() < 2) return false;
        auto data = [&](const std::vector<std::pair<std::size_t, double>>& which) {
            std::vector<const double*> u;
            Eigen::MatrixXd v(static_cast<Eigen::Index>(which.size()), static_cast<Eigen::Index>(constraints));
            for (std::size_t r = 0; r < which.size(); ++r) {
                const TrialData& t = *points_[which[r].first];
                u.push_back(t.u.data());
                for (std::size_t j = 0; j < constraints; ++j)
                    v(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(j)) = t.violations[j];
            }
            return std::pair{feature_rows(u), v};
        };
        const bool missing = std::any_of(constraint_hyper_.begin(), constraint_hyper_.end(),
                                         [](const auto& h) { return !h.has_value(); });
        if (refit || missing) {
            auto [fx, fv] = data(select(rows, fit_points));
            const bool early = count < refit_always_below || missing;
            for (std::size_t j = 0; j < constraints; ++j)
                // past the early fits, from the last fit alone: a constraint model costs one start
                constraint_hyper_[j] = fit(id, fx, fv.col(static_cast<Eigen::Index>(j)), constraint_hyper_[j], early,
                                           detail::hash3(seed_, stream_constraint_fit + j, id), prior_lengthscale, true);
        }
        std::vector<detail::GpHyperparameters> hyper;
        for (const auto& h : constraint_hyper_) hyper.push_back(*h);
        auto [x, v] = data(rows);
        if (out.set(x, v, hyper)) return true;
        note(id, "constraint-cholesky", "a constraint model could not be factorised; going by expected improvement alone");
        return false;
    }

    // The acquisition: log EI below `best` (standardised; none: left out), plus the log
    // probability of feasibility when there are constraint models.
    [[nodiscard]] std::optional<std::vector<double>> maximise_acquisition(TrialId id, const detail::GaussianProcess& gp,
                                                                          std::optional<double> best,
                                                                          const std::vector<std::size_t>& observed,
                                                                          const Eigen::MatrixXd& pending,
                                                                          FeasibilityModel* feasibility) {
        const auto d = static_cast<Eigen::Index>(dims_);
        const std::size_t parents = std::min(local_parents, observed.size());
        const std::size_t local = parents == 0 ? 0 : options_.candidates / 8;
        const auto m = static_cast<Eigen::Index>(options_.candidates + local);
        Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> c(m, d);

        // Quasi-random candidates: a fresh block of the sequence for every trial.
        const std::uint64_t base = static_cast<std::uint64_t>(id) * options_.candidates;
        for (std::size_t i = 0; i < options_.candidates; ++i) {
            double* row = c.row(static_cast<Eigen::Index>(i)).data();
            for (std::size_t j = 0; j < dims_; ++j)
                row[j] = candidate_sequence_.at(static_cast<std::uint32_t>(base + i), j);
            round(row);
        }
        // Local candidates around the best results, at several scales, some along one coordinate.
        if (local > 0) {
            std::vector<std::size_t> best_trials = observed;
            // feasible results first (all are, without constraint models), then by loss
            std::partial_sort(best_trials.begin(), best_trials.begin() + static_cast<std::ptrdiff_t>(parents),
                              best_trials.end(), [&](std::size_t a, std::size_t b) {
                                  const bool fa = points_[a]->feasible(), fb = points_[b]->feasible();
                                  const double la = points_[a]->loss, lb = points_[b]->loss;
                                  return fa > fb || (fa == fb && (la < lb || (la == lb && a < b)));
                              });
            detail::SplitMix rng(detail::hash3(seed_, stream_local, id));
            static constexpr double scales[] = {0.01, 0.03, 0.1, 0.3};
            for (std::size_t i = 0; i < local; ++i) {
                double* row = c.row(static_cast<Eigen::Index>(options_.candidates + i)).data();
                const auto& parent = points_[best_trials[i % parents]]->u;
                const double scale = scales[(i / parents) % 4];
                const bool one_coordinate = (i / parents / 4) % 2 == 1;
                const auto only = static_cast<std::size_t>(rng.uniform() * static_cast<double>(dims_));
                for (std::size_t j = 0; j < dims_; ++j) {
                    const bool moves = !one_coordinate || j == only;
                    if (specs_[j].kind == ParameterKind::Categorical) {
                        // no neighbouring values: switch to a random one, more often at larger scales
                        const double switch_probability = std::min(1.0, (one_coordinate ? 3.0 : 1.0) * scale * 2.0);
                        row[j] = moves && rng.uniform() < switch_probability ? rng.uniform() : parent[j];
                        continue;
                    }
                    double z = gaussian(rng);
                    row[j] = parent[j] + (moves ? (one_coordinate ? 3.0 : 1.0) * scale * z : 0.0);
                }
                round(row);
            }
        }

        std::vector<const double*> candidate_rows;
        for (Eigen::Index i = 0; i < m; ++i) candidate_rows.push_back(c.row(i).data());
        const Eigen::MatrixXd features = feature_rows(candidate_rows);
        Eigen::MatrixXd cross = gp.cross_kernel(features);
        Eigen::VectorXd mean = gp.mean_from(cross);
        Eigen::VectorXd bound = gp.variance_bound_from(cross);
        const Eigen::VectorXd feasible_bound =
            feasibility ? feasibility->upper_bounds(features) : Eigen::VectorXd::Zero(m);
        auto log_ei = [&](Eigen::Index i, double var) {
            return best ? detail::log_expected_improvement(mean[i], sd_of(var), *best) : 0.0;
        };
        const double repeat_level = gp.signal_variance() * (1.0 - 1e-9);
        const double radius2 = gp_pending_radius * gp_pending_radius;
        auto excluded = [&](const double* row) {
            for (Eigen::Index p = 0; p < pending.rows(); ++p) {
                double s = 0.0;
                for (Eigen::Index j = 0; j < d; ++j) s += (row[j] - pending(p, j)) * (row[j] - pending(p, j));
                if (s < radius2) return true;
            }
            return false;
        };

        constexpr double ninf = -std::numeric_limits<double>::infinity();
        std::vector<double> upper(static_cast<std::size_t>(m), ninf);
        std::vector<Eigen::Index> order;
        order.reserve(static_cast<std::size_t>(m));
        for (Eigen::Index i = 0; i < m; ++i) {
            if (cross.row(i).maxCoeff() >= repeat_level || excluded(c.row(i).data())) continue;
            upper[static_cast<std::size_t>(i)] = log_ei(i, bound[i]) + feasible_bound[i];
            order.push_back(i);
        }
        if (order.empty()) return std::nullopt;
        std::sort(order.begin(), order.end(), [&](Eigen::Index a, Eigen::Index b) {
            return upper[static_cast<std::size_t>(a)] > upper[static_cast<std::size_t>(b)] ||
                   (upper[static_cast<std::size_t>(a)] == upper[static_cast<std::size_t>(b)] && a < b);
        });

        // Exact log EI, block by block, while the bound of the next candidate can still make the top.
        std::vector<std::pair<double, Eigen::Index>> top;  // best first
        constexpr Eigen::Index block = 128;
        const std::size_t exact_limit = std::min(order.size(), std::max<std::size_t>(256, options_.candidates / 8));
        for (std::size_t start = 0; start < exact_limit;) {
            if (top.size() >= refine_starts && upper[static_cast<std::size_t>(order[start])] <= top.back().first) break;
            const std::size_t stop = std::min(exact_limit, start + static_cast<std::size_t>(block));
            Eigen::MatrixXd sub(static_cast<Eigen::Index>(stop - start), cross.cols());
            for (std::size_t k = start; k < stop; ++k) sub.row(static_cast<Eigen::Index>(k - start)) = cross.row(order[k]);
            Eigen::VectorXd var = gp.variance_from(sub);
            const std::vector<Eigen::Index> rows(order.begin() + static_cast<std::ptrdiff_t>(start),
                                                 order.begin() + static_cast<std::ptrdiff_t>(stop));
            const Eigen::VectorXd feasible =
                feasibility ? feasibility->exact(rows) : Eigen::VectorXd::Zero(static_cast<Eigen::Index>(rows.size()));
            for (std::size_t k = start; k < stop; ++k) {
                const auto r = static_cast<Eigen::Index>(k - start);
                top.emplace_back(log_ei(order[k], var[r]) + feasible[r], order[k]);
            }
            std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) {
                return a.first > b.first || (a.first == b.first && a.second < b.second);
            });
            if (top.size() > refine_starts) top.resize(refine_starts);
            start = stop;
        }

        std::vector<double> winner(c.row(top.front().second).data(), c.row(top.front().second).data() + dims_);
        double winner_value = top.front().first;
        if (!continuous_.empty()) {
            for (const auto& [value, i] : top) {
                std::vector<double> u(c.row(i).data(), c.row(i).data() + dims_);
                double refined = refine(gp, best, feasibility, u, value, excluded);
                if (refined > winner_value) {
                    winner_value = refined;
                    winner = u;
                }
            }
        }
        return winner;
    }

    [[nodiscard]] static double sd_of(double var) { return std::sqrt(std::max(var, 1e-16)); }

    [[nodiscard]] static double gaussian(detail::SplitMix& rng) {
        const double u1 = std::max(rng.uniform(), 1e-300);
        const double u2 = rng.uniform();
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.141592653589793 * u2);
    }

    // L-BFGS-B on the continuous coordinates of u (the others stay), maximising the acquisition
    // (as maximise_acquisition). Replaces u with the best admissible point evaluated and returns its
    // value (or `value` when none beat it).
    template <class Excluded>
    [[nodiscard]] double refine(const detail::GaussianProcess& gp, std::optional<double> best,
                                const FeasibilityModel* feasibility, std::vector<double>& u, double value,
                                const Excluded& excluded) const {
        const auto k = static_cast<Eigen::Index>(continuous_.size());
        struct Objective {
            const GPModel& self;
            const detail::GaussianProcess& gp;
            std::optional<double> best;
            const FeasibilityModel* feasibility;
            const Excluded& excluded;
            Eigen::VectorXd full;
            double best_value;
            Eigen::VectorXd best_point;
            Eigen::VectorXd features;
            double operator()(const Eigen::VectorXd& z, Eigen::VectorXd& grad) {
                for (Eigen::Index i = 0; i < z.size(); ++i) full[static_cast<Eigen::Index>(self.continuous_[static_cast<std::size_t>(i)])] = z[i];
                self.to_features(full.data(), features.data());
                double value = 0.0;
                Eigen::VectorXd g = Eigen::VectorXd::Zero(features.size());
                if (best) {
                    double mean = 0.0, var = 0.0;
                    Eigen::VectorXd dmean, dvar;
                    gp.predict_with_gradient(features, mean, var, dmean, dvar);
                    double sd = sd_of(var);
                    Eigen::VectorXd dsd = var > 1e-16 ? Eigen::VectorXd(dvar / (2.0 * sd)) : Eigen::VectorXd::Zero(dvar.size());
                    const double zz = (*best - mean) / sd;
                    const auto lh = detail::log_h(zz);
                    value = std::log(sd) + lh.log_h;
                    // d log EI = dsd / sd + ratio * dz,  dz = (-dmean - z dsd) / sd
                    g = dsd / sd + lh.ratio * ((-dmean - zz * dsd) / sd);
                }
                if (feasibility) {
                    Eigen::VectorXd gf;
                    value += feasibility->at(features, gf);
                    g += gf;
                }
                grad.resize(z.size());
                for (Eigen::Index i = 0; i < z.size(); ++i)
                    grad[i] = -g[static_cast<Eigen::Index>(self.feature_of_[self.continuous_[static_cast<std::size_t>(i)]])];
                if (!std::isfinite(value) || !grad.allFinite()) {
                    grad.setZero();
                    return 1e300;
                }
                if (value > best_value && !excluded(full.data())) {
                    best_value = value;
                    best_point = full;
                }
                return -value;
            }
        };
        Eigen::VectorXd full = Eigen::Map<const Eigen::VectorXd>(u.data(), static_cast<Eigen::Index>(u.size()));
        Objective objective{*this, gp, best, feasibility, excluded, full, value, Eigen::VectorXd(),
                            Eigen::VectorXd(static_cast<Eigen::Index>(features_))};
        Eigen::VectorXd z(k);
        for (Eigen::Index i = 0; i < k; ++i) z[i] = u[continuous_[static_cast<std::size_t>(i)]];
        LBFGSpp::LBFGSBParam<double> param;
        param.max_iterations = 15;
        param.epsilon = 1e-6;
        param.max_linesearch = 20;
        LBFGSpp::LBFGSBSolver<double> solver(param);
        double fx = 0.0;
        try {
            (void)solver.minimize(objective, z, fx, Eigen::VectorXd::Zero(k), Eigen::VectorXd::Ones(k));
        } catch (const std::exception&) {
            // a failed line search: the best point seen still counts
        }
        if (objective.best_point.size() == 0) return value;
        u.assign(objective.best_point.data(), objective.best_point.data() + objective.best_point.size());
        return objective.best_value;
    }

    BayesianOptions options_;
    SearchSpace space_;
    std::uint64_t seed_ = 0;
    std::size_t dims_ = 0;
    std::vector<ParameterSpec> specs_;
    std::vector<std::size_t> continuous_;  // coordinates refined by L-BFGS-B
    std::size_t initial_ = 0;
    detail::ScrambledSobol design_{0, 0};
    detail::ScrambledSobol candidate_sequence_{0, 0};
    std::uint64_t next_design_ = 0;
    std::size_t features_ = 0;               // model inputs: categorical parameters one-hot
    std::vector<std::size_t> feature_of_;    // tuned coordinate -> its first model input
    std::vector<TrialData> trials_;          // in the order sampled
    std::unordered_map<TrialId, std::size_t> position_;  // trial id -> its index in trials_
    std::vector<TrialData> earlier_;         // observe() / observe_pending()
    std::vector<std::vector<double>> seeded_;  // seed_initial_design(), encoded
    std::vector<const TrialData*> points_;   // earlier_ then trials_, rebuilt by suggest()
    std::vector<Note> notes_;
    std::string last_note_;
    std::optional<detail::GpHyperparameters> hyper_;
    struct OutputWarp {
        bool on = false;
        double lowest = 0.0;
        double offset = 1.0;
    } warp_;
    bool warned_warp_ = false;
    std::size_t last_fit_count_ = 0;
    std::size_t fits_ = 0;
    std::size_t objectives_ = 1;  // > 1 once a result carries several (Outcome::losses)
    // One per constraint once a result carries violations (Outcome::violations); empty before.
    std::vector<std::optional<detail::GpHyperparameters>> constraint_hyper_;
};

}  // namespace hypertune::detail
