"""TD(lambda) on after-states with a small network, as in TD-Gammon: the learned agent that learns fastest.

The network estimates V(s), the winning chance of the side about to roll in s (the same quantity the
solved table holds), from the mover's point of view: own and opponent pieces per path position, then
each side's pieces at home and scored (the environment's observation without the roll). A move is worth
1 if it wins, V(s') if it keeps the turn and 1 - V(s') if it passes it; the agent plays the best.

Training is self-play in numba. Along a game the prediction of light's winning chance y_t (V or 1 - V,
by who is to roll) is moved towards the next one by TD(lambda):

    w <- w + alpha * (y_{t+1} - y_t) * e_t,     e_t = lambda * e_{t-1} + grad y_t,

with y_T = 1 if light won, else 0.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numba import njit

from agents.base import Agent, legal_moves_or_raise
from urgym import Position, Rules, core
from urgym.core import feature_count, geometry, roll_cumulative
from urgym.files import loads_json, write_atomic

__all__ = ["DEFAULT_TD_MODEL", "TDAgent", "TDNetwork"]

DEFAULT_TD_MODEL = Path(__file__).parent / "models" / "td_finkel.npz"
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

    @classmethod
    def initial(cls, rules: Rules, hidden: int = 80, seed: int = 0) -> TDNetwork:
        rng = np.random.default_rng(seed)
        n = feature_count(rules)
        return cls(rules, rng.normal(0, 0.1, (hidden, n)), np.zeros(hidden), rng.normal(0, 0.1, hidden),
                   np.zeros(1), {})

    @property
    def params(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self.w1, self.b1, self.w2, self.b2

    def copy(self) -> TDNetwork:
        return TDNetwork(self.rules, self.w1.copy(), self.b1.copy(), self.w2.copy(), self.b2.copy(), dict(self.info))

    def value(self, position: Position) -> float:
        """The network's winning chance for the side to move."""
        x = np.zeros(feature_count(self.rules))
        h = np.zeros(self.b1.shape[0])
        return float(_value(position.code, geometry(self.rules), x, h, *self.params))

    def save(self, path: str | os.PathLike) -> Path:
        """Write the network atomically (``.npz`` with the rule set and training facts)."""
        meta = {"format": "urgym-td", "features_version": FEATURES_VERSION, "rules": self.rules.to_dict(),
                **self.info}

        def write(tmp: Path) -> None:
            with open(tmp, "wb") as f:
                np.savez(f, w1=self.w1, b1=self.b1, w2=self.w2, b2=self.b2, meta=np.array(json.dumps(meta)))

        return write_atomic(path, write)

    @classmethod
    def load(cls, path: str | os.PathLike) -> TDNetwork:
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"no TD model at {path}")
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = loads_json(str(data["meta"]), f"{path}'s metadata")
                arrays = [np.array(data[k], dtype=np.float64) for k in ("w1", "b1", "w2", "b2")]
        except (KeyError, ValueError, OSError) as err:
            raise ValueError(f"{path} is not a urgym TD model: {err}") from None
        if not isinstance(meta, dict) or meta.get("format") != "urgym-td" or \
                meta.get("features_version") != FEATURES_VERSION:
            raise ValueError(f"{path} is not a urgym TD model of features version {FEATURES_VERSION}")
        rules = Rules.from_dict(meta.pop("rules"))
        w1, b1, w2, b2 = arrays
        if w1.shape != (b1.shape[0], feature_count(rules)) or w2.shape != b1.shape or b2.shape != (1,):
            raise ValueError(f"{path} has inconsistent weight shapes")
        meta.pop("format")
        meta.pop("features_version")
        return cls(rules, w1, b1, w2, b2, meta)


@njit(cache=True)
def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


@njit(cache=True)
def _value(state, geom, x, h, w1, b1, w2, b2):
    """V(state) for the side to move; leaves the features in ``x`` and hidden activations in ``h``."""
    core.write_features(state, geom, x)
    z = b2[0]
    for j in range(w1.shape[0]):
        a = b1[j]
        for i in range(x.shape[0]):
            a += w1[j, i] * x[i]
        h[j] = _sigmoid(a)
        z += w2[j] * h[j]
    return _sigmoid(z)


