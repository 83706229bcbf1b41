"""The benchmark's tasks: named, versioned protocols, as an environment id is.

A task fixes everything a result depends on besides the learner: the rules and pieces, what the learner plays
(both sides of every game it learns from; self-play allowed), the budget in the learner's decisions (the moves it
plays while learning, whichever algorithm), the evaluation schedule, the number of seeds, and the metrics measured at
each point of the schedule. A change of any of them that could move a figure bumps the version; results name the
task by its id (``finkel-3-v1``) and are compared only within one id.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Any

from urgym.evaluation.training.learner import Schedule

from urgym import Rules, get_rules

__all__ = ["METRICS", "TASKS", "Task", "get_task", "task_names"]

METRICS = {
    "win_rate": "the exact winning chance against perfect play, the mean of both sides (percent)",
    "exploitability": "the winning chance of the policy's best response minus the start's perfect-play value "
    "(win-% points; 0 for perfect play)",
    "test_regret": "the mean regret on the position benchmark's test set (win-% points per decision, test set v1)",
}
"""Every metric a task can measure, with its meaning."""


DEFINING = ("name", "version", "rules", "pieces", "budget", "eval_every", "seeds", "exact_during")
"""The fields of a task that define its protocol, in its digest."""

_DIGESTS: dict[str, str] = {}
"""The registered tasks' digests, by id (filled once :data:`TASKS` is made)."""


@dataclass(frozen=True)
class Task:
    """One benchmark task (see the module docstring)."""

    name: str
    version: int
    rules: str
    pieces: int
    budget: int
    """The learner's decisions (moves it plays while learning) a run may spend."""
    eval_every: int
    """Decisions between evaluation points (the last point is at the budget)."""
    seeds: int
    """Seeds a full result has (0 to seeds - 1)."""
    exact_during: bool
    """The exact metrics at every point (else the test-set regret alone, and the exact ones at the end)."""
    description: str
    learner: str = "both sides (self-play allowed; any opponent the algorithm chooses)"

    @property
    def id(self) -> str:
        """The task's id, name and version: ``finkel-3-v1``.

        A task that takes a registered task's name and version with other fields (``dataclasses.replace`` of it, a
        shorter budget to try things) is not that task: its id adds the first 8 digits of its digest
        (``finkel-3-v1+1a2b3c4d``), so its results are never listed, merged or verified as the task's.
        """
        base = f"{self.name}-v{self.version}"
        registered = _DIGESTS.get(base)
        return base if registered in (None, self.digest) else f"{base}+{self.digest[:8]}"

    @property
    def digest(self) -> str:
        """SHA-256 of the fields that define the protocol (not the words that describe it)."""
        fields = {key: getattr(self, key) for key in DEFINING}
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()

    def get_rules(self) -> Rules:
        """The task's rules."""
        return get_rules(self.rules, self.pieces)

    @property
    def schedule(self) -> Schedule:
        """The evaluation schedule: every ``eval_every`` decisions, and the budget."""
        return Schedule(self.budget, self.eval_every)

    def points(self) -> list[int]:
        """The decisions at which a run is evaluated: every ``eval_every``, and the budget."""
        return list(self.schedule.points())

    def share(self, done: int) -> float:
        """How much of the budget is spent after ``done`` decisions (what a learner's schedules follow)."""
        return done / self.budget

    def metrics_at(self, final: bool) -> tuple[str, ...]:
        """The metrics measured at a point (``final``: the end of the run)."""
        return tuple(METRICS) if final or self.exact_during else ("test_regret",)

    def to_dict(self) -> dict[str, Any]:
        """As plain JSON, with its id and digest."""
        return {"id": self.id, **asdict(self), "digest": self.digest}

    @classmethod
    def from_dict(cls, fields: dict[str, Any]) -> Task:
        """The task a result or run records (its ``id`` and ``digest`` are checked against its fields).

        Raises:
            ValueError: For fields that make no task, or an id or digest its fields do not give.
        """
        names = {f.name for f in dataclasses.fields(cls)}
        try:
            task = cls(**{key: value for key, value in fields.items() if key in names})
        except TypeError as err:
            raise ValueError(f"the recorded task is not a task ({err})") from None
        for key, value in (("id", task.id), ("digest", task.digest)):
            if key in fields and fields[key] != value and not (key == "id" and fields[key] == task.id.split("+")[0]):
                raise ValueError(f"the recorded task's {key} {fields[key]!r:.40} is not its fields' ({value!r:.40})")
        return task


TASKS: dict[str, Task] = {
    task.id: task
    for task in (
        Task(
            "finkel-3",
            1,
            "finkel",
            3,
            budget=2_000_000,
            eval_every=200_000,
            seeds=5,
            exact_during=True,
            description="small: finkel with 3 pieces; every metric exact at every point, in about a second",
        ),
        Task(
            "finkel-4",
            1,
            "finkel",
            4,
            budget=5_000_000,
            eval_every=1_000_000,
            seeds=5,
            exact_during=True,
            description="middle: finkel with 4 pieces; every metric exact at every point, in about ten seconds",
        ),
        Task(
            "finkel-7",
            1,
            "finkel",
            7,
            budget=10_000_000,
            eval_every=1_000_000,
            seeds=5,
            exact_during=False,
            description="full finkel: the test-set regret at every point, the exact metrics at the end "
            "(about 10 minutes on one core)",
        ),
    )
}
"""Every task by id."""

_DIGESTS.update({task_id: task.digest for task_id, task in TASKS.items()})


def task_names() -> list[str]:
    """The ids of every task."""
    return list(TASKS)


def get_task(name: str) -> Task:
    """The task of id ``name`` (``finkel-3-v1``); a name without its version means the newest.

    Raises:
        ValueError: For an unknown task, listing the known ones.
    """
    if name in TASKS:
        return TASKS[name]
    versions = [task for task in TASKS.values() if task.name == name]
    if versions:
        return max(versions, key=lambda task: task.version)
    raise ValueError(f"unknown task {name!r}; tasks: {', '.join(TASKS)}")
