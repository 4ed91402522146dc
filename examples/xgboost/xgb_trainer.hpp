// SPDX-License-Identifier: MIT
#pragma once
// XGBoost trainer for the hypertune example: RAII wrappers over the XGBoost C API and a trainer
// that boosts in blocks of rounds, reporting the validation AUC after each block so that a
// multi-fidelity strategy (Hyperband, ASHA) can compare trials at equal budget and stop them early.
//
// Resource semantic. A trial's budget is counted in resource units from 1 to max_resource (30).
// `num_round` is a hyperparameter: the number of rounds a trial trains at full budget. At budget b
// a run has trained rounds_at(b) = ceil(b * num_round / max_resource) rounds, so one unit is
// 1/max_resource of the configured training: blocks of 3-4 rounds for num_round 100, 6-7 for 200.
// The full budget trains exactly num_round rounds, and every block has at least one round as long
// as num_round >= max_resource. Budgets are totals, not increments: advance_to(9) on a run that has
// done 3 units trains units 4..9 and reports blocks 4, 5, ..., 9.
//
// Threads. XgbTrainer is immutable and may be shared by concurrent trials. Each XgbRun owns its
// own pair of DMatrix: XGBoost builds per-DMatrix caches (the hist gradient index) lazily and
// without a lock, so two boosters training at once on one DMatrix would race. The copy costs
// under 10 ms per run. A run may move between threads but is used by one thread at a time.
//
// AUC. The validation AUC is computed here from the booster's cached predictions rather than with
// XGBoosterEvalOneIter: XGBoost 1.7 sorts predictions for its AUC with a GNU parallel-mode sort
// that uses omp_get_max_threads() threads whatever the booster's nthread, so each evaluation cost
// ~35 ms instead of ~0.2 ms and oversubscribed the cores when trials ran in parallel. The value is
// identical (exact ROC AUC, ties counted one half).
//
// Checkpoints. XgbRun::checkpoint() is the model in XGBoost's UBJSON format (stable across XGBoost
// versions) tagged with the budget done and the hyperparameters, so resuming with other
// hyperparameters fails loudly. Without column sampling a resumed run is bit-identical to an
// uninterrupted one; with colsample < 1 XGBoost's column sampler restarts its random stream on
// resume, so the curve differs slightly (by up to ~0.002 AUC), still deterministically.

#include <xgboost/c_api.h>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fashion_mnist.hpp"

namespace xgb {

/// Throws std::runtime_error with XGBoost's own message when a C API call fails.
inline void check(int rc, const char* call) {
    if (rc != 0) throw std::runtime_error(std::string("xgboost: ") + call + " failed: " + XGBGetLastError());
}

namespace detail {

// Shortest text that reads back to the same double; std::to_string would print 1e-7 as "0.000000".
inline std::string format_number(double v) {
    char buf[32];
    const auto res = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, res.ptr);
}

inline std::optional<int> parse_int(std::string_view s) {
    int v = 0;
    const auto res = std::from_chars(s.data(), s.data() + s.size(), v);
    if (res.ec != std::errc{} || res.ptr != s.data() + s.size()) return std::nullopt;
    return v;
}

}  // namespace detail

/// Owning handle of a DMatrix (dense features + labels). Move-only.
class DMatrix {
public:
    /// Copies a row-major rows x cols matrix. NaN marks missing values: 0 is a real pixel value.
    DMatrix(std::span<const float> features, std::span<const float> labels, std::size_t rows, std::size_t cols) {
        if (features.size() != rows * cols || labels.size() != rows) {
            throw std::invalid_argument("xgb::DMatrix: " + std::to_string(features.size()) + " features and " +
                                        std::to_string(labels.size()) + " labels do not match " +
                                        std::to_string(rows) + " rows x " + std::to_string(cols) + " columns");
        }
        check(XGDMatrixCreateFromMat(features.data(), rows, cols, std::numeric_limits<float>::quiet_NaN(),
                                     &handle_),
              "XGDMatrixCreateFromMat");
        DMatrix guard{handle_};  // frees the handle if setting the labels throws
        check(XGDMatrixSetFloatInfo(handle_, "label", labels.data(), rows), "XGDMatrixSetFloatInfo(label)");
        guard.handle_ = nullptr;
    }
    explicit DMatrix(const fashion_mnist::Dataset& d) : DMatrix(d.features, d.labels, d.rows, d.cols) {}

