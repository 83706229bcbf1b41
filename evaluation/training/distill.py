"""``train --algo distill``: an after-state value network learned from the solved table, or from a network's search.

The table gives every position's winning chance under perfect play, so a network can learn V(s) by regression
on as many labelled positions as it likes. A teacher (``--teacher``, :class:`SearchTeacher`) replaces the table by a
value network searched a few plies deep: the labels are what its search makes of each move, the games are played by
the network instead of perfect play, and a larger student learns to play at depth 0 about as well as the teacher
did searched, without the table (which then only picks the best model, as it does for every learner). What matters is
which positions and which errors:

- **Positions as they arise in play.** Decisions are drawn from games of several players with exploration
  (:func:`sample_labelled_decisions`): mostly perfect play slipping to a random other move with a chance of 0, 5, 15 or
  30%, and a side played by ``random`` or ``greedy`` in some games, so the rare but decisive positions of weak
  play are seen as well as those the held-out test set (perfect play) is made of. Each kept decision brings all
  its legal moves' after-states, labelled with the table.
- **Errors that change a move.** The loss is the squared error of each move's winning chance for the mover
  (which is the after-state's value or its complement), averaged over a decision's moves; ``--rank`` adds the
  regret a softmax policy over the network's move values would suffer (temperature ``--temperature``), which
  puts the weight where move choices are close; ``--close-weight`` weighs decisions whose two best moves lie
  within one point more; ``--set relative=W`` adds the squared error of each move's value less the best move's (the
  gaps a choice is made on, whatever the decision's common error).
- **Model selection** on the validation decisions of :func:`urgym.evaluation.scoring.positions.validation_positions`
  (perfect play, disjoint from the test set ``evaluate`` reports): the best network so far is kept.

Training runs in torch on the CPU (the ``learn`` extra); the network is saved as a
:class:`urgym.agents.networks.neural.ValueNetwork`, which plays with numpy and numba alone. The learning rate warms up
over the first 3% of the run and then follows a cosine to a hundredth of itself, by whichever of ``--timesteps``
(decisions seen) and ``--minutes`` runs out first: the fitting's budget, after the labels are drawn (their time is the
card's ``label_seconds``; a teacher's are most of a run).
"""

from __future__ import annotations

import itertools
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numba import njit, types
from numba.extending import overload
from urgym.agents import search
from urgym.agents.networks.value import ValueNetwork
from urgym.evaluation.training.learner import Algorithm, LearningTask
from urgym.evaluation.training.run import learning_rate
from urgym.evaluation.training.valuefit import LabelledDecisions, TorchValueLearner, ValueBatches, move_values
from urgym.solver import SolvedTable
from urgym.solver.lookup import best_of

from urgym import Rules, core
from urgym.core import geometry
from urgym.progress import progress_bar

__all__ = ["DISTILL", "DistillLearner", "DistillSettings", "SearchTeacher", "sample_labelled_decisions"]

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
    relative: float = 0.0
    """Weight of the squared error of each move's value relative to the best move's (what a choice depends on)."""
    threads: int = 1
    """Torch threads, and the threads searching a teacher's labels."""
    teacher: str | None = None
    """A value network file whose search labels the decisions instead of the table (:class:`SearchTeacher`)."""
    teacher_depth: int = 2
    """Plies the teacher searches beyond each move."""


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


class Teacher(NamedTuple):
    """A value network's search as the labeller, instead of the table: the source of a table-free distillation.

    ``label`` searches a kept decision's moves ``depth`` plies deeper (every move's value exact, the labels); ``play``
    picks the move of a decision not kept (the network alone, depth 0: the games cost little beside the labels).
    """

    label: search.SearchContext
    play: search.SearchContext
    depth: int


def _labels(state, roll, moves, n, values, geom, source):
    """Fill ``values[:n]`` with each move's winning chance for the mover by ``source``; return the best's index."""
    raise NotImplementedError  # specialised below by the source's type


def _best(state, roll, moves, n, values, geom, source):
    """The index of the move ``source`` plays (``values`` as scratch)."""
    raise NotImplementedError


def _is_teacher(typ: types.Type) -> bool:
    return isinstance(typ, types.BaseNamedTuple) and typ.instance_class is Teacher


@overload(_labels, inline="always")
def _labels_impl(state, roll, moves, n, values, geom, source):
    if _is_teacher(source):
        return lambda state, roll, moves, n, values, geom, source: search.choose(
            state, roll, moves, n, source.depth, source.label, values, True
        )
    return lambda state, roll, moves, n, values, geom, source: best_of(state, roll, moves, n, values, geom, source)


@overload(_best, inline="always")
def _best_impl(state, roll, moves, n, values, geom, source):
    if _is_teacher(source):
        return lambda state, roll, moves, n, values, geom, source: search.choose(
            state, roll, moves, n, 0, source.play, values, False
        )
    return lambda state, roll, moves, n, values, geom, source: best_of(state, roll, moves, n, values, geom, source)


