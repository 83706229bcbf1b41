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
from typing import Any

import numpy as np
from urgym.agents.networks.neural import selfplay_context, selfplay_targets
from urgym.evaluation.training.run import Metrics, RunPlan, learning_rate
from urgym.evaluation.training.valuefit import (
    to_value_network,
    torch_for,
    value_run,
)
from urgym.solver import SolvedTable

from urgym import Rules, core
from urgym.core import geometry
from urgym.features import feature_set_id, feature_size, write_value_features_batch

__all__ = ["ExpectedTDSettings", "train_expected_td"]


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
    validation: int = 5000
    """Validation decisions scored at each evaluation."""
    eval_every: int = 1_000_000
    """Self-play moves (the learner's decisions) between scorings on the validation decisions."""


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


def train_expected_td(
    rules: Rules,
    table: SolvedTable,
    plan: RunPlan,
    settings: ExpectedTDSettings | None = None,
    metrics: Metrics | None = None,
) -> dict[str, Any]:
    """Learn a value network by self-play with expected TD(0) (see the module docstring).

    ``timesteps`` counts the moves played in self-play (the learner's decisions). Writes the best network (by
    validation regret, the table's only use) and the last one to ``out`` with their cards, the curve and the logs.

    ``metrics`` measures more figures at each evaluation (see :class:`~urgym.evaluation.training.run.TrainingRun`).
    """
    settings = settings or ExpectedTDSettings()
    seed = plan.seed
    torch = torch_for("expected-td", plan, settings.threads)
    size, kind, geom = feature_size(rules, settings.features), feature_set_id(settings.features), geometry(rules)
    net, optimizer, run = value_run("expected-td", rules, table, plan, settings, torch, metrics)
    buffer_states = np.zeros(settings.buffer, np.int64)
    buffer_targets = np.zeros(settings.buffer, np.float32)
    written = generated = decisions = games = steps = 0
    next_eval = settings.eval_every
    rng = np.random.default_rng(seed)
    while run.share(decisions) < 1.0:
        network = to_value_network(net, rules, settings.features, {})
        # Near the end, fewer positions (about 0.6 a move): the run stops close to its budget of moves.
        count = min(settings.generate, max(1_000, (plan.timesteps - decisions) // 2))
        states, targets, played, moves = _generate(network, settings, count, seed, games, settings.threads)
        games += played
        decisions += moves
        for k in range(0, len(states), settings.buffer):  # into the ring buffer
            chunk = states[k : k + settings.buffer]
            at = (written + np.arange(len(chunk))) % settings.buffer
            buffer_states[at], buffer_targets[at] = chunk, targets[k : k + settings.buffer]
            written += len(chunk)
        filled = min(settings.buffer, written)
        generated += len(states)
        run.advance(decisions)
        for _ in range(max(1, int(settings.replay * len(states) / settings.batch))):
            rows = rng.integers(0, filled, settings.batch)
            x = np.zeros((settings.batch, size), np.float32)
            write_value_features_batch(buffer_states[rows], geom, kind, x)
            for group in optimizer.param_groups:  # a cosine over the run, no warm-up
                group["lr"] = learning_rate(settings.learning_rate, run.share(decisions), warmup=0.0)
            prediction = torch.sigmoid(net(torch.from_numpy(x))[:, 0])
            loss = ((prediction - torch.from_numpy(buffer_targets[rows])) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            steps += 1
        if decisions >= next_eval or run.share(decisions) >= 1.0:
            while next_eval <= decisions:
                next_eval += settings.eval_every
            run.evaluate(decisions, **_state(games, generated, steps, optimizer))
    return run.finish(decisions, **_state(games, generated, steps, optimizer))


def _state(games: int, generated: int, steps: int, optimizer: Any) -> dict[str, Any]:
    """What a row of the logs says of the run besides its decisions."""
    return {"games": games, "positions": generated, "steps": steps, "learning_rate": optimizer.param_groups[0]["lr"]}
