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
from typing import Any

import numpy as np

from agents import Agent, make_agent
from evaluation import _kernels as EK
from evaluation.runner import default_workers, run_tasks, table_key, worker_agent, worker_table
from evaluation.stats import RegretSummary
from solver import SolvedTable
from solver.lookup import best_of
from urgym import Position, Rules, core
from urgym.core import geometry, roll_cumulative

__all__ = ["DEFAULT_POSITIONS", "KEEP", "TEST_SEED", "VALIDATION_SEED", "PositionBenchmark", "benchmark_positions",
           "score_positions", "validation_positions"]

TEST_SEED = 20230007
"""Seed of the reported benchmark (the test set)."""
VALIDATION_SEED = 20230001
"""Seed of training's model selection (the validation set; urgym 0.2 reported this set, see the README)."""
DEFAULT_POSITIONS = 1000
"""Positions of the default test set; the validation set is disjoint from them."""
KEEP = 0.05


def benchmark_positions(table: SolvedTable, count: int = DEFAULT_POSITIONS,
                        seed: int = TEST_SEED) -> list[tuple[Position, int]]:
    """The benchmark's (position, roll) decisions for the table's rule set (the same on every call).

    Raises:
        ValueError: If perfect play does not offer ``count`` decisions with a choice (a rule set with very few).
    """
    if count < 1:
        raise ValueError(f"the position benchmark needs at least 1 position, got {count}")
    states = np.zeros(count, dtype=np.int64)
    rolls = np.zeros(count, dtype=np.int64)
    max_games = 1000 + 100 * count
    found, games = EK.sample_decisions(np.uint64(seed), count, KEEP, geometry(table.rules),
                                       roll_cumulative(table.rules), *table.lookup_args[1:], states, rolls, max_games)
    if found < count:
        raise ValueError(f"perfect play of {table.rules.describe()} offered only {found} decisions with a choice of "
                         f"moves in {games:,} games; ask for fewer positions or play more pieces")
    return [(Position(table.rules, int(s)), int(r)) for s, r in zip(states, rolls, strict=True)]


def validation_positions(table: SolvedTable, count: int = 500) -> list[tuple[Position, int]]:
    """Decisions for model selection in training: drawn with :data:`VALIDATION_SEED`, none of them in the
    default test set (so a model is never chosen on a position it is then tested on).

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


@dataclass
class PositionsTask:
    spec: str | Agent
    rules: Rules
    table_key: str
    codes: list[int]
    rolls: list[int]
    first: int


def score_positions_task(task: PositionsTask) -> tuple[np.ndarray, np.ndarray]:
    """Regret and seconds of each position of a task (runs in a worker)."""
    table = worker_table(task.table_key, task.rules)
    agent = worker_agent(task.spec, 0, task.rules, table)
    moves = np.zeros(core.MAX_MOVES, dtype=np.int64)
    probabilities = np.zeros(core.MAX_MOVES, dtype=np.float64)
    regrets = np.zeros(len(task.codes))
    seconds = np.zeros(len(task.codes))
    geom = geometry(task.rules)
    for i, (code, roll) in enumerate(zip(task.codes, task.rolls, strict=True)):
        position = Position(task.rules, code)
        agent.reseed(task.first + i)  # each position's own seed: results do not depend on batching
        start = time.perf_counter()
        move = agent.select_move(position, roll)
        seconds[i] = time.perf_counter() - start
        n = core.legal_moves(code, roll, geom, moves)
        if move not in moves[:n]:
            raise ValueError(f"agent {agent.spec!r} chose illegal move {move!r} for roll {roll} in {position!r}")
        best = best_of(code, roll, moves, n, probabilities, *table.lookup_args)
        regrets[i] = max(0.0, probabilities[best] - probabilities[int(np.flatnonzero(moves[:n] == move)[0])])
    return regrets, seconds


@dataclass(frozen=True)
class PositionBenchmark:
    """An agent's regret over the benchmark positions."""

    spec: str
    regret: RegretSummary
    regrets: np.ndarray = field(repr=False)
    """Per position, the regret as a probability (0.01 is one win-% point)."""

    def to_dict(self) -> dict[str, Any]:
        return {"agent": self.spec, "positions": int(self.regrets.shape[0]), "regret": self.regret.to_dict()}


def score_positions(agent: str | Agent, table: SolvedTable, positions: list[tuple[Position, int]],
                    workers: int | None = None, backend: str = "process", ray_address: str | None = None,
                    progress: bool = True) -> PositionBenchmark:
    """Score an agent on benchmark positions: for each, the regret of the move it picks."""
    spec_agent = make_agent(agent)
    spec_agent.check_rules(table.rules)
    workers = workers or default_workers()
    key = table_key(table, in_process=workers <= 1 and backend == "process")
    per_task = max(1, -(-len(positions) // (workers * 8)))
    tasks = [PositionsTask(agent, table.rules, key, [p.code for p, _ in positions[i:i + per_task]],
                           [r for _, r in positions[i:i + per_task]], i)
             for i in range(0, len(positions), per_task)]
    label = f"{spec_agent.spec} on {len(positions)} positions" if progress else None
    parts = run_tasks(score_positions_task, tasks, [len(t.codes) for t in tasks], workers, backend, ray_address,
                      label)
    regrets = np.concatenate([p[0] for p in parts])
    seconds = np.concatenate([p[1] for p in parts])
    return PositionBenchmark(spec_agent.spec, _summary(regrets, seconds), regrets)


def _summary(regrets: np.ndarray, seconds: np.ndarray) -> RegretSummary:
    acc = np.zeros((1, EK.ACC_SIZE))
    hist = np.zeros((1, EK.REGRET_BINS), dtype=np.int64)
    for r in regrets:
        EK.record_regret(acc, hist, 0, r)
    acc[0, EK.ACC_SECONDS] = seconds.sum()
    return RegretSummary.from_accumulators(acc[0], hist[0])
