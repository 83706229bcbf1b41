"""Numba kernels of the solver: the successor graph of one layer pair and Gauss-Seidel sweeps over it.

For a position s (mover's view) the value is the mover's winning probability

    V(s) = sum_r P(r) * max_{m legal for r} W(s, r, m),     W = V(s')      after an extra roll,
                                                            W = 1 - V(s')  when the turn passes,

with s' the position after the move seen by the side to move next; a roll with no legal move passes
(W = 1 - V(s) with the sides swapped). A finished game is seen by the loser, so V = 0 there and a
winning move is worth 1. Each successor is stored as one uint32 edge ``index << 1 | passes``.

The kernels take named bundles: the rules' :data:`~urgym.core.GEOMETRY`, the :class:`~urgym.solver._index.IndexTables`,
the :class:`PairWork` of a layer pair, its :class:`PairGraph` and the :class:`SweepBuffers` of a sweep.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange
from urgym.solver._index import B_START, rank_state, unrank_in_block

from urgym import core

# Columns of a work item: a slice of one block.
I_START, I_END, I_BLOCK = range(3)


class PairWork(NamedTuple):
    """A layer pair cut into work items.

    ``items`` rows are (first position, end, block) of at most ITEM_SIZE positions, ``start`` the pair's first index.
    """

    items: np.ndarray  # int64[items, 3]
    start: int


class PairGraph(NamedTuple):
    """A pair's successor graph.

    Per position and roll ``counts`` edges, the edges of each item ending at ``item_edge_end``, and the roll
    probabilities they are weighted by.
    """

    work: PairWork
    item_edge_end: np.ndarray  # int64[items]
    counts: np.ndarray  # uint8[positions * rolls]
    edges: np.ndarray  # uint32[edges]
    probabilities: np.ndarray  # float64[rolls]


class SweepBuffers(NamedTuple):
    """What a sweep writes besides the values.

    Per item its largest change and the dot products of the slow-mode estimate, and (when ``change`` is not empty) each
    position's change.
    """

    item_delta: np.ndarray  # float64[items]
    item_dot: np.ndarray  # float64[items]
    item_norm: np.ndarray  # float64[items]
    change: np.ndarray  # float32[positions], or empty: no tracking


@njit(cache=True)
def _successor_edges(state, roll, geom, moves, index, out, n_out):
    """Append the edges of one roll of ``state`` to ``out`` from ``n_out``; return the new count."""
    n = core.legal_moves(state, roll, geom, moves)
    if n == 0:
        out[n_out] = np.uint32((rank_state(core.swap_sides(state), index) << 1) | 1)
        return n_out + 1
    for j in range(n):
        nxt, flags = core.apply_move(state, roll, moves[j], geom)
        passes = 0 if flags & core.EXTRA_ROLL else 1
        out[n_out] = np.uint32((rank_state(nxt, index) << 1) | passes)
        n_out += 1
    return n_out


@njit(cache=True, parallel=True)
def count_edges(work, index, geom, counts, item_edges):
    """Edges per state and roll (one per legal move, or one pass edge) into ``counts``; totals per item."""
    n_rolls, rolls = geom[0].n_rolls, geom[0].rolls  # a record itself cannot enter a parallel loop (numba)
    items = work.items
    for it in prange(items.shape[0]):
        moves = np.empty(core.MAX_MOVES, dtype=np.int64)
        b = items[it, I_BLOCK]
        first = index.blocks[b, B_START]
        total = 0
        for i in range(items[it, I_START], items[it, I_END]):
            state = unrank_in_block(i - first, b, index)
            for k in range(n_rolls):
                n = max(core.legal_moves(state, rolls[k], geom, moves), 1)
                counts[(i - work.start) * n_rolls + k] = n
                total += n
        item_edges[it] = total


@njit(cache=True, parallel=True)
def fill_edges(work, index, geom, item_edge_start, edges):
    """Write every state's edges: states in index order, each state's edges grouped by roll."""
    n_rolls, rolls = geom[0].n_rolls, geom[0].rolls
    items = work.items
    for it in prange(items.shape[0]):
        moves = np.empty(core.MAX_MOVES, dtype=np.int64)
        b = items[it, I_BLOCK]
        first = index.blocks[b, B_START]
        e = item_edge_start[it]
        for i in range(items[it, I_START], items[it, I_END]):
            state = unrank_in_block(i - first, b, index)
            for k in range(n_rolls):
                e = _successor_edges(state, rolls[k], geom, moves, index, edges, e)


@njit(cache=True, parallel=True)
def sweep(graph, values, buffers, update):
    """One in-place (Gauss-Seidel) pass over a pair, in reverse index order; returns the largest change.

    Reverse order sweeps pieces further along their paths first (higher colex and war-zone ranks), so
    most successors are already updated when a position is. With ``update=False`` nothing is written
    and the result is the Bellman residual max |T V - V|.

    With a non-empty ``buffers.change`` the pass also keeps each position's change, for the extrapolation of
    slow modes: ``change[i - start]`` holds the previous pass's change on entry and this pass's on return, and
    ``item_dot``/``item_norm`` get per work item sum(new * old) and sum(old * old).

    The Bellman update is written out here rather than in a helper: numba compiled the helper (which
    returned the value and the edge pointer) into a loop about 1.4 times slower.
    """
    items, start = graph.work.items, graph.work.start
    counts, edges, probs, item_edge_end = graph.counts, graph.edges, graph.probabilities, graph.item_edge_end
    change, item_delta, item_dot, item_norm = buffers.change, buffers.item_delta, buffers.item_dot, buffers.item_norm
    n_rolls = probs.shape[0]
    n_items = items.shape[0]
    track = change.shape[0] > 0
    for t in prange(n_items):
        it = n_items - 1 - t
        e = item_edge_end[it]
        delta = 0.0
        dot = 0.0
        norm = 0.0
        for i in range(items[it, I_END] - 1, items[it, I_START] - 1, -1):
            # walking backwards: state i's edges end where state i + 1's begin
            c0 = (i - start) * n_rolls
            for k in range(n_rolls):
                e -= counts[c0 + k]
            edge = e
            v = 0.0
            for k in range(n_rolls):
                best = 0.0
                for _ in range(counts[c0 + k]):
                    x = edges[edge]
                    edge += 1
                    w = values[x >> 1]
                    if x & 1:
                        w = 1.0 - w
                    if w > best:
                        best = w
                v += probs[k] * best
            d = v - values[i]
            if abs(d) > delta:
                delta = abs(d)
            if track:
                old = change[i - start]
                dot += d * old
                norm += old * old
                change[i - start] = d
            if update:
                values[i] = v
        item_delta[it] = delta
        if track:
            item_dot[it] = dot
            item_norm[it] = norm
    return item_delta.max()


@njit(cache=True, parallel=True)
def extrapolate(values, start, change, factor):
    """values[start:] += factor * change: the sum of a geometric tail of changes (factor = lam / (1 - lam))."""
    for j in prange(change.shape[0]):
        values[start + j] += factor * change[j]
