"""Numba expectiminimax on the packed positions of :mod:`urgym.core`.

Values are negamax values: a chance node's value is the expected score of the side about to roll,

    V(s, d) = sum_r P(r) * max_m [ +V(s', d - 1) if the move keeps the turn else -V(s', d - 1) ]

where ``d`` counts the decisions (plies) still to search, a roll without a legal move passes (also one ply,
so a run of passes cannot recurse forever), and at d = 0 the score is the advancement difference of
:func:`urgym.core.advancement`. A won game scores ``win = pieces * (L + 1)``, above every other score,
and a lost one ``-win``; those are the bounds the chance-node pruning needs.

Pruning never changes a value: Star1 cuts chance nodes from the bounds of the unsearched rolls, decision
nodes are alpha-beta with moves ordered by their static score, and a transposition table keyed by
(position, depth) stores exact values and bounds. ``prune=False`` turns all three off, giving the plain
search the tests compare against.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from urgym import core

TT_MIN_DEPTH = 2
"""Chance nodes this deep or deeper go through the transposition table; shallower ones are cheaper to redo."""
TT_EXACT = 1
TT_LOWER = 2
TT_UPPER = 3

S_NODES = 0  # chance nodes searched
S_LEAVES = 1  # static evaluations
S_TT_HITS = 2
STATS_SIZE = 4


class TranspositionTable(NamedTuple):
    """Values of searched chance nodes keyed by (position, depth): exact, or a lower or upper bound."""

    state: np.ndarray  # int64[2^bits]
    depth: np.ndarray  # int8
    value: np.ndarray  # float64
    flag: np.ndarray  # int8: TT_EXACT, TT_LOWER, TT_UPPER (0: empty)


def transposition_table(bits: int) -> TranspositionTable:
    """An empty table of ``2**bits`` entries."""
    size = 1 << bits
    return TranspositionTable(np.zeros(size, np.int64), np.zeros(size, np.int8), np.zeros(size, np.float64),
                              np.zeros(size, np.int8))


class SearchContext(NamedTuple):
    """Everything a search passes down its recursion: the rules, the score of a win, whether to prune, per-depth
    move and score buffers, the transposition table and the counters."""

    geom: np.ndarray  # urgym.core.GEOMETRY
    win: float
    prune: bool
    buf: np.ndarray  # int64[depth + 1, MAX_MOVES]: moves per depth (buf[1] holds the last ply's best gains)
    scores: np.ndarray  # float64[depth + 1, MAX_MOVES]: move-ordering scores per depth
    tt: TranspositionTable
    stats: np.ndarray  # int64[STATS_SIZE]


@njit(cache=True)
def _tt_slot(state, depth, mask):
    z = np.uint64(state) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(depth)
    z = (z ^ (z >> np.uint64(29))) * np.uint64(0xBF58476D1CE4E5B9)
    return np.int64((z ^ (z >> np.uint64(32))) & np.uint64(mask))


@njit(cache=True)
def _order_moves(state, roll, moves, n, geom, scores):
    """Sort ``moves[:n]`` by the mover's immediate gain (roll plus capture), best first (insertion sort).

    A win comes first, and an extra roll counts a little on top of its gain.
    """
    opp = core.opp_mask(state)
    for i in range(n):
        _, flags = core.apply_move(state, roll, moves[i], geom)
        if flags & core.WIN:
            scores[i] = 1e9
        else:
            scores[i] = core.captured_position(opp, moves[i] + roll, geom) + (0.5 if flags & core.EXTRA_ROLL else 0.0)
    for i in range(1, n):
        m = moves[i]
        s = scores[i]
        j = i - 1
        while j >= 0 and scores[j] < s:
            moves[j + 1] = moves[j]
            scores[j + 1] = scores[j]
            j -= 1
        moves[j + 1] = m
        scores[j + 1] = s


@njit(cache=True, inline="always")
def _last_ply(state, ctx):
    """A chance node one ply above the horizon, without playing any move.

    After a move, the mover's advancement difference is the one before plus the roll plus the position the
    captured piece had reached (both for a kept turn and, negated twice, for a passed one), so the best
    move of each roll is the one with the largest such gain, unless a move wins. One pass over the pieces
    finds the best gain of every roll (``best[r]``, -1 when roll r has no legal move).
    """
    geom = ctx.geom
    g = geom[0]
    length = g.length
    best = ctx.buf[1]
    own = core.own_mask(state)
    opp = core.opp_mask(state)
    home = core.own_home(state)
    last_piece = home + core.popcount(own) == 1
    for r in range(g.max_roll + 1):
        best[r] = -1
    base = 0
    for p in range(0, length + 1):
        if p > 0 and (opp >> (p - 1)) & 1:
            base -= p  # the opponent's position p is on its own path: it may share the number with ours
        if p == 0:
            if home == 0:
                continue
        elif not (own >> (p - 1)) & 1:
            continue
        else:
            base += p
        for r in range(1, g.max_roll + 1):
            dest = p + r
            if not core.can_move(own, opp, p, dest, geom):
                continue
            # Bearing off the last piece wins, which outranks any gain.
            gain = 1000 if (dest == length + 1 and last_piece) else core.captured_position(opp, dest, geom)
            if gain > best[r]:
                best[r] = gain
    base += (core.own_scored(state, g.pieces) - core.opp_scored(state, g.pieces)) * (length + 1)
    total = 0.0
    for i in range(g.n_rolls):
        r = g.rolls[i]
        gain = best[r]
        ctx.stats[S_LEAVES] += 1
        if gain < 0:
            total += g.probabilities[i] * base  # no legal move: the turn passes
        elif gain >= 1000:
            total += g.probabilities[i] * ctx.win
        else:
            total += g.probabilities[i] * (base + r + gain)
    return total


@njit(cache=True)
def _value_bounds(state, depth, geom, win):
    """Bounds on a chance node's value ``depth`` plies deep, for the side about to roll.

    A ply changes the advancement difference by at most the largest roll plus the position of a captured
    piece, so without a finished game the value stays within ``depth`` such swings of today's difference.
    A side can only finish if it has at most ``depth`` pieces left, one per move.
    """
    swing = geom[0].max_roll + geom[0].length
    base = core.advancement(state, geom)
    lower = max(base - depth * swing, -win)
    upper = min(base + depth * swing, win)
    if core.opp_home(state) + core.popcount(core.opp_mask(state)) <= depth:
        lower = -win
    if core.own_home(state) + core.popcount(core.own_mask(state)) <= depth:
        upper = win
    return np.float64(lower), np.float64(upper), base


@njit(cache=True)
def _last_ply_upper(state, base, roll, move, nxt, flags, geom, win):
    """An upper bound, for the mover, on a move whose successor is searched one ply deep.

    After the move the mover's advancement difference is ``base`` plus its gain; one more ply by the
    opponent can only lower it, one more by the mover raises it by at most a swing, or wins.
    """
    after = base + core.captured_position(core.opp_mask(state), move + roll, geom) + roll
    if flags & core.EXTRA_ROLL:
        if core.own_home(nxt) + core.popcount(core.own_mask(nxt)) <= 1:
            return win
        return np.float64(after + geom[0].max_roll + geom[0].length)
    return np.float64(after)


@njit(cache=True)
def _chance(state, depth, alpha, beta, ctx):
    """Expected value for the side about to roll in ``state``, ``depth`` >= 1 plies deep; fail-hard.

    One self-recursive function (numba's cache cannot hold mutually recursive ones): for each roll it plays
    the decision node inline, and each move's value as :func:`_move_value` computes it at the root.
    """
    win, prune, geom, tt = ctx.win, ctx.prune, ctx.geom, ctx.tt
    if core.is_over(state):
        return -win  # the previous mover has just won
    ctx.stats[S_NODES] += 1
    if depth == 1:
        return _last_ply(state, ctx)
    slot = -1
    if prune and depth >= TT_MIN_DEPTH:
        slot = _tt_slot(state, depth, tt.state.shape[0] - 1)
        if tt.state[slot] == state and tt.depth[slot] == depth:
            ctx.stats[S_TT_HITS] += 1
            flag = tt.flag[slot]
            v = tt.value[slot]
            if flag == TT_EXACT:
                return v
            if flag == TT_LOWER and v >= beta:
                return beta
            if flag == TT_UPPER and v <= alpha:
                return alpha
    lower = -win
    upper = win
    base = 0
    if prune:
        lower, upper, base = _value_bounds(state, depth, geom, win)
        if alpha >= upper:
            return alpha
        if beta <= lower:
            return beta
    moves = ctx.buf[depth]
    g = geom[0]
    total = 0.0
    remaining = 1.0
    for i in range(g.n_rolls):
        p = g.probabilities[i]
        roll = g.rolls[i]
        remaining -= p
        # Star1: the window this roll's value must fall in for the node's value to fall in (alpha, beta).
        lo = -np.inf
        hi = np.inf
        if prune:
            lo = (alpha - total - upper * remaining) / p
            hi = (beta - total - lower * remaining) / p
        a = max(lo, lower)
        b = min(hi, upper)
        # The decision node of this roll, fail-hard in (a, b).
        n = core.legal_moves(state, roll, geom, moves)
        if n == 0:
            v = -_chance(core.swap_sides(state), depth - 1, -b, -a, ctx)
        else:
            if prune and n > 1:
                _order_moves(state, roll, moves, n, geom, ctx.scores[depth])
            v = a if prune else -np.inf
            for j in range(n):
                nxt, flags = core.apply_move(state, roll, moves[j], geom)
                if flags & core.WIN:
                    c = win
                elif prune and depth == 2 and _last_ply_upper(state, base, roll, moves[j], nxt, flags, geom,
                                                                 win) <= v:
                    continue  # the last ply cannot lift this move above the best so far
                elif flags & core.EXTRA_ROLL:
                    c = _chance(nxt, depth - 1, v, b, ctx)
                else:
                    c = -_chance(nxt, depth - 1, -b, -v, ctx)
                if c > v:
                    v = c
                if prune and v >= b:
                    v = b
                    break
        if prune:
            if v <= lo:
                _tt_store(slot, state, depth, alpha, TT_UPPER, tt)
                return alpha
            if v >= hi:
                _tt_store(slot, state, depth, beta, TT_LOWER, tt)
                return beta
        total += p * v
    if prune:
        _tt_store(slot, state, depth, total, TT_EXACT, tt)
    return total


@njit(cache=True)
def _move_value(state, roll, move, depth, alpha, beta, ctx):
    """Value for the mover of playing ``move``; ``depth`` counts this decision. Fail-hard in (alpha, beta)."""
    nxt, flags = core.apply_move(state, roll, move, ctx.geom)
    if flags & core.WIN:
        return ctx.win
    if depth == 1:
        ctx.stats[S_LEAVES] += 1
        v = np.float64(core.advancement(nxt, ctx.geom))
        return v if flags & core.EXTRA_ROLL else -v
    if flags & core.EXTRA_ROLL:
        return _chance(nxt, depth - 1, alpha, beta, ctx)
    return -_chance(nxt, depth - 1, -beta, -alpha, ctx)


@njit(cache=True)
def _tt_store(slot, state, depth, value, flag, tt):
    if slot < 0:
        return  # not stored at this depth
    # Keep an exact entry of the same position and depth rather than overwrite it with a bound.
    if tt.state[slot] == state and tt.depth[slot] == depth and tt.flag[slot] == TT_EXACT:
        return
    tt.state[slot] = state
    tt.depth[slot] = depth
    tt.value[slot] = value
    tt.flag[slot] = flag


@njit(cache=True)
def search_root(state, roll, depth, ctx, all_values, values):
    """Best move for ``roll`` searched ``depth`` plies deep; ``values[i]`` gets legal move i's value.

    Moves are in ascending source order (as :func:`urgym.core.legal_moves` gives them); ties go to the
    lowest source. With pruning, unless ``all_values``, a move that cannot beat the best so far gets ``-inf``
    instead of its value.
    Returns the chosen source, or -1 when the roll has no legal move.
    """
    geom, prune = ctx.geom, ctx.prune
    root = ctx.buf[0]
    n = core.legal_moves(state, roll, geom, root)
    if n == 0:
        return -1
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        order[i] = i
    if prune and n > 1:
        # Search the statically best move first so the rest are searched against a good bound.
        tmp = root[:n].copy()
        _order_moves(state, roll, tmp, n, geom, ctx.scores[0])
        for i in range(n):
            for j in range(n):
                if root[j] == tmp[i]:
                    order[i] = j
    sources = root[:n].copy()
    best = -1
    best_value = -np.inf
    for k in range(n):
        i = order[k]
        alpha = -np.inf
        if prune and best >= 0 and not all_values:
            # A lower source wins a tie, so it must only reach the best value; a higher one must beat it.
            alpha = np.nextafter(best_value, -np.inf) if i < best else best_value
        v = _move_value(state, roll, sources[i], depth, alpha, np.inf, ctx)
        if prune and v <= alpha:
            values[i] = -np.inf
            continue
        values[i] = v
        if best < 0 or v > best_value or (v == best_value and i < best):
            best = i
            best_value = v
    return sources[best]
