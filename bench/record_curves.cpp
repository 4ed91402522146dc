// SPDX-License-Identifier: MIT
// Records real learning curves for bench/harness_recorded.cpp, which replays them to compare the
// multi-fidelity schedulers on curves that no formula made. Four sets, 81 configurations each, 30
// resource units each, validation metric after every unit (higher is better), written to
// bench/data/ in the format described at the top of bench/recorded_curves.hpp:
//
// - xgboost_pullover_coat.csv: XGBoost (C API, hist, one thread per booster) on the Fashion-MNIST
//   binary task Pullover (label 2, negative) vs Coat (label 4, positive), 2x2-pooled pixels (196
//   features), 8000 training rows from the training file and 2000 validation rows from the test
//   file, each half and half. The configurations are RandomSampler's trials 0..80 (seed 1) in
//   bench/xgboost_space.hpp's 7-parameter space; one unit = one boosting round, 30 rounds, metric
//   validation AUC. num_round is drawn with the rest but not used: every configuration trains 30
//   rounds, so that one unit means the same for all.
// - xgboost_shirt_tshirt.csv: the same with Shirt (label 6, positive) vs T-shirt/top (label 0,
//   negative), the hardest pair of the dataset, and RandomSampler's trials 0..80 of seed 2: other
//   configurations on another task. Recorded after every default of the schedulers had been chosen
//   on the two sets above, and never used to choose one since: a held-out set.
// - xgboost_sneaker_ankleboot.csv: the same with Ankle boot (label 9, positive) vs Sneaker (label 7,
//   negative) and RandomSampler's trials 0..80 of seed 3: a second held-out set, recorded after
//   every scheduler setting had been chosen and the first held-out set reported.
// - softmax_fashion_mnist.csv: softmax regression (10 classes, 196 pooled features plus a bias,
//   weights from zero) trained by minibatch SGD in plain C++ on 10000 training rows, 2000 validation
//   rows; the configurations are RandomSampler's trials 0..80 (seed 1) of softmax_space()
//   (learning rate, batch size, L2); one unit = one epoch (rows reshuffled each epoch, seeded),
//   30 epochs, metric validation accuracy. A learning rate that diverges shows as accuracy near 0.1.
// - mlp_fashion_mnist.csv: a network with one hidden layer (ReLU, He-initialised weights seeded per
//   configuration) trained by minibatch SGD with momentum on the same rows; the configurations are
//   RandomSampler's trials 0..80 (seed 4) of mlp_space() (learning rate, batch size, hidden width,
//   momentum, L2); one unit = one epoch, 30 epochs, metric validation accuracy. A third held-out
//   set, on another trainer, recorded after the others had been reported.
// - softmax_fashion_mnist_seed5.csv and mlp_fashion_mnist_seed6.csv: the softmax and network
//   trainers again with RandomSampler's trials 0..80 of seeds 5 and 6: a fourth and fifth held-out
//   set, recorded after a change of ASHA's rule at a rung had been written down with the test it
//   had to pass on them (README, "Two more held-out sets").
// - softmax_fashion_mnist_seed7.csv and mlp_fashion_mnist_seed8.csv: the same with seeds 7 and 8, a
//   sixth and seventh held-out set, recorded after noise_tolerance = 1 had been measured on all the
//   others, with the test it had to pass on them written down first (README, "Noisy learning
//   curves"): asynchronous Hyperband's default with it reaches random search's best in at least
//   19 of 20 orders at P = 1, 4 and 16 on both, raw and as their running best, and at least as
//   often as without it.
//
// Every curve is deterministic (fixed data subsets, seeds, one thread per training). `seconds` is the
// CPU time of the thread that trained the configuration (its 30 units, evaluations included): unlike
// elapsed time it does not grow when other work shares the cores, but it still varies from machine to
// machine and a little from run to run. About six minutes on 2 cores for the nine sets.
//
//   record_curves [--out DIR] [--data DIR] [--threads N]
//                 [--only xgboost|xgboost-shirt|xgboost-sneaker|softmax|mlp|softmax-5|mlp-6|softmax-7|mlp-8]
//
// DIR defaults: --out bench/data of the source tree, --data the Fashion-MNIST directory found at
// configure time (Debian's dataset-fashion-mnist). Built only when XGBoost, zlib and the data are
// found; not a ctest test.
#include "recorded_curves.hpp"
#include "xgboost_space.hpp"

