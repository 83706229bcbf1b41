"""Exact values of fixed policies over a whole rule set: two against each other, or one against its best response.

They are computed on the solver's own machinery: its index, its successor graphs, its layering by scored pieces.

A :class:`Policy` gives the move of every decision: ``choices[i * R + k]`` is the position in
:func:`urgym.core.legal_moves` order of the move aimed at in position ``i`` of the
:class:`~urgym.solver.PositionIndex` (mover's view) with the k-th roll of the rules' dice (0 where there is no
choice). A policy that randomizes plays that move with probability ``keep[n]`` among ``n`` legal moves and each other
with ``(1 - keep[n]) / (n - 1)`` (uniform play: ``keep[n] = 1 / n``; a slip of chance e: ``keep[n] = 1 - e``), or,
where no such form fits, gives every probability in ``dense`` (``dense[i * R + k, :n]``, summing to 1). With one
legal move or none there is no choice: ``keep[0]``, ``keep[1]`` and such rows of ``dense`` are not read. Two
policies A and B playing each other give, for each position i, two values: ``a[i]``, A's winning chance when A is
to move in i, and ``b[i]``, B's when B is to move. With ``P(r)`` the roll probabilities, ``s'`` the position after
a move (seen by the side to move next) and ``p_A(m | s, r)`` A's chance of playing m,

    a(s) = sum_r P(r) * sum_m p_A(m | s, r) * W_A(s, r, m),    W_A = a(s')       after an extra roll,
                                                               W_A = 1 - b(s')   when the turn passes to B,

and the same for ``b`` with the sides exchanged; a roll without a legal move passes. With B's policy left out,
``b`` takes the best of B's moves instead: B is the *best response* to A, the perfect adversary that knows A's
policy, and ``b`` is the value of that Markov decision process (the solver's equation with A's moves fixed). Both
are solved by Gauss-Seidel sweeps over each layer pair's graph (the solver's own, stored once per run of
positions), in the solver's order, to ``tol``, with the solver's extrapolation of the slow mode; a sweep updates
A's values over the whole pair, then B's (from A's new ones); the best response is found by modified policy
iteration (sweeps that choose B's best moves, each followed by a few that hold them).

:func:`policy_losses` runs the game forwards: how often each position is reached when A plays B from the start,
and what A's moves there give away against perfect play. Against a perfect B these losses add up exactly to the
perfect-play value minus A's exact result (the performance-difference identity), which the tests check.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np
from numba import njit, prange
from urgym.solver import _kernels as SK
from urgym.solver._index import B_END, B_START, PositionIndex, unrank_in_block
from urgym.solver.graph import (
    SweepGraph,
    count_runs,
    layer_pairs,
    live_pairs,
    pair_graph,
    terminal_values,
    threads_for,
    work_items,
)
from urgym.solver.solve import MAX_SWEEPS, SlowModeTail, check_tol
from urgym.solver.table import EXACT_TOL

from urgym import Position, Rules, core, get_rules
from urgym.core import geometry
from urgym.progress import progress_bar

__all__ = [
    "BestMoves",
    "Policy",
    "PolicyLosses",
    "PolicyValues",
    "best_moves",
    "block_chunks",
    "count_decisions",
    "decision_states",
    "evaluate_policies",
    "policy_losses",
]

DENSE_TOL = 1e-9
"""How far from 1 a decision's dense chances over its legal moves may sum (as agents' distributions are checked)."""

REACH_TOL = 1e-14
"""Run the game forwards over a layer pair until the probability mass still moving there is below this."""


class Policy(NamedTuple):
    """A policy over every decision of a rule set (see the module docstring)."""

    choices: np.ndarray  # uint8[positions * rolls]: the move aimed at, by its place among the legal moves
    keep: np.ndarray  # float64[MAX_MOVES + 1]: the chance of playing it among n legal moves (n >= 2 read)
    dense: np.ndarray  # float64[positions * rolls, MAX_MOVES] every move's chance, or no rows: the form above

    @classmethod
    def fixed(cls, choices: np.ndarray) -> Policy:
        """The deterministic policy that always plays ``choices``."""
        return cls(choices, np.ones(core.MAX_MOVES + 1), _NO_DENSE)

    @property
    def deterministic(self) -> bool:
        """True when the policy never randomizes."""
        return len(self.dense) == 0 and bool(np.all(self.keep[2:] == 1.0))

    def chances(self, row: int, n: int) -> np.ndarray:
        """The chance of each of the ``n`` legal moves of decision ``row`` (what the kernels read, move by move)."""
        return np.array([_move_chance(self, row, j, n) for j in range(n)])

    def check(self, rows: int, name: str = "policy") -> None:
        """Raise ``ValueError`` unless the policy has one entry per position and roll and its chances are chances.

        Whether each decision's choice is one of its legal moves, and its dense chances sum to 1 over them, is checked
        against the solver's graph as each layer pair is evaluated.
        """
        choices = self.choices
        if not isinstance(choices, np.ndarray):  # an agent's table may be anything its author returned
            raise ValueError(
                f"{name} must choose with a numpy array uint8[{rows}] (a move per position and roll), got a "
                f"{type(choices).__name__}"
            )
        if choices.shape != (rows,) or choices.dtype != np.uint8:
            raise ValueError(
                f"{name} must choose with uint8[{rows}] (a move per position and roll), got "
                f"{choices.dtype}{list(choices.shape)}"
            )
        keep_ok = self.keep.dtype == np.float64 and self.keep.shape == (core.MAX_MOVES + 1,)
        if not keep_ok or not np.all((self.keep >= 0) & (self.keep <= 1)):
            raise ValueError(f"{name}'s keep must be float64[{core.MAX_MOVES + 1}], chances in [0, 1]")
        if len(self.dense) and (self.dense.dtype != np.float64 or self.dense.shape != (rows, core.MAX_MOVES)):
            raise ValueError(f"{name}'s dense chances must be float64[{rows}, {core.MAX_MOVES}]")
        if len(self.dense) and not np.all(np.isfinite(self.dense) & (self.dense >= 0)):
            raise ValueError(f"{name}'s dense chances must be finite and non-negative")


_NO_DENSE = np.zeros((0, core.MAX_MOVES))
_NO_CHOICES = np.zeros(0, dtype=np.uint8)
_NO_VALUES = np.zeros(0)


class BestMoves(NamedTuple):
    """The policy that plays, in every decision, the move best by ``values``: perfect play, with a solved table's.

    Its moves are never listed for the whole rule set: each computation reads them off the layer pair's graph it
    already holds, as it reaches the pair. They are :func:`best_moves`'s, ties within ``tie`` going to the first
    legal move.
    """

    values: np.ndarray  # float64[positions]: each position's value for its mover
    tie: float = 0.0

    @property
    def deterministic(self) -> bool:
        """Always True: one move per decision."""
        return True

    def check(self, positions: int, name: str = "policy") -> None:
        """Raise ``ValueError`` unless there is one finite value per position (``positions``) and ``tie`` >= 0."""
        if self.values.dtype != np.float64 or self.values.shape != (positions,):
            raise ValueError(
                f"{name}'s values must be float64[{positions}] (one per position), got "
                f"{self.values.dtype}{list(self.values.shape)}"
            )
        if not np.all(np.isfinite(self.values)):
            first = int(np.flatnonzero(~np.isfinite(self.values))[0])
            raise ValueError(f"{name}'s values must be finite, got {float(self.values[first])!r} at position {first}")
        if not (np.isfinite(self.tie) and self.tie >= 0):
            raise ValueError(f"{name}'s tie must be a finite number >= 0, got {self.tie!r}")


AnyPolicy = Policy | BestMoves | np.ndarray
"""What the computations here take as a side's policy: a :class:`Policy`, :class:`BestMoves`, or a policy's choices."""


def as_policy(policy: AnyPolicy) -> Policy | BestMoves:
    """A :class:`Policy` or :class:`BestMoves`; a plain array of choices is the deterministic policy playing them.

    Raises:
        ValueError: For anything else (a tuple, a list, None), naming what is allowed.
    """
    if isinstance(policy, BestMoves):
        return BestMoves(np.ascontiguousarray(policy.values), float(policy.tie))
    if not isinstance(policy, (Policy, np.ndarray)):
        raise ValueError(
            "a policy must be a urgym.solver.policy.Policy, a BestMoves or a numpy array of choices (one per "
            f"position and roll), got {type(policy).__name__}"
        )
    policy = policy if isinstance(policy, Policy) else Policy.fixed(policy)
    return Policy(*(np.ascontiguousarray(part) for part in policy))  # one numba type for every policy


def _checked_policy(policy: AnyPolicy, index: PositionIndex, rows: int, name: str) -> Policy | BestMoves:
    """``policy`` as :func:`as_policy` gives it, checked to fit ``index``'s positions and ``rows`` decisions."""
    policy = as_policy(policy)
    if isinstance(policy, BestMoves):
        policy.check(index.size, name)
    else:
        policy.check(rows, name)
    return policy


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


