"""TD(lambda) on after-states with a small network, as in TD-Gammon: the learned agent that learns fastest.

The network estimates V(s), the winning chance of the side about to roll in s (the same quantity the
solved table holds), from the mover's point of view, over a feature set of :mod:`urgym.features`: ``td-v1``
(own and opponent pieces per path position, then each side's pieces at home and scored: the environment's
observation without the roll) or ``tactics-v1`` (those one-hot, and each side's captures, rosettes and bear-offs
per roll). A move is worth
1 if it wins, V(s') if it keeps the turn and 1 - V(s') if it passes it; the agent plays the best.

Training is self-play in numba. Along a game the prediction of light's winning chance y_t (V or 1 - V,
by who is to roll) is moved towards the next one by TD(lambda):

    w <- w + alpha * (y_{t+1} - y_t) * e_t,     e_t = lambda * e_{t-1} + grad y_t,

with y_T = 1 if light won, else 0.
"""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
from numba import njit
from urgym.agents.base import Agent, legal_moves_or_raise

from urgym import Position, Rules, core
from urgym.batch import Decisions
from urgym.core import geometry
from urgym.features import FEATURE_SETS, feature_set_id, feature_size, write_value_features
from urgym.files import loads_json, read_npz, write_atomic

__all__ = ["DEFAULT_TD_MODEL", "TDAgent", "TDNetwork"]

DEFAULT_TD_MODEL = Path(__file__).parent / "models" / "td_finkel.npz"
MAX_TD_BYTES = 64 << 20
"""Most bytes a TD model's arrays may inflate to (the shipped one: 25 KB; 4,096 hidden units on murray's 15 pieces
would take about 2 MB)."""
FEATURES_VERSION = 1


@dataclass
class TDNetwork:
    """One hidden layer of sigmoid units and a sigmoid output: V(s) in (0, 1)."""

    rules: Rules
    w1: np.ndarray  # (hidden, features)
    b1: np.ndarray  # (hidden,)
    w2: np.ndarray  # (hidden,)
    b2: np.ndarray  # (1,)
    info: dict
    features: str = "td-v1"

    @classmethod
    def initial(cls, rules: Rules, hidden: int = 80, seed: int = 0, features: str = "td-v1") -> TDNetwork:
        rng = np.random.default_rng(seed)
        n = feature_size(rules, features)
        return cls(rules, rng.normal(0, 0.1, (hidden, n)), np.zeros(hidden), rng.normal(0, 0.1, hidden),
                   np.zeros(1), {}, features)

    @property
    def params(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self.w1, self.b1, self.w2, self.b2

    def copy(self) -> TDNetwork:
        return TDNetwork(self.rules, self.w1.copy(), self.b1.copy(), self.w2.copy(), self.b2.copy(), dict(self.info),
                         self.features)

    @property
    def weights(self) -> Weights:
        """The parameters as the kernels take them (the same arrays)."""
        return Weights(self.w1, self.b1, self.w2, self.b2)

    def value(self, position: Position) -> float:
        """The network's winning chance for the side to move."""
        return float(_value(position.code, geometry(self.rules), self.weights, self.scratch()))

    def scratch(self) -> Scratch:
        """Buffers for the kernels' evaluations of this network."""
        return Scratch(np.zeros(self.w1.shape[1]), np.zeros(self.w1.shape[0]), feature_set_id(self.features))

    def save(self, path: str | os.PathLike) -> Path:
        """Write the network atomically (``.npz`` with the rule set and training facts)."""
        meta = {"format": "urgym-td", "features_version": FEATURES_VERSION, "rules": self.rules.to_dict(),
                "features": self.features, **self.info}

        def write(tmp: Path) -> None:
            with open(tmp, "wb") as f:
                np.savez(f, w1=self.w1, b1=self.b1, w2=self.w2, b2=self.b2, meta=np.array(json.dumps(meta)))

        return write_atomic(path, write)

    @classmethod
    def load(cls, path: str | os.PathLike) -> TDNetwork:
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"no TD model at {path}")
        if not path.is_file():
            raise ValueError(f"{path} is not a urgym TD model: not a regular file")
        try:
            data = read_npz(path, MAX_TD_BYTES, "a TD model")
            meta = loads_json(str(data["meta"]), f"{path}'s metadata")
            arrays = [data[k].astype(np.float64) for k in ("w1", "b1", "w2", "b2")]
        except KeyError as err:
            raise ValueError(f"{path} is not a urgym TD model: it has no {err}") from None
        except (ValueError, OSError) as err:
            raise ValueError(f"{path} is not a urgym TD model: {err}") from None
        if not isinstance(meta, dict) or meta.get("format") != "urgym-td" or \
                meta.get("features_version") != FEATURES_VERSION:
            raise ValueError(f"{path} is not a urgym TD model of features version {FEATURES_VERSION}")
        rules = Rules.from_dict(meta.pop("rules"))
        features = meta.pop("features", "td-v1")  # urgym 0.4's models name none: they read td-v1
        if features not in FEATURE_SETS:
            raise ValueError(f"{path} names an unknown feature set {str(features)[:40]!r}")
        w1, b1, w2, b2 = arrays
        if w1.shape != (b1.shape[0], feature_size(rules, features)) or w2.shape != b1.shape or b2.shape != (1,):
            raise ValueError(f"{path} has inconsistent weight shapes")
        if not all(np.isfinite(a).all() for a in arrays):
            raise ValueError(f"{path} holds weights that are not finite numbers")
        meta.pop("format")
        meta.pop("features_version")
        return cls(rules, w1, b1, w2, b2, meta, features)


