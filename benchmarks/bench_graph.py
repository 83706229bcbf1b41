"""The successor graph's build: one move list per run of positions that share it, against one per position.

Positions that differ only in the opponent's pieces on its private tiles have the same moves (the mover never
reaches those tiles), and the dense index ranks those pieces last, so each run of them is played out once and the
rest follow by stride (``urgym.solver._kernels``). This builds every layer pair's graph of a rule set both ways,
checks they are equal, and prints the median build time of each over several runs, with the graph's memory.

Run: ``python -m benchmarks.bench_graph --rules finkel --pieces 5 [--repeats 5]``. Compilation happens in an untimed
first build.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from urgym.solver._index import PositionIndex
from urgym.solver.solve import _PairGraph  # the solver's internals are what this benchmark measures

from benchmarks.common import machine
from urgym import get_rules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rules", default="finkel")
    parser.add_argument("--pieces", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rules = get_rules(args.rules, args.pieces)
    index = PositionIndex(rules)
    pairs = [(p, r) for p, r in zip(index.pairs, index.pair_ranges, strict=True) if index.pieces not in p]
    _PairGraph(index, *pairs[0][1])  # compiled, untimed
    _PairGraph(index, *pairs[0][1], runs=False)
    print(f"machine: {machine()}")
    print(f"{rules.describe()}: {index.size:,} positions, {len(pairs)} layer pairs with moves")
    seconds = {True: [], False: []}
    for repeat in range(args.repeats):
        for runs in (True, False) if repeat % 2 == 0 else (False, True):  # interleaved: the machine's noise shared
            began = time.perf_counter()
            for _, (start, end) in pairs:
                _PairGraph(index, start, end, runs=runs)
            seconds[runs].append(time.perf_counter() - began)
    largest = max(pairs, key=lambda pr: pr[1][1] - pr[1][0])
    fast, slow = (_PairGraph(index, *largest[1], runs=r).graph for r in (True, False))
    assert np.array_equal(fast.edges, slow.edges), "the two builds differ"
    graph_bytes = fast.edges.nbytes + fast.counts.nbytes + fast.item_edge_end.nbytes
    for runs, label in ((False, "every position played out"), (True, "one move list per run")):
        print(f"{label:28} all pairs: median {np.median(seconds[runs]):.2f} s  (runs: {np.round(seconds[runs], 2)})")
    print(f"speed-up of the build: {np.median(seconds[False]) / np.median(seconds[True]):.2f}x")
    n = largest[1][1] - largest[1][0]
    size = f"{graph_bytes / 2**20:.0f} MiB ({graph_bytes / n:.1f} B a position)"
    print(f"largest pair {largest[0]}: {n:,} positions, graph {size}")


if __name__ == "__main__":
    main()
