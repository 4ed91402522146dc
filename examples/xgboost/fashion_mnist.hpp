// SPDX-License-Identifier: MIT
#pragma once
// Fashion-MNIST loader for the XGBoost example: reads the gzipped IDX files with zlib and builds
// a small, balanced binary task from two classes that are hard to tell apart, T-shirt/top
// (label 0) vs Shirt (label 6): validation AUC is about 0.93, not 0.999 as for most class pairs.
// Loading both files takes about 0.2 s (decompressing the 47 MB of training images dominates).

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace fashion_mnist {

/// Where Debian's dataset-fashion-mnist package installs the files.
inline const std::filesystem::path default_dir = "/usr/share/datasets/fashion-mnist";

/// A dense, row-major feature matrix with one label per row, ready for XGDMatrixCreateFromMat.
struct Dataset {
    std::vector<float> features;  ///< rows * cols values in [0, 1]
    std::vector<float> labels;    ///< 1 = Shirt, 0 = T-shirt/top
    std::size_t rows = 0;
    std::size_t cols = 0;
};

/// The two splits of the task: train from the 60k training file, validation from the 10k test file.
struct TrainValid {
    Dataset train;
    Dataset valid;
};

/// Images of one IDX file, one byte per pixel, row-major.
struct Images {
    std::vector<std::uint8_t> pixels;
    std::size_t count = 0;
    std::size_t height = 0;
    std::size_t width = 0;
};

namespace detail {

struct GzCloser {
    void operator()(gzFile f) const noexcept { gzclose(f); }
};
using GzFile = std::unique_ptr<std::remove_pointer_t<gzFile>, GzCloser>;

[[noreturn]] inline void fail(const std::filesystem::path& file, const std::string& what) {
    throw std::runtime_error("fashion-mnist: " + file.string() + ": " + what);
}

inline GzFile open_gz(const std::filesystem::path& file) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) {
        fail(file, "file not found (install it with `apt-get install dataset-fashion-mnist`)");
    }
    GzFile f{gzopen(file.c_str(), "rb")};
    if (!f) fail(file, "cannot open");
    // The training images are 47 MB uncompressed; a larger buffer cuts the read calls.
    gzbuffer(f.get(), 1u << 20);
    return f;
}

// Reads exactly size bytes or throws; gzread takes an unsigned count, hence the chunks.
inline void read_exact(gzFile f, const std::filesystem::path& file, void* out, std::size_t size) {
    auto* dst = static_cast<unsigned char*>(out);
    while (size > 0) {
        const auto chunk = static_cast<unsigned>(std::min<std::size_t>(size, 1u << 30));
        const int got = gzread(f, dst, chunk);
        if (got < 0) {
            int errnum = 0;
            fail(file, std::string("read error: ") + gzerror(f, &errnum));
        }
        if (got == 0) fail(file, "truncated file");
        dst += got;
        size -= static_cast<std::size_t>(got);
    }
}

// IDX headers are big-endian 32-bit integers.
inline std::uint32_t read_be32(gzFile f, const std::filesystem::path& file) {
    std::array<unsigned char, 4> b{};
    read_exact(f, file, b.data(), b.size());
    return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) |
           std::uint32_t{b[3]};
}

inline void expect_end(gzFile f, const std::filesystem::path& file) {
    unsigned char extra = 0;
    if (gzread(f, &extra, 1) != 0) fail(file, "unexpected data after the last item");
}

// Uniform integer in [0, n) from the raw 64-bit stream. std::uniform_int_distribution and
// std::shuffle are implementation-defined; this keeps the subsample identical on every platform.
inline std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t n) {
    const std::uint64_t limit = std::mt19937_64::max() - std::mt19937_64::max() % n;
    std::uint64_t x = 0;
    do {
        x = rng();
    } while (x >= limit);
    return x % n;
}

template <class T>
void shuffle(std::vector<T>& v, std::mt19937_64& rng) {
    for (std::size_t i = v.size(); i > 1; --i) {
        std::swap(v[i - 1], v[uniform_below(rng, i)]);
    }
}