class Weights(NamedTuple):
    """The network's parameters as kernels take them (arrays, updated in place by training)."""

    w1: np.ndarray  # (hidden, features)
    b1: np.ndarray  # (hidden,)
    w2: np.ndarray  # (hidden,)
    b2: np.ndarray  # (1,)


class Traces(NamedTuple):
    """Per game of a training batch: eligibility traces of every weight, and light's last predicted chance
    (``previous``: -1 before the first prediction, -2 once the game's last update is done)."""

    w1: np.ndarray  # (games, hidden, features)
    b1: np.ndarray  # (games, hidden)
    w2: np.ndarray  # (games, hidden)
    b2: np.ndarray  # (games,)
    previous: np.ndarray  # (games,)


class Scratch(NamedTuple):
    """Buffers a network evaluation fills (the features and the hidden activations), and the feature set's id."""

    x: np.ndarray
    h: np.ndarray
    kind: int


@njit(cache=True)
def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


@njit(cache=True)
def _value(state, geom, net, scratch):
    """V(state) for the side to move; leaves the features and hidden activations in ``scratch``."""
    x, h = scratch.x, scratch.h
    write_value_features(state, geom, scratch.kind, x)
    z = net.b2[0]
    for j in range(net.w1.shape[0]):
        a = net.b1[j]
        for i in range(x.shape[0]):
            a += net.w1[j, i] * x[i]
        h[j] = _sigmoid(a)
        z += net.w2[j] * h[j]
    return _sigmoid(z)


@njit(cache=True)
def choose(state, roll, moves, n, geom, net, scratch):
    """Index of the move with the highest winning chance for the mover (lowest source on ties)."""
    best = 0
    best_value = -1.0
    for i in range(n):
        nxt, flags = core.apply_move(state, roll, moves[i], geom)
        if flags & core.WIN:
            v = 1.0
        else:
            v = _value(nxt, geom, net, scratch)
            if not flags & core.EXTRA_ROLL:
                v = 1.0 - v
        if v > best_value:
            best_value = v
            best = i
    return best


@njit(cache=True)
def _td_update(flows, i, geom, net, traces, alpha, lam, scratch):
    """Game i's TD(lambda) step at its chance node: move the last prediction towards this one (or the result),
    and add this prediction's gradient to the decayed traces. Returns False once the game is over."""
    state = flows[i].state
    if core.is_over(state):
        target = 1.0 if core.winner_of(state) == 0 else 0.0
    else:
        v = _value(state, geom, net, scratch)
        target = v if core.turn_of(state) == 0 else 1.0 - v
    previous = traces.previous[i]
    if previous >= 0.0:
        delta = alpha * (target - previous)
        for j in range(net.w1.shape[0]):
            net.b1[j] += delta * traces.b1[i, j]
            net.w2[j] += delta * traces.w2[i, j]
            for k in range(net.w1.shape[1]):
                net.w1[j, k] += delta * traces.w1[i, j, k]
        net.b2[0] += delta * traces.b2[i]
    if core.is_over(state):
        traces.previous[i] = -2.0
        return False
    # Gradient of light's prediction y = V or 1 - V at this state, added to the decayed traces.
    x, h = scratch.x, scratch.h
    v = _value(state, geom, net, scratch)
    dv = (1.0 if core.turn_of(state) == 0 else -1.0) * v * (1.0 - v)
    for j in range(h.shape[0]):
        traces.w2[i, j] = lam * traces.w2[i, j] + dv * h[j]
        dh = dv * net.w2[j] * h[j] * (1.0 - h[j])
        traces.b1[i, j] = lam * traces.b1[i, j] + dh
        for k in range(x.shape[0]):
            traces.w1[i, j, k] = lam * traces.w1[i, j, k] + dh * x[k]
    traces.b2[i] = lam * traces.b2[i] + dv
    traces.previous[i] = target
    return True


