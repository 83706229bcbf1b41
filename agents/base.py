"""The agent interface every player of the package implements."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from urgym import Position, Rules
from urgym.batch import NO_STREAM, Decisions

__all__ = ["Agent", "legal_moves_or_raise", "one_hot_choices", "slip_probabilities"]


class Agent(ABC):
    """Chooses a move for a position and a roll.

    Agents are deterministic for a seed: :meth:`reseed` restarts their random stream (only agents that
    randomize use it). ``spec`` is the registry spec that rebuilds the agent (see :func:`urgym.agents.make_agent`).
    """

    spec: str = "agent"
    randomizes: bool = False
    """True for an agent whose moves depend on its random stream (exact evaluation asks for its distribution)."""

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

    def move_probabilities(self, rules: Rules, decisions: Decisions) -> np.ndarray:
        """Every legal move's chance of being played, for an agent that randomizes: ``float64[k, MAX_MOVES]``.

        Row i gives the chances of ``decisions.moves[i, :counts[i]]`` (0 beyond them). Exact evaluation
        (:mod:`urgym.evaluation.scoring.exact`) uses it to evaluate the agent's real, randomized policy; an agent that
        randomizes without overriding it is evaluated as the one draw of its seed, and the result says so.

        Raises:
            NotImplementedError: The default: the agent does not say.
        """
        raise NotImplementedError(f"{self.spec} does not give its move distribution")

    def policy_table(self, rules: Rules, progress: bool = True) -> np.ndarray | None:
        """The agent's move in every decision of ``rules`` at once, or None (the default) to be asked in batches.

        An agent that can compute its whole policy faster than it answers decisions one batch at a time (a search,
        by dynamic programming over the solver's graphs: :mod:`urgym.agents.whole`) returns it as
        :class:`urgym.solver.policy.Policy` takes it: ``uint8[positions * rolls]``, each move's place among the legal
        moves. Exact evaluation uses it; it must give the moves :meth:`select_moves` gives.
        """
        return None

    def policy_table_seconds(self, rules: Rules, threads: int) -> float | None:
        """About how long :meth:`policy_table` takes on ``threads`` cores; None where it gives no table."""
        return None

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


def one_hot_choices(decisions: Decisions, chosen: np.ndarray) -> np.ndarray:
    """Move chances that put everything on the ``chosen`` move of each decision (``float64[k, MAX_MOVES]``)."""
    out = np.zeros((len(decisions), decisions.moves.shape[1]))
    out[np.arange(len(decisions)), (decisions.moves == np.asarray(chosen)[:, None]).argmax(axis=1)] = 1.0
    return out


def slip_probabilities(decisions: Decisions, best: np.ndarray, epsilon: float) -> np.ndarray:
    """The chances of a player that aims at ``best`` and slips to a uniformly random other move with ``epsilon``."""
    counts = decisions.counts[:, None]
    legal = np.arange(decisions.moves.shape[1])[None, :] < counts
    out = np.where(legal, epsilon / np.maximum(counts - 1, 1), 0.0)
    aimed = (decisions.moves == np.asarray(best)[:, None]).argmax(axis=1)
    out[np.arange(len(decisions)), aimed] = np.where(decisions.counts > 1, 1.0 - epsilon, 1.0)
    return out
