"""``train --algo td-lambda``.

TD(lambda) on after-states with a small network, as in TD-Gammon (the method that learns fastest, without the table).

The network estimates V(s), the winning chance of the side about to roll in s (the same quantity the
solved table holds), from the mover's point of view, over a feature set of :mod:`urgym.features`: ``td-v1``
(own and opponent pieces per path position, then each side's pieces at home and scored: the environment's
observation without the roll) or ``tactics-v1`` (those one-hot, and each side's captures, rosettes and bear-offs
per roll). A move is worth
1 if it wins, V(s') if it keeps the turn and 1 - V(s') if it passes it; the agent plays the best.

The network is a :class:`urgym.agents.networks.ValueNetwork` (one sigmoid hidden layer), evaluated by the one
forward pass of :func:`urgym.agents.networks.evaluate`; it trains in float64, in place, and is saved in the one
network format. Training is self-play in numba. Along a game the prediction of light's winning chance y_t (V or 1 - V,
by who is to roll) is moved towards the next one by TD(lambda):

    w <- w + alpha * (y_{t+1} - y_t) * e_t,     e_t = lambda * e_{t-1} + grad y_t,

with y_T = 1 if light won, else 0.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numba import njit
from urgym.agents import search
from urgym.agents.networks.td import TDAgent
from urgym.agents.networks.value import ValueNetwork, evaluate, layers_of, net_arrays
from urgym.evaluation.training.learner import LONG_GAME, Algorithm, Learner, LearningTask

from urgym import Rules, core
from urgym.core import geometry
from urgym.features import feature_size

__all__ = ["CHUNK_GAMES", "TD_LAMBDA", "TDLambda", "TDLambdaLearner", "TDLambdaSettings"]


@dataclass(frozen=True)
class TDLambdaSettings:
    """How ``train --algo td-lambda`` learns (the command's defaults are these)."""

    hidden: int = 80
    """Hidden units (one sigmoid layer)."""
    alpha: float = 0.1
    """Learning rate; it decays linearly to a tenth of itself over the run."""
    lam: float = 0.7
    """Trace decay lambda."""
    features: str = "td-v1"
    """The feature set (:mod:`urgym.features`)."""
    threads: int = 1
    """Self-play threads sharing the weights (more than one: their updates interleave without locks, so a run is
    not repeatable bit for bit)."""


class TDLambda:
    """A value network learning by TD(lambda) self-play: one sigmoid hidden layer, float64 weights updated in place.

    Args:
        network: The network to go on training (one sigmoid hidden layer), e.g. from :meth:`initial`.
    """

    def __init__(self, network: ValueNetwork) -> None:
        if network.activation != "sigmoid" or len(network.layers) != 2:
            raise ValueError(
                "TD(lambda) trains networks of one sigmoid hidden layer, got "
                f"{len(network.layers) - 1} {network.activation} hidden layers"
            )
        self.rules, self.features, self.info = network.rules, network.features, dict(network.info)
        self.arrays = network.arrays(np.float64)

    @classmethod
    def initial(cls, rules: Rules, hidden: int = 80, seed: int = 0, features: str = "td-v1") -> TDLambda:
        """A new network: weights drawn from N(0, 0.1) (seeded), biases 0."""
        rng = np.random.default_rng(seed)
        w1 = rng.normal(0, 0.1, (hidden, feature_size(rules, features)))
        w2 = rng.normal(0, 0.1, hidden)
        learner = cls.__new__(cls)
        learner.rules, learner.features, learner.info = rules, features, {}
        learner.arrays = net_arrays(
            [(w1.T, np.zeros(hidden)), (w2.reshape(-1, 1), np.zeros(1))], "sigmoid", features, np.float64
        )
        return learner

    def network(self) -> ValueNetwork:
        """The network as it is now (float32, as it plays and is saved), with :attr:`info`."""
        return ValueNetwork(self.rules, self.features, layers_of(self.arrays), "sigmoid", dict(self.info))

    def train(self, games: int, seed: int, first_game: int, alpha: float, lam: float, threads: int = 1) -> int:
        """Train on ``games`` self-play games; return the moves played.

        Game g is game ``first_game + g`` of ``seed``. With ``threads`` above 1 the games are shared out among
        threads that update the one set of weights at once, without locks (as Hogwild! does): each update touches the
        weights a little, so the races cost less than the second core brings, but the result varies from run to run.
        """
        if threads == 1:
            return self._train_slice(games, seed, first_game, alpha, lam, 0, 1)
        with ThreadPoolExecutor(threads) as pool:
            slices = [
                pool.submit(self._train_slice, games, seed, first_game, alpha, lam, t, threads) for t in range(threads)
            ]
            return sum(part.result() for part in slices)

    def _train_slice(
        self, games: int, seed: int, first_game: int, alpha: float, lam: float, part: int, parts: int
    ) -> int:
        """Train on the batches ``part``, ``part + parts``, ... of the ``games``; return the moves played."""
        geom = geometry(self.rules)
        ctx = search.search_context(
            geom,
            search.network_evaluation(self.arrays, None),  # no cache: the weights change as it plays
            0,
            4,
            prune=False,
        )
        played = 0
        for lo in range(part * TRAIN_BATCH, games, parts * TRAIN_BATCH):
            batch = min(TRAIN_BATCH, games - lo)
            flows = core.flow_buffers(batch)
            core.start_games(flows, self.rules.pieces, np.uint64(seed), first_game + lo)
            traces = Traces(np.zeros((batch, self.arrays.flat.shape[0])), np.full(batch, -1.0))
            played += int(train_games(flows, ctx, traces, alpha, lam))
        return played


TRAIN_BATCH = 8
"""Self-play games in lockstep while training (their updates interleave, one chance node per game per step)."""


class Traces(NamedTuple):
    """Per game of a training batch.

    The eligibility trace of every weight (laid out as the network's flat array), and light's last predicted chance
    (``previous``: -1 before the first prediction, -2 once the game's last update is done).
    """

    weights: np.ndarray  # (games, parameters)
    previous: np.ndarray  # (games,)


@njit(cache=True)
def _td_update(flows, i, ctx, traces, alpha, lam):
    """Game i's TD(lambda) step at its chance node.

    Move the last prediction towards this one (or the result), and add this prediction's gradient to the decayed traces.
    Returns False once the game is over.
    """
    state = flows[i].state
    net, s, geom = ctx.evaluation.net, ctx.evaluation.scratch, ctx.geom
    if core.is_over(state):
        target = 1.0 if core.winner_of(state) == 0 else 0.0
    else:
        v = evaluate(state, geom, net, s)
        target = v if core.turn_of(state) == 0 else 1.0 - v
    previous = traces.previous[i]
    trace = traces.weights[i]
    flat = net.flat
    if previous >= 0.0:
        delta = alpha * (target - previous)
        for k in range(flat.shape[0]):
            flat[k] += delta * trace[k]
    if core.is_over(state):
        traces.previous[i] = -2.0
        return False
    # Gradient of light's prediction y = V or 1 - V at this state, added to the decayed traces. After the
    # evaluation, s.x holds the features and s.a the hidden units; W0 is (inputs x hidden), W1 (hidden x 1).
    v = evaluate(state, geom, net, s)
    dv = (1.0 if core.turn_of(state) == 0 else -1.0) * v * (1.0 - v)
    inputs, hidden = net.sizes[0], net.sizes[1]
    w0, w1 = net.offsets[0], net.offsets[1]
    b0 = w0 + inputs * hidden
    dh = s.b  # the output layer's buffer, free once v is read
    for j in range(hidden):
        h = s.a[j]
        trace[w1 + j] = lam * trace[w1 + j] + dv * h
        dh[j] = dv * flat[w1 + j] * h * (1.0 - h)
        trace[b0 + j] = lam * trace[b0 + j] + dh[j]
    for k in range(inputs):
        x = s.x[k]
        row = w0 + k * hidden
        for j in range(hidden):
            trace[row + j] = lam * trace[row + j] + dh[j] * x
    trace[w1 + hidden] = lam * trace[w1 + hidden] + dv
    traces.previous[i] = target
    return True


@njit(cache=True, nogil=True)  # threads play their games at once on the shared weights
def train_games(flows, ctx, traces, alpha, lam):
    """Self-play the started games of ``flows`` in lockstep, one chance node of each game per step.

    A TD(lambda) update (:func:`_td_update`), the roll (a roll with no legal move passes) and the network's move (the
    best after-state, by the one search at depth 0). The weights are updated in place; returns the moves played.
    """
    values = np.zeros(core.MAX_MOVES, np.float64)
    active = flows.shape[0]
    while active > 0:
        active = 0
        for i in range(flows.shape[0]):
            if traces.previous[i] == -2.0 or not _td_update(flows, i, ctx, traces, alpha, lam):
                continue
            active += 1
            f = flows[i]
            if core.roll_turn(flows, i, ctx.geom) > 0:
                k = search.choose(f.state, f.roll, f.moves, f.n, 0, ctx, values, True) if f.n > 1 else 0
                core.play_move(flows, i, f.moves[k], ctx.geom)
    played = 0
    for i in range(flows.shape[0]):
        played += flows[i].played
    return played


CHUNK_GAMES = 500
"""Self-play games between two looks at the budget (the learning rate is set anew for each chunk)."""


class TDLambdaLearner(Learner):
    """TD(lambda) self-play under the training loop: chunks of games until the decisions asked are played.

    ``alpha`` decays linearly to a tenth of itself over the run (by ``task.share``); the table only measures (the
    validation regret): no position of it is learned from. A chunk is up to :data:`CHUNK_GAMES` games, fewer near the
    budget (a game is 100 to 200 moves), so a call stops within one chunk past the decisions asked.
    """

    def setup(self, task: LearningTask, seed: int, settings: TDLambdaSettings, folder: Path) -> None:
        """A new network drawn from ``seed``."""
        self.task, self.seed, self.settings = task, seed, settings
        self.network = TDLambda.initial(task.get_rules(), settings.hidden, seed, settings.features)
        self.done = self.games = 0
        self.alpha = settings.alpha
        self.granularity = CHUNK_GAMES * LONG_GAME

    def learn(self, decisions: int) -> int:
        """Chunks of self-play games until ``decisions`` more moves are played."""
        settings, target, start = self.settings, self.done + decisions, self.done
        while self.done < target and self.task.share(self.done) < 1.0:
            self.alpha = settings.alpha * (1 - 0.9 * min(self.task.share(self.done), 1.0))
            chunk = min(CHUNK_GAMES, max(1, (self.task.budget - self.done) // 60))  # stop near the budget
            self.done += self.network.train(chunk, self.seed, self.games, self.alpha, settings.lam, settings.threads)
            self.games += chunk
        return self.done - start

    def agent(self) -> TDAgent:
        """The network as it plays now (its best after-state)."""
        return TDAgent(self.network.network())

    def state(self) -> dict[str, Any]:
        """The weights and the games and moves played."""
        return {"flat": self.network.arrays.flat.copy(), "done": self.done, "games": self.games, "alpha": self.alpha}

    def load(self, state: dict[str, Any]) -> None:
        """Go on from :meth:`state`."""
        self.network.arrays.flat[:] = state["flat"]
        self.done, self.games, self.alpha = state["done"], state["games"], state["alpha"]

    def save(self, path: Path, facts: dict[str, Any]) -> None:
        """Write the network in the one network format, ``facts`` in its header."""
        network = self.network.network()
        network.info = facts
        network.save(path)

    def facts(self) -> dict[str, Any]:
        """The network's size and features."""
        s = self.settings
        return {"hidden": s.hidden, "alpha": s.alpha, "lam": s.lam, "features": s.features}

    def info(self) -> dict[str, Any]:
        """The games played and the learning rate."""
        return {"games": self.games, "alpha": self.alpha}


TD_LAMBDA = Algorithm(
    name="td-lambda",
    learner=TDLambdaLearner,
    settings=TDLambdaSettings,
    decisions_per_second=30_000,
    description="TD(lambda) self-play on after-states, a small network in numba (no table needed to learn)",
    aliases=("td",),
    model_suffix=".npz",
)
"""TD(lambda) (measured on finkel 4: about 30,000 decisions a second on one core)."""
