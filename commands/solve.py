"""``solve``: solve a rule set exactly and write its table, or count its positions."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from urgym.commands.common import ArgumentParser, command
from urgym.solver.budget import check_solvable, estimate_solve
from urgym.solver.cache import cached_table_path, load_or_solve
from urgym.solver.rgu import RoyalUrTable, compare_tables, read_rgu, rgu_key, write_rgu
from urgym.solver.solve import check_solve_options, solve
from urgym.solver.table import DTYPES, EXACT_TOL, SolvedTable
from urgym.solver.tiles import count_positions

from urgym import RULE_SET_NAMES, GameRecord, Position, Rules, get_rules
from urgym.files import check_distinct, check_output, loads_json, read_bounded
from urgym.records import MAX_RECORD_BYTES, RECORD_FORMAT

# Raposo & Lamont (2023), Table 1: estimated state-space complexity, for comparison with exact counts. Blitz
# shares the Masters path, so its 7-piece count is masters'; the paper approximates Skiriuk's path by Masters' and
# Murray's by pieces that ignore their direction (lower bounds, it says).
PAPER_ESTIMATES = {
    ("finkel", 7): 1.2e7,
    ("aseb", 5): 1.9e8,
    ("masters", 7): 4.3e9,
    ("blitz", 7): 4.3e9,
    ("skiriuk", 7): 4.3e9,
    ("murray", 7): 5.9e9,
}


def count_table(names: tuple[str, ...], pieces: list[int]) -> str:
    """Exact position counts of rule sets for piece counts, the largest layer pairs and the paper's estimates.

    A solve holds its largest layer pair at once, so that column sets its memory.
    """
    lines = [
        f"{'rule set':<9} {'pieces':>6} {'positions (self/other form)':>28} {'largest layer pair':>19} "
        f"{'paper, Table 1 (estimate)':>26}"
    ]
    for name in names:
        for n in pieces:
            count = count_positions(get_rules(name, n))
            paper = PAPER_ESTIMATES.get((name, n))
            lines.append(
                f"{name:<9} {n:>6} {count.positions:>28,} {count.largest_pair:>19,} "
                f"{f'{paper:.1e}' if paper else '':>26}"
            )
    return "\n".join(lines)


@command("solve", interrupted="run the same command again to resume from the last finished layer pair")
def main(argv: list[str] | None = None) -> None:
    """Run ``solve``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        _refuse_ignored(args)
        if args.count:
            print(count_table(_count_rule_sets(args), [args.pieces] if args.pieces else [1, 2, 3, 4, 5, 6, 7]))
            return
        if args.compare:
            return _compare(*args.compare)
        if args.import_rgu:
            return _import(args)
        rules, out, fmt = _solve_plan(args)
    except FileNotFoundError as err:
        parser.error(f"no such file: {err.filename}")
    except ValueError as err:  # TableError included
        parser.error(str(err))
    if fmt == "rgu":
        table = load_or_solve(rules, progress=not args.no_progress)
        print(f"wrote {write_rgu(table, out)} ({rules.describe()} in RoyalUr's format)")
        return
    tol = EXACT_TOL if args.tol is None else args.tol
    print(f"solving {rules.describe()}: {estimate_solve(rules).describe()} -> {out}", file=sys.stderr)
    start = time.perf_counter()
    table = solve(
        rules, tol=tol, progress=not args.no_progress, out=out, dtype=args.dtype or "float64", threads=args.threads
    )
    print(
        f"solved in {time.perf_counter() - start:.1f} s; final residual {table.header['residual']:.2e}; "
        f"light's winning chance from the start: {table.win_probability(Position.start(rules)):.6f}"
    )
    print(f"table: {out}")


