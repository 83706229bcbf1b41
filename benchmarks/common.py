"""Helpers shared by the benchmarks: timing with warm-up and medians over repeats."""

from __future__ import annotations

import os
import platform
import statistics
import time
from collections.abc import Callable


def median_rate(work: Callable[[], int], repeats: int = 5) -> tuple[float, list[float]]:
    """Run ``work`` once to warm up (JIT compilation), then ``repeats`` times; it returns units done.

    Returns the median rate in units per second and every run's rate.
    """
    work()
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        units = work()
        rates.append(units / (time.perf_counter() - start))
    return statistics.median(rates), rates


def machine() -> str:
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
