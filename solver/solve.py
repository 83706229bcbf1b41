"""Exact value iteration over every position of a rule set.

Scored pieces never come back, so positions fall into layers by (own scored, opponent scored). A move
that scores nothing keeps the layer and, when the turn passes, lands in the mirrored layer: the solver
takes the pairs {(x, y), (y, x)} from the most scored to the least, builds each pair's successor graph
once and sweeps it in place (Gauss-Seidel, both cores) until the largest change of a value is below
the tolerance. A pair where a side has scored every piece is terminal: the mover has won (1) or lost (0).

A solve written to a path checkpoints after every pair (values in ``PATH.partial``, progress in
``PATH.partial.json``, both replaced atomically), so an interrupted solve resumes from the last finished
pair; the finished table is written atomically with :func:`urgym.solver.table.write_table`.
"""

from __future__ import annotations

import errno
import json
import mmap
import os
import shutil
import sys
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import numba
import numpy as np
from tqdm.auto import tqdm
from urgym.solver import _kernels as SK
from urgym.solver._index import B_D, B_END, B_START, KIND_TILES, PositionIndex
from urgym.solver.table import DTYPES, EXACT_TOL, MIN_TOL, SolvedTable, checksum
from urgym.solver.tiles import PositionCount, count_positions

from urgym import Rules, get_rules
from urgym.core import chance_outcomes, geometry
from urgym.files import hold_lock
from urgym.progress import progress_bar

__all__ = [
    "SOLVE_RATE",
    "NoSpaceError",
    "SolveEstimate",
    "available_memory",
    "check_solvable",
    "estimate_solve",
    "solve",
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
            f"{_size(self.memory)} of memory, {_size(self.disk)} on disk"
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
    return _estimate(count_positions(rules), dtype, in_file)


def _estimate(count: PositionCount, dtype: str, in_file: bool) -> SolveEstimate:
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
    items = _work_items(index, start, end)
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


def _check_memory(rules: Rules, estimate: SolveEstimate) -> None:
    """Refuse, before any work, a solve whose peak would not fit in the memory available now."""
    free = available_memory()
    if estimate.memory > free:
        raise ValueError(
            f"not enough memory to solve {rules.describe()}: it needs about {_size(estimate.memory)} "
            f"({estimate.positions:,} positions), {_size(free)} is available now"
        )


ITEM_SIZE = 2048  # positions per parallel work item
ETA_AFTER = 0.05
"""The progress bar shows an ETA once this share of the positions is solved: the first pairs are small but take
many sweeps, so an early rate predicted hundreds of hours."""
_BAR_WITHOUT_ETA = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]"
MAX_SWEEPS = 100_000
MAX_POSITIONS = 1 << 31  # an edge is one uint32: index << 1 | passes


def _work_items(index: PositionIndex, start: int, end: int) -> np.ndarray:
    """Slices of at most ITEM_SIZE positions of the blocks in [start, end)."""
    blocks = index.blocks
    rows = np.flatnonzero((blocks[:, B_START] >= start) & (blocks[:, B_END] <= end))
    items = []
    for b in rows:
        for lo in range(int(blocks[b, B_START]), int(blocks[b, B_END]), ITEM_SIZE):
            items.append((lo, min(lo + ITEM_SIZE, int(blocks[b, B_END])), b))
    return np.array(items, dtype=np.int64).reshape(-1, 3)