    DMatrix(DMatrix&& o) noexcept : handle_{std::exchange(o.handle_, nullptr)} {}
    DMatrix& operator=(DMatrix&& o) noexcept {
        std::swap(handle_, o.handle_);
        return *this;
    }
    DMatrix(const DMatrix&) = delete;
    DMatrix& operator=(const DMatrix&) = delete;
    // Destructors must not throw, and a failed free leaves nothing to recover: no check here.
    ~DMatrix() {
        if (handle_ != nullptr) XGDMatrixFree(handle_);
    }

    [[nodiscard]] DMatrixHandle get() const noexcept { return handle_; }

private:
    explicit DMatrix(DMatrixHandle h) noexcept : handle_{h} {}
    DMatrixHandle handle_ = nullptr;
};

/// Owning handle of a Booster. Move-only; one thread at a time.
class Booster {
public:
    /// `cache` lists the matrices the booster trains or predicts on: XGBoost caches their
    /// predictions, so predicting after every block only evaluates the new trees.
    explicit Booster(std::span<const DMatrixHandle> cache) {
        check(XGBoosterCreate(cache.data(), cache.size(), &handle_), "XGBoosterCreate");
    }
    Booster(Booster&& o) noexcept : handle_{std::exchange(o.handle_, nullptr)} {}
    Booster& operator=(Booster&& o) noexcept {
        std::swap(handle_, o.handle_);
        return *this;
    }
    Booster(const Booster&) = delete;
    Booster& operator=(const Booster&) = delete;
    ~Booster() {
        if (handle_ != nullptr) XGBoosterFree(handle_);
    }

    [[nodiscard]] BoosterHandle get() const noexcept { return handle_; }

    /// Sets a parameter. XGBoost validates lazily: a bad value throws at the next update.
    void set_param(const std::string& name, const std::string& value) {
        if (XGBoosterSetParam(handle_, name.c_str(), value.c_str()) != 0) {
            throw std::runtime_error("xgboost: XGBoosterSetParam(" + name + "=" + value +
                                     ") failed: " + XGBGetLastError());
        }
    }
    void set_param(const std::string& name, const char* value) { set_param(name, std::string(value)); }
    void set_param(const std::string& name, double value) { set_param(name, detail::format_number(value)); }
    void set_param(const std::string& name, int value) { set_param(name, std::to_string(value)); }

    /// String attributes are saved with the model, so they travel inside a checkpoint.
    void set_attr(const std::string& key, const std::string& value) {
        check(XGBoosterSetAttr(handle_, key.c_str(), value.c_str()), "XGBoosterSetAttr");
    }
    [[nodiscard]] std::optional<std::string> get_attr(const std::string& key) const {
        const char* out = nullptr;
        int found = 0;
        check(XGBoosterGetAttr(handle_, key.c_str(), &out, &found), "XGBoosterGetAttr");
        if (found == 0 || out == nullptr) return std::nullopt;
        return std::string(out);
    }

    /// Number of boosting rounds in the model (survives save and load).
    [[nodiscard]] int boosted_rounds() const {
        int n = 0;
        check(XGBoosterBoostedRounds(handle_, &n), "XGBoosterBoostedRounds");
        return n;
    }

    /// Adds one round; `iter` is its index (it also seeds the round when seed_per_iteration is on).
    void update_one_iter(int iter, const DMatrix& train) {
        check(XGBoosterUpdateOneIter(handle_, iter, train.get()), "XGBoosterUpdateOneIter");
    }

    /// XGBoost's own evaluation line, e.g. "[41]\tvalid-auc:0.912345" (read it with parse_metric).
    /// Slow for AUC in XGBoost 1.7 (see the top of this file); XgbRun uses predict() instead.
    [[nodiscard]] std::string eval_one_iter(int iter, const DMatrix& data, const char* name) {
        DMatrixHandle dmats[] = {data.get()};
        const char* names[] = {name};
        const char* out = nullptr;
        check(XGBoosterEvalOneIter(handle_, iter, dmats, names, 1, &out), "XGBoosterEvalOneIter");
        return out;  // copied: the buffer belongs to XGBoost and is reused by its next call
    }

