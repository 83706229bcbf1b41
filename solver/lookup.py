"""Numba lookups in a solved table: the winning chance of each move, for agents and match play.

Kernels take a table as one :class:`TableView` bundle: its values, the scale that turns them into
probabilities, and its :class:`~urgym.solver._index.IndexTables`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit
from urgym.solver._index import IndexTables, rank_state

from urgym import core

__all__ = ["TableView", "best_of", "move_probability", "state_value"]


class TableView(NamedTuple):
    """A solved table as kernels read it.

    ``values[i] * scale`` is position i's value (``scale`` is 1 / 65535 for a uint16 table, else 1).
    """

    values: np.ndarray
    scale: float
    index: IndexTables


@njit(cache=True)
def state_value(state, table):
    """The winning probability of the side to move in ``state`` under perfect play.

    0 in a finished game: the mover has lost.
    """
    if core.is_over(state):
        return 0.0
    return table.values[rank_state(state, table.index)] * table.scale


@njit(cache=True)
def move_probability(state, roll, move, geom, table):
    """The mover's winning probability after playing ``move`` with ``roll`` and then playing perfectly."""
    nxt, flags = core.apply_move(state, roll, move, geom)
    if flags & core.WIN:
        return 1.0
    v = table.values[rank_state(nxt, table.index)] * table.scale
    return v if flags & core.EXTRA_ROLL else 1.0 - v


@njit(cache=True)
def best_of(state, roll, moves, n, probabilities, geom, table):
    """Fill ``probabilities[:n]`` for ``moves[:n]``; return the index of the best (lowest source on ties)."""
    best = 0
    for i in range(n):
        probabilities[i] = move_probability(state, roll, moves[i], geom, table)
        if probabilities[i] > probabilities[best]:
            best = i
    return best
