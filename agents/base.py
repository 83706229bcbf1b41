"""The agent interface every player of the package implements."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from urgym import Position, Rules
from urgym.batch import NO_STREAM, Decisions

__all__ = ["Agent", "legal_moves_or_raise"]


class Agent(ABC):
    """Chooses a move for a position and a roll.

    Agents are deterministic for a seed: :meth:`reseed` restarts their random stream (only agents that
    randomize use it). ``spec`` is the registry spec that rebuilds the agent (see :func:`urgym.agents.make_agent`).
    """

    spec: str = "agent"

    def __init__(self, seed: int | None = None) -> None:
        self.reseed(seed)

    def reseed(self, seed: int | None) -> None:
        """Restart the agent's random stream from ``seed`` (``None``: fresh entropy)."""
        self.rng = np.random.default_rng(seed)

    @abstractmethod
    def select_move(self, position: Position, roll: int) -> int:
        """The source path position of the move to play (0 enters a piece from home).

        Raises:
            ValueError: If the roll has no legal move in ``position`` (the turn passes without a decision).
        """

    def select_moves(self, rules: Rules, decisions: Decisions) -> np.ndarray:
        """One move per decision of a batch (many games in lockstep ask once per step): an int64 array.

        The default asks :meth:`select_move` for each. Agents that can answer a batch at once (a numba kernel, a
        neural network) override it; an agent that randomizes should draw from ``decisions.rngs`` (each game's
        own stream) so that its moves do not depend on how games are batched.
        """
        return np.array(
            [self.select_move(decisions.position(rules, i), int(decisions.rolls[i])) for i in range(len(decisions))],
            dtype=np.int64,
        )

    def select_one(self, position: Position, roll: int, rng: np.ndarray = NO_STREAM) -> int:
        """:meth:`select_move` of an agent that answers batches.

        The decision as a batch of one, drawing from ``rng`` (a uint64 array of one element; agents that never draw keep
        the default).

        Raises:
            ValueError: If the roll has no legal move in ``position``.
        """
        moves = legal_moves_or_raise(position, roll)
        return int(self.select_moves(position.rules, Decisions.single(position.code, roll, moves, rng))[0])

    def prepare(self, rules: Rules) -> None:
        """Get what playing ``rules`` needs (a solved table) before the first move; the default needs nothing.

        The environments call it when they are made, so no step starts minutes of work.
        """
        return

    def check_rules(self, rules: Rules) -> None:
        """Raise ``ValueError`` if the agent cannot play ``rules`` (a model trained on others).

        Called before any game starts, so misuse is found at once rather than mid-game. Agents that play any rules keep
        this.
        """
        return

    def __call__(self, position: Position, roll: int) -> int:
        """Call the agent as a function: :meth:`select_move`."""
        return self.select_move(position, roll)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.spec!r})"


def legal_moves_or_raise(position: Position, roll: int) -> tuple[int, ...]:
    """The legal moves of ``roll``, or a ValueError saying there is no decision to make."""
    moves = position.legal_moves(roll)
    if not moves:
        state = "the game is over" if position.is_over else f"roll {roll} has no legal move (the turn passes)"
        raise ValueError(f"no move to choose: {state} in {position!r}")
    return moves