def block_chunks(index: PositionIndex, start: int, end: int, size: int) -> list[tuple[int, int]]:
    """The layer pair ``start:end`` cut at block boundaries into ranges of about ``size`` positions.

    Each range holds at least one block; for work whose memory grows with the positions it holds at once.
    """
    blocks = index.blocks
    inside = blocks[(blocks[:, B_START] >= start) & (blocks[:, B_END] <= end)]
    chunks, lo = [], start
    for block_end in np.sort(inside[:, B_END]):
        if block_end - lo >= size or block_end == end:
            chunks.append((lo, int(block_end)))
            lo = int(block_end)
    return chunks


def decision_states(index: PositionIndex, start: int, end: int) -> np.ndarray:
    """The packed states of positions ``start:end`` of a layer pair (for asking a policy its moves)."""
    out = np.zeros(end - start, dtype=np.int64)
    _states_of(SK.PairWork(work_items(index, start, end), start), index.tables, out)
    return out


@njit(cache=True, inline="always")
def _outcome_at(x, at, own, other):
    """The mover's chance after edge ``x`` to ``at``: its own value after an extra roll, else 1 - the other's."""
    return own[at] if (x & 1) == 0 else 1.0 - other[at]


@njit(cache=True, inline="always")
def _outcome(x, own, other):
    """:func:`_outcome_at` of edge ``x`` to the successor it holds."""
    return _outcome_at(x, x >> 1, own, other)


