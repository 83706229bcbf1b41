"""After-state value networks, played alone or as the evaluation of an expectiminimax search.

A network maps the features of a position (:mod:`urgym.features`, from the side to move) through hidden layers
(ReLU; sigmoid for TD(lambda)'s networks) to a sigmoid output V(s): the chance that the side to move in s wins,
the quantity a solved table holds. A move's worth to its mover is 1 if it wins, V(s') if it keeps the turn (an
extra roll) and 1 - V(s') if it passes it.

Depth 0 plays the move with the best after-state value. Depth N >= 1 looks N plies further (a ply: a chance
node and the decision after it, by either side): the value of the chance node s reached by a move is

    W(s, 0) = V(s),     W(s, d) = sum_r P(r) max_m q(s, r, m, d),
    q(s, r, m, d) = 1 if m wins, W(s', d - 1) if m keeps the turn, else 1 - W(s', d - 1),

with a roll that has no legal move passing the turn (1 - W(s with the other side to move, d - 1)). So depth N
sees as far as ``expectimax:N+1`` (whose depth counts the root decision too), with the network instead of the
advancement heuristic at the horizon. The search prunes as the built-in one does, without changing a value:
Star1 at chance nodes (values lie in [0, 1]), alpha-beta at decisions, and a transposition table of (position,
depth), and one ply above the horizon Star2's probe (one leaf per roll bounds the node from below). Leaves go
through an evaluation cache (positions recur across the tree and across decisions).

Inference runs in numba, from numpy arrays: playing a network needs no torch. A network file is ``.npz``
(``allow_pickle=False``) with the layers and a JSON header; loading one checks it as data from a stranger (size
before inflating, shapes that chain, finite weights, the feature set and the rules it learned).
"""

from __future__ import annotations

import functools
import json
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numba import njit
from urgym.agents._search import TT_EXACT, TT_LOWER, TT_UPPER, TranspositionTable, _tt_slot, transposition_table
from urgym.agents.base import Agent, legal_moves_or_raise
from urgym.solver import PositionIndex
from urgym.solver.lookup import TableView, state_value

from urgym import Position, Rules, core, get_rules
from urgym.batch import Decisions
from urgym.core import geometry
from urgym.features import feature_set_id, feature_size, write_value_features
from urgym.files import loads_json, read_npz, write_atomic

__all__ = ["ACTIVATIONS", "MAX_NETWORK_BYTES", "NetworkEstimate", "NeuralAgent", "SearchStats", "ValueNetwork",
           "network_values", "selfplay_context", "selfplay_targets", "shipped_estimate", "shipped_model",
           "shipped_models", "table_search_choices"]

MODELS = Path(__file__).parent / "models"
ACTIVATIONS = ("relu", "sigmoid")
"""Hidden-layer activations a network may use (its output is always a sigmoid)."""
MAX_NETWORK_BYTES = 64 << 20
"""Most bytes a network file's arrays may inflate to (the shipped ones: under 1 MB)."""
MAX_LAYERS = 8
FORMAT = "urgym-value-network"
FORMAT_VERSION = 1
EVAL_NETWORK = 0
EVAL_TABLE = 1  # the exact table as the evaluation: search over a perfect evaluation (tests, comparisons)
EVAL_CACHE_BITS = 16


