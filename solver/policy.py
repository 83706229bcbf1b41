"""Exact values of fixed policies over a whole rule set: two against each other, or one against its best response.

They are computed on the solver's own machinery: its index, its successor graphs, its layering by scored pieces.

A *policy* fixes the move of every decision: ``choices[i * R + k]`` is the position in :func:`urgym.core.legal_moves`
order of the move played in position ``i`` of the :class:`~urgym.solver.PositionIndex` (mover's view) with the k-th
roll of the rules' dice (0 where there is no choice). Two policies A and B playing each other give, for each
position i, two values: ``a[i]``, A's winning chance when A is to move in i, and ``b[i]``, B's when B is to move.
With ``P(r)`` the roll probabilities, ``s'`` the position after the move (seen by the side to move next) and
``m_A(s, r)`` A's move,

    a(s) = sum_r P(r) * W_A(s, r, m_A(s, r)),    W_A = a(s')       after an extra roll,
                                                 W_A = 1 - b(s')   when the turn passes to B,

and the same for ``b`` with the sides exchanged; a roll without a legal move passes. With B's policy left out,
``b`` takes the best of B's moves instead of a fixed one: B is the *best response* to A, the perfect adversary
that knows A's policy, and ``b`` is the value of that Markov decision process (the solver's equation with A's
moves fixed). Both are solved by Gauss-Seidel sweeps over each layer pair, in the solver's order, to ``tol``.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np
from numba import njit, prange
from urgym.solver import _kernels as SK
from urgym.solver._index import B_START, PositionIndex, unrank_in_block
from urgym.solver.solve import MAX_SWEEPS, _PairGraph, _terminal_values, _work_items
from urgym.solver.table import EXACT_TOL

from urgym import Position, Rules, core, get_rules
from urgym.core import geometry
from urgym.progress import progress_bar

__all__ = ["PolicyValues", "decision_states", "evaluate_policies"]


class PolicyValues(NamedTuple):
    """The values of two policies over every position (see the module docstring)."""

    rules: Rules
    a: np.ndarray  # float64[positions]: A's winning chance with A to move
    b: np.ndarray  # float64[positions]: B's winning chance with B to move (B the best response if it had no policy)
    index: PositionIndex
    sweeps: int
    seconds: float

    def start(self) -> tuple[float, float]:
        """A's winning chance from the start: as light (A moves first) and as dark (B moves first)."""
        i = self.index.rank(Position.start(self.rules))
        return float(self.a[i]), float(1.0 - self.b[i])


@njit(cache=True, parallel=True)
def _states_of(work, index, out):
    """The packed state of every position of a layer pair, in index order."""
    items = work.items
    for it in prange(items.shape[0]):
        b = items[it, SK.I_BLOCK]
        first = index.blocks[b, B_START]
        for i in range(items[it, SK.I_START], items[it, SK.I_END]):
            out[i - work.start] = unrank_in_block(i - first, b, index)


def decision_states(index: PositionIndex, start: int, end: int) -> np.ndarray:
    """The packed states of positions ``start:end`` of a layer pair (for asking a policy its moves)."""
    out = np.zeros(end - start, dtype=np.int64)
    _states_of(SK.PairWork(_work_items(index, start, end), start), index.tables, out)
    return out


@njit(cache=True, parallel=True)
def _policy_sweep(graph, a, b, choice_a, choice_b, best_b, item_delta):
    """One in-place sweep of both values over a pair, in reverse index order; returns the largest change."""
    items, start = graph.work.items, graph.work.start
    counts, edges, probs, item_edge_end = graph.counts, graph.edges, graph.probabilities, graph.item_edge_end
    n_rolls = probs.shape[0]
    n_items = items.shape[0]
    for t in prange(n_items):
        it = n_items - 1 - t
        e = item_edge_end[it]
        delta = 0.0
        for i in range(items[it, SK.I_END] - 1, items[it, SK.I_START] - 1, -1):
            c0 = (i - start) * n_rolls
            for k in range(n_rolls):
                e -= counts[c0 + k]
            edge = e
            va = 0.0
            vb = 0.0
            for k in range(n_rolls):
                n = counts[c0 + k]
                x = edges[edge + choice_a[i * n_rolls + k]]
                wa = a[x >> 1] if (x & 1) == 0 else 1.0 - b[x >> 1]
                if best_b:
                    wb = 0.0
                    for j in range(n):
                        y = edges[edge + j]
                        w = b[y >> 1] if (y & 1) == 0 else 1.0 - a[y >> 1]
                        if w > wb:
                            wb = w
                else:
                    y = edges[edge + choice_b[i * n_rolls + k]]
                    wb = b[y >> 1] if (y & 1) == 0 else 1.0 - a[y >> 1]
                va += probs[k] * wa
                vb += probs[k] * wb
                edge += n
            d = max(abs(va - a[i]), abs(vb - b[i]))
            if d > delta:
                delta = d
            a[i] = va
            b[i] = vb
        item_delta[it] = delta
    return item_delta.max()