@njit(cache=True, inline="always")
def _value_along(edges, strides, strided, j, step, own, other):
    """:func:`_outcome_at` of edge j of a run for the position ``step`` places along it (``strided``: a graph of runs).

    The successor is computed as the solver's sweep computes it: moving the uint32 edge on by its stride first
    compiled slower.
    """
    x = edges[j]
    at = np.int64(x >> 1)
    if strided:
        at += step * np.int64(strides[j])
    return _outcome_at(x, at, own, other)


def _move_chances(policy: Policy) -> np.ndarray:
    """A randomizing policy of the compact form as a sweep reads it: ``[share, bonus]``, each per number of moves n.

    Among n legal moves every move is played with chance ``share[n]`` and the chosen one with ``bonus[n]`` more:
    ``share[n] = (1 - keep[n]) / (n - 1)``, ``bonus[n] = keep[n] - share[n]``; a single move is played for sure
    (``share[1] = 1``). A bonus within rounding of 0 is 0 (``keep[n] = 1 / n`` is uniform play, though
    ``(1 - 1/3) / 2`` is not ``1/3`` in floating point), so uniform play never reads its chosen move.
    """
    n = np.arange(len(policy.keep))
    share = np.where(n > 1, (1.0 - policy.keep) / np.maximum(n - 1, 1), np.where(n == 1, 1.0, 0.0))
    bonus = np.where(n > 1, policy.keep - share, 0.0)
    bonus[np.abs(bonus) <= 4 * np.finfo(np.float64).eps] = 0.0
    return np.stack([share, bonus])


class _GraphPlay(NamedTuple):
    """How :func:`_graph_side_sweep` reads a side's moves: the arguments after the values, unpacked.

    numba compiles each combination of None apart, so uniform play's loop holds nothing of the other forms.
    """

    chances: np.ndarray | None  # the compact form's [share, bonus] (:func:`_move_chances`); None: the best response
    slip: np.ndarray | None  # the policy's choices where a chosen move has a bonus (compact form), else None
    dense: np.ndarray | None  # the policy's chances per move, or None for the compact form


def _graph_play(policy: Policy | BestMoves | None) -> _GraphPlay:
    """A side's :class:`_GraphPlay`: its policy's, or the best response's for None.

    :class:`BestMoves` gets the best response's too: its chosen edges are always listed, so it is never read.
    """
    if policy is None or isinstance(policy, BestMoves):
        return _GraphPlay(None, None, None)
    chances = _move_chances(policy)
    if len(policy.dense):  # every choice among several moves is dense; a single move is played for sure
        return _GraphPlay(chances, None, policy.dense)
    return _GraphPlay(chances, policy.choices if np.any(chances[1] != 0.0) else None, None)


@njit(cache=True, parallel=True)
def _held_side_sweep(work, probs, own, other, chosen, half, buffers):
    """One side's half of a sweep, in place and in reverse index order, reading its chosen edge per roll.

    ``own`` is the side's values, ``other`` the other side's; ``chosen`` its moves' edges (:func:`_chosen_edges`).
    Each position's change is kept at ``buffers.change[half + local]`` for the extrapolation, and each item's
    largest change and products with the last sweep's changes (as the solver's sweep keeps them) go to ``buffers``:
    A's half (``half`` 0, swept first) starts them afresh, B's adds to them. Returns the largest change so far.
    """
    items, start = work.items, work.start
    change, item_delta, item_dot, item_norm = buffers.change, buffers.item_delta, buffers.item_dot, buffers.item_norm
    n_rolls = probs.shape[0]
    n_items = items.shape[0]
    for t in prange(n_items):
        it = n_items - 1 - t
        delta, dot, norm = (0.0, 0.0, 0.0) if half == 0 else (item_delta[it], item_dot[it], item_norm[it])
        for i in range(items[it, SK.I_END] - 1, items[it, SK.I_START] - 1, -1):
            c0 = (i - start) * n_rolls
            v = 0.0
            for k in range(n_rolls):
                v += probs[k] * _outcome(chosen[c0 + k], own, other)
            delta, dot, norm = _store(own, i, v, change, half + i - start, delta, dot, norm)
        item_delta[it], item_dot[it], item_norm[it] = delta, dot, norm
    return item_delta.max()