@njit(cache=True)
def train_games(flows, geom, net, scratch, traces, alpha, lam):
    """Self-play the started games of ``flows`` in lockstep, one chance node of each game per step: a TD(lambda)
    update (:func:`_td_update`), the roll (a roll with no legal move passes) and the network's move. The weights
    are updated in place; returns the moves played."""
    active = flows.shape[0]
    while active > 0:
        active = 0
        for i in range(flows.shape[0]):
            if traces.previous[i] == -2.0 or not _td_update(flows, i, geom, net, traces, alpha, lam, scratch):
                continue
            active += 1
            f = flows[i]
            if core.roll_turn(flows, i, geom) > 0:
                k = choose(f.state, f.roll, f.moves, f.n, geom, net, scratch) if f.n > 1 else 0
                core.play_move(flows, i, f.moves[k], geom)
    played = 0
    for i in range(flows.shape[0]):
        played += flows[i].played
    return played


class TDAgent(Agent):
    """Plays the move the TD network rates best (see the module docstring).

    Args:
        model: A ``.npz`` file written by :meth:`TDNetwork.save` (``train --algo td-lambda``) or by ``train --algo
            expected-td`` (a :class:`urgym.agents.valuenet.ValueNetwork`), or either network; by default the
            table-free network that ships with the package (finkel).
        seed: Unused (the agent is deterministic); accepted like every agent's.
        depth: Plies searched beyond the move with the network at the leaves (0: the best after-state), by the
            search of :class:`urgym.agents.valuenet.NeuralAgent`.
    """

    def __init__(self, model: str | os.PathLike | TDNetwork | None = None, seed: int | None = None,
                 depth: int = 0) -> None:
        from urgym.agents.valuenet import NeuralAgent, ValueNetwork

        if isinstance(model, (TDNetwork, ValueNetwork)):
            network = model
        else:
            path = Path(model or DEFAULT_TD_MODEL)
            network = ValueNetwork.load(path) if _is_value_network(path) else TDNetwork.load(path)
        self.network = network
        named = model is not None and not isinstance(model, (TDNetwork, ValueNetwork))
        self.spec = "td" + (f":model={model}" if named else "") + (f":depth={depth}" if depth else "")
        self.depth = depth
        # Played by the value networks' kernels (three times faster than the float64 ones TD(lambda) trains with).
        self._search = NeuralAgent(network if isinstance(network, ValueNetwork) else ValueNetwork.from_td(network),
                                   depth=depth)
        super().__init__(seed)

    def check_rules(self, rules: Rules) -> None:
        if rules != self.network.rules:
            raise ValueError(f"this TD model was trained on {self.network.rules.describe()!r}, not on "
                             f"{rules.describe()!r}")

    def select_move(self, position: Position, roll: int) -> int:
        moves = legal_moves_or_raise(position, roll)
        self.check_rules(position.rules)
        if len(moves) == 1:
            return moves[0]
        return int(self.select_moves(position.rules, Decisions.single(position.code, roll, moves, _NO_STREAM))[0])

    def select_moves(self, rules: Rules, decisions: Decisions) -> np.ndarray:
        """The network's move for every decision (after the search, at ``depth`` > 0), in numba."""
        self.check_rules(rules)
        return self._search.select_moves(rules, decisions)


_NO_STREAM = np.zeros(1, dtype=np.uint64)  # the network never draws


def _is_value_network(path: Path) -> bool:
    """Whether ``path`` is a value network of ``train --algo expected-td`` rather than a TD(lambda) model (its
    header names the format); a file that is neither is left to :meth:`TDNetwork.load` to refuse."""
    try:
        with zipfile.ZipFile(path) as archive:
            if "meta.npy" not in archive.namelist():
                return False
            with archive.open("meta.npy") as member:
                header = member.read(4096)  # never more: the member is a stranger's and may inflate without end
    except (OSError, zipfile.BadZipFile):
        return False
    return b"urgym-value-network" in header


TRAIN_BATCH = 8
"""Self-play games in lockstep while training (their updates interleave, one chance node per game per step)."""


def train_chunk(network: TDNetwork, games: int, seed: int, first_game: int, alpha: float, lam: float) -> int:
    """Train ``network`` in place on ``games`` self-play games (game g is game ``first_game + g`` of ``seed``);
    return the moves played."""
    geom = geometry(network.rules)
    hidden, features = network.w1.shape
    played = 0
    for lo in range(0, games, TRAIN_BATCH):
        batch = min(TRAIN_BATCH, games - lo)
        flows = core.flow_buffers(batch)
        core.start_games(flows, network.rules.pieces, np.uint64(seed), first_game + lo)
        traces = Traces(np.zeros((batch, hidden, features)), np.zeros((batch, hidden)), np.zeros((batch, hidden)),
                        np.zeros(batch), np.full(batch, -1.0))
        played += int(train_games(flows, geom, network.weights, network.scratch(), traces, alpha, lam))
    return played
