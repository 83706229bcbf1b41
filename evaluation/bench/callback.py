"""A task's metrics during any stable-baselines3 training: :func:`exact_metrics_callback`.

A thin shell over :class:`urgym.evaluation.bench.metrics.TaskEvaluator`, the one exact evaluation that
``evaluate --exact`` and ``urgym bench`` use: at the first rollout's start after each point of the task's schedule (or
one every ``every`` steps; :func:`urgym.evaluation.training.ppo.scheduled_callback`, a point measures the model after
its updates so far) the model plays as
:func:`urgym.agents.outside.policies.played_as_saved` plays it (its best legal action, masked, exactly as
``sb3:PATH`` plays the saved model) and the task's metrics go to SB3's
logger as ``bench/NAME`` (TensorBoard and CSV, as configured), with ``csv`` to a file of its own. At the end of
training every metric of the task is measured once more. Torch's thread count is left as the learner set it
(:mod:`urgym.threads`).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from urgym.agents.outside.policies import played_as_saved
from urgym.evaluation.bench.metrics import TaskEvaluator
from urgym.evaluation.bench.tasks import Task, get_task
from urgym.evaluation.scoring.report import write_csv
from urgym.evaluation.training.ppo import scheduled_callback
from urgym.solver import SolvedTable

__all__ = ["exact_metrics_callback"]


def exact_metrics_callback(
    task: Task | str,
    every: int | None = None,
    csv: str | os.PathLike | None = None,
    table: SolvedTable | None = None,
    final: bool = True,
) -> Any:
    """A stable-baselines3 callback logging ``task``'s metrics every ``every`` steps (default: the task's schedule).

    Args:
        task: A task or its id (``finkel-3``).
        every: Environment steps between evaluation points.
        csv: Also write the points to this CSV file (steps, seconds, metrics).
        table: The task's solved table, if the caller has it.
        final: Measure every metric of the task at the end of training.

    Returns:
        The callback; its ``points`` list every point measured.
    """
    task = get_task(task) if isinstance(task, str) else task
    evaluator = TaskEvaluator(task, table)
    points: list[dict[str, Any]] = []

    def measure(callback: Any, final: bool) -> None:
        figures = evaluator(played_as_saved(callback.model, task.get_rules()), final=final)
        for key, value in figures.items():
            if isinstance(value, (int, float)):
                callback.logger.record(f"bench/{key}", value)
        point = {"decisions": callback.num_timesteps, "seconds": round(time.perf_counter() - callback.started, 1)}
        points.append({**point, **figures})
        if csv is not None:
            fields = list(dict.fromkeys(key for row in points for key in row))
            write_csv(Path(csv), [{key: row.get(key, "") for key in fields} for row in points], fields)
        if final:
            callback.logger.dump(callback.num_timesteps)

    callback = scheduled_callback(task.eval_every if every is None else every, measure, final)
    callback.points = points
    return callback