@njit(cache=True)
def choose(state, roll, moves, n, geom, x, h, w1, b1, w2, b2):
    """Index of the move with the highest winning chance for the mover (lowest source on ties)."""
    best = 0
    best_value = -1.0
    for i in range(n):
        nxt, flags = core.apply_move(state, roll, moves[i], geom)
        if flags & core.WIN:
            v = 1.0
        else:
            v = _value(nxt, geom, x, h, w1, b1, w2, b2)
            if not flags & core.EXTRA_ROLL:
                v = 1.0 - v
        if v > best_value:
            best_value = v
            best = i
    return best


@njit(cache=True)
def train_games(n_games, seed, first_game, alpha, lam, geom, cumulative, w1, b1, w2, b2):
    """Play ``n_games`` self-play games, updating the weights in place by TD(lambda); return moves played."""
    hidden, n_features = w1.shape
    x = np.zeros(n_features)
    h = np.zeros(hidden)
    e1 = np.zeros_like(w1)
    eb1 = np.zeros_like(b1)
    e2 = np.zeros_like(w2)
    eb2 = np.zeros(1)
    moves = np.zeros(core.MAX_MOVES, dtype=np.int64)
    dice = np.zeros(1, dtype=np.uint64)
    counters = np.zeros(core.COUNTERS_SIZE, dtype=np.int64)
    played = 0
    for g in range(n_games):
        state = core.start_game(geom[core.G_PIECES], seed, first_game + g, dice, counters)
        e1[:] = 0.0
        eb1[:] = 0.0
        e2[:] = 0.0
        eb2[:] = 0.0
        previous = -1.0  # light's predicted chance at the previous state
        while True:
            if core.is_over(state):
                target = 1.0 if core.winner_of(state) == 0 else 0.0
            else:
                v = _value(state, geom, x, h, w1, b1, w2, b2)
                target = v if core.turn_of(state) == 0 else 1.0 - v
            if previous >= 0.0:
                delta = target - previous
                w1 += alpha * delta * e1
                b1 += alpha * delta * eb1
                w2 += alpha * delta * e2
                b2[0] += alpha * delta * eb2[0]
            if core.is_over(state):
                break
            # Gradient of light's prediction y = V or 1 - V at this state, added to the decayed traces.
            sign = 1.0 if core.turn_of(state) == 0 else -1.0
            v = _value(state, geom, x, h, w1, b1, w2, b2)
            dv = sign * v * (1.0 - v)
            for j in range(hidden):
                e2[j] = lam * e2[j] + dv * h[j]
                dh = dv * w2[j] * h[j] * (1.0 - h[j])
                eb1[j] = lam * eb1[j] + dh
                for i in range(n_features):
                    e1[j, i] = lam * e1[j, i] + dh * x[i]
            eb2[0] = lam * eb2[0] + dv
            previous = target
            # One chance node of the game flow (a roll with no legal move passes), then the greedy move.
            state, roll, n = core.roll_turn(state, geom, cumulative, dice, moves, counters)
            if n > 0:
                i = choose(state, roll, moves, n, geom, x, h, w1, b1, w2, b2) if n > 1 else 0
                state, _ = core.play_move(state, roll, moves[i], geom, counters)
        played += counters[core.C_MOVES]
    return played


class TDAgent(Agent):
    """Plays the move the TD network rates best (see the module docstring).

    Args:
        model: A ``.npz`` file written by :meth:`TDNetwork.save`, or a :class:`TDNetwork`; by default the
            network that ships with the package (finkel).
        seed: Unused (the agent is deterministic); accepted like every agent's.
    """

    def __init__(self, model: str | os.PathLike | TDNetwork | None = None, seed: int | None = None) -> None:
        self.network = model if isinstance(model, TDNetwork) else TDNetwork.load(model or DEFAULT_TD_MODEL)
        self.spec = f"td:model={model}" if model is not None and not isinstance(model, TDNetwork) else "td"
        self._moves = np.zeros(core.MAX_MOVES, dtype=np.int64)
        self._x = np.zeros(feature_count(self.network.rules))
        self._h = np.zeros(self.network.b1.shape[0])
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
        n = len(moves)
        self._moves[:n] = moves
        return moves[choose(position.code, roll, self._moves, n, geometry(position.rules), self._x, self._h,
                            *self.network.params)]


def train_chunk(network: TDNetwork, games: int, seed: int, first_game: int, alpha: float, lam: float) -> int:
    """Train ``network`` in place on ``games`` self-play games; return the moves played."""
    return int(train_games(games, np.uint64(seed), first_game, alpha, lam, geometry(network.rules),
                           roll_cumulative(network.rules), *network.params))
