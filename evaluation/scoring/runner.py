"""Run evaluation tasks in parallel: in this process, a pool of worker processes, or Ray tasks.

Tasks are small picklable dataclasses handled by a module-level function; results come back in task order
whatever order they finish in, so the same seed gives the same numbers on any backend and worker count.
Workers load the solved table (memory-mapped, so processes share its pages) and build agents from their
specs once, then keep them for later tasks.
"""

from __future__ import annotations

import atexit
import itertools
import os
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from urgym.agents import Agent, builtin_name, make_agent
from urgym.solver import SolvedTable, TableError

from urgym import Position, Rules
from urgym.files import require_extra
from urgym.progress import progress_bar
from urgym.startup import ignore_ctrl_c, interruptible, worker_context

__all__ = [
    "BACKENDS",
    "RunOptions",
    "default_workers",
    "require_ray",
    "run_tasks",
    "shutdown_pool",
    "table_key",
    "worker_agent",
    "worker_table",
]

BACKENDS = ("process", "ray")


@dataclass(frozen=True)
class RunOptions:
    """How an evaluation runs, one bundle for every function that plays or scores.

    Matches, position benchmarks, tournaments and cards take it; none of it changes the numbers, which depend only on
    the seed.

    Attributes:
        workers: Worker processes (None: all cores, or this process alone when an agent runs best in the main
            process, as a neural network answering a thousand games in one forward pass does).
        backend: ``"process"`` (local worker processes) or ``"ray"`` (Ray tasks).
        ray_address: The Ray cluster for ``backend="ray"`` (None starts or joins a local one).
        progress: Show progress bars.
        save_games: A folder to write every game's record to (``game-000012.json``); created if missing and checked
            before any game is played. A folder that already holds records is refused unless ``replace_games``.
        replace_games: With ``save_games``: delete the records already in the folder first.
    """

    workers: int | None = None
    backend: str = "process"
    ray_address: str | None = None
    progress: bool = True
    save_games: str | os.PathLike | None = None
    replace_games: bool = False

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"unknown backend {self.backend!r}; backends: {', '.join(BACKENDS)}")
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers must be at least 1, got {self.workers}")
        cores = default_workers()
        if self.backend == "process" and self.workers is not None and self.workers > cores:
            # each worker holds its own tables and agents: more than the cores only costs memory
            raise ValueError(
                f"workers must be from 1 to {cores} (this machine's cores) with the process backend, got {self.workers}"
            )
        if self.ray_address is not None and self.backend != "ray":
            raise ValueError("ray_address names a Ray cluster for backend='ray'")
        if self.replace_games and self.save_games is None:
            raise ValueError("replace_games goes with save_games")

    def worker_count(self, in_process: bool) -> int:
        """The worker processes to use: ``workers``, or by default all cores (one for an in-process agent)."""
        return self.workers or (1 if in_process else default_workers())

    def label(self, text: str) -> str | None:
        """The progress bar's label, or None when progress bars are hidden."""
        return text if self.progress else None


T = TypeVar("T")

_TABLES: dict[str, SolvedTable] = {}
_HELD: weakref.WeakValueDictionary[str, SolvedTable] = weakref.WeakValueDictionary()
"""Tables of runs played in this process, by key: the caller holds each while its tasks run, and they use it."""
_AGENTS: dict[tuple[str, int, str | None], Agent] = {}
_POOL: tuple[int, ProcessPoolExecutor] | None = None


def default_workers() -> int:
    """All cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def table_key(table: SolvedTable | None, in_process: bool) -> str | None:
    """How tasks name a table: in this process the table itself (held by id), in worker processes its file."""
    if table is None:
        return None
    if in_process:  # the caller's table object, not a second map of its file (nor one only in memory)
        key = f"held:{id(table)}"
        _HELD[key] = table
        return key
    if table.path is None:
        raise ValueError(
            "a solved table that is only in memory cannot reach worker processes: save it "
            "(SolvedTable.save) and load it, or use workers=1"
        )
    return str(table.path)


def worker_table(key: str | None, rules: Rules) -> SolvedTable | None:
    """The solved table of a :func:`table_key`: the caller's, or its file loaded once per process (None: no table)."""
    if key is None:
        return None
    if key.startswith("held:"):
        table = _HELD[key]
        if table.rules != rules:
            raise TableError(f"the table given was solved for {table.rules.describe()!r}, not {rules.describe()!r}")
        return table
    if key not in _TABLES:
        _TABLES[key] = SolvedTable.load(Path(key), rules, verify=False)  # the parent verified it
    return _TABLES[key]


