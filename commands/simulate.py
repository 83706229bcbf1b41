"""``ur-simulate``: games between the core's built-in policies, their win rates and the simulator's speed."""

from __future__ import annotations

import time

from urgym.commands.common import ArgumentParser, command, seed

from urgym.rules import RULE_SET_NAMES, get_rules
from urgym.simulate import POLICY_NAMES, simulate

__all__ = ["main"]


@command("ur-simulate")
def main(argv: list[str] | None = None) -> None:
    """``ur-simulate``: play games between built-in policies and report win rates and speed."""
    parser = ArgumentParser(prog="ur-simulate", description=main.__doc__)
    parser.add_argument("--rules", default="finkel", choices=RULE_SET_NAMES)
    parser.add_argument("--pieces", type=int, default=None, help="pieces per side (default: the rule set's)")
    parser.add_argument("--light", default="random", choices=POLICY_NAMES)
    parser.add_argument("--dark", default="random", choices=POLICY_NAMES)
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--seed", type=seed, default=0)
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    rules = get_rules(args.rules, args.pieces)
    simulate(rules, args.light, args.dark, games=1, seed=args.seed)  # compile (or load the cache) first
    start = time.perf_counter()
    result = simulate(rules, args.light, args.dark, games=args.games, seed=args.seed)
    elapsed = time.perf_counter() - start
    print(rules.describe())
    print(
        f"{args.games:,} games, light {args.light} vs dark {args.dark}: light wins "
        f"{100 * result.light_win_rate:.2f}%, {result.turns.mean() / 2:.1f} turns and "
        f"{result.moves.mean() / 2:.1f} moves per player per game, {args.games / elapsed:,.0f} games/s"
    )
