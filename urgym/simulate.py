"""Batch game simulation between built-in policies, on the core's batched game flow."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from urgym import core
from urgym.checks import integer
from urgym.game import check_seed
from urgym.rules import Rules, get_rules

__all__ = ["CHUNK_GAMES", "POLICY_NAMES", "SimulationResult", "policy_id", "simulate"]

POLICY_NAMES: tuple[str, ...] = tuple(core.BUILTIN_POLICIES)
"""Built-in numba policies: random, first (least advanced piece), last (most advanced), greedy."""

CHUNK_GAMES = 1 << 16
"""Games per numba call of :func:`simulate` (under a second even with the slowest built-in policy)."""


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
        """The share of games light won."""
        return float(np.mean(self.winners == 0))


def policy_id(name: str) -> int:
    """The kernel id of a built-in policy name."""
    if name not in core.BUILTIN_POLICIES:
        raise ValueError(f"unknown built-in policy {name!r}; built-in policies: {', '.join(POLICY_NAMES)}")
    return core.BUILTIN_POLICIES[name]


def simulate(
    rules: Rules | str = "finkel",
    light: str = "random",
    dark: str = "random",
    games: int = 1000,
    seed: int = 0,
    first_game: int = 0,
) -> SimulationResult:
    """Play ``games`` games between two built-in policies in numba.

    Game i is game ``first_game + i`` of ``seed`` in the core's game flow (its dice, and each policy's choices
    from the game's own policy stream), so a batch split into chunks gives the same games as one call.

    Args:
        rules: A :class:`Rules` or a rule-set name.
        light: Light's policy, one of :data:`POLICY_NAMES`.
        dark: Dark's policy.
        games: Number of games.
        seed: Seed, 0 to 2**64 - 1.
        first_game: Index of the first game's stream.
    """
    rules = get_rules(rules)
    seed, first_game = check_seed(seed), check_seed(first_game, "first_game", bits=63)
    games = integer(games, "games", 0)
    policies = np.array([policy_id(light), policy_id(dark)], dtype=np.int64)
    winners = np.empty(games, dtype=np.int64)
    turns = np.empty(games, dtype=np.int64)
    moves = np.empty(games, dtype=np.int64)
    geom = core.geometry(rules)
    flows = core.flow_buffers(min(games, CHUNK_GAMES))
    no_choice = np.full(flows.shape[0], -1, dtype=np.int64)
    for lo in range(0, games, CHUNK_GAMES):  # back in Python between chunks, so Ctrl-C is felt at once
        chunk = flows[: min(CHUNK_GAMES, games - lo)]
        core.start_games(chunk, rules.pieces, np.uint64(seed), first_game + lo)
        core.step_games(chunk, no_choice, policies, geom)  # built-in policies only: every game plays to its end
        winners[lo : lo + chunk.shape[0]] = _winners(chunk)
        turns[lo : lo + chunk.shape[0]] = chunk["turns"]
        moves[lo : lo + chunk.shape[0]] = chunk["played"]
    return SimulationResult(winners, turns, moves)


def _winners(flows: np.ndarray) -> np.ndarray:
    """0 where light has won, 1 where dark has (the side to move in a finished game lost)."""
    return 1 - ((flows["state"] >> core.TURN_SHIFT) & 1)