def worker_agent(spec: str | Agent, slot: int, rules: Rules, table: SolvedTable | None) -> Agent:
    """The agent of a spec, built and warmed up once per process and slot (self-play gets two agents).

    An agent object (not a spec) is used as it is: each task receives its own copy.
    """
    if isinstance(spec, Agent):
        _warm_up(spec, rules)
        return spec
    key = (spec, slot, None if table is None else str(table.path or id(table)))  # perfect's table is part of it
    if key not in _AGENTS:
        perfect = builtin_name(spec) == "perfect" and table is not None
        agent = make_agent(spec, **({"table": table} if perfect else {}))
        _warm_up(agent, rules)
        _AGENTS[key] = agent
    return _AGENTS[key]


def _warm_up(agent: Agent, rules: Rules) -> None:
    """One untimed move on a position with a choice, so JIT compilation and table loading stay out of timings."""
    position = Position.start(rules)
    for roll in itertools.cycle(rules.rolls):
        moves = position.legal_moves(roll)
        if len(moves) >= 2:
            agent.select_move(position, roll)
            return
        position = position.play(roll, moves[0] if moves else None)
        if position.is_over:
            return


def run_tasks(
    function: Callable[[Any], T],
    tasks: Sequence[Any],
    units: Sequence[int],
    workers: int = 1,
    backend: str = "process",
    ray_address: str | None = None,
    progress: str | None = None,
) -> list[T]:
    """``[function(t) for t in tasks]``, in parallel, with a progress bar counting ``units`` per task.

    Args:
        function: A module-level function (it is pickled by name).
        tasks: Picklable task descriptions.
        units: Work per task shown by the progress bar (games, positions).
        workers: Worker processes (1 runs in this process); ignored by Ray, which uses its cluster.
        backend: ``"process"`` or ``"ray"``.
        ray_address: The Ray cluster to join (None starts or joins a local instance).
        progress: The progress bar's label; None hides it.
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; backends: {', '.join(BACKENDS)}")
    bar = progress_bar(sum(units), progress, progress is not None, unit="")
    try:
        if backend == "ray":
            return _run_ray(function, tasks, units, ray_address, bar)
        if workers <= 1 or len(tasks) <= 1:
            results = []
            for task, n in zip(tasks, units, strict=True):
                results.append(interruptible(function, task))
                bar.update(n)
            return results
        return _run_pool(function, tasks, units, workers, bar)
    finally:
        bar.close()


def _pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes kept for later calls, so workers keep their loaded tables and agents."""
    global _POOL
    if _POOL is not None and _POOL[0] != workers:
        _POOL[1].shutdown()
        _POOL = None
    if _POOL is None:
        _POOL = (
            workers,
            ProcessPoolExecutor(max_workers=workers, mp_context=worker_context(), initializer=ignore_ctrl_c),
        )
    return _POOL[1]


def shutdown_pool() -> None:
    """Stop the kept worker processes (also done at exit)."""
    global _POOL
    if _POOL is not None:
        _POOL[1].shutdown()
        _POOL = None


atexit.register(shutdown_pool)


def _run_pool(function, tasks, units, workers, bar) -> list:
    pool = _pool(workers)
    results: list = [None] * len(tasks)
    futures = {pool.submit(function, task): i for i, task in enumerate(tasks)}
    try:
        for future in as_completed(futures):
            i = futures[future]
            results[i] = future.result()
            bar.update(units[i])
    except BrokenProcessPool:
        _abandon_pool()
        raise RuntimeError(
            "a worker process died before finishing its task. In a script, the usual cause is a missing "
            '`if __name__ == "__main__":` guard: workers are spawned, and each re-runs the script\'s top level, so '
            "the code that starts a match must sit under that guard; otherwise a worker ran out of memory or "
            "crashed (workers=1 runs everything in this process)"
        ) from None
    except BaseException:
        _abandon_pool()  # a broken or interrupted pool is not reused
        raise
    return results


def _abandon_pool() -> None:
    """Drop the kept pool without waiting (Ctrl-C, an error).

    Queued tasks are cancelled, and running ones end on their own (numba tasks are capped at a fraction of a second;
    workers ignore Ctrl-C). Terminating workers instead can cut a result in half and leave the pool's thread waiting for
    the rest.
    """
    global _POOL
    if _POOL is not None:
        _POOL[1].shutdown(wait=False, cancel_futures=True)
        _POOL = None


def require_ray():
    """The ``ray`` module, or :class:`~urgym.MissingExtraError` saying how to install it."""
    return require_extra("ray", "ray", "the ray backend")


def _run_ray(function, tasks, units, ray_address, bar) -> list:
    ray = require_ray()
    if not ray.is_initialized():
        ray.init(address=ray_address, include_dashboard=False, log_to_driver=False)
    remote = ray.remote(function)
    pending = {remote.remote(task): i for i, task in enumerate(tasks)}
    results: list = [None] * len(tasks)
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            i = pending.pop(ref)
            results[i] = ray.get(ref)
            bar.update(units[i])
    return results
