// SPDX-License-Identifier: MIT
#pragma once
// The Gaussian-process sampler's data: what it knows of each configuration (GpPoint: its rounded
// unit-cube point, pending, observed or failed, its loss, objectives and constraint violations),
// where those come from (GpObservations: this run's trials, in the order sampled, and earlier
// evaluations, observe() and observe_pending()), and what one suggestion's model is fitted on
// (GpModelPoints: earlier evaluations then trials, split by state; select_model_points(): the cap
// on the model's results; heavy_tail_warp(): the output transformation of heavy-tailed losses;
// model_data(): feature rows and outputs).

#include <hypertune/detail/gp_encoding.hpp>
#include <hypertune/types.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hypertune::detail {

enum class GpPointState { Pending, Observed, Failed };

// A configuration the model knows of: a trial, or an evaluation made elsewhere.
struct GpPoint {
    std::vector<double> u;  // encode(decode(...)): rounded
    GpPointState state;
    double loss;
    std::vector<double> losses{};  // several objectives: each one's; `loss` is then a scalarisation
    std::vector<double> violations{};  // each constraint's (<= 0 when met); empty: not modelled
    std::size_t region = 0;  // the trust region it was sampled or observed in (its restarts before)
    // False for an earlier run's result whose constraints could not be judged (it did not record a
    // constrained metric): its loss informs the model, but it is no feasible incumbent, parent or
    // trust-region centre, or the search would settle where the constraints may well be broken.
    bool judged = true;

    // Feasible as far as the model knows: judged, and no modelled violation above 0.
    [[nodiscard]] bool feasible() const {
        return judged && std::all_of(violations.begin(), violations.end(), [](double v) { return v <= 0.0; });
    }
};

// (index into GpModelPoints::points, the loss the model sees there)
using GpResults = std::vector<std::pair<std::size_t, double>>;

// One suggestion's view of the data: earlier evaluations first, then the trials, so that index
// order is recency for select_model_points(); and the indices of each state.
struct GpModelPoints {
    std::vector<const GpPoint*> points;
    std::vector<std::size_t> observed, failed, pending;

    void clear() {
        points.clear();
        observed.clear();
        failed.clear();
        pending.clear();
    }
    [[nodiscard]] const GpPoint& operator[](std::size_t i) const { return *points[i]; }
};

// This run's trials (by id) and the evaluations made outside them.
class GpObservations {
public:
    void clear() {
        trials_.clear();
        position_.clear();
        earlier_.clear();
    }

    /// Trials sampled so far.
    [[nodiscard]] std::size_t trial_count() const noexcept { return trials_.size(); }
    /// A new trial at (rounded) point u, pending until its result.
    void add_trial(TrialId id, std::vector<double> u, std::size_t region = 0) {
        position_[id] = trials_.size();
        trials_.push_back({std::move(u), GpPointState::Pending, std::numeric_limits<double>::quiet_NaN(), {}, {}, region});
    }
    /// The trial `id`, or nullptr when it is not one of this sampler's.
    [[nodiscard]] GpPoint* trial(TrialId id) {
        auto at = position_.find(id);
        return at == position_.end() ? nullptr : &trials_[at->second];
    }
    /// The trials in the order sampled.
    [[nodiscard]] std::vector<GpPoint>& trials() noexcept { return trials_; }
    [[nodiscard]] const std::vector<GpPoint>& trials() const noexcept { return trials_; }

    /// An evaluation made elsewhere (observe()), or one under way there (observe_pending()).
    void add_earlier(GpPoint point) { earlier_.push_back(std::move(point)); }
    [[nodiscard]] const std::vector<GpPoint>& earlier() const noexcept { return earlier_; }
    /// Earlier evaluations that finished (they count towards the initial design).
    [[nodiscard]] std::size_t evaluated_earlier() const {
        return static_cast<std::size_t>(std::count_if(earlier_.begin(), earlier_.end(),
                                                      [](const GpPoint& t) { return t.state != GpPointState::Pending; }));
    }

