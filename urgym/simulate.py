"""Batch game simulation in numba between built-in policies."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np

from urgym import core
from urgym.cli import ArgumentParser, command, seed
from urgym.core import geometry, roll_cumulative
from urgym.game import check_seed
from urgym.rules import Rules, get_rules

__all__ = ["POLICY_NAMES", "SimulationResult", "policy_id", "simulate"]

POLICY_NAMES: tuple[str, ...] = tuple(core.BUILTIN_POLICIES)
"""Built-in numba policies: random, first (least advanced piece), last (most advanced), greedy."""


@dataclass(frozen=True)
class SimulationResult:
    """Outcome of a batch of simulated games.

    Attributes:
        winners: Per game, 0 if light won and 1 if dark won.
        turns: Per game, turns played by both sides together (extra rolls stay in one turn).
        moves: Per game, moves played by both sides together.
    """

    winners: np.ndarray
    turns: np.ndarray
    moves: np.ndarray

    @property
    def light_win_rate(self) -> float:
        return float(np.mean(self.winners == 0))


def policy_id(name: str) -> int:
    """The kernel id of a built-in policy name."""
    if name not in core.BUILTIN_POLICIES:
        raise ValueError(f"unknown built-in policy {name!r}; built-in policies: {', '.join(POLICY_NAMES)}")
    return core.BUILTIN_POLICIES[name]


def simulate(rules: Rules | str = "finkel", light: str = "random", dark: str = "random", games: int = 1000,
             seed: int = 0, first_game: int = 0) -> SimulationResult:
    """Play ``games`` games between two built-in policies in numba.

    Game i draws its dice and random choices from a stream fixed by (seed, first_game + i), so a batch
    split into chunks gives the same games as one call.

    Args:
        rules: A :class:`Rules` or a rule-set name.
        light: Light's policy, one of :data:`POLICY_NAMES`.
        dark: Dark's policy.
        games: Number of games.
        seed: Non-negative seed.
        first_game: Index of the first game's stream.
    """
    rules = get_rules(rules)
    seed, first_game = check_seed(seed), check_seed(first_game, "first_game", bits=63)
    if isinstance(games, bool) or not isinstance(games, (int, np.integer)) or games < 0:
        raise ValueError(f"games must be a non-negative integer, got {games!r}")
    policies = np.array([policy_id(light), policy_id(dark)], dtype=np.int64)
    winners = np.empty(games, dtype=np.int64)
    turns = np.empty(games, dtype=np.int64)
    moves = np.empty(games, dtype=np.int64)
    geom, dice = geometry(rules), roll_cumulative(rules)
    for lo in range(0, games, CHUNK_GAMES):  # back in Python between chunks, so Ctrl-C is felt at once
        hi = min(lo + CHUNK_GAMES, games)
        core.simulate_games(policies, geom, dice, np.uint64(seed), first_game + lo, winners[lo:hi], turns[lo:hi],
                            moves[lo:hi])
    return SimulationResult(winners, turns, moves)


CHUNK_GAMES = 1 << 16
"""Games per numba call of :func:`simulate` (under a second even with the slowest built-in policy)."""


@command("ur-simulate")
def main(argv: list[str] | None = None) -> None:
    """``ur-simulate``: play games between built-in policies and report win rates and speed."""
    from urgym.rules import RULE_SET_NAMES

    parser = ArgumentParser(prog="ur-simulate", description=main.__doc__)
    parser.add_argument("--rules", default="finkel", choices=RULE_SET_NAMES)
    parser.add_argument("--pieces", type=int, default=None, help="pieces per side (default: the rule set's)")
    parser.add_argument("--light", default="random", choices=POLICY_NAMES)
    parser.add_argument("--dark", default="random", choices=POLICY_NAMES)
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--seed", type=seed, default=0)
    args = parser.parse_args(argv)
    rules = get_rules(args.rules, args.pieces)
    simulate(rules, args.light, args.dark, games=1, seed=args.seed)  # compile (or load the cache) first
    start = time.perf_counter()
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    result = simulate(rules, args.light, args.dark, games=args.games, seed=args.seed)
    elapsed = time.perf_counter() - start
    print(rules.describe())
    print(f"{args.games:,} games, light {args.light} vs dark {args.dark}: light wins "
          f"{100 * result.light_win_rate:.2f}%, {result.turns.mean() / 2:.1f} turns and "
          f"{result.moves.mean() / 2:.1f} moves per player per game, {args.games / elapsed:,.0f} games/s")


if __name__ == "__main__":
    sys.exit(main())