@dataclass
class ValueNetwork:
    """A fully connected network V(s) from the features of s to the winning chance of its side to move.

    ``layers[k]`` is ``(W, b)`` with ``W`` of shape (inputs, outputs), float32; the last layer has one output.

    Args:
        rules: The rule set the network learned.
        features: Its feature set, a name of :data:`urgym.features.FEATURE_SETS`.
        layers: The weights and biases, input layer first.
        activation: The hidden layers' activation, ``relu`` or ``sigmoid``.
        info: Facts about its training (method, time, measured regret...), kept in the file.
    """

    rules: Rules
    features: str
    layers: list[tuple[np.ndarray, np.ndarray]]
    activation: str = "relu"
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.layers = [(np.ascontiguousarray(w, dtype=np.float32), np.ascontiguousarray(b, dtype=np.float32))
                       for w, b in self.layers]
        _check_layers(self.rules, self.features, self.layers, self.activation)

    @property
    def parameters(self) -> int:
        """How many weights and biases the network has."""
        return sum(w.size + b.size for w, b in self.layers)

    @property
    def sizes(self) -> tuple[int, ...]:
        """Units per layer, inputs first: (features, hidden ..., 1)."""
        return (self.layers[0][0].shape[0], *(w.shape[1] for w, _ in self.layers))

    def arrays(self) -> NetArrays:
        """The network as the kernels take it (flat weights, offsets, sizes)."""
        sizes = np.array(self.sizes, dtype=np.int64)
        flat = np.concatenate([np.concatenate([w.ravel(), b]) for w, b in self.layers]).astype(np.float32)
        offsets = np.zeros(len(self.layers), dtype=np.int64)
        at = 0
        for k, (w, b) in enumerate(self.layers):
            offsets[k] = at
            at += w.size + b.size
        return NetArrays(flat, offsets, sizes, ACTIVATIONS.index(self.activation), feature_set_id(self.features))

    def value(self, position: Position) -> float:
        """The network's winning chance for the side to move in ``position``."""
        return float(network_values(self, np.array([position.code], dtype=np.int64))[0])

    def save(self, path: str | os.PathLike) -> Path:
        """Write the network atomically (``.npz``: the layers and a JSON header)."""
        meta = {"format": FORMAT, "version": FORMAT_VERSION, "rules": self.rules.to_dict(), "features": self.features,
                "activation": self.activation, "layers": len(self.layers), **self.info}
        arrays = {f"w{k}": w for k, (w, _) in enumerate(self.layers)}
        arrays.update({f"b{k}": b for k, (_, b) in enumerate(self.layers)})

        def write(tmp: Path) -> None:
            with open(tmp, "wb") as f:
                np.savez_compressed(f, meta=np.array(json.dumps(meta)), **arrays)

        return write_atomic(path, write)

    @classmethod
    def load(cls, path: str | os.PathLike) -> ValueNetwork:
        """Read a network written by :meth:`save`.

        Raises:
            FileNotFoundError: If there is no file at ``path``.
            ValueError: If the file is not such a network, names unknown rules or features, inflates past
                :data:`MAX_NETWORK_BYTES`, or holds layers that do not chain or weights that are not finite.
        """
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"no value network at {path}")
        if not path.is_file():
            raise ValueError(f"{path} is not a urgym value network: not a regular file")
        try:
            data = read_npz(path, MAX_NETWORK_BYTES, "a network")
            meta = loads_json(str(data["meta"]), f"{path}'s header")
            if not isinstance(meta, dict) or meta.get("format") != FORMAT:
                raise ValueError("its header does not name the format " + FORMAT)
            if meta.get("version") != FORMAT_VERSION:
                raise ValueError(f"format version {meta.get('version')!r}, not {FORMAT_VERSION}")
            count = meta.get("layers")
            if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_LAYERS:
                raise ValueError(f"it must have 1 to {MAX_LAYERS} layers, got {count!r}")
            layers = [(data[f"w{k}"], data[f"b{k}"]) for k in range(count)]
            rules = Rules.from_dict(meta["rules"])
            for w, b in layers:
                if w.dtype.kind != "f" or b.dtype.kind != "f":
                    raise ValueError("its weights are not floating-point numbers")
            info = {k: v for k, v in meta.items() if k not in ("format", "version", "rules", "features",
                                                                "activation", "layers")}
            return cls(rules, str(meta.get("features")), layers, str(meta.get("activation")), info)
        except KeyError as err:
            raise ValueError(f"{path} is not a urgym value network: it has no {err}") from None
        except (TypeError, ValueError, OSError) as err:
            raise ValueError(f"{path} is not a urgym value network: {err}") from None

    @classmethod
    def from_td(cls, td: Any) -> ValueNetwork:
        """The same network as a :class:`urgym.agents.td.TDNetwork` (one sigmoid hidden layer)."""
        return cls(td.rules, td.features, [(td.w1.T, td.b1), (td.w2.reshape(-1, 1), td.b2)], "sigmoid",
                   dict(td.info))


def _check_layers(rules: Rules, features: str, layers: list, activation: str) -> None:
    if activation not in ACTIVATIONS:
        raise ValueError(f"unknown activation {activation!r}; known: {', '.join(ACTIVATIONS)}")
    if not 1 <= len(layers) <= MAX_LAYERS:
        raise ValueError(f"a network has 1 to {MAX_LAYERS} layers, got {len(layers)}")
    inputs = feature_size(rules, features)
    for k, (w, b) in enumerate(layers):
        if w.ndim != 2 or b.ndim != 1 or w.shape[0] != inputs or b.shape[0] != w.shape[1] or w.shape[1] < 1:
            raise ValueError(f"layer {k} has weights {w.shape} and biases {b.shape}; it must take {inputs} inputs "
                             "(the previous layer's outputs, or the features of the rules) and have one bias per "
                             "output")
        if not (np.isfinite(w).all() and np.isfinite(b).all()):
            raise ValueError(f"layer {k} holds weights that are not finite numbers")
        inputs = w.shape[1]
    if inputs != 1:
        raise ValueError(f"the last layer must have one output (the winning chance), has {inputs}")


