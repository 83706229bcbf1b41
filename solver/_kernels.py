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
from urgym.solver._index import B_START, KIND_DENSE, rank_state, unrank_in_block

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
    """A pair's successor graph, stored once per run of positions that share a move list.

    Each work item is cut into runs (see :func:`urgym.solver.graph.count_runs`): a run starts at the item's first
    position and at every position of the item whose offset in its block is a multiple of the block's run size
    ``item_run_size[it]``, so run ``k`` of item ``it`` is ``item_run_start[it] + k``. Per run and roll ``counts``
    edges, the edges of each item ending at ``item_edge_end``; an edge holds the successor of the run's first
    position, and ``strides`` how far that successor moves per position along the run. With runs of one position
    (the tile layout, and the form the policy losses and searches read) ``strides`` is empty and ``counts`` and
    ``edges`` are per position.
    """

    work: PairWork
    item_edge_end: np.ndarray  # int64[items]
    item_run_start: np.ndarray  # int64[items + 1]
    item_run_size: np.ndarray  # int64[items]
    item_block_start: np.ndarray  # int64[items]: the first index of the item's block
    counts: np.ndarray  # uint8[runs * rolls]
    edges: np.ndarray  # uint32[edges]
    strides: np.ndarray  # uint16[edges], or empty
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
def _stride(passes, mover_mask, index):
    """How far a successor's index moves per step along a run (see :func:`urgym.solver.graph.count_runs`).

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


@njit(cache=True, inline="always")
def edge_along(edges, strides, edge, step):
    """The ``edge`` of a run for the position ``step`` places along it: its successor moved on by the edge's stride.

    With runs of one position (``strides`` empty) the edge itself.
    """
    x = edges[edge]
    if strides.shape[0] > 0:
        x = np.uint32(x + ((step * np.int64(strides[edge])) << 1))
    return x


@njit(cache=True, inline="always")
def _run_bounds(items, it, k, size, first):
    """The positions [lo, hi) of run ``k`` of item ``it`` (``first``: its block's first index)."""
    lo_item, hi_item = items[it, I_START], items[it, I_END]
    lo = lo_item if k == 0 else first + ((lo_item - first) // size + k) * size
    hi = min(first + ((lo - first) // size + 1) * size, hi_item)
    return lo, hi


@njit(cache=True, parallel=True)
def count_run_edges(graph_work, index, geom, item_run_start, item_run_size, counts, item_edges):
    """Edges per run and roll of a :class:`PairGraph` (a legal move's, or the pass's) into ``counts``, per item too."""
    n_rolls, rolls = geom[0].n_rolls, geom[0].rolls
    items = graph_work.items
    for it in prange(items.shape[0]):
        moves = np.empty(core.MAX_MOVES, dtype=np.int64)
        b = items[it, I_BLOCK]
        first, size = index.blocks[b, B_START], item_run_size[it]
        total = 0
        for k in range(item_run_start[it + 1] - item_run_start[it]):
            lo, _ = _run_bounds(items, it, k, size, first)
            state = unrank_in_block(lo - first, b, index)
            run = item_run_start[it] + k
            for r in range(n_rolls):
                n = max(core.legal_moves(state, rolls[r], geom, moves), 1)
                counts[run * n_rolls + r] = n
                total += n
        item_edges[it] = total


@njit(cache=True, parallel=True)
def fill_run_edges(graph_work, index, geom, item_run_start, item_run_size, item_edge_start, edges, strides):
    """Write each run's edges (roll by roll) and, when ``strides`` is not empty, their strides."""
    n_rolls = geom[0].n_rolls
    items = graph_work.items
    keep_strides = strides.shape[0] > 0
    for it in prange(items.shape[0]):
        moves = np.empty(core.MAX_MOVES, dtype=np.int64)
        succ = np.empty((n_rolls, core.MAX_MOVES), dtype=np.int64)
        stride = np.empty((n_rolls, core.MAX_MOVES), dtype=np.int64)
        passes = np.empty((n_rolls, core.MAX_MOVES), dtype=np.int64)
        n_moves = np.empty(n_rolls, dtype=np.int64)
        b = items[it, I_BLOCK]
        first, size = index.blocks[b, B_START], item_run_size[it]
        e = item_edge_start[it]
        for k in range(item_run_start[it + 1] - item_run_start[it]):
            lo, _ = _run_bounds(items, it, k, size, first)
            _row_edges(unrank_in_block(lo - first, b, index), geom, moves, index, succ, stride, passes, n_moves)
            for r in range(n_rolls):
                for j in range(n_moves[r]):
                    edges[e] = np.uint32((succ[r, j] << 1) | passes[r, j])
                    if keep_strides:
                        strides[e] = np.uint16(stride[r, j])
                    e += 1


@njit(cache=True, parallel=True)
def count_expanded(graph, item_edges):
    """Per work item, the edges of every position of a :class:`PairGraph` of runs (a run's, times its length)."""
    items, counts, n_rolls = graph.work.items, graph.counts, graph.probabilities.shape[0]
    item_run_start, item_run_size, item_block_start = graph.item_run_start, graph.item_run_size, graph.item_block_start
    for it in prange(items.shape[0]):
        total = 0
        for k in range(item_run_start[it + 1] - item_run_start[it]):
            lo, hi = _run_bounds(items, it, k, item_run_size[it], item_block_start[it])
            run = item_run_start[it] + k
            for r in range(n_rolls):
                total += (hi - lo) * counts[run * n_rolls + r]
        item_edges[it] = total


@njit(cache=True, parallel=True)
def expand(graph, item_edge_start, counts, edges):
    """Every position's counts and edges of a :class:`PairGraph` of runs (positions in index order, rolls in order)."""
    items, start, n_rolls = graph.work.items, graph.work.start, graph.probabilities.shape[0]
    run_counts, run_edges, strides = graph.counts, graph.edges, graph.strides
    item_run_start, item_run_size, item_block_start = graph.item_run_start, graph.item_run_size, graph.item_block_start
    item_edge_end = graph.item_edge_end
    for it in prange(items.shape[0]):
        source = item_edge_end[it - 1] if it > 0 else 0  # the run graph's edges of this item
        e = item_edge_start[it]
        for k in range(item_run_start[it + 1] - item_run_start[it]):
            lo, hi = _run_bounds(items, it, k, item_run_size[it], item_block_start[it])
            c0 = (item_run_start[it] + k) * n_rolls
            n_run = 0
            for r in range(n_rolls):
                n_run += run_counts[c0 + r]
            for i in range(lo, hi):
                step = i - lo
                for r in range(n_rolls):
                    counts[(i - start) * n_rolls + r] = run_counts[c0 + r]
                for j in range(n_run):
                    edges[e] = edge_along(run_edges, strides, source + j, step)
                    e += 1
            source += n_run


@njit(cache=True, parallel=True)
def sweep(graph, values, buffers, update):
    """One in-place (Gauss-Seidel) pass over a pair, in reverse index order; returns the largest change.

    Reverse order sweeps pieces further along their paths first, so most successors are already updated when a
    position is. With ``update=False`` nothing is written and the result is the Bellman residual max |T V - V|.
    A successor is its run's edge plus the position's step along the run times the edge's stride, so a graph of
    runs and one of single positions give the same values to the last bit.

    With a non-empty ``buffers.change`` the pass also keeps each position's change, for the extrapolation of
    slow modes: ``change[i - start]`` holds the previous pass's change on entry and this pass's on return, and
    ``item_dot``/``item_norm`` get per work item sum(new * old) and sum(old * old).

    The Bellman update is written out here rather than in a helper: numba compiled the helper (which
    returned the value and the edge pointer) into a loop about 1.4 times slower.
    """
    items, start = graph.work.items, graph.work.start
    counts, edges, strides, probs = graph.counts, graph.edges, graph.strides, graph.probabilities
    item_edge_end, item_run_start, item_run_size = graph.item_edge_end, graph.item_run_start, graph.item_run_size
    item_block_start = graph.item_block_start  # a tuple cannot enter the parallel loop (numba)
    change, item_delta, item_dot, item_norm = buffers.change, buffers.item_delta, buffers.item_dot, buffers.item_norm
    n_rolls = probs.shape[0]
    n_items = items.shape[0]
    track = change.shape[0] > 0
    strided = strides.shape[0] > 0
    for t in prange(n_items):
        it = n_items - 1 - t
        e = item_edge_end[it]
        delta = 0.0
        dot = 0.0
        norm = 0.0
        size, first = item_run_size[it], item_block_start[it]
        for k in range(item_run_start[it + 1] - item_run_start[it] - 1, -1, -1):
            lo, hi = _run_bounds(items, it, k, size, first)
            c0 = (item_run_start[it] + k) * n_rolls
            for r in range(n_rolls):
                e -= counts[c0 + r]
            for i in range(hi - 1, lo - 1, -1):
                step = i - lo
                edge = e
                v = 0.0
                for r in range(n_rolls):
                    best = 0.0
                    for _ in range(counts[c0 + r]):
                        x = edges[edge]
                        j = np.int64(x >> 1)
                        if strided:
                            j += step * np.int64(strides[edge])
                        edge += 1
                        w = values[j]
                        if x & 1:
                            w = 1.0 - w
                        if w > best:
                            best = w
                    v += probs[r] * best
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