@njit(cache=True, nogil=True)  # a teacher's labels are searched on several threads at once
def sample_labelled(flows, geom, source, kinds, epsilons, pick, keep, sample):
    """Sample labelled decisions; return how many games were played.

    The started games of ``flows`` are played one after another, keeping each decision with two or more legal moves with
    probability ``keep`` (from the stream ``pick``) with every move's after-state and value by ``source`` (the table's
    view, or a :class:`Teacher`), until ``sample`` is full.

    Game i's side s plays ``kinds[i, s]`` (a ``core.POLICY_*``: random, greedy, or ``source``'s best move slipping to
    another with probability ``epsilons[i, s]``), drawing from the game's policy stream of that side.
    """
    probabilities = np.zeros(core.MAX_MOVES, dtype=np.float64)
    wanted, width = sample.after.shape
    for i in range(flows.shape[0]):
        f = flows[i]
        while sample.found[0] < wanted and core.next_decision(flows, i, geom) > 0:
            side = core.turn_of(f.state)
            best = 0
            if f.n > 1:
                if f.n <= width and core.next_uniform(pick) < keep:
                    best = _labels(f.state, f.roll, f.moves, f.n, probabilities, geom, source)
                    j = sample.found[0]
                    sample.counts[j] = f.n
                    for k in range(f.n):
                        nxt, flags = core.apply_move(f.state, f.roll, f.moves[k], geom)
                        sample.after[j, k] = nxt
                        sample.flags[j, k] = flags
                        sample.values[j, k] = probabilities[k]
                    sample.found[0] += 1
                else:
                    best = _best(f.state, f.roll, f.moves, f.n, probabilities, geom, source)
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


@dataclass(frozen=True)
class SearchTeacher:
    """Labels from a value network's own search instead of the table (``train --algo distill --teacher``).

    Every kept decision's moves are searched ``depth`` plies deeper with ``network`` at the leaves, and the games are
    played by the network alone where the table's version plays perfectly: nothing of the table is learned from, so a
    network learned without the table (``td-lambda``) distils into a larger one that plays at depth 0 about as well
    as it did searched.
    """

    network: ValueNetwork
    depth: int = 2

    def source(self) -> Teacher:
        """The labeller as the sampling kernel takes it (its own buffers and caches: one per thread)."""
        arrays = self.network.arrays()  # float32 as agents play it: faster, and within 1e-7 of float64's labels
        geom = geometry(self.network.rules)

        def context(depth: int, prune: bool) -> search.SearchContext:
            evaluation = search.network_evaluation(arrays, TEACHER_CACHE_BITS)
            return search.search_context(geom, evaluation, depth, TEACHER_CACHE_BITS, prune=prune)

        return Teacher(context(self.depth, True), context(0, False), self.depth)


TEACHER_CACHE_BITS = 18
"""log2 of a teacher's evaluation cache and transposition table (the network is fixed, so entries stay true)."""


