# SPDX-License-Identifier: MIT
"""What the two comparison scripts (compare.py, compare_multi_objective.py) share: finding the
hypertune peer program in a build, running a side's command and reading its JSON lines, running
many at once, order statistics and printing a table."""
import concurrent.futures
import json
import math
import os
import subprocess
import sys
import time

# Single-threaded children: numpy's BLAS would otherwise start a thread per core.
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")


def peer_binary(build, target, script):
    """<build>/bench/peers/<target>, or exit saying how to build it."""
    path = os.path.join(build, "bench", "peers", target)
    if not os.path.exists(path):
        sys.exit(f"{script}: {path} not found; build it with cmake --build {build} --target {target}")
    return path


def run_json_lines(command, stdin=None):
    done = subprocess.run(command, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def run_all(commands, workers, log=None):
    """Every command's JSON lines, `workers` at a time; each finished job's lines go to `log` at once."""
    rows, start = [], time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(run_json_lines, c) for c in commands]
        for k, f in enumerate(concurrent.futures.as_completed(futures), 1):
            got = f.result()
            rows.extend(got)
            if log:
                for r in got:
                    log.write(json.dumps(r) + "\n")
                log.flush()
            print(f"  {k}/{len(commands)} jobs done, {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    return rows


def quantile(sorted_values, q):
    """Linear interpolation between order statistics (numpy's default)."""
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (pos - lo) * (sorted_values[hi] - sorted_values[lo])


def render(lines, markdown):
    """Rows of cells (the first the header) as a Markdown table or aligned columns."""
    if markdown:
        out = ["| " + " | ".join(lines[0]) + " |", "|" + "---|" * len(lines[0])]
        out += ["| " + " | ".join(row) + " |" for row in lines[1:]]
        return "\n".join(out)
    widths = [max(len(row[i]) for row in lines) for i in range(len(lines[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in lines)