def build_parser() -> argparse.ArgumentParser:
    """The ``solve`` command's arguments."""
    parser = ArgumentParser(
        prog="solve",
        description="Solve a rule set of the Royal Game of Ur exactly: "
        "every position's winning probability under perfect play.",
    )
    parser.add_argument("--rules", default=None, help=f"rule set: {', '.join(RULE_SET_NAMES)} (default finkel)")
    parser.add_argument(
        "--rules-file",
        metavar="FILE",
        help="solve the rules in FILE instead: a game record (.json) or the rules as JSON "
        "(Rules.to_dict()), for custom rule sets",
    )
    parser.add_argument("--pieces", type=int, default=None, help="pieces per side (default: the rule set's)")
    parser.add_argument(
        "--tol",
        type=float,
        default=None,
        help=f"largest change of a value that ends a layer (default {EXACT_TOL:g}, the ground truth; "
        "a looser one needs --out, as the cache holds ground truth only)",
    )
    parser.add_argument(
        "--out",
        default=None,
        help="table file (default: the cache, see URGYM_CACHE); a .rgu file is written in RoyalUr's format",
    )
    parser.add_argument(
        "--dtype", default=None, choices=DTYPES, help="storage type of the table (default float64; others need --out)"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="worker threads (default: every core; 1 gives the table every machine gives, to the last bit)",
    )
    parser.add_argument(
        "--count",
        action="store_true",
        help="print the exact number of positions of each rule set (or --rules), counted without enumerating, and exit",
    )
    parser.add_argument(
        "--format",
        default=None,
        choices=("urtable", "rgu"),
        help="rgu: write the table (solved or taken from the cache) in RoyalUr's .rgu format to "
        "--out (finkel only; implied by an --out ending in .rgu)",
    )
    parser.add_argument(
        "--import-rgu",
        metavar="FILE",
        help="convert RoyalUr's .rgu table into the cache (or --out), so nothing needs solving",
    )
    parser.add_argument(
        "--compare",
        nargs=2,
        metavar=("A", "B"),
        help="compare two tables (.urtable or .rgu) position by position and exit",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


_MODE_OPTIONS = {  # what each mode reads; any other option given with it is refused, not ignored
    "count": {"rules", "pieces"},
    "compare": set(),
    "import_rgu": {"out"},
}
_SOLVE_OPTIONS = ("rules", "rules_file", "pieces", "tol", "out", "dtype", "threads", "format")


def _refuse_ignored(args: argparse.Namespace) -> None:
    for mode, allowed in _MODE_OPTIONS.items():
        if getattr(args, mode):
            for option in _SOLVE_OPTIONS:
                if option not in allowed and getattr(args, option) is not None:
                    raise ValueError(
                        f"--{option.replace('_', '-')} does nothing with --{mode.replace('_', '-')}; "
                        f"leave it out (--{mode.replace('_', '-')} takes "
                        f"{', '.join('--' + a for a in sorted(allowed)) or 'nothing else'})"
                    )
            others = [m for m in _MODE_OPTIONS if m != mode and getattr(args, m)]
            if others:
                raise ValueError(
                    f"--{mode.replace('_', '-')} and --{others[0].replace('_', '-')} are separate modes; give one"
                )
    if args.rules is not None and args.rules_file is not None:
        raise ValueError("give either --rules or --rules-file, not both")


def _count_rule_sets(args: argparse.Namespace) -> tuple[str, ...]:
    return RULE_SET_NAMES if args.rules is None else (get_rules(args.rules).name,)


def _solve_plan(args: argparse.Namespace) -> tuple[Rules, Path, str]:
    """The rules, the output file and its format of a solve, every option checked before any work."""
    rules = _rules_of(args)
    check_solvable(rules, estimate_solve(rules))  # refuses, with its needs, what the solver cannot address
    check_solve_options(EXACT_TOL if args.tol is None else args.tol, args.threads)
    fmt = args.format or ("rgu" if args.out and Path(args.out).suffix.lower() == ".rgu" else "urtable")
    if fmt == "rgu":
        if not args.out or Path(args.out).suffix.lower() != ".rgu":
            raise ValueError("RoyalUr's format (--format rgu) is written to --out FILE.rgu")
        for option in ("tol", "dtype", "threads"):
            if getattr(args, option) is not None:
                raise ValueError(f"--{option} does nothing with --format rgu (it writes the cached exact table)")
        rgu_key(Position.start(rules))  # refuses rules RoyalUr's format cannot hold, before solving
        return rules, check_output(args.out, ("rgu",), table="out"), fmt
    if args.out is not None and Path(args.out).suffix.lower() == ".rgu":
        raise ValueError(f"--out {args.out} ends in .rgu, RoyalUr's format; use --format rgu or another name")
    exact = (args.tol is None or args.tol <= EXACT_TOL) and args.dtype in (None, "float64")
    slot = cached_table_path(rules)
    if args.out is None:
        if not exact:
            raise ValueError(
                f"the table cache holds ground truth only (float64, tol {EXACT_TOL:g} or less): a table "
                "solved with this --tol or --dtype needs --out FILE"
            )
        check_output(slot, table="cache")
        return rules, slot, fmt
    out = check_output(args.out, table="out")
    check_distinct({"--out": out}, {"--rules-file": args.rules_file})
    return rules, out, fmt


def _rules_of(args: argparse.Namespace) -> Rules:
    """The rules to solve: a named rule set, or the rules in --rules-file (a game record or rules JSON)."""
    if args.rules_file is None:
        return get_rules("finkel" if args.rules is None else args.rules, args.pieces)
    path = Path(args.rules_file)
    data = loads_json(read_bounded(path, MAX_RECORD_BYTES, "a rules file or game record"), str(path))
    if isinstance(data, dict) and data.get("format") == RECORD_FORMAT:
        rules = GameRecord.from_dict(data).rules
    else:
        try:
            rules = Rules.from_dict(data)
        except ValueError as err:
            raise ValueError(f"{path}: not a game record or rule set: {err}") from None
    return get_rules(rules, args.pieces)


def _load_any(path: str) -> SolvedTable | RoyalUrTable:
    if not Path(path).is_file():
        raise ValueError(f"no such table: {path}")
    return read_rgu(path) if Path(path).suffix.lower() == ".rgu" else SolvedTable.load(path)


def _compare(first: str, second: str) -> None:
    tables = [_load_any(first), _load_any(second)]
    comparison = compare_tables(*tables)
    print(f"{first} vs {second} ({tables[0].rules.describe()}):")
    print(comparison)


def _import(args: argparse.Namespace) -> None:
    table = read_rgu(args.import_rgu).to_solved_table()
    out = Path(args.out) if args.out else cached_table_path(table.rules, "uint16")
    check_output(out, table="out" if args.out else "cache")
    check_distinct({"--out": out}, {"the RoyalUr table": args.import_rgu})
    table.save(out, "uint16")
    print(f"imported {args.import_rgu} ({table.rules.describe()}, 16-bit values) -> {out}")
    if not args.out:
        print(
            "evaluate, review, play and the perfect player now use it (and say that its values are 16-bit); "
            "solve the rules to get exact values"
        )


if __name__ == "__main__":
    sys.exit(main())
