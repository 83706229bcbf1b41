"""``play``: the command of the agents layer, a human against an agent in the terminal (see :mod:`agents.play`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np

from agents.perfect import PerfectAgent
from agents.play import play_game
from agents.registry import agent_help, make_agent
from urgym import RULE_SET_NAMES, SIDES, get_rules
from urgym.cli import ArgumentParser, command, seed
from urgym.files import check_output

__all__ = ["main"]


@command("play")
def main(argv: list[str] | None = None, read: Callable[[str], str] = input,
         write: Callable[[str], None] = print) -> int:
    parser = ArgumentParser(
        prog="play", description="Play the Royal Game of Ur against an agent in the terminal.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog="agents:\n" + agent_help())
    parser.add_argument("--rules", default="finkel", help=f"rule set: {', '.join(RULE_SET_NAMES)} (default finkel)")
    parser.add_argument("--pieces", type=int, default=None, help="pieces per side (default: the rule set's)")
    parser.add_argument("--agent", default="expectimax:5", help="the opponent's agent spec (default expectimax:5)")
    parser.add_argument("--side", default="light", choices=[*SIDES, "random"], help="your side (light moves first)")
    parser.add_argument("--seed", type=seed, default=None, help="seed of the dice and the agent")
    parser.add_argument("--save", help="write the game's record (JSON, see urgym.GameRecord) to this file")
    args = parser.parse_args(argv)
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
        missing = "it is solved and cached first if missing" if agent.solve else "it must be cached already"
        write(f"Loading the solved table of {rules.describe()} ({missing}).")
        agent.table(rules)
    side = args.side
    if side == "random":
        side = SIDES[int(np.random.default_rng(args.seed).integers(2))]
    try:
        play_game(rules, agent, side, args.seed, read, write, args.save)
    except (EOFError, KeyboardInterrupt):
        write("\nGame abandoned.")
    return 0