@njit(cache=True, parallel=True)
def _graph_side_sweep(graph, own, other, chances, slip, dense, best_edges, half, buffers):
    """:func:`_held_side_sweep` for a side that randomizes or is the best response, reading the solver's graph.

    A side that plays by chances (its :class:`_GraphPlay`) reads every move it may play, weighted by its dense
    chances, by the compact form's share with the chosen move's bonus (``slip``), or by the share alone (uniform
    play); with no chances (the best response) the best of its moves, as :func:`urgym.solver._kernels.sweep` reads
    them, and writes that move's edge to ``best_edges`` (unless None), where later sweeps may read it as the side's
    chosen edges. (numba compiles each combination of None apart, without the branches it cannot take.)

    The mean is summed in loops over the moves written out here, the stride test hoisted, as the solver's sweep
    does, one loop per form: a helper per move, or every form's branch in one loop, was slower (measured for
    issue 39). A slip weighs the chosen move in the loop (a select, not a branch) rather than reading it again. Each
    move's value comes from :func:`_value_along`, inlined.
    """
    items, start = graph.work.items, graph.work.start
    counts, edges, strides, probs = graph.counts, graph.edges, graph.strides, graph.probabilities
    item_edge_end, item_run_start, item_run_size = graph.item_edge_end, graph.item_run_start, graph.item_run_size
    item_block_start = graph.item_block_start
    change, item_delta, item_dot, item_norm = buffers.change, buffers.item_delta, buffers.item_dot, buffers.item_norm
    n_rolls = probs.shape[0]
    n_items = items.shape[0]
    strided = strides.shape[0] > 0
    share, bonus = (chances[0], chances[1]) if chances is not None else (probs, probs)  # (unread by the best)
    for t in prange(n_items):
        it = n_items - 1 - t
        e = item_edge_end[it]
        delta, dot, norm = (0.0, 0.0, 0.0) if half == 0 else (item_delta[it], item_dot[it], item_norm[it])
        size, first = item_run_size[it], item_block_start[it]
        for run in range(item_run_start[it + 1] - item_run_start[it] - 1, -1, -1):
            lo, hi = SK._run_bounds(items, it, run, size, first)
            c0 = (item_run_start[it] + run) * n_rolls
            for k in range(n_rolls):
                e -= counts[c0 + k]
            for i in range(hi - 1, lo - 1, -1):
                step = i - lo
                row = (i - start) * n_rolls  # the position's first row of chosen edges
                decision = i * n_rolls  # and of its policy's decisions
                edge = e
                v = 0.0
                for k in range(n_rolls):
                    n = counts[c0 + k]
                    if chances is not None:
                        w = 0.0
                        done = False  # (numba drops each block below whose argument is None)
                        if dense is not None:  # noqa: SIM102 (alone, numba drops it)
                            if n > 1:  # every move's own chance
                                for j in range(n):
                                    w += dense[decision + k, j] * _value_along(
                                        edges, strides, strided, edge + j, step, own, other
                                    )
                                done = True
                        if slip is not None:  # noqa: SIM102 (alone, numba drops it)
                            if bonus[n] != 0.0:  # the chosen move's chance above the others'
                                pick = edge + np.int64(slip[decision + k])
                                each, extra = share[n], bonus[n]
                                for j in range(edge, edge + n):
                                    chance = each + (extra if j == pick else 0.0)
                                    w += chance * _value_along(edges, strides, strided, j, step, own, other)
                                done = True
                        if not done:  # uniform play: one chance for every move
                            for j in range(edge, edge + n):
                                w += _value_along(edges, strides, strided, j, step, own, other)
                            w *= share[n]
                        v += probs[k] * w
                    else:  # the best response: the solver's update, with the sides' values
                        best = -1.0
                        top = edges[edge]
                        for j in range(edge, edge + n):
                            x = SK.edge_along(edges, strides, j, step)
                            w = _outcome(x, own, other)
                            if w > best:
                                best = w
                                top = x
                        v += probs[k] * best
                        if best_edges is not None and best_edges[row + k] != top:  # (a write dirties a line)
                            best_edges[row + k] = top
                    edge += n
                delta, dot, norm = _store(own, i, v, change, half + i - start, delta, dot, norm)
        item_delta[it], item_dot[it], item_norm[it] = delta, dot, norm
    return item_delta.max()