#include "xgboost/fashion_mnist.hpp"  // examples/xgboost/
#include "xgboost/xgb_trainer.hpp"

#include <hypertune/samplers/random_sampler.hpp>

#include <Eigen/Core>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <limits>
#include <mutex>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <time.h>  // clock_gettime (POSIX)
#include <vector>

namespace ht = hypertune;

namespace {

constexpr int units = 30;
constexpr std::size_t configurations = 81;
constexpr std::uint64_t config_seed = 1;  // RandomSampler's seed for the configurations (held-out set: 2)
constexpr std::uint64_t data_seed = 7;    // the rows picked
constexpr std::uint64_t mlp_config_seed = 4;  // the network's configurations (a held-out set)

struct Args {
    std::filesystem::path out = HYPERTUNE_BENCH_DATA_DIR;
    std::filesystem::path data = HYPERTUNE_FASHION_MNIST_DIR;
    std::size_t threads = 2;
    std::string only;
};

Args parse(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw std::invalid_argument(std::string(arg) + " needs a value");
            return argv[++i];
        };
        if (arg == "--out") a.out = value();
        else if (arg == "--data") a.data = value();
        else if (arg == "--threads") a.threads = std::stoul(value());
        else if (arg == "--only") a.only = value();
        else throw std::invalid_argument("unknown argument " + std::string(arg) +
                                         " (usage: record_curves [--out DIR] [--data DIR] [--threads N] "
                                         "[--only SET])");
    }
    if (a.threads == 0) throw std::invalid_argument("--threads must be >= 1");
    return a;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// CPU seconds used by the calling thread so far.
double thread_cpu_seconds() {
    timespec t{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) throw std::runtime_error("clock_gettime failed");
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// ---- data --------------------------------------------------------------------------------------

struct Split {
    fashion_mnist::Images images;
    std::vector<std::uint8_t> labels;
};

Split read_split(const std::filesystem::path& dir, std::string_view prefix) {
    Split s{fashion_mnist::read_images(dir / (std::string(prefix) + "-images-idx3-ubyte.gz")),
            fashion_mnist::read_labels(dir / (std::string(prefix) + "-labels-idx1-ubyte.gz"))};
    if (s.images.count != s.labels.size())
        throw std::runtime_error(fmt::format("fashion-mnist {}: {} images but {} labels", prefix, s.images.count,
                                             s.labels.size()));
    return s;
}

// `per_class[c]` rows of each class c (0 where the class is left out), picked at random and
// shuffled together; the label is the class, or `binary_label(class)` when given. Pixels are 2x2
// average-pooled and scaled to [0, 1].
fashion_mnist::Dataset pick(const Split& s, const std::vector<std::size_t>& per_class,
                            const std::function<float(std::uint8_t)>& label_of, std::mt19937_64& rng) {
    std::vector<std::size_t> rows;
    for (std::uint8_t c = 0; c < per_class.size(); ++c) {
        if (per_class[c] == 0) continue;
        std::vector<std::size_t> idx;
        for (std::size_t i = 0; i < s.labels.size(); ++i)
            if (s.labels[i] == c) idx.push_back(i);
        if (idx.size() < per_class[c])
            throw std::runtime_error(fmt::format("fashion-mnist: class {} has {} rows, {} asked", c, idx.size(),
                                                 per_class[c]));
        fashion_mnist::detail::shuffle(idx, rng);
        rows.insert(rows.end(), idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(per_class[c]));
    }
    fashion_mnist::detail::shuffle(rows, rng);

    const std::size_t width = s.images.width, height = s.images.height;
    fashion_mnist::Dataset d;
    d.rows = rows.size();
    d.cols = (height / 2) * (width / 2);
    d.features.resize(d.rows * d.cols);
    d.labels.resize(d.rows);
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const std::uint8_t* img = s.images.pixels.data() + rows[r] * height * width;
        float* out = d.features.data() + r * d.cols;
        d.labels[r] = label_of(s.labels[rows[r]]);
        for (std::size_t y = 0; y < height / 2; ++y)
            for (std::size_t x = 0; x < width / 2; ++x) {
                const std::uint8_t* p = img + 2 * y * width + 2 * x;
                const unsigned sum = unsigned{p[0]} + p[1] + p[width] + p[width + 1];
                out[y * (width / 2) + x] = static_cast<float>(sum) / (4.0f * 255.0f);
            }
    }
    return d;
}

