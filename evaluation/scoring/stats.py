"""Summaries of evaluation results: Wilson intervals and regret statistics from accumulators."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from urgym.evaluation.scoring._kernels import (
    ACC_BLUNDERS,
    ACC_CHOICES,
    ACC_PERFECT,
    ACC_REGRET_SQUARES,
    ACC_REGRET_SUM,
    ACC_SECONDS,
    BLUNDER,
    REGRET_BINS,
)

__all__ = ["BLUNDER", "MeanInterval", "RegretSummary", "WinRate", "wilson_interval"]

Z95 = 1.959963984540054


def wilson_interval(wins: int, games: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a win rate (95% by default); (0, 1) for no games."""
    if games == 0:
        return 0.0, 1.0
    p = wins / games
    denominator = 1 + z * z / games
    centre = (p + z * z / (2 * games)) / denominator
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class WinRate:
    """Wins out of games, with the rate and its 95% Wilson interval."""

    wins: int
    games: int

    @property
    def rate(self) -> float:
        """The share of wins."""
        return self.wins / self.games if self.games else float("nan")

    @property
    def interval(self) -> tuple[float, float]:
        """The Wilson interval of the share."""
        return wilson_interval(self.wins, self.games)

    @property
    def width(self) -> float:
        """The interval's width."""
        low, high = self.interval
        return high - low

    def __str__(self) -> str:
        if not self.games:
            return "-"
        low, high = self.interval
        return f"{self.rate:.1%} [{low:.1%}, {high:.1%}]"

    def to_dict(self) -> dict[str, float | int]:
        """The rate and its interval as plain JSON."""
        low, high = self.interval
        return {"wins": self.wins, "games": self.games, "rate": self.rate, "low95": low, "high95": high}


@dataclass(frozen=True)
class MeanInterval:
    """A mean of per-game values with its 95% normal interval (mean +- 1.96 standard errors)."""

    mean: float
    low: float
    high: float
    n: int

    @classmethod
    def of(cls, values: np.ndarray, z: float = Z95) -> MeanInterval:
        """The mean of ``values`` with its normal interval (``z`` standard errors)."""
        values = np.asarray(values, dtype=np.float64)
        n = values.shape[0]
        mean = float(values.mean()) if n else float("nan")
        half = z * float(values.std(ddof=1)) / n**0.5 if n > 1 else float("inf")
        return cls(mean, mean - half, mean + half, n)

    @property
    def outside(self) -> bool:
        """True when the estimate or its interval leaves 0-100%.

        An unbiased estimate can, for a rate near an edge (a weak agent against perfect play), though no rate can.
        """
        return self.low < 0.0 or self.high > 1.0

    @property
    def width(self) -> float:
        """The interval's width."""
        return self.high - self.low

    def clipped(self) -> MeanInterval:
        """The estimate and interval clipped to 0-100%, as a rate is shown."""
        return MeanInterval(min(max(self.mean, 0.0), 1.0), max(self.low, 0.0), min(self.high, 1.0), self.n)

    def __str__(self) -> str:
        shown = self.clipped()
        text = f"{shown.mean:.1%} [{shown.low:.1%}, {shown.high:.1%}]"
        if self.outside:
            text += (
                f" (clipped to 0-100%; the unbiased estimate is {self.mean:+.1%} [{self.low:+.1%}, {self.high:+.1%}])"
            )
        return text

    def to_dict(self) -> dict[str, float | int]:
        """The mean and its interval as plain JSON."""
        shown = self.clipped()
        return {**asdict(self), "shown_mean": shown.mean, "shown_low": shown.low, "shown_high": shown.high}


@dataclass(frozen=True)
class RegretSummary:
    """Regret statistics of an agent's decisions (win-% points: 1.0 is one percentage point).

    Only decisions with two or more legal moves count; the time is per such decision.
    """

    decisions: int
    mean: float
    median: float
    p95: float
    perfect_share: float
    blunders: int
    blunder_share: float
    seconds_per_move: float
    low95: float = float("nan")
    """The mean's 95% interval (mean +- 1.96 standard errors over the decisions), lower end."""
    high95: float = float("nan")

    @classmethod
    def from_accumulators(cls, acc: np.ndarray, hist: np.ndarray) -> RegretSummary:
        """Build from one agent's accumulator row and regret histogram (see ``urgym.evaluation.scoring._kernels``)."""
        n = int(acc[ACC_CHOICES])
        if n == 0:
            return cls(0, *[float("nan")] * 4, 0, float("nan"), float("nan"))
        cumulative = np.cumsum(hist)
        scale = 100.0 / REGRET_BINS  # bin index -> win-% points (lower edge)

        def quantile(q: float) -> float:
            return float(np.searchsorted(cumulative, q * n, side="left")) * scale

        blunders = int(acc[ACC_BLUNDERS])
        seconds = float(acc[ACC_SECONDS]) / n
        mean = float(acc[ACC_REGRET_SUM]) / n
        variance = max(float(acc[ACC_REGRET_SQUARES]) / n - mean * mean, 0.0) * n / max(n - 1, 1)
        half = Z95 * math.sqrt(variance / n) if n > 1 else float("nan")
        return cls(
            n,
            100.0 * float(acc[ACC_REGRET_SUM]) / n,  # in this order: the figures shipped results hold, to the bit
            quantile(0.5),
            quantile(0.95),
            float(acc[ACC_PERFECT]) / n,
            blunders,
            blunders / n,
            seconds,
            100.0 * max(mean - half, 0.0),
            100.0 * (mean + half),
        )

    def to_dict(self) -> dict[str, float | int | None]:
        """The summary as plain JSON."""
        return asdict(self)