def evaluate_policies(
    rules: Rules | str,
    policy_a: AnyPolicy,
    policy_b: AnyPolicy | None = None,
    tol: float = EXACT_TOL,
    progress: bool = True,
    initial: PolicyValues | None = None,
) -> PolicyValues:
    """The exact values of policy A against policy B, or against its best response when ``policy_b`` is None.

    Args:
        rules: A rule set the solver indexes (every built-in one, murray and skiriuk too, and custom rules).
        policy_a: A's :class:`Policy`, its moves as ``uint8[positions * rolls]`` (see the module docstring), or
            :class:`BestMoves` (perfect play's moves, read off each pair's graph as it is swept).
        policy_b: B's in the same forms, or None for B the best response to A.
        tol: Sweep a layer pair until no value changes by more than this.
        progress: Show a progress bar.
        initial: Values to start the sweeps from (A's against another opponent, say): the same fixed point is
            reached, in fewer sweeps the nearer they are to it.

    Raises:
        ValueError: If a policy does not have one entry per position and roll, ``initial`` is of other rules, or
            ``tol`` is outside [1e-15, 1).
    """
    check_tol(tol)
    rules = get_rules(rules)
    index = PositionIndex(rules)
    rows = index.size * int(geometry(rules)[0]["n_rolls"])
    policy_a = _checked_policy(policy_a, index, rows, "policy A")
    best_b = policy_b is None
    policy_b = policy_a if best_b else _checked_policy(policy_b, index, rows, "policy B")
    if initial is not None and (initial.rules != rules or len(initial.a) != index.size):
        raise ValueError(f"initial values are of {initial.rules.describe()}, not of {rules.describe()}")
    a = np.zeros(index.size) if initial is None else np.array(initial.a, dtype=np.float64)  # copies
    b = np.zeros(index.size) if initial is None else np.array(initial.b, dtype=np.float64)
    began, sweeps = time.perf_counter(), 0
    bar = progress_bar(index.size, f"exact {rules.name}", progress, unit="pos", unit_scale=True)
    try:
        for layer in layer_pairs(index):
            if layer.over:  # a side has scored everything: the mover has won or lost, whoever plays
                terminal_values(index, a, layer.scored, layer.start)
                terminal_values(index, b, layer.scored, layer.start)
            else:
                sweeps += _sweep_pair(index, layer, a, b, policy_a, policy_b, best_b, tol)
            bar.update(layer.positions)
    finally:
        bar.close()
    return PolicyValues(rules, a, b, index, sweeps, time.perf_counter() - began)


POLICY_SWEEPS = 5
"""Sweeps of the best response with its moves held, between sweeps that choose them afresh (see :func:`_sweep_pair`)."""


def _sweep_pair(index, layer, a, b, policy_a, policy_b, best_b, tol) -> int:
    """Sweep one layer pair to ``tol``, extrapolating the slow mode as the solver does; return the sweeps.

    The pair's graph is the solver's own, stored once per run of positions. A deterministic policy's moves are
    listed out of it once (:func:`_chosen_edges`): its sweeps then read one edge per roll. Small pairs are swept on
    one thread, as the solver sweeps them.

    The best response is found by modified policy iteration: a sweep that takes the best of B's moves (and keeps
    them) is followed by :data:`POLICY_SWEEPS` sweeps that hold them, which read one edge per roll instead of
    every legal move's. Only a choosing sweep may end the pair, so the result meets the solver's own test: no value
    changes by ``tol`` in a sweep that takes the best of every move.
    """
    start, end, pair = layer.start, layer.end, layer.scored
    graph = SweepGraph(index, start, end, form="runs").graph
    chosen_a = _checked_choices(graph, policy_a, "policy A", pair)
    chosen_b = None if best_b else _checked_choices(graph, policy_b, "policy B", pair)
    best_edges = None  # the best response's moves, by the last sweep that chose them
    if best_b:
        policy_b, best_edges = None, np.empty((end - start) * graph.probabilities.shape[0], dtype=np.uint32)
    plays = _graph_play(policy_a), _graph_play(policy_b)
    n_items = len(graph.work.items)
    buffers = SK.SweepBuffers(*(np.zeros(n_items) for _ in range(3)), np.zeros(2 * (end - start), dtype=np.float32))
    tail = SlowModeTail()
    held = 0  # sweeps left with the best response's moves held
    with threads_for(end - start):
        for sweep in range(1, MAX_SWEEPS + 1):
            if best_b and held > 0:
                change = _sweep(graph, a, b, plays, chosen_a, best_edges, None, buffers)
                held = 0 if change < tol else held - 1
            else:
                change = _sweep(graph, a, b, plays, chosen_a, chosen_b, best_edges, buffers)
                if change < tol:
                    return sweep
                held = POLICY_SWEEPS
            norm = float(buffers.item_norm.sum())
            factor = tail.after_sweep(change, float(buffers.item_dot.sum()) / norm if norm > 0 else 0.0)
            if factor is not None:
                half = end - start
                SK.extrapolate(a, start, buffers.change[:half], factor)
                SK.extrapolate(b, start, buffers.change[half:], factor)
    raise RuntimeError(f"layer pair {pair} did not converge to {tol} in {MAX_SWEEPS} sweeps")