    /// Predicted probabilities for every row of `data`.
    [[nodiscard]] std::vector<float> predict(const DMatrix& data) {
        const bst_ulong* shape = nullptr;
        bst_ulong dim = 0;
        const float* out = nullptr;
        check(XGBoosterPredictFromDMatrix(
                  handle_, data.get(),
                  R"({"type": 0, "training": false, "iteration_begin": 0, "iteration_end": 0, "strict_shape": false})",
                  &shape, &dim, &out),
              "XGBoosterPredictFromDMatrix");
        std::size_t n = 1;
        for (bst_ulong i = 0; i < dim; ++i) n *= shape[i];
        return {out, out + n};  // copied: the buffer belongs to XGBoost
    }

    /// The model (trees, objective, base score, attributes) as UBJSON, a format stable across
    /// XGBoost versions. Training parameters are not in it: set them again after load_model().
    [[nodiscard]] std::vector<char> save_model() const {
        bst_ulong len = 0;
        const char* data = nullptr;
        check(XGBoosterSaveModelToBuffer(handle_, R"({"format": "ubj"})", &len, &data),
              "XGBoosterSaveModelToBuffer");
        return {data, data + len};
    }
    void load_model(std::span<const char> bytes) {
        check(XGBoosterLoadModelFromBuffer(handle_, bytes.data(), bytes.size()), "XGBoosterLoadModelFromBuffer");
    }

    /// Memory snapshot: the model plus every parameter, about 2.5x larger than save_model().
    /// Only readable by the same XGBoost version.
    [[nodiscard]] std::vector<char> serialize() const {
        bst_ulong len = 0;
        const char* data = nullptr;
        check(XGBoosterSerializeToBuffer(handle_, &len, &data), "XGBoosterSerializeToBuffer");
        return {data, data + len};
    }
    void unserialize(std::span<const char> bytes) {
        check(XGBoosterUnserializeFromBuffer(handle_, bytes.data(), bytes.size()),
              "XGBoosterUnserializeFromBuffer");
    }

private:
    BoosterHandle handle_ = nullptr;
};

/// Reads `metric`'s value (e.g. "valid-auc") from an XGBoosterEvalOneIter line.
inline double parse_metric(std::string_view line, std::string_view metric) {
    const std::string key = std::string(metric) + ":";
    const auto at = line.find(key);
    double value = 0;
    if (at != std::string_view::npos) {
        const char* first = line.data() + at + key.size();
        if (std::from_chars(first, line.data() + line.size(), value).ec == std::errc{}) return value;
    }
    throw std::runtime_error("xgboost: no " + std::string(metric) + " in evaluation result \"" + std::string(line) +
                             "\"");
}

