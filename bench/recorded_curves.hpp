// SPDX-License-Identifier: MIT
#pragma once
// Recorded learning curves (bench/data/*.csv, written by bench/record_curves.cpp) and what replays
// them in the simulator (bench/simulator.hpp): a Problem whose curves are the recorded ones and a
// Sampler that hands out the recorded configurations in a given order.
//
// The file format: CSV, one header row, then one row per configuration:
//   config,<parameter 1>,...,<parameter n>,seconds,<metric>_1,...,<metric>_R
// `config` numbers the rows 0, 1, ...; the parameters are the search space's, in its order (integers
// plainly, reals in their shortest exact form, so a configuration reads back bit for bit); `seconds`
// is the measured time of the whole training, R units and their evaluations (record_curves.cpp
// measures the training thread's CPU time); <metric>_r is the validation metric after unit r, higher
// is better.

#include "xgboost_space.hpp"

#include <hypertune/config.hpp>
#include <hypertune/detail/random.hpp>
#include <hypertune/sampler.hpp>
#include <hypertune/search_space.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hypertune::bench {

/// The softmax-regression trainer's space (record_curves.cpp): SGD's learning rate, minibatch size
/// and L2 penalty, each uniform in its logarithm.
inline SearchSpace softmax_space() {
    return SearchSpace{ContinuousParameter("learning_rate", 1e-3, 3.0, Scaling::Logarithmic),
                       IntegerParameter("batch_size", 8, 512, Scaling::Logarithmic),
                       ContinuousParameter("l2", 1e-6, 1e-1, Scaling::Logarithmic)};
}

/// The one-hidden-layer network's space (record_curves.cpp): SGD's learning rate, minibatch size
/// and momentum, the hidden layer's width and the L2 penalty.
inline SearchSpace mlp_space() {
    return SearchSpace{ContinuousParameter("learning_rate", 1e-3, 1.0, Scaling::Logarithmic),
                       IntegerParameter("batch_size", 16, 512, Scaling::Logarithmic),
                       IntegerParameter("hidden", 16, 256, Scaling::Logarithmic),
                       ContinuousParameter("momentum", 0.0, 0.95, Scaling::Linear),
                       ContinuousParameter("l2", 1e-6, 1e-2, Scaling::Logarithmic)};
}

/// One file's configurations and curves.
struct RecordedCurves {
    SearchSpace space;
    std::string metric;                       ///< e.g. "auc": the columns are metric_1..metric_R
    std::vector<Config> configs;              ///< row i's configuration
    std::vector<double> seconds;              ///< row i's measured training time, all R units
    std::vector<std::vector<double>> values;  ///< values[i][r - 1]: the metric after unit r

    [[nodiscard]] std::size_t size() const noexcept { return configs.size(); }
    [[nodiscard]] Resource max_resource() const noexcept {
        return values.empty() ? 0 : static_cast<Resource>(values.front().size());
    }
};

namespace csv {

[[noreturn]] inline void curves_error(const std::filesystem::path& file, std::size_t line, const std::string& what) {
    throw std::runtime_error(fmt::format("{}:{}: {}", file.string(), line, what));
}

inline std::vector<std::string_view> split_csv(std::string_view line) {
    std::vector<std::string_view> cells;
    for (;;) {
        const auto comma = line.find(',');
        cells.push_back(line.substr(0, comma));
        if (comma == std::string_view::npos) return cells;
        line.remove_prefix(comma + 1);
    }
}

template <class T>
std::optional<T> parse_number(std::string_view s) {
    T v{};
    const auto res = std::from_chars(s.data(), s.data() + s.size(), v);
    if (res.ec != std::errc{} || res.ptr != s.data() + s.size()) return std::nullopt;
    return v;
}

}  // namespace csv

/// Writes `curves` in the format described at the top of recorded_curves.hpp.
inline void write_curves(const std::filesystem::path& file, const RecordedCurves& curves) {
    std::ofstream out(file, std::ios::binary);
    if (!out) throw std::runtime_error(fmt::format("{}: cannot open for writing", file.string()));
    std::string line = "config";
    for (const auto& p : curves.space.parameters()) (line += ',') += p.name;
    line += ",seconds";
    for (Resource r = 1; r <= curves.max_resource(); ++r) line += fmt::format(",{}_{}", curves.metric, r);
    out << line << '\n';
    for (std::size_t i = 0; i < curves.size(); ++i) {
        line = fmt::format("{}", i);
        for (const auto& v : curves.configs[i].values()) (line += ',') += format_value(v);
        line += fmt::format(",{:.4f}", curves.seconds[i]);
        for (double x : curves.values[i]) line += fmt::format(",{:.6f}", x);
        out << line << '\n';
    }
    if (!out.flush()) throw std::runtime_error(fmt::format("{}: write failed", file.string()));
}

