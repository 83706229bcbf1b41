"""What bounds one solver sweep: the cost of its value loads against the rest of its work.

Builds the successor graph of a rule set's largest layer pair and times the solver's own sweep kernel in
its read-only mode (the Bellman residual pass, which reads exactly what a sweep reads), interleaved, with
the graph's real successors and with every successor folded into a small window of values that stays in
the L1/L2 cache (same edges, same branches, same arithmetic, only the addresses change), on one thread
and on two. The windowed pass is the most any better memory layout of the values could reach; the thread
ratio shows whether the pass waits on latency (it then halves with two threads) or on bandwidth.

Run: ``python -m benchmarks.bench_sweep --rules finkel --pieces 6 [--repeats 7] [--window 8192]``.
JIT compilation happens in an untimed first pass.
"""

from __future__ import annotations

import argparse
import copy
import time

import numba
import numpy as np
from urgym.solver._index import PositionIndex
from urgym.solver.graph import SweepGraph, live_pairs

from benchmarks.common import machine
from urgym import get_rules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rules", default="finkel")
    parser.add_argument("--pieces", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--window", type=int, default=8192, help="values in the cache-resident window (power of 2)")
    args = parser.parse_args()
    if args.window < 1 or args.window & (args.window - 1):
        parser.error(f"--window must be a power of 2, got {args.window}")
    rules = get_rules(args.rules, args.pieces)
    index = PositionIndex(rules)
    largest = max(live_pairs(index), key=lambda layer: layer.positions)
    pair, start, end = largest.scored, largest.start, largest.end
    graph = SweepGraph(index, start, end)
    windowed = copy.copy(graph)
    # an edge is ``index << 1 | passes`` (solver/_kernels.py): keep the pass bit, fold the index into the window
    windowed.graph = graph.graph._replace(edges=graph.graph.edges & np.uint32(((args.window - 1) << 1) | 1))
    values = np.random.default_rng(0).random(index.size)
    n = end - start
    print(f"machine: {machine()}")
    print(f"{rules.describe()}, pair {pair}: {n:,} positions, {graph.graph.edges.size / n:.2f} edges per position")
    threads_before = numba.get_num_threads()
    try:
        for threads in sorted({1, threads_before}):
            numba.set_num_threads(threads)
            times = _interleaved(
                {"real loads": graph, f"loads in a {args.window * 8 // 1024} KB window": windowed}, values, args.repeats
            )
            real = np.median(times["real loads"])
            for name, ts in times.items():
                median = np.median(ts)
                print(
                    f"threads {threads}: {name:26} {median / n * 1e9:6.1f} ns per position "
                    f"(min {min(ts) / n * 1e9:.1f}), {median / real:.2f} of real"
                )
    finally:
        numba.set_num_threads(threads_before)


def _interleaved(graphs: dict[str, SweepGraph], values: np.ndarray, repeats: int) -> dict[str, list[float]]:
    """Seconds per read-only pass of each graph, the graphs taking turns so drift hits them alike."""
    for graph in graphs.values():
        graph.residual(values)  # JIT and first touch
    times: dict[str, list[float]] = {name: [] for name in graphs}
    for _ in range(repeats):
        for name, graph in graphs.items():
            began = time.perf_counter()
            graph.residual(values)
            times[name].append(time.perf_counter() - began)
    return times


if __name__ == "__main__":
    main()
