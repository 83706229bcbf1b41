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


@njit(cache=True)
def _tt_slot(state, depth, mask):
    z = np.uint64(state) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(depth)
    z = (z ^ (z >> np.uint64(29))) * np.uint64(0xBF58476D1CE4E5B9)
    return np.int64((z ^ (z >> np.uint64(32))) & np.uint64(mask))


@njit(cache=True)
def _capture_gain(opp, dest, geom):
    """Path position of the opponent's piece a move to ``dest`` captures (0: none)."""
    if dest > geom[core.G_LENGTH]:
        return 0
    hit = opp & geom[core.G_OPP_SAME_TILE + dest]
    if hit == 0:
        return 0
    return np.int64(np.log2(np.float64(hit))) + 1  # single-visit paths: one position per tile


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
            scores[i] = _capture_gain(opp, moves[i] + roll, geom) + (0.5 if flags & core.EXTRA_ROLL else 0.0)
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


@njit(cache=True)
def _last_ply(state, geom, rolls, probs, win, best, stats):
    """A chance node one ply above the horizon, without playing any move.

    After a move, the mover's advancement difference is the one before plus the roll plus the position the
    captured piece had reached (both for a kept turn and, negated twice, for a passed one), so the best
    move of each roll is the one with the largest such gain, unless a move wins. One pass over the pieces
    finds the best gain of every roll (``best[r]``, -1 when roll r has no legal move).
    """
    length = geom[core.G_LENGTH]
    own = core.own_mask(state)
    opp = core.opp_mask(state)
    home = core.own_home(state)
    last_piece = home + core.popcount(own) == 1
    max_roll = geom[core.G_MAX_ROLL]
    for r in range(max_roll + 1):
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
        for r in range(1, max_roll + 1):
            dest = p + r
            if not core.can_move(own, opp, p, dest, geom):
                continue
            # Bearing off the last piece wins, which outranks any gain.
            gain = 1000 if (dest == length + 1 and last_piece) else _capture_gain(opp, dest, geom)
            if gain > best[r]:
                best[r] = gain
    pieces = geom[core.G_PIECES]
    base += (core.own_scored(state, pieces) - core.opp_scored(state, pieces)) * (length + 1)
    total = 0.0
    for i in range(rolls.shape[0]):
        r = rolls[i]
        g = best[r]
        stats[S_LEAVES] += 1
        if g < 0:
            total += probs[i] * base  # no legal move: the turn passes
        elif g >= 1000:
            total += probs[i] * win
        else:
            total += probs[i] * (base + r + g)
    return total


@njit(cache=True)
def _value_bounds(state, depth, geom, win):
    """Bounds on a chance node's value ``depth`` plies deep, for the side about to roll.

    A ply changes the advancement difference by at most the largest roll plus the position of a captured
    piece, so without a finished game the value stays within ``depth`` such swings of today's difference.
    A side can only finish if it has at most ``depth`` pieces left, one per move.
    """
    swing = geom[core.G_MAX_ROLL] + geom[core.G_LENGTH]
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
    after = base + _capture_gain(core.opp_mask(state), move + roll, geom) + roll
    if flags & core.EXTRA_ROLL:
        if core.own_home(nxt) + core.popcount(core.own_mask(nxt)) <= 1:
            return win
        return np.float64(after + geom[core.G_MAX_ROLL] + geom[core.G_LENGTH])
    return np.float64(after)