/// Reads a file written by write_curves(); its parameter columns must be `space`'s. Throws
/// std::runtime_error naming the file and line on anything malformed.
inline RecordedCurves read_curves(const std::filesystem::path& file, const SearchSpace& space,
                                  const std::string& metric) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error(fmt::format("{}: cannot open", file.string()));
    RecordedCurves c{space, metric, {}, {}, {}};
    const auto& params = space.parameters();
    std::string line;
    if (!std::getline(in, line)) csv::curves_error(file, 1, "empty file");
    const auto header = csv::split_csv(line);
    if (header.size() < params.size() + 3 || header[0] != "config" || header[params.size() + 1] != "seconds")
        csv::curves_error(file, 1, "bad header: expected config, the parameters, seconds, the values");
    for (std::size_t j = 0; j < params.size(); ++j)
        if (header[j + 1] != params[j].name)
            csv::curves_error(file, 1, fmt::format("column {} is '{}', expected '{}'", j + 2, header[j + 1],
                                                      params[j].name));
    const std::size_t units = header.size() - params.size() - 2;
    for (std::size_t r = 1; r <= units; ++r)
        if (header[params.size() + 1 + r] != fmt::format("{}_{}", metric, r))
            csv::curves_error(file, 1, fmt::format("expected column {}_{}", metric, r));

    for (std::size_t n = 2; std::getline(in, line); ++n) {
        if (line.empty()) continue;
        const auto cells = csv::split_csv(line);
        if (cells.size() != header.size())
            csv::curves_error(file, n, fmt::format("{} cells, expected {}", cells.size(), header.size()));
        if (csv::parse_number<std::size_t>(cells[0]) != c.size())
            csv::curves_error(file, n, fmt::format("config is '{}', expected {}", cells[0], c.size()));
        std::vector<Value> values;
        for (std::size_t j = 0; j < params.size(); ++j) {
            const auto cell = cells[j + 1];
            if (params[j].kind == ParameterKind::Integer) {
                const auto v = csv::parse_number<std::int64_t>(cell);
                if (!v) csv::curves_error(file, n, fmt::format("{} = '{}' is not an integer", params[j].name, cell));
                values.emplace_back(*v);
            } else if (params[j].kind == ParameterKind::Continuous) {
                const auto v = csv::parse_number<double>(cell);
                if (!v) csv::curves_error(file, n, fmt::format("{} = '{}' is not a number", params[j].name, cell));
                values.emplace_back(*v);
            } else {
                values.emplace_back(std::string(cell));
            }
        }
        try {
            c.configs.push_back(space.make(std::move(values)));
        } catch (const std::exception& e) {
            csv::curves_error(file, n, e.what());
        }
        const auto seconds = csv::parse_number<double>(cells[params.size() + 1]);
        if (!seconds || !(*seconds > 0.0)) csv::curves_error(file, n, "seconds must be a positive number");
        c.seconds.push_back(*seconds);
        std::vector<double> curve;
        for (std::size_t r = 1; r <= units; ++r) {
            const auto v = csv::parse_number<double>(cells[params.size() + 1 + r]);
            if (!v) csv::curves_error(file, n, fmt::format("{}_{} is not a number", metric, r));
            curve.push_back(*v);
        }
        c.values.push_back(std::move(curve));
    }
    if (c.size() == 0) csv::curves_error(file, 2, "no configurations");
    for (std::size_t i = 0; i < c.size(); ++i)
        for (std::size_t k = 0; k < i; ++k)
            if (c.configs[i] == c.configs[k])
                throw std::runtime_error(fmt::format("{}: configs {} and {} are the same", file.string(), k, i));
    return c;
}

/// One recorded curve as the simulator wants it: loss(r) = 1 - metric after unit r (schedulers
/// minimise), at a fixed time per unit.
struct RecordedCurve {
    const std::vector<double>* metric = nullptr;
    double unit_seconds = 1.0;

    [[nodiscard]] double loss(Resource r) const { return 1.0 - metric->at(static_cast<std::size_t>(r - 1)); }
};

/// A simulator Problem (see the top of simulator.hpp) replaying recorded curves: a configuration's
/// curve is its row's, and a unit takes the row's measured seconds / R.
class RecordedProblem {
public:
    explicit RecordedProblem(const RecordedCurves& curves) : curves_(curves) {}

    /// The row of `cfg`; throws std::out_of_range for a configuration that was not recorded.
    [[nodiscard]] std::size_t index_of(const Config& cfg) const {
        for (std::size_t i = 0; i < curves_.size(); ++i)
            if (curves_.configs[i] == cfg) return i;
        throw std::out_of_range(fmt::format("not a recorded configuration: {}", cfg));
    }

    [[nodiscard]] RecordedCurve curve(const Config& cfg) const {
        const std::size_t i = index_of(cfg);
        return RecordedCurve{&curves_.values[i], curves_.seconds[i] / static_cast<double>(curves_.max_resource())};
    }

private:
    const RecordedCurves& curves_;
};

/// Order `seed`: a permutation of 0..n-1 (Fisher-Yates on a splitmix64 stream; the same on every platform).
inline std::vector<std::size_t> permutation(std::size_t n, std::uint64_t seed) {
    std::vector<std::size_t> p(n);
    std::iota(p.begin(), p.end(), std::size_t{0});
    detail::SplitMix rng(detail::splitmix64(seed ^ 0x0bde'0bde'0bde'0bdeULL));
    for (std::size_t i = n; i > 1; --i) {
        const std::uint64_t limit = ~std::uint64_t{0} - ~std::uint64_t{0} % i;  // rejection: no modulo bias
        std::uint64_t x = 0;
        do x = rng();
        while (x >= limit);
        std::swap(p[i - 1], p[x % i]);
    }
    return p;
}

/// Hands out recorded configurations: new trial k gets configs[order[k]]; none past order.size().
class RecordedSampler final : public Sampler {
public:
    RecordedSampler(std::shared_ptr<const std::vector<Config>> configs, std::vector<std::size_t> order)
        : configs_(std::move(configs)), order_(std::move(order)) {}

    [[nodiscard]] std::string name() const override { return "Recorded"; }
    void start(const SearchSpace& /*space*/, const SamplerContext& /*ctx*/) override {}
    [[nodiscard]] std::optional<Config> sample(TrialId id) override {
        if (id >= order_.size()) return std::nullopt;
        return configs_->at(order_[static_cast<std::size_t>(id)]);
    }

private:
    std::shared_ptr<const std::vector<Config>> configs_;
    std::vector<std::size_t> order_;
};

}  // namespace hypertune::bench
