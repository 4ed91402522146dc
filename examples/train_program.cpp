// SPDX-License-Identifier: MIT
// A small stand-alone trainer, the kind of program CommandObjective runs (see command_tuning.cpp):
// logistic regression trained by minibatch SGD on a fixed synthetic data set, in plain C++.
//
//   train_program --lr=0.05 --l2=1e-4 --batch-size=32 --epochs=27
//
// After each epoch it prints one line and flushes it, so that a tuner reading its output sees the
// learning curve as it happens:
//
//   epoch=3 train_loss=0.4521 validation_loss=0.4410 validation_accuracy=0.8120
//
// Bad arguments go to stderr with exit status 2.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct Options {
    double lr = 0.05;      // SGD step size
    double l2 = 1e-4;      // weight decay
    int batch_size = 32;
    int epochs = 10;
};

[[noreturn]] void usage(const std::string& why) {
    std::fprintf(stderr, "train_program: %s\nusage: train_program [--lr=X] [--l2=X] [--batch-size=N] [--epochs=N]\n",
                 why.c_str());
    std::exit(2);
}

double number(std::string_view arg, std::string_view value) {
    std::string text(value);
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(v)) usage("bad value in " + std::string(arg));
    return v;
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i];
        auto eq = arg.find('=');
        if (eq == std::string_view::npos) usage("unknown argument " + std::string(arg));
        auto key = arg.substr(0, eq);
        auto value = arg.substr(eq + 1);
        if (key == "--lr") o.lr = number(arg, value);
        else if (key == "--l2") o.l2 = number(arg, value);
        else if (key == "--batch-size") o.batch_size = static_cast<int>(number(arg, value));
        else if (key == "--epochs" || key == "--budget") o.epochs = static_cast<int>(number(arg, value));
        else usage("unknown argument " + std::string(arg));
    }
    if (!(o.lr > 0.0) || o.l2 < 0.0 || o.batch_size < 1 || o.epochs < 1) usage("out-of-range value");
    return o;
}

// A fixed, noisy, partly non-linear binary task: the same for every run of the program.
struct Data {
    static constexpr int features = 20;
    std::vector<double> x;  // row-major, rows x features
    std::vector<int> y;
    [[nodiscard]] std::size_t rows() const { return y.size(); }
    [[nodiscard]] const double* row(std::size_t i) const { return &x[i * features]; }
};

Data make_data(std::size_t rows, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    Data d;
    d.x.resize(rows * Data::features);
    d.y.resize(rows);
    for (std::size_t i = 0; i < rows; ++i) {
        double* r = &d.x[i * Data::features];
        double score = 0.0;
        for (int j = 0; j < Data::features; ++j) {
            r[j] = normal(rng) * (1.0 + 0.5 * j);  // badly scaled features: the step size matters
            score += (j % 3 == 0 ? 1.0 : -0.5) * r[j] / (1.0 + 0.5 * j);
        }
        score += 0.5 * r[0] * r[1] / 1.5;  // a little the linear model cannot fit
        d.y[i] = uniform(rng) < 1.0 / (1.0 + std::exp(-score)) ? 1 : 0;
    }
    return d;
}

double sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }

struct Model {
    std::vector<double> w = std::vector<double>(Data::features, 0.0);
    double b = 0.0;
    [[nodiscard]] double predict(const double* r) const {
        return sigmoid(std::inner_product(w.begin(), w.end(), r, b));
    }
};

// Mean log loss and accuracy of `m` on `d`.
std::pair<double, double> evaluate(const Model& m, const Data& d) {
    double loss = 0.0, correct = 0.0;
    for (std::size_t i = 0; i < d.rows(); ++i) {
        double p = std::clamp(m.predict(d.row(i)), 1e-12, 1.0 - 1e-12);
        loss -= d.y[i] ? std::log(p) : std::log(1.0 - p);
        correct += (p >= 0.5) == (d.y[i] == 1);
    }
    return {loss / static_cast<double>(d.rows()), correct / static_cast<double>(d.rows())};
}

void train_epoch(Model& m, const Data& d, const Options& o, std::vector<std::size_t>& order, std::mt19937& rng) {
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<double> grad(Data::features);
    for (std::size_t start = 0; start < order.size(); start += static_cast<std::size_t>(o.batch_size)) {
        std::size_t end = std::min(order.size(), start + static_cast<std::size_t>(o.batch_size));
        std::fill(grad.begin(), grad.end(), 0.0);
        double grad_b = 0.0;
        for (std::size_t k = start; k < end; ++k) {
            const double* r = d.row(order[k]);
            double err = m.predict(r) - d.y[order[k]];
            for (int j = 0; j < Data::features; ++j) grad[j] += err * r[j];
            grad_b += err;
        }
        double scale = o.lr / static_cast<double>(end - start);
        for (int j = 0; j < Data::features; ++j) m.w[j] -= scale * grad[j] + o.lr * o.l2 * m.w[j];
        m.b -= scale * grad_b;
    }
}

}  // namespace

int main(int argc, char** argv) {
    Options o = parse(argc, argv);
    Data train = make_data(4000, 1);
    Data validation = make_data(2000, 2);
    Model model;
    std::mt19937 rng(3);
    std::vector<std::size_t> order(train.rows());
    std::iota(order.begin(), order.end(), std::size_t{0});
    for (int epoch = 1; epoch <= o.epochs; ++epoch) {
        train_epoch(model, train, o, order, rng);
        auto [train_loss, train_acc] = evaluate(model, train);
        auto [val_loss, val_acc] = evaluate(model, validation);
        (void)train_acc;
        if (!std::isfinite(train_loss)) {
            std::fprintf(stderr, "epoch %d: training diverged (lr %g too large?)\n", epoch, o.lr);
            return 1;
        }
        std::printf("epoch=%d train_loss=%.4f validation_loss=%.4f validation_accuracy=%.4f\n", epoch, train_loss,
                    val_loss, val_acc);
        std::fflush(stdout);  // one line per epoch, as it happens
    }
    return 0;
}