// ---- running the configurations ------------------------------------------------------------------

// Runs train(i) for i = 0..n-1 on `threads` threads; prints progress.
void for_each_config(std::size_t n, std::size_t threads, const std::function<void(std::size_t)>& train) {
    std::atomic<std::size_t> next{0};
    std::atomic<std::size_t> done{0};
    std::mutex failure_mutex;
    std::exception_ptr failure;
    auto work = [&] {
        for (std::size_t i; (i = next.fetch_add(1)) < n;) {
            try {
                train(i);
            } catch (...) {
                const std::lock_guard lock(failure_mutex);
                if (!failure) failure = std::current_exception();
                next = n;
            }
            const std::size_t d = ++done;
            if (d % 10 == 0 || d == n) fmt::print(stderr, "  {}/{}\n", d, n);
        }
    };
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < std::min(threads, n); ++t) pool.emplace_back(work);
    for (auto& t : pool) t.join();
    if (failure) std::rethrow_exception(failure);
}

// The configurations of a set: RandomSampler's trials 0..80 of `seed`.
std::vector<ht::Config> draw(const ht::SearchSpace& space, std::uint64_t seed = config_seed) {
    std::vector<ht::Config> configs;
    for (std::uint64_t k = 0; k < configurations; ++k) configs.push_back(ht::RandomSampler::sample(space, seed, k));
    return configs;
}

// What the recorded set looks like: best and median final value, and how well early values rank.
void summarise(const ht::bench::RecordedCurves& c, double elapsed) {
    std::vector<double> final;
    for (const auto& v : c.values) final.push_back(v.back());
    std::vector<double> sorted = final;
    std::sort(sorted.begin(), sorted.end());
    const double total = std::accumulate(c.seconds.begin(), c.seconds.end(), 0.0);
    fmt::print("  {} configurations x {} units in {:.1f} s ({:.1f} CPU s of training); final {}: best {:.4f}, "
               "median {:.4f}, worst {:.4f}\n",
               c.size(), c.max_resource(), elapsed, total, c.metric, sorted.back(), sorted[sorted.size() / 2],
               sorted.front());
}

// ---- XGBoost ---------------------------------------------------------------------------------------

// A binary task of two Fashion-MNIST classes (`positive` labelled 1), 4000 training and 1000
// validation rows of each, and the configurations drawn with `seed`.
struct BinaryTask {
    const char* name;
    std::uint8_t negative, positive;
    std::uint64_t seed;
};
constexpr BinaryTask pullover_coat{"Pullover vs Coat", 2, 4, config_seed};
constexpr BinaryTask shirt_tshirt{"T-shirt/top vs Shirt", 0, 6, 2};
constexpr BinaryTask sneaker_ankleboot{"Sneaker vs Ankle boot", 7, 9, 3};

