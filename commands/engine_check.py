"""``engine-check COMMAND``.

Check that a program speaks UEI 1, the Ur Engine Interface (see :mod:`urgym.agents.outside.engine`).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from urgym.agents.outside.engine import DEFAULT_MOVE_TIME, MAX_MOVE_TIME, EngineAgent, EngineError
from urgym.commands.common import MAX_POSITIONS, ArgumentParser, check_count, command, seed

from urgym import Game, Position, Rules, get_rules

__all__ = ["check_positions", "main"]


ENGINE_CHECK_RULES = ("finkel", "blitz", "masters", "aseb")
"""The rule sets an engine is checked on: every one the solver can solve."""


@command("engine-check")
def main(argv: list[str] | None = None) -> int:
    """``engine-check COMMAND``: check that a program speaks UEI 1 (see :mod:`urgym.agents.outside.engine`)."""
    parser = ArgumentParser(
        prog="engine-check",
        description="Check an engine program against UEI 1, the Ur Engine Interface: the "
        "handshake, a legal answer to every one of 1,000 positions of every solvable rule set, and its time per "
        "move. Exit status 0 when it conforms, 1 when it does not.",
    )
    parser.add_argument("--positions", type=int, default=1000, help="positions per rule set (default 1000)")
    parser.add_argument(
        "--rules",
        default=",".join(ENGINE_CHECK_RULES),
        help=f"comma-separated rule sets (default {','.join(ENGINE_CHECK_RULES)})",
    )
    parser.add_argument(
        "--move-time",
        type=float,
        default=DEFAULT_MOVE_TIME,
        help=f"seconds allowed per move (default {DEFAULT_MOVE_TIME:g})",
    )
    parser.add_argument("--seed", type=seed, default=0, help="seed of the positions (default 0)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the engine's command line")
    args = parser.parse_args(argv)
    if not args.command:
        parser.error("give the engine's command line, e.g. engine-check python3 -m urgym.examples.uei_engine")
    check_count(parser, "positions", args.positions, 1, MAX_POSITIONS)
    if not 0 < args.move_time <= MAX_MOVE_TIME:
        parser.error(f"--move-time must be more than 0 and at most {MAX_MOVE_TIME:g} seconds, got {args.move_time:g}")
    rule_sets = [get_rules(name.strip()) for name in args.rules.split(",") if name.strip()]
    if not rule_sets:
        parser.error("--rules names no rule set")
    started = time.perf_counter()
    try:
        engine = EngineAgent(args.command, args.move_time)
    except EngineError as err:
        print(f"not conformant: {err}")
        return 1
    print(
        f"handshake: {engine.name!r} in {1e3 * (time.perf_counter() - started):.0f} ms; id lines: "
        + (", ".join(f"{k}={v!r}" for k, v in engine.ids.items()) or "none")
    )
    try:
        for rules in rule_sets:
            times = []
            for position, roll in check_positions(rules, args.positions, args.seed):
                began = time.perf_counter()
                engine.select_move(position, roll)  # raises EngineError for an illegal or missing answer
                times.append(time.perf_counter() - began)
            ms = 1e3 * np.array(times)
            print(
                f"{rules.name}: {len(times):,} positions, every answer legal; ms per move: median "
                f"{np.median(ms):.2f}, 95th percentile {np.percentile(ms, 95):.2f}, max {ms.max():.2f}"
            )
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
