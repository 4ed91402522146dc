// SPDX-License-Identifier: MIT
#pragma once
// A data-parallel trainer for the MPI example: softmax regression (10 classes) by minibatch SGD
// with momentum, on Eigen. Every rank of a communicator holds the full data and the same weights;
// each step, the global batch (per-worker batch x workers) is split over the ranks, every rank
// computes the gradient of its share, MPI_Allreduce sums them, and all ranks apply the same update.
// So the weights stay identical on every rank, as in synchronous data-parallel training.
//
// `workers` is the number of data-parallel workers being trained for; it may exceed the ranks of
// the communicator (by a whole multiple): each rank then does the share of workers / ranks workers.
// The updates are those of `workers` real workers (same global batch, same rows per step), so a
// tuning trial on 2 ranks trains exactly what the 4-worker job would, up to float summation order.

#include "../xgboost/fashion_mnist.hpp"

#include <Eigen/Dense>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace softmax_sgd {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
constexpr int classes = 10;

/// Features (pixels in [0, 1], plus a constant 1 for the bias) and labels 0..9.
struct Data {
    Matrix x;
    std::vector<int> y;
};

struct Splits {
    Data train;  ///< what SGD sees
    Data valid;  ///< what tuning judges trials by (from the training file, disjoint from train)
    Data test;   ///< reported once at the end (the t10k file, never seen by tuning)
};

namespace detail {

inline Data make(const fashion_mnist::Images& im, const std::vector<std::uint8_t>& labels,
                 const std::vector<std::size_t>& rows, bool pool) {
    const std::size_t f = pool ? 2 : 1;
    const std::size_t h = im.height / f;
    const std::size_t w = im.width / f;
    Data d;
    d.x.resize(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(h * w + 1));
    d.y.resize(rows.size());
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const std::uint8_t* img = im.pixels.data() + rows[r] * im.height * im.width;
        for (std::size_t yy = 0; yy < h; ++yy)
            for (std::size_t xx = 0; xx < w; ++xx) {
                const std::uint8_t* p = img + f * yy * im.width + f * xx;
                unsigned sum = pool ? unsigned{p[0]} + p[1] + p[im.width] + p[im.width + 1] : 4u * p[0];
                d.x(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(yy * w + xx)) =
                    static_cast<float>(sum) / (4.0f * 255.0f);
            }
        d.x(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(h * w)) = 1.0f;
        d.y[r] = labels[rows[r]];
    }
    return d;
}

inline std::vector<std::size_t> shuffled(std::size_t n, std::mt19937_64& rng) {
    std::vector<std::size_t> idx(n);
    std::iota(idx.begin(), idx.end(), std::size_t{0});
    fashion_mnist::detail::shuffle(idx, rng);
    return idx;
}

}  // namespace detail

/// All 10 classes: train_rows + valid_rows drawn from the training file, test_rows from t10k;
/// 784 pixels, or 196 when 2x2 pooled (plus a bias column). The same seed gives the same rows on
/// every rank.
inline Splits load(const std::filesystem::path& dir, std::size_t train_rows, std::size_t valid_rows,
                   std::size_t test_rows, bool pool, std::uint64_t seed) {
    std::mt19937_64 rng{seed};
    Splits s;
    {
        auto im = fashion_mnist::read_images(dir / "train-images-idx3-ubyte.gz");
        auto labels = fashion_mnist::read_labels(dir / "train-labels-idx1-ubyte.gz");
        auto idx = detail::shuffled(im.count, rng);
        s.train = detail::make(im, labels, {idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(train_rows)}, pool);
        s.valid = detail::make(im, labels, {idx.begin() + static_cast<std::ptrdiff_t>(train_rows),
                                            idx.begin() + static_cast<std::ptrdiff_t>(train_rows + valid_rows)}, pool);
    }
    auto im = fashion_mnist::read_images(dir / "t10k-images-idx3-ubyte.gz");
    auto labels = fashion_mnist::read_labels(dir / "t10k-labels-idx1-ubyte.gz");
    auto idx = detail::shuffled(im.count, rng);
    s.test = detail::make(im, labels, {idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(test_rows)}, pool);
    return s;
}

struct Hyper {
    double learning_rate = 0.05;
    int batch_per_worker = 32;
    double momentum = 0.0;
    int workers = 1;  ///< data-parallel workers: the global batch is batch_per_worker x workers
};