ht::bench::RecordedCurves record_xgboost(const Args& args, const BinaryTask& task) {
    std::mt19937_64 rng{data_seed};
    std::vector<std::size_t> train_rows(10, 0), valid_rows(10, 0);
    train_rows[task.negative] = train_rows[task.positive] = 4000;
    valid_rows[task.negative] = valid_rows[task.positive] = 1000;
    const auto label = [positive = task.positive](std::uint8_t c) { return c == positive ? 1.0f : 0.0f; };
    auto train = pick(read_split(args.data, "train"), train_rows, label, rng);
    auto valid = pick(read_split(args.data, "t10k"), valid_rows, label, rng);
    fmt::print("XGBoost, Fashion-MNIST {}: {} training rows, {} validation rows, {} features\n", task.name,
               train.rows, valid.rows, train.cols);
    const xgb::XgbTrainer trainer(std::move(train), std::move(valid), units);

    const ht::SearchSpace space = ht::bench::xgboost_space();
    ht::bench::RecordedCurves c{space, "auc", draw(space, task.seed), std::vector<double>(configurations),
                                std::vector<std::vector<double>>(configurations)};
    const auto t0 = std::chrono::steady_clock::now();
    for_each_config(configurations, args.threads, [&](std::size_t i) {
        const ht::Config& cfg = c.configs[i];
        const xgb::XgbParams p{.eta = cfg.get<double>("eta"),
                               .max_depth = cfg.get<int>("max_depth"),
                               .min_child_weight = cfg.get<double>("min_child_weight"),
                               .alpha = cfg.get<double>("alpha"),
                               .colsample_bylevel = cfg.get<double>("colsample_bylevel"),
                               .colsample_bytree = cfg.get<double>("colsample_bytree"),
                               .num_round = units,  // one unit = one round
                               .seed = 0,
                               .nthread = 1};
        std::vector<double> curve;
        const double start = thread_cpu_seconds();
        trainer.train(p, units, [&](int, double auc) {
            curve.push_back(auc);
            return true;
        });
        c.seconds[i] = thread_cpu_seconds() - start;
        c.values[i] = std::move(curve);
    });
    summarise(c, seconds_since(t0));
    return c;
}

// ---- softmax regression ----------------------------------------------------------------------------

struct SoftmaxParams {
    double learning_rate;
    std::size_t batch_size;
    double l2;
};

// The weights are stored by feature: w[j * classes + k] multiplies feature j in class k's logit, and
// w[cols * classes + k] is class k's bias; the loops over the classes are then contiguous.

// The logits of row `x` into z (classes values).
void logits(const std::vector<float>& w, const float* x, std::size_t cols, std::size_t classes, float* z) {
    const float* bias = w.data() + cols * classes;
    std::copy(bias, bias + classes, z);
    for (std::size_t j = 0; j < cols; ++j) {
        const float xj = x[j];
        const float* wj = w.data() + j * classes;
        for (std::size_t k = 0; k < classes; ++k) z[k] += wj[k] * xj;
    }
}

// Fraction of `data`'s rows whose largest logit is their label's (a non-finite logit never wins).
double accuracy(const std::vector<float>& w, const fashion_mnist::Dataset& data, std::size_t classes) {
    std::vector<float> z(classes);
    std::size_t right = 0;
    for (std::size_t r = 0; r < data.rows; ++r) {
        logits(w, data.features.data() + r * data.cols, data.cols, classes, z.data());
        std::size_t best = classes;
        for (std::size_t k = 0; k < classes; ++k)
            if (std::isfinite(z[k]) && (best == classes || z[k] > z[best])) best = k;
        right += static_cast<std::size_t>(best != classes && static_cast<float>(best) == data.labels[r]);
    }
    return static_cast<double>(right) / static_cast<double>(data.rows);
}

