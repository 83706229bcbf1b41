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
import stat
import sys
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path

import numba
import numpy as np
from tqdm.auto import tqdm
from urgym.solver._index import PositionIndex
from urgym.solver.budget import (
    NoSpaceError,
    check_memory,
    check_solvable,
    check_space,
    estimate_solve,
    format_size,
    reserve,
    table_bytes,
)
from urgym.solver.graph import (
    LayerPair,
    SweepGraph,
    layer_pairs,
    swept_by_every_thread,
    terminal_values,
    threads_for,
)
from urgym.solver.table import DTYPES, EXACT_TOL, MIN_TOL, SolvedTable, checksum

from urgym import Rules, get_rules
from urgym.files import hold_lock
from urgym.progress import progress_bar

__all__ = ["SlowModeTail", "check_solve_options", "check_tol", "solve"]

ETA_AFTER = 0.05
"""The progress bar shows an ETA once this share of the positions is solved: the first pairs are small but take
many sweeps, so an early rate predicted hundreds of hours."""
_BAR_WITHOUT_ETA = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]"
MAX_SWEEPS = 100_000


def _pair_key(pair: tuple[int, int]) -> str:
    """A layer pair as a JSON object key."""
    return f"{pair[0]},{pair[1]}"


def _well_formed(state: dict) -> bool:
    """Whether a checkpoint's progress has the shapes a resume reads (a crafted or damaged file may not)."""
    done, crcs, threaded = state.get("done", {}), state.get("crc", {}), state.get("threaded")
    return (
        isinstance(done, dict)
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in done.values())
        and isinstance(crcs, dict)
        and all(isinstance(v, str) for v in crcs.values())
        and (threaded is None or (isinstance(threaded, list) and all(isinstance(k, str) for k in threaded)))
        and isinstance(state.get("elapsed", 0.0), (int, float))
    )


