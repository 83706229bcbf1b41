"""``solve``: solve a rule set exactly and write its table, or count its positions."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from solver._index import PositionIndex
from solver.cache import cached_table_path, load_or_solve
from solver.rgu import RoyalUrTable, compare_tables, read_rgu, rgu_key, write_rgu
from solver.solve import check_solve_options
from solver.table import DTYPES, SolvedTable
from urgym import RULE_SET_NAMES, Position, get_rules
from urgym.cli import ArgumentParser, command
from urgym.files import check_output

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


@command("solve", interrupted="run the same command again to resume from the last finished layer pair")
def main(argv: list[str] | None = None) -> None:
    parser = ArgumentParser(prog="solve", description="Solve a rule set of the Royal Game of Ur exactly: "
                                     "every position's winning probability under perfect play.")
    parser.add_argument("--rules", default="finkel", choices=RULE_SET_NAMES)
    parser.add_argument("--pieces", type=int, default=None, help="pieces per side (default: the rule set's)")
    parser.add_argument("--tol", type=float, default=1e-12, help="largest change of a value that ends a layer")
    parser.add_argument("--out", default=None, help="table file (default: the cache, see URGYM_CACHE)")
    parser.add_argument("--dtype", default="float64", choices=DTYPES, help="storage type of the table")
    parser.add_argument("--threads", type=int, default=None, help="worker threads (default: every core)")
    parser.add_argument("--count", action="store_true",
                        help="print the exact number of positions of each solvable rule set and exit")
    parser.add_argument("--format", default="urtable", choices=("urtable", "rgu"),
                        help="rgu: write the table (solved or taken from the cache) in RoyalUr's .rgu format to "
                        "--out (finkel only)")
    parser.add_argument("--import-rgu", metavar="FILE",
                        help="convert RoyalUr's .rgu table into the cache (or --out), so nothing needs solving")
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"),
                        help="compare two tables (.urtable or .rgu) position by position and exit")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.count:
        print(count_table([args.pieces] if args.pieces else [1, 2, 3, 4, 5, 6, 7]))
        return
    if args.compare:
        return _compare(parser, *args.compare)
    if args.import_rgu:
        return _import(parser, args)
    try:
        rules = get_rules(args.rules, args.pieces)
        size = PositionIndex(rules).size
        if args.format == "rgu":
            if not args.out:
                raise ValueError("--format rgu writes to --out FILE.rgu")
            check_output(args.out, ("rgu",))
            rgu_key(Position.start(rules))  # refuses rules RoyalUr's format cannot hold, before solving
        elif args.out:
            check_output(args.out)
        check_solve_options(args.tol, args.threads)
    except ValueError as e:
        parser.error(str(e))
    from solver.solve import solve

    if args.format == "rgu":
        table = load_or_solve(rules, progress=not args.no_progress)
        print(f"wrote {write_rgu(table, args.out)} ({rules.describe()} in RoyalUr's format)")
        return
    out = args.out or cached_table_path(rules, args.dtype)
    print(f"solving {rules.describe()}: {size:,} positions -> {out}", file=sys.stderr)
    start = time.perf_counter()
    table = solve(rules, tol=args.tol, progress=not args.no_progress, out=out, dtype=args.dtype,
                  threads=args.threads)
    print(f"solved in {time.perf_counter() - start:.1f} s; final residual {table.header['residual']:.2e}; "
          f"light's winning chance from the start: {table.win_probability(Position.start(rules)):.6f}")
    print(f"table: {out}")


def _load_any(path: str) -> SolvedTable | RoyalUrTable:
    return read_rgu(path) if Path(path).suffix.lower() == ".rgu" else SolvedTable.load(path)


def _compare(parser: argparse.ArgumentParser, first: str, second: str) -> None:
    try:
        tables = [_load_any(first), _load_any(second)]
        comparison = compare_tables(*tables)
    except FileNotFoundError as err:
        parser.error(f"no such table: {err.filename}")
    except ValueError as err:  # TableError included
        parser.error(str(err))
    print(f"{first} vs {second} ({tables[0].rules.describe()}):")
    print(comparison)


def _import(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    try:
        table = read_rgu(args.import_rgu).to_solved_table()
        out = Path(args.out) if args.out else cached_table_path(table.rules, "uint16")
        check_output(out)
    except FileNotFoundError:
        parser.error(f"no such file: {args.import_rgu}")
    except ValueError as err:
        parser.error(str(err))
    table.save(out, "uint16")
    print(f"imported {args.import_rgu} ({table.rules.describe()}, 16-bit values) -> {out}")
    if not args.out:
        print("evaluate, review, play and the perfect player now use it; solve the rules to get exact values")


if __name__ == "__main__":
    sys.exit(main())
