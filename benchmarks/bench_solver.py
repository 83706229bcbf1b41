"""Full solve of a rule set.

Wall time, where it goes, sweeps per layer pair, peak memory (RSS), final residual and the start position's value.

Run: ``python -m benchmarks.bench_solver --rules finkel [--pieces N] [--out PATH]``. JIT compilation is
done first on a one-piece solve so it stays out of the timing. "Other" time is everything outside building
graphs and sweeping: the index, terminal pairs, checkpoints and writing the table.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from benchmarks.common import machine
from urgym import Position, get_rules, solver


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rules", default="finkel")
    parser.add_argument("--pieces", type=int, default=None)
    parser.add_argument("--out", default=None, help="where to write the table (default: a temporary folder)")
    args = parser.parse_args()
    rules = get_rules(args.rules, args.pieces)
    solver.solve(rules.with_pieces(1), progress=False)  # JIT warm-up
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out or Path(tmp) / "table.urtable")
        start = time.perf_counter()
        table = solver.solve(rules, out=out)
        wall = time.perf_counter() - start
        peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
        print(f"machine: {machine()}")
        print(f"{rules.describe()}")
        print(f"positions: {table.index.size:,}")
        print(f"wall time: {wall:.1f} s; peak RSS: {peak_gb:.2f} GB; final residual: {table.header['residual']:.2e}")
        print(f"start position, light to move: {table.win_probability(Position.start(rules)):.12f}")
        _print_breakdown(table.header, wall)


def _print_breakdown(header: dict, wall: float) -> None:
    """Where the time went, and each layer pair's sweeps (largest pairs first)."""
    build, sweeps = header["build_seconds"], header["sweep_seconds"]
    print(
        f"time: building graphs {build:.1f} s, sweeping {sweeps:.1f} s ({header['sweeps']} sweeps), "
        f"other {wall - build - sweeps:.1f} s"
    )
    print("pair      positions  sweeps  extrapolations  build s  sweep s  ns per position-sweep")
    for p in sorted(header["pairs"], key=lambda p: -p["positions"]):
        if p["sweeps"]:
            per = p["sweep_seconds"] / (p["sweeps"] * p["positions"]) * 1e9
            print(
                f"{tuple(p['pair'])!s:8} {p['positions']:>11,} {p['sweeps']:>7} {p['extrapolations']:>15} "
                f"{p['build_seconds']:>8.2f} {p['sweep_seconds']:>8.2f} {per:>10.1f}"
            )


if __name__ == "__main__":
    main()