class NetArrays(NamedTuple):
    """A network as kernels read it: every layer's W (inputs x outputs, row-major) then b, in one flat array."""

    flat: np.ndarray  # float32[parameters]
    offsets: np.ndarray  # int64[layers]: where layer k's W starts in flat (its b follows W)
    sizes: np.ndarray  # int64[layers + 1]: units per layer, inputs first
    activation: int  # index in ACTIVATIONS
    features: int  # feature set id (urgym.features)


class Scratch(NamedTuple):
    """Buffers one evaluation fills: the features, two layers of activations, and the indices of a layer's
    non-zero inputs."""

    x: np.ndarray  # float32[features]
    a: np.ndarray  # float32[widest layer]
    b: np.ndarray  # float32[widest layer]
    active: np.ndarray  # int64[widest layer]


@njit(cache=True)
def scratch(net: NetArrays) -> Scratch:
    """Fresh buffers for evaluating ``net`` (callable from numba and from Python)."""
    width = net.sizes.max()
    return Scratch(np.zeros(net.sizes[0], np.float32), np.zeros(width, np.float32), np.zeros(width, np.float32),
                   np.zeros(width, np.int64))


@njit(cache=True, fastmath=True)
def evaluate(state, geom, net, s):
    """V(state): the network's winning chance for the side to move (a finished game: 0, the mover has lost)."""
    if core.is_over(state):
        return 0.0
    write_value_features(state, geom, net.features, s.x)
    layers = net.offsets.shape[0]
    for k in range(layers):
        source = s.x if k == 0 else (s.a if k % 2 == 1 else s.b)
        n_in = net.sizes[k]
        n_out = net.sizes[k + 1]
        w0 = net.offsets[k]
        b0 = w0 + n_in * n_out
        target = (s.a if k % 2 == 0 else s.b)[:n_out]
        target[:] = net.flat[b0:b0 + n_out]
        # Features are mostly 0 and ReLU leaves many units at 0: gather the others' indices first, without a
        # branch (a branch per input is mispredicted about half the time), then add only their rows.
        active = s.active
        count = 0
        for i in range(n_in):
            active[count] = i
            count += source[i] != 0.0
        for c in range(count):
            i = active[c]
            v = source[i]
            row = net.flat[w0 + i * n_out:w0 + (i + 1) * n_out]  # a slice: the loop below vectorizes
            for j in range(n_out):
                target[j] += v * row[j]
        if k < layers - 1:
            if net.activation == 0:
                for j in range(n_out):
                    target[j] = max(target[j], 0.0)
            else:
                for j in range(n_out):
                    target[j] = 1.0 / (1.0 + np.exp(-target[j]))
    last = s.a if (layers - 1) % 2 == 0 else s.b
    return 1.0 / (1.0 + np.exp(-np.float64(last[0])))


@njit(cache=True)
def _values(states, geom, net, out):
    s = scratch(net)
    for i in range(states.shape[0]):
        out[i] = evaluate(states[i], geom, net, s)


def network_values(network: ValueNetwork, states: np.ndarray) -> np.ndarray:
    """V of each packed state (from its side to move), float64."""
    out = np.zeros(len(states), dtype=np.float64)
    _values(np.ascontiguousarray(states, dtype=np.int64), geometry(network.rules), network.arrays(), out)
    return out


# --- the search ---------------------------------------------------------------------------------------------
S_NODES = 0  # chance nodes searched
S_LEAVES = 1  # network (or table) evaluations
S_CACHE_HITS = 2  # leaf values found in the evaluation cache
S_TT_HITS = 3
STATS_SIZE = 4


class SearchStats(NamedTuple):
    """What a batch of searches did: chance nodes, leaf evaluations, cache and transposition-table hits."""

    nodes: int
    leaves: int
    cache_hits: int
    tt_hits: int