/// Exact ROC AUC of `scores` for binary `labels` (1 = positive): the probability that a random
/// positive scores above a random negative, ties counting one half (Mann-Whitney U, mid-ranks).
/// Same value as XGBoost's "auc" metric.
inline double binary_auc(std::span<const float> scores, std::span<const float> labels) {
    if (scores.size() != labels.size()) throw std::invalid_argument("xgb::binary_auc: sizes differ");
    std::vector<std::pair<float, bool>> s(scores.size());
    for (std::size_t i = 0; i < s.size(); ++i) s[i] = {scores[i], labels[i] > 0.5f};
    std::sort(s.begin(), s.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    double pos_rank_sum = 0;
    double n_pos = 0;
    for (std::size_t i = 0; i < s.size();) {
        std::size_t j = i;
        double pos_in_tie = 0;
        for (; j < s.size() && s[j].first == s[i].first; ++j) pos_in_tie += s[j].second ? 1 : 0;
        const double mid_rank = 0.5 * static_cast<double>(i + 1 + j);  // the tie holds ranks i+1 .. j
        pos_rank_sum += pos_in_tie * mid_rank;
        n_pos += pos_in_tie;
        i = j;
    }
    const double n_neg = static_cast<double>(s.size()) - n_pos;
    if (n_pos == 0 || n_neg == 0) throw std::invalid_argument("xgb::binary_auc: needs both classes");
    return (pos_rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg);
}

/// Hyperparameters of one training; the defaults are XGBoost's own (num_round 100).
struct XgbParams {
    double eta = 0.3;
    int max_depth = 6;
    double min_child_weight = 1.0;
    double alpha = 0.0;
    double colsample_bylevel = 1.0;
    double colsample_bytree = 1.0;
    int num_round = 100;  ///< rounds at full budget
    int max_bin = 256;    ///< histogram bins per feature; 64 makes deep trees ~3x cheaper
    int seed = 0;         ///< seeds column sampling
    int nthread = 1;      ///< threads of this booster: 1 when trials run in parallel, one per core
};

/// Every parameter that shapes the model, as "name=value" pairs (nthread is left out: it only
/// changes the speed). Used to tag checkpoints and handy in logs.
inline std::string to_string(const XgbParams& p) {
    using detail::format_number;
    return "eta=" + format_number(p.eta) + " max_depth=" + std::to_string(p.max_depth) +
           " min_child_weight=" + format_number(p.min_child_weight) + " alpha=" + format_number(p.alpha) +
           " colsample_bylevel=" + format_number(p.colsample_bylevel) +
           " colsample_bytree=" + format_number(p.colsample_bytree) + " num_round=" + std::to_string(p.num_round) +
           " max_bin=" + std::to_string(p.max_bin) + " seed=" + std::to_string(p.seed);
}

/// Called after every block with the block's index (= resource units done, 1-based) and the
/// validation AUC; returns false to stop training (the run stays resumable).
using BlockCallback = std::function<bool(int block, double auc)>;

/// Rounds done at a given budget: ceil(budget * num_round / max_resource).
constexpr int rounds_at(int budget, int num_round, int max_resource) {
    return static_cast<int>((std::int64_t{budget} * num_round + max_resource - 1) / max_resource);
}

/// One trial's training state: its own copy of the data, its booster and the budget done so far.
/// Independent of the trainer that made it (it may outlive it). Move-only.
class XgbRun {
public:
    /// Resource units trained so far (0 for a fresh run).
    [[nodiscard]] int budget_done() const noexcept { return budget_; }
    [[nodiscard]] int rounds_done() const noexcept { return rounds_at(budget_, params_.num_round, max_resource_); }
    /// Validation AUC after the last block; NaN before the first.
    [[nodiscard]] double auc() const noexcept { return auc_; }
    [[nodiscard]] const XgbParams& params() const noexcept { return params_; }
    [[nodiscard]] int max_resource() const noexcept { return max_resource_; }
    [[nodiscard]] Booster& booster() noexcept { return booster_; }

    /// Trains block by block until `budget` units are done in total (clamped to max_resource),
    /// computing the validation AUC and calling `on_block` after each block; stops early when it
    /// returns false. Does nothing if `budget` is already reached. Returns the last AUC.
    double advance_to(int budget, const BlockCallback& on_block = {}) {
        budget = std::min(budget, max_resource_);
        while (budget_ < budget) {
            const int target = rounds_at(budget_ + 1, params_.num_round, max_resource_);
            for (int iter = rounds_done(); iter < target; ++iter) booster_.update_one_iter(iter, train_);
            ++budget_;
            booster_.set_attr(budget_key, std::to_string(budget_));
            auc_ = evaluate();
            if (on_block && !on_block(budget_, auc_)) break;
        }
        return auc_;
    }

    /// The model as bytes (~150 KB for 45 trees of depth 6), for XgbTrainer::resume().
    [[nodiscard]] std::vector<char> checkpoint() const { return booster_.save_model(); }

private:
    friend class XgbTrainer;
    static constexpr const char* params_key = "xgb_trainer.params";
    static constexpr const char* budget_key = "xgb_trainer.budget";

    XgbRun(const fashion_mnist::Dataset& train, const fashion_mnist::Dataset& valid, const XgbParams& params,
           int max_resource)
        : params_{params}, max_resource_{max_resource}, valid_labels_{valid.labels}, train_{train}, valid_{valid},
          booster_{make_booster(train_, valid_)} {
        set_params();
        booster_.set_attr(params_key, tag());
        booster_.set_attr(budget_key, "0");
    }

    static Booster make_booster(const DMatrix& train, const DMatrix& valid) {
        const DMatrixHandle cache[] = {train.get(), valid.get()};
        return Booster{cache};
    }

    // The checkpoint is only valid for the same hyperparameters and the same resource scale.
    std::string tag() const { return to_string(params_) + " max_resource=" + std::to_string(max_resource_); }

    double evaluate() { return binary_auc(booster_.predict(valid_), valid_labels_); }

    void set_params() {
        booster_.set_param("objective", "binary:logistic");
        booster_.set_param("eval_metric", "auc");
        booster_.set_param("tree_method", "hist");
        booster_.set_param("eta", params_.eta);
        booster_.set_param("max_depth", params_.max_depth);
        booster_.set_param("min_child_weight", params_.min_child_weight);
        booster_.set_param("alpha", params_.alpha);
        booster_.set_param("colsample_bylevel", params_.colsample_bylevel);
        booster_.set_param("colsample_bytree", params_.colsample_bytree);
        booster_.set_param("max_bin", params_.max_bin);
        booster_.set_param("seed", params_.seed);
        booster_.set_param("nthread", params_.nthread);
        // XGBoost's random engine is thread-local and shared by every booster on a thread;
        // reseeding it from (seed, round) each round keeps a trial's draws independent of which
        // other trials ran before it on the same worker thread.
        booster_.set_param("seed_per_iteration", "1");
    }

    void restore(std::span<const char> checkpoint) {
        booster_.load_model(checkpoint);
        set_params();  // the model format carries no training parameters
        const auto saved_tag = booster_.get_attr(params_key);
        const auto saved_budget = booster_.get_attr(budget_key);
        const auto budget = saved_budget ? detail::parse_int(*saved_budget) : std::nullopt;
        if (!saved_tag || !budget) throw std::runtime_error("xgb: the checkpoint was not written by XgbRun");
        if (*saved_tag != tag()) {
            throw std::runtime_error("xgb: the checkpoint was trained with \"" + *saved_tag + "\", not \"" + tag() +
                                     "\"");
        }
        budget_ = *budget;
        if (budget_ < 0 || budget_ > max_resource_ || rounds_done() != booster_.boosted_rounds()) {
            throw std::runtime_error("xgb: corrupt checkpoint: budget " + *saved_budget + " but " +
                                     std::to_string(booster_.boosted_rounds()) + " rounds");
        }
        if (budget_ > 0) auc_ = evaluate();
    }

    XgbParams params_;
    int max_resource_;
    int budget_ = 0;
    double auc_ = std::numeric_limits<double>::quiet_NaN();
    std::vector<float> valid_labels_;
    // Declared before booster_ so that they are destroyed after it.
    DMatrix train_;
    DMatrix valid_;
    Booster booster_;
};

/// Holds the train and validation data and starts or resumes runs. Immutable after construction,
/// so one trainer can serve every concurrent trial.
class XgbTrainer {
public:
    /// `max_resource` is the budget that means "fully trained" (num_round rounds).
    XgbTrainer(fashion_mnist::Dataset train, fashion_mnist::Dataset valid, int max_resource = 30)
        : train_{std::move(train)}, valid_{std::move(valid)}, max_resource_{max_resource} {
        if (max_resource_ < 1) throw std::invalid_argument("xgb: max_resource must be >= 1");
        if (train_.rows == 0 || valid_.rows == 0 || train_.cols != valid_.cols) {
            throw std::invalid_argument("xgb: train and validation sets must be non-empty with the same columns");
        }
    }

    [[nodiscard]] int max_resource() const noexcept { return max_resource_; }
    [[nodiscard]] const fashion_mnist::Dataset& train_data() const noexcept { return train_; }
    [[nodiscard]] const fashion_mnist::Dataset& valid_data() const noexcept { return valid_; }

    /// A fresh run (budget 0).
    [[nodiscard]] XgbRun start(const XgbParams& params) const {
        check_params(params);
        return XgbRun{train_, valid_, params, max_resource_};
    }

    /// A run continued from XgbRun::checkpoint(). Throws if `params` (nthread aside) or
    /// max_resource differ from the checkpoint's.
    [[nodiscard]] XgbRun resume(const XgbParams& params, std::span<const char> checkpoint) const {
        check_params(params);
        XgbRun run{train_, valid_, params, max_resource_};
        run.restore(checkpoint);
        return run;
    }

    /// One training from scratch up to `budget` units; returns the final validation AUC.
    double train(const XgbParams& params, int budget, const BlockCallback& on_block = {}) const {
        return start(params).advance_to(budget, on_block);
    }

private:
    // XGBoost checks the other parameters itself; these two are ours.
    static void check_params(const XgbParams& p) {
        if (p.num_round < 1) throw std::invalid_argument("xgb: num_round must be >= 1");
        if (p.nthread < 1) throw std::invalid_argument("xgb: nthread must be >= 1");
    }

    fashion_mnist::Dataset train_;
    fashion_mnist::Dataset valid_;
    int max_resource_;
};

}  // namespace xgb
