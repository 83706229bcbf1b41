"""``evaluate``: how far an agent is from perfect play.

Examples::

    evaluate --agent expectimax --depth 7                  # against perfect play on finkel
    evaluate --agent greedy --opponent expectimax:3 --games 2000 --json out.json
    evaluate --tournament random,greedy,heuristic,expectimax:3,expectimax:7,perfect --plot t.png
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from urgym.agents import agent_help, builtin_name, make_agent
from urgym.commands.common import (
    MAX_GAMES,
    MAX_POSITIONS,
    ArgumentParser,
    add_table_options,
    check_count,
    check_outputs,
    check_solve_allowed,
    command,
    report_stream,
    run_options,
    seed,
    table_or_solve,
    write_outputs,
    wrote,
)
from urgym.evaluation.scoring.card import CARD_RULE_SETS, agent_card, card_header, card_row
from urgym.evaluation.scoring.exact import exact_results, exact_tournament, save_worst
from urgym.evaluation.scoring.match import play_match, records_directory
from urgym.evaluation.scoring.policies import EXACT_MAX_MINUTES, check_exact_fits, estimate_exact
from urgym.evaluation.scoring.positions import (
    DEFAULT_POSITIONS,
    HELD_OUT_POSITIONS,
    TEST_SET_VERSION,
    score_positions,
    split_positions,
)
from urgym.evaluation.scoring.report import (
    format_exact,
    format_exact_tournament,
    format_exploitability,
    format_match,
    format_positions,
    format_tournament,
    format_worst,
    match_rows,
    plot_match,
    plot_tournament,
    tournament_rows,
    write_json,
)
from urgym.evaluation.scoring.runner import BACKENDS, require_ray
from urgym.evaluation.scoring.tournament import pair_folders, run_tournament, tournament_specs
from urgym.solver import is_cached, table_for
from urgym.solver.budget import estimate_solve

from urgym import RULE_SET_NAMES, Rules, __version__, get_rules

MAX_WORST = 10_000
"""The most worst decisions ``--worst`` lists (each is a few lines and, with --save-worst, a few records)."""

__all__ = ["build_parser", "main"]

DEFAULT_GAMES = 150


def build_parser() -> argparse.ArgumentParser:
    """The ``evaluate`` command's arguments."""
    parser = ArgumentParser(
        prog="evaluate",
        description="Benchmark an agent against perfect play (or any other agent).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("Examples::")[1] + "\nAgent parameters may follow --agent as options "
        "(--depth 7), or be written into the spec (expectimax:7).\n\nagents:\n" + agent_help(),
    )
    parser.add_argument("--agent", help="the agent to evaluate (a spec: expectimax, expectimax:7, greedy, ...)")
    parser.add_argument("--opponent", default="perfect", help="its opponent's spec (default: perfect)")
    parser.add_argument("--tournament", help="comma-separated specs: every pair plays, every agent is benchmarked")
    parser.add_argument(
        "--rules",
        default=None,
        help=f"rule set: {', '.join(RULE_SET_NAMES)} (default finkel; with --card, a comma-separated "
        "list, default finkel,blitz,masters)",
    )
    parser.add_argument("--pieces", type=int, help="pieces per side (default: the rule set's)")
    parser.add_argument(
        "--games",
        type=int,
        help=f"games per match, sides alternating (default {DEFAULT_GAMES}; 0: the agent's position benchmark alone)",
    )
    parser.add_argument(
        "--positions",
        type=int,
        help=f"positions of the position benchmark (default {DEFAULT_POSITIONS:,}, or {HELD_OUT_POSITIONS:,} of the "
        "held-out set; 0 skips it)",
    )
    parser.add_argument(
        "--position-set",
        choices=("test", "held-out"),
        default="test",
        help="the position benchmark's decisions: the test set (default, what cards and tables report) or the "
        f"held-out check ({HELD_OUT_POSITIONS:,} decisions of a seed nothing trains or selects on)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="worker processes (default: all cores; the main process alone for agents that run best "
        "there, such as neural networks, which answer a thousand games in one batch)",
    )
    parser.add_argument("--seed", type=seed, default=0, help="seed of the dice and the agents (default 0)")
    parser.add_argument("--json", help="write the results as JSON to this path (- for standard output)")
    parser.add_argument("--csv", help="write the results as CSV to this path (- for standard output)")
    parser.add_argument("--plot", help="write a plot to this path (.png, .pdf, .svg)")
    parser.add_argument(
        "--save-games",
        metavar="DIR",
        help="write every game's record to DIR (game-000000.json, ...; review them with `review`); "
        "a folder that already holds records is refused",
    )
    parser.add_argument(
        "--replace-games",
        action="store_true",
        help="with --save-games: delete the records already in DIR (game-*.json) first",
    )
    parser.add_argument(
        "--card",
        action="store_true",
        help="the agent's card: its regret on the position benchmark and its result against perfect "
        "play on every solved rule set it can play (--rules: a comma-separated subset of "
        "finkel,blitz,masters), as one leaderboard row and, with --json, as JSON",
    )
    parser.add_argument(
        "--exact",
        action="store_true",
        help="instead of sampling games: the agent's exact winning chance against --opponent, from every "
        "decision of the rule set (both agents are asked their move in every position; solvable rules only)",
    )
    parser.add_argument(
        "--best-response",
        action="store_true",
        help="with --exact: also the agent's exploitability, the winning chance a perfect adversary that knows "
        "its moves takes beyond the game's value",
    )
    parser.add_argument(
        "--worst",
        type=int,
        default=0,
        metavar="N",
        help="with --exact: also the N positions where the agent loses most against --opponent, weighted by how "
        "often its games reach them",
    )
    parser.add_argument(
        "--save-worst",
        metavar="DIR",
        help="with --worst: write each of those decisions as a record `review` reads (game-worst-*.json)",
    )
    parser.add_argument(
        "--max-minutes",
        type=float,
        default=EXACT_MAX_MINUTES,
        help=f"with --exact: refuse work estimated to take longer (default {EXACT_MAX_MINUTES:g})",
    )
    parser.add_argument(
        "--no-policy-cache",
        action="store_true",
        help="with --exact: ask the agents again rather than read their cached policies, and cache nothing",
    )
    parser.add_argument(
        "--backend",
        default="process",
        choices=BACKENDS,
        help="run games in local worker processes or as Ray tasks (default process)",
    )
    parser.add_argument("--ray-address", help="the Ray cluster to use with --backend ray (default: local)")
    parser.add_argument(
        "--no-table",
        action="store_true",
        help="play the match without the solved table: win rates only (no regrets, no luck-adjusted "
        "rates, no position benchmark), no solve first",
    )
    add_table_options(parser)
    return parser


@command("evaluate")
def main(argv: list[str] | None = None) -> int:
    """Run ``evaluate``; return the exit status."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if args.exact:  # options that an exact result never reads are refused, not ignored
        for option, given in (("--games", args.games), ("--positions", args.positions), ("--card", args.card)):
            if given is not None and given is not False:
                parser.error(f"{option} does not go with --exact (an exact result plays no games and no positions)")
    args.games = DEFAULT_GAMES if args.games is None else args.games
    if args.exact and args.position_set != "test":
        parser.error("--position-set does not go with --exact (an exact result scores no positions)")
    default_positions = HELD_OUT_POSITIONS if args.position_set == "held-out" else DEFAULT_POSITIONS
    args.positions = (0 if args.exact else default_positions) if args.positions is None else args.positions
    if not 0 < args.max_minutes < math.inf:
        parser.error(f"--max-minutes must be a positive number of minutes, got {args.max_minutes}")
    if args.card and args.no_table:
        parser.error("--card measures against the solved tables; leave out --no-table")
    if args.card:
        return _card_main(parser, args, extra)
    if args.tournament and args.agent:
        parser.error("give either --agent or --tournament, not both")
    for option, given in (
        ("--best-response", args.best_response),
        ("--worst", args.worst),
        ("--no-policy-cache", args.no_policy_cache),
        ("--max-minutes", args.max_minutes != EXACT_MAX_MINUTES),
    ):
        if given and not args.exact:
            parser.error(f"{option} goes with --exact")
    if args.save_worst is not None and not args.worst:
        parser.error("--save-worst goes with --worst N")
    check_count(parser, "worst", args.worst, 0, MAX_WORST)
    if args.exact:
        if args.tournament and (args.best_response or args.worst):
            parser.error("--best-response and --worst go with --agent, not --tournament")
        for option, given in (
            ("--no-table", args.no_table),
            ("--save-games", args.save_games),
            ("--csv", args.csv),
            ("--plot", args.plot),
        ):
            if given:
                parser.error(f"{option} does not go with --exact (an exact result plays no games)")
    if not args.tournament and not args.agent:
        parser.error("give --agent SPEC (for example --agent expectimax --depth 7) or --tournament SPEC,SPEC,...")
    if extra and not args.agent:
        hint = ""
        if args.tournament and not extra[0].startswith("-"):
            hint = (
                f"; the agents of --tournament are one comma-separated list: --tournament "
                f"{','.join([args.tournament, *(e for e in extra if not e.startswith('-'))])}"
            )
        parser.error(f"unrecognized arguments: {' '.join(extra)}{hint}")
    check_count(parser, "games", args.games, 0, MAX_GAMES, "results are kept in memory")
    check_count(parser, "positions", args.positions, 0, MAX_POSITIONS)
    if args.games == 0:
        _check_positions_alone(parser, args)
    if args.workers is not None and args.workers < 1:
        parser.error(f"--workers must be at least 1, got {args.workers}")
    if args.positions and args.pieces == 1:
        parser.error(
            "with 1 piece no decision has a choice of moves, so there is no position benchmark; "
            "give --positions 0 or more pieces"
        )
    try:
        _check_modes(args)
        rules = get_rules("finkel" if args.rules is None else args.rules, args.pieces)
        specs = _specs(args, extra)
        for spec in specs:
            make_agent(spec).check_rules(rules)
        if args.tournament:
            canonical = tournament_specs(list(specs))  # refuses an agent given twice
            folders = pair_folders(canonical, args.save_games) if args.save_games is not None else {}
        else:
            folders = {None: args.save_games} if args.save_games is not None else {}
        if args.save_worst is not None:
            folders = {"worst": args.save_worst}
        for folder in folders.values():  # before any game: a bad or used folder is refused now
            records_directory(folder, args.replace_games)
        check_outputs(args)
        run = run_options(args)  # its checks (workers, backend) before any solve
    except ValueError as err:
        parser.error(str(err))
    if args.no_table and any(builtin_name(s) == "perfect" for s in specs):
        parser.error(
            "--no-table: the perfect player (the default opponent) needs the solved table; give other "
            "agents (--agent, --opponent)"
        )
    needs_table = not args.exact or args.worst or any(builtin_name(s) == "perfect" for s in specs)
    if args.exact:  # the whole cost (a table's solve included) said, and refused past what fits, before any work
        _check_exact_cost(args, rules, specs, bool(needs_table))
    table = None if args.no_table or not needs_table else table_or_solve(rules, args, parser, specs)
    if args.no_table:
        print(
            "note: --no-table: win rates only (regrets, luck-adjusted rates and the position benchmark need the "
            "solved table)",
            file=sys.stderr,
        )
    positions = []
    if table is not None and args.positions and not args.exact:
        try:  # before any long work: a rule set with few choices may not offer enough positions
            positions = split_positions(table, args.position_set, args.positions)
        except ValueError as err:
            parser.error(f"{err} (--positions 0 skips the position benchmark)")
    out = report_stream(args)
    if args.exact:
        return _exact_main(args, rules, specs, out)
    if args.tournament:
        result = run_tournament(list(specs), rules, args.games, args.seed, table, args.positions, run)
        print(format_tournament(result), file=out)
        write_outputs(args, result.to_dict(), tournament_rows(result), lambda path: plot_tournament(path, result))
        return 0
    if args.games == 0:
        return _positions_main(args, rules, specs[0], table, positions, run, out)
    match = play_match(specs[0], specs[1], rules, args.games, args.seed, table, run)
    benchmarks = {}
    if positions:
        for spec in dict.fromkeys(specs):
            bench = score_positions(
                spec, table, positions, replace(run, save_games=None, replace_games=False), args.position_set
            )
            benchmarks[bench.spec] = bench
    print(format_match(match, benchmarks), file=out)
    if args.save_games is not None:
        print(f"saved {match.games} game records in {args.save_games}", file=out)
    data = {"match": match.to_dict(), "position_benchmark": [b.to_dict() for b in benchmarks.values()]}
    write_outputs(args, data, match_rows(match, benchmarks), lambda path: plot_match(path, match, benchmarks))
    return 0


def _check_positions_alone(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``--games 0`` is the agent's position benchmark alone: refuse what needs games, or no benchmark at all."""
    for option, given in (
        ("--tournament", args.tournament),
        ("--save-games", args.save_games),
        ("--no-table", args.no_table),
        ("--plot", args.plot),
    ):
        if given:
            parser.error(f"--games 0 scores the agent on the position benchmark alone: {option} needs games")
    if args.positions == 0:
        parser.error("--games 0 with --positions 0 would measure nothing: give --positions N (default 1000)")


def _positions_main(args, rules: Rules, spec: str, table: Any, positions: list, run: Any, out: Any) -> int:
    """``evaluate --games 0``: the agent's regret on the position benchmark's test set, no games played."""
    bench = score_positions(
        spec, table, positions, replace(run, save_games=None, replace_games=False), args.position_set
    )
    print(format_positions(rules, {bench.spec: bench}), file=out)
    data = {"position_benchmark": [bench.to_dict()], "urgym": __version__, "table_hash": table.header["checksum"]}
    row = {"agent": bench.spec, "rules": rules.name, "pieces": rules.pieces, "position_set": args.position_set}
    row["test_set_version"] = TEST_SET_VERSION
    write_outputs(args, data, [{**row, **bench.regret.to_dict()}], lambda path: Path(path))
    return 0


def _exact_main(args: argparse.Namespace, rules: Rules, specs: tuple[str, ...], out: Any) -> int:
    """``evaluate --exact``: exact results from every decision of the rule set (see docs/evaluation.md)."""
    progress, cache = not args.no_progress, not args.no_policy_cache
    if args.tournament:
        result = exact_tournament(list(specs), rules, args.seed, progress, cache)
        print(format_exact_tournament(result), file=out)
        if args.json is not None:
            wrote(write_json(args.json, {"exact_tournament": result.to_dict()}), out)
        return 0
    report = exact_results(specs[0], specs[1], rules, args.seed, progress, args.best_response, args.worst, cache)
    result, exploit = report.match, report.exploitability
    print(format_exact(result), file=out)
    data = {"exact": {key: result.to_dict()[key] for key in ("win_rate", "win_rate_light", "win_rate_dark")}}
    data["exact"].update(agent=result.agent, opponent=result.opponent, rules=result.rules)
    data["exact"]["exact_policies"] = result.exact_policies
    data["urgym"] = __version__
    if is_cached(rules):
        data["table_hash"] = table_for(rules, progress=False).header["checksum"]
    if exploit is not None:
        print(format_exploitability(exploit), file=out)
        data["exact"]["best_response_win_rate"] = exploit["best_response_win_rate"]
        data["exact"]["exploitability_points"] = exploit["exploitability_points"]
    if args.worst:
        print(format_worst(report.worst, result), file=out)
        data["exact"]["worst"] = [w.to_dict() for w in report.worst]
        if args.save_worst is not None:
            saved = save_worst(report.worst, result.agent, args.save_worst)
            print(
                f"saved {len(saved)} records of those decisions in {args.save_worst} (review them: "
                f"`review {args.save_worst}`)",
                file=out,
            )
    if args.json is not None:
        wrote(write_json(args.json, data), out)
    return 0


def _check_exact_cost(args: argparse.Namespace, rules: Rules, specs: tuple[str, ...], needs_table: bool) -> None:
    """Print the estimate of ``evaluate --exact`` and refuse it past the free memory or ``--max-minutes``."""
    if args.tournament:
        evaluations = len(specs) * (len(specs) - 1) // 2
    else:
        evaluations = 1 + bool(args.best_response) + bool(args.worst)
    estimate = estimate_exact(list(dict.fromkeys(specs)), rules, evaluations, args.seed, not args.no_policy_cache)
    if needs_table and not is_cached(rules):
        estimate = replace(estimate, solve_minutes=estimate_solve(rules).minutes)
    print(f"exact evaluation: {estimate.describe()}", file=sys.stderr)
    subject = f"exact evaluation of {rules.name} with {rules.pieces} pieces"
    check_exact_fits(estimate, args.max_minutes, subject)  # a ValueError: one line and status 2, before any work


def _card_main(parser: argparse.ArgumentParser, args: argparse.Namespace, extra: list[str]) -> int:
    """``evaluate --agent SPEC --card``: the agent's card (see :mod:`urgym.evaluation.scoring.card`)."""
    if not args.agent:
        parser.error("--card needs --agent SPEC")
    for option, given in (
        ("--tournament", args.tournament),
        ("--opponent", args.opponent != "perfect"),
        ("--csv", args.csv),
        ("--plot", args.plot),
        ("--save-games", args.save_games),
        ("--backend", args.backend != "process"),
    ):
        if given:
            parser.error(f"{option} does nothing with --card (a card plays perfect play on each rule set)")
    if args.games < 1 or (args.workers is not None and args.workers < 1) or args.positions < 1:
        parser.error("--games, --workers and --positions must be at least 1 with --card")
    names = tuple(n.strip() for n in (",".join(CARD_RULE_SETS) if args.rules is None else args.rules).split(","))
    try:
        rule_sets = tuple(get_rules(n, args.pieces).name for n in names if n)
        spec = _specs(args, extra)[0]
        make_agent(spec)
        check_outputs(args)
        if not args.no_solve:  # every rule set's solve is allowed (or refused with its estimate) before any work
            for name in rule_sets:
                check_solve_allowed(get_rules(name, args.pieces), args.solve)
    except ValueError as err:
        parser.error(str(err))
    card = agent_card(
        spec, rule_sets, args.games, args.seed, args.positions, run_options(args), not args.no_solve, args.pieces
    )
    out = report_stream(args)
    print(card_header(rule_sets), file=out)
    print(card_row(card), file=out)
    for name, entry in card["rule_sets"].items():
        if "skipped" in entry:
            print(f"{name}: skipped ({entry['skipped']})", file=out)
    if args.json is not None:
        wrote(write_json(args.json, card), out)
    return 0


def _check_modes(args: argparse.Namespace) -> None:
    """Refuse options that the chosen mode would ignore."""
    if args.tournament and args.position_set != "test":
        raise ValueError(
            "--position-set held-out goes with one agent (--games 0, or a match); a tournament's table "
            "reports the test set"
        )
    if args.ray_address is not None and args.backend != "ray":
        raise ValueError("--ray-address names a Ray cluster for --backend ray; add --backend ray or leave it out")
    if args.replace_games and args.save_games is None and getattr(args, "save_worst", None) is None:
        raise ValueError("--replace-games goes with --save-games DIR or --save-worst DIR")
    if args.no_table and args.no_solve:
        raise ValueError("--no-solve does nothing with --no-table (no table is used)")
    if args.backend == "ray":
        require_ray()  # a missing extra is said now, not after the solve


def _specs(args: argparse.Namespace, extra: list[str]) -> tuple[str, ...]:
    if args.tournament:
        specs = tuple(s.strip() for s in args.tournament.split(",") if s.strip())
        if len(specs) < 2:
            raise ValueError(f"a tournament needs at least two agents, got {args.tournament!r}")
        return specs
    agent = args.agent
    if extra:
        if ":" in agent or " " in agent:
            raise ValueError(
                f"give the agent's parameters either in the spec ({agent!r}) or as options "
                f"({' '.join(extra)}), not both"
            )
        agent = " ".join([agent, *extra])
    return agent, args.opponent
