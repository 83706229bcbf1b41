"""Numba lookups in a solved table: the winning chance of each move, for agents and match play."""

from __future__ import annotations

from numba import njit

from solver._index import rank_state
from urgym import core


@njit(cache=True)
def move_probability(state, roll, move, geom, values, scale, info, war_rank, block_offset, choose_private, dims):
    """The mover's winning probability after playing ``move`` with ``roll`` and then playing perfectly.

    ``values[i] * scale`` is a probability (``scale`` is 1 / 65535 for a uint16 table, else 1).
    """
    nxt, flags = core.apply_move(state, roll, move, geom)
    if flags & core.WIN:
        return 1.0
    v = values[rank_state(nxt, info, war_rank, block_offset, choose_private, dims)] * scale
    return v if flags & core.EXTRA_ROLL else 1.0 - v


@njit(cache=True)
def best_of(state, roll, moves, n, probabilities, geom, values, scale, info, war_rank, block_offset, choose_private,
            dims):
    """Fill ``probabilities[:n]`` for ``moves[:n]``; return the index of the best (lowest source on ties)."""
    best = 0
    for i in range(n):
        probabilities[i] = move_probability(state, roll, moves[i], geom, values, scale, info, war_rank,
                                            block_offset, choose_private, dims)
        if probabilities[i] > probabilities[best]:
            best = i
    return best
