"""Fitting after-state value networks in torch, shared by ``distill`` and ``expected-td``.

The network, labelled decisions as tensors, the validation decisions and their regret, and the conversion to the one
network format (:class:`urgym.agents.networks.value.ValueNetwork`, which plays without torch).
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from urgym.agents.networks.neural import NeuralAgent
from urgym.agents.networks.value import ValueNetwork
from urgym.evaluation.scoring.positions import validation_positions
from urgym.evaluation.training.run import Metrics, RunPlan, TrainingRun
from urgym.solver import SolvedTable

from urgym import Rules, core
from urgym.core import geometry
from urgym.features import feature_set_id, feature_size, write_value_features_batch
from urgym.files import require_extra

__all__ = [
    "LabelledDecisions",
    "TorchValueLearner",
    "ValueBatches",
    "ValueRun",
    "move_values",
    "network_facts",
    "to_value_network",
    "torch_for",
    "torch_network",
    "validation_data",
    "validation_regret",
    "value_run",
]


class LabelledDecisions(NamedTuple):
    """Labelled decisions: per decision its legal moves' after-states, outcome flags and table values (mover's)."""

    counts: np.ndarray  # int64[n]
    after: np.ndarray  # int64[n, width]
    flags: np.ndarray  # int8[n, width]
    values: np.ndarray  # float32[n, width]

    def __len__(self) -> int:
        return int(self.counts.shape[0])


def validation_data(table: SolvedTable, count: int) -> LabelledDecisions:
    """The validation decisions (perfect play, none of the test set) with every move's after-state and value."""
    rules = table.rules
    width = min(core.MAX_MOVES, rules.pieces + 1)
    decisions = validation_positions(table, count)
    geom = geometry(rules)
    counts = np.zeros(count, np.int64)
    after = np.zeros((count, width), np.int64)
    flags = np.zeros((count, width), np.int8)
    values = np.zeros((count, width), np.float32)
    for i, (position, roll) in enumerate(decisions):
        moves = position.legal_moves(roll)
        chances = table.move_values(position, roll)
        counts[i] = len(moves)
        for k, move in enumerate(moves[:width]):
            after[i, k], flags[i, k] = core.apply_move(position.code, roll, move, geom)
            values[i, k] = chances[move]
    return LabelledDecisions(counts, after, flags, values)


class ValueBatches:
    """Torch views of a :class:`LabelledDecisions` and the features of a batch of its decisions, made on demand."""

    def __init__(self, data: LabelledDecisions, rules: Rules, features: str, torch: Any) -> None:
        self.torch, self.data = torch, data
        width = data.after.shape[1]
        self.mask = np.arange(width)[None, :] < data.counts[:, None]
        self.win = (data.flags & core.WIN) != 0
        self.extra = (data.flags & core.EXTRA_ROLL) != 0
        self.use = self.mask & ~self.win  # the after-states the network values (a win is worth 1)
        self.geom, self.kind, self.size = geometry(rules), feature_set_id(features), feature_size(rules, features)
        gap = np.sort(np.where(self.mask, data.values, -1.0), axis=1)
        self.close = (gap[:, -1] - gap[:, -2]) < 0.01  # the two best moves within one point

    def tensors(self, rows: np.ndarray) -> tuple[Any, ...]:
        """Features of the valued after-states of decisions ``rows``, and the decisions' masks and targets."""
        torch = self.torch
        use = self.use[rows]
        x = np.zeros((int(use.sum()), self.size), np.float32)
        write_value_features_batch(self.data.after[rows][use], self.geom, self.kind, x)
        return (
            torch.from_numpy(x),
            torch.from_numpy(use),
            torch.from_numpy(self.win[rows]),
            torch.from_numpy(self.extra[rows]),
            torch.from_numpy(self.mask[rows]),
            torch.from_numpy(self.data.values[rows]),
            torch.from_numpy(self.close[rows]),
        )


def move_values(net: Any, torch: Any, x: Any, use: Any, win: Any, extra: Any) -> Any:
    """Each move's winning chance for the mover by the network.

    1 for a win, V(s') after an extra roll, else 1 - V(s').
    """
    values = torch.zeros(use.shape)
    values[use] = torch.sigmoid(net(x)[:, 0])
    return torch.where(win, torch.ones_like(values), torch.where(extra, values, 1.0 - values))


