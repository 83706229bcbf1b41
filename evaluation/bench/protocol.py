"""A protocol run: an algorithm trained on a task under every seed, or an agent scored under the task.

A run folder holds ``run.json`` (what the run is: the task, the algorithm and its settings, the seeds), one folder
per seed (``seed-0/``: the training run's models, curve and logs, and ``seed.json``, that seed's curve and final
figures once it is done), and at the end ``results.json`` (:mod:`urgym.evaluation.bench.results`) and
``curves.png``. An interrupted run resumes seed by seed: a finished seed is kept, an unfinished one goes on from its
checkpoint (``maskable-ppo``, ``dqn`` and ``alphazero`` write one at each evaluation point) or else is trained again
from its start. Either way nothing changes: a seed's result depends only on the task, the algorithm and the seed, and
a run resumed from a checkpoint ends exactly as an uninterrupted one. A seed's record says where it was resumed
(``resumed_at``).

Each seed trains and is measured on one core (torch and numba on one thread each), so its figures do not depend on
how many seeds run at once; ``jobs`` seeds run at once in processes of their own.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import platform
import shutil
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from urgym.agents import make_agent
from urgym.evaluation.bench.metrics import TaskEvaluator
from urgym.evaluation.bench.results import (
    RESULT_FORMAT,
    ResultError,
    plot_seed_curves,
    summarize,
    validate_result,
    validate_seed_record,
)
from urgym.evaluation.bench.tasks import Task
from urgym.evaluation.training.checkpoint import CHECKPOINT
from urgym.evaluation.training.run import RunPlan

import urgym
from urgym.files import claim_folder, release_folder, write_atomic
from urgym.startup import ignore_ctrl_c, worker_context
from urgym.threads import one_thread

__all__ = [
    "BENCH_ALGORITHMS",
    "estimate_minutes",
    "estimate_scoring_minutes",
    "finished_seeds",
    "machine",
    "run_task",
    "score_agent",
    "train_seed",
]

_RATES = {"td-lambda": 30_000, "expected-td": 15_000, "maskable-ppo": 3_000, "dqn": 3_000, "alphazero": 1_500}
"""Decisions a core trains per second (measured on finkel 4, one core), for the estimate before a run."""
_EVAL_SECONDS = {3: 2.0, 4: 15.0, 5: 80.0, 6: 300.0, 7: 1300.0}
"""Seconds of one exact evaluation point by piece count (measured: a value network, one core)."""

_POLICY_NETWORKS = frozenset({"maskable-ppo", "dqn", "alphazero"})
"""The algorithms whose network chooses the moves itself (the TD learners' value a move's successor)."""
_POLICY_NETWORK_COST = 1.8
"""How many times a value network's point a policy network's takes (measured on finkel 4 and 7): every decision
is asked of the network, where a value network's one-ply choices share the successors' values."""


def _settings(algo: str, task: Task) -> Any:
    from urgym.evaluation.training.alphazero import AlphaZeroSettings
    from urgym.evaluation.training.dqn import DQNSettings
    from urgym.evaluation.training.expected_td import ExpectedTDSettings
    from urgym.evaluation.training.ppo import PPOSettings
    from urgym.evaluation.training.td_lambda import TDLambdaSettings

    settings = {"td-lambda": TDLambdaSettings, "expected-td": ExpectedTDSettings, "maskable-ppo": PPOSettings}
    default = {**settings, "dqn": DQNSettings, "alphazero": AlphaZeroSettings}[algo]()
    return dataclasses.replace(default, eval_every=task.eval_every)


def _trainer(algo: str) -> Callable[..., dict[str, Any]]:
    if algo == "td-lambda":
        from urgym.evaluation.training.td_lambda import train_td_lambda

        return train_td_lambda
    if algo == "expected-td":
        from urgym.evaluation.training.expected_td import train_expected_td

        return train_expected_td
    if algo == "dqn":
        from urgym.evaluation.training.dqn import train_dqn

        return train_dqn
    if algo == "alphazero":
        from urgym.evaluation.training.alphazero import train_alphazero

        return train_alphazero
    from urgym.evaluation.training.ppo import train_ppo

    return train_ppo


BENCH_ALGORITHMS = tuple(_RATES)
"""The algorithms ``urgym bench --algo`` trains (``train``'s names; ``td`` and ``ppo`` are accepted too)."""


_LIBRARIES = ("numpy", "numba", "torch", "stable-baselines3", "sb3-contrib", "jax", "jaxlib", "mctx", "optax")
"""The libraries a learner's figures depend on: a seed gives bit-identical figures only with the same versions."""

_VECTOR_FLAGS = {"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile", "asimd", "sve"}
"""The processor's vector instructions a library may choose its kernels by (and so round differently)."""


def machine() -> dict[str, Any]:
    """The machine a figure was measured on, with the versions of the libraries it used (those installed)."""
    from importlib import metadata

    libraries = {}
    for name in _LIBRARIES:
        with contextlib.suppress(metadata.PackageNotFoundError):
            libraries[name] = metadata.version(name)
    cpu = _first_cpu()
    return {
        "cores": os.cpu_count(),
        "processor": cpu.get("model name") or platform.processor() or platform.machine(),
        "vector_instructions": sorted(set(cpu.get("flags", "").split()) & _VECTOR_FLAGS),
        "python": sys.version,
        "libraries": libraries,
    }


def _first_cpu() -> dict[str, str]:
    """The fields of the first processor in ``/proc/cpuinfo`` (none where there is no such file)."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():
                    break  # the first processor's block ends at the first blank line
                name, _, value = line.partition(":")
                fields[name.strip()] = value.strip()
    except OSError:
        pass
    return fields


def estimate_minutes(task: Task, algo: str, seeds: int, jobs: int, finished: int = 0) -> float:
    """Minutes training ``seeds`` seeds takes on one core each, ``jobs`` at once, ``finished`` of them already done."""
    final = _EVAL_SECONDS.get(task.pieces, math.inf) * (_POLICY_NETWORK_COST if algo in _POLICY_NETWORKS else 1.0)
    during = final if task.exact_during else 2.0
    per_seed = task.budget / _RATES[algo] + (len(task.points()) - 1) * during + final
    return per_seed * math.ceil(max(0, seeds - finished) / max(1, jobs)) / 60


def estimate_scoring_minutes(task: Task, spec: str, seed: int = 0) -> float:
    """Minutes :func:`score_agent` takes for ``spec`` on one core.

    Its decisions are timed on a sample; both exact evaluations are counted, a table to solve first is not.
    """
    from urgym.evaluation.scoring.policies import estimate_exact

    with one_thread():  # the agent timed, and the evaluations counted, as the scoring runs them
        return estimate_exact([spec], task.get_rules(), evaluations=2, seed=seed, cache=False).minutes


def finished_seeds(out: str | Path, seeds: int) -> int:
    """How many of seeds 0 to ``seeds`` - 1 have a record in run folder ``out``.

    The records are not read: a damaged one is found, and its seed trained again, by :func:`run_task`.
    """
    return sum((_seed_folder(out, seed) / "seed.json").is_file() for seed in range(seeds))


def _seed_folder(out: str | Path, seed: int) -> Path:
    """Where seed ``seed`` of the run in ``out`` trains and keeps its record."""
    return Path(out) / f"seed-{seed}"


def train_seed(task: Task, algo: str, seed: int, folder: Path, progress: bool = False) -> dict[str, Any]:
    """Train ``algo`` on ``task`` under ``seed`` into ``folder``; write and return the seed's record."""
    with one_thread():
        evaluator = TaskEvaluator(task)
        began = time.perf_counter()
        plan = RunPlan(folder, task.budget, None, seed, progress, replace=True, resume=True)
        result = _trainer(algo)(
            task.get_rules(), evaluator.table, plan, _settings(algo, task), metrics=evaluator.__call__
        )
        curve = _read_curve(folder / "curve.csv")
    record = {
        "seed": seed,
        "decisions": int(result["timesteps"]),
        "wall_seconds": round(time.perf_counter() - began + result["earlier_seconds"], 1),
        "eval_seconds": round(sum(point.get("eval_seconds", 0.0) for point in curve), 1),
        "curve": curve,
        "final": {key: value for key, value in curve[-1].items() if key not in ("seconds", "mean_regret")},
        "machine": machine(),
        **({"resumed_at": result["resumed_at"]} if result.get("resumed_at") else {}),
    }
    write_atomic(folder / "seed.json", lambda tmp: tmp.write_text(json.dumps(record, indent=1)))
    return record


def _read_curve(path: Path) -> list[dict[str, Any]]:
    """A training run's ``curve.csv`` as points (numbers as numbers; empty cells left out)."""
    import csv

    points = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            point: dict[str, Any] = {}
            for key, text in row.items():
                if text in ("", None):
                    continue
                try:
                    point[key] = int(text) if key == "timesteps" else float(text)
                except ValueError:
                    point[key] = text
            point["decisions"] = point.pop("timesteps")
            points.append(point)
    return points


def _seed_done(folder: Path, seed: int) -> dict[str, Any] | None:
    """The record of a finished seed, None if it has none, or a damaged one (it is trained again, with a warning)."""
    path = folder / "seed.json"
    if not path.exists():
        return None
    try:
        record = json.loads(path.read_text())
        validate_seed_record(record)
        if record["seed"] != seed or not record["curve"]:
            raise ResultError(f"it is not a finished record of seed {seed}")
    except (OSError, ValueError) as err:  # ResultError and JSONDecodeError are ValueErrors
        warnings.warn(f"{path} is damaged ({err}); seed {seed} is trained again", stacklevel=3)
        return None
    return record


def _identity(task: Task, algo: str) -> dict[str, Any]:
    """What a run is, as its ``run.json`` holds it (tuples as lists: read back, it compares equal)."""
    identity = {
        "format": RESULT_FORMAT,
        "task": task.to_dict(),
        "algo": algo,
        "settings": dataclasses.asdict(_settings(algo, task)),
        "urgym": urgym.__version__,
    }
    return json.loads(json.dumps(identity))


def _check_folder(out: Path, identity: dict[str, Any]) -> None:
    """Refuse a folder that holds another run (another task, algorithm, settings or urgym version)."""
    path = out / "run.json"
    if path.exists():
        try:
            held = json.loads(path.read_text())
        except (OSError, ValueError) as err:
            raise ValueError(f"{path} is damaged ({err}); give a new --out, or remove the folder") from None
        if held != identity:
            raise ValueError(
                f"{out} holds a run of {held.get('algo')!r} on {held.get('task', {}).get('id')!r} with other settings "
                f"or another urgym; give a new --out to run {identity['algo']!r} on {identity['task']['id']!r}"
            )
    else:
        write_atomic(path, lambda tmp: tmp.write_text(json.dumps(identity, indent=1)))


def _run_one(args: tuple[Task, str, int, Path]) -> dict[str, Any]:
    task, algo, seed, folder = args
    if folder.exists() and not (folder / CHECKPOINT).exists():
        shutil.rmtree(folder)  # an unfinished seed without a checkpoint: trained again from its start
    return train_seed(task, algo, seed, folder)


def run_task(
    task: Task,
    algo: str,
    out: str | Path,
    seeds: int | None = None,
    jobs: int = 1,
    progress: bool = True,
    on_seed: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Train ``algo`` on ``task`` under seeds 0 to ``seeds`` - 1 (default: the task's), ``jobs`` at once.

    Finished seeds in ``out`` are kept; the rest are trained. Writes and returns ``results.json``'s content.

    Raises:
        ValueError: For an unknown algorithm, or a folder that holds another run.
    """
    if algo not in BENCH_ALGORITHMS:
        raise ValueError(f"unknown algorithm {algo!r}; the benchmark trains {', '.join(BENCH_ALGORITHMS)}")
    seeds = task.seeds if seeds is None else seeds
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    claim_folder(out, "a benchmark run")
    try:
        identity = _identity(task, algo)
        _check_folder(out, identity)
        records = {seed: _seed_done(_seed_folder(out, seed), seed) for seed in range(seeds)}
        todo = [(task, algo, seed, _seed_folder(out, seed)) for seed, record in records.items() if record is None]
        bar = _bar(seeds, len(records) - len(todo), progress)
        with contextlib.closing(_map(_run_one, todo, jobs)) as finished:
            for record in finished:
                records[record["seed"]] = record
                bar.update(1)
                if on_seed is not None:
                    on_seed(record)
        bar.close()
        evaluator_facts = TaskEvaluator(task).facts()
        result = summarize(
            identity, [records[seed] for seed in range(seeds)], {**evaluator_facts, "machine": machine()}
        )
        validate_result(result)
        write_atomic(out / "results.json", lambda tmp: tmp.write_text(json.dumps(result, indent=1)))
        plot_seed_curves(result, out / "curves.png")
        return result
    finally:
        release_folder(out)


def _map(fn: Callable, items: list, jobs: int):
    """``fn`` over ``items`` in this process (``jobs`` 1) or in ``jobs`` processes, in the order they finish.

    Closed early (Ctrl-C, an error), it stops the workers at once: a seed's training can run for hours, and the seed
    goes on from its last checkpoint when the run is started again.
    """
    if jobs <= 1 or len(items) <= 1:
        for item in items:
            yield fn(item)
        return
    pool = worker_context().Pool(jobs, initializer=ignore_ctrl_c)
    try:
        yield from pool.imap_unordered(fn, items)
    except BaseException:
        pool.terminate()
        raise
    pool.close()
    pool.join()


def _bar(total: int, done: int, progress: bool) -> Any:
    from urgym.progress import progress_bar

    bar = progress_bar(total, "seeds", progress, unit="seed")
    bar.update(done)
    return bar


def score_agent(task: Task, spec: str, seed: int = 0, progress: bool = True) -> dict[str, Any]:
    """Score an agent (a spec) under ``task`` without training: every metric of the task, once."""
    with one_thread():
        evaluator = TaskEvaluator(task, progress=progress)
        agent = make_agent(spec, seed=seed)
        began = time.perf_counter()
        final = evaluator(agent, final=True)
    record = {
        "seed": seed,
        "decisions": 0,
        "wall_seconds": round(time.perf_counter() - began, 1),
        "eval_seconds": final["eval_seconds"],
        "curve": [],
        "final": {"decisions": 0, **final},
    }
    identity = {"format": RESULT_FORMAT, "task": task.to_dict(), "agent": spec, "urgym": urgym.__version__}
    result = summarize(identity, [record], {**evaluator.facts(), "machine": machine()})
    validate_result(result)
    return result
