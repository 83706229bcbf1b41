"""``urgym bench --compare``: the statistics a paper reports, for results of several learners on one or more tasks.

Per task, each learner's winning chance against perfect play (percent) by its interquartile mean, mean and median
over the seeds, each with its stratified-bootstrap 95% interval; across the tasks every learner has results on, the
same of the normalized score (the winning chance over 50: :data:`urgym.evaluation.bench.stats.NORMALIZED`); the
probability that each learner improves on each other one, with its interval; and performance profiles (the share of
seeds above each normalized score). :mod:`urgym.evaluation.bench.stats` holds the equations.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from urgym.evaluation.bench import stats

from urgym.checks import plural, printable
from urgym.files import write_atomic

__all__ = ["Comparison", "compare"]


def _label(result: dict[str, Any]) -> str:
    """A result's learner as the tables name it (``†``: settings changed from the defaults)."""
    return printable(str(result.get("algo") or result.get("agent"))) + ("†" if result.get("overrides") else "")


class Comparison:
    """The statistics of results of several learners (one result per learner and task).

    Args:
        results: Validated results (``load_result``).
        metric: The metric compared (``win_rate`` by default).
        reps: Bootstrap draws of each interval.

    Raises:
        ValueError: For two results of one learner on one task (merge them first), or no result.
    """

    def __init__(self, results: Sequence[dict[str, Any]], metric: str = "win_rate", reps: int = stats.REPS) -> None:
        if not results:
            raise ValueError("give the results to compare")
        self.metric, self.reps = metric, reps
        self.by_task: dict[str, dict[str, dict[str, Any]]] = {}
        for result in results:
            task, label = result["task"]["id"], _label(result)
            held = self.by_task.setdefault(task, {})
            if label in held:
                raise ValueError(
                    f"two results of {label} on {task}: join their seeds into one result first (urgym bench --merge)"
                )
            held[label] = result
        self.tasks = sorted(self.by_task)
        self.learners = sorted({label for held in self.by_task.values() for label in held})
        self.common = [label for label in self.learners if all(label in self.by_task[t] for t in self.tasks)]
        """The learners with a result on every task: those compared across tasks."""

    def scores(self, label: str, tasks: Sequence[str], normalized: bool) -> list[np.ndarray]:
        """A learner's seed scores on ``tasks``, one array per task."""
        scale = stats.NORMALIZED.get(self.metric, 1.0) if normalized else 1.0
        return [
            np.array([record["final"][self.metric] for record in self.by_task[t][label]["per_seed"]]) / scale
            for t in tasks
        ]

    def aggregates(self, label: str, tasks: Sequence[str], normalized: bool) -> dict[str, stats.Estimate]:
        """IQM, mean and median of a learner's scores on ``tasks``, each with its interval."""
        scores = self.scores(label, tasks, normalized)
        return {how: stats.interval(how, scores, self.reps) for how in stats.AGGREGATES}

    def figures(self) -> dict[str, Any]:
        """Every figure of the comparison, as plain JSON."""
        per_task = {
            task: {label: self._row(label, [task], False) for label in sorted(held)}
            for task, held in self.by_task.items()
        }
        across = {label: self._row(label, self.tasks, True) for label in self.common} if len(self.tasks) > 1 else {}
        ranked = sorted(self.common, key=lambda label: -across[label]["iqm"][0]) if across else self.common
        improvement = {  # each pair once, the better-ranked first: P(Y > X) is 1 - P(X > Y)
            f"{a} > {b}": list(self.improvement(a, b)) for i, a in enumerate(ranked) for b in ranked[i + 1 :]
        }
        return {
            "metric": self.metric,
            "normalized_by": stats.NORMALIZED.get(self.metric, 1.0),
            "bootstrap_draws": self.reps,
            "tasks": self.tasks,
            "per_task": per_task,
            "across_tasks": across,
            "probability_of_improvement": improvement,
        }

    def _row(self, label: str, tasks: Sequence[str], normalized: bool) -> dict[str, Any]:
        seeds = sum(len(self.by_task[t][label]["per_seed"]) for t in tasks)
        return {"seeds": seeds, **{how: list(e) for how, e in self.aggregates(label, tasks, normalized).items()}}

    def improvement(self, a: str, b: str) -> stats.Estimate:
        """P(a > b) over the tasks both have, with its interval."""
        return stats.probability_of_improvement(
            self.scores(a, self.tasks, True), self.scores(b, self.tasks, True), self.reps
        )

    def table(self, figures: dict[str, Any] | None = None) -> str:
        """The comparison as text: per task, across tasks, and the probabilities of improvement."""
        figures = figures or self.figures()
        unit = "win rate vs perfect play (%)" if self.metric == "win_rate" else self.metric
        lines = []
        for task in self.tasks:
            lines += [f"{task}: {unit}, IQM / mean / median over seeds, 95% stratified-bootstrap intervals", _header()]
            rows = figures["per_task"][task]
            for label in sorted(rows, key=lambda name: -rows[name]["iqm"][0]):
                lines.append(_line(label, rows[label], 2))
        if figures["across_tasks"]:
            lines += [
                f"across {', '.join(self.tasks)}: {unit} / {figures['normalized_by']:g} (perfect play 1), "
                f"learners with a result on every task",
                _header(),
            ]
            rows = figures["across_tasks"]
            for label in sorted(rows, key=lambda name: -rows[name]["iqm"][0]):
                lines.append(_line(label, rows[label], 3))
        if figures["probability_of_improvement"]:
            lines.append(
                f"probability of improvement P(X > Y) over {plural(len(self.tasks), 'task')}, 95% interval "
                "(P(Y > X) = 1 - P(X > Y)):"
            )
            for pair, (value, low, high) in figures["probability_of_improvement"].items():
                lines.append(f"  {pair:<44.44} {value:.2f} [{low:.2f}, {high:.2f}]")
        return "\n".join(lines)

    def plot(self, folder: Path) -> list[Path]:
        """Write ``profiles.png`` (performance profiles) and ``aggregates.png`` (IQM, mean, median) into ``folder``."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        tasks = self.tasks
        learners = self.common or self.learners
        if not self.common:
            tasks = tasks[:1]  # no learner on every task: the first task's
        taus = np.linspace(0.0, 1.0, 101)
        fig, ax = plt.subplots(figsize=(6, 4), layout="constrained")
        for label in learners:
            profile, low, high = stats.performance_profile(self.scores(label, tasks, True), taus, seed=stats.SEED)
            line = ax.plot(taus, profile, label=label)
            ax.fill_between(taus, low, high, alpha=0.2, color=line[0].get_color())
        ax.set_xlabel(f"normalized score tau ({self.metric} / {stats.NORMALIZED.get(self.metric, 1.0):g})")
        ax.set_ylabel("share of seeds with score > tau")
        ax.set_title(f"performance profiles over {', '.join(tasks)}")
        ax.legend(fontsize="small")
        profiles = write_atomic(folder / "profiles.png", lambda tmp: fig.savefig(tmp, format="png"))
        plt.close(fig)
        fig, axes = plt.subplots(1, 3, figsize=(12, 0.5 + 0.45 * len(learners)), layout="constrained", sharey=True)
        for ax, how in zip(axes, stats.AGGREGATES, strict=True):
            for k, label in enumerate(learners):
                value, low, high = self.aggregates(label, tasks, True)[how]
                ax.errorbar([value], [k], xerr=[[value - low], [high - value]], fmt="o", capsize=4)
            ax.set_yticks(range(len(learners)), learners)
            ax.set_title(how.upper() if how == "iqm" else how)
            ax.set_xlabel("normalized score")
        aggregates = write_atomic(folder / "aggregates.png", lambda tmp: fig.savefig(tmp, format="png"))
        plt.close(fig)
        return [profiles, aggregates]


def _header() -> str:
    return f"  {'learner':<24} {'seeds':>5}  {'IQM':>24}  {'mean':>24}  {'median':>24}"


def _line(label: str, row: dict[str, Any], digits: int) -> str:
    cells = [stats.Estimate(*row[how]).text(digits) for how in stats.AGGREGATES]
    return f"  {label:<24.24} {row['seeds']:>5}  " + "  ".join(f"{cell:>24}" for cell in cells)


def compare(
    results: Sequence[dict[str, Any]], out: Path | None = None, reps: int = stats.REPS
) -> tuple[str, dict[str, Any]]:
    """The comparison's table and figures; with ``out``, also its plots and ``statistics.json`` there."""
    comparison = Comparison(results, reps=reps)
    figures = comparison.figures()
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        comparison.plot(out)
        write_atomic(out / "statistics.json", lambda tmp: tmp.write_text(json.dumps(figures, indent=1)))
    return comparison.table(figures), figures