class Context(NamedTuple):
    """What a search passes down: the rules, the evaluation (a network or, for tests, the table), the roll order,
    per-depth move buffers, the evaluation cache, the transposition table and the counters."""

    geom: np.ndarray
    kind: int  # EVAL_NETWORK or EVAL_TABLE
    prune: bool  # False: every window is [0, 1] and no transposition table (the tests' plain search)
    net: NetArrays
    table: TableView
    scratch: Scratch
    roll_order: np.ndarray  # int64[rolls]: indices of the geometry's rolls, likeliest first
    moves: np.ndarray  # int64[depth + 2, MAX_MOVES]: legal moves per depth
    order: np.ndarray  # int64[depth + 2, MAX_MOVES]: their search order per depth
    keys: np.ndarray  # float64[depth + 2, MAX_MOVES]: their values at depth 0, the order's keys
    cache_state: np.ndarray  # int64[2^EVAL_CACHE_BITS], -1: empty
    cache_value: np.ndarray  # float64[same]
    tt: TranspositionTable
    stats: np.ndarray  # int64[STATS_SIZE]


@njit(cache=True)
def _leaf(state, ctx):
    """V(state) by the evaluation, through the evaluation cache."""
    if core.is_over(state):
        return 0.0
    slot = _tt_slot(state, 0, ctx.cache_state.shape[0] - 1)
    if ctx.cache_state[slot] == state:
        ctx.stats[S_CACHE_HITS] += 1
        return ctx.cache_value[slot]
    ctx.stats[S_LEAVES] += 1
    exact = ctx.kind == EVAL_TABLE
    v = state_value(state, ctx.table) if exact else evaluate(state, ctx.geom, ctx.net, ctx.scratch)
    ctx.cache_state[slot] = state
    ctx.cache_value[slot] = v
    return v


@njit(cache=True)
def _after_value(state, roll, move, ctx):
    """The mover's value of ``move`` by the evaluation of its after-state: 1 if it wins, V(s') if it keeps the
    turn, else 1 - V(s')."""
    nxt, flags = core.apply_move(state, roll, move, ctx.geom)
    if flags & core.WIN:
        return 1.0
    v = _leaf(nxt, ctx)
    return v if flags & core.EXTRA_ROLL else 1.0 - v


@njit(cache=True)
def _pass_value(state, ctx):
    """The roller's value of a roll with no legal move: the same position, the other side to roll."""
    return 1.0 - _leaf(core.swap_sides(state), ctx)


@njit(cache=True)
def _probe(state, beta, ctx):
    """A lower bound of W(state, 1) from one leaf per roll (Star2's probe): each roll's value is at least that of
    any one of its moves. Stops below ``beta`` once the rolls left cannot lift it to ``beta``. The probed leaves
    stay in the evaluation cache for the full search."""
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
def _last_ply(state, alpha, beta, ctx):
    """W(state, 1), fail-hard within [alpha, beta]: each roll's best move one ply above the horizon by its
    after-state's value, the likeliest rolls first and the rest cut by Star1 once the window is left."""
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
                v = _leaf(nxt, ctx)
                if not flags & core.EXTRA_ROLL:
                    v = 1.0 - v
            best = max(best, v)
        total += p * best
        if ctx.prune and total + remaining <= alpha:
            return min(total + remaining, alpha)  # fail low: an upper bound
        if ctx.prune and total >= beta:
            return max(total, beta)  # fail high: a lower bound
    return total


@njit(cache=True)
def _ordered(state, roll, moves, n, order, keys, ctx):
    """``order[:n]``: the indices of ``moves[:n]`` by their value at depth 0, best first."""
    for k in range(n):
        keys[k] = _after_value(state, roll, moves[k], ctx)
        order[k] = k
    for k in range(1, n):  # insertion sort, stable: equal values keep the lower source first
        j = k
        while j > 0 and keys[order[j - 1]] < keys[order[j]]:
            order[j - 1], order[j] = order[j], order[j - 1]
            j -= 1


