"""``play``: a human against an agent, in the terminal or in the browser.

The terminal game is :mod:`urgym.evaluation.play.terminal`; ``--web`` serves :mod:`urgym.evaluation.play.web`.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

import numpy as np
from urgym.agents.perfect import PerfectAgent
from urgym.agents.registry import agent_help, make_agent
from urgym.commands.common import AUTO_SOLVE_MINUTES, ArgumentParser, check_solve_allowed, command, seed
from urgym.evaluation.play.terminal import cached_table, play_game
from urgym.solver import table_for

from urgym import RULE_SET_NAMES, SIDES, get_rules
from urgym.files import check_output

__all__ = ["main"]


@command("ur-play")
def main(
    argv: list[str] | None = None, read: Callable[[str], str] = input, write: Callable[[str], None] = print
) -> int:
    """``play``: a human against an agent in the terminal, or with ``--web`` in the browser.

    ``read`` and ``write`` are the terminal's input and output.
    """
    parser = ArgumentParser(
        prog="ur-play",
        description="Play the Royal Game of Ur against an agent in the terminal.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="agents:\n" + agent_help(),
    )
    parser.add_argument("--rules", default="finkel", help=f"rule set: {', '.join(RULE_SET_NAMES)} (default finkel)")
    parser.add_argument("--pieces", type=int, default=None, help="pieces per side (default: the rule set's)")
    parser.add_argument("--agent", default="expectimax:5", help="the opponent's agent spec (default expectimax:5)")
    parser.add_argument("--side", default="light", choices=[*SIDES, "random"], help="your side (light moves first)")
    parser.add_argument("--seed", type=seed, default=None, help="seed of the dice and the agent")
    parser.add_argument("--save", help="write the game's record (JSON, see urgym.GameRecord) to this file")
    parser.add_argument(
        "--two-players",
        action="store_true",
        help="two people take turns at this keyboard (no agent; hints off unless --hints)",
    )
    parser.add_argument("--hints", action="store_true", help="with --two-players: allow hints (h)")
    parser.add_argument(
        "--web",
        action="store_true",
        help="play in the browser: a page served on 127.0.0.1 "
        "(the 'web' extra), guarded by a token in the URL it prints",
    )
    parser.add_argument("--port", type=int, default=0, help="with --web: the port (default: a free one)")
    parser.add_argument("--no-browser", action="store_true", help="with --web: print the URL, open no browser")
    parser.add_argument(
        "--solve",
        action="store_true",
        help=f"--agent perfect: solve the missing table even when that takes longer than {AUTO_SOLVE_MINUTES:g} "
        "minutes",
    )
    args = parser.parse_args(argv)
    if args.hints and not args.two_players:
        parser.error("--hints goes with --two-players (against an agent, hints are always on: type h)")
    if args.two_players and args.web:
        parser.error("--two-players is the terminal's; on the page choose the opponent 'A friend'")
    if (args.port or args.no_browser) and not args.web:
        parser.error("--port and --no-browser go with --web")
    if not 0 <= args.port <= 65535:
        parser.error(f"--port is 0 (a free port) to 65535, got {args.port}")
    try:
        rules = get_rules(args.rules, args.pieces)
        agent = make_agent(args.agent, seed=args.seed)
        agent.check_rules(rules)
    except ValueError as err:
        parser.error(str(err))
    if args.save is not None:
        try:
            check_output(args.save)
        except ValueError as err:
            parser.error(f"--save: {err}")
    if isinstance(agent, PerfectAgent):
        try:
            estimate = check_solve_allowed(rules, args.solve) if agent.solve else None
        except ValueError as err:
            parser.error(str(err))
        if estimate is not None:  # never a silent solve: what it takes, before it starts
            write(f"No solved table of {rules.describe()} yet: solving it first ({estimate.describe()}).")
        else:
            missing = "" if agent.solve else " (it must be cached already)"
            write(f"Loading the solved table of {rules.describe()}{missing}.")
        # A damaged table is moved aside and solved again like a missing one: only within what was allowed above.
        allowed = math.inf if args.solve else AUTO_SOLVE_MINUTES
        try:
            table_for(rules, solve=agent.solve, max_solve_minutes=allowed)
        except ValueError as err:
            parser.error(str(err))
        agent.table(rules)
    if args.web:
        from urgym.evaluation.play.web import serve

        serve(
            rules,
            agent,
            cached_table(rules),
            port=args.port,
            open_browser=not args.no_browser,
            write=write,
            side=args.side,
            seed=args.seed,
        )
        return 0
    side = args.side
    if side == "random":
        side = SIDES[int(np.random.default_rng(args.seed).integers(2))]
    try:
        if args.two_players:
            play_game(rules, None, "light", args.seed, read, write, args.save, hints=args.hints)
        else:
            play_game(rules, agent, side, args.seed, read, write, args.save)
    except (EOFError, KeyboardInterrupt):
        write("\nGame abandoned.")
    return 0
