"""The position benchmark: a fixed set of decisions from perfect play, every agent scored by its regret.

The positions depend only on the rule set, their number and a seed: decisions with two or more legal moves
from perfect self-play, each kept with probability :data:`KEEP`, so the set spreads over many games and
stages. Every agent faces the same set, which makes this the low-noise figure to compare agents by.

Two sets, as in any held-out evaluation: ``evaluate`` reports the *test* set (:data:`TEST_SEED`), which no
training run sees; ``train`` picks its best checkpoint on the *validation* set (:data:`VALIDATION_SEED`,
:func:`validation_positions`), with every decision of the default test set left out of it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from urgym.agents import Agent, make_agent
from urgym.evaluation.scoring import _kernels as EK
from urgym.evaluation.scoring.runner import RunOptions, run_tasks, table_key, worker_agent, worker_table
from urgym.evaluation.scoring.stats import RegretSummary
from urgym.solver import SolvedTable

from urgym import Position, Rules, core, get_rules
from urgym.batch import check_choices, decisions_at
from urgym.core import geometry

__all__ = [
    "DEFAULT_POSITIONS",
    "HELD_OUT_POSITIONS",
    "HELD_OUT_SEED",
    "KEEP",
    "SPLITS",
    "TEST_SEED",
    "TEST_SET_VERSION",
    "VALIDATION_SEED",
    "BenchmarkArrays",
    "PositionBenchmark",
    "benchmark_arrays",
    "benchmark_positions",
    "held_out_positions",
    "score_positions",
    "split_positions",
    "validation_positions",
]

TEST_SET_VERSION = 1
"""The version of the test and validation sets: their protocol (perfect self-play, :data:`KEEP`, the seeds, the
counts, the core's dice streams). Any change that moves one position bumps it, with a changelog entry; a paper's
figure names it (``test set v1``), and the tests freeze a fingerprint of the sets."""
TEST_SEED = 20230007
"""Seed of the reported benchmark (the test set)."""
VALIDATION_SEED = 20230001
"""Seed of training's model selection (the validation set; urgym 0.2 reported this set, see docs/evaluation.md)."""
DEFAULT_POSITIONS = 1000
"""Positions of the default test set; the validation set is disjoint from them."""
HELD_OUT_SEED = 20230013
"""Seed of the held-out check (:func:`held_out_positions`): no training run, model selection or test uses it."""
HELD_OUT_POSITIONS = 20_000
"""Positions of the held-out check: enough for a network's regret of a few thousandths to have a tight interval."""
KEEP = 0.05
SAMPLE_BATCH = 256
"""Games started at once while sampling (they are played one after another until the sample is full)."""


def benchmark_positions(
    table: SolvedTable, count: int = DEFAULT_POSITIONS, seed: int = TEST_SEED
) -> list[tuple[Position, int]]:
    """The benchmark's (position, roll) decisions for the table's rule set (the same on every call).

    Raises:
        ValueError: If perfect play does not offer ``count`` decisions with a choice (a rule set with very few).
    """
    if count < 1:
        raise ValueError(f"the position benchmark needs at least 1 position, got {count}")
    sample = EK.Sample(np.zeros(count, dtype=np.int64), np.zeros(count, dtype=np.int64), np.zeros(1, dtype=np.int64))
    pick = np.zeros(1, dtype=np.uint64)
    core.policy_stream(pick, np.uint64(seed), 0, 0)
    geom, flows = geometry(table.rules), core.flow_buffers(SAMPLE_BATCH)
    max_games, games = 1000 + 100 * count, 0
    while sample.found[0] < count and games < max_games:
        core.start_games(flows, table.rules.pieces, np.uint64(seed), games)
        games += EK.sample_perfect_decisions(flows[: max_games - games], geom, table.view, pick, KEEP, sample)
    found, states, rolls = int(sample.found[0]), sample.states, sample.rolls
    if found < count:
        raise ValueError(
            f"perfect play of {table.rules.describe()} offered only {found} decisions with a choice of "
            f"moves in {games:,} games; ask for fewer positions or play more pieces"
        )
    return [(Position(table.rules, int(s)), int(r)) for s, r in zip(states, rolls, strict=True)]


def validation_positions(table: SolvedTable, count: int = 500) -> list[tuple[Position, int]]:
    """Decisions for model selection in training.

    Drawn with :data:`VALIDATION_SEED`, none of them in the default test set (so a model is never chosen on a position
    it is then tested on).

    Raises:
        ValueError: If perfect play does not offer enough decisions with a choice.
    """
    try:
        test = set((p.code, r) for p, r in benchmark_positions(table, DEFAULT_POSITIONS))
    except ValueError:  # too few decisions for a full test set: leave out what there is
        test = set()
    drawn = benchmark_positions(table, 2 * count + len(test) // 2, VALIDATION_SEED)
    kept = [(p, r) for p, r in drawn if (p.code, r) not in test][:count]
    if len(kept) < count:
        raise ValueError(f"only {len(kept)} validation decisions outside the test set; ask for fewer")
    return kept


def held_out_positions(table: SolvedTable, count: int = HELD_OUT_POSITIONS) -> list[tuple[Position, int]]:
    """The held-out check's decisions: a larger sample of perfect play's, drawn with :data:`HELD_OUT_SEED`.

    A model chosen and reported on 1,000 test decisions can look better than it is; this set, which nothing trains or
    selects on, says how far to trust that figure.
    """
    return benchmark_positions(table, count, HELD_OUT_SEED)


def split_positions(table: SolvedTable, split: str, count: int | None = None) -> list[tuple[Position, int]]:
    """The decisions of one of :data:`SPLITS` (``count`` of them, default the split's own count).

    Raises:
        ValueError: For an unknown split, or a rule set that does not offer ``count`` decisions with a choice.
    """
    if split == "test":
        return benchmark_positions(table, count or DEFAULT_POSITIONS)
    if split == "validation":
        return validation_positions(table, count or 500)
    if split == "held-out":
        return held_out_positions(table, count or HELD_OUT_POSITIONS)
    raise ValueError(f"the position set must be one of {', '.join(SPLITS)}, got {split!r}")


@dataclass
class PositionsTask:
    spec: str | Agent
    rules: Rules
    table_key: str
    codes: list[int]
    rolls: list[int]
    first: int


POSITIONS_PER_TASK = 32
"""Positions an agent answers in one task (at once, when it has a batch method)."""
POSITIONS_SALT = 0xBE7C4
"""Seeds the random stream of benchmark position i (``core.seed_stream(rng, POSITIONS_SALT, i)``)."""


def score_positions_task(task: PositionsTask) -> tuple[np.ndarray, np.ndarray]:
    """Regret of each position of a task, and the seconds per decision (runs in a worker).

    The agent answers all the task's positions at once (:meth:`urgym.agents.Agent.select_moves`); position i draws from
    its own stream.
    """
    table = worker_table(task.table_key, task.rules)
    agent = worker_agent(task.spec, 0, task.rules, table)
    agent.reseed(task.first)  # its own stream, fixed by the task
    k = len(task.codes)
    decisions = decisions_at(np.array(task.codes), np.array(task.rolls), task.rules)
    for i in range(k):
        core.seed_stream(decisions.rngs[i], POSITIONS_SALT, task.first + i)
    start = time.perf_counter()
    chosen = check_choices(decisions, agent.select_moves(task.rules, decisions), f"agent {agent.spec!r}", task.rules)
    seconds = np.full(k, (time.perf_counter() - start) / max(k, 1))
    regrets = np.zeros(k)
    EK.position_regrets(decisions, chosen, geometry(task.rules), table.view, regrets)
    return regrets, seconds


@dataclass(frozen=True)
class PositionBenchmark:
    """An agent's regret over the benchmark positions."""

    spec: str
    regret: RegretSummary
    regrets: np.ndarray = field(repr=False)
    """Per position, the regret in win-% points (the unit of every regret urgym reports)."""
    split: str = "test"
    """Which of :data:`SPLITS` the positions are."""

    def to_dict(self) -> dict[str, Any]:
        """The benchmark's result as plain JSON."""
        return {
            "agent": self.spec,
            "positions": int(self.regrets.shape[0]),
            "position_set": self.split,
            "test_set_version": TEST_SET_VERSION,
            "regret": self.regret.to_dict(),
        }


def score_positions(
    agent: str | Agent,
    table: SolvedTable,
    positions: list[tuple[Position, int]],
    run: RunOptions = RunOptions(),
    split: str = "test",
) -> PositionBenchmark:
    """Score an agent on benchmark positions.

    For each, the regret of the move it picks (``run``: workers, backend and progress bar, see
    :class:`~urgym.evaluation.scoring.runner.RunOptions`); ``split`` names the set the positions are of.
    """
    spec_agent = make_agent(agent)
    spec_agent.check_rules(table.rules)
    in_process = getattr(spec_agent, "in_process", False)
    workers = run.worker_count(in_process)
    key = table_key(table, in_process=workers <= 1 and run.backend == "process")
    # The same cut for any number of workers, so the same numbers; an agent that prefers the main process answers
    # every position in one batch.
    per_task = max(len(positions), 1) if in_process else POSITIONS_PER_TASK
    tasks = [
        PositionsTask(
            agent,
            table.rules,
            key,
            [p.code for p, _ in positions[i : i + per_task]],
            [r for _, r in positions[i : i + per_task]],
            i,
        )
        for i in range(0, len(positions), per_task)
    ]
    label = run.label(f"{spec_agent.spec} on {len(positions)} positions")
    parts = run_tasks(
        score_positions_task, tasks, [len(t.codes) for t in tasks], workers, run.backend, run.ray_address, label
    )
    regrets = np.concatenate([p[0] for p in parts])
    seconds = np.concatenate([p[1] for p in parts])
    return PositionBenchmark(spec_agent.spec, _summary(regrets, seconds), 100.0 * regrets, split)


def _summary(regrets: np.ndarray, seconds: np.ndarray) -> RegretSummary:
    acc = np.zeros((1, EK.ACC_SIZE))
    hist = np.zeros((1, EK.REGRET_BINS), dtype=np.int64)
    for r in regrets:
        EK.record_regret(acc, hist, 0, r)
    acc[0, EK.ACC_SECONDS] = seconds.sum()
    return RegretSummary.from_accumulators(acc[0], hist[0])


SPLITS = ("test", "validation", "held-out")
"""The benchmark's sets: ``test`` (what ``evaluate`` reports), ``validation`` (for model selection) and ``held-out``
(the larger check of :func:`held_out_positions`)."""


class BenchmarkArrays(NamedTuple):
    """A position benchmark as arrays, to score an agent inside a training loop.

    For each of k positions the environment's observation from the mover's side (with the roll), the mask of its legal
    actions, and each legal action's winning chance under perfect play after it (NaN for illegal actions).
    """

    observations: np.ndarray  # float32[k, obs]
    masks: np.ndarray  # bool[k, L + 1]
    values: np.ndarray  # float64[k, L + 1]
    states: np.ndarray  # int64[k]: the packed positions
    rolls: np.ndarray  # int64[k]

    def regrets(self, actions: np.ndarray) -> np.ndarray:
        """Each position's regret of ``actions``, in win-% points (as ``evaluate`` and ``score_positions`` give it).

        An illegal action's is the whole best chance.
        """
        actions = np.asarray(actions, dtype=np.int64)
        best = np.nanmax(self.values, axis=1)
        chosen = np.nan_to_num(self.values[np.arange(len(actions)), actions], nan=0.0)
        return 100.0 * (best - chosen)


def benchmark_arrays(
    rules: Rules | str, split: str = "test", count: int | None = None, table: SolvedTable | None = None
) -> BenchmarkArrays:
    """The ``test`` or ``validation`` set of a rule set as arrays (:class:`BenchmarkArrays`).

    Args:
        rules: A rule set (its table is loaded, or solved and cached, unless ``table`` is given).
        split: ``"test"`` (1,000 positions, what ``evaluate`` reports), ``"validation"`` (500, disjoint from it) or
            ``"held-out"`` (20,000).
        count: How many positions (default: the split's own count).
        table: The solved table of ``rules``, if the caller has it.
    """
    if split not in SPLITS:
        raise ValueError(f"the position set must be one of {', '.join(SPLITS)}, got {split!r}")
    rules = get_rules(rules)
    if table is None:
        from urgym.solver import table_for

        table = table_for(rules, progress=False)
    positions = split_positions(table, split, count)
    k, actions = len(positions), rules.length + 1
    states = np.array([p.code for p, _ in positions], dtype=np.int64)
    rolls = np.array([r for _, r in positions], dtype=np.int64)
    values = np.full((k, actions), np.nan)
    for i, (position, roll) in enumerate(positions):
        for move, chance in table.move_values(position, roll).items():
            values[i, move] = chance
    observations = np.zeros((k, core.observation_size(rules)), dtype=np.float32)
    geom = geometry(rules)
    for i in range(k):
        core.write_observation(int(states[i]), int(core.turn_of(states[i])), int(rolls[i]), geom, observations[i])
    return BenchmarkArrays(observations, ~np.isnan(values), values, states, rolls)