def _sweep(graph, a, b, plays, chosen_a, chosen_b, best_edges, buffers) -> float:
    """One sweep of a pair: A's values over the whole pair, then B's, each by the kernel that fits its side.

    A side with chosen edges (a deterministic policy, or the best response's moves held) reads one edge per roll;
    a side without them (None) reads the graph as its :class:`_GraphPlay` in ``plays`` says (worked out once per
    pair): its policy's every move, or the best of them for B with no policy, writing the best moves to
    ``best_edges`` unless None. Returns the largest change of either side.

    Sweeping each side apart (block Gauss-Seidel: B's update reads A's values of this sweep) took fewer sweeps than
    updating both sides of a position together (finkel 5's largest pair: 51 against 56-63 for random against
    perfect play, 44 against 58-60 for greedy), and a side's successors after a passing turn are the other side's
    values, so each half reads mostly one array of values, as the solver's sweep does.
    """
    half = len(buffers.change) // 2
    if chosen_a is not None:
        _held_side_sweep(graph.work, graph.probabilities, a, b, chosen_a, 0, buffers)
    else:
        _graph_side_sweep(graph, a, b, *plays[0], None, 0, buffers)
    if chosen_b is not None:
        return _held_side_sweep(graph.work, graph.probabilities, b, a, chosen_b, half, buffers)
    return _graph_side_sweep(graph, b, a, *plays[1], best_edges, half, buffers)


def _checked_choices(graph, policy, name, pair) -> np.ndarray | None:
    """The edge of each decision's chosen move in a pair (see :func:`_chosen_edges`), after checking every choice.

    A policy that randomizes reads every legal move's edge, so its choices are only checked (None).
    :class:`BestMoves` has its edges picked by its values.
    Raises ``ValueError`` naming the first decision whose choice is not one of its legal moves (a policy built by
    hand, or read from outside, can hold any byte).
    """
    n_rolls = graph.probabilities.shape[0]
    positions = graph.work.items[:, SK.I_END].max() - graph.work.start
    chosen = np.empty(positions * n_rolls if policy.deterministic else 0, dtype=np.uint32)
    if isinstance(policy, BestMoves):
        _chosen_edges(graph, _NO_CHOICES, _NO_DENSE, policy.values, policy.tie, chosen)
        return chosen
    row, n, total = _chosen_edges(graph, policy.choices, policy.dense, _NO_VALUES, 0.0, chosen)
    if row >= 0:
        i, k = divmod(row, n_rolls)
        where = f"in position {i} with roll number {k} (layer pair {pair}), which has {n} legal move{'s' * (n > 1)}"
        if np.isnan(total):
            raise ValueError(f"{name} chooses move {int(policy.choices[row])} {where} (choices are 0 to {n - 1})")
        raise ValueError(f"{name}'s dense chances sum to {total!r} {where} (they must sum to 1 over those moves)")
    return chosen if policy.deterministic else None


@njit(cache=True, parallel=True)
def _chosen_edges(graph, choices, dense, values, tie, out):
    """``out[(i - start) * R + k]``: the successor edge of the move ``choices`` aims at in position i with roll k.

    With ``values`` (not empty) the move is instead the one best by them (:func:`_best_choice`), and ``choices`` and
    ``dense`` are not read. Read off the graph of runs (the run's edge moved along by its stride). Returns the first
    decision row ``i * R + k`` whose choice is past its legal moves, or (a choice among several) whose ``dense``
    chances (unless it is empty) do not sum to 1 within :data:`DENSE_TOL` over them; with the number of its legal
    moves, and NaN for a bad choice or the chances' sum. (-1, 0, NaN) when every decision is sound. An empty ``out``
    only checks.
    """
    items, start = graph.work.items, graph.work.start
    counts, edges, strides = graph.counts, graph.edges, graph.strides
    item_edge_end, item_run_start, item_run_size = graph.item_edge_end, graph.item_run_start, graph.item_run_size
    item_block_start = graph.item_block_start
    n_rolls = graph.probabilities.shape[0]
    listing = out.shape[0] > 0
    bad_row = np.full(items.shape[0], -1, dtype=np.int64)
    bad_count = np.zeros(items.shape[0], dtype=np.int64)
    bad_total = np.full(items.shape[0], np.nan)
    checking_dense = dense.shape[0] > 0
    picking = values.shape[0] > 0
    for it in prange(items.shape[0]):
        e = item_edge_end[it - 1] if it > 0 else 0
        size, first = item_run_size[it], item_block_start[it]
        for run in range(item_run_start[it + 1] - item_run_start[it]):
            lo, hi = SK._run_bounds(items, it, run, size, first)
            c0 = (item_run_start[it] + run) * n_rolls
            for i in range(lo, hi):
                edge = e
                for k in range(n_rolls):
                    n = counts[c0 + k]
                    if picking:
                        j = _best_choice(edges, strides, edge, n, i - lo, values, tie)
                    else:
                        j = np.int64(choices[i * n_rolls + k])
                    if j >= n and bad_row[it] < 0:
                        bad_row[it] = i * n_rolls + k
                        bad_count[it] = n
                    if checking_dense and n > 1 and bad_row[it] < 0:
                        total = dense[i * n_rolls + k, :n].sum()
                        if not abs(total - 1.0) <= DENSE_TOL:
                            bad_row[it], bad_count[it], bad_total[it] = i * n_rolls + k, n, total
                    if listing:
                        out[(i - start) * n_rolls + k] = SK.edge_along(edges, strides, edge + min(j, n - 1), i - lo)
                    edge += n
            for k in range(n_rolls):
                e += counts[c0 + k]
    for it in range(items.shape[0]):
        if bad_row[it] >= 0:
            return bad_row[it], bad_count[it], bad_total[it]
    return -1, 0, np.nan