@njit(cache=True)
def _chance(state, depth, alpha, beta, ctx):
    """W(state, depth) for the side about to roll, depth >= 1; fail-hard within [alpha, beta].

    One self-recursive function (numba's cache cannot hold mutually recursive ones): each roll's decision is
    searched inline, alpha-beta over the moves, and the rolls are cut by Star1 (a roll's value lies in [0, 1]).
    """
    if core.is_over(state):
        return 0.0
    ctx.stats[S_NODES] += 1
    if not ctx.prune:
        alpha, beta = 0.0, 1.0
    if depth == 1:
        return _last_ply(state, alpha, beta, ctx)
    tt = ctx.tt
    slot = _tt_slot(state, depth, tt.state.shape[0] - 1)
    if ctx.prune and tt.flag[slot] != 0 and tt.state[slot] == state and tt.depth[slot] == depth:
        v = tt.value[slot]
        flag = tt.flag[slot]
        if flag == TT_EXACT or (flag == TT_LOWER and v >= beta) or (flag == TT_UPPER and v <= alpha):
            ctx.stats[S_TT_HITS] += 1
            return v
    geom = ctx.geom
    g = geom[0]
    moves = ctx.moves[depth]
    total = 0.0
    remaining = 1.0
    result = 0.0
    flag = TT_EXACT
    cut = False
    for t in range(g.n_rolls):
        i = ctx.roll_order[t]  # the likeliest rolls first: the window closes soonest
        p = g.probabilities[i]
        remaining -= p
        # this roll's value v must keep total + p v + remaining (all others at best) above alpha, and
        # total + p v (all others at worst) below beta, for the node's value to stay inside the window
        lo = max(0.0, (alpha - total - remaining) / p)
        hi = min(1.0, (beta - total) / p)
        n = core.legal_moves(state, g.rolls[i], geom, moves)
        if n == 0:
            v = 1.0 - _chance(core.swap_sides(state), depth - 1, 1.0 - hi, 1.0 - lo, ctx)
        else:
            v = lo
            for k in range(n):  # (ordering the moves by their depth-0 values cost more leaves than it saved)
                nxt, flags = core.apply_move(state, g.rolls[i], moves[k], geom)
                if flags & core.WIN:
                    q = 1.0
                elif flags & core.EXTRA_ROLL:
                    q = _chance(nxt, depth - 1, v, hi, ctx)
                else:
                    c = _chance(nxt, depth - 1, 1.0 - hi, 1.0 - v, ctx)
                    q = v if c >= 1.0 - v else 1.0 - c  # a cut child is a bound: 1 - (1 - v) may round above v
                if q > v:
                    v = q
                    if v >= hi:
                        break
        total += p * v
        # A roll at its window's edge is only a bound, so the node is cut there, whatever rounding says of the sums.
        if total + remaining <= alpha or (v <= lo and lo > 0.0):
            result = min(total + remaining, alpha)  # fail low: an upper bound, never above alpha
            flag = TT_UPPER
            cut = True
            break
        if total >= beta or (v >= hi and hi < 1.0):
            result = max(total, beta)  # fail high: a lower bound, never below beta
            flag = TT_LOWER
            cut = True
            break
    if not cut:
        result = total
    tt.state[slot] = state
    tt.depth[slot] = depth
    tt.value[slot] = result
    tt.flag[slot] = flag
    return result


@njit(cache=True)
def _move_value(state, roll, move, depth, alpha, ctx):
    """The mover's value of ``move``: exact when above ``alpha``, else at most ``alpha``."""
    if depth == 0:
        return _after_value(state, roll, move, ctx)
    nxt, flags = core.apply_move(state, roll, move, ctx.geom)
    if flags & core.WIN:
        return 1.0
    if flags & core.EXTRA_ROLL:
        return _chance(nxt, depth, alpha, 1.0, ctx)
    c = _chance(nxt, depth, 0.0, 1.0 - alpha, ctx)
    return alpha if c >= 1.0 - alpha else 1.0 - c  # cut: at most alpha (1 - (1 - alpha) may round above it)


MAX_THREADS = 256
"""Most threads a :class:`NeuralAgent` takes (each holds its own evaluation cache and transposition table)."""

TIE = 1e-13
"""Root moves within this of the best are ties, resolved to the lowest source (as the table's best move is)."""


@njit(cache=True)
def _choose(state, roll, moves, n, depth, ctx, values):
    """Index of the best of ``moves[:n]`` (lowest source on ties); ``values[:n]`` gets each move's value where it
    was searched exactly (others: an upper bound). Searched best first by their depth-0 values, so that the
    first move's value cuts the others' searches."""
    order, keys = ctx.order[depth + 1], ctx.keys[depth + 1]
    if depth > 0:
        _ordered(state, roll, moves, n, order, keys, ctx)
    else:
        for k in range(n):
            order[k] = k
    best = -1
    best_value = -1.0
    for t in range(n):
        k = order[t]
        if best < 0:
            alpha = 0.0
        elif k < best:  # a lower source wins a tie: search it exactly down to below a tie (a cut returns alpha)
            alpha = max(best_value - 2 * TIE, 0.0)
        else:
            alpha = max(best_value, 0.0)
        values[k] = _move_value(state, roll, moves[k], depth, alpha, ctx)
        if best < 0 or (k < best and values[k] >= best_value - TIE) or (k > best and values[k] > best_value + TIE):
            best_value = values[k] if best < 0 else max(values[k], best_value)
            best = k
    return best


