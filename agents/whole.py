"""A search agent's move in every decision of a rule set at once, by dynamic programming over the solver's graphs.

The search of :mod:`urgym.agents.search` values a chance node s searched d plies deep as

    W(s, 0) = V(s),     W(s, d) = sum_r P(r) max_m q(s, r, m, d),

with q = 1 for a winning move, W(s', d - 1) after an extra roll and 1 - W(s', d - 1) when the turn passes (a roll
without a legal move passes). A move searched d plies beyond it is worth q(s, r, m, d + 1). So W(., d) of every
position follows from W(., d - 1) of every position in one pass over the solver's successor graphs (the same edges
the solver sweeps, no second copy of the rules): d passes give the values, and one more the move of every decision,
the best with ties within :data:`~urgym.agents.search.TIE` to the lowest source, as the search decides them. Asking
each decision's search instead repeats the same subtrees millions of times; here each position is evaluated once
per depth. The tests hold the moves equal to the search's, decision by decision.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange
from urgym.agents.search import TIE, SearchContext, leaf_value
from urgym.solver import PositionIndex
from urgym.solver.graph import ITEM_END, ITEM_START, live_pairs, pair_graph
from urgym.solver.policy import best_moves, decision_states

from urgym import Rules
from urgym.progress import progress_bar

__all__ = ["PASS_RATE", "search_policy", "search_policy_seconds"]

PASS_RATE = 2_000_000
"""Positions a core takes through one pass (a pair's graph built, then read once) per second (measured on finkel
5 pieces: 14.7 M positions in about 3 s per pass on 2 cores)."""


@njit(cache=True)
def _leaves(states, ctx, out, start):
    """V(s) of each state (one thread: a network's scratch buffers are shared)."""
    for i in range(states.shape[0]):
        out[start + i] = leaf_value(states[i], ctx)


@njit(cache=True, inline="always")
def _q(x, values):
    """A move's worth from the successor's value: kept turn W(s'), passed turn 1 - W(s') (a win: 1 - 0)."""
    return values[x >> 1] if (x & 1) == 0 else 1.0 - values[x >> 1]


@njit(cache=True, parallel=True)
def _deepen(graph, previous, out):
    """W(s, d) of a pair's positions from W(., d - 1) of every position."""
    items, start = graph.work.items, graph.work.start
    counts, edges, probs, item_edge_end = graph.counts, graph.edges, graph.probabilities, graph.item_edge_end
    n_rolls = probs.shape[0]
    for it in prange(items.shape[0]):
        e = item_edge_end[it - 1] if it > 0 else 0
        for i in range(items[it, ITEM_START], items[it, ITEM_END]):
            c0 = (i - start) * n_rolls
            v = 0.0
            for k in range(n_rolls):
                best = 0.0
                for _ in range(counts[c0 + k]):
                    best = max(best, _q(edges[e], previous))
                    e += 1
                v += probs[k] * best
            out[i] = v


def search_policy(rules: Rules, ctx: SearchContext, depth: int, progress: bool = True) -> np.ndarray:
    """The move a search with context ``ctx`` plays ``depth`` plies beyond the move, in every decision of ``rules``.

    Returns ``uint8[positions * rolls]`` as :class:`urgym.solver.policy.Policy` takes it (each move's place among
    the legal moves).
    """
    index = PositionIndex(rules)
    values = np.zeros(index.size)
    live = [(layer.start, layer.end) for layer in live_pairs(index)]
    bar = progress_bar(
        (depth + 1) * index.size, f"search of depth {depth} over {rules.name}", progress, unit="pos", unit_scale=True
    )
    try:
        for start, end in live:  # W(., 0); finished games stay 0: the mover there has lost
            _leaves(decision_states(index, start, end), ctx, values, start)
        bar.update(index.size)
        for _ in range(depth):
            deeper = np.zeros(index.size)
            for start, end in live:
                _deepen(pair_graph(index, start, end), values, deeper)
                bar.update(end - start)
            values = deeper
            bar.update(index.size - sum(end - start for start, end in live))
        return best_moves(index, values, TIE)
    finally:
        bar.close()


def search_policy_seconds(rules: Rules, ctx: SearchContext, depth: int, positions: int, threads: int) -> float:
    """About how long :func:`search_policy` takes here: ``depth + 1`` passes and a leaf value per position.

    The leaf's cost is timed on a sample of positions (a network's forward pass is most of it).
    """
    import time

    index = PositionIndex(rules)
    sample = decision_states(index, *index.pair_ranges[-1])[:4096]  # the start's pair: no finished games
    out = np.zeros(len(sample))
    _leaves(sample[:8], ctx, out, 0)  # compiled and warm
    began = time.perf_counter()
    _leaves(sample, ctx, out, 0)
    leaf = (time.perf_counter() - began) / max(len(sample), 1)
    return positions * leaf + (depth + 1) * positions / (PASS_RATE * threads)