@njit(cache=True, inline="always")
def _store(values, i, new, change, at, delta, dot, norm):
    """Write position i's new value, keeping its change at ``change[at]`` for the extrapolation.

    Returns the item's running largest change and dot products (see :func:`_held_side_sweep`) with the position's
    added.
    """
    d = new - values[i]
    values[i] = new
    old = change[at]
    change[at] = d
    return max(delta, abs(d)), dot + d * old, norm + old * old


@njit(cache=True, inline="always")
def _move_chance(policy, row, j, n):
    """The chance that ``policy`` plays the j-th of the n legal moves of decision ``row``."""
    if n == 1:
        return 1.0
    if policy.dense.shape[0] > 0:
        return policy.dense[row, j]
    keep = policy.keep[n]
    return keep if j == policy.choices[row] else (1.0 - keep) / (n - 1)


@njit(cache=True)
def _push_pair(graph, end, reach, mass, policies, tol):
    """Run the game forwards over a pair: move the probability ``mass`` waiting at its positions on, to below ``tol``.

    ``reach[s, i]`` sums what passed through position i with side s (0: A, 1: B) to move; ``mass`` collects what
    moves on into later pairs. Sweeps in index order, so most mass moves on within a sweep.
    """
    items, start = graph.work.items, graph.work.start
    counts, edges, probs, item_edge_end = graph.counts, graph.edges, graph.probabilities, graph.item_edge_end
    n_rolls = probs.shape[0]
    for _ in range(1_000_000):
        for it in range(items.shape[0]):
            e = item_edge_end[it - 1] if it > 0 else 0
            for i in range(items[it, SK.I_START], items[it, SK.I_END]):
                c0 = (i - start) * n_rolls
                for side in range(2):
                    m = mass[side, i]
                    if m == 0.0:
                        continue
                    mass[side, i] = 0.0
                    reach[side, i] += m
                    edge = e
                    for k in range(n_rolls):
                        n = counts[c0 + k]
                        for j in range(n):
                            x = edges[edge + j]
                            to = side if (x & 1) == 0 else 1 - side
                            mass[to, x >> 1] += m * probs[k] * _move_chance(policies[side], i * n_rolls + k, j, n)
                        edge += n
                for k in range(n_rolls):
                    e += counts[c0 + k]
        left = 0.0
        for side in range(2):
            for i in range(start, end):
                left += mass[side, i]
        if left < tol:
            for side in range(2):
                for i in range(start, end):
                    reach[side, i] += mass[side, i]
                    mass[side, i] = 0.0
            return


@njit(cache=True, parallel=True)
def _pair_losses(graph, reach, policy, best, loss):
    """``loss[i]``: what A's moves in position i give away against ``best`` (the perfect values), times its reach.

    That is reach * sum_r P(r) * (max_m Q(m) - sum_m p_A(m) Q(m)), with Q the outcome under perfect play.
    """
    items, start = graph.work.items, graph.work.start
    counts, edges, probs, item_edge_end = graph.counts, graph.edges, graph.probabilities, graph.item_edge_end
    n_rolls = probs.shape[0]
    for it in prange(items.shape[0]):
        e = item_edge_end[it - 1] if it > 0 else 0
        for i in range(items[it, SK.I_START], items[it, SK.I_END]):
            c0 = (i - start) * n_rolls
            total = 0.0
            for k in range(n_rolls):
                n = counts[c0 + k]
                if n > 1 and reach[0, i] > 0.0:
                    top = 0.0
                    played = 0.0
                    for j in range(n):
                        q = _outcome(edges[e + j], best, best)
                        top = max(top, q)
                        played += _move_chance(policy, i * n_rolls + k, j, n) * q
                    total += probs[k] * (top - played)
                e += n
            loss[i] = reach[0, i] * total


class PolicyLosses(NamedTuple):
    """How often each position is reached when A plays B from the start, and A's losses there."""

    reach: np.ndarray  # float64[2, positions]: expected visits with A (row 0) or B (row 1) to move
    loss: np.ndarray  # float64[positions]: A's expected loss against perfect play in the position, times its reach
    index: PositionIndex