def torch_network(sizes: list[int], torch: Any) -> Any:
    """A torch network of ``sizes`` (inputs, hidden ..., 1): linear layers with ReLU between them."""
    layers: list[Any] = []
    for k in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[k], sizes[k + 1]))
        if k < len(sizes) - 2:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def to_value_network(net: Any, rules: Rules, features: str, info: dict[str, Any]) -> ValueNetwork:
    """The torch network as a :class:`ValueNetwork` (weights transposed to inputs x outputs, float32)."""
    linear = [m for m in net if hasattr(m, "weight")]
    layers = [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy()) for m in linear]
    return ValueNetwork(rules, features, layers, "relu", dict(info))


def validation_regret(net: Any, torch: Any, batches: ValueBatches) -> float:
    """Mean regret (win-% points) of the network's best moves on the validation decisions."""
    with torch.no_grad():
        regrets = []
        for start in range(0, len(batches.data), 4096):
            rows = np.arange(start, min(start + 4096, len(batches.data)))
            x, use, win, extra, mask, target, _ = batches.tensors(rows)
            chosen = move_values(net, torch, x, use, win, extra).masked_fill(~mask, -1.0).argmax(1)
            best = target.masked_fill(~mask, -1.0).max(1).values
            regrets.append(best - target[torch.arange(len(rows)), chosen])
    return 100.0 * float(torch.cat(regrets).double().mean())


class TorchValueLearner:
    """A torch value network as a :class:`~urgym.evaluation.training.run.TrainingRun`'s learner.

    Scored by its regret on the validation decisions, saved in the one network format.
    """

    suffix = ".npz"

    def __init__(self, net: Any, torch: Any, check: ValueBatches, rules: Rules, features: str) -> None:
        self.net, self.torch, self.check, self.rules, self.features = net, torch, check, rules, features

    def score(self) -> float:
        """The mean regret (win-% points) of the network's best moves on the validation decisions."""
        return validation_regret(self.net, self.torch, self.check)

    def save(self, path: Path, facts: dict[str, Any]) -> None:
        """Write the network (its header holding ``facts``)."""
        to_value_network(self.net, self.rules, self.features, facts).save(path)

    def agent(self) -> NeuralAgent:
        """The network as it plays now (its best after-state), as an agent."""
        return NeuralAgent(to_value_network(self.net, self.rules, self.features, {}), threads=1)


def network_facts(net: Any, settings: Any) -> dict[str, Any]:
    """What every card of a value-network run says of the network and the settings."""
    return {
        "features": settings.features,
        "hidden": list(settings.hidden),
        "parameters": sum(p.numel() for p in net.parameters()),
        "settings": asdict(settings),
    }


def torch_for(algo: str, plan: RunPlan, threads: int) -> Any:
    """Torch for a value-network run of ``algo``: seeded by the plan, on ``threads`` threads (the learn extra)."""
    torch = require_extra("torch", "learn", f"train --algo {algo}")
    torch.manual_seed(plan.seed)
    torch.set_num_threads(threads)
    return torch


class ValueRun(NamedTuple):
    """A value network being trained: the network, its optimizer and the run that evaluates and saves it."""

    net: Any
    optimizer: Any
    run: TrainingRun


def value_run(
    algo: str,
    rules: Rules,
    table: SolvedTable,
    plan: RunPlan,
    settings: Any,
    torch: Any,
    metrics: Metrics | None = None,
) -> ValueRun:
    """The network of ``settings`` (features, hidden sizes), Adam, and its :class:`TrainingRun`, counting decisions.

    The run selects by the regret on ``settings.validation`` decisions of ``table`` and writes the one network format
    with a card (every value-network learner's setup: ``distill``, ``expected-td``).
    """
    check = ValueBatches(validation_data(table, settings.validation), rules, settings.features, torch)
    net = torch_network([feature_size(rules, settings.features), *settings.hidden, 1], torch)
    optimizer = torch.optim.Adam(net.parameters(), lr=settings.learning_rate)
    learner = TorchValueLearner(net, torch, check, rules, settings.features)
    run = TrainingRun(
        algo, rules, plan, learner, "decision", network_facts(net, settings), metrics=metrics, table=table
    )
    return ValueRun(net, optimizer, run)
