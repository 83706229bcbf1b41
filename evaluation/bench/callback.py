"""A task's metrics during any stable-baselines3 training: :func:`exact_metrics_callback`.

A thin shell over :class:`urgym.evaluation.bench.metrics.TaskEvaluator`, the one exact evaluation that
``evaluate --exact`` and ``urgym bench`` use: at the first rollout's start after every ``every`` steps (default: the
task's schedule; a point measures the model after its updates so far) the model plays as
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
    from stable_baselines3.common.callbacks import BaseCallback

    task = get_task(task) if isinstance(task, str) else task
    every = task.eval_every if every is None else every
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise ValueError(f"every must be a whole number of steps of at least 1, got {every!r}")
    evaluator = TaskEvaluator(task, table)

    class ExactMetricsCallback(BaseCallback):
        """Logs the task's metrics on its schedule (see :func:`exact_metrics_callback`)."""

        def _on_training_start(self) -> None:
            self.next_eval = self.num_timesteps + every
            self.started = time.perf_counter()
            self.points: list[dict[str, Any]] = []

        def _on_step(self) -> bool:
            return True

        def _on_rollout_start(self) -> None:
            # Here, not at a step: the model has taken the update of the rollout before (on- and off-policy alike).
            if self.num_timesteps >= self.next_eval:
                while self.next_eval <= self.num_timesteps:
                    self.next_eval += every
                self.measure(final=False)

        def _on_training_end(self) -> None:
            if final:
                self.measure(final=True)
                self.logger.dump(self.num_timesteps)

        def measure(self, final: bool) -> dict[str, Any]:
            """Measure the model now, log the figures and return them."""
            figures = evaluator(played_as_saved(self.model, task.get_rules()), final=final)
            for key, value in figures.items():
                if isinstance(value, (int, float)):
                    self.logger.record(f"bench/{key}", value)
            point = {"decisions": self.num_timesteps, "seconds": round(time.perf_counter() - self.started, 1)}
            self.points.append({**point, **figures})
            if csv is not None:
                fields = list(dict.fromkeys(key for row in self.points for key in row))
                write_csv(Path(csv), [{key: row.get(key, "") for key in fields} for row in self.points], fields)
            return figures

    return ExactMetricsCallback()