class _PairGraph:
    """The successor graph of one layer pair and its sweep buffers.

    A :class:`~urgym.solver._kernels.PairGraph` in one of three forms (``form``): ``"runs"``, the solver's (one move
    list per run of positions that share it, see ``urgym.solver._kernels``: a fraction of the memory);
    ``"positions"``, runs of one position, every position's edges stored, which the policy losses and the searches
    read (built run by run); ``"played"``, the same built by playing out every position (for comparisons).
    """

    FORMS = ("runs", "positions", "played")

    def __init__(self, index: PositionIndex, start: int, end: int, form: str = "positions") -> None:
        if form not in self.FORMS:
            raise ValueError(f"unknown graph form {form!r}; one of {', '.join(self.FORMS)}")
        geom = geometry(index.rules)
        work = SK.PairWork(_work_items(index, start, end), start)
        self.start = start
        n_items, n_rolls = len(work.items), int(geom[0]["n_rolls"])
        probabilities = chance_outcomes(index.rules)[1]
        self.graph = _run_graph(index, work, geom, probabilities, runs=form != "played")
        if form == "positions":
            self.graph = _expanded(self.graph, end - start, n_rolls)
        self.change = np.zeros(end - start, dtype=np.float32)  # a direction only: float32 keeps memory down
        self._tracking = SK.SweepBuffers(*(np.zeros(n_items) for _ in range(3)), self.change)
        self._plain = self._tracking._replace(change=np.zeros(0, dtype=np.float32))

    @property
    def edges(self) -> np.ndarray:
        return self.graph.edges

    @edges.setter
    def edges(self, edges: np.ndarray) -> None:  # benchmarks.bench_sweep folds them into a small window
        self.graph = self.graph._replace(edges=edges)

    def sweep(self, values: np.ndarray) -> tuple[float, float]:
        """One Gauss-Seidel sweep that keeps each position's change.

        Returns (largest change, ratio of this sweep's changes to the last's: <d_k, d_k-1> / <d_k-1, d_k-1>).
        """
        largest = SK.sweep(self.graph, values, self._tracking, True)
        norm = float(self._tracking.item_norm.sum())
        return largest, float(self._tracking.item_dot.sum()) / norm if norm > 0 else 0.0

    def residual(self, values: np.ndarray) -> float:
        """The Bellman residual max |T V - V| over the pair (nothing is written)."""
        return SK.sweep(self.graph, values, self._plain, False)

    def extrapolate(self, values: np.ndarray, factor: float) -> None:
        """Add ``factor`` times the last change: the geometric tail of the slow mode (see :class:`SlowModeTail`).

        What the remaining sweeps would add if each change were ``ratio`` times the one before, ``factor = ratio /
        (1 - ratio)`` (on finkel the slowest mode's ratio is near +0.7).
        """
        SK.extrapolate(values, self.start, self.change, factor)


def _run_graph(
    index: PositionIndex, work: SK.PairWork, geom: np.ndarray, probabilities: np.ndarray, runs: bool = True
) -> SK.PairGraph:
    """The :class:`~urgym.solver._kernels.PairGraph` of a pair's work items: of runs, or of single positions."""
    size, first, run_start, counts, item_edges = count_runs(index, work, geom, runs)
    item_edge_end = np.cumsum(item_edges)
    edges = np.empty(int(item_edge_end[-1]), dtype=np.uint32)
    strided = bool(size.max() > 1)
    if strided and int(index.tables.choose_private.max()) >= 1 << 16:
        raise ValueError(f"{index.rules.name}: a stride would not fit 16 bits")  # C(P, P/2) for P private tiles
    strides = np.empty(len(edges) if strided else 0, dtype=np.uint16)
    SK.fill_run_edges(work, index.tables, geom, run_start, size, item_edge_end - item_edges, edges, strides)
    return SK.PairGraph(work, item_edge_end, run_start, size, first, counts, edges, strides, probabilities)


