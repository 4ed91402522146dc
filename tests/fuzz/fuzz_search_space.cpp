// SPDX-License-Identifier: MIT
// Search-space validation from arbitrary numbers: the bytes choose parameters (every kind, value
// type and scaling; NaN, infinities, extremes, huge or duplicated category lists, clashing names).
// A parameter the library refuses must be refused with InvalidArgument; whatever it accepts must
// satisfy the invariants of space_invariants.hpp.
#include "fuzz_support.hpp"
#include "space_invariants.hpp"

#include <hypertune/parameter.hpp>
#include <hypertune/search_space.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace {

using namespace hypertune;
using fuzz::ByteReader;

constexpr std::size_t max_parameters = 24;
constexpr std::size_t max_categories = 3000;

template <class T>
T number(ByteReader& in) {
    using L = std::numeric_limits<T>;
    auto selector = in.byte();
    if constexpr (std::is_floating_point_v<T>) {
        const T specials[] = {T(0), T(1), T(-1), T(0.5), T(0.999), T(1000), T(1e-3), -T(0), L::quiet_NaN(),
                              L::infinity(), -L::infinity(), L::max(), L::lowest(), L::min(), L::denorm_min(),
                              L::epsilon(), T(1) - L::epsilon(), T(9007199254740992.0), T(1e300), T(-1e300)};
        if (selector < std::size(specials)) return specials[selector];
        if (selector < 128) return static_cast<T>(static_cast<std::int8_t>(in.byte()));  // small integers
    } else {
        const T specials[] = {T(0), T(1), T(2), T(10), T(1000), static_cast<T>(-1), L::max(), L::min(),
                              static_cast<T>(9007199254740992LL), static_cast<T>(9007199254740993LL),
                              static_cast<T>(-9007199254740992LL), static_cast<T>(-9007199254740993LL)};
        if (selector < std::size(specials)) return specials[selector];
        if (selector < 128) return static_cast<T>(static_cast<std::int8_t>(in.byte()));
    }
    return in.raw<T>();
}

Scaling scaling(ByteReader& in) {
    constexpr Scaling all[] = {Scaling::Auto, Scaling::Linear, Scaling::Logarithmic, Scaling::ReverseLogarithmic};
    return all[in.pick(std::size(all))];
}

// A few fixed names so that duplicates are common, sometimes empty or arbitrary text.
std::string name(ByteReader& in) {
    auto selector = in.byte();
    if (selector < 200) return fmt::format("p{}", selector % 6);
    if (selector < 210) return "";
    return in.text(16);
}

template <class P>
void add(SearchSpace& space, const std::string& what, P&& make) {
    try {
        space.add(make());
    } catch (const InvalidArgument&) {
        // refused, with a reason: the space is unchanged
    } catch (const std::exception& e) {
        fuzz::fail(fmt::format("{}: {} instead of InvalidArgument: {}", what, typeid(e).name(), e.what()));
    }
}

template <class T>
void add_integer(SearchSpace& space, ByteReader& in) {
    auto n = name(in);
    auto lo = number<T>(in), hi = number<T>(in);
    auto s = scaling(in);
    add(space, "IntegerParameter", [&] { return IntegerParameter<T>(n, lo, hi, s); });
}

template <class T>
void add_continuous(SearchSpace& space, ByteReader& in) {
    auto n = name(in);
    auto lo = number<T>(in), hi = number<T>(in);
    auto s = scaling(in);
    add(space, "ContinuousParameter", [&] { return ContinuousParameter<T>(n, lo, hi, s); });
}

void add_categorical(SearchSpace& space, ByteReader& in) {
    auto n = name(in);
    std::size_t count = in.byte();
    if (count == 255) count = in.raw<std::uint16_t>() % max_categories;  // sometimes a long list
    std::vector<std::string> values;
    values.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
        // Mostly distinct generated values; a byte of input now and then, so duplicates occur.
        if (in.byte() < 16) values.push_back(in.text(8));
        else values.push_back(fmt::format("v{}", i));
    }
    add(space, "CategoricalParameter", [&] { return CategoricalParameter(n, values); });
}

void add_static(SearchSpace& space, ByteReader& in) {
    auto n = name(in);
    switch (in.pick(3)) {
        case 0: {
            auto v = in.text(16);
            add(space, "StaticParameter<string>", [&] { return StaticParameter(n, v); });
            break;
        }
        case 1: {
            auto v = number<std::int64_t>(in);
            add(space, "StaticParameter<int64>", [&] { return StaticParameter(n, v); });
            break;
        }
        default: {
            auto v = number<double>(in);
            add(space, "StaticParameter<double>", [&] { return StaticParameter(n, v); });
            break;
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    ByteReader in(data, size);
    SearchSpace space;
    for (std::size_t count = 1 + in.pick(max_parameters); count-- > 0 && !in.empty();) {
        switch (in.pick(10)) {
            case 0: add_integer<std::int64_t>(space, in); break;
            case 1: add_integer<int>(space, in); break;
            case 2: add_integer<std::uint64_t>(space, in); break;
            case 3: add_integer<std::uint8_t>(space, in); break;
            case 4: add_continuous<double>(space, in); break;
            case 5: add_continuous<float>(space, in); break;
            case 6: add_continuous<long double>(space, in); break;
            case 7: add_categorical(space, in); break;
            case 8: add_static(space, in); break;
            default: add_integer<short>(space, in); break;
        }
    }
    fuzz::check_space(space, in);
    return 0;
}
