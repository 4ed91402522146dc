#!/usr/bin/env bash
# Compile CPU time and peak memory of three small programs that embed hypertune (bench/compile/*.cpp),
# with this checkout's headers against another revision's, in one run, so that machine drift
# affects both alike. Each program is compiled as one translation unit, -O2, RUNS times; the table
# gives the median user+sys CPU seconds and the median peak resident memory (GNU time's "Maximum
# resident set size"), and the ratio new/old, for this checkout header-only (the default) and in
# compiled mode (-DHYPERTUNE_COMPILED, what linking hypertune::compiled gives: the program's own
# translation unit; the library is compiled once, its cost is printed below the table).
#
#   bench/compile/compile_time.sh [BASELINE_REV] [RUNS]
#
# BASELINE_REV defaults to 29e145d, the layout before the sampler/scheduler redesign. The baseline is
# checked out with `git worktree` into a temporary directory and removed afterwards.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
baseline=${1:-29e145d}
runs=${2:-3}
cxx=${CXX:-g++}
flags=(-std=c++20 -O2 -c -o /dev/null -I/usr/include/eigen3)

work=$(mktemp -d)
trap 'git -C "$top" worktree remove --force "$work/baseline" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$top" worktree add --detach "$work/baseline" "$baseline" >/dev/null 2>&1

# Prints "cpu_seconds peak_kb" for one compile.
measure() {
    local include=$1 source=$2
    /usr/bin/time -f '%U %S %M' -o "$work/time" "$cxx" "${flags[@]}" "${@:3}" -I"$include" "$source" 2>"$work/err" ||
        { cat "$work/err" >&2; exit 1; }
    awk '{ printf "%.2f %d\n", $1 + $2, $3 }' "$work/time"
}

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

printf '| program | %s: CPU s | peak MB | header-only: CPU s | peak MB | new/old | compiled: CPU s | peak MB | new/old |\n' "$baseline"
printf '|---|---|---|---|---|---|---|---|---|\n'
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
mb() { cut -d' ' -f2 "$1" | median | awk '{ printf "%.0f", $1 / 1024 }'; }
cpu() { cut -d' ' -f1 "$1" | median; }
for program in random_search hyperband bayesian; do
    source="$here/$program.cpp"
    : >"$work/old"
    : >"$work/new"
    : >"$work/compiled"
    for ((i = 0; i < runs; ++i)); do  # interleaved: old, new, compiled, old, new, compiled...
        measure "$work/baseline/include" "$source" >>"$work/old"
        measure "$top/include" "$source" >>"$work/new"
        measure "$top/include" "$source" -DHYPERTUNE_COMPILED >>"$work/compiled"
    done
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$program" "$(cpu "$work/old")" "$(mb "$work/old")" \
        "$(cpu "$work/new")" "$(mb "$work/new")" "$(ratio "$(cpu "$work/new")" "$(cpu "$work/old")")" \
        "$(cpu "$work/compiled")" "$(mb "$work/compiled")" "$(ratio "$(cpu "$work/compiled")" "$(cpu "$work/old")")"
done

# The library of the compiled mode, once: each of its sources, as its CMake target compiles them.
library=0
for source in "$top"/src/*.cpp; do
    measure "$top/include" "$source" -DHYPERTUNE_COMPILED -DHYPERTUNE_BUILDING_LIBRARY >"$work/lib"
    library=$(awk -v a="$library" -v b="$(cut -d' ' -f1 "$work/lib")" 'BEGIN { printf "%.2f", a + b }')
done
printf '\nhypertune::compiled itself (src/*.cpp, compiled once): %s CPU s\n' "$library"
