"""The successor graph of a layer pair: the structure every exact computation of urgym walks.

Scored pieces never come back, so the positions of a rule set fall into layers by (own scored, opponent scored), and
the layers ``(x, y)`` and ``(y, x)`` form a *layer pair*: a move that scores nothing stays in the pair (the turn
passes to the mirrored layer), a move that scores leaves it for a pair already done. :func:`layer_pairs` walks the
pairs in that order (each with its index range and whether the game is over there); :func:`live_pairs` only those
where somebody still has a decision.

A pair's graph lists, per position and roll, the successor of every legal move (``successor << 1 | passes``, see
:mod:`urgym.solver._kernels`). :class:`SweepGraph` holds it with the buffers of a sweep, in one of three forms:
runs of positions that share a move list (the solver's: a fraction of the memory), every position's edges (what
policy evaluation's checks, the best response, perfect play's moves, the searches' whole policies and the policy
losses read), or played out position by position (for comparisons). Value iteration (:mod:`urgym.solver.solve`)
and policy evaluation (:mod:`urgym.solver.policy`) both rest on it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

import numba
import numpy as np
from urgym.solver import _kernels as SK
from urgym.solver._index import B_D, B_END, B_START, KIND_TILES, PositionIndex

from urgym.core import chance_outcomes, geometry

__all__ = [
    "ITEM_END",
    "ITEM_START",
    "MAX_POSITIONS",
    "SMALL_PAIR",
    "LayerPair",
    "PairGraph",
    "SweepGraph",
    "build_graph",
    "count_runs",
    "expanded",
    "layer_pairs",
    "live_pairs",
    "pair_graph",
    "swept_by_every_thread",
    "terminal_values",
    "threads_for",
    "work_items",
]

ITEM_SIZE = 2048  # positions per parallel work item
MAX_POSITIONS = 1 << 31  # an edge is one uint32: index << 1 | passes
ITEM_START, ITEM_END = SK.I_START, SK.I_END
"""Columns of a :class:`PairGraph`'s work items: (first position, end, block)."""
PairGraph = SK.PairGraph
"""A pair's graph as the numba kernels take it (:class:`urgym.solver._kernels.PairGraph`)."""


class LayerPair(NamedTuple):
    """A layer pair of an index: its layers' scored pieces, its range of positions, whether the game is over there."""

    scored: tuple[int, int]
    """(x, y): the layers (x, y) and (y, x), each side's scored pieces."""
    start: int
    end: int
    over: bool
    """A side has scored every piece: the mover has won or lost, and nobody has a decision."""

    @property
    def positions(self) -> int:
        """The positions of the pair."""
        return self.end - self.start


def layer_pairs(index: PositionIndex, reverse: bool = False) -> Iterator[LayerPair]:
    """The layer pairs of ``index`` in the order a solve takes them (the most scored first; ``reverse``: the last)."""
    pairs = list(zip(index.pairs, index.pair_ranges, strict=True))
    for scored, (start, end) in reversed(pairs) if reverse else pairs:
        yield LayerPair((int(scored[0]), int(scored[1])), int(start), int(end), index.pieces in scored)


def live_pairs(index: PositionIndex) -> Iterator[LayerPair]:
    """The layer pairs where the game goes on (each side still has pieces to score), in a solve's order."""
    return (pair for pair in layer_pairs(index) if not pair.over)


def work_items(index: PositionIndex, start: int, end: int) -> np.ndarray:
    """Slices of at most ITEM_SIZE positions of the blocks in [start, end)."""
    blocks = index.blocks
    rows = np.flatnonzero((blocks[:, B_START] >= start) & (blocks[:, B_END] <= end))
    items = []
    for b in rows:
        for lo in range(int(blocks[b, B_START]), int(blocks[b, B_END]), ITEM_SIZE):
            items.append((lo, min(lo + ITEM_SIZE, int(blocks[b, B_END])), b))
    return np.array(items, dtype=np.int64).reshape(-1, 3)