/// Fraction of rows whose arg-max class is the label.
inline double accuracy(const Matrix& w, const Data& d) {
    Matrix logits = d.x * w;
    std::size_t right = 0;
    for (Eigen::Index r = 0; r < logits.rows(); ++r) {
        Eigen::Index best = 0;
        logits.row(r).maxCoeff(&best);
        if (best == d.y[static_cast<std::size_t>(r)]) ++right;
    }
    return static_cast<double>(right) / static_cast<double>(d.y.size());
}

/// The state of a run on one rank: weights (identical on every rank) and the momentum buffer.
class Trainer {
public:
    Trainer(const Data& train, Hyper hyper, MPI_Comm comm, std::uint64_t seed)
        : train_(train), hyper_(hyper), comm_(comm), seed_(seed) {
        MPI_Comm_rank(comm_, &rank_);
        MPI_Comm_size(comm_, &ranks_);
        if (hyper_.workers % ranks_ != 0)
            throw std::invalid_argument("softmax_sgd: workers must be a multiple of the ranks of the communicator");
        w_ = Matrix::Zero(train_.x.cols(), classes);
        v_ = Matrix::Zero(train_.x.cols(), classes);
    }

    /// One pass over the training rows (the last partial global batch is dropped). Returns the
    /// seconds it took on this rank.
    double epoch() {
        auto t0 = std::chrono::steady_clock::now();
        // The same permutation on every rank: rank r takes its slice of each global batch.
        std::mt19937_64 rng{seed_ + 1000003 * static_cast<std::uint64_t>(++epochs_)};
        auto order = detail::shuffled(train_.y.size(), rng);
        const std::size_t global = static_cast<std::size_t>(hyper_.batch_per_worker) * hyper_.workers;
        const std::size_t share = global / static_cast<std::size_t>(ranks_);
        const std::size_t steps = train_.y.size() / global;
        Matrix xb(static_cast<Eigen::Index>(share), train_.x.cols());
        Matrix target(static_cast<Eigen::Index>(share), classes);
        Matrix grad(train_.x.cols(), classes);
        for (std::size_t s = 0; s < steps; ++s) {
            target.setZero();
            for (std::size_t i = 0; i < share; ++i) {
                std::size_t row = order[s * global + static_cast<std::size_t>(rank_) * share + i];
                xb.row(static_cast<Eigen::Index>(i)) = train_.x.row(static_cast<Eigen::Index>(row));
                target(static_cast<Eigen::Index>(i), train_.y[row]) = 1.0f;
            }
            Matrix p = xb * w_;
            // Softmax by row, shifted by the row's max for stability.
            for (Eigen::Index i = 0; i < p.rows(); ++i) {
                p.row(i).array() -= p.row(i).maxCoeff();
                p.row(i) = p.row(i).array().exp();
                p.row(i) /= p.row(i).sum();
            }
            grad.noalias() = xb.transpose() * (p - target);
            // The data-parallel step: sum the gradients of all ranks, average over the global batch.
            allreduce_sum(grad);
            grad /= static_cast<float>(global);
            v_ = static_cast<float>(hyper_.momentum) * v_ + grad;
            w_ -= static_cast<float>(hyper_.learning_rate) * v_;
        }
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }

    [[nodiscard]] const Matrix& weights() const noexcept { return w_; }
    /// Diverged (a too-large learning rate): the weights are no longer finite.
    [[nodiscard]] bool diverged() const { return !w_.allFinite(); }

private:
    // MPI_Allreduce, waiting with short sleeps: a rank blocked in MPI spins, and when ranks share
    // cores (more ranks than cores, or a busy machine) it takes the core from the ranks still
    // computing their gradient, which then arrive later still.
    void allreduce_sum(Matrix& m) const {
        MPI_Request request = MPI_REQUEST_NULL;
        MPI_Iallreduce(MPI_IN_PLACE, m.data(), static_cast<int>(m.size()), MPI_FLOAT, MPI_SUM, comm_, &request);
        for (int polls = 0;; ++polls) {
            int done = 0;
            MPI_Test(&request, &done, MPI_STATUS_IGNORE);
            if (done) return;
            if (polls > 50) std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
    }

    const Data& train_;
    Hyper hyper_;
    MPI_Comm comm_;
    std::uint64_t seed_;
    int rank_ = 0;
    int ranks_ = 1;
    int epochs_ = 0;
    Matrix w_;
    Matrix v_;
};

}  // namespace softmax_sgd
