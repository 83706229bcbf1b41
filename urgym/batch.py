"""Many games in lockstep, for Python consumers: a batch of decisions to hand an agent, and the games they come from.

The kernels of :mod:`urgym.core` keep each game in a :data:`~urgym.core.FLOW` record; :class:`Decisions` is what
an agent sees of the games awaiting its move (positions, rolls, legal moves and each game's own random stream),
and :func:`decisions_of` / :func:`return_streams` move them out of and back into the records.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from urgym import core
from urgym.position import Position
from urgym.rules import Rules

__all__ = ["NO_STREAM", "Decisions", "check_choices", "decisions_of", "return_streams"]

NO_STREAM = np.zeros(1, dtype=np.uint64)
"""The random stream of a decision whose agent never draws (read-only: nothing may advance it)."""
NO_STREAM.flags.writeable = False


class Decisions(NamedTuple):
    """``k`` decisions: position ``states[i]`` (packed) must play ``rolls[i]``.

    With one of ``moves[i, :counts[i]]`` (ascending). ``rngs[i]`` is the decision's own random stream (the game's policy
    stream of the agent asked): an agent that randomizes and draws from it (:func:`urgym.core.next_u64`) plays the same
    move however the games are batched. Numba kernels take it as it is.
    """

    states: np.ndarray  # int64[k]
    rolls: np.ndarray  # int64[k]
    moves: np.ndarray  # int64[k, MAX_MOVES]
    counts: np.ndarray  # int64[k]
    rngs: np.ndarray  # uint64[k, 1]

    def __len__(self) -> int:
        return int(self.states.shape[0])

    def position(self, rules: Rules, i: int) -> Position:
        """Decision i's position."""
        return Position(rules, int(self.states[i]))

    def legal(self, i: int) -> tuple[int, ...]:
        """Decision i's legal moves."""
        return tuple(self.moves[i, : self.counts[i]].tolist())

    def masks(self, actions: int) -> np.ndarray:
        """Boolean masks of the legal moves, ``[k, actions]`` (the environments' action masks)."""
        mask = np.zeros((len(self), actions), dtype=bool)
        rows = np.repeat(np.arange(len(self)), self.counts)
        columns = self.moves[np.arange(core.MAX_MOVES)[None, :] < self.counts[:, None]]
        mask[rows, columns] = True
        return mask

    @classmethod
    def of_positions(cls, pairs: Sequence[tuple[Position, int]]) -> Decisions:
        """The decisions of ``(position, roll)`` pairs, with their legal moves (and streams that never draw)."""
        moves = np.zeros((len(pairs), core.MAX_MOVES), dtype=np.int64)
        counts = np.zeros(len(pairs), dtype=np.int64)
        for i, (position, roll) in enumerate(pairs):
            legal = position.legal_moves(roll)
            moves[i, : len(legal)] = legal
            counts[i] = len(legal)
        return cls(
            np.array([p.code for p, _ in pairs], dtype=np.int64),
            np.array([r for _, r in pairs], dtype=np.int64),
            moves,
            counts,
            np.zeros((len(pairs), 1), dtype=np.uint64),
        )

    @classmethod
    def single(cls, state: int, roll: int, legal: tuple[int, ...], rng: np.ndarray) -> Decisions:
        """One decision, drawing from ``rng`` (a uint64 array of one element, advanced in place by the caller)."""
        moves = np.zeros((1, core.MAX_MOVES), dtype=np.int64)
        moves[0, : len(legal)] = legal
        return cls(
            np.array([state], dtype=np.int64),
            np.array([roll], dtype=np.int64),
            moves,
            np.array([len(legal)], dtype=np.int64),
            rng.reshape(1, 1),
        )


def decisions_of(flows: np.ndarray, games: np.ndarray, stream: int | np.ndarray) -> Decisions:
    """The decisions of ``flows[games]`` (each awaiting a move).

    With policy stream ``stream`` of each game (one stream for all, or one per game).
    """
    rows = flows[games]
    streams = (
        rows["policy_rngs"][np.arange(len(rows)), stream]
        if isinstance(stream, np.ndarray)
        else rows["policy_rngs"][:, stream]
    )
    return Decisions(rows["state"], rows["roll"], rows["moves"], rows["n"], np.ascontiguousarray(streams))


def return_streams(flows: np.ndarray, games: np.ndarray, stream: int | np.ndarray, decisions: Decisions) -> None:
    """Store the random streams the agent advanced back into the games' records."""
    flows["policy_rngs"][games, stream] = decisions.rngs


def check_choices(decisions: Decisions, chosen: np.ndarray, who: str, rules: Rules) -> np.ndarray:
    """``chosen`` as int64 moves, one legal move per decision.

    Raises:
        ValueError: Naming ``who``, the first decision whose move is not legal, and its legal moves.
    """
    answer = chosen
    try:
        chosen = np.asarray(answer)
    except (TypeError, ValueError):  # a ragged answer
        chosen = np.asarray(None)
    if chosen.shape != (len(decisions),) or not np.issubdtype(chosen.dtype, np.integer):
        what = f"an array of shape {chosen.shape} and dtype {chosen.dtype}"
        if chosen.dtype == object:
            what = f"a {type(answer).__name__} that is no array of integers"
        raise ValueError(
            f"{who} answered {len(decisions)} decisions with {what}; it must give one integer move per decision"
        )
    chosen = chosen.astype(np.int64, copy=False)
    in_range = np.arange(core.MAX_MOVES)[None, :] < decisions.counts[:, None]
    legal = ((decisions.moves == chosen[:, None]) & in_range).any(axis=1)
    if not legal.all():
        i = int(np.flatnonzero(~legal)[0])
        raise ValueError(
            f"{who} chose illegal move {int(chosen[i])} for roll {int(decisions.rolls[i])} in "
            f"{decisions.position(rules, i)!r}; legal moves: {list(decisions.legal(i))}"
        )
    return chosen