def _check_own_file(path: Path) -> None:
    """Refuse a checkpoint file that is not a regular file: a link there would be written through, a FIFO waited on."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise ValueError(
            f"{path} is not a regular file (a link, a FIFO, a device or a folder); a solve keeps its checkpoint there: "
            "remove it, or solve elsewhere (solve --out PATH)"
        )


class _Checkpoint:
    """Progress of a solve written to a path: finished pairs, their residuals and their values' checksums.

    A lock file keeps a second solve of the same path out. On resume every finished pair's values are
    checked against their CRC-32; the first pair that fails is solved again, with every pair after it
    (they were computed from it). A ``reproducible`` solve (on one thread) does the same from the first pair
    swept on several threads: keeping it would keep its timing-dependent last bits.
    """

    def __init__(
        self, out: Path, rules: Rules, tol: float, index: PositionIndex, dtype: str, reproducible: bool = False
    ) -> None:
        self.reproducible = reproducible
        self.values_path = out.with_name(out.name + ".partial")
        self.state_path = out.with_name(out.name + ".partial.json")
        self.key = {"rules": rules.to_dict(), "tol": tol, "positions": index.size, "index": index.layout}
        self.done: dict[str, float] = {}
        self.crcs: dict[str, str] = {}
        self.threaded: list[str] = []  # finished pairs swept on several threads (their last bits vary)
        self.elapsed = 0.0
        out.parent.mkdir(parents=True, exist_ok=True)
        for path in (self.values_path, self.state_path):
            _check_own_file(path)
        self._lock, self._lock_path = hold_lock(
            out.with_name(out.name + ".lock"),
            f"another solve is writing {out} (it holds {out.name}.lock); wait for it to finish (solve --out writes a "
            "table elsewhere)",
        )
        try:
            state = self._read_state(index.size)
            if not state:  # the values' blocks reserved up front: a full disk is an error now, not a SIGBUS later
                check_space(out, index.size * 8 + table_bytes(index.size, dtype))
                reserve(self.values_path, index.size * 8, out)
            else:
                check_space(out, table_bytes(index.size, dtype))
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
        if not _well_formed(state):
            print(f"solve: the checkpoint {self.state_path} is malformed; starting afresh", file=sys.stderr)
            return None
        return state

    def _verify(self, state: dict, index: PositionIndex) -> None:
        done, crcs = state.get("done", {}), state.get("crc", {})
        threaded = state.get("threaded")  # None: a checkpoint from before it was kept
        for layer in layer_pairs(index):
            key = _pair_key(layer.scored)
            if key not in done:
                break
            if crcs.get(key) != checksum(self.values[layer.start : layer.end]):
                print(
                    f"solve: layer pair {layer.scored} in the checkpoint fails its checksum; solving it and the pairs "
                    "after it again",
                    file=sys.stderr,
                )
                break
            was_threaded = key in threaded if threaded is not None else swept_by_every_thread(layer.positions)
            if was_threaded and self.reproducible:
                print(
                    f"solve: layer pair {layer.scored} in the checkpoint was swept on several threads; solving it and "
                    "the pairs after it again on one thread",
                    file=sys.stderr,
                )
                break
            self.done[key], self.crcs[key] = done[key], crcs[key]
            if was_threaded:
                self.threaded.append(key)
        self.elapsed = float(state.get("elapsed", 0.0))
        print(
            f"solve: resuming from {self.values_path}: {len(self.done)} of {len(index.pairs)} layer pairs done",
            file=sys.stderr,
        )

    def finish_pair(
        self, pair: tuple[int, int], span: tuple[int, int], residual: float, elapsed: float, threaded: bool
    ) -> None:
        self.values.flush()
        key = _pair_key(pair)
        self.done[key] = residual
        self.crcs[key] = checksum(self.values[span[0] : span[1]])
        if threaded:
            self.threaded.append(key)
        self.elapsed = elapsed
        tmp = self.state_path.with_name(self.state_path.name + ".tmp")
        state = {"key": self.key, "done": self.done, "crc": self.crcs, "threaded": self.threaded, "elapsed": elapsed}
        tmp.write_text(json.dumps(state))
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
        for other in layer_pairs(index):
            first = -(-other.start * 8 // page) * page  # whole pages inside the pair only
            last = other.end * 8 // page * page
            if other.scored not in needed and last > first:
                mapping.madvise(mmap.MADV_DONTNEED, first, last - first)

    def remove(self) -> None:
        del self.values
        self.values_path.unlink(missing_ok=True)
        self.state_path.unlink(missing_ok=True)

    def release(self) -> None:
        """Let another solve of this path start, and remove the lock file."""
        self._lock_path.unlink(missing_ok=True)  # while still locked: a solve waiting on it locks a new file
        self._lock.close()


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
        threads: Worker threads (default: every core). A layer pair of :data:`~urgym.solver.graph.SMALL_PAIR`
            positions or more is swept in place by all of them at once, so where a sweep stops, and the values' last
            bits (within ``tol``), depend on the threads and their timing: ``threads=1`` gives the same table on
            every machine, at about 1.6 times the sweeping time on two cores (resuming, it sweeps again a
            checkpoint's pairs swept on several threads). The header's ``reproducible`` says
            which a table is (:attr:`~urgym.solver.table.SolvedTable.reproducible`).

    Returns:
        The :class:`~urgym.solver.table.SolvedTable`: in memory (float64) without ``out``, else the written file
        memory-mapped.
    """
    rules = get_rules(rules)
    check_solve_options(tol, threads)
    if dtype not in DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}; allowed: {', '.join(DTYPES)}")
    index = PositionIndex(rules)
    estimate = estimate_solve(rules, dtype, in_file=out is not None)
    check_solvable(rules, estimate)
    check_memory(rules, estimate)
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
    one_thread = numba.get_num_threads() == 1
    checkpoint = _Checkpoint(Path(out), rules, tol, index, dtype, one_thread) if out is not None else None
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
        initial=sum(layer.positions for layer in layer_pairs(index) if _pair_key(layer.scored) in done),
        bar_format=_BAR_WITHOUT_ETA,
    )
    try:
        for layer in layer_pairs(index):
            pair, start, end = layer.scored, layer.start, layer.end
            if _pair_key(pair) in done:
                continue
            if checkpoint:
                checkpoint.release_pages(index, pair)
            # From zeros, as a fresh solve starts: a checkpoint may hold a pair cut short or one to sweep again, and
            # where the sweeps start decides the last bits.
            values[start:end] = 0.0
            stats = _solve_pair(index, values, layer, tol, bar)
            pair_stats.append(stats)
            max_residual = max(max_residual, stats["residual"])
            if checkpoint:
                checkpoint.finish_pair(
                    pair, (start, end), stats["residual"], time.perf_counter() - started, stats["threads"] > 1
                )
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
        "threaded_pairs": len(checkpoint.threaded if checkpoint else [])
        + sum(1 for p in pair_stats if p["threads"] > 1),
        "pairs": pair_stats,
    }
    header["reproducible"] = header["threaded_pairs"] == 0
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
            f"({format_size(table_bytes(index.size, dtype))}); the solved values are kept in its checkpoint: "
            "free some space and run the same solve again to write it"
        ) from None
    del table, values
    checkpoint.remove()
    return SolvedTable.load(out, rules, verify=False)


def _solve_pair(index: PositionIndex, values: np.ndarray, layer: LayerPair, tol: float, bar: tqdm) -> dict:
    """Iterate one layer pair to convergence.

    Return its statistics (final Bellman residual, sweeps, extrapolations, the first sweep swept plainly after the
    extrapolation stalled or None, seconds building the graph and sweeping).
    """
    pair, start, end = layer.scored, layer.start, layer.end
    stats = {
        "pair": list(pair),
        "positions": end - start,
        "residual": 0.0,
        "sweeps": 0,
        "extrapolations": 0,
        "plain_from": None,
        "build_seconds": 0.0,
        "sweep_seconds": 0.0,
        "threads": 1,
    }
    if layer.over:
        terminal_values(index, values, pair, start)
        return stats
    bar.set_postfix_str(f"pair {pair}: building successor graph")
    began = time.perf_counter()
    graph = SweepGraph(index, start, end, form="runs")
    stats["build_seconds"] = round(time.perf_counter() - began, 3)
    began = time.perf_counter()
    with threads_for(end - start):
        stats["threads"] = numba.get_num_threads()
        _sweep_to(graph, values, tol, stats, pair, bar)
    stats["sweep_seconds"] = round(time.perf_counter() - began, 3)
    return stats


def _sweep_to(graph: SweepGraph, values: np.ndarray, tol: float, stats: dict, pair: tuple[int, int], bar: tqdm) -> None:
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
