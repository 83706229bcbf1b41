"""Fitting after-state value networks in torch, shared by ``distill`` and ``expected-td``.

The network, labelled decisions as tensors, the learner both build on (:class:`TorchValueLearner`), and the conversion
to the one network format (:class:`urgym.agents.networks.value.ValueNetwork`, which plays without torch).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from urgym.agents.networks.neural import NeuralAgent
from urgym.agents.networks.value import ValueNetwork
from urgym.evaluation.training.learner import Learner, LearningTask

from urgym import Rules, core
from urgym.core import geometry
from urgym.features import feature_set_id, feature_size, write_value_features_batch
from urgym.files import require_extra

__all__ = [
    "LabelledDecisions",
    "TorchValueLearner",
    "ValueBatches",
    "move_values",
    "network_facts",
    "to_value_network",
    "torch_network",
]


class LabelledDecisions(NamedTuple):
    """Labelled decisions: per decision its legal moves' after-states, outcome flags and table values (mover's)."""

    counts: np.ndarray  # int64[n]
    after: np.ndarray  # int64[n, width]
    flags: np.ndarray  # int8[n, width]
    values: np.ndarray  # float32[n, width]

    def __len__(self) -> int:
        return int(self.counts.shape[0])


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


class TorchValueLearner(Learner):
    """A torch after-state value network as a learner: what ``distill`` and ``expected-td`` share.

    The setup, play, saving and checkpoint; each adds its own :meth:`learn`. Torch is seeded by the run's seed
    before the network is drawn and runs on ``settings.threads`` threads.
    """

    def setup(self, task: LearningTask, seed: int, settings: Any, folder: Path) -> None:
        """The network of ``settings`` (features, hidden sizes) drawn from ``seed``, and Adam."""
        self.task, self.seed, self.settings = task, seed, settings
        self.rules = task.get_rules()
        torch = self.torch = require_extra("torch", "learn", "a torch value network")
        torch.manual_seed(seed)
        torch.set_num_threads(settings.threads)
        self.net = torch_network([feature_size(self.rules, settings.features), *settings.hidden, 1], torch)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=settings.learning_rate)

    def network(self, info: dict[str, Any] | None = None) -> ValueNetwork:
        """The network as it is now, in the one network format."""
        return to_value_network(self.net, self.rules, self.settings.features, info or {})

    def agent(self) -> NeuralAgent:
        """The network as it plays now (its best after-state), as an agent."""
        return NeuralAgent(self.network(), threads=1)

    def save(self, path: Path, facts: dict[str, Any]) -> None:
        """Write the network (its header holding ``facts``)."""
        self.network(facts).save(path)

    def facts(self) -> dict[str, Any]:
        """The network's features, sizes and parameters."""
        return network_facts(self.net, self.settings)

    def state(self) -> dict[str, Any]:
        """The network and the optimizer (subclasses add their own counters and streams)."""
        return {"net": self.net.state_dict(), "optimizer": self.optimizer.state_dict()}

    def load(self, state: dict[str, Any]) -> None:
        """Go on from :meth:`state`."""
        self.net.load_state_dict(state["net"])
        self.optimizer.load_state_dict(state["optimizer"])


def network_facts(net: Any, settings: Any) -> dict[str, Any]:
    """What every card of a value-network run says of the network."""
    return {
        "features": settings.features,
        "hidden": list(settings.hidden),
        "parameters": sum(p.numel() for p in net.parameters()),
    }
