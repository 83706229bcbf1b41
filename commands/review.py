"""``review``: a recorded game against perfect play, move by move (see :mod:`urgym.evaluation.review.grades`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from urgym.commands.common import (
    ArgumentParser,
    add_table_options,
    check_outputs,
    command,
    report_stream,
    table_or_solve,
    wrote,
)
from urgym.evaluation.review.grades import review_game
from urgym.evaluation.review.summary import summarise_player, the_player
from urgym.evaluation.scoring.match import RECORD_NAME

from urgym import Rules, get_rules
from urgym.files import check_not_broken_link
from urgym.records import GameRecord

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The ``review`` command's arguments."""
    parser = ArgumentParser(
        prog="review",
        description="Review a recorded game against perfect play: every move's winning chance, "
        "the best move, regrets, categories, accuracy, luck and the key moves. Given several records or a folder, "
        "summarise one player over the games.",
        epilog="Records are urgym's JSON game records (ur-play --save, evaluate --save-games) or RGN (.rgn). "
        "Categories and the accuracy formula: docs/records.md (Game review).",
    )
    parser.add_argument(
        "record",
        nargs="+",
        help="the game record (.json, or .rgn); several records or folders of "
        "them (game-*.json, *.rgn) summarise a player over the games",
    )
    parser.add_argument(
        "--player", help="with several games: the player to summarise (default: the one name that plays in every game)"
    )
    parser.add_argument("--rules", help="the rule set of an RGN file that names none")
    parser.add_argument("--pieces", type=int, help="pieces per side, with --rules")
    parser.add_argument("--json", help="write the review as JSON to this path (- for standard output)")
    parser.add_argument("--csv", help="write one row per roll as CSV to this path (- for standard output)")
    parser.add_argument("--plot", help="write the win-probability graph to this path (.png, .pdf, .svg)")
    parser.add_argument(
        "--html", help="write a self-contained HTML page to this path (board, graph, moves; - for standard output)"
    )
    parser.add_argument("--summary", action="store_true", help="print only the players' summary and key moves")
    add_table_options(parser)
    return parser


@command("review")
def main(argv: list[str] | None = None) -> int:
    """Run ``review``; return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    paths = _record_paths(parser, args.record)
    if len(paths) > 1 or Path(args.record[0]).is_dir():
        return _summary(parser, args, paths)
    if args.player is not None:
        parser.error("--player goes with several games (records or a folder)")
    path = str(paths[0])
    try:
        check_outputs(args, {"the game record": path})
        record = _load(args, path)
    except FileNotFoundError:
        parser.error(f"no such game record: {path}")
    except ValueError as err:
        parser.error(str(err))
    table = table_or_solve(record.rules, args, parser, (), record=path)
    if table is None:
        parser.error(f"a review needs a solved table, and {record.rules.describe()} is too large to solve here")
    review = review_game(record, table)
    out = report_stream(args)
    print(review.format_text(moves=not args.summary), file=out)
    for option, save in (
        ("json", review.save_json),
        ("csv", review.save_csv),
        ("plot", review.save_plot),
        ("html", review.save_html),
    ):
        if getattr(args, option) is not None:
            wrote(save(getattr(args, option)), out)
    return 0


def _given_rules(args: argparse.Namespace) -> Rules | None:
    """The rules --rules/--pieces give (for RGN files that name none), or None."""
    if args.pieces is not None and not args.rules:
        raise ValueError("--pieces needs --rules (they give the rule set of an RGN file that names none)")
    return get_rules(args.rules, args.pieces) if args.rules is not None else None


def _load(args: argparse.Namespace, path: str) -> GameRecord:
    """One record, checked against --rules/--pieces."""
    rules = _given_rules(args)
    record = GameRecord.load(path, rules)
    if rules is not None and record.rules != rules:
        raise ValueError(
            f"{path} is a game of {record.rules.describe()}, not of the --rules/--pieces given ({rules.describe()})"
        )
    return record


def _record_paths(parser: argparse.ArgumentParser, given: list[str]) -> list[Path]:
    """The records named: files as given, folders as their records (``.json``, ``.rgn``) in name order.

    A folder's ``.json`` files that are not game records (and not named ``game-*.json``, which must be) are left
    out with a note: a downloads folder holds the page's records (``ur-game (1).json``) beside other files.
    """
    paths: list[Path] = []
    for text in given:
        path = Path(text)
        try:
            check_not_broken_link(path, "a game record or a folder of them")
        except ValueError as err:
            parser.error(str(err))
        if path.is_dir():
            found = [p for p in sorted(path.iterdir()) if _is_folder_record(p)]
            if not found:
                parser.error(f"{path} holds no game records (.json from `evaluate --save-games` or the page, .rgn)")
            paths.extend(found)
        else:
            paths.append(path)
    unique: dict[Path, Path] = {}  # a record named twice (review D D) counts once; each path resolved once
    for path in paths:
        unique.setdefault(path.resolve(), path)
    return list(unique.values())


def _is_folder_record(path: Path) -> bool:
    """Whether a folder's entry is read as a record (a link that leads nowhere is left out with a note)."""
    if path.suffix.lower() not in (".json", ".rgn"):
        return False
    if path.is_symlink() and not path.exists():
        print(f"note: left out {path}: a symbolic link that leads nowhere (dangling, or a loop)", file=sys.stderr)
        return False
    return path.is_file() and _is_record(path)


