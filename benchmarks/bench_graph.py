"""The successor graph: built and stored once per run of positions that share a move list, against per position.

Positions that differ only in the opponent's pieces on its private tiles have the same moves (the mover never
reaches those tiles), and the dense index ranks those pieces last, so each run of them is played out once and the
rest follow by stride (``urgym.solver._kernels``). Three forms of a pair's graph (``SweepGraph(form=...)``):
``played`` (every position played out, every position's edges stored), ``positions`` (runs played out, every
position's edges stored: what the policy evaluations read) and ``runs`` (runs played out and stored: the solver's).
This builds every layer pair's graph in each form, checks that the sweeps over them agree, and prints the median
build time over all pairs, the largest pair's graph memory and its sweep time in each form.

Run: ``python -m benchmarks.bench_graph --rules finkel --pieces 5 [--repeats 5]``. Compilation happens in an untimed
first build.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from urgym.solver._index import PositionIndex
from urgym.solver.graph import SweepGraph

from benchmarks.common import machine
from urgym import get_rules

FORMS = ("played", "positions", "runs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rules", default="finkel")
    parser.add_argument("--pieces", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rules = get_rules(args.rules, args.pieces)
    index = PositionIndex(rules)
    pairs = [r for p, r in zip(index.pairs, index.pair_ranges, strict=True) if index.pieces not in p]
    for form in FORMS:  # compiled, untimed
        SweepGraph(index, *pairs[0], form=form)
    print(f"machine: {machine()}")
    print(f"{rules.describe()}: {index.size:,} positions, {len(pairs)} layer pairs with moves")
    build = {form: [] for form in FORMS}
    for repeat in range(args.repeats):
        for form in FORMS[repeat % 3 :] + FORMS[: repeat % 3]:  # interleaved: the machine's noise shared
            began = time.perf_counter()
            for start, end in pairs:
                SweepGraph(index, start, end, form=form)
            build[form].append(time.perf_counter() - began)
    largest = max(pairs, key=lambda r: r[1] - r[0])
    n = largest[1] - largest[0]
    graphs = {form: SweepGraph(index, *largest, form=form) for form in FORMS}
    sweeps = {form: [] for form in FORMS}
    values = {form: np.random.default_rng(0).random(index.size) for form in FORMS}
    for _ in range(args.repeats):
        for form in FORMS:
            began = time.perf_counter()
            graphs[form].residual(values[form])
            sweeps[form].append(time.perf_counter() - began)
    residuals = {graphs[form].residual(values[form]) for form in FORMS}
    assert len(residuals) == 1, f"the forms disagree: {residuals}"
    print(f"largest pair: {n:,} positions")
    print(f"{'form':10} {'build, all pairs':>17} {'largest pair graph':>22} {'sweep of it':>12}")
    for form in FORMS:
        graph = graphs[form].graph
        size = sum(a.nbytes for a in graph if isinstance(a, np.ndarray)) + graphs[form].change.nbytes
        print(
            f"{form:10} {np.median(build[form]):15.2f} s {size / 2**20:12.0f} MiB ({size / n:4.1f} B) "
            f"{1e3 * np.median(sweeps[form]):9.1f} ms"
        )
    print(
        f"build: played / runs {np.median(build['played']) / np.median(build['runs']):.2f}x; memory: positions / "
        f"runs {_bytes(graphs['positions']) / _bytes(graphs['runs']):.2f}x"
    )


def _bytes(graph: SweepGraph) -> int:
    return sum(a.nbytes for a in graph.graph if isinstance(a, np.ndarray)) + graph.change.nbytes


if __name__ == "__main__":
    main()