// Minibatch SGD on the mean cross-entropy plus l2/2 |W|^2 (no penalty on the biases), weights from
// zero; calls on_epoch(epoch, validation accuracy) after each epoch.
void train_softmax(const fashion_mnist::Dataset& train, const fashion_mnist::Dataset& valid, std::size_t classes,
                   const SoftmaxParams& p, int epochs, std::uint64_t seed,
                   const std::function<void(int, double)>& on_epoch) {
    const std::size_t cols = train.cols, weights = cols * classes;
    std::vector<float> w(weights + classes, 0.0f), grad(weights + classes), z(classes);
    std::vector<std::size_t> order(train.rows);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::mt19937_64 rng{seed};
    const auto lr = static_cast<float>(p.learning_rate);
    const auto shrink = static_cast<float>(1.0 - p.learning_rate * p.l2);
    for (int epoch = 1; epoch <= epochs; ++epoch) {
        fashion_mnist::detail::shuffle(order, rng);
        for (std::size_t b = 0; b < order.size(); b += p.batch_size) {
            const std::size_t end = std::min(order.size(), b + p.batch_size);
            std::fill(grad.begin(), grad.end(), 0.0f);
            for (std::size_t i = b; i < end; ++i) {
                const float* x = train.features.data() + order[i] * cols;
                logits(w, x, cols, classes, z.data());
                const float top = *std::max_element(z.begin(), z.end());
                float sum = 0.0f;
                for (auto& zk : z) sum += (zk = std::exp(zk - top));
                const auto y = static_cast<std::size_t>(train.labels[order[i]]);
                for (std::size_t k = 0; k < classes; ++k) z[k] = z[k] / sum - (k == y ? 1.0f : 0.0f);  // dloss/dz
                for (std::size_t j = 0; j < cols; ++j) {
                    const float xj = x[j];
                    float* gj = grad.data() + j * classes;
                    for (std::size_t k = 0; k < classes; ++k) gj[k] += z[k] * xj;
                }
                for (std::size_t k = 0; k < classes; ++k) grad[weights + k] += z[k];
            }
            const float step = lr / static_cast<float>(end - b);
            for (std::size_t j = 0; j < weights; ++j) w[j] = shrink * w[j] - step * grad[j];
            for (std::size_t k = weights; k < w.size(); ++k) w[k] -= step * grad[k];
        }
        on_epoch(epoch, accuracy(w, valid, classes));
    }
}

// The 10-class task of the softmax and network trainers: 1000 training and 200 validation rows of
// each class; every configuration of `space` (RandomSampler's trials 0..80 of `seed`) trained by
// train(train rows, validation rows, configuration, seed, on_epoch), which reports the validation
// accuracy after each epoch.
using EpochTrainer = std::function<void(const fashion_mnist::Dataset&, const fashion_mnist::Dataset&,
                                        const ht::Config&, std::uint64_t, const std::function<void(int, double)>&)>;
constexpr std::size_t class_count = 10;

ht::bench::RecordedCurves record_ten_classes(const Args& args, std::string_view title, const ht::SearchSpace& space,
                                             std::uint64_t seed, const EpochTrainer& train) {
    std::mt19937_64 rng{data_seed};
    const auto label = [](std::uint8_t c) { return static_cast<float>(c); };
    const auto rows = pick(read_split(args.data, "train"), std::vector<std::size_t>(class_count, 1000), label, rng);
    const auto valid = pick(read_split(args.data, "t10k"), std::vector<std::size_t>(class_count, 200), label, rng);
    fmt::print("{}, Fashion-MNIST 10 classes: {} training rows, {} validation rows, {} features\n", title, rows.rows,
               valid.rows, rows.cols);

    ht::bench::RecordedCurves c{space, "accuracy", draw(space, seed), std::vector<double>(configurations),
                                std::vector<std::vector<double>>(configurations)};
    const auto t0 = std::chrono::steady_clock::now();
    for_each_config(configurations, args.threads, [&](std::size_t i) {
        std::vector<double> curve;
        const double start = thread_cpu_seconds();
        train(rows, valid, c.configs[i], data_seed + i, [&](int, double acc) { curve.push_back(acc); });
        c.seconds[i] = thread_cpu_seconds() - start;
        c.values[i] = std::move(curve);
    });
    summarise(c, seconds_since(t0));
    return c;
}

ht::bench::RecordedCurves record_softmax(const Args& args, std::uint64_t config_seed_of_set = config_seed) {
    return record_ten_classes(args, "Softmax regression", ht::bench::softmax_space(), config_seed_of_set,
                              [](const auto& train, const auto& valid, const ht::Config& cfg, std::uint64_t seed,
                                 const auto& on_epoch) {
                                  const SoftmaxParams p{cfg.get<double>("learning_rate"),
                                                        cfg.get<std::size_t>("batch_size"), cfg.get<double>("l2")};
                                  train_softmax(train, valid, class_count, p, units, seed, on_epoch);
                              });
}

// ---- a one-hidden-layer network -------------------------------------------------------------------

struct MlpParams {
    double learning_rate;
    std::size_t batch_size;
    std::size_t hidden;
    double momentum;
    double l2;
};

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowVector = Eigen::Matrix<float, 1, Eigen::Dynamic>;