def _is_record(path: Path) -> bool:
    """Whether a folder's file is taken as a game record: ``.rgn``, ``game-*.json``, or JSON that reads as one."""
    if path.suffix.lower() == ".rgn" or RECORD_NAME.fullmatch(path.name):
        return True  # checked when read, and an error if it is not one
    try:
        GameRecord.load(path)
    except (OSError, ValueError) as err:
        print(f"note: left out {path}: {err}", file=sys.stderr)
        return False
    return True


def _summary(parser: argparse.ArgumentParser, args: argparse.Namespace, paths: list[Path]) -> int:
    """``review`` of several games: one player's accuracy, rating, error and luck over them."""
    for option in ("csv", "html"):
        if getattr(args, option) is not None:
            parser.error(f"--{option} writes one game's review; with several games use --json or --plot")
    # Two passes, one record at a time, so that memory does not grow with the folder: the first checks every record
    # and finds the rules and the player before any solve; the second reviews each and keeps only the player's part.
    kinds, names = set(), []
    try:
        check_outputs(args, {f"the game record {p}": str(p) for p in paths})  # once, against every input
        for p in paths:
            record = _load(args, str(p))
            kinds.add(record.rules)
            names.append(set(record.players.values()))
    except FileNotFoundError as err:
        parser.error(f"no such game record: {err.filename}")
    except ValueError as err:
        parser.error(str(err))
    if len(kinds) > 1:  # first: what is wrong with the games comes before whom to summarise
        parser.error(
            "the games are of different rules ("
            + "; ".join(sorted(k.describe() for k in kinds))
            + "); summarise one rule set at a time"
        )
    if args.player is not None:
        missing = [(p, n) for p, n in zip(paths, names, strict=True) if args.player not in n]
        if missing:
            path, players = missing[0]
            parser.error(
                f"{path.name}: {args.player!r} does not play in it (its players: "
                f"{', '.join(sorted(map(repr, players)))}); {len(missing)} of {len(paths)} games lack the player"
            )
    try:
        player = args.player if args.player is not None else the_player(names)
    except ValueError as err:
        parser.error(str(err))
    rules = kinds.pop()
    table = table_or_solve(rules, args, parser, (), record=str(paths[0]))
    if table is None:
        parser.error(f"a review needs a solved table, and {rules.describe()} is too large to solve here")
    try:
        summary = summarise_player(((p.name, review_game(_load(args, str(p)), table)) for p in paths), player)
    except ValueError as err:
        parser.error(str(err))
    out = report_stream(args)
    print(summary.format_text(), file=out)
    for option, save in (("json", summary.save_json), ("plot", summary.save_plot)):
        if getattr(args, option) is not None:
            wrote(save(getattr(args, option)), out)
    return 0