class SweepGraph:
    """The successor graph of one layer pair and its sweep buffers.

    A :class:`~urgym.solver._kernels.PairGraph` in one of three forms (``form``): ``"runs"``, the solver's (one move
    list per run of positions that share it, see ``urgym.solver._kernels``: a fraction of the memory);
    ``"positions"``, runs of one position, every position's edges stored, which the policy losses and the searches
    read (built run by run); ``"played"``, the same built by playing out every position (for comparisons).
    """

    FORMS = ("runs", "positions", "played")

    def __init__(self, index: PositionIndex, start: int, end: int, form: str = "positions") -> None:
        if form not in self.FORMS:
            raise ValueError(f"unknown graph form {form!r}; one of {', '.join(self.FORMS)}")
        geom = geometry(index.rules)
        work = SK.PairWork(work_items(index, start, end), start)
        self.start = start
        n_items, n_rolls = len(work.items), int(geom[0]["n_rolls"])
        probabilities = chance_outcomes(index.rules)[1]
        self.graph = build_graph(index, work, geom, probabilities, runs=form != "played")
        if form == "positions":
            self.graph = expanded(self.graph, end - start, n_rolls)
        self.change = np.zeros(end - start, dtype=np.float32)  # a direction only: float32 keeps memory down
        self._tracking = SK.SweepBuffers(*(np.zeros(n_items) for _ in range(3)), self.change)
        self._plain = self._tracking._replace(change=np.zeros(0, dtype=np.float32))

    def sweep(self, values: np.ndarray) -> tuple[float, float]:
        """One Gauss-Seidel sweep that keeps each position's change.

        Returns (largest change, ratio of this sweep's changes to the last's: <d_k, d_k-1> / <d_k-1, d_k-1>).
        """
        largest = SK.sweep(self.graph, values, self._tracking, True)
        norm = float(self._tracking.item_norm.sum())
        return largest, float(self._tracking.item_dot.sum()) / norm if norm > 0 else 0.0

    def residual(self, values: np.ndarray) -> float:
        """The Bellman residual max |T V - V| over the pair (nothing is written)."""
        return SK.sweep(self.graph, values, self._plain, False)

    def extrapolate(self, values: np.ndarray, factor: float) -> None:
        """Add ``factor`` times the last change: the slow mode's geometric tail (``urgym.solver.solve.SlowModeTail``).

        What the remaining sweeps would add if each change were ``ratio`` times the one before, ``factor = ratio /
        (1 - ratio)`` (on finkel the slowest mode's ratio is near +0.7).
        """
        SK.extrapolate(values, self.start, self.change, factor)


def build_graph(
    index: PositionIndex, work: SK.PairWork, geom: np.ndarray, probabilities: np.ndarray, runs: bool = True
) -> SK.PairGraph:
    """The :class:`~urgym.solver._kernels.PairGraph` of a pair's work items: of runs, or of single positions."""
    size, first, run_start, counts, item_edges = count_runs(index, work, geom, runs)
    item_edge_end = np.cumsum(item_edges)
    edges = np.empty(int(item_edge_end[-1]), dtype=np.uint32)
    strided = bool(size.max() > 1)
    if strided and int(index.tables.choose_private.max()) >= 1 << 16:
        raise ValueError(f"{index.rules.name}: a stride would not fit 16 bits")  # C(P, P/2) for P private tiles
    strides = np.empty(len(edges) if strided else 0, dtype=np.uint16)
    SK.fill_run_edges(work, index.tables, geom, run_start, size, item_edge_end - item_edges, edges, strides)
    return SK.PairGraph(work, item_edge_end, run_start, size, first, counts, edges, strides, probabilities)


