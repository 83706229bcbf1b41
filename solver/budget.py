"""What a solve needs before it starts, and the checks that refuse one that would not fit.

The estimate of a solve's time (from measured rates per core), peak memory (the largest layer pair's graph,
counted on a sample of it, and the values held) and disk (the checkpoint and the table); the checks of memory and
disk space made before any work; the reservation of a checkpoint's blocks; sizes and durations in words.
"""

from __future__ import annotations

import errno
import os
import shutil
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import numba
import numpy as np
from urgym.solver import _kernels as SK
from urgym.solver._index import PositionIndex
from urgym.solver.graph import MAX_POSITIONS, count_runs, work_items
from urgym.solver.tiles import count_positions

from urgym import Rules
from urgym.core import geometry

__all__ = [
    "SOLVE_RATE",
    "NoSpaceError",
    "SolveEstimate",
    "available_memory",
    "check_memory",
    "check_solvable",
    "check_space",
    "estimate_solve",
    "format_size",
    "reserve",
    "table_bytes",
]

SOLVE_RATE = 200_000
"""Positions a core solves per second (measured on finkel: 138 M positions in 341 s on 2 cores)."""
SOLVE_RATE_TILES = 100_000
"""The same for paths that visit tiles twice (murray, skiriuk) while a layer pair's values fit the caches better
(measured on murray 3: 110,000, and skiriuk 4: 106,000, on 2 cores): half finkel's rate, with about three times
its sweeps per pair."""
SOLVE_RATE_TILES_LARGE = 32_000
"""The same once the largest layer pair passes :data:`LARGE_PAIR` positions (measured on murray 4: 207 M positions
in 54 min on 2 cores; a sweep of its 133 M-position pair waits on memory for most of its loads)."""
LARGE_PAIR = 50_000_000
"""Positions of a layer pair from which the tile layouts' sweeps slow down (see :data:`SOLVE_RATE_TILES_LARGE`)."""
BASE_MEMORY = 512 << 20
"""Memory a solve needs whatever its size: Python, numpy, numba and the index."""
CHANGE_BYTES = 4
"""Bytes a position of the pair being solved holds besides its value and graph: its last change (float32). The peak
is the largest pair's graph (see :func:`_graph_bytes_per_position`) plus the values in memory: every value for a
solve kept in memory; for one written to a file, about those of the pair and the pairs it reads, twice the largest
pair's (measured: finkel 7 2.8 GB and masters 7 10.0-10.7 GB with a graph stored per position, murray 4 9.6 GB)."""
SAMPLE_ITEMS = 16
"""Work items of the largest pair whose runs and edges are counted for the estimate (about 33,000 positions)."""


class SolveEstimate(NamedTuple):
    """What a solve of some rules takes on this machine, before it starts."""

    positions: int
    minutes: float  # wall time on this machine's cores
    memory: int  # peak bytes
    disk: int  # bytes of the checkpoint and the table (a solve written to a file)

    def describe(self) -> str:
        """In words: ``501,032,952 positions, about 21 min on this machine, 10.5 GB of memory, 8.0 GB on disk``."""
        return (
            f"{self.positions:,} positions, about {_duration(self.minutes)} on this machine, "
            f"{format_size(self.memory)} of memory, {format_size(self.disk)} on disk"
        )


def _duration(minutes: float) -> str:
    """Minutes in words: ``12.5 min``, ``3.4 h``, ``6.2 days``."""
    if minutes < 120:
        return f"{max(minutes, 0.1):.1f} min"
    if minutes < 48 * 60:
        return f"{minutes / 60:.1f} h"
    return f"{minutes / 1440:.1f} days"


def check_solvable(rules: Rules, estimate: SolveEstimate) -> None:
    """Refuse, with what it would need, a rule set whose positions the solver's 32-bit edges cannot address."""
    if estimate.positions >= MAX_POSITIONS:
        raise ValueError(
            f"{rules.name} with {rules.pieces} pieces is too large to solve on this machine: it would need "
            f"{estimate.describe()}, and the solver's edges address at most {MAX_POSITIONS:,} positions "
            "(docs/solver.md, 'Larger rule sets', gives the plan)"
        )


