"""The one expectiminimax of urgym, with the leaf evaluation as its parameter.

Every search agent (``expectimax:N``, ``neural:N``, ``td:N``) and every search over the solved table searches
here, as OpenSpiel's ``expectiminimax(state, depth, value_function)`` does. Values are winning chances in [0, 1]
of the side about to act, so a change of side is ``1 - v``. With V the leaf evaluation, the value of a chance node
s searched d plies deep (a ply: a chance node and the decision after it, by either side) is

    W(s, 0) = V(s),     W(s, d) = sum_r P(r) max_m q(s, r, m, d),
    q(s, r, m, d) = 1 if m wins, W(s', d - 1) if m keeps the turn (an extra roll), else 1 - W(s', d - 1),

where a roll with no legal move passes the turn: 1 - W(s with the other side to roll, d - 1). A move searched to
depth d is worth q(s, r, m, d + 1): depth 0 plays the move with the best after-state value. Ties between moves
go to the lowest source (within :data:`TIE`), decided before any search.

The leaf evaluations (each a small named tuple the kernels specialise on):

- :class:`Heuristic`: the advancement difference A(s) of :func:`urgym.core.advancement` mapped onto [0, 1],
  V(s) = (A(s) + w) / (2 w) with w the score of a won game (``pieces * (L + 1)``, above any A). The map is
  affine, so the search chooses exactly the moves of a search over A (``expectimax:N`` searches N - 1 plies).
- :class:`NetworkEvaluation`: a value network (:mod:`urgym.agents.networks.value`), through an evaluation cache.
- :class:`TableEvaluation`: the solved table, through the same cache (a search over a perfect evaluation).

Pruning never changes a value: Star1 at chance nodes, within bounds on the node's value that the evaluation gives
(the heuristic's are tight: a ply moves A by at most the largest roll plus a captured piece's progress),
alpha-beta at decisions, a transposition table keyed by (position, depth), and one ply above the horizon either
the heuristic's closed form (each roll's best gain, no move played) or, for leaf evaluations, Star2's probe (one
leaf per roll bounds the node from below). ``prune=False`` turns all of it off: the plain search the tests hold
it against.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, types
from numba.extending import overload
from urgym.agents.networks.value import NetArrays, Scratch, evaluate, scratch
from urgym.solver.lookup import TableView, state_value

from urgym import core

__all__ = [
    "STATS_SIZE",
    "S_CACHE_HITS",
    "S_LEAVES",
    "S_NODES",
    "S_TT_HITS",
    "TIE",
    "EvaluationCache",
    "Heuristic",
    "NetworkEvaluation",
    "SearchContext",
    "TableEvaluation",
    "TranspositionTable",
    "chance_value",
    "choose",
    "choose_all",
    "evaluation_cache",
    "leaf_value",
    "move_value",
    "network_evaluation",
    "search_context",
    "transposition_table",
]

TIE = 1e-13
"""Root moves within this of the best are ties, resolved to the lowest source (as the table's best move is)."""
TT_EXACT = 1
TT_LOWER = 2
TT_UPPER = 3
S_NODES = 0
"""Counter: chance nodes searched."""
S_LEAVES = 1
"""Counter: leaf evaluations (each roll one ply above the horizon, for the heuristic)."""
S_CACHE_HITS = 2
"""Counter: leaf values found in the evaluation cache."""
S_TT_HITS = 3
"""Counter: transposition-table hits."""
STATS_SIZE = 4
WIN_GAIN = 1000
"""The heuristic's closed form marks a roll whose best move wins with this gain (above any capture's)."""


class TranspositionTable(NamedTuple):
    """Values of searched chance nodes keyed by (position, depth): exact, or a lower or upper bound."""

    state: np.ndarray  # int64[2^bits]
    depth: np.ndarray  # int8
    value: np.ndarray  # float64
    flag: np.ndarray  # int8: TT_EXACT, TT_LOWER, TT_UPPER (0: empty)


def transposition_table(bits: int) -> TranspositionTable:
    """An empty table of ``2**bits`` entries."""
    size = 1 << bits
    return TranspositionTable(
        np.zeros(size, np.int64), np.zeros(size, np.int8), np.zeros(size, np.float64), np.zeros(size, np.int8)
    )


class EvaluationCache(NamedTuple):
    """Leaf values by position (positions recur across the tree and across decisions); state -1: empty."""

    state: np.ndarray  # int64[2^bits]
    value: np.ndarray  # float64[2^bits]


def evaluation_cache(bits: int | None = 16) -> EvaluationCache:
    """An empty cache of ``2**bits`` entries; None: no cache (a network that changes while it plays, in training)."""
    size = 0 if bits is None else 1 << bits
    return EvaluationCache(np.full(size, -1, np.int64), np.zeros(size, np.float64))


class Heuristic(NamedTuple):
    """The advancement difference as the evaluation: V(s) = (A(s) + win) / (2 win)."""

    win: float  # the advancement score of a won game, pieces * (L + 1)


class NetworkEvaluation(NamedTuple):
    """A value network as the evaluation."""

    net: NetArrays
    scratch: Scratch
    cache: EvaluationCache


class TableEvaluation(NamedTuple):
    """The solved table as the evaluation (exact at every depth: the tests' reference)."""

    table: TableView
    cache: EvaluationCache


def network_evaluation(net: NetArrays, cache_bits: int | None = 16) -> NetworkEvaluation:
    """The evaluation of a network's arrays, with its own buffers and an empty cache of ``2**cache_bits`` entries."""
    return NetworkEvaluation(net, scratch(net), evaluation_cache(cache_bits))


class SearchContext(NamedTuple):
    """What a search passes down.

    The rules, whether to prune, the evaluation, the roll order, per-depth move buffers, the transposition table and the
    counters.
    """

    geom: np.ndarray  # urgym.core.GEOMETRY
    prune: bool  # False: every window is [0, 1], no bounds, no transposition table (the tests' plain search)
    evaluation: tuple  # Heuristic, NetworkEvaluation or TableEvaluation
    roll_order: np.ndarray  # int64[rolls]: indices of the geometry's rolls, likeliest first
    moves: np.ndarray  # int64[depth + 2, MAX_MOVES]: legal moves per depth
    order: np.ndarray  # int64[depth + 2, MAX_MOVES]: their search order per depth
    keys: np.ndarray  # float64[depth + 2, MAX_MOVES]: the order's keys
    tt: TranspositionTable
    stats: np.ndarray  # int64[STATS_SIZE]


def search_context(
    geom: np.ndarray, evaluation: tuple, depth: int, tt: TranspositionTable | int = 16, prune: bool = True
) -> SearchContext:
    """A context for searches up to ``depth`` plies beyond the move (``tt``: a table, or log2 of a new one's size)."""
    g = geom[0]
    roll_order = np.argsort(-g["probabilities"][: g["n_rolls"]], kind="stable").astype(np.int64)
    rows = depth + 2
    return SearchContext(
        geom,
        prune,
        evaluation,
        roll_order,
        np.zeros((rows, core.MAX_MOVES), np.int64),
        np.zeros((rows, core.MAX_MOVES), np.int64),
        np.zeros((rows, core.MAX_MOVES), np.float64),
        tt if isinstance(tt, TranspositionTable) else transposition_table(tt),
        np.zeros(STATS_SIZE, np.int64),
    )


def _is(typ: types.Type, cls: type) -> bool:
    """Whether numba type ``typ`` is the named tuple ``cls``, or a search context whose evaluation is one."""
    if isinstance(typ, types.BaseNamedTuple) and typ.instance_class is SearchContext:
        typ = typ.types[SearchContext._fields.index("evaluation")]
    return isinstance(typ, types.BaseNamedTuple) and typ.instance_class is cls


# --- the heuristic ---------------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _scaled(score, win):
    """An advancement score (in [-win, win]) as a winning chance."""
    return (score + win) / (2.0 * win)


@njit(cache=True, inline="always")
def _heuristic_last_ply(state, ctx):
    """W(state, 1) under the heuristic, without playing any move.

    After a move, the mover's advancement difference is the one before plus the roll plus the position the
    captured piece had reached (both for a kept turn and, seen from the other side, for a passed one), so the best
    move of each roll is the one with the largest such gain, unless a move wins. One pass over the pieces finds
    the best gain of every roll (``best[r]``, -1 when roll r has no legal move).
    """
    geom = ctx.geom
    g = geom[0]
    length = g.length
    win = ctx.evaluation.win
    best = ctx.moves[1]
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
            gain = WIN_GAIN if (dest == length + 1 and last_piece) else core.captured_position(opp, dest, geom)
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
        elif gain >= WIN_GAIN:
            total += g.probabilities[i] * win
        else:
            total += g.probabilities[i] * (base + r + gain)
    return _scaled(total, win)


@njit(cache=True)
def _heuristic_bounds(state, depth, geom, win):
    """Bounds on W(state, depth) under the heuristic, and A(state).

    A ply changes the advancement difference by at most the largest roll plus the position of a captured piece,
    so without a finished game the value stays within ``depth`` such swings of today's difference. A side can only
    finish if it has at most ``depth`` pieces left, one per move.
    """
    swing = geom[0].max_roll + geom[0].length
    base = core.advancement(state, geom)
    lower = max(base - depth * swing, -win)
    upper = min(base + depth * swing, win)
    if core.opp_home(state) + core.popcount(core.opp_mask(state)) <= depth:
        lower = -win
    if core.own_home(state) + core.popcount(core.own_mask(state)) <= depth:
        upper = win
    return _scaled(np.float64(lower), win), _scaled(np.float64(upper), win), np.float64(base)


@njit(cache=True)
def _heuristic_move_upper(state, base, roll, move, nxt, flags, geom, win):
    """An upper bound on the mover's value of a move whose successor is searched one ply deep.

    After the move the mover's advancement difference is ``base`` plus its gain; one more ply by the opponent can
    only lower it, one more by the mover raises it by at most a swing, or wins.
    """
    after = base + core.captured_position(core.opp_mask(state), move + roll, geom) + roll
    if flags & core.EXTRA_ROLL:
        if core.own_home(nxt) + core.popcount(core.own_mask(nxt)) <= 1:
            return 1.0
        return _scaled(after + geom[0].max_roll + geom[0].length, win)
    return _scaled(after, win)


@njit(cache=True)
def _gain_keys(state, roll, moves, n, geom, keys):
    """``keys[:n]``: each move's immediate gain for the mover (roll plus capture).

    A win comes first, and an extra roll counts a little on top.
    """
    opp = core.opp_mask(state)
    for i in range(n):
        _, flags = core.apply_move(state, roll, moves[i], geom)
        if flags & core.WIN:
            keys[i] = 1e9
        else:
            keys[i] = core.captured_position(opp, moves[i] + roll, geom) + (0.5 if flags & core.EXTRA_ROLL else 0.0)


@njit(cache=True)
def _sort_moves(moves, n, keys):
    """Sort ``moves[:n]`` by ``keys[:n]``, best first (insertion sort, stable)."""
    for i in range(1, n):
        m = moves[i]
        s = keys[i]
        j = i - 1
        while j >= 0 and keys[j] < s:
            moves[j + 1] = moves[j]
            keys[j + 1] = keys[j]
            j -= 1
        moves[j + 1] = m
        keys[j + 1] = s


# --- leaf evaluations: a network or the table, through the cache ------------------------------------------------
@njit(cache=True)
def _tt_slot(state, depth, mask):
    z = np.uint64(state) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(depth)
    z = (z ^ (z >> np.uint64(29))) * np.uint64(0xBF58476D1CE4E5B9)
    return np.int64((z ^ (z >> np.uint64(32))) & np.uint64(mask))


def _evaluate_uncached(evaluation, state, geom):
    """V(state) of a network or the table (a stub the kernels specialise by the evaluation's type)."""
    raise NotImplementedError


@overload(_evaluate_uncached, inline="always")
def _evaluate_uncached_impl(evaluation, state, geom):
    if _is(evaluation, NetworkEvaluation):
        return lambda evaluation, state, geom: evaluate(state, geom, evaluation.net, evaluation.scratch)
    if _is(evaluation, TableEvaluation):
        return lambda evaluation, state, geom: state_value(state, evaluation.table)
    return None


@njit(cache=True)
def _cached_leaf(state, ctx):
    """V(state) by a network or the table, through the evaluation cache."""
    if core.is_over(state):
        return 0.0
    cache = ctx.evaluation.cache
    if cache.state.shape[0] == 0:
        ctx.stats[S_LEAVES] += 1
        return _evaluate_uncached(ctx.evaluation, state, ctx.geom)
    slot = _tt_slot(state, 0, cache.state.shape[0] - 1)
    if cache.state[slot] == state:
        ctx.stats[S_CACHE_HITS] += 1
        return cache.value[slot]
    ctx.stats[S_LEAVES] += 1
    v = _evaluate_uncached(ctx.evaluation, state, ctx.geom)
    cache.state[slot] = state
    cache.value[slot] = v
    return v


def _leaf(state, ctx):
    """V(state): the evaluation's winning chance for the side to move (0 in a finished game: the mover has lost)."""
    raise NotImplementedError


@overload(_leaf, inline="always")
def _leaf_value_impl(state, ctx):
    if _is(ctx, Heuristic):

        def heuristic(state, ctx):
            if core.is_over(state):
                return 0.0
            ctx.stats[S_LEAVES] += 1
            return _scaled(np.float64(core.advancement(state, ctx.geom)), ctx.evaluation.win)

        return heuristic
    return lambda state, ctx: _cached_leaf(state, ctx)


@njit(cache=True)
def leaf_value(state, ctx):
    """V(state): the evaluation's winning chance for the side to move (0 in a finished game: the mover has lost)."""
    return _leaf(state, ctx)


@njit(cache=True)
def _after_value(state, roll, move, ctx):
    """The mover's value of ``move`` at depth 0: 1 if it wins, V(s') if it keeps the turn, else 1 - V(s')."""
    nxt, flags = core.apply_move(state, roll, move, ctx.geom)
    if flags & core.WIN:
        return 1.0
    v = _leaf(nxt, ctx)
    return v if flags & core.EXTRA_ROLL else 1.0 - v


@njit(cache=True)
def _pass_value(state, ctx):
    """The roller's value of a roll with no legal move at depth 0: the same position, the other side to roll."""
    return 1.0 - _leaf(core.swap_sides(state), ctx)


@njit(cache=True)
def _probe(state, beta, ctx):
    """A lower bound of W(state, 1) from one leaf per roll (Star2's probe).

    Each roll's value is at least that of any one of its moves. Stops below ``beta`` once the rolls left cannot lift it
    to ``beta``. The probed leaves stay in the evaluation cache for the full search.
    """
    geom = ctx.geom
    g = geom[0]
    moves = ctx.moves[1]
    bound = 0.0
    remaining = 1.0
    for t in range(g.n_rolls):
        if bound + remaining < beta:
            return bound
        i = ctx.roll_order[t]
        remaining -= g.probabilities[i]
        n = core.legal_moves(state, g.rolls[i], geom, moves)
        v = _pass_value(state, ctx) if n == 0 else _after_value(state, g.rolls[i], moves[0], ctx)
        bound += g.probabilities[i] * v
    return bound


@njit(cache=True)
def _leaf_last_ply(state, alpha, beta, ctx):
    """W(state, 1) by leaf evaluations, fail-hard within [alpha, beta].

    Each roll's best move by its after-state's value, the likeliest rolls first and the rest cut by Star1 once the
    window is left.
    """
    geom = ctx.geom
    g = geom[0]
    moves = ctx.moves[1]
    if ctx.prune and beta < 1.0 and _probe(state, beta, ctx) >= beta:
        return beta  # fail high: a lower bound
    total = 0.0
    remaining = 1.0
    for t in range(g.n_rolls):
        i = ctx.roll_order[t]
        p = g.probabilities[i]
        remaining -= p
        n = core.legal_moves(state, g.rolls[i], geom, moves)
        best = _pass_value(state, ctx) if n == 0 else 0.0
        for k in range(n):  # _after_value spelled out: a call per leaf here cost a tenth of the search's speed
            nxt, flags = core.apply_move(state, g.rolls[i], moves[k], geom)
            if flags & core.WIN:
                v = 1.0
            else:
                v = _cached_leaf(nxt, ctx)
                if not flags & core.EXTRA_ROLL:
                    v = 1.0 - v
            best = max(best, v)
        total += p * best
        if ctx.prune and total + remaining <= alpha:
            return min(total + remaining, alpha)  # fail low: an upper bound
        if ctx.prune and total >= beta:
            return max(total, beta)  # fail high: a lower bound
    return total


# --- the hooks the search calls, by the evaluation's type ---------------------------------------------------------
def _last_ply(state, alpha, beta, ctx):
    """W(state, 1), fail-hard within [alpha, beta]."""
    raise NotImplementedError


@overload(_last_ply, inline="always")
def _last_ply_impl(state, alpha, beta, ctx):
    if _is(ctx, Heuristic):
        return lambda state, alpha, beta, ctx: _heuristic_last_ply(state, ctx)
    return lambda state, alpha, beta, ctx: _leaf_last_ply(state, alpha, beta, ctx)


def _bounds(state, depth, ctx):
    """(lower, upper, base): bounds on W(state, depth), and what :func:`_move_upper` needs of the node."""
    raise NotImplementedError


@overload(_bounds, inline="always")
def _bounds_impl(state, depth, ctx):
    if _is(ctx, Heuristic):
        return lambda state, depth, ctx: _heuristic_bounds(state, depth, ctx.geom, ctx.evaluation.win)
    return lambda state, depth, ctx: (0.0, 1.0, 0.0)


def _move_upper(state, base, roll, move, nxt, flags, ctx):
    """An upper bound on the mover's value of a move whose successor is searched one ply deep."""
    raise NotImplementedError


@overload(_move_upper, inline="always")
def _move_upper_impl(state, base, roll, move, nxt, flags, ctx):
    if _is(ctx, Heuristic):
        return lambda state, base, roll, move, nxt, flags, ctx: _heuristic_move_upper(
            state, base, roll, move, nxt, flags, ctx.geom, ctx.evaluation.win
        )
    return lambda state, base, roll, move, nxt, flags, ctx: 1.0


def _order_inner(state, roll, moves, n, depth, ctx):
    """Order the moves of a decision inside the tree, best first, where the evaluation has a cheap guess."""
    raise NotImplementedError


@overload(_order_inner, inline="always")
def _order_inner_impl(state, roll, moves, n, depth, ctx):
    if _is(ctx, Heuristic):

        def by_gain(state, roll, moves, n, depth, ctx):
            keys = ctx.keys[depth]
            _gain_keys(state, roll, moves, n, ctx.geom, keys)
            _sort_moves(moves, n, keys)

        return by_gain
    # (ordering by the leaves' values cost a network search more leaves than it saved)
    return lambda state, roll, moves, n, depth, ctx: None


def _root_keys(state, roll, moves, n, ctx, keys):
    """``keys[:n]``: the root moves' search-order keys (higher first)."""
    raise NotImplementedError


@overload(_root_keys, inline="always")
def _root_keys_impl(state, roll, moves, n, ctx, keys):
    if _is(ctx, Heuristic):
        return lambda state, roll, moves, n, ctx, keys: _gain_keys(state, roll, moves, n, ctx.geom, keys)

    def by_value(state, roll, moves, n, ctx, keys):
        for k in range(n):
            keys[k] = _after_value(state, roll, moves[k], ctx)

    return by_value


# --- the search --------------------------------------------------------------------------------------------------
@njit(cache=True)
def _tt_store(tt, slot, state, depth, value, flag):
    # Keep an exact entry of the same position and depth rather than overwrite it with a bound.
    if tt.state[slot] == state and tt.depth[slot] == depth and tt.flag[slot] == TT_EXACT:
        return
    tt.state[slot] = state
    tt.depth[slot] = depth
    tt.value[slot] = value
    tt.flag[slot] = flag


@njit(cache=True)
def chance_value(state, depth, alpha, beta, ctx):
    """W(state, depth) for the side about to roll, depth >= 1; fail-hard within [alpha, beta].

    One self-recursive function (numba's cache cannot hold mutually recursive ones): each roll's decision is
    searched inline, alpha-beta over the moves, and the rolls are cut by Star1 within the evaluation's bounds.
    """
    if core.is_over(state):
        return 0.0  # the previous mover has just won
    ctx.stats[S_NODES] += 1
    prune = ctx.prune
    if not prune:
        alpha, beta = 0.0, 1.0
    if depth == 1:
        return _last_ply(state, alpha, beta, ctx)
    tt = ctx.tt
    slot = -1
    if prune:
        slot = _tt_slot(state, depth, tt.state.shape[0] - 1)
        if tt.flag[slot] != 0 and tt.state[slot] == state and tt.depth[slot] == depth:
            v = tt.value[slot]
            flag = tt.flag[slot]
            if flag == TT_EXACT or (flag == TT_LOWER and v >= beta) or (flag == TT_UPPER and v <= alpha):
                ctx.stats[S_TT_HITS] += 1
                return v
    lower, upper, base = 0.0, 1.0, 0.0
    if prune:
        lower, upper, base = _bounds(state, depth, ctx)
        if alpha >= upper:
            return alpha
        if beta <= lower:
            return beta
    geom = ctx.geom
    g = geom[0]
    moves = ctx.moves[depth]
    total = 0.0
    remaining = 1.0
    for t in range(g.n_rolls):
        i = ctx.roll_order[t]  # the likeliest rolls first: the window closes soonest
        p = g.probabilities[i]
        roll = g.rolls[i]
        remaining -= p
        # This roll's value v must keep total + p v + (the others at best) above alpha, and total + p v + (the
        # others at worst) below beta, for the node's value to stay inside the window.
        lo = max(lower, (alpha - total - upper * remaining) / p)
        hi = min(upper, (beta - total - lower * remaining) / p)
        n = core.legal_moves(state, roll, geom, moves)
        if n == 0:
            v = 1.0 - chance_value(core.swap_sides(state), depth - 1, 1.0 - hi, 1.0 - lo, ctx)
        else:
            if prune and n > 1:
                _order_inner(state, roll, moves, n, depth, ctx)
            v = lo
            for k in range(n):
                nxt, flags = core.apply_move(state, roll, moves[k], geom)
                if flags & core.WIN:
                    q = 1.0
                elif prune and depth == 2 and _move_upper(state, base, roll, moves[k], nxt, flags, ctx) <= v:
                    continue  # the last ply cannot lift this move above the best so far
                elif flags & core.EXTRA_ROLL:
                    q = chance_value(nxt, depth - 1, v, hi, ctx)
                else:
                    c = chance_value(nxt, depth - 1, 1.0 - hi, 1.0 - v, ctx)
                    q = v if c >= 1.0 - v else 1.0 - c  # a cut child is a bound: 1 - (1 - v) may round above v
                if q > v:
                    v = q
                    if v >= hi:
                        break
        total += p * v
        if not prune:
            continue
        # A roll at its window's edge is only a bound, so the node is cut there, whatever rounding says of the sums.
        if total + upper * remaining <= alpha or (v <= lo and lo > lower):
            _tt_store(tt, slot, state, depth, alpha, TT_UPPER)
            return alpha  # fail low: an upper bound
        if total + lower * remaining >= beta or (v >= hi and hi < upper):
            _tt_store(tt, slot, state, depth, beta, TT_LOWER)
            return beta  # fail high: a lower bound
    if prune:
        _tt_store(tt, slot, state, depth, total, TT_EXACT)
    return total


@njit(cache=True)
def move_value(state, roll, move, depth, alpha, ctx):
    """The mover's value of ``move`` searched ``depth`` plies beyond it.

    Exact when above ``alpha``, else at most ``alpha``.
    """
    if depth == 0:
        return _after_value(state, roll, move, ctx)
    nxt, flags = core.apply_move(state, roll, move, ctx.geom)
    if flags & core.WIN:
        return 1.0
    if flags & core.EXTRA_ROLL:
        return chance_value(nxt, depth, alpha, 1.0, ctx)
    c = chance_value(nxt, depth, 0.0, 1.0 - alpha, ctx)
    return alpha if c >= 1.0 - alpha else 1.0 - c  # cut: at most alpha (1 - (1 - alpha) may round above it)


@njit(cache=True, nogil=True)  # a deep search runs for minutes: Ctrl-C is heard by a thread that waits (the runner's)
def choose(state, roll, moves, n, depth, ctx, values, all_values):
    """Index of the best of ``moves[:n]`` searched ``depth`` plies beyond the move (the lowest source on ties).

    ``values[:n]`` gets each move's value; unless ``all_values``, a move the search proved worse than the best
    gets ``-inf`` instead. Moves are searched best first by the evaluation's cheap guess, so that the first move's
    value cuts the others' searches.
    """
    order, keys = ctx.order[0], ctx.keys[0]
    for k in range(n):
        order[k] = k
    if ctx.prune and depth > 0 and n > 1:
        _root_keys(state, roll, moves, n, ctx, keys)
        for k in range(1, n):  # insertion sort, stable: equal keys keep the lower source first
            j = k
            while j > 0 and keys[order[j - 1]] < keys[order[j]]:
                order[j - 1], order[j] = order[j], order[j - 1]
                j -= 1
    exact = all_values or not ctx.prune
    best = -1
    best_value = -1.0
    for t in range(n):
        k = order[t]
        if best < 0 or exact:
            alpha = 0.0
        elif k < best:  # a lower source wins a tie: search it exactly down to below a tie (a cut returns alpha)
            alpha = max(best_value - 2 * TIE, 0.0)
        else:
            alpha = max(best_value, 0.0)
        v = move_value(state, roll, moves[k], depth, alpha, ctx)
        values[k] = v if (exact or v > alpha or alpha == 0.0) else -np.inf
        if best < 0 or (k < best and v >= best_value - TIE) or (k > best and v > best_value + TIE):
            best_value = v if best < 0 else max(v, best_value)
            best = k
    return best


@njit(cache=True, nogil=True)
def choose_all(decisions, depth, ctx, out, start, stop):
    """The move of decisions ``start:stop`` into ``out`` (releases the GIL: threads search slices at once)."""
    values = np.zeros(core.MAX_MOVES, np.float64)
    for i in range(start, stop):
        moves = decisions.moves[i]
        n = decisions.counts[i]
        if n == 1:
            out[i] = moves[0]
        else:
            out[i] = moves[choose(decisions.states[i], decisions.rolls[i], moves, n, depth, ctx, values, False)]