def _context(geom: np.ndarray, kind: int, net: NetArrays, table: TableView, depth: int, tt_bits: int,
             prune: bool = True) -> Context:
    return Context(geom, kind, prune, net, table, scratch(net),
                   _roll_order(geom), np.zeros((depth + 2, core.MAX_MOVES), np.int64),
                   np.zeros((depth + 2, core.MAX_MOVES), np.int64), np.zeros((depth + 2, core.MAX_MOVES), np.float64),
                   np.full(1 << EVAL_CACHE_BITS, -1, np.int64), np.zeros(1 << EVAL_CACHE_BITS, np.float64),
                   transposition_table(tt_bits), np.zeros(STATS_SIZE, np.int64))


MAX_TRAJECTORY = 4096
"""Chance nodes of one self-play game kept for its lambda-returns (a longer game's are not kept)."""


@njit(cache=True, nogil=True)
def selfplay_targets(flows, ctx, epsilon, lam, keep, pick, states, targets, found):
    """Self-play the started games of ``flows`` with the network of ``ctx`` (its best after-state, or with chance
    ``epsilon`` a random other move, drawn from the game's policy stream) and, once each game ends, record its
    chance nodes (each kept with chance ``keep``) with their targets, until ``states`` is full; return how many
    games were recorded.

    A chance node's target is the lambda-return of one-ply expectations: G_t = (1 - lam) W(s_t, 1) + lam G_{t+1},
    with G_{t+1} seen from s_t's roller (1 - G_{t+1} when the turn passed) and the game's result after the last
    node. ``lam`` = 0 gives W(s_t, 1) alone (expected TD(0)); larger values carry the result back faster."""
    geom = ctx.geom
    values = np.zeros(core.MAX_MOVES, np.float64)
    path = np.zeros(MAX_TRAJECTORY, np.int64)
    expected = np.zeros(MAX_TRAJECTORY, np.float64)
    wanted = states.shape[0]
    done = 0
    for i in range(flows.shape[0]):
        f = flows[i]
        length = 0
        while not core.is_over(f.state):
            if length < MAX_TRAJECTORY:
                path[length] = f.state
                expected[length] = _last_ply(f.state, 0.0, 1.0, ctx)
            length += 1
            if core.roll_turn(flows, i, geom) == 0:
                continue
            k = 0 if f.n == 1 else _choose(f.state, f.roll, f.moves, f.n, 0, ctx, values)
            k = core.slip(k, f.n, epsilon, f.policy_rngs[core.turn_of(f.state)])
            core.play_move(flows, i, f.moves[k], geom)
        if length > MAX_TRAJECTORY:
            continue
        winner = core.winner_of(f.state)
        following = 0.0
        for t in range(length - 1, -1, -1):  # back from the result
            mover = core.turn_of(path[t])
            if t == length - 1:
                after = 1.0 if winner == mover else 0.0
            else:
                after = following if core.turn_of(path[t + 1]) == mover else 1.0 - following
            following = (1.0 - lam) * expected[t] + lam * after
            if found[0] < wanted and core.next_uniform(pick) < keep:
                states[found[0]] = path[t]
                targets[found[0]] = following
                found[0] += 1
        done += 1
        if found[0] >= wanted:
            break
    return done


def selfplay_context(network: ValueNetwork) -> Context:
    """A search context of ``network`` without pruning (for :func:`selfplay_targets`: exact expectations)."""
    return _context(geometry(network.rules), EVAL_NETWORK, network.arrays(), _no_table(), 1, 10, prune=False)


def _roll_order(geom: np.ndarray) -> np.ndarray:
    g = geom[0]
    return np.argsort(-g["probabilities"][: g["n_rolls"]], kind="stable").astype(np.int64)


@njit(cache=True, nogil=True)
def _choose_all(decisions, depth, ctx, out, start, stop):
    """The move of decisions ``start:stop`` into ``out`` (releases the GIL: threads search slices at once)."""
    values = np.zeros(core.MAX_MOVES, np.float64)
    for i in range(start, stop):
        moves = decisions.moves[i]
        n = decisions.counts[i]
        out[i] = moves[0] if n == 1 else moves[_choose(decisions.states[i], decisions.rolls[i], moves, n, depth,
                                                       ctx, values)]


