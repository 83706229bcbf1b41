"""``train --algo expected-td``: an after-state value network learned by self-play alone, with expected TD(0).

TD(lambda) (``td-lambda``) moves each prediction towards the next one along a sampled game. Expected TD builds its
targets from the network's own one-ply expectation, over every roll and the best move of each,

    W(s, 1) = sum_r P(r) max_m q(s, r, m),     q = 1 (win) | V(s') (extra roll) | 1 - V(s'),

in which the dice's chance is averaged exactly instead of sampled, and carries the game's result back with a
lambda-return over them, G_t = (1 - lambda) W(s_t, 1) + lambda G_{t+1} (from s_t's roller; the result after the
last roll): lambda = 0 is expected TD(0), whose information moves one ply per fit. The loop alternates two
phases:

1. **Self-play** in numba (:func:`urgym.agents.networks.neural.selfplay_targets`) with the current network (its best
   after-state, or a random other move with chance ``epsilon``): when a game ends, each of its chance nodes kept
   (half of them) goes into a replay buffer with its target, computed by the same network;
2. **Fitting** in torch: minibatches from the buffer, squared error between V(s) and the target.

Nothing is learned from the solved table: it only measures the network (the validation regret that picks the
best model, as every ``train`` does). The network is a :class:`urgym.agents.networks.neural.ValueNetwork`, played by
``neural:model=PATH`` (and with search, ``neural:model=PATH:depth=2``).
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from urgym.agents.networks.neural import selfplay_context, selfplay_targets
from urgym.evaluation.training.learner import LONG_GAME, Algorithm, LearningTask
from urgym.evaluation.training.run import learning_rate
from urgym.evaluation.training.valuefit import TorchValueLearner

from urgym import core
from urgym.core import geometry
from urgym.features import feature_set_id, feature_size, write_value_features_batch

__all__ = ["EXPECTED_TD", "ExpectedTDLearner", "ExpectedTDSettings"]


@dataclass(frozen=True)
class ExpectedTDSettings:
    """How ``train --algo expected-td`` learns (see the module docstring)."""

    hidden: tuple[int, ...] = (256, 128)
    features: str = "tactics-v1"
    epsilon: float = 0.05
    """Chance of exploring: a random move other than the network's best."""
    lam: float = 0.7
    """Weight of the rest of the game in a target (0: the one-ply expectation alone)."""
    keep: float = 0.5
    """Chance that a chance node of self-play is kept."""
    generate: int = 100_000
    """Positions generated (with their targets) per self-play phase."""
    buffer: int = 400_000
    """Positions the replay buffer holds (the oldest are replaced: their targets came from older networks)."""
    replay: float = 4.0
    """Times each generated position is sampled for fitting, on average."""
    batch: int = 1024
    learning_rate: float = 1e-3
    threads: int = 1
    """Torch threads, and self-play threads."""


