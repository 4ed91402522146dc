// SPDX-License-Identifier: MIT
// What hypertune's two peer programs (peer_functions, peer_multi_objective) share on the command
// line and in their output: comma lists, the clocks a run is timed by, and one JSON line per run.
#pragma once

#include <algorithm>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <ctime>
#include <sstream>
#include <string>
#include <vector>

namespace peers {

inline std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

inline std::vector<std::size_t> split_sizes(const std::string& s) {
    std::vector<std::size_t> out;
    for (const auto& item : split(s)) out.push_back(static_cast<std::size_t>(std::stoul(item)));
    return out;
}

/// Sorts and de-duplicates the --budgets list; false when it is empty or holds 0.
inline bool normalise_budgets(std::vector<std::size_t>& budgets) {
    std::sort(budgets.begin(), budgets.end());
    budgets.erase(std::unique(budgets.begin(), budgets.end()), budgets.end());
    return !budgets.empty() && budgets.front() != 0;
}

inline double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The process's CPU seconds: a sampler's cost, whatever else the machine runs.
inline double cpu_now() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

inline void print(const nlohmann::ordered_json& j) {
    std::fputs((j.dump() + "\n").c_str(), stdout);
    std::fflush(stdout);  // lines arrive as runs finish
}

}  // namespace peers