def policy_losses(
    rules: Rules | str,
    policy_a: AnyPolicy,
    policy_b: AnyPolicy,
    best: np.ndarray,
    progress: bool = True,
    tol: float = REACH_TOL,
) -> PolicyLosses:
    """Where A loses, as A plays B from the start, half the games as light and half as dark.

    ``best`` holds the perfect-play values (a solved table's), against which A's moves are measured. Against a
    perfect B the losses add up to the perfect-play value minus A's exact result (the performance-difference
    identity: B's perfect moves give nothing away, so every point A lacks was lost by A's own moves). Either policy
    may be :class:`BestMoves`: its moves are read off each pair's graph as the game reaches the pair.
    """
    check_tol(tol)
    rules = get_rules(rules)
    index = PositionIndex(rules)
    rows = index.size * int(geometry(rules)[0]["n_rolls"])
    sides = zip("AB", (policy_a, policy_b), strict=True)
    given = [_checked_policy(policy, index, rows, f"policy {name}") for name, policy in sides]
    policies = tuple(Policy.fixed(np.zeros(rows, np.uint8)) if isinstance(p, BestMoves) else p for p in given)
    reach = np.zeros((2, index.size))
    mass = np.zeros((2, index.size))
    loss = np.zeros(index.size)
    start = index.rank(Position.start(rules))
    mass[0, start] = mass[1, start] = 0.5  # A moves first as light; B does with A dark
    bar = progress_bar(index.size, f"losses of A on {rules.name}", progress, unit="pos", unit_scale=True)
    try:
        for layer in layer_pairs(index, reverse=True):
            lo, hi = layer.start, layer.end
            if layer.over:  # the game is over: the mass stays
                reach[:, lo:hi] += mass[:, lo:hi]
            else:
                graph = pair_graph(index, lo, hi)
                for policy, playing in zip(given, policies, strict=True):
                    if isinstance(policy, BestMoves):  # this pair's moves, from the graph just built
                        _best_moves(graph, policy.values, policy.tie, playing.choices)
                _push_pair(graph, hi, reach, mass, policies, tol)
                _pair_losses(graph, reach, policies[0], best, loss)
            bar.update(layer.positions)
    finally:
        bar.close()
    return PolicyLosses(reach, loss, index)


@njit(cache=True, inline="always")
def _best_choice(edges, strides, edge, n, step, values, tie):
    """The place among its ``n`` legal moves (edges from ``edge``) of the move best by ``values``.

    Ties within ``tie`` go to the first; ``step`` is the position's place along its run (0 in a graph of positions).
    """
    n = np.int64(n)  # (a uint8 count would make j unsigned, and the returned place a float)
    if n < 2:
        return 0
    top = -1.0
    for j in range(n):
        top = max(top, _outcome(SK.edge_along(edges, strides, edge + j, step), values, values))
    for j in range(n):
        if _outcome(SK.edge_along(edges, strides, edge + j, step), values, values) >= top - tie:
            return j
    return 0


@njit(cache=True, parallel=True)
def _best_moves(graph, values, tie, choices):
    """``choices[i * R + k]``: :func:`_best_choice` of every decision of a pair's graph of positions."""
    items, start = graph.work.items, graph.work.start
    counts, edges, strides, item_edge_end = graph.counts, graph.edges, graph.strides, graph.item_edge_end
    n_rolls = graph.probabilities.shape[0]
    for it in prange(items.shape[0]):
        e = item_edge_end[it - 1] if it > 0 else 0
        for i in range(items[it, SK.I_START], items[it, SK.I_END]):
            c0 = (i - start) * n_rolls
            for k in range(n_rolls):
                n = counts[c0 + k]
                choices[i * n_rolls + k] = _best_choice(edges, strides, e, n, 0, values, tie)
                e += n


def best_moves(index: PositionIndex, values: np.ndarray, tie: float = 0.0) -> np.ndarray:
    """The move of every decision that is best by ``values`` (each position's value for its mover).

    A move is worth the value after it (an extra roll) or one minus it (the turn passes); ties within ``tie`` go to
    the lowest source, the first legal move. With a solved table's values these are perfect play's moves. Returns
    ``uint8[positions * rolls]`` as :class:`Policy` takes it.
    """
    choices = np.zeros(index.size * int(geometry(index.rules)[0]["n_rolls"]), dtype=np.uint8)
    for layer in live_pairs(index):
        _best_moves(pair_graph(index, layer.start, layer.end), values, tie, choices)
    return choices


def count_decisions(index: PositionIndex) -> int:
    """How many (position, roll) pairs of the index have a choice of moves (more than one legal move)."""
    geom = geometry(index.rules)
    total = 0
    for layer in live_pairs(index):
        work = SK.PairWork(work_items(index, layer.start, layer.end), layer.start)
        counts = count_runs(index, work, geom, runs=False)[3]
        total += int(np.count_nonzero(counts > 1))  # runs of one: a count per position and roll
    return total