def estimate_solve(rules: Rules, dtype: str = "float64", in_file: bool = True) -> SolveEstimate:
    """The time, memory and disk a solve of ``rules`` needs here, before any work.

    From measured rates, and the largest layer pair's graph: its positions counted exactly, its edges per position
    counted on a sample of it (a fraction of a second).
    """
    count = count_positions(rules)
    positions, largest = count.positions, count.largest_pair
    held = min(positions, 2 * largest) if in_file else positions  # a file keeps the pairs not being read
    memory = BASE_MEMORY + 8 * held + int(largest * _graph_bytes_per_position(count.rules, count.positions))
    disk = positions * 8 + table_bytes(positions, dtype) if in_file else 0
    if not count.rules.visits_tiles_twice:
        rate = SOLVE_RATE
    else:
        rate = SOLVE_RATE_TILES_LARGE if largest > LARGE_PAIR else SOLVE_RATE_TILES
    minutes = positions / (rate * numba.config.NUMBA_NUM_THREADS) / 60
    return SolveEstimate(positions, minutes, memory, disk)


@lru_cache(maxsize=64)
def _graph_bytes_per_position(rules: Rules, positions: int) -> float:
    """The bytes of the largest layer pair's graph per position, counted on a sample of its work items.

    A run's edges (4 bytes each, and a 2-byte stride where runs are longer than one position) and its edge counts
    (a byte per roll), and each position's last change (4 bytes). Rule sets past the solver's size are not
    sampled: 12 edges a position, about murray's and skiriuk's at 4 and 5 pieces. Kept per rule set: the index
    and the sample take up to 0.4 s (masters), and the web game asks for the estimate at every request.
    """
    if positions >= MAX_POSITIONS:
        return CHANGE_BYTES + 5 + 4 * 12.0
    index = PositionIndex(rules)
    start, end = max(index.pair_ranges, key=lambda r: r[1] - r[0])
    items = work_items(index, start, end)
    geom = geometry(rules)
    sample = np.ascontiguousarray(items[np.linspace(0, len(items) - 1, min(SAMPLE_ITEMS, len(items))).astype(int)])
    size, _, _, counts, item_edges = count_runs(index, SK.PairWork(sample, start), geom)
    edge_bytes = 4 + (2 if size.max() > 1 else 0)
    graph = counts.nbytes + edge_bytes * int(item_edges.sum())
    return CHANGE_BYTES + graph / max(int((sample[:, 1] - sample[:, 0]).sum()), 1)


def available_memory() -> int:
    """Bytes of memory a new allocation can get now (``MemAvailable``; the physical memory where unknown)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def check_memory(rules: Rules, estimate: SolveEstimate) -> None:
    """Refuse, before any work, a solve whose peak would not fit in the memory available now."""
    free = available_memory()
    if estimate.memory > free:
        raise ValueError(
            f"not enough memory to solve {rules.describe()}: it needs about {format_size(estimate.memory)} "
            f"({estimate.positions:,} positions), {format_size(free)} is available now"
        )


class NoSpaceError(OSError):
    """Not enough space on the disk for a solve's files; its message names the folder and the space needed."""

    def __init__(self, message: str) -> None:
        super().__init__(errno.ENOSPC, message)

    def __str__(self) -> str:
        return self.strerror


def table_bytes(positions: int, dtype: str) -> int:
    """The size of a table file of ``positions`` values stored as ``dtype`` (its header rounded up generously)."""
    return positions * np.dtype(dtype).itemsize + 64 * 1024


def check_space(out: Path, needed: int) -> None:
    """Refuse, before any work, a solve whose files would not fit in ``out``'s folder."""
    free = shutil.disk_usage(out.parent).free
    if free < needed:
        raise NoSpaceError(
            f"not enough space in {out.parent} to solve into {out.name}: it needs "
            f"{format_size(needed)} (the checkpoint of the values and the table), {format_size(free)} is free; free "
            "some space or solve elsewhere (solve --out PATH, or URGYM_CACHE for the cache)"
        )


def reserve(path: Path, size: int, out: Path) -> None:
    """Create ``path`` with ``size`` bytes of zeros whose blocks are allocated (not a sparse file)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as err:
        os.close(fd)
        path.unlink(missing_ok=True)
        if err.errno in (errno.ENOSPC, errno.EDQUOT):
            raise NoSpaceError(
                f"not enough space in {out.parent} to solve into {out.name}: its "
                f"checkpoint needs {format_size(size)}; free some space or solve elsewhere (solve --out PATH, "
                "or URGYM_CACHE for the cache)"
            ) from None
        raise
    os.close(fd)


def format_size(size: int) -> str:
    """Bytes in words: 1.1 GB, 40 MB, 8 KB."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} bytes"