// The network's weights: input -> hidden (ReLU) -> classes.
struct Mlp {
    Matrix w1, w2;
    RowVector b1, b2;

    // The logits of `x`'s rows.
    [[nodiscard]] Matrix logits(const Eigen::Ref<const Matrix>& x) const {
        const Matrix h = ((x * w1).rowwise() + b1).cwiseMax(0.0f);
        return (h * w2).rowwise() + b2;
    }
};

// The rows of `data` seen as a matrix of features (no copy).
Eigen::Map<const Matrix> as_matrix(const fashion_mnist::Dataset& data) {
    return Eigen::Map<const Matrix>(data.features.data(), static_cast<Eigen::Index>(data.rows),
                                    static_cast<Eigen::Index>(data.cols));
}

// Fraction of rows whose largest logit is their label's (a row with a non-finite logit is wrong:
// a diverged network scores near chance or below).
double accuracy(const Matrix& logits, const std::vector<float>& labels) {
    std::size_t right = 0;
    for (Eigen::Index r = 0; r < logits.rows(); ++r) {
        if (!logits.row(r).allFinite()) continue;
        Eigen::Index best = 0;
        logits.row(r).maxCoeff(&best);
        right += static_cast<std::size_t>(static_cast<float>(best) == labels[static_cast<std::size_t>(r)]);
    }
    return static_cast<double>(right) / static_cast<double>(logits.rows());
}

// Minibatch SGD with momentum (heavy ball) on the mean cross-entropy plus l2/2 |W|^2 (no penalty on
// the biases); He-initialised weights drawn with `seed`, biases from zero. Calls on_epoch(epoch,
// validation accuracy) after each epoch.
void train_mlp(const fashion_mnist::Dataset& train, const fashion_mnist::Dataset& valid, std::size_t classes,
               const MlpParams& p, int epochs, std::uint64_t seed, const std::function<void(int, double)>& on_epoch) {
    const auto cols = static_cast<Eigen::Index>(train.cols), hidden = static_cast<Eigen::Index>(p.hidden),
               k = static_cast<Eigen::Index>(classes);
    std::mt19937_64 rng{seed};
    std::normal_distribution<float> normal(0.0f, 1.0f);
    Mlp net{Matrix(cols, hidden), Matrix(hidden, k), RowVector::Zero(hidden), RowVector::Zero(k)};
    const float s1 = std::sqrt(2.0f / static_cast<float>(cols)), s2 = std::sqrt(2.0f / static_cast<float>(hidden));
    for (Eigen::Index i = 0; i < net.w1.size(); ++i) net.w1.data()[i] = s1 * normal(rng);
    for (Eigen::Index i = 0; i < net.w2.size(); ++i) net.w2.data()[i] = s2 * normal(rng);
    Mlp velocity{Matrix::Zero(cols, hidden), Matrix::Zero(hidden, k), RowVector::Zero(hidden), RowVector::Zero(k)};

    const auto x_all = as_matrix(train), x_valid = as_matrix(valid);
    std::vector<std::size_t> order(train.rows);
    std::iota(order.begin(), order.end(), std::size_t{0});
    const auto lr = static_cast<float>(p.learning_rate), mu = static_cast<float>(p.momentum),
               l2 = static_cast<float>(p.l2);
    Matrix x, h, z;
    for (int epoch = 1; epoch <= epochs; ++epoch) {
        fashion_mnist::detail::shuffle(order, rng);
        for (std::size_t b = 0; b < order.size(); b += p.batch_size) {
            const auto n = static_cast<Eigen::Index>(std::min(order.size(), b + p.batch_size) - b);
            x.resize(n, cols);
            for (Eigen::Index r = 0; r < n; ++r) x.row(r) = x_all.row(static_cast<Eigen::Index>(order[b + static_cast<std::size_t>(r)]));
            h = ((x * net.w1).rowwise() + net.b1).cwiseMax(0.0f);
            z = (h * net.w2).rowwise() + net.b2;
            // dloss/dz: softmax minus the one-hot label, over the batch's size
            for (Eigen::Index r = 0; r < n; ++r) {
                auto row = z.row(r);
                row = (row.array() - row.maxCoeff()).exp().matrix();
                row /= row.sum();
                row[static_cast<Eigen::Index>(train.labels[order[b + static_cast<std::size_t>(r)]])] -= 1.0f;
            }
            z /= static_cast<float>(n);
            const Matrix dh = ((z * net.w2.transpose()).array() * (h.array() > 0.0f).cast<float>()).matrix();
            velocity.w2 = mu * velocity.w2 - lr * (h.transpose() * z + l2 * net.w2);
            velocity.b2 = mu * velocity.b2 - lr * z.colwise().sum();
            velocity.w1 = mu * velocity.w1 - lr * (x.transpose() * dh + l2 * net.w1);
            velocity.b1 = mu * velocity.b1 - lr * dh.colwise().sum();
            net.w2 += velocity.w2;
            net.b2 += velocity.b2;
            net.w1 += velocity.w1;
            net.b1 += velocity.b1;
        }
        on_epoch(epoch, accuracy(net.logits(x_valid), valid.labels));
    }
}