    /// Earlier evaluations then trials (index order is recency), split by state; those of trust
    /// regions before `region` are left out.
    void gather(GpModelPoints& out, std::size_t region = 0) const {
        out.clear();
        for (const GpPoint& t : earlier_)
            if (t.region >= region) out.points.push_back(&t);
        for (const GpPoint& t : trials_)
            if (t.region >= region) out.points.push_back(&t);
        for (std::size_t i = 0; i < out.points.size(); ++i) {
            switch (out.points[i]->state) {
                case GpPointState::Observed: out.observed.push_back(i); break;
                case GpPointState::Failed: out.failed.push_back(i); break;
                case GpPointState::Pending: out.pending.push_back(i); break;
            }
        }
    }

private:
    std::vector<GpPoint> trials_;                        // in the order sampled
    std::unordered_map<TrialId, std::size_t> position_;  // trial id -> its index in trials_
    std::vector<GpPoint> earlier_;                       // observe() / observe_pending()
};

// The results the model uses: all when they fit, else the best half and the most recent.
[[nodiscard]] inline GpResults select_model_points(GpResults results, std::size_t cap) {
    if (results.size() <= cap) return results;
    std::sort(results.begin(), results.end(), [](const auto& a, const auto& b) {
        return a.second < b.second || (a.second == b.second && a.first < b.first);
    });
    const std::size_t best = cap / 2;
    GpResults out(results.begin(), results.begin() + static_cast<std::ptrdiff_t>(best));
    std::sort(results.begin() + static_cast<std::ptrdiff_t>(best), results.end(),
              [](const auto& a, const auto& b) { return a.first > b.first; });
    out.insert(out.end(), results.begin() + static_cast<std::ptrdiff_t>(best),
               results.begin() + static_cast<std::ptrdiff_t>(cap));
    return out;
}

// The model's outputs are log(loss - lowest + offset) when on.
struct OutputWarp {
    static constexpr double heavy_tail_ratio = 10.0;  // (worst - best) / (median - best) that warps
    bool on = false;
    double lowest = 0.0;
    double offset = 1.0;
};

// Losses whose worst lies orders of magnitude above their median (a heavy right tail, as in
// Rosenbrock-like valleys) dominate a Gaussian process's fit. Then the model sees
// log(loss - best + s), s = median - best: about linear near the best, logarithmic in the
// tail. The order of the losses is kept, so expected improvement stays valid. Decided on all
// the model's results, so the hyperparameter fit on a subset sees the same transformation.
[[nodiscard]] inline OutputWarp heavy_tail_warp(const GpResults& results) {
    std::vector<double> sorted;
    for (const auto& r : results) sorted.push_back(r.second);
    std::sort(sorted.begin(), sorted.end());
    if (sorted.size() < 3) return {};
    const double spread = sorted[sorted.size() / 2] - sorted.front();
    if (!(spread > 0.0) || sorted.back() - sorted.front() < OutputWarp::heavy_tail_ratio * spread) return {};
    return {true, sorted.front(), spread};
}

// The model's data: the chosen results (failed trials at the worst loss) as feature rows and
// outputs, warped.
[[nodiscard]] inline std::pair<Eigen::MatrixXd, Eigen::VectorXd> model_data(const GpModelPoints& points,
                                                                           const GpResults& chosen,
                                                                           const GpEncoding& encoding,
                                                                           const OutputWarp& warp) {
    std::vector<const double*> rows;
    Eigen::VectorXd y(static_cast<Eigen::Index>(chosen.size()));
    for (std::size_t r = 0; r < chosen.size(); ++r) {
        rows.push_back(points[chosen[r].first].u.data());
        y[static_cast<Eigen::Index>(r)] = chosen[r].second;
    }
    if (warp.on) y = (y.array() - warp.lowest + warp.offset).log().matrix();
    return {encoding.feature_rows(rows), y};
}

}  // namespace hypertune::detail
