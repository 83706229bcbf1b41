"""``stats``: game-tree statistics from self-play or saved records (see :mod:`urgym.evaluation.review.game_stats`)."""

from __future__ import annotations

import argparse
from dataclasses import replace

from urgym.agents import make_agent
from urgym.commands.common import (
    MAX_GAMES,
    ArgumentParser,
    add_table_options,
    check_count,
    check_outputs,
    command,
    report_stream,
    run_options,
    seed,
    table_or_solve,
    wrote,
)
from urgym.evaluation.scoring.match import play_match, record_name, records_directory
from urgym.evaluation.scoring.report import write_json
from urgym.solver import PositionIndex

from urgym import RULE_SET_NAMES, get_rules

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The ``stats`` command's arguments."""
    parser = ArgumentParser(
        prog="stats",
        description="Game-tree statistics (turns per player N, branching factor b, (b*c)^N) under "
        "each counting rule, from self-play games or saved records, beside the exact position count.",
        epilog="Raposo & Lamont (2023) report b = 2.45 and N = 106.35 from 2,000 games of expectimax:7 "
        "self-play under finkel; `stats --agent expectimax:7` plays the same (slow: about an hour on 2 cores).",
    )
    parser.add_argument("--rules", default="finkel", help=f"rule set: {', '.join(RULE_SET_NAMES)} (default finkel)")
    parser.add_argument("--pieces", type=int, help="pieces per side (default: the rule set's)")
    parser.add_argument("--agent", help="the agent playing itself (default perfect)")
    parser.add_argument("--games", type=int, help="self-play games (default 2000, as the paper)")
    parser.add_argument("--seed", type=seed, default=0, help="seed of the dice (default 0)")
    parser.add_argument("--records", metavar="DIR", help="count these saved records (.json, .rgn) instead of playing")
    parser.add_argument(
        "--save-games",
        metavar="DIR",
        help="keep the self-play games' records in DIR (a folder that already holds records is refused)",
    )
    parser.add_argument(
        "--replace-games",
        action="store_true",
        help="with --save-games: delete the records already in DIR (game-*.json) first",
    )
    parser.add_argument("--json", help="write the statistics as JSON to this path (- for standard output)")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: all cores)")
    add_table_options(parser)
    return parser


@command("stats")
def main(argv: list[str] | None = None) -> int:
    """Run ``stats``; return the exit status."""
    import tempfile
    from pathlib import Path

    from urgym.evaluation.review.game_stats import format_stats, game_tree_stats

    from urgym.records import GameRecord

    parser = build_parser()
    args = parser.parse_args(argv)
    check_count(parser, "games", args.games, 1, MAX_GAMES, "each game's counts are kept in memory")
    if args.workers is not None and args.workers < 1:
        parser.error(f"--workers must be at least 1, got {args.workers}")
    try:
        rules = get_rules(args.rules, args.pieces)
        if args.replace_games and args.save_games is None:
            raise ValueError("--replace-games goes with --save-games DIR")
        if args.records is not None and (args.save_games, args.agent, args.games) != (None, None, None):
            raise ValueError("--records counts saved games; --agent, --games and --save-games are for playing new ones")
        args.agent = "perfect" if args.agent is None else args.agent
        args.games = 2000 if args.games is None else args.games
        check_outputs(args)
        run_options(args)  # its checks (workers, backend) before any solve
        if args.records is not None:
            if not args.records.strip() or not Path(args.records).is_dir():
                raise ValueError(f"no game records in {args.records!r}: it is not a folder")
            files = sorted(p for p in Path(args.records).glob("*") if p.suffix in (".json", ".rgn"))
            if not files:
                raise ValueError(f"no game records (.json, .rgn) in {args.records}")
            stats = game_tree_stats(GameRecord.load(p, rules) for p in files)
            source = f"records in {args.records}"
        else:
            make_agent(args.agent)
            if args.save_games is not None:
                records_directory(args.save_games, args.replace_games)
    except ValueError as err:
        parser.error(str(err))
    if args.records is None:
        table = table_or_solve(rules, args, parser, (args.agent,))
        with tempfile.TemporaryDirectory() as scratch:
            folder = Path(scratch if args.save_games is None else args.save_games)
            play_match(
                args.agent,
                args.agent,
                rules,
                args.games,
                args.seed,
                table,
                replace(run_options(args), save_games=folder),
            )
            stats = game_tree_stats(GameRecord.load(folder / record_name(g)) for g in range(args.games))
        source = f"{make_agent(args.agent).spec} self-play, seed {args.seed}"
    try:
        positions = PositionIndex(stats.rules).size
    except ValueError:
        positions = None
    out = report_stream(args)
    print(format_stats(stats, source, positions), file=out)
    if args.json is not None:
        data = {**stats.to_dict(), "source": source, "positions": positions}
        wrote(write_json(args.json, data), out)
    return 0
