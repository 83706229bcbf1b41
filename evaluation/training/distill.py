"""``train --algo distill``: an after-state value network learned from the solved table.

The table gives every position's winning chance under perfect play, so a network can learn V(s) by regression
on as many labelled positions as it likes. What matters is which positions and which errors:

- **Positions as they arise in play.** Decisions are drawn from games of several players with exploration
  (:func:`sample_labelled_decisions`): mostly perfect play slipping to a random other move with a chance of 0, 5, 15 or
  30%, and a side played by ``random`` or ``greedy`` in some games, so the rare but decisive positions of weak
  play are seen as well as those the held-out test set (perfect play) is made of. Each kept decision brings all
  its legal moves' after-states, labelled with the table.
- **Errors that change a move.** The loss is the squared error of each move's winning chance for the mover
  (which is the after-state's value or its complement), averaged over a decision's moves; ``--rank`` adds the
  regret a softmax policy over the network's move values would suffer (temperature ``--temperature``), which
  puts the weight where move choices are close; ``--close-weight`` weighs decisions whose two best moves lie
  within one point more.
- **Model selection** on the validation decisions of :func:`urgym.evaluation.scoring.positions.validation_positions`
  (perfect play, disjoint from the test set ``evaluate`` reports): the best network so far is kept.

Training runs in torch on the CPU (the ``learn`` extra); the network is saved as a
:class:`urgym.agents.networks.neural.ValueNetwork`, which plays with numpy and numba alone. The learning rate warms up
over the first 3% of the run and then follows a cosine to a hundredth of itself, by whichever of ``--timesteps``
(decisions seen) and ``--minutes`` runs out first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numba import njit
from urgym.evaluation.training.run import RunPlan, learning_rate
from urgym.evaluation.training.valuefit import (
    LabelledDecisions,
    ValueBatches,
    move_values,
    torch_for,
    value_run,
)
from urgym.solver import SolvedTable
from urgym.solver.lookup import best_of

from urgym import Rules, core
from urgym.core import geometry
from urgym.progress import progress_bar

__all__ = ["DistillSettings", "sample_labelled_decisions", "train_distill"]

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
    threads: int = 1
    """Torch threads."""
    eval_every: int = 2_000_000
    """Training decisions between scorings on the validation decisions."""


class DistillSample(NamedTuple):
    """Decisions kept by :func:`sample_labelled`.

    Per decision its legal moves' count, then per move its after-state (the position the move leads to, from its side to
    move), its outcome flags and its winning chance for the mover by the table (what distillation learns from: the
    position itself is not needed). ``found[0]`` of them are filled.
    """

    counts: np.ndarray  # int64[wanted]
    after: np.ndarray  # int64[wanted, width]
    flags: np.ndarray  # int8[wanted, width]
    values: np.ndarray  # float32[wanted, width]
    found: np.ndarray  # int64[1]


@njit(cache=True)
def sample_labelled(flows, geom, table, kinds, epsilons, pick, keep, sample):
    """Sample labelled decisions; return how many games were played.

    The started games of ``flows`` are played one after another, keeping each decision with two or more legal moves with
    probability ``keep`` (from the stream ``pick``) with every move's after-state and table value, until ``sample`` is
    full.

    Game i's side s plays ``kinds[i, s]`` (a ``core.POLICY_*``: random, greedy, or perfect slipping to another move
    with probability ``epsilons[i, s]``), drawing from the game's policy stream of that side.
    """
    probabilities = np.zeros(core.MAX_MOVES, dtype=np.float64)
    wanted, width = sample.after.shape
    for i in range(flows.shape[0]):
        f = flows[i]
        while sample.found[0] < wanted and core.next_decision(flows, i, geom) > 0:
            side = core.turn_of(f.state)
            best = 0
            if f.n > 1:
                best = best_of(f.state, f.roll, f.moves, f.n, probabilities, geom, table)
                if f.n <= width and core.next_uniform(pick) < keep:
                    j = sample.found[0]
                    sample.counts[j] = f.n
                    for k in range(f.n):
                        nxt, flags = core.apply_move(f.state, f.roll, f.moves[k], geom)
                        sample.after[j, k] = nxt
                        sample.flags[j, k] = flags
                        sample.values[j, k] = probabilities[k]
                    sample.found[0] += 1
            kind = kinds[i, side]
            if kind == core.POLICY_PERFECT:
                k = core.slip(best, f.n, epsilons[i, side], f.policy_rngs[side]) if f.n > 1 else 0
            else:
                move = core.policy_choice(kind, f.state, f.roll, f.moves, f.n, geom, f.policy_rngs[side])
                k = core.move_index(f.moves, move)
            core.play_move(flows, i, f.moves[k], geom)
        if sample.found[0] >= wanted:
            return i + 1
    return flows.shape[0]


def sample_labelled_decisions(
    table: SolvedTable, count: int, seed: int, keep: float = 0.3, progress: bool = False
) -> LabelledDecisions:
    """``count`` decisions with a choice from games of mixed players (see the module docstring), labelled by ``table``.

    The same for the same arguments.
    """
    rules = table.rules
    width = min(core.MAX_MOVES, rules.pieces + 1)
    sample = DistillSample(
        np.zeros(count, np.int64),
        np.zeros((count, width), np.int64),
        np.zeros((count, width), np.int8),
        np.zeros((count, width), np.float32),
        np.zeros(1, np.int64),
    )
    pick = np.zeros(1, dtype=np.uint64)
    core.policy_stream(pick, np.uint64(seed), 0, 3)
    rng = np.random.default_rng(seed)
    geom, view, games = geometry(rules), table.view, 0
    bar = progress_bar(count, "positions", progress, unit="decision")
    while sample.found[0] < count:
        before = int(sample.found[0])
        flows = core.flow_buffers(GAMES_PER_CALL)
        core.start_games(flows, rules.pieces, np.uint64(seed), games)
        draw = rng.random((GAMES_PER_CALL, 2))
        kinds = np.where(
            draw < RANDOM_SIDE,
            core.POLICY_RANDOM,
            np.where(draw < RANDOM_SIDE + GREEDY_SIDE, core.POLICY_GREEDY, core.POLICY_PERFECT),
        )
        epsilons = rng.choice(EPSILONS, size=(GAMES_PER_CALL, 2))
        games += sample_labelled(flows, geom, view, kinds.astype(np.int64), epsilons, pick, keep, sample)
        bar.update(int(sample.found[0]) - before)
    bar.close()
    return LabelledDecisions(sample.counts, sample.after, sample.flags, sample.values)


def train_distill(
    rules: Rules, table: SolvedTable, plan: RunPlan, settings: DistillSettings | None = None
) -> dict[str, Any]:
    """Learn a value network from ``table`` (see the module docstring).

    ``timesteps`` counts the training decisions seen (each with all its moves). Writes the best network (by validation
    regret) and the last one to ``out`` with their cards, the curve and the logs, as every ``train`` does.
    """
    settings = settings or DistillSettings()
    torch = torch_for("distill", plan, settings.threads)
    data = sample_labelled_decisions(table, settings.decisions, plan.seed, settings.keep, plan.progress)
    train = ValueBatches(data, rules, settings.features, torch)
    net, optimizer, run = value_run("distill", rules, table, plan, settings, torch)
    seen, steps, next_eval = 0, 0, settings.eval_every
    generator = np.random.default_rng(plan.seed)
    while run.share(seen) < 1.0:
        for batch in np.array_split(generator.permutation(len(data)), max(1, len(data) // settings.batch)):
            if run.share(seen) >= 1.0:
                break
            for group in optimizer.param_groups:
                group["lr"] = learning_rate(settings.learning_rate, run.share(seen))
            loss = _loss(net, torch, train.tensors(batch), settings)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            seen += len(batch)
            steps += 1
            run.advance(seen)
            if seen >= next_eval:
                next_eval += settings.eval_every
                run.evaluate(seen, steps=steps, learning_rate=optimizer.param_groups[0]["lr"])
    return run.finish(seen, steps=steps, learning_rate=optimizer.param_groups[0]["lr"])


def _loss(net: Any, torch: Any, tensors: tuple[Any, ...], settings: DistillSettings) -> Any:
    """Squared error of the moves' values for the mover (the decision's mean), plus the softmax policy's regret."""
    x, use, win, extra, mask, target, close = tensors
    values = move_values(net, torch, x, use, win, extra)
    weight = 1.0 + settings.close_weight * close.float()
    squared = ((values - target) ** 2 * use).sum(1) / use.sum(1).clamp(min=1)
    loss = (squared * weight).sum() / weight.sum()
    if settings.rank > 0:
        policy = torch.softmax((values / settings.temperature).masked_fill(~mask, -1e9), 1)
        best = target.masked_fill(~mask, -1.0).max(1, keepdim=True).values
        regret = (policy * (best - target).masked_fill(~mask, 0.0)).sum(1)
        loss = loss + settings.rank * (regret * weight).sum() / weight.sum()
    return loss