// Picks n indices of items with the given label, in a random order.
inline std::vector<std::size_t> sample_class(const std::vector<std::uint8_t>& labels, std::uint8_t label,
                                             std::size_t n, std::mt19937_64& rng,
                                             const std::filesystem::path& file) {
    std::vector<std::size_t> idx;
    for (std::size_t i = 0; i < labels.size(); ++i) {
        if (labels[i] == label) idx.push_back(i);
    }
    if (n > idx.size()) {
        fail(file, "asked for " + std::to_string(n) + " rows of class " + std::to_string(label) +
                       " but the file has only " + std::to_string(idx.size()));
    }
    shuffle(idx, rng);
    idx.resize(n);
    return idx;
}

// Builds a balanced two-class dataset: half the rows positive (Shirt), the rest negative, shuffled.
inline Dataset make_dataset(const Images& images, const std::vector<std::uint8_t>& labels, std::size_t rows,
                            bool pool, std::mt19937_64& rng, const std::filesystem::path& file) {
    constexpr std::uint8_t tshirt = 0;
    constexpr std::uint8_t shirt = 6;
    const std::size_t n_pos = rows / 2;
    auto pos = sample_class(labels, shirt, n_pos, rng, file);
    auto neg = sample_class(labels, tshirt, rows - n_pos, rng, file);

    std::vector<std::pair<std::size_t, float>> picked;
    picked.reserve(rows);
    for (auto i : pos) picked.emplace_back(i, 1.0f);
    for (auto i : neg) picked.emplace_back(i, 0.0f);
    // Mixed order, so that any prefix of the rows is still roughly balanced.
    shuffle(picked, rng);

    const std::size_t h = pool ? images.height / 2 : images.height;
    const std::size_t w = pool ? images.width / 2 : images.width;
    Dataset d;
    d.rows = rows;
    d.cols = h * w;
    d.features.resize(d.rows * d.cols);
    d.labels.resize(d.rows);
    const std::size_t image_size = images.height * images.width;
    for (std::size_t r = 0; r < rows; ++r) {
        const std::uint8_t* img = images.pixels.data() + picked[r].first * image_size;
        float* out = d.features.data() + r * d.cols;
        d.labels[r] = picked[r].second;
        if (!pool) {
            for (std::size_t p = 0; p < image_size; ++p) out[p] = static_cast<float>(img[p]) / 255.0f;
            continue;
        }
        // 2x2 average pooling: 4x fewer features, so histogram building is about 4x cheaper.
        for (std::size_t y = 0; y < h; ++y) {
            for (std::size_t x = 0; x < w; ++x) {
                const std::uint8_t* p = img + 2 * y * images.width + 2 * x;
                const unsigned sum = unsigned{p[0]} + p[1] + p[images.width] + p[images.width + 1];
                out[y * w + x] = static_cast<float>(sum) / (4.0f * 255.0f);
            }
        }
    }
    return d;
}

}  // namespace detail

/// Reads an IDX3 image file (magic 0x00000803), gzipped or not.
inline Images read_images(const std::filesystem::path& file) {
    auto f = detail::open_gz(file);
    const auto magic = detail::read_be32(f.get(), file);
    if (magic != 0x00000803) {
        detail::fail(file, "bad magic number " + std::to_string(magic) + ", expected 2051 (IDX3 images)");
    }
    Images im;
    im.count = detail::read_be32(f.get(), file);
    im.height = detail::read_be32(f.get(), file);
    im.width = detail::read_be32(f.get(), file);
    if (im.height != 28 || im.width != 28) {
        detail::fail(file, "images are " + std::to_string(im.height) + "x" + std::to_string(im.width) +
                               ", expected 28x28");
    }
    // Guards the allocation below against a corrupt header (the real files hold 60000 and 10000).
    if (im.count > 1'000'000) detail::fail(file, "implausible image count " + std::to_string(im.count));
    im.pixels.resize(im.count * im.height * im.width);
    detail::read_exact(f.get(), file, im.pixels.data(), im.pixels.size());
    detail::expect_end(f.get(), file);
    return im;
}