@functools.cache
def _no_table() -> TableView:
    """A table view the kernels carry but never read (network evaluation)."""
    return TableView(np.zeros(1), 1.0, PositionIndex(get_rules("finkel", 1)).tables)


# --- shipped models and the agent ---------------------------------------------------------------------------------
def shipped_estimate(rules: Rules, depth: int = 2) -> NetworkEstimate | None:
    """The shipped network of ``rules`` as a :class:`NetworkEstimate`, None when none plays them."""
    try:
        return NetworkEstimate(ValueNetwork.load(shipped_model(rules)), depth)
    except ValueError:
        return None


@functools.cache
def shipped_models() -> dict[tuple[str, int], Path]:
    """The value networks shipped with the package, by (rule set, pieces) (read once: the package does not
    change while it runs)."""
    found = {}
    for path in sorted(MODELS.glob("neural_*.npz")):
        name, _, pieces = path.stem.removeprefix("neural_").rpartition("_")
        if pieces.endswith("p") and pieces[:-1].isdigit():
            found[(name, int(pieces[:-1]))] = path
    return found


def shipped_model(rules: Rules) -> Path:
    """The shipped network of ``rules`` (a named rule set at a piece count a model was trained on).

    Raises:
        ValueError: If no shipped network learned these rules, naming those that exist.
    """
    models = shipped_models()
    key = (rules.name, rules.pieces)
    if key not in models or get_rules(rules.name, rules.pieces) != rules:
        have = ", ".join(f"{name} with {pieces} pieces" for name, pieces in models) or "none"
        what = f"{rules.name} with {rules.pieces} pieces" if get_rules(rules.name, rules.pieces) == rules else \
            repr(rules.describe())
        raise ValueError(f"no shipped neural model plays {what} (shipped: {have}); train one with "
                         f"`train --algo distill --rules {rules.name} --pieces {rules.pieces}` and pass "
                         "neural:model=PATH")
    return models[key]


