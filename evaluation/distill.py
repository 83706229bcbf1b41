"""``train --algo distill``: an after-state value network learned from the solved table.

The table gives every position's winning chance under perfect play, so a network can learn V(s) by regression
on as many labelled positions as it likes. What matters is which positions and which errors:

- **Positions as they arise in play.** Decisions are drawn from games of several players with exploration
  (:func:`sample_decisions`): mostly perfect play slipping to a random other move with a chance of 0, 5, 15 or
  30%, and a side played by ``random`` or ``greedy`` in some games, so the rare but decisive positions of weak
  play are seen as well as those the held-out test set (perfect play) is made of. Each kept decision brings all
  its legal moves' after-states, labelled with the table.
- **Errors that change a move.** The loss is the squared error of each move's winning chance for the mover
  (which is the after-state's value or its complement), averaged over a decision's moves; ``--rank`` adds the
  regret a softmax policy over the network's move values would suffer (temperature ``--temperature``), which
  puts the weight where move choices are close; ``--close-weight`` weighs decisions whose two best moves lie
  within one point more.
- **Model selection** on the validation decisions of :func:`urgym.evaluation.positions.validation_positions`
  (perfect play, disjoint from the test set ``evaluate`` reports): the best network so far is kept.

Training runs in torch on the CPU (the ``learn`` extra); the network is saved as a
:class:`urgym.agents.valuenet.ValueNetwork`, which plays with numpy and numba alone. The learning rate warms up
over the first 3% of the run and then follows a cosine to a hundredth of itself, by whichever of ``--timesteps``
(decisions seen) and ``--minutes`` runs out first.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from tqdm.auto import tqdm
from urgym.agents.valuenet import ValueNetwork
from urgym.evaluation import _kernels as EK
from urgym.evaluation.positions import validation_positions
from urgym.solver import SolvedTable

from urgym import Rules, core
from urgym.core import geometry
from urgym.features import feature_set_id, feature_size, write_value_features_batch
from urgym.files import require_extra

__all__ = ["DistillData", "DistillSettings", "sample_decisions", "train_distill"]

EPSILONS = (0.0, 0.05, 0.15, 0.3)
"""The perfect player's slip chances, one drawn per game and side."""
RANDOM_SIDE = 0.08
"""Share of sides played by ``random`` (the rest, but :data:`GREEDY_SIDE`, perfect with slips)."""
GREEDY_SIDE = 0.04
GAMES_PER_CALL = 512


@dataclass(frozen=True)
class DistillSettings:
    """How ``train --algo distill`` learns (see the module docstring)."""

    hidden: tuple[int, ...] = (384, 128)
    features: str = "tactics-v1"
    decisions: int = 8_000_000
    """Training decisions drawn from play (each with all its moves' after-states)."""
    keep: float = 0.3
    """Chance that a decision with a choice is kept (spreads the sample over many games)."""
    batch: int = 512
    """Decisions per gradient step."""
    learning_rate: float = 2e-3
    rank: float = 0.0
    temperature: float = 0.01
    close_weight: float = 0.0
    validation: int = 5000
    """Validation decisions scored at each evaluation."""
    threads: int = 2


class DistillData(NamedTuple):
    """Labelled decisions: per decision its legal moves' after-states, outcome flags and table values (mover's)."""

    counts: np.ndarray  # int64[n]
    after: np.ndarray  # int64[n, width]
    flags: np.ndarray  # int8[n, width]
    values: np.ndarray  # float32[n, width]

    def __len__(self) -> int:
        return int(self.counts.shape[0])


def sample_decisions(table: SolvedTable, count: int, seed: int, keep: float = 0.3,
                     progress: bool = False) -> DistillData:
    """``count`` decisions with a choice from games of mixed players (see the module docstring), labelled by
    ``table``; the same for the same arguments."""
    rules = table.rules
    width = min(core.MAX_MOVES, rules.pieces + 1)
    sample = EK.DistillSample(np.zeros(count, np.int64),
                              np.zeros((count, width), np.int64), np.zeros((count, width), np.int8),
                              np.zeros((count, width), np.float32), np.zeros(1, np.int64))
    pick = np.zeros(1, dtype=np.uint64)
    core.policy_stream(pick, np.uint64(seed), 0, 3)
    rng = np.random.default_rng(seed)
    geom, view, games = geometry(rules), table.view, 0
    bar = tqdm(total=count, desc="positions", unit="decision", disable=not progress, dynamic_ncols=True)
    while sample.found[0] < count:
        before = int(sample.found[0])
        flows = core.flow_buffers(GAMES_PER_CALL)
        core.start_games(flows, rules.pieces, np.uint64(seed), games)
        draw = rng.random((GAMES_PER_CALL, 2))
        kinds = np.where(draw < RANDOM_SIDE, core.POLICY_RANDOM,
                         np.where(draw < RANDOM_SIDE + GREEDY_SIDE, core.POLICY_GREEDY, core.POLICY_PERFECT))
        epsilons = rng.choice(EPSILONS, size=(GAMES_PER_CALL, 2))
        games += EK.sample_labelled(flows, geom, view, kinds.astype(np.int64), epsilons, pick, keep, sample)
        bar.update(int(sample.found[0]) - before)
    bar.close()
    return DistillData(sample.counts, sample.after, sample.flags, sample.values)


