"""``review``: a recorded game against perfect play, move by move (see :mod:`urgym.evaluation.review`)."""

from __future__ import annotations

import argparse

from urgym.commands.common import (
    ArgumentParser,
    add_table_options,
    check_outputs,
    command,
    report_stream,
    table_or_solve,
    wrote,
)

from urgym import get_rules

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="review", description="Review a recorded game against perfect play: every move's winning chance, "
        "the best move, regrets, categories, accuracy, luck and the key moves.",
        epilog="Records are urgym's JSON game records (ur-play --save, evaluate --save-games) or RGN (.rgn). "
        "Categories and the accuracy formula: docs/records.md (Game review).")
    parser.add_argument("record", help="the game record (.json, or .rgn)")
    parser.add_argument("--rules", help="the rule set of an RGN file that names none")
    parser.add_argument("--pieces", type=int, help="pieces per side, with --rules")
    parser.add_argument("--json", help="write the review as JSON to this path (- for standard output)")
    parser.add_argument("--csv", help="write one row per roll as CSV to this path (- for standard output)")
    parser.add_argument("--plot", help="write the win-probability graph to this path (.png, .pdf, .svg)")
    parser.add_argument("--html", help="write a self-contained HTML page to this path (board, graph, moves; - for "
                        "standard output)")
    parser.add_argument("--summary", action="store_true", help="print only the players' summary and key moves")
    add_table_options(parser)
    return parser


@command("review")
def main(argv: list[str] | None = None) -> int:
    from urgym.evaluation.review import review_game

    from urgym.records import GameRecord

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.pieces is not None and not args.rules:
            raise ValueError("--pieces needs --rules (they give the rule set of an RGN file that names none)")
        rules = get_rules(args.rules, args.pieces) if args.rules is not None else None
        check_outputs(args, {"the game record": args.record})
        record = GameRecord.load(args.record, rules)
        if rules is not None and record.rules != rules:
            raise ValueError(f"{args.record} is a game of {record.rules.describe()}, not of the --rules/--pieces "
                             f"given ({rules.describe()})")
    except FileNotFoundError:
        parser.error(f"no such game record: {args.record}")
    except ValueError as err:
        parser.error(str(err))
    table = table_or_solve(record.rules, args, parser, (), record=args.record)
    if table is None:
        parser.error(f"a review needs a solved table, and {record.rules.describe()} cannot be solved")
    review = review_game(record, table)
    out = report_stream(args)
    print(review.format_text(moves=not args.summary), file=out)
    for option, save in (("json", review.save_json), ("csv", review.save_csv), ("plot", review.save_plot),
                         ("html", review.save_html)):
        if getattr(args, option) is not None:
            wrote(save(getattr(args, option)), out)
    return 0
