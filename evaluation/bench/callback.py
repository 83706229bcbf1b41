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
from urgym.evaluation.bench.tasks import TASKS, Task, get_task
from urgym.evaluation.scoring.report import write_csv
from urgym.evaluation.training.ppo import scheduled_callback
from urgym.solver import SolvedTable

from urgym.core import observation_size
from urgym.files import check_output

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
    if isinstance(task, str):
        task = get_task(task)
    if not isinstance(task, Task):
        raise ValueError(f"task must be a benchmark task or its id ({', '.join(TASKS)}), got {task!r:.60}")
    rules = task.get_rules()
    if table is not None and table.rules != rules:
        raise ValueError(f"the table given solves {table.rules.describe()}, not {task.id}'s {rules.describe()}")
    if csv is not None:
        check_output(csv)  # now, not at the first point: a folder or an unwritable path is refused at once
    evaluator = TaskEvaluator(task, table)
    points: list[dict[str, Any]] = []

    def check_model(callback: Any) -> None:
        """Refuse, as training starts, a model learning other rules than the task's."""
        learned = _rules_of(callback.training_env)
        if learned is not None and learned != rules:
            raise ValueError(
                f"the model learns {learned.describe()}, not {task.id}'s {rules.describe()}: its figures would not be "
                "the task's"
            )
        size = getattr(callback.model.observation_space, "shape", (None,))[0]
        if size is not None and size != observation_size(rules):
            raise ValueError(
                f"the model takes observations of {size} numbers; {task.id}'s rules give {observation_size(rules)}"
            )

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

    callback = scheduled_callback(task.eval_every if every is None else every, measure, final, check_model)
    callback.points = points
    return callback


def _rules_of(env: Any) -> Any:
    """The rules an SB3 vector environment of urgym's plays, or None for another environment."""
    try:
        return env.get_attr("rules")[0]
    except (AttributeError, IndexError, TypeError):
        return None