def sample_labelled_decisions(
    source: SolvedTable | SearchTeacher,
    count: int,
    seed: int,
    keep: float = 0.3,
    progress: bool = False,
    threads: int = 1,
) -> LabelledDecisions:
    """``count`` decisions with a choice from games of mixed players (see the module docstring), labelled by ``source``.

    A teacher's labels are searched on ``threads`` threads, each sampling its share from games of its own; the table's
    on one. The same for the same arguments.
    """
    rules = source.rules if isinstance(source, SolvedTable) else source.network.rules
    width = min(core.MAX_MOVES, rules.pieces + 1)
    sample = DistillSample(
        np.zeros(count, np.int64),
        np.zeros((count, width), np.int64),
        np.zeros((count, width), np.int8),
        np.zeros((count, width), np.float32),
        np.zeros(1, np.int64),
    )
    parts = 1 if isinstance(source, SolvedTable) else threads
    bounds = [count * t // parts for t in range(parts + 1)]
    bar = progress_bar(count, "positions", progress, unit="decision")
    with ThreadPoolExecutor(parts) as pool:
        done = [
            pool.submit(_sample_part, rules, source, _slice(sample, lo, hi), seed, t, keep, bar)
            for t, (lo, hi) in enumerate(itertools.pairwise(bounds))
        ]
        for part in done:
            part.result()
    bar.close()
    return LabelledDecisions(sample.counts, sample.after, sample.flags, sample.values)


def _slice(sample: DistillSample, lo: int, hi: int) -> DistillSample:
    """Rows ``lo:hi`` of ``sample`` (views), with a count of their own."""
    return DistillSample(
        sample.counts[lo:hi], sample.after[lo:hi], sample.flags[lo:hi], sample.values[lo:hi], np.zeros(1, np.int64)
    )


def _sample_part(
    rules: Rules,
    source: SolvedTable | SearchTeacher,
    sample: DistillSample,
    seed: int,
    part: int,
    keep: float,
    bar: Any,
) -> None:
    """Fill ``sample`` from games of part ``part`` of the seed (their numbers, streams and players its own)."""
    pick = np.zeros(1, dtype=np.uint64)
    core.policy_stream(pick, np.uint64(seed), part, 3)
    rng = np.random.default_rng(seed if part == 0 else (seed, part))
    labeller = source.view if isinstance(source, SolvedTable) else source.source()
    geom, games, wanted = geometry(rules), part << 40, len(sample.counts)
    while sample.found[0] < wanted:
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
        games += sample_labelled(flows, geom, labeller, kinds.astype(np.int64), epsilons, pick, keep, sample)
        bar.update(int(sample.found[0]) - before)


class DistillLearner(TorchValueLearner):
    """Distillation under the training loop: labelled decisions drawn once, then fitted batch by batch.

    ``timesteps`` counts the training decisions seen (each with all its moves); the labels are drawn in
    :meth:`setup`, before the run's clock (their time is the card's ``label_seconds``).
    """

    def setup(self, task: LearningTask, seed: int, settings: DistillSettings, folder: Path) -> None:
        """The network, and the labelled decisions from the table (or the teacher's search)."""
        super().setup(task, seed, settings, folder)
        from urgym.solver import table_for

        source = (
            SearchTeacher(ValueNetwork.load(settings.teacher), settings.teacher_depth) if settings.teacher else None
        )
        start = time.perf_counter()
        data = sample_labelled_decisions(
            source or table_for(self.rules), settings.decisions, seed, settings.keep, True, settings.threads
        )
        self.label_seconds = time.perf_counter() - start
        self.data = ValueBatches(data, self.rules, settings.features, self.torch)
        self.generator = np.random.default_rng(seed)
        self.seen = self.steps = 0
        self.batches: list[np.ndarray] = []
        self.granularity = settings.batch

    def learn(self, decisions: int) -> int:
        """Batches of the labelled decisions (epoch after epoch, each shuffled) until ``decisions`` more are seen."""
        settings, torch, target, start = self.settings, self.torch, self.seen + decisions, self.seen
        while self.seen < target and self.task.share(self.seen) < 1.0:
            if not self.batches:  # a new epoch
                order = self.generator.permutation(len(self.data.data))
                self.batches = np.array_split(order, max(1, len(order) // settings.batch))[::-1]
            batch = self.batches.pop()
            for group in self.optimizer.param_groups:
                group["lr"] = learning_rate(settings.learning_rate, self.task.share(self.seen))
            loss = _loss(self.net, torch, self.data.tensors(batch), settings)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self.seen += len(batch)
            self.steps += 1
        return self.seen - start

    def facts(self) -> dict[str, Any]:
        """The network's size, and the time its labels took."""
        return {**super().facts(), "label_seconds": round(self.label_seconds, 1)}

    def info(self) -> dict[str, Any]:
        """The gradient steps and the learning rate."""
        return {"steps": self.steps, "learning_rate": self.optimizer.param_groups[0]["lr"]}

    def state(self) -> dict[str, Any]:
        """The network, the optimizer, the epoch's batches left and the shuffling stream."""
        held = {"seen": self.seen, "steps": self.steps, "batches": self.batches}
        return {**super().state(), **held, "rng": self.generator.bit_generator.state}

    def load(self, state: dict[str, Any]) -> None:
        """Go on from :meth:`state`."""
        super().load(state)
        self.seen, self.steps, self.batches = state["seen"], state["steps"], state["batches"]
        self.generator.bit_generator.state = state["rng"]


DISTILL = Algorithm(
    name="distill",
    learner=DistillLearner,
    settings=DistillSettings,
    description="an after-state value network learned from the solved table (or a network's search: --teacher)",
    requires=(("torch", "learn"),),
    model_suffix=".npz",
    uses_table=True,
    eval_every=2_000_000,
    validation=5_000,
)
"""Distillation: ``train`` only, since it learns from the solved table (with ``--teacher``, from a network)."""


def _loss(net: Any, torch: Any, tensors: tuple[Any, ...], settings: DistillSettings) -> Any:
    """Squared error of the moves' values for the mover (the decision's mean), plus the softmax policy's regret."""
    x, use, win, extra, mask, target, close = tensors
    values = move_values(net, torch, x, use, win, extra)
    weight = 1.0 + settings.close_weight * close.float()
    squared = ((values - target) ** 2 * use).sum(1) / use.sum(1).clamp(min=1)
    loss = (squared * weight).sum() / weight.sum()
    if settings.relative > 0:
        loss = loss + settings.relative * (relative_errors(values, target, mask) * weight).sum() / weight.sum()
    if settings.rank > 0:
        policy = torch.softmax((values / settings.temperature).masked_fill(~mask, -1e9), 1)
        best = target.masked_fill(~mask, -1.0).max(1, keepdim=True).values
        regret = (policy * (best - target).masked_fill(~mask, 0.0)).sum(1)
        loss = loss + settings.rank * (regret * weight).sum() / weight.sum()
    return loss


def relative_errors(values: Any, target: Any, mask: Any) -> Any:
    """Per decision, the mean squared error of the other moves' values less the best move's (by the target).

    A choice depends on these gaps alone: an error common to every move of a decision costs nothing here.
    """
    best = target.masked_fill(~mask, -1.0).argmax(1, keepdim=True)
    gaps = (values - values.gather(1, best)) - (target - target.gather(1, best))
    return (gaps**2 * mask).sum(1) / (mask.sum(1) - 1).clamp(min=1)
