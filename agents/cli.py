"""The commands of the agents layer: ``play`` (a human against an agent in the terminal, see :mod:`agents.play`)
and ``engine-check`` (an engine program against UEI 1, see :mod:`agents.engine`)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from agents.engine import DEFAULT_MOVE_TIME, EngineAgent, EngineError
from agents.perfect import PerfectAgent
from agents.play import cached_table, play_game
from agents.registry import agent_help, make_agent
from urgym import RULE_SET_NAMES, SIDES, Game, Position, Rules, get_rules
from urgym.cli import ArgumentParser, command, seed
from urgym.files import check_output

__all__ = ["check_positions", "engine_check_main", "main"]


@command("play")
def main(argv: list[str] | None = None, read: Callable[[str], str] = input,
         write: Callable[[str], None] = print, web: Callable[..., None] | None = None) -> int:
    """``play``: a human against an agent in the terminal, or with ``--web`` in the browser, through ``web`` (the
    server of :mod:`evaluation.web`, which the ``play`` command passes in: it lives in a higher layer)."""
    parser = ArgumentParser(
        prog="play", description="Play the Royal Game of Ur against an agent in the terminal.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog="agents:\n" + agent_help())
    parser.add_argument("--rules", default="finkel", help=f"rule set: {', '.join(RULE_SET_NAMES)} (default finkel)")
    parser.add_argument("--pieces", type=int, default=None, help="pieces per side (default: the rule set's)")
    parser.add_argument("--agent", default="expectimax:5", help="the opponent's agent spec (default expectimax:5)")
    parser.add_argument("--side", default="light", choices=[*SIDES, "random"], help="your side (light moves first)")
    parser.add_argument("--seed", type=seed, default=None, help="seed of the dice and the agent")
    parser.add_argument("--save", help="write the game's record (JSON, see urgym.GameRecord) to this file")
    parser.add_argument("--web", action="store_true", help="play in the browser: a page served on 127.0.0.1 "
                        "(the 'web' extra), guarded by a token in the URL it prints")
    parser.add_argument("--port", type=int, default=0, help="with --web: the port (default: a free one)")
    parser.add_argument("--no-browser", action="store_true", help="with --web: print the URL, open no browser")
    args = parser.parse_args(argv)
    if (args.port or args.no_browser) and not args.web:
        parser.error("--port and --no-browser go with --web")
    if not 0 <= args.port <= 65535:
        parser.error(f"--port is 0 (a free port) to 65535, got {args.port}")
    if args.web and web is None:
        parser.error("--web is served by the play command (evaluation.cli.play_main)")
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
    if args.web:
        web(rules, agent, cached_table(rules), port=args.port, open_browser=not args.no_browser, write=write,
            side=args.side, seed=args.seed)
        return 0
    side = args.side
    if side == "random":
        side = SIDES[int(np.random.default_rng(args.seed).integers(2))]
    try:
        play_game(rules, agent, side, args.seed, read, write, args.save)
    except (EOFError, KeyboardInterrupt):
        write("\nGame abandoned.")
    return 0


ENGINE_CHECK_RULES = ("finkel", "blitz", "masters", "aseb")
"""The rule sets an engine is checked on: every one the solver can solve."""


@command("engine-check")
def engine_check_main(argv: list[str] | None = None) -> int:
    """``engine-check COMMAND``: check that a program speaks UEI 1 (see :mod:`agents.engine`)."""
    parser = ArgumentParser(
        prog="engine-check", description="Check an engine program against UEI 1, the Ur Engine Interface: the "
        "handshake, a legal answer to every one of 1,000 positions of every solvable rule set, and its time per "
        "move. Exit status 0 when it conforms, 1 when it does not.")
    parser.add_argument("--positions", type=int, default=1000, help="positions per rule set (default 1000)")
    parser.add_argument("--rules", default=",".join(ENGINE_CHECK_RULES),
                        help=f"comma-separated rule sets (default {','.join(ENGINE_CHECK_RULES)})")
    parser.add_argument("--move-time", type=float, default=DEFAULT_MOVE_TIME,
                        help=f"seconds allowed per move (default {DEFAULT_MOVE_TIME:g})")
    parser.add_argument("--seed", type=seed, default=0, help="seed of the positions (default 0)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the engine's command line")
    args = parser.parse_args(argv)
    if not args.command:
        parser.error("give the engine's command line, e.g. engine-check python3 examples/uei_engine.py")
    if args.positions < 1:
        parser.error(f"--positions must be at least 1, got {args.positions}")
    if not args.move_time > 0 or args.move_time == float("inf"):
        parser.error(f"--move-time must be a positive number of seconds, got {args.move_time}")
    rule_sets = [get_rules(name.strip()) for name in args.rules.split(",") if name.strip()]
    if not rule_sets:
        parser.error("--rules names no rule set")
    started = time.perf_counter()
    try:
        engine = EngineAgent(args.command, args.move_time)
    except EngineError as err:
        print(f"not conformant: {err}")
        return 1
    print(f"handshake: {engine.name!r} in {1e3 * (time.perf_counter() - started):.0f} ms; id lines: "
          + (", ".join(f"{k}={v!r}" for k, v in engine.ids.items()) or "none"))
    try:
        for rules in rule_sets:
            times = []
            for position, roll in check_positions(rules, args.positions, args.seed):
                began = time.perf_counter()
                engine.select_move(position, roll)  # raises EngineError for an illegal or missing answer
                times.append(time.perf_counter() - began)
            ms = 1e3 * np.array(times)
            print(f"{rules.name}: {len(times):,} positions, every answer legal; ms per move: median "
                  f"{np.median(ms):.2f}, 95th percentile {np.percentile(ms, 95):.2f}, max {ms.max():.2f}")
    except EngineError as err:
        print(f"not conformant: {err}")
        return 1
    finally:
        engine.close()
    print(f"conformant: UEI 1 on {', '.join(r.name for r in rule_sets)}")
    return 0


def check_positions(rules: Rules, count: int, seed_value: int) -> list[tuple[Position, int]]:
    """``count`` decisions (two or more legal moves where there are) from seeded random play of ``rules``."""
    rng = np.random.default_rng(seed_value)
    found: list[tuple[Position, int]] = []
    game_index = 0
    while len(found) < count:
        game = Game(rules, seed_value, game_index)
        game_index += 1
        while not game.is_over and len(found) < count:
            if len(game.legal_moves) >= 2 or rng.random() < 0.1:
                found.append((game.position, game.roll))
            game.play(game.legal_moves[int(rng.integers(len(game.legal_moves)))])
    return found
