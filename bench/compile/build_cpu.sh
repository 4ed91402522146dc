#!/usr/bin/env bash
# CPU seconds of every compile and link in a clean build, summed, with the 15 dearest calls: where a
# build's time goes (README, "Build, test, CI"). Each compiler call runs under /usr/bin/time, through
# CMake's compiler and linker launchers; the build uses 2 jobs.
#
#   bench/compile/build_cpu.sh BUILD_DIR [TARGET] [-- more cmake -D options]
#
# e.g. the full suite's build:       bench/compile/build_cpu.sh /tmp/cpu-release
#      the ASan+UBSan step's build:  bench/compile/build_cpu.sh /tmp/cpu-asan hypertune_tests_areas -- \
#          -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-Og -g1" \
#          -DHYPERTUNE_SANITIZE=address,undefined -DHYPERTUNE_SANITIZE_GP_OPTIMIZE=-O1 \
#          -DHYPERTUNE_BUILD_EXAMPLES=OFF -DHYPERTUNE_BUILD_BENCH=OFF
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:?usage: build_cpu.sh BUILD_DIR [TARGET] [-- cmake options]}
shift
target=all
if [[ $# -gt 0 && $1 != -- ]]; then target=$1; shift; fi
[[ ${1:-} == -- ]] && shift
rm -rf "$build"
times="$build/compile-times.txt"
launcher="/usr/bin/time;-f;%U %S %M %C;-a;-o;$times"
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=Release -DHYPERTUNE_WARNINGS_AS_ERRORS=ON \
    "-DCMAKE_CXX_COMPILER_LAUNCHER=$launcher" "-DCMAKE_CXX_LINKER_LAUNCHER=$launcher" "$@" >/dev/null
start=$(date +%s)
cmake --build "$build" -j2 --target "$target" >/dev/null
wall=$(( $(date +%s) - start ))
# GNU time appends one line per call, "user sys maxrss command"; a call is named by its source file,
# or "link <output>".
awk -v wall="$wall" -v top="$top/" '{
    cpu = $1 + $2; sum += cpu; n++; name = ""
    for (i = 4; i <= NF; ++i) if ($i ~ /\.(cpp|cxx)$/) name = $i
    if (name == "") for (i = 4; i < NF; ++i) if ($i == "-o") name = "link " $(i + 1)
    sub(top, "", name); printf "%.1f %d %s\n", cpu, $3, name
} END { printf "%d compiler calls: %.0f s of CPU in %d s of wall time\n", n, sum, wall > "/dev/stderr" }' "$times" |
    sort -g -r | head -15 | awk '{ printf "  %6.1f s CPU %6.0f MB  %s\n", $1, $2 / 1024, $3 " " $4 }'