def evaluate_policies(
    rules: Rules | str,
    choices_a: np.ndarray,
    choices_b: np.ndarray | None = None,
    tol: float = EXACT_TOL,
    progress: bool = True,
) -> PolicyValues:
    """The exact values of policy A against policy B, or against its best response when ``choices_b`` is None.

    Args:
        rules: A rule set the solver indexes (finkel, blitz, masters, aseb and custom single-visit rules).
        choices_a: A's moves, ``uint8[positions * rolls]`` (see the module docstring).
        choices_b: B's moves in the same form, or None for B the best response to A.
        tol: Sweep a layer pair until no value changes by more than this.
        progress: Show a progress bar.

    Raises:
        ValueError: If a policy's array does not have one entry per position and roll.
    """
    rules = get_rules(rules)
    index = PositionIndex(rules)
    n_rolls = int(geometry(rules)[0]["n_rolls"])
    for name, choices in (("A", choices_a), ("B", choices_b)):
        if choices is not None and (choices.shape != (index.size * n_rolls,) or choices.dtype != np.uint8):
            raise ValueError(
                f"policy {name} must be uint8[{index.size * n_rolls}] (a move per position and roll), got "
                f"{choices.dtype}{list(choices.shape)}"
            )
    best_b = choices_b is None
    unused = np.zeros(1, dtype=np.uint8)
    a = np.zeros(index.size, dtype=np.float64)
    b = np.zeros(index.size, dtype=np.float64)
    began, sweeps = time.perf_counter(), 0
    bar = progress_bar(index.size, f"exact {rules.name}", progress, unit="pos", unit_scale=True)
    try:
        for pair, (start, end) in zip(index.pairs, index.pair_ranges, strict=True):
            if index.pieces in pair:  # a side has scored everything: the mover has won or lost, whoever plays
                _terminal_values(index, a, pair, start)
                _terminal_values(index, b, pair, start)
            else:
                graph = _PairGraph(index, start, end).graph
                delta = np.zeros(len(graph.work.items))
                for _ in range(MAX_SWEEPS):
                    sweeps += 1
                    change = _policy_sweep(graph, a, b, choices_a, unused if best_b else choices_b, best_b, delta)
                    if change < tol:
                        break
                else:
                    raise RuntimeError(f"layer pair {pair} did not converge to {tol} in {MAX_SWEEPS} sweeps")
            bar.update(end - start)
    finally:
        bar.close()
    return PolicyValues(rules, a, b, index, sweeps, time.perf_counter() - began)


def legal_move_lists(states: np.ndarray, rules: Rules) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For every state and roll of the dice: the roll, the legal moves (``core.legal_moves`` order) and their count."""
    geom = geometry(rules)
    rolls = geom[0]["rolls"][: int(geom[0]["n_rolls"])]
    moves = np.zeros((len(states) * len(rolls), core.MAX_MOVES), dtype=np.int64)
    counts = np.zeros(len(states) * len(rolls), dtype=np.int64)
    _legal_lists(states, rolls, geom, moves, counts)
    return np.tile(rolls, len(states)), moves, counts


@njit(cache=True)
def _legal_lists(states, rolls, geom, moves, counts):
    for i in range(states.shape[0]):
        for k in range(rolls.shape[0]):
            row = i * rolls.shape[0] + k
            counts[row] = core.legal_moves(states[i], rolls[k], geom, moves[row])