def count_runs(
    index: PositionIndex, work: SK.PairWork, geom: np.ndarray, runs: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The runs of a pair's work items and their edges per roll.

    The mover's moves never touch the opponent's private tiles, and the dense layout ranks those pieces last, so each
    run of ``C(P, d)`` positions of a block (``d``: the opponent's private pieces) has the same moves, and each
    successor's index grows by a fixed stride along the run. The tile layout has no such runs (runs of one).

    Returns each item's run size and block start, each item's first run (and the total at the end), the edges per
    run and roll (uint8) and per item. ``runs=False``: runs of one position.
    """
    items = work.items
    blocks = index.blocks
    first = blocks[items[:, 2], B_START]
    if index.kind == KIND_TILES or not runs:
        size = np.ones(len(items), dtype=np.int64)  # every position its own move list
    else:
        size = index.tables.choose_private[blocks[items[:, 2], B_D]]
    per_item = 1 + (items[:, 1] - 1 - first) // size - (items[:, 0] - first) // size  # the item's first, then each new
    run_start = np.concatenate(([0], np.cumsum(per_item)))
    n_rolls = int(geom[0]["n_rolls"])
    counts = np.empty(int(run_start[-1]) * n_rolls, dtype=np.uint8)
    item_edges = np.zeros(len(items), dtype=np.int64)
    SK.count_run_edges(work, index.tables, geom, run_start, size, counts, item_edges)
    return size, first, run_start, counts, item_edges


def _expanded(graph: SK.PairGraph, positions: int, n_rolls: int) -> SK.PairGraph:
    """The same graph with every position's edges stored (runs of one position), as the policy kernels read it."""
    item_edges = np.zeros(len(graph.work.items), dtype=np.int64)
    SK.count_expanded(graph, item_edges)
    item_edge_end = np.cumsum(item_edges)
    counts = np.empty(positions * n_rolls, dtype=np.uint8)
    edges = np.empty(int(item_edge_end[-1]), dtype=np.uint32)
    SK.expand(graph, item_edge_end - item_edges, counts, edges)
    items = graph.work.items
    run_start = np.concatenate(([0], np.cumsum(items[:, 1] - items[:, 0])))
    single = np.ones(len(items), dtype=np.int64)
    return graph._replace(
        item_edge_end=item_edge_end,
        item_run_start=run_start,
        item_run_size=single,
        counts=counts,
        edges=edges,
        strides=np.zeros(0, dtype=np.uint16),
    )


def _terminal_values(index: PositionIndex, values: np.ndarray, pair: tuple[int, int], start: int) -> None:
    """A pair where some side has scored everything: the mover has won (1) or lost (0)."""
    n = index.pieces
    offset = start
    x, y = pair
    for own_scored, opp_scored in ((x, y), (y, x)) if x != y else ((x, y),):
        size = index.layer_sizes[own_scored, opp_scored]
        values[offset : offset + size] = 1.0 if own_scored == n and opp_scored < n else 0.0
        offset += size


def _pair_key(pair: tuple[int, int]) -> str:
    """A layer pair as a JSON object key."""
    return f"{pair[0]},{pair[1]}"


class _Checkpoint:
    """Progress of a solve written to a path: finished pairs, their residuals and their values' checksums.

    A lock file keeps a second solve of the same path out. On resume every finished pair's values are
    checked against their CRC-32; the first pair that fails is solved again, with every pair after it
    (they were computed from it).
    """

    def __init__(self, out: Path, rules: Rules, tol: float, index: PositionIndex, dtype: str) -> None:
        self.values_path = out.with_name(out.name + ".partial")
        self.state_path = out.with_name(out.name + ".partial.json")
        self.key = {"rules": rules.to_dict(), "tol": tol, "positions": index.size, "index": index.layout}
        self.done: dict[str, float] = {}
        self.crcs: dict[str, str] = {}
        self.elapsed = 0.0
        out.parent.mkdir(parents=True, exist_ok=True)
        self._lock, self._lock_path = hold_lock(
            out.with_name(out.name + ".lock"),
            f"another solve is writing {out} (it holds {out.name}.lock); wait for it to finish (solve --out writes a "
            "table elsewhere)",
        )
        try:
            state = self._read_state(index.size)
            if not state:  # the values' blocks reserved up front: a full disk is an error now, not a SIGBUS later
                _check_space(out, index.size * 8 + table_bytes(index.size, dtype))
                _reserve(self.values_path, index.size * 8, out)
            else:
                _check_space(out, table_bytes(index.size, dtype))
            self.values = np.memmap(self.values_path, dtype=np.float64, mode="r+", shape=(index.size,))
            if state:
                self._verify(state, index)
        except BaseException:
            self.release()
            raise

    def _read_state(self, size: int) -> dict | None:
        if not (self.state_path.exists() and self.values_path.exists()):
            return None
        try:
            state = json.loads(self.state_path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            print(f"solve: the checkpoint {self.state_path} is unreadable ({err}); starting afresh", file=sys.stderr)
            return None
        if not isinstance(state, dict) or state.get("key") != self.key or self.values_path.stat().st_size != size * 8:
            return None
        return state

    def _verify(self, state: dict, index: PositionIndex) -> None:
        done, crcs = state.get("done", {}), state.get("crc", {})
        for pair, (start, end) in zip(index.pairs, index.pair_ranges, strict=True):
            key = _pair_key(pair)
            if key not in done:
                break
            if crcs.get(key) != checksum(self.values[start:end]):
                print(
                    f"solve: layer pair {pair} in the checkpoint fails its checksum; solving it and the pairs "
                    "after it again",
                    file=sys.stderr,
                )
                break
            self.done[key], self.crcs[key] = done[key], crcs[key]
        self.elapsed = float(state.get("elapsed", 0.0))
        print(
            f"solve: resuming from {self.values_path}: {len(self.done)} of {len(index.pairs)} layer pairs done",
            file=sys.stderr,
        )

    def finish_pair(self, pair: tuple[int, int], span: tuple[int, int], residual: float, elapsed: float) -> None:
        self.values.flush()
        key = _pair_key(pair)
        self.done[key] = residual
        self.crcs[key] = checksum(self.values[span[0] : span[1]])
        self.elapsed = elapsed
        tmp = self.state_path.with_name(self.state_path.name + ".tmp")
        tmp.write_text(json.dumps({"key": self.key, "done": self.done, "crc": self.crcs, "elapsed": elapsed}))
        os.replace(tmp, self.state_path)

    def release_pages(self, index: PositionIndex, pair: tuple[int, int]) -> None:
        """Drop from memory the values that solving ``pair`` does not read.

        Those of pairs other than itself and the two one score further on. They stay in the file (flushed after each
        pair) and come back from it if a later pair or the final write reads them; this keeps the peak memory near the
        largest pair's graph plus the values it needs, instead of every value.
        """
        x, y = pair
        needed = {pair, tuple(sorted((x + 1, y))), tuple(sorted((x, y + 1)))}
        mapping = self.values._mmap
        if mapping is None or not hasattr(mapping, "madvise"):
            return
        page = mmap.PAGESIZE
        for other, (start, end) in zip(index.pairs, index.pair_ranges, strict=True):
            first = -(-start * 8 // page) * page  # whole pages inside the pair only
            last = end * 8 // page * page
            if other not in needed and last > first:
                mapping.madvise(mmap.MADV_DONTNEED, first, last - first)

    def remove(self) -> None:
        del self.values
        self.values_path.unlink(missing_ok=True)
        self.state_path.unlink(missing_ok=True)

    def release(self) -> None:
        """Let another solve of this path start, and remove the lock file."""
        self._lock_path.unlink(missing_ok=True)  # while still locked: a solve waiting on it locks a new file
        self._lock.close()


class NoSpaceError(OSError):
    """Not enough space on the disk for a solve's files; its message names the folder and the space needed."""

    def __init__(self, message: str) -> None:
        super().__init__(errno.ENOSPC, message)

    def __str__(self) -> str:
        return self.strerror


def table_bytes(positions: int, dtype: str) -> int:
    """The size of a table file of ``positions`` values stored as ``dtype`` (its header rounded up generously)."""
    return positions * np.dtype(dtype).itemsize + 64 * 1024


def _check_space(out: Path, needed: int) -> None:
    """Refuse, before any work, a solve whose files would not fit in ``out``'s folder."""
    free = shutil.disk_usage(out.parent).free
    if free < needed:
        raise NoSpaceError(
            f"not enough space in {out.parent} to solve into {out.name}: it needs "
            f"{_size(needed)} (the checkpoint of the values and the table), {_size(free)} is free; free "
            "some space or solve elsewhere (solve --out PATH, or URGYM_CACHE for the cache)"
        )


def _reserve(path: Path, size: int, out: Path) -> None:
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
                f"checkpoint needs {_size(size)}; free some space or solve elsewhere (solve --out PATH, "
                "or URGYM_CACHE for the cache)"
            ) from None
        raise
    os.close(fd)


def _size(size: int) -> str:
    """Bytes in words: 1.1 GB, 40 MB, 8 KB."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} bytes"


def check_tol(tol: float) -> None:
    """Refuse a sweep's tolerance outside [MIN_TOL, 1): zero, negative, NaN or 1 and above, or not a number.

    Raises:
        ValueError: Naming the value and what is allowed.
    """
    if isinstance(tol, bool) or not isinstance(tol, (int, float, np.floating)) or not 0 < tol < 1:
        raise ValueError(f"tol must be between 0 and 1 (exclusive), got {tol!r}")
    if tol < MIN_TOL:
        raise ValueError(
            f"tol must be at least {MIN_TOL:g}: float64 values near 1 are 1.1e-16 apart, so a sweep "
            f"cannot promise a smaller change (the ground truth uses {EXACT_TOL:g}); got {tol:g}"
        )


def check_solve_options(tol: float, threads: int | None) -> None:
    """Refuse a tolerance outside [MIN_TOL, 1) or a thread count outside 1..cores, saying what is allowed."""
    check_tol(tol)
    cores = numba.config.NUMBA_NUM_THREADS
    if threads is not None and not 1 <= threads <= cores:
        raise ValueError(f"threads must be from 1 to {cores} (this machine's cores), got {threads}")


def solve(
    rules: Rules | str,
    tol: float = EXACT_TOL,
    progress: bool = True,
    out: str | os.PathLike | None = None,
    dtype: str = "float64",
    threads: int | None = None,
) -> SolvedTable:
    """Solve a rule set exactly: every position's winning probability for the side to move.

    Args:
        rules: A :class:`~urgym.Rules` or a rule-set name (any the index addresses, murray and skiriuk too).
        tol: Stop iterating a layer pair when no value changes by more than this in a sweep.
        progress: Show a progress bar (pair, sweep, largest change, ETA).
        out: Write the table here (atomically); the solve checkpoints beside it and resumes if interrupted.
        dtype: Storage type of the written table: ``float64``, ``float32`` or ``uint16``.
        threads: Worker threads (default: every core).

    Returns:
        The :class:`~urgym.solver.table.SolvedTable`: in memory (float64) without ``out``, else the written file
        memory-mapped.
    """
    rules = get_rules(rules)
    check_solve_options(tol, threads)
    if dtype not in DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}; allowed: {', '.join(DTYPES)}")
    index = PositionIndex(rules)
    estimate = _estimate(count_positions(rules), dtype, in_file=out is not None)
    check_solvable(rules, estimate)
    _check_memory(rules, estimate)
    threads_before = numba.get_num_threads()
    if threads:
        numba.set_num_threads(threads)
    try:
        return _solve(rules, index, tol, progress, out, dtype)
    finally:
        numba.set_num_threads(threads_before)


def _solve(
    rules: Rules, index: PositionIndex, tol: float, progress: bool, out: str | os.PathLike | None, dtype: str
) -> SolvedTable:
    checkpoint = _Checkpoint(Path(out), rules, tol, index, dtype) if out is not None else None
    try:
        return _solve_layers(rules, index, tol, progress, out, dtype, checkpoint)
    finally:
        if checkpoint is not None:
            checkpoint.release()


def _solve_layers(
    rules: Rules,
    index: PositionIndex,
    tol: float,
    progress: bool,
    out: str | os.PathLike | None,
    dtype: str,
    checkpoint: _Checkpoint | None,
) -> SolvedTable:
    values = checkpoint.values if checkpoint else np.zeros(index.size, dtype=np.float64)
    done = checkpoint.done if checkpoint else {}
    started = time.perf_counter() - (checkpoint.elapsed if checkpoint else 0.0)
    max_residual = max(done.values(), default=0.0)
    pair_stats: list[dict] = []  # of the pairs solved in this run (not those resumed from a checkpoint)
    bar = progress_bar(
        index.size,
        f"solve {rules.name}",
        progress,
        unit="pos",
        unit_scale=True,
        initial=sum(e - s for (s, e), p in zip(index.pair_ranges, index.pairs, strict=True) if _pair_key(p) in done),
        bar_format=_BAR_WITHOUT_ETA,
    )
    try:
        for pair, (start, end) in zip(index.pairs, index.pair_ranges, strict=True):
            if _pair_key(pair) in done:
                continue
            if checkpoint:
                checkpoint.release_pages(index, pair)
            stats = _solve_pair(index, values, pair, start, end, tol, bar)
            pair_stats.append(stats)
            max_residual = max(max_residual, stats["residual"])
            if checkpoint:
                checkpoint.finish_pair(pair, (start, end), stats["residual"], time.perf_counter() - started)
            bar.update(end - start)
            if bar.n >= ETA_AFTER * index.size:  # by now the rate says something about the rest
                bar.bar_format = None
    finally:
        bar.close()
    header = {
        "tol": tol,
        "residual": max_residual,
        "solve_seconds": round(time.perf_counter() - started, 3),
        "dtype": "float64",  # in memory; save() records the dtype it writes
        "sweeps": sum(p["sweeps"] for p in pair_stats),
        "build_seconds": round(sum(p["build_seconds"] for p in pair_stats), 3),
        "sweep_seconds": round(sum(p["sweep_seconds"] for p in pair_stats), 3),
        "pairs": pair_stats,
    }
    table = SolvedTable(rules, values, header, index)
    if checkpoint is None:
        return table
    try:
        table.save(out, dtype)
    except OSError as err:
        if err.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        raise NoSpaceError(
            f"no space left in {Path(out).parent} to write the table {Path(out).name} "
            f"({_size(table_bytes(index.size, dtype))}); the solved values are kept in its checkpoint: "
            "free some space and run the same solve again to write it"
        ) from None
    del table, values
    checkpoint.remove()
    return SolvedTable.load(out, rules, verify=False)


def _solve_pair(
    index: PositionIndex, values: np.ndarray, pair: tuple[int, int], start: int, end: int, tol: float, bar: tqdm
) -> dict:
    """Iterate one layer pair to convergence.

    Return its statistics (final Bellman residual, sweeps, extrapolations, the first sweep swept plainly after the
    extrapolation stalled or None, seconds building the graph and sweeping).
    """
    stats = {
        "pair": list(pair),
        "positions": end - start,
        "residual": 0.0,
        "sweeps": 0,
        "extrapolations": 0,
        "plain_from": None,
        "build_seconds": 0.0,
        "sweep_seconds": 0.0,
    }
    if index.pieces in pair:
        _terminal_values(index, values, pair, start)
        return stats
    bar.set_postfix_str(f"pair {pair}: building successor graph")
    began = time.perf_counter()
    graph = _PairGraph(index, start, end, form="runs")
    stats["build_seconds"] = round(time.perf_counter() - began, 3)
    began = time.perf_counter()
    with _threads_for(end - start):
        _sweep_to(graph, values, tol, stats, pair, bar)
    stats["sweep_seconds"] = round(time.perf_counter() - began, 3)
    return stats


SMALL_PAIR = 250_000
"""Pairs of fewer positions are swept on one thread: starting the threads of each sweep cost more than they gain
(17% of finkel 5's sweeping on a busy machine)."""


@contextmanager
def _threads_for(positions: int) -> Iterator[None]:
    """One numba thread while sweeping a small pair; as many as before otherwise."""
    before = numba.get_num_threads()
    if positions < SMALL_PAIR:
        numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(before)


def _sweep_to(graph: _PairGraph, values: np.ndarray, tol: float, stats: dict, pair: tuple[int, int], bar: tqdm) -> None:
    """Sweep a pair until no value changes by more than ``tol``, extrapolating its slow mode; fill in ``stats``."""
    tail = SlowModeTail()
    for sweep in range(1, MAX_SWEEPS + 1):
        change, ratio = graph.sweep(values)
        bar.set_postfix_str(f"pair {pair}: sweep {sweep}, largest change {change:.1e}")
        if change < tol:
            stats.update(residual=graph.residual(values), sweeps=sweep)
            return
        factor = tail.after_sweep(change, ratio)
        if factor is not None:
            graph.extrapolate(values, factor)
            stats["extrapolations"] += 1
        elif tail.stalled and stats["plain_from"] is None:
            stats["plain_from"] = sweep
    raise RuntimeError(f"layer pair {pair} did not converge to {tol} in {MAX_SWEEPS} sweeps")


EXTRAPOLATE = True
"""Extrapolate the slow mode of the sweeps (False: plain Gauss-Seidel, for comparisons)."""


STEADY_SWEEPS = 2
"""Sweeps whose change ratios must agree before the tail is extrapolated."""
STEADY_SPREAD = 0.02
"""How closely they must agree (tried on finkel 4 pieces: 2 and 0.02 took the fewest sweeps)."""
STALL_SWEEPS = 40
"""Sweeps over which the largest change must at least halve while extrapolating (see :class:`SlowModeTail`)."""


class SlowModeTail:
    """When to add the geometric tail of a pair's slow mode, decided after each sweep.

    The tail is added when the last change ratios agree (one mode dominates the pair). The ratio is pair-wide, so
    where a few positions change at another pace the tail can do them harm: on murray 4's largest pair the largest
    change rose after every extrapolation and stayed near 4e-5 for 300 sweeps, while plain sweeps cut it by 0.82 a
    sweep. So once the largest change has not halved over :data:`STALL_SWEEPS` sweeps, the pair is swept plainly to
    the end. (Trying the tail again once a ratio had settled, 0.953 there, raised the largest change tenfold.)
    """

    def __init__(self) -> None:
        self.ratios: deque[float] = deque(maxlen=STEADY_SWEEPS)
        self.changes: deque[float] = deque(maxlen=STALL_SWEEPS + 1)  # this sweep's and the STALL_SWEEPS before
        self.stalled = False
        """Whether the pair is swept plainly after a stall."""

    def after_sweep(self, change: float, ratio: float) -> float | None:
        """The factor to extrapolate the last change by (``ratio / (1 - ratio)``), or None to sweep on."""
        self.changes.append(change)
        if len(self.changes) > STALL_SWEEPS and change > 0.5 * self.changes[0]:
            self.stalled = True
        if not EXTRAPOLATE or self.stalled:
            return None
        self.ratios.append(ratio)
        if not _steady(self.ratios):
            return None
        self.ratios.clear()  # the next change is no longer a multiple of the last: measure afresh
        return ratio / (1.0 - ratio)


def _steady(ratios: Sequence[float]) -> bool:
    """True when the last change ratios agree (one mode dominates) and lie safely inside (-1, 1)."""
    if len(ratios) < STEADY_SWEEPS:
        return False
    last = list(ratios)[-STEADY_SWEEPS:]
    return all(-0.98 < r < 0.95 for r in last) and max(last) - min(last) < STEADY_SPREAD
