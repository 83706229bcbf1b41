"""Statistics a paper can cite: IQM, mean and median with bootstrap intervals, improvement, performance profiles.

The interquartile mean, the mean and the median with stratified-bootstrap 95% intervals, the probability of
improvement of one algorithm over another, and performance profiles, as Agarwal et al. define them ("Deep RL at the
edge of the statistical precipice", NeurIPS 2021) and the ``rliable`` library computes them.

Scores are a list of arrays, one per task, each holding a score per seed (run); the tasks may have different
numbers of seeds. For the scores across tasks a metric is normalized so that tasks compare (:data:`NORMALIZED`:
the winning chance against perfect play divided by 50, so that perfect play scores 1 and a policy that never wins
scores 0). With scores ``x[m]`` of task m:

- **IQM**: the mean of the middle half of every seed's score, all tasks together (25% trimmed from each end, as
  ``scipy.stats.trim_mean`` does);
- **mean** and **median**: of the tasks' mean scores (of one task: of its seeds' scores);
- **stratified bootstrap**: the seeds of each task are drawn again with replacement, task by task, ``reps`` times; a
  statistic's 95% interval is the 2.5th to the 97.5th percentile of its values over the draws (the percentile method);
- **probability of improvement** of X over Y: ``P(X > Y) = mean_m (1 / (N M)) sum_i sum_j S(x_mi, y_mj)`` with S 1
  where ``x > y``, 1/2 where equal and 0 where less (the Mann-Whitney U statistic over its largest value), its
  interval from drawing X's and Y's seeds independently;
- **performance profile**: the share of every seed's score above each threshold tau, with its interval.

The figures equal ``rliable``'s to the digit where the tasks have equal numbers of seeds (its intervals, drawn from
another random stream, within their own sampling error); the draws here come from a seeded stream, so a table
reruns to the digit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "AGGREGATES",
    "NORMALIZED",
    "REPS",
    "Estimate",
    "aggregate",
    "interval",
    "normalized_scores",
    "performance_profile",
    "probability_of_improvement",
    "trimmed_mean",
]

REPS = 50_000
"""Bootstrap draws of an interval (rliable's default for aggregates)."""
SEED = 0
"""The bootstrap's random stream: a table reruns to the digit."""
AGGREGATES = ("iqm", "mean", "median")
"""The aggregates of a table, in its order."""
NORMALIZED = {"win_rate": 50.0}
"""A metric's score across tasks: the metric divided by this (the winning chance against perfect play, over 50)."""

Scores = Sequence[np.ndarray]
"""One array of seed scores per task."""


class Estimate(NamedTuple):
    """A point estimate with its 95% interval."""

    value: float
    low: float
    high: float

    def text(self, digits: int = 3) -> str:
        """``0.851 [0.812, 0.889]``."""
        return f"{self.value:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


def trimmed_mean(values: np.ndarray, cut: float = 0.25, axis: int = -1) -> np.ndarray:
    """The mean of ``values`` along ``axis`` with ``int(cut * n)`` of the smallest and of the largest left out."""
    values = np.sort(np.asarray(values, dtype=np.float64), axis=axis)
    n = values.shape[axis]
    k = int(cut * n)
    return np.take(values, np.arange(k, n - k), axis=axis).mean(axis=axis)


def _tasks(scores: Scores) -> list[np.ndarray]:
    tasks = [np.asarray(s, dtype=np.float64).reshape(-1) for s in scores]
    if not tasks or any(t.size == 0 for t in tasks):
        raise ValueError("every task needs at least one seed's score")
    if not all(np.isfinite(t).all() for t in tasks):
        raise ValueError("scores must be finite numbers")
    return tasks


def _aggregate_draws(how: str, tasks: list[np.ndarray]) -> np.ndarray:
    """The aggregate ``how`` of draws: each task's array is ``[draws, seeds]``; one value per draw."""
    if how == "iqm":
        return trimmed_mean(np.concatenate(tasks, axis=1), axis=1)
    means = np.stack([t.mean(axis=1) for t in tasks], axis=1)
    if how == "mean":
        return means.mean(axis=1)
    if how == "median":
        if len(tasks) == 1:  # of one task: the median of its seeds
            return np.median(tasks[0], axis=1)
        return np.median(means, axis=1)
    raise ValueError(f"unknown aggregate {how!r}; aggregates: {', '.join(AGGREGATES)}")


def aggregate(how: str, scores: Scores) -> float:
    """The aggregate ``how`` (``iqm``, ``mean`` or ``median``) of the scores of every task."""
    return float(_aggregate_draws(how, [t[None, :] for t in _tasks(scores)])[0])


def _draws(tasks: list[np.ndarray], reps: int, rng: np.random.Generator) -> list[np.ndarray]:
    """``reps`` stratified draws: each task's seeds drawn again with replacement, task by task."""
    return [t[rng.integers(0, t.size, size=(reps, t.size))] for t in tasks]


def _percentiles(values: np.ndarray) -> tuple[float, float]:
    low, high = np.percentile(values, [2.5, 97.5], axis=0)
    return low, high


def interval(how: str, scores: Scores, reps: int = REPS, seed: int = SEED) -> Estimate:
    """The aggregate ``how`` with its stratified-bootstrap 95% interval."""
    tasks, reps = _tasks(scores), _check_reps(reps)
    rng = np.random.default_rng(seed)
    values = np.concatenate([_aggregate_draws(how, _draws(tasks, chunk, rng)) for chunk in _chunks(reps, tasks)])
    return Estimate(aggregate(how, tasks), *map(float, _percentiles(values)))


def _chunks(reps: int, tasks: list[np.ndarray]) -> list[int]:
    """``reps`` in chunks small enough to hold (about 4 million scores a chunk)."""
    per = max(1, 4_000_000 // max(1, sum(t.size for t in tasks)))
    return [min(per, reps - start) for start in range(0, reps, per)]


def _improvement(x: list[np.ndarray], y: list[np.ndarray]) -> np.ndarray:
    """P(X > Y) of draws: each task's arrays ``[draws, seeds]``; one value per draw."""
    per_task = []
    for xm, ym in zip(x, y, strict=True):
        diff = xm[:, :, None] - ym[:, None, :]
        per_task.append(((diff > 0) + 0.5 * (diff == 0)).mean(axis=(1, 2)))
    return np.mean(per_task, axis=0)


def probability_of_improvement(x: Scores, y: Scores, reps: int = REPS, seed: int = SEED) -> Estimate:
    """P(X > Y) averaged over the tasks, with its 95% interval (X's and Y's seeds drawn independently)."""
    xs, ys, reps = _tasks(x), _tasks(y), _check_reps(reps)
    if len(xs) != len(ys):
        raise ValueError(f"X and Y must be scored on the same tasks, got {len(xs)} and {len(ys)}")
    value = float(_improvement([t[None, :] for t in xs], [t[None, :] for t in ys])[0])
    rng = np.random.default_rng(seed)
    values = np.concatenate(
        [_improvement(_draws(xs, chunk, rng), _draws(ys, chunk, rng)) for chunk in _chunks(reps, [*xs, *ys])]
    )
    return Estimate(value, *map(float, _percentiles(values)))


def performance_profile(
    scores: Scores, taus: Sequence[float], reps: int = 2_000, seed: int = SEED
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The share of every seed's score above each tau (all tasks' seeds together), with 95% intervals.

    Returns the profile and its lower and upper bounds, an array over ``taus`` each (rliable's 2,000 draws).
    """
    tasks, reps = _tasks(scores), _check_reps(reps)
    taus = np.asarray(taus, dtype=np.float64)

    def share(draws: list[np.ndarray]) -> np.ndarray:
        every = np.concatenate(draws, axis=1)
        return (every[:, :, None] > taus[None, None, :]).mean(axis=1)

    profile = share([t[None, :] for t in tasks])[0]
    rng = np.random.default_rng(seed)
    values = np.concatenate([share(_draws(tasks, chunk, rng)) for chunk in _chunks(reps, tasks)])
    low, high = _percentiles(values)
    return profile, low, high


def normalized_scores(results: Sequence[dict[str, Any]], metric: str = "win_rate") -> list[np.ndarray]:
    """Each result's final ``metric`` per seed, normalized (:data:`NORMALIZED`): one array per result (task)."""
    scale = NORMALIZED.get(metric, 1.0)
    return [np.array([r["final"][metric] for r in result["per_seed"]]) / scale for result in results]


def _check_reps(reps: int) -> int:
    if isinstance(reps, bool) or not isinstance(reps, int) or not 100 <= reps <= 10**6:
        raise ValueError(f"reps must be a whole number from 100 to 1,000,000, got {reps!r}")
    return reps
