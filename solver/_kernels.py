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
from urgym.solver._index import B_D, B_START, KIND_DENSE, rank_state, unrank_in_block

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


@njit(cache=True, inline="always")
def _row_size(index, b):
    """Positions of block ``b`` that share one move list: those that differ only in the opponent's private pieces.

    The mover's moves never touch the opponent's private tiles, and the dense layout ranks those pieces last, so
    each run of ``C(P, d)`` positions (d: the opponent's private pieces) has the same moves, and each successor's
    index grows by a fixed stride along the run. The tile layout has no such runs (a run of one).
    """
    if index.kind == KIND_DENSE:
        return index.choose_private[index.blocks[b, B_D]]
    return 1


@njit(cache=True, inline="always")
def _stride(passes, mover_mask, index):
    """How far a successor's index moves per step along a run (see :func:`_row_size`).

    The opponent's private pieces stay where they are: after an extra roll they are still the opponent's, ranked
    last (stride 1); after a pass they are the new mover's, ranked above the old mover's private pieces, whose
    placements (``C(P, k)`` for ``k`` of them, ``mover_mask`` the old mover's pieces after the move) set the stride.
    """
    if index.kind != KIND_DENSE or not passes:
        return 1
    private = index.private_masks[index.n_private << index.n_private]  # the one subset of all P private positions
    return index.choose_private[core.popcount(mover_mask & private)]


@njit(cache=True)
def _row_edges(state, geom, moves, index, succ, stride, passes, n_moves):
    """The move list of ``state``'s run, roll by roll: each successor's index, stride and pass flag."""
    n_rolls, rolls = geom[0].n_rolls, geom[0].rolls
    for k in range(n_rolls):
        n = core.legal_moves(state, rolls[k], geom, moves)
        if n == 0:
            succ[k, 0] = rank_state(core.swap_sides(state), index)
            passes[k, 0] = 1
            stride[k, 0] = _stride(1, core.own_mask(state), index)
            n_moves[k] = 1
            continue
        for j in range(n):
            nxt, flags = core.apply_move(state, rolls[k], moves[j], geom)
            p = 0 if flags & core.EXTRA_ROLL else 1
            succ[k, j] = rank_state(nxt, index)
            passes[k, j] = p
            stride[k, j] = _stride(p, core.opp_mask(nxt), index)  # passed: the old mover is the opponent now
        n_moves[k] = n


@njit(cache=True, parallel=True)
def count_edges(work, index, geom, counts, item_edges, runs=True):
    """Edges per state and roll (one per legal move, or one pass edge) into ``counts``; totals per item.

    A run of positions with one move list (see :func:`_row_size`) is asked once (``runs=False``: every position,
    for comparisons).
    """
    n_rolls, rolls = geom[0].n_rolls, geom[0].rolls  # a record itself cannot enter a parallel loop (numba)
    items = work.items
    for it in prange(items.shape[0]):
        moves = np.empty(core.MAX_MOVES, dtype=np.int64)
        row = np.empty(n_rolls, dtype=np.int64)
        b = items[it, I_BLOCK]
        first = index.blocks[b, B_START]
        size = _row_size(index, b) if runs else 1
        total = 0
        for i in range(items[it, I_START], items[it, I_END]):
            if i == items[it, I_START] or (i - first) % size == 0:
                state = unrank_in_block(i - first, b, index)
                for k in range(n_rolls):
                    row[k] = max(core.legal_moves(state, rolls[k], geom, moves), 1)
            for k in range(n_rolls):
                counts[(i - work.start) * n_rolls + k] = row[k]
                total += row[k]
        item_edges[it] = total


@njit(cache=True, parallel=True)
def fill_edges(work, index, geom, item_edge_start, edges, runs=True):
    """Write every state's edges: states in index order, each state's edges grouped by roll.

    A run of positions with one move list (see :func:`_row_size`) is played out once; the others' successors
    follow by their strides (``runs=False``: every position is played out, for comparisons).
    """
    n_rolls = geom[0].n_rolls
    items = work.items
    for it in prange(items.shape[0]):
        moves = np.empty(core.MAX_MOVES, dtype=np.int64)
        succ = np.empty((n_rolls, core.MAX_MOVES), dtype=np.int64)
        stride = np.empty((n_rolls, core.MAX_MOVES), dtype=np.int64)
        passes = np.empty((n_rolls, core.MAX_MOVES), dtype=np.int64)
        n_moves = np.empty(n_rolls, dtype=np.int64)
        b = items[it, I_BLOCK]
        first = index.blocks[b, B_START]
        size = _row_size(index, b) if runs else 1
        e = item_edge_start[it]
        known = 0  # the position whose successors succ holds
        for i in range(items[it, I_START], items[it, I_END]):
            if i == items[it, I_START] or (i - first) % size == 0:
                _row_edges(unrank_in_block(i - first, b, index), geom, moves, index, succ, stride, passes, n_moves)
                known = i
            step = i - known
            for k in range(n_rolls):
                for j in range(n_moves[k]):
                    edges[e] = np.uint32(((succ[k, j] + step * stride[k, j]) << 1) | passes[k, j])
                    e += 1


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
