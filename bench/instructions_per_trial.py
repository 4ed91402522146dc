#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Instructions per trial of one Google Benchmark case, counted by valgrind's callgrind.

Timings on a shared machine move by tens of percent between runs of the same binary; instruction
counts do not. This runs BINARY under callgrind with --benchmark_filter=FILTER and one short
iteration, and prints the instructions executed inside the benchmark function (everything it
calls included) divided by the calls of SearchSpace::decode: one per new
trial for random search, grid search and the multi-fidelity schedulers' random sampler.

    bench/instructions_per_trial.py BINARY FILTER
    bench/instructions_per_trial.py build/bench/bench_strategy_overhead 'BM_RandomSearch/1000$'
    bench/instructions_per_trial.py build/bench/bench_multifidelity_overhead '^BM_ASHA/1000/'

Needs valgrind (Debian's `valgrind` package). Compare two builds (say, this checkout and another
revision's, built alike) by running it on each binary.
"""
import re
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().split("\n\n")[2], file=sys.stderr)
        return 2
    binary, pattern = sys.argv[1], sys.argv[2]
    with tempfile.NamedTemporaryFile(suffix=".callgrind") as out:
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out.name}", binary,
                        f"--benchmark_filter={pattern}", "--benchmark_min_time=0"],
                       check=True, capture_output=True)
        tree = subprocess.run(["callgrind_annotate", "--tree=caller", "--inclusive=yes", out.name], check=True,
                              capture_output=True, text=True).stdout
    # The caller tree: blocks of "<Ir> <  <caller> (<n>x)" lines, then "<Ir> *  <function>" (its
    # inclusive count). The benchmark function's own line, and the callers of SearchSpace::decode.
    benchmark_ir, decode_calls, callers = None, 0, []
    for line in tree.splitlines():
        caller = re.match(r"\s*[\d,]+ .*<\s.* \(([\d,]+)x\)", line)
        if caller:
            callers.append(int(caller.group(1).replace(",", "")))
            continue
        own = re.match(r"\s*([\d,]+) \(.*%\)\s+\*\s+(.*)", line)
        if own:
            name = own.group(2)
            if benchmark_ir is None and "(anonymous namespace)::BM_" in name:
                benchmark_ir = int(own.group(1).replace(",", ""))
            if "hypertune::SearchSpace::decode(" in name:
                decode_calls += sum(callers)
        if not line.strip() or own:
            callers = []
    if benchmark_ir is None:
        print(f"no benchmark function matched {pattern!r}", file=sys.stderr)
        return 1
    print(f"{benchmark_ir:,} instructions in the benchmark function", file=sys.stderr)
    print(f"{decode_calls:,} trials (calls of SearchSpace::decode)", file=sys.stderr)
    if decode_calls == 0:
        print("SearchSpace::decode was not called from the benchmark function (inlined?)", file=sys.stderr)
        return 1
    print(round(benchmark_ir / decode_calls))
    return 0


if __name__ == "__main__":
    sys.exit(main())
