// SPDX-License-Identifier: MIT
// A main() for builds without libFuzzer: runs LLVMFuzzerTestOneInput once on every file named on
// the command line, or on every file directly inside a directory named there (sorted, hidden files
// skipped). A bug aborts, as it would under the fuzzer; the path of the input is printed first.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> inputs_of(const fs::path& arg) {
    if (!fs::is_directory(arg)) return {arg};
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(arg))
        if (entry.is_regular_file() && !entry.path().filename().string().starts_with('.'))
            files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    return files;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s <file or directory>...\n", argv[0]);
        return 2;
    }
    std::size_t count = 0;
    for (int i = 1; i < argc; ++i) {
        fs::path arg = argv[i];
        if (!fs::exists(arg)) {
            std::fprintf(stderr, "%s: no such file or directory\n", arg.c_str());
            return 2;
        }
        for (const auto& file : inputs_of(arg)) {
            std::ifstream in(file, std::ios::binary);
            if (!in) {
                std::fprintf(stderr, "%s: cannot read\n", file.c_str());
                return 2;
            }
            std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            std::printf("replaying %s (%zu bytes)\n", file.c_str(), bytes.size());
            std::fflush(stdout);
            LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
            ++count;
        }
    }
    std::printf("%zu inputs replayed without a failure\n", count);
    return 0;
}
