"""Many games in lockstep, for Python consumers: a batch of decisions to hand an agent, and the games they come from.

The kernels of :mod:`urgym.core` keep each game in a :data:`~urgym.core.FLOW` record; :class:`Decisions` is what
an agent sees of the games awaiting its move (positions, rolls, legal moves and each game's own random stream),
and :func:`decisions_of` / :func:`return_streams` move them out of and back into the records.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numba import njit

from urgym import core
from urgym.position import Position
from urgym.rules import Rules

__all__ = ["NO_STREAM", "Decisions", "check_choices", "decisions_at", "decisions_of", "every_roll", "return_streams"]

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

    def take(self, rows: np.ndarray, rngs: np.ndarray | None = None) -> Decisions:
        """Decisions ``rows`` of this batch (with ``rngs`` as their streams, if given)."""
        return Decisions(
            self.states[rows],
            self.rolls[rows],
            self.moves[rows],
            self.counts[rows],
            self.rngs[rows] if rngs is None else rngs,
        )

    @classmethod
    def of_positions(cls, pairs: Sequence[tuple[Position, int]]) -> Decisions:
        """The decisions of ``(position, roll)`` pairs of one rule set, their legal moves listed; no stream draws."""
        if not pairs:
            empty = np.zeros(0, dtype=np.int64)
            return cls(empty, empty, np.zeros((0, core.MAX_MOVES), np.int64), empty, np.zeros((0, 1), np.uint64))
        return decisions_at(np.array([p.code for p, _ in pairs]), np.array([r for _, r in pairs]), pairs[0][0].rules)

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


def decisions_at(states: np.ndarray, rolls: np.ndarray, rules: Rules, rngs: np.ndarray | None = None) -> Decisions:
    """The decisions of packed ``states`` with ``rolls``, their legal moves listed (``core.legal_moves`` order).

    ``rngs``: each decision's random stream (uint64[k, 1]); by default streams that never draw.
    """
    states = np.ascontiguousarray(states, dtype=np.int64)
    rolls = np.ascontiguousarray(rolls, dtype=np.int64)
    moves = np.zeros((len(states), core.MAX_MOVES), dtype=np.int64)
    counts = np.zeros(len(states), dtype=np.int64)
    _list_legal(states, rolls, core.geometry(rules), moves, counts)
    rngs = np.zeros((len(states), 1), dtype=np.uint64) if rngs is None else rngs
    return Decisions(states, rolls, moves, counts, rngs)


def every_roll(states: np.ndarray, rules: Rules) -> Decisions:
    """The decisions of every state with every roll of ``rules`` (state-major: row ``i * rolls + k``)."""
    geom = core.geometry(rules)
    rolls = geom[0]["rolls"][: int(geom[0]["n_rolls"])].astype(np.int64)
    return decisions_at(np.repeat(states, len(rolls)), np.tile(rolls, len(states)), rules)


@njit(cache=True)
def _list_legal(states, rolls, geom, moves, counts):
    for i in range(states.shape[0]):
        counts[i] = core.legal_moves(states[i], rolls[i], geom, moves[i])


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