def _generate(
    network: Any, settings: ExpectedTDSettings, count: int, seed: int, first_game: int, threads: int
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """``count`` self-play positions and their targets, in ``threads`` slices played at once.

    Returns the positions, their targets, the games started and the moves played (the learner's decisions).
    """
    rules = network.rules
    per = math.ceil(count / threads)

    def slice_(t: int) -> tuple[np.ndarray, np.ndarray, int, int]:
        ctx = selfplay_context(network)
        states, targets, found = np.zeros(per, np.int64), np.zeros(per, np.float64), np.zeros(1, np.int64)
        pick = np.zeros(1, np.uint64)
        core.policy_stream(pick, np.uint64(seed), first_game + t, 5)
        games = moves = 0
        while found[0] < per:
            flows = core.flow_buffers(64)
            core.start_games(flows, rules.pieces, np.uint64(seed), first_game + (t << 40) + games)
            games += 64
            selfplay_targets(flows, ctx, settings.epsilon, settings.lam, settings.keep, pick, states, targets, found)
            moves += int(flows["played"].sum())
        return states, targets, games, moves

    with ThreadPoolExecutor(threads) as pool:
        parts = list(pool.map(slice_, range(threads)))
    return (
        np.concatenate([p[0] for p in parts]),
        np.concatenate([p[1] for p in parts]),
        sum(p[2] for p in parts),
        sum(p[3] for p in parts),
    )


class ExpectedTDLearner(TorchValueLearner):
    """Expected TD under the training loop: self-play phases and fitting until the decisions asked are played.

    ``timesteps`` counts the moves played in self-play (the learner's decisions); a call stops after the phase in
    which they are reached. Nothing is learned from the table.
    """

    def setup(self, task: LearningTask, seed: int, settings: ExpectedTDSettings, folder: Path) -> None:
        """The network, Adam, an empty replay buffer and the fitting's stream, all from ``seed``."""
        super().setup(task, seed, settings, folder)
        self.size, self.kind = feature_size(self.rules, settings.features), feature_set_id(settings.features)
        self.geom = geometry(self.rules)
        self.buffer_states = np.zeros(settings.buffer, np.int64)
        self.buffer_targets = np.zeros(settings.buffer, np.float32)
        self.written = self.generated = self.decisions = self.games = self.steps = 0
        self.rng = np.random.default_rng(seed)
        # a phase keeps about `generate` chance nodes of `generate / keep`, and ends with the games it started
        self.granularity = math.ceil(2 * settings.generate / settings.keep) + 64 * settings.threads * LONG_GAME

    def learn(self, decisions: int) -> int:
        """Self-play phases, each followed by its fitting, until ``decisions`` more moves are played."""
        settings, torch, task = self.settings, self.torch, self.task
        target, start = self.decisions + decisions, self.decisions
        while self.decisions < target and task.share(self.decisions) < 1.0:
            network = self.network()
            # Near the end, fewer positions (about 0.6 a move): the run stops close to its budget of moves.
            count = min(settings.generate, max(1_000, (task.budget - self.decisions) // 2))
            states, targets, played, moves = _generate(
                network, settings, count, self.seed, self.games, settings.threads
            )
            self.games += played
            self.decisions += moves
            for k in range(0, len(states), settings.buffer):  # into the ring buffer
                chunk = states[k : k + settings.buffer]
                at = (self.written + np.arange(len(chunk))) % settings.buffer
                self.buffer_states[at], self.buffer_targets[at] = chunk, targets[k : k + settings.buffer]
                self.written += len(chunk)
            filled = min(settings.buffer, self.written)
            self.generated += len(states)
            for _ in range(max(1, int(settings.replay * len(states) / settings.batch))):
                rows = self.rng.integers(0, filled, settings.batch)
                x = np.zeros((settings.batch, self.size), np.float32)
                write_value_features_batch(self.buffer_states[rows], self.geom, self.kind, x)
                for group in self.optimizer.param_groups:  # a cosine over the run, no warm-up
                    group["lr"] = learning_rate(settings.learning_rate, task.share(self.decisions), warmup=0.0)
                prediction = torch.sigmoid(self.net(torch.from_numpy(x))[:, 0])
                loss = ((prediction - torch.from_numpy(self.buffer_targets[rows])) ** 2).mean()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                self.steps += 1
        return self.decisions - start

    def info(self) -> dict[str, Any]:
        """What a row of the logs says of the run besides its decisions."""
        lr = self.optimizer.param_groups[0]["lr"]
        return {"games": self.games, "positions": self.generated, "steps": self.steps, "learning_rate": lr}

    _COUNTERS = ("written", "generated", "decisions", "games", "steps")

    def state(self) -> dict[str, Any]:
        """The network, the optimizer, the replay buffer, the counters and the fitting's stream."""
        return {
            **super().state(),
            "buffer": (self.buffer_states.copy(), self.buffer_targets.copy()),
            "counters": {name: getattr(self, name) for name in self._COUNTERS},
            "rng": self.rng.bit_generator.state,
        }

    def load(self, state: dict[str, Any]) -> None:
        """Go on from :meth:`state`."""
        super().load(state)
        self.buffer_states[:], self.buffer_targets[:] = state["buffer"]
        for name, value in state["counters"].items():
            setattr(self, name, value)
        self.rng.bit_generator.state = state["rng"]


EXPECTED_TD = Algorithm(
    name="expected-td",
    learner=ExpectedTDLearner,
    settings=ExpectedTDSettings,
    decisions_per_second=15_000,
    description="an after-state value network learned by self-play alone, with expected TD (torch)",
    requires=(("torch", "learn"),),
    model_suffix=".npz",
    validation=5_000,
)
"""Expected TD (measured on finkel 4: about 15,000 decisions a second on one core)."""