def validation_data(table: SolvedTable, count: int) -> DistillData:
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
    return DistillData(counts, after, flags, values)


class _Batches:
    """Torch views of a :class:`DistillData` and the features of a batch of its decisions, made on demand."""

    def __init__(self, data: DistillData, rules: Rules, features: str, torch: Any) -> None:
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
        return (torch.from_numpy(x), torch.from_numpy(use), torch.from_numpy(self.win[rows]),
                torch.from_numpy(self.extra[rows]), torch.from_numpy(self.mask[rows]),
                torch.from_numpy(self.data.values[rows]), torch.from_numpy(self.close[rows]))


def _move_values(net: Any, torch: Any, x: Any, use: Any, win: Any, extra: Any) -> Any:
    """Each move's winning chance for the mover by the network: 1 for a win, V(s') after an extra roll, else
    1 - V(s')."""
    values = torch.zeros(use.shape)
    values[use] = torch.sigmoid(net(x)[:, 0])
    return torch.where(win, torch.ones_like(values), torch.where(extra, values, 1.0 - values))


def _network(sizes: list[int], torch: Any) -> Any:
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


def validation_regret(net: Any, torch: Any, batches: _Batches) -> float:
    """Mean regret (win-% points) of the network's best moves on the validation decisions."""
    with torch.no_grad():
        regrets = []
        for start in range(0, len(batches.data), 4096):
            rows = np.arange(start, min(start + 4096, len(batches.data)))
            x, use, win, extra, mask, target, _ = batches.tensors(rows)
            chosen = _move_values(net, torch, x, use, win, extra).masked_fill(~mask, -1.0).argmax(1)
            best = target.masked_fill(~mask, -1.0).max(1).values
            regrets.append(best - target[torch.arange(len(rows)), chosen])
    return 100.0 * float(torch.cat(regrets).double().mean())


def _learning_rate(top: float, progress: float, warmup: float = 0.03) -> float:
    """Linear warm-up over the first ``warmup`` of the run, then a cosine down to a hundredth."""
    if progress < warmup:
        return top * max(progress / warmup, 0.01)
    share = min(1.0, (progress - warmup) / (1.0 - warmup))
    return top * (0.01 + 0.99 * 0.5 * (1.0 + math.cos(math.pi * share)))