ht::bench::RecordedCurves record_mlp(const Args& args, std::uint64_t config_seed_of_set = mlp_config_seed) {
    return record_ten_classes(args, "One-hidden-layer network", ht::bench::mlp_space(), config_seed_of_set,
                              [](const auto& train, const auto& valid, const ht::Config& cfg, std::uint64_t seed,
                                 const auto& on_epoch) {
                                  const MlpParams p{cfg.get<double>("learning_rate"),
                                                    cfg.get<std::size_t>("batch_size"), cfg.get<std::size_t>("hidden"),
                                                    cfg.get<double>("momentum"), cfg.get<double>("l2")};
                                  train_mlp(train, valid, class_count, p, units, seed, on_epoch);
                              });
}

void save(const std::filesystem::path& file, const ht::bench::RecordedCurves& c) {
    ht::bench::write_curves(file, c);
    (void)ht::bench::read_curves(file, c.space, c.metric);  // reads back: the format is checked once here
    fmt::print("  wrote {} ({} bytes)\n", file.string(), std::filesystem::file_size(file));
}

}  // namespace

int main(int argc, char** argv) try {
    const Args args = parse(argc, argv);
    // Every set: its name for --only, its file, and how it is recorded.
    struct Set {
        std::string_view name;
        const char* file;
        std::function<ht::bench::RecordedCurves()> record;
    };
    const std::vector<Set> sets = {
        {"xgboost", "xgboost_pullover_coat.csv", [&] { return record_xgboost(args, pullover_coat); }},
        {"xgboost-shirt", "xgboost_shirt_tshirt.csv", [&] { return record_xgboost(args, shirt_tshirt); }},
        {"xgboost-sneaker", "xgboost_sneaker_ankleboot.csv", [&] { return record_xgboost(args, sneaker_ankleboot); }},
        {"softmax", "softmax_fashion_mnist.csv", [&] { return record_softmax(args); }},
        {"mlp", "mlp_fashion_mnist.csv", [&] { return record_mlp(args); }},
        {"softmax-5", "softmax_fashion_mnist_seed5.csv", [&] { return record_softmax(args, 5); }},
        {"mlp-6", "mlp_fashion_mnist_seed6.csv", [&] { return record_mlp(args, 6); }},
        {"softmax-7", "softmax_fashion_mnist_seed7.csv", [&] { return record_softmax(args, 7); }},
        {"mlp-8", "mlp_fashion_mnist_seed8.csv", [&] { return record_mlp(args, 8); }},
    };
    std::vector<std::string_view> names;
    for (const Set& set : sets) names.push_back(set.name);
    if (!args.only.empty() && std::find(names.begin(), names.end(), args.only) == names.end())
        throw std::invalid_argument(fmt::format("--only takes one of {}", fmt::join(names, ", ")));
    std::filesystem::create_directories(args.out);
    for (const Set& set : sets)
        if (args.only.empty() || args.only == set.name) save(args.out / set.file, set.record());
    return 0;
} catch (const std::exception& e) {
    fmt::print(stderr, "record_curves: {}\n", e.what());
    return 1;
}
