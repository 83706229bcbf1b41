"""A task's metrics of a policy at one point, and their mean and 95% interval across seeds.

The metrics (:data:`urgym.evaluation.bench.tasks.METRICS`) are, for a policy pi on the task's rules:

- the exact winning chance against perfect play, ``win_rate = 100 (V_light(pi, perfect) + V_dark(pi, perfect)) / 2``,
  where V_side is pi's winning chance from the start playing that side: a policy evaluation over every position of
  the rules (:func:`urgym.evaluation.scoring.exact.exact_results`), no dice sampled;
- the exploitability, ``100 (V(br(pi), pi) - V*) `` with br(pi) the best response to pi and V* = 1/2 the value of the
  start under perfect play with the sides averaged: how much a perfect adversary that knows pi takes beyond the game's
  value (0 for a perfect policy, never below);
- the test-set regret, ``100 mean_i (max_m Q*(s_i, m) - Q*(s_i, pi(s_i)))`` over the 1,000 decisions of the position
  benchmark's test set (v1), Q* read from the solved table.

A deterministic policy is scored as it plays; a stochastic one as the distribution it plays where it gives it
(:meth:`urgym.agents.Agent.move_probabilities`), else as one draw of its moves per decision; each point says which.
Across seeds, a metric's mean comes with the 95% interval of Student's t (n - 1 degrees of freedom).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

from urgym.agents import Agent
from urgym.evaluation.bench.tasks import Task
from urgym.evaluation.scoring.exact import exact_results
from urgym.evaluation.scoring.positions import TEST_SET_VERSION, benchmark_positions, score_positions
from urgym.evaluation.scoring.runner import RunOptions
from urgym.solver import SolvedTable, table_for

__all__ = ["T95", "TaskEvaluator", "across_seeds", "policy_kind", "table_facts"]

T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131)
"""Student's t, two-sided 95%, for 1 to 15 degrees of freedom (beyond them the normal 1.960 is within 4%)."""


def policy_kind(agent: Agent, exact_policies: bool = True) -> str:
    """How a policy is scored: ``deterministic``, ``distribution`` (a stochastic policy's own) or ``one draw``."""
    if not agent.randomizes:
        return "deterministic"
    return "distribution" if exact_policies else "one draw"


class TaskEvaluator:
    """Measures a task's metrics of agents, the solved table and the test set loaded once.

    Args:
        task: The task.
        table: Its solved table, if the caller has it (else loaded, or solved and cached).
        progress: Show progress bars (the table's solve, the exact evaluations).
    """

    def __init__(self, task: Task, table: SolvedTable | None = None, progress: bool = False) -> None:
        self.task, self.rules = task, task.get_rules()
        self.table = (
            table if table is not None else table_for(self.rules, solve=True, progress=progress, reproducible=True)
        )
        self.test = benchmark_positions(self.table)
        self.progress = progress

    @property
    def table_hash(self) -> str:
        """The solved table's checksum, which a result records."""
        return str(self.table.header["checksum"])

    def __call__(self, agent: Agent, final: bool = True) -> dict[str, Any]:
        """The metrics of the task at a point (``final``: every metric; else those the schedule measures).

        Returns the metrics by name, ``policy`` (:func:`policy_kind`) and ``eval_seconds``.
        """
        began = time.perf_counter()
        wanted = self.task.metrics_at(final)
        regret = score_positions(agent, self.table, self.test, RunOptions(workers=1, progress=False)).regret.mean
        figures: dict[str, Any] = {"test_regret": float(regret), "policy": policy_kind(agent)}
        if "win_rate" in wanted:
            report = exact_results(
                agent, "perfect", self.rules, progress=self.progress, best_response=True, cache=False
            )
            figures["win_rate"] = report.match.win_rate
            figures["exploitability"] = report.exploitability["exploitability_points"]
            figures["policy"] = policy_kind(agent, report.match.exact_policies)
        figures["eval_seconds"] = round(time.perf_counter() - began, 3)
        return figures

    def facts(self) -> dict[str, Any]:
        """What a result records of the measuring: the table's hash and the test set's version."""
        return table_facts(self.table)


def table_facts(table: SolvedTable) -> dict[str, Any]:
    """What a result records of the measuring: the solved table's hash and the test set's version."""
    return {"table_hash": str(table.header["checksum"]), "test_set_version": TEST_SET_VERSION}


def local_table_facts(task: Task) -> dict[str, Any]:
    """:func:`table_facts` of this machine's table of ``task`` (solved if missing), as its seeds are measured here."""
    return table_facts(table_for(task.get_rules(), solve=True, progress=False, reproducible=True))


def across_seeds(values: Sequence[float]) -> dict[str, float | int | None]:
    """The mean of one metric over seeds with its 95% interval (Student's t); one seed has no interval."""
    n = len(values)
    if n == 0:
        raise ValueError("no seed to summarize")
    mean = math.fsum(values) / n
    if n == 1:
        return {"mean": mean, "low95": None, "high95": None, "n": 1}
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    t = T95[n - 2] if n - 2 < len(T95) else 1.960
    half = t * sd / math.sqrt(n)
    return {"mean": mean, "low95": mean - half, "high95": mean + half, "n": n}