def count_runs(
    index: PositionIndex, work: SK.PairWork, geom: np.ndarray, runs: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The runs of a pair's work items and their edges per roll.

    The mover's moves never touch the opponent's private tiles, and the dense layout ranks those pieces last, so each
    run of ``C(P, d)`` positions of a block (``d``: the opponent's private pieces) has the same moves, and each
    successor's index grows by a fixed stride along the run. The tile layout has no such runs (runs of one).

    Returns each item's run size and block start, each item's first run (and the total at the end), the edges per
    run and roll (uint8) and per item. ``runs=False``: runs of one position.
    """
    items = work.items
    blocks = index.blocks
    first = blocks[items[:, 2], B_START]
    if index.kind == KIND_TILES or not runs:
        size = np.ones(len(items), dtype=np.int64)  # every position its own move list
    else:
        size = index.tables.choose_private[blocks[items[:, 2], B_D]]
    per_item = 1 + (items[:, 1] - 1 - first) // size - (items[:, 0] - first) // size  # the item's first, then each new
    run_start = np.concatenate(([0], np.cumsum(per_item)))
    n_rolls = int(geom[0]["n_rolls"])
    counts = np.empty(int(run_start[-1]) * n_rolls, dtype=np.uint8)
    item_edges = np.zeros(len(items), dtype=np.int64)
    SK.count_run_edges(work, index.tables, geom, run_start, size, counts, item_edges)
    return size, first, run_start, counts, item_edges


def expanded(graph: SK.PairGraph, positions: int, n_rolls: int) -> SK.PairGraph:
    """The same graph with every position's edges stored (runs of one position), as the policy kernels read it."""
    item_edges = np.zeros(len(graph.work.items), dtype=np.int64)
    SK.count_expanded(graph, item_edges)
    item_edge_end = np.cumsum(item_edges)
    counts = np.empty(positions * n_rolls, dtype=np.uint8)
    edges = np.empty(int(item_edge_end[-1]), dtype=np.uint32)
    SK.expand(graph, item_edge_end - item_edges, counts, edges)
    items = graph.work.items
    run_start = np.concatenate(([0], np.cumsum(items[:, 1] - items[:, 0])))
    single = np.ones(len(items), dtype=np.int64)
    return graph._replace(
        item_edge_end=item_edge_end,
        item_run_start=run_start,
        item_run_size=single,
        counts=counts,
        edges=edges,
        strides=np.zeros(0, dtype=np.uint16),
    )


def terminal_values(index: PositionIndex, values: np.ndarray, pair: tuple[int, int], start: int) -> None:
    """A pair where some side has scored everything: the mover has won (1) or lost (0)."""
    n = index.pieces
    offset = start
    x, y = pair
    for own_scored, opp_scored in ((x, y), (y, x)) if x != y else ((x, y),):
        size = index.layer_sizes[own_scored, opp_scored]
        values[offset : offset + size] = 1.0 if own_scored == n and opp_scored < n else 0.0
        offset += size


SMALL_PAIR = 250_000
"""Pairs of fewer positions are swept on one thread: starting the threads of each sweep cost more than they gain
(17% of finkel 5's sweeping on a busy machine)."""


def swept_by_every_thread(positions: int) -> bool:
    """True if a layer pair of ``positions`` positions is swept by all of a solve's threads at once.

    In place, so its values' last bits depend on the threads and their timing; a smaller pair is swept on one thread.
    """
    return positions >= SMALL_PAIR


@contextmanager
def threads_for(positions: int) -> Iterator[None]:
    """One numba thread while sweeping a small pair; as many as before otherwise."""
    before = numba.get_num_threads()
    if not swept_by_every_thread(positions):
        numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(before)


def pair_graph(index: PositionIndex, start: int, end: int) -> PairGraph:
    """The successor graph of the layer pair ``start:end`` with every position's edges (runs of one position).

    Per position and roll ``counts`` edges, in index order; an edge is ``successor << 1 | passes`` (see
    :mod:`urgym.solver._kernels`). The solver itself sweeps the same graph stored once per run.
    """
    return SweepGraph(index, start, end).graph
