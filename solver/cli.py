"""``solve``: solve a rule set exactly and write its table, or count its positions."""

from __future__ import annotations

import argparse
import sys
import time

from solver._index import PositionIndex
from solver.cache import cached_table_path
from solver.table import DTYPES
from urgym import RULE_SET_NAMES, Position, get_rules

# Raposo & Lamont (2023), Table 1: estimated state-space complexity, for comparison with exact counts.
# Blitz shares the Masters path, so its 7-piece count is the same as masters'.
PAPER_ESTIMATES = {("finkel", 7): 1.2e7, ("aseb", 5): 1.9e8, ("masters", 7): 4.3e9, ("blitz", 7): 4.3e9}
SINGLE_VISIT = ("finkel", "blitz", "masters", "aseb")


def count_table(pieces: list[int]) -> str:
    lines = [f"{'rule set':<9} {'pieces':>6} {'positions (self/other form)':>28} {'paper, Table 1 (estimate)':>26}"]
    for name in SINGLE_VISIT:
        for n in pieces:
            size = PositionIndex(get_rules(name, n)).size
            paper = PAPER_ESTIMATES.get((name, n))
            lines.append(f"{name:<9} {n:>6} {size:>28,} {f'{paper:.1e}' if paper else '':>26}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="solve", description="Solve a rule set of the Royal Game of Ur exactly: "
                                     "every position's winning probability under perfect play.")
    parser.add_argument("--rules", default="finkel", choices=RULE_SET_NAMES)
    parser.add_argument("--pieces", type=int, default=None, help="pieces per side (default: the rule set's)")
    parser.add_argument("--tol", type=float, default=1e-12, help="largest change of a value that ends a layer")
    parser.add_argument("--out", default=None, help="table file (default: the cache, see URGYM_CACHE)")
    parser.add_argument("--dtype", default="float64", choices=DTYPES, help="storage type of the table")
    parser.add_argument("--threads", type=int, default=None, help="worker threads (default: every core)")
    parser.add_argument("--count", action="store_true",
                        help="print the exact number of positions of each solvable rule set and exit")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.count:
        print(count_table([args.pieces] if args.pieces else [1, 2, 3, 4, 5, 6, 7]))
        return
    try:
        rules = get_rules(args.rules, args.pieces)
        size = PositionIndex(rules).size
    except ValueError as e:
        parser.error(str(e))
    from solver.solve import solve

    out = args.out or cached_table_path(rules, args.dtype)
    print(f"solving {rules.describe()}: {size:,} positions -> {out}", file=sys.stderr)
    start = time.perf_counter()
    table = solve(rules, tol=args.tol, progress=not args.no_progress, out=out, dtype=args.dtype,
                  threads=args.threads)
    print(f"solved in {time.perf_counter() - start:.1f} s; final residual {table.header['residual']:.2e}; "
          f"light's winning chance from the start: {table.win_probability(Position.start(rules)):.6f}")
    print(f"table: {out}")


if __name__ == "__main__":
    main()