@njit(cache=True)
def _chance(state, depth, alpha, beta, geom, rolls, probs, win, prune, buf, scores, tt_state, tt_depth, tt_value,
            tt_flag, stats):
    """Expected value for the side about to roll in ``state``, ``depth`` >= 1 plies deep; fail-hard.

    One self-recursive function (numba's cache cannot hold mutually recursive ones): for each roll it plays
    the decision node inline, and each move's value as :func:`_move_value` computes it at the root.
    """
    if core.is_over(state):
        return -win  # the previous mover has just won
    stats[S_NODES] += 1
    if depth == 1:
        return _last_ply(state, geom, rolls, probs, win, buf[1], stats)
    slot = -1
    if prune and depth >= TT_MIN_DEPTH:
        slot = _tt_slot(state, depth, tt_state.shape[0] - 1)
        if tt_state[slot] == state and tt_depth[slot] == depth:
            stats[S_TT_HITS] += 1
            flag = tt_flag[slot]
            v = tt_value[slot]
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
    moves = buf[depth]
    total = 0.0
    remaining = 1.0
    for i in range(rolls.shape[0]):
        p = probs[i]
        roll = rolls[i]
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
            v = -_chance(core.swap_sides(state), depth - 1, -b, -a, geom, rolls, probs, win, prune, buf, scores,
                         tt_state, tt_depth, tt_value, tt_flag, stats)
        else:
            if prune and n > 1:
                _order_moves(state, roll, moves, n, geom, scores[depth])
            v = a if prune else -np.inf
            for j in range(n):
                nxt, flags = core.apply_move(state, roll, moves[j], geom)
                if flags & core.WIN:
                    c = win
                elif prune and depth == 2 and _last_ply_upper(state, base, roll, moves[j], nxt, flags, geom,
                                                                 win) <= v:
                    continue  # the last ply cannot lift this move above the best so far
                elif flags & core.EXTRA_ROLL:
                    c = _chance(nxt, depth - 1, v, b, geom, rolls, probs, win, prune, buf, scores, tt_state,
                                tt_depth, tt_value, tt_flag, stats)
                else:
                    c = -_chance(nxt, depth - 1, -b, -v, geom, rolls, probs, win, prune, buf, scores, tt_state,
                                 tt_depth, tt_value, tt_flag, stats)
                if c > v:
                    v = c
                if prune and v >= b:
                    v = b
                    break
        if prune:
            if v <= lo:
                _tt_store(slot, state, depth, alpha, TT_UPPER, tt_state, tt_depth, tt_value, tt_flag)
                return alpha
            if v >= hi:
                _tt_store(slot, state, depth, beta, TT_LOWER, tt_state, tt_depth, tt_value, tt_flag)
                return beta
        total += p * v
    if prune:
        _tt_store(slot, state, depth, total, TT_EXACT, tt_state, tt_depth, tt_value, tt_flag)
    return total


@njit(cache=True)
def _move_value(state, roll, move, depth, alpha, beta, geom, rolls, probs, win, prune, buf, scores, tt_state,
                tt_depth, tt_value, tt_flag, stats):
    """Value for the mover of playing ``move``; ``depth`` counts this decision. Fail-hard in (alpha, beta)."""
    nxt, flags = core.apply_move(state, roll, move, geom)
    if flags & core.WIN:
        return win
    if depth == 1:
        stats[S_LEAVES] += 1
        v = np.float64(core.advancement(nxt, geom))
        return v if flags & core.EXTRA_ROLL else -v
    if flags & core.EXTRA_ROLL:
        return _chance(nxt, depth - 1, alpha, beta, geom, rolls, probs, win, prune, buf, scores, tt_state,
                       tt_depth, tt_value, tt_flag, stats)
    return -_chance(nxt, depth - 1, -beta, -alpha, geom, rolls, probs, win, prune, buf, scores, tt_state,
                    tt_depth, tt_value, tt_flag, stats)


@njit(cache=True)
def _tt_store(slot, state, depth, value, flag, tt_state, tt_depth, tt_value, tt_flag):
    if slot < 0:
        return  # not stored at this depth
    # Keep an exact entry of the same position and depth rather than overwrite it with a bound.
    if tt_state[slot] == state and tt_depth[slot] == depth and tt_flag[slot] == TT_EXACT:
        return
    tt_state[slot] = state
    tt_depth[slot] = depth
    tt_value[slot] = value
    tt_flag[slot] = flag


@njit(cache=True)
def search_root(state, roll, depth, geom, rolls, probs, win, prune, all_values, buf, scores, tt_state, tt_depth,
                tt_value, tt_flag, stats, values):
    """Best move for ``roll`` searched ``depth`` plies deep; ``values[i]`` gets legal move i's value.

    Moves are in ascending source order (as :func:`urgym.core.legal_moves` gives them); ties go to the
    lowest source. With pruning, unless ``all_values``, a move that cannot beat the best so far gets ``-inf``
    instead of its value.
    Returns the chosen source, or -1 when the roll has no legal move.
    """
    root = buf[0]
    n = core.legal_moves(state, roll, geom, root)
    if n == 0:
        return -1
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        order[i] = i
    if prune and n > 1:
        # Search the statically best move first so the rest are searched against a good bound.
        tmp = root[:n].copy()
        _order_moves(state, roll, tmp, n, geom, scores[0])
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
        v = _move_value(state, roll, sources[i], depth, alpha, np.inf, geom, rolls, probs, win, prune, buf, scores,
                        tt_state, tt_depth, tt_value, tt_flag, stats)
        if prune and v <= alpha:
            values[i] = -np.inf
            continue
        values[i] = v
        if best < 0 or v > best_value or (v == best_value and i < best):
            best = i
            best_value = v
    return sources[best]