/// Reads an IDX1 label file (magic 0x00000801), gzipped or not; every label must be in 0..9.
inline std::vector<std::uint8_t> read_labels(const std::filesystem::path& file) {
    auto f = detail::open_gz(file);
    const auto magic = detail::read_be32(f.get(), file);
    if (magic != 0x00000801) {
        detail::fail(file, "bad magic number " + std::to_string(magic) + ", expected 2049 (IDX1 labels)");
    }
    const std::size_t count = detail::read_be32(f.get(), file);
    if (count > 1'000'000) detail::fail(file, "implausible label count " + std::to_string(count));
    std::vector<std::uint8_t> labels(count);
    detail::read_exact(f.get(), file, labels.data(), labels.size());
    detail::expect_end(f.get(), file);
    for (std::size_t i = 0; i < labels.size(); ++i) {
        if (labels[i] > 9) detail::fail(file, "label " + std::to_string(labels[i]) + " at item " + std::to_string(i));
    }
    return labels;
}

/// Builds the Shirt (1) vs T-shirt/top (0) task: train_rows from the training file and valid_rows
/// from the test file, each half Shirt and half T-shirt (the odd row, if any, is a T-shirt),
/// picked at random with a std::mt19937_64 seeded with `seed`. With `pool`, each image is
/// 2x2 average-pooled to 14x14 = 196 features instead of 784. Pixels are scaled to [0, 1].
/// Throws std::runtime_error naming the file when a file is missing or malformed, or when a
/// class has fewer rows than asked (6000 per class in train, 1000 in test).
inline TrainValid load_shirt_vs_tshirt(std::size_t train_rows, std::size_t valid_rows, bool pool,
                                       std::uint64_t seed, const std::filesystem::path& dir = default_dir) {
    std::mt19937_64 rng{seed};
    TrainValid out;
    {
        const auto image_file = dir / "train-images-idx3-ubyte.gz";
        const auto label_file = dir / "train-labels-idx1-ubyte.gz";
        const auto labels = read_labels(label_file);
        const auto images = read_images(image_file);
        if (images.count != labels.size()) {
            detail::fail(image_file, std::to_string(images.count) + " images but " + std::to_string(labels.size()) +
                                         " labels in " + label_file.string());
        }
        out.train = detail::make_dataset(images, labels, train_rows, pool, rng, label_file);
    }
    {
        const auto image_file = dir / "t10k-images-idx3-ubyte.gz";
        const auto label_file = dir / "t10k-labels-idx1-ubyte.gz";
        const auto labels = read_labels(label_file);
        const auto images = read_images(image_file);
        if (images.count != labels.size()) {
            detail::fail(image_file, std::to_string(images.count) + " images but " + std::to_string(labels.size()) +
                                         " labels in " + label_file.string());
        }
        out.valid = detail::make_dataset(images, labels, valid_rows, pool, rng, label_file);
    }
    return out;
}

/// Flips the labels of round(fraction * rows) rows picked at random (seeded), to simulate noisy
/// annotation. Meant for the training set only, so that validation still measures true quality.
/// With noisy labels XGBoost's defaults (eta 0.3, min_child_weight 1) overfit, and tuning gains
/// several AUC points instead of a few thousandths.
inline void add_label_noise(Dataset& d, double fraction, std::uint64_t seed) {
    if (!(fraction >= 0.0 && fraction <= 1.0)) {
        throw std::invalid_argument("fashion-mnist: label noise fraction must be in [0, 1]");
    }
    std::vector<std::size_t> rows(d.labels.size());
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
    const auto n = static_cast<std::size_t>(std::llround(fraction * static_cast<double>(rows.size())));
    std::mt19937_64 rng{seed};
    // Partial Fisher-Yates: the first n entries become a uniform sample without repetition.
    for (std::size_t i = 0; i < n; ++i) {
        std::swap(rows[i], rows[i + detail::uniform_below(rng, rows.size() - i)]);
        d.labels[rows[i]] = 1.0f - d.labels[rows[i]];
    }
}

}  // namespace fashion_mnist