class _Run:
    """The bookkeeping every value-network run of ``train`` shares: its budget (``timesteps`` or ``minutes``,
    whichever ends first), the progress bar, and at each evaluation the validation regret, the logs, the curve
    and the best model with its card; at the end the last model."""

    def __init__(self, algo: str, rules: Rules, seed: int, out: Path, timesteps: int, minutes: float | None,
                 settings: Any, net: Any, torch: Any, check: _Batches, unit: str, progress: bool) -> None:
        from urgym.evaluation.training import Curve, _tensorboard

        self.algo, self.rules, self.seed, self.out = algo, rules, seed, out
        self.timesteps, self.minutes, self.features = timesteps, minutes, settings.features
        self.net, self.torch, self.check = net, torch, check
        self.start = time.perf_counter()
        self.curve, self.writer, self.log = Curve(out), _tensorboard(out), []
        self.facts = {"features": settings.features, "hidden": list(settings.hidden),
                      "parameters": sum(p.numel() for p in net.parameters()), "settings": asdict(settings)}
        self.bar = tqdm(total=timesteps, desc=algo, unit=unit, disable=not progress, dynamic_ncols=True)

    def share(self, done: int) -> float:
        """How much of the budget is spent, 0 to 1 (or more)."""
        spent = (time.perf_counter() - self.start) / (60 * self.minutes) if self.minutes else 0.0
        return max(done / self.timesteps, spent)

    def evaluate(self, done: int, **log: Any) -> float:
        """Score the network on the validation decisions, log it, and keep it if it is the best so far."""
        from urgym.evaluation.training import _write_rows

        regret = validation_regret(self.net, self.torch, self.check)
        elapsed = time.perf_counter() - self.start
        self.bar.set_postfix_str(f"regret {regret:.4f}")
        self.log.append({"timesteps": done, **log, "seconds": round(elapsed, 1), "eval/mean_regret": regret})
        _write_rows(self.out / "logs" / "progress.csv", self.log)
        if self.writer:
            self.writer.add_scalar("eval/mean_regret", regret, done)
        if self.curve.add(done, elapsed, regret):
            self._save("best_model.npz", done, regret, log)
        return regret

    def finish(self, done: int, **log: Any) -> dict[str, Any]:
        """Score the last network (unless just scored), save it as ``model.npz`` and say what the run did."""
        self.bar.close()
        rows = self.curve.rows
        regret = rows[-1]["mean_regret"] if rows and rows[-1]["timesteps"] == done else self.evaluate(done, **log)
        self._save("model.npz", done, regret, log)
        return {"model": str(self.out / "model.npz"), "best_model": str(self.out / "best_model.npz"),
                "timesteps": done, "seconds": time.perf_counter() - self.start, "best_regret": self.curve.best}

    def _save(self, name: str, done: int, regret: float, log: dict[str, Any]) -> None:
        from urgym.agents.learned import write_model_card
        from urgym.evaluation.training import _facts

        more = {"games": log["games"]} if "games" in log else {}
        info = _facts(self.rules, self.algo, self.seed, done, time.perf_counter() - self.start, regret, **more,
                      **self.facts)
        to_value_network(self.net, self.rules, self.features, info).save(self.out / name)
        write_model_card(self.out / name, self.rules, **info)


def train_distill(rules: Rules, table: SolvedTable, out: Path, timesteps: int, minutes: float | None, seed: int = 0,
                  settings: DistillSettings | None = None, eval_every: int = 2_000_000,
                  progress: bool = True) -> dict[str, Any]:
    """Learn a value network from ``table`` (see the module docstring); ``timesteps`` counts the training
    decisions seen (each with all its moves). Writes the best network (by validation regret) and the last one to
    ``out`` with their cards, the curve and the logs, as every ``train`` does."""
    torch = require_extra("torch", "learn", "train --algo distill")
    settings = settings or DistillSettings()
    torch.manual_seed(seed)
    torch.set_num_threads(settings.threads)
    data = sample_decisions(table, settings.decisions, seed, settings.keep, progress)
    train, check = _Batches(data, rules, settings.features, torch), _Batches(
        validation_data(table, settings.validation), rules, settings.features, torch)
    net = _network([feature_size(rules, settings.features), *settings.hidden, 1], torch)
    optimizer = torch.optim.Adam(net.parameters(), lr=settings.learning_rate)
    run = _Run("distill", rules, seed, out, timesteps, minutes, settings, net, torch, check, "decision", progress)
    seen, steps, next_eval = 0, 0, eval_every
    generator = np.random.default_rng(seed)
    while run.share(seen) < 1.0:
        for batch in np.array_split(generator.permutation(len(data)), max(1, len(data) // settings.batch)):
            if run.share(seen) >= 1.0:
                break
            for group in optimizer.param_groups:
                group["lr"] = _learning_rate(settings.learning_rate, run.share(seen))
            loss = _loss(net, torch, train.tensors(batch), settings)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            seen += len(batch)
            steps += 1
            run.bar.update(len(batch))
            if seen >= next_eval:
                next_eval += eval_every
                run.evaluate(seen, steps=steps, learning_rate=optimizer.param_groups[0]["lr"])
    return run.finish(seen, steps=steps, learning_rate=optimizer.param_groups[0]["lr"])


def _loss(net: Any, torch: Any, tensors: tuple[Any, ...], settings: DistillSettings) -> Any:
    """Squared error of the moves' values for the mover (the decision's mean), plus the softmax policy's regret."""
    x, use, win, extra, mask, target, close = tensors
    values = _move_values(net, torch, x, use, win, extra)
    weight = 1.0 + settings.close_weight * close.float()
    squared = ((values - target) ** 2 * use).sum(1) / use.sum(1).clamp(min=1)
    loss = (squared * weight).sum() / weight.sum()
    if settings.rank > 0:
        policy = torch.softmax((values / settings.temperature).masked_fill(~mask, -1e9), 1)
        best = target.masked_fill(~mask, -1.0).max(1, keepdim=True).values
        regret = (policy * (best - target).masked_fill(~mask, 0.0)).sum(1)
        loss = loss + settings.rank * (regret * weight).sum() / weight.sum()
    return loss