class NeuralAgent(Agent):
    """Plays an after-state value network, alone (``depth=0``) or at the leaves of an expectiminimax search.

    Args:
        model: A network file (:meth:`ValueNetwork.save`, e.g. from ``train --algo distill``), a
            :class:`ValueNetwork`, or None: the shipped network of the rules the agent is asked to play.
        depth: Plies searched beyond the move (0: the best after-state value).
        threads: Threads answering a batch of decisions (each with its own search state, about 3 MB); 0: every
            core; at most :data:`MAX_THREADS`.
        tt_bits: log2 of the transposition table's entries (per thread).
        prune: Prune the search (Star1, alpha-beta, transpositions); never changes the move.
        seed: Unused (the agent is deterministic); accepted like every agent's.
    """

    def __init__(self, model: str | os.PathLike | ValueNetwork | None = None, depth: int = 0, threads: int = 0,
                 tt_bits: int = 16, prune: bool = True, seed: int | None = None, name: str = "neural") -> None:
        if isinstance(depth, bool) or not isinstance(depth, int) or not 0 <= depth <= 8:
            raise ValueError(f"depth must be a whole number from 0 to 8, got {depth!r}")
        if not 8 <= tt_bits <= 26:
            raise ValueError(f"tt_bits must be from 8 to 26, got {tt_bits}")
        if isinstance(threads, bool) or not isinstance(threads, int) or not 0 <= threads <= MAX_THREADS:
            raise ValueError(f"threads must be a whole number from 0 (every core) to {MAX_THREADS}, got {threads!r}")
        self.depth, self.tt_bits, self.prune = depth, tt_bits, prune
        self.threads = threads or max(1, os.cpu_count() or 1)
        self._networks: dict[Rules, ValueNetwork] = {}
        self._prepared: dict[Rules, tuple[NetArrays, list[Context]]] = {}
        if isinstance(model, ValueNetwork):
            self._fixed: ValueNetwork | None = model
        elif model:
            self._fixed = ValueNetwork.load(model)
        else:
            self._fixed = None
        parts = [name] + ([f"model={model}"] if model and not isinstance(model, ValueNetwork) else []) + (
            [f"depth={depth}"] if depth else [])
        self.spec = parts[0] + "".join(":" + p for p in parts[1:])
        super().__init__(seed)

    def network(self, rules: Rules) -> ValueNetwork:
        """The network this agent plays ``rules`` with.

        Raises:
            ValueError: If its model learned other rules, or no shipped model plays them.
        """
        if self._fixed is not None:
            if self._fixed.rules != rules:
                raise ValueError(f"this network learned {self._fixed.rules.describe()!r}, not {rules.describe()!r}")
            return self._fixed
        if rules not in self._networks:
            self._networks[rules] = ValueNetwork.load(shipped_model(rules))
        return self._networks[rules]

    def check_rules(self, rules: Rules) -> None:
        self.network(rules)

    def select_move(self, position: Position, roll: int) -> int:
        moves = legal_moves_or_raise(position, roll)
        if len(moves) == 1:
            return moves[0]
        return int(self.select_moves(position.rules, Decisions.single(position.code, roll, moves, _NO_STREAM))[0])

    def select_moves(self, rules: Rules, decisions: Decisions) -> np.ndarray:
        """The network's move (after the search, at ``depth`` > 0) for every decision, in numba."""
        contexts = self._contexts(rules)
        out = np.empty(len(decisions), dtype=np.int64)
        threads = min(len(contexts), max(1, len(decisions) // 64))
        if threads == 1:
            _choose_all(decisions, self.depth, contexts[0], out, 0, len(decisions))
            return out
        parts = np.linspace(0, len(decisions), threads + 1).astype(np.int64)
        with ThreadPoolExecutor(threads) as pool:
            jobs = [pool.submit(_choose_all, decisions, self.depth, contexts[t], out, int(parts[t]),
                                int(parts[t + 1])) for t in range(threads)]
            for job in jobs:
                job.result()
        return out

    def search_stats(self, rules: Rules) -> SearchStats:
        """The counters of every search so far on ``rules`` (all threads), for benchmarks."""
        totals = sum(ctx.stats for ctx in self._contexts(rules))
        return SearchStats(*(int(x) for x in totals))

    def _contexts(self, rules: Rules) -> list[Context]:
        if rules not in self._prepared:
            network = self.network(rules)
            arrays = network.arrays()
            contexts = [_context(geometry(rules), EVAL_NETWORK, arrays, _no_table(), self.depth, self.tt_bits,
                                 self.prune) for _ in range(self.threads)]
            self._prepared[rules] = (arrays, contexts)
        return self._prepared[rules][1]


class NetworkEstimate:
    """Winning chances estimated by a value network searched ``depth`` plies deep, asked as a solved table is for
    hints (:meth:`win_probability`, :meth:`move_values`, :meth:`best_move`): what ``ur-play`` hints with when no
    table is cached. ``exact`` is False, so callers say that the numbers are the network's estimate."""

    exact = False

    def __init__(self, network: ValueNetwork, depth: int = 2) -> None:
        self.network, self.depth, self.rules = network, depth, network.rules
        self.name = f"the neural network's estimate ({network.info.get('algo', 'value network')}, search depth {depth})"
        self._ctx = _context(geometry(network.rules), EVAL_NETWORK, network.arrays(), _no_table(), depth, 16)

    def win_probability(self, position: Position, side: str | None = None) -> float:
        """The chance that ``side`` (default: the side to move) wins, before the roll."""
        value = _chance(position.code, self.depth, 0.0, 1.0, self._ctx) if self.depth else _leaf(position.code,
                                                                                                   self._ctx)
        return value if side in (None, position.turn) else 1.0 - value

    def move_values(self, position: Position, roll: int) -> dict[int, float]:
        """Each legal move's winning chance for the mover."""
        return {m: _move_value(position.code, roll, m, self.depth, 0.0, self._ctx) for m in position.legal_moves(roll)}

    def best_move(self, position: Position, roll: int) -> int | None:
        """The move with the best estimate (the lowest source on ties), None when the roll has no legal move."""
        values = self.move_values(position, roll)
        return max(values, key=lambda m: (values[m], -m)) if values else None


def table_search_choices(table: Any, decisions: Decisions, depth: int, tt_bits: int = 16,
                         prune: bool = True) -> np.ndarray:
    """The search's moves with the solved table as its evaluation (exact at every depth: the tests' reference)."""
    rules = table.rules
    dummy = ValueNetwork(rules, "td-v1", [(np.zeros((feature_size(rules, "td-v1"), 1), np.float32),
                                           np.zeros(1, np.float32))], "sigmoid")
    ctx = _context(geometry(rules), EVAL_TABLE, dummy.arrays(), table.view, depth, tt_bits, prune)
    out = np.empty(len(decisions), dtype=np.int64)
    _choose_all(decisions, depth, ctx, out, 0, len(decisions))
    return out


_NO_STREAM = np.zeros(1, dtype=np.uint64)  # the network never draws
