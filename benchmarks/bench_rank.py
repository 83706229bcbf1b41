"""The index's rank: nanoseconds per position in the dense layout and in the tile layout.

Run: ``python -m benchmarks.bench_rank [--pieces 4] [--positions 20000000]``

The positions are those of each rule set's start pair (the largest), repeated to the count asked, ranked in one
numba loop on one thread through :func:`urgym.solver._index.rank_state`; median of 5 after a warm-up. Finkel is
ranked in both layouts (the dense one it uses, and the tile one murray and skiriuk need), so the two compare on the
same positions.
"""

from __future__ import annotations

import argparse

import numpy as np
from numba import njit
from urgym.solver import PositionIndex
from urgym.solver._index import rank_state
from urgym.solver.policy import decision_states

from benchmarks.common import machine, median_rate
from urgym import get_rules


@njit(cache=True)
def _rank_all(states, tables):
    total = 0
    for s in states:
        total += rank_state(s, tables)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pieces", type=int, default=4)
    parser.add_argument("--positions", type=int, default=20_000_000)
    args = parser.parse_args()
    print(f"{machine()}; {args.positions:,} ranks per run, one thread")
    print("| rule set | layout | ns per rank (median of 5) |")
    print("|---|---|---|")
    for name, tiles in (("finkel", False), ("finkel", True), ("murray", False), ("skiriuk", False)):
        index = PositionIndex(get_rules(name, args.pieces), tiles=tiles)
        states = decision_states(index, *index.pair_ranges[-1])
        states = np.ascontiguousarray(np.resize(states, args.positions))
        rate, _ = median_rate(lambda s=states, t=index.tables: (_rank_all(s, t), len(s))[1])
        layout = "tiles" if index.kind else "dense"
        print(f"| {name} | {layout} | {1e9 / rate:.1f} |", flush=True)


if __name__ == "__main__":
    main()
