"""Whether a solve's table depends on its threads: the same rules solved on one thread and on several, in turn.

Prints per solve the threads, the values' checksum, whether the header calls the table reproducible, the sweeps and
the seconds sweeping and in all. One-thread solves should share one checksum; solves on several threads sweep the
large pairs in place together, so theirs may differ from one another in the last bits (within the tolerance).

Run: ``python -m benchmarks.bench_reproducible --rules finkel --pieces 4 --order 1,2,1,2``. JIT compilation is done
first on a one-piece solve so it stays out of the timing.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks.common import machine
from urgym import get_rules, solver


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rules", default="finkel")
    parser.add_argument("--pieces", type=int, default=4)
    parser.add_argument("--order", default="1,2,1,2", help="the thread counts of the solves, in turn")
    args = parser.parse_args()
    rules = get_rules(args.rules, args.pieces)
    solver.solve(rules.with_pieces(1), progress=False)  # JIT warm-up
    print(f"machine: {machine()}")
    print(f"{rules.describe()}")
    print("| threads | checksum | reproducible | sweeps | sweeping s | solve s |")
    print("|---|---|---|---|---|---|")
    for threads in (int(t) for t in args.order.split(",")):
        began = time.perf_counter()
        table = solver.solve(rules, progress=False, threads=threads)
        wall = time.perf_counter() - began
        header = table.header
        crc = solver.table.checksum(np.asarray(table.values))
        print(
            f"| {threads} | {crc} | {table.reproducible} | {header['sweeps']} | {header['sweep_seconds']:.2f} "
            f"| {wall:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
