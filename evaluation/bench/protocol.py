"""A protocol run: an algorithm trained on a task under every seed, or an agent scored under the task.

Any learner runs it, urgym's own or a stranger's (:mod:`urgym.evaluation.training.learner`: a name, an entry point,
``FILE.py:CLASS``): the protocol owns everything but learning. Each seed is one run of the one training loop
(:func:`urgym.evaluation.training.run.train`) with the task's budget and schedule and its metrics at every point.

A run folder holds ``run.json`` (what the run is: the task, the algorithm and every setting, the overrides given, the
seeds), one folder per seed (``seed-0/``: the training run's model, curve and logs, and ``seed.json``, that seed's
curve and final figures once it is done), and at the end ``results.json``
(:mod:`urgym.evaluation.bench.results`) and ``curves.png``. An interrupted run resumes seed by seed: a finished seed
is kept, an unfinished one goes on from its last evaluation point's checkpoint (every learner that gives its state:
all of urgym's) or else is trained again from its start. Either way nothing changes: a seed's result depends only on
the task, the algorithm, its settings and the seed, and a run resumed from a checkpoint ends exactly as an
uninterrupted one. A seed's record says where it was resumed (``resumed_at``).

Each seed trains and is measured on one core (torch and numba on one thread each), so its figures do not depend on
how many seeds run at once; ``jobs`` seeds run at once in processes of their own.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import shutil
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from urgym.agents import make_agent
from urgym.evaluation.bench.metrics import TaskEvaluator, table_facts
from urgym.evaluation.bench.provenance import figures_digest, machine, provenance, utc_now
from urgym.evaluation.bench.results import (
    RESULT_FORMAT,
    ResultError,
    load_run,
    load_seed_record,
    plot_seed_curves,
    summarize,
    validate_result,
)
from urgym.evaluation.bench.tasks import Task
from urgym.evaluation.training.algorithms import algorithm_names, get_algorithm
from urgym.evaluation.training.checkpoint import CHECKPOINT
from urgym.evaluation.training.learner import Algorithm, with_settings
from urgym.evaluation.training.run import RunPlan, train
from urgym.solver import table_for

import urgym
from urgym.checks import plural
from urgym.files import (
    CLAIM_NAME,
    check_not_broken_link,
    check_output,
    claim_folder,
    release_folder,
    require_extra,
    write_atomic,
)
from urgym.startup import ignore_ctrl_c, worker_context
from urgym.threads import one_thread

__all__ = [
    "SEED_MARK",
    "SeedRun",
    "bench_algorithm",
    "bench_algorithms",
    "check_run_folder",
    "estimate_minutes",
    "estimate_scoring_minutes",
    "finished_seeds",
    "run_task",
    "score_agent",
    "seed_list",
    "train_seed",
]

_EVAL_SECONDS = {1: 0.1, 2: 0.3, 3: 2.0, 4: 15.0, 5: 80.0, 6: 300.0, 7: 1300.0}
"""Seconds of one exact evaluation point by piece count (measured: a value network, one core)."""
_POLICY_NETWORK_COST = 1.8
"""How many times a value network's point a policy network's takes (measured on finkel 4 and 7): every decision
is asked of the network, where a value network's one-ply choices share the successors' values."""
_UNKNOWN_RATE = 1_000
"""Decisions a second assumed of a learner that does not say (the slowest built-in learner's order)."""


def bench_algorithm(algo: str | Algorithm) -> Algorithm:
    """The algorithm the benchmark trains under ``algo`` (a name, ``FILE.py:CLASS``, ``module:CLASS``, a record).

    Raises:
        ValueError: For an unknown algorithm, or one that learns from the solved table.
    """
    algorithm = algo if isinstance(algo, Algorithm) else get_algorithm(algo, benchmark=True)
    if algorithm.uses_table:
        raise ValueError(
            f"{algorithm.name} learns from the solved table, which the benchmark measures with: it is a train "
            f"algorithm only; the benchmark trains {', '.join(bench_algorithms())} (or FILE.py:CLASS)"
        )
    return algorithm


def bench_algorithms() -> list[str]:
    """The algorithms the benchmark trains by name (urgym's own, those registered and those installed)."""
    return algorithm_names(benchmark=True)


def estimate_minutes(task: Task, algo: str | Algorithm, seeds: int, jobs: int, finished: int = 0) -> float:
    """Minutes training ``seeds`` seeds takes on one core each, ``jobs`` at once, ``finished`` of them already done.

    A learner that does not say how fast it learns is counted at 1,000 decisions a second.
    """
    algorithm = bench_algorithm(algo)
    cost = _POLICY_NETWORK_COST if algorithm.policy_network else 1.0
    final = _EVAL_SECONDS.get(task.pieces, math.inf) * cost
    during = final if task.exact_during else 2.0
    rate = algorithm.decisions_per_second or _UNKNOWN_RATE
    per_seed = task.budget / rate + (len(task.points()) - 1) * during + final
    return per_seed * math.ceil(max(0, seeds - finished) / max(1, jobs)) / 60


def estimate_scoring_minutes(task: Task, spec: str, seed: int = 0) -> float:
    """Minutes :func:`score_agent` takes for ``spec`` on one core.

    Its decisions are timed on a sample; both exact evaluations are counted, a table to solve first is not.
    """
    from urgym.evaluation.scoring.policies import estimate_exact

    with one_thread():  # the agent timed, and the evaluations counted, as the scoring runs them
        return estimate_exact([spec], task.get_rules(), evaluations=2, seed=seed, cache=False).minutes


def seed_list(task: Task, seeds: int | Sequence[int] | None) -> list[int]:
    """The seeds a run trains: the task's (None), 0 to ``seeds`` - 1 (a count), or those given (a range of a table).

    Raises:
        ValueError: For a seed that is no whole number from 0, or one given twice.
    """
    if seeds is None:
        return list(range(task.seeds))
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        return list(range(seeds))
    chosen = list(seeds)
    if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in chosen):
        raise ValueError(f"seeds are whole numbers from 0, got {chosen!r:.80}")
    if len(set(chosen)) != len(chosen):
        raise ValueError(f"each seed once, got {chosen!r:.80}")
    return chosen


def finished_seeds(out: str | Path, seeds: int | Sequence[int], run: SeedRun) -> int:
    """How many of the seeds (0 to ``seeds`` - 1, or those given) have a finished record of ``run`` in ``out``.

    A record counts only where it would be kept: intact, of this run, at the budget (see :func:`run_task`).
    """
    chosen = range(seeds) if isinstance(seeds, int) else seeds
    return sum(_seed_done(_seed_folder(out, seed), seed, run, warn=False) is not None for seed in chosen)


def _seed_folder(out: str | Path, seed: int) -> Path:
    """Where seed ``seed`` of the run in ``out`` trains and keeps its record."""
    return Path(out) / f"seed-{seed}"


def train_seed(
    task: Task,
    algo: str | Algorithm,
    seed: int,
    folder: Path,
    progress: bool = False,
    settings: Any = None,
    lines: bool = False,
) -> dict[str, Any]:
    """Train ``algo`` on ``task`` under ``seed`` into ``folder``; write and return the seed's record.

    The one training loop drives the learner (:func:`urgym.evaluation.training.run.train`): the task's budget and
    schedule, its metrics at each point, a checkpoint at each point where the learner gives its state (an unfinished
    seed goes on from it). ``settings``: the algorithm's settings (default: its defaults). ``lines``: print a line when
    the seed starts and at each point (for logs where no progress bar is drawn).
    """
    algorithm = bench_algorithm(algo)
    settings = algorithm.defaults() if settings is None else settings
    mark_seed_folder(folder, seed)
    origin = provenance()  # the code that trains it: a checkout moved on during a long seed changes nothing here
    with one_thread():
        evaluator = TaskEvaluator(task)
        began = time.perf_counter()
        plan = RunPlan(folder, task.budget, None, seed, progress, True, True, task.eval_every, validation=0)
        name = f"{task.id} {algorithm.name} seed {seed}"
        report = (
            (lambda point: say(f"{name}: {point_line(point)}, {_clock(point['seconds'])} elapsed")) if lines else None
        )
        if lines:
            say(f"{name}: started")
        result = train(algorithm, task, plan, settings, evaluator.table, evaluator.__call__, report)
    curve = [_point(point) for point in result["curve"]]
    record = {
        "seed": seed,
        "decisions": int(result["timesteps"]),
        "wall_seconds": round(time.perf_counter() - began + result["earlier_seconds"], 1),
        "eval_seconds": round(sum(point.get("eval_seconds", 0.0) for point in curve), 1),
        "curve": curve,
        "final": {key: value for key, value in curve[-1].items() if key != "seconds"},
        "machine": machine(),
        "provenance": {**origin, "date": utc_now()},
        **({"resumed_at": result["resumed_at"]} if result.get("resumed_at") else {}),
        **learned_fields(task, algorithm, settings),
    }
    record["digest"] = figures_digest(record)
    write_atomic(folder / "seed.json", lambda tmp: tmp.write_text(json.dumps(record, indent=1)))
    return record


SEED_MARK = ".urgym-seed"
"""The file by which urgym knows a seed folder as its own (the only kind it removes, to train a seed again)."""


def mark_seed_folder(folder: Path, seed: int) -> None:
    """Make ``folder`` a seed folder of urgym's: refuse a link, or a folder of files urgym did not write."""
    if folder.is_symlink():
        raise ValueError(f"{folder} is a symbolic link; a seed's folder must be a real folder inside the run's")
    if folder.exists() and any(folder.iterdir()) and not (folder / SEED_MARK).is_file():
        raise ValueError(
            f"{folder} holds files urgym did not write (no {SEED_MARK}); urgym trains a seed only in a folder it "
            "made: move it, or give another --out"
        )
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / SEED_MARK, lambda tmp: tmp.write_text(json.dumps({"seed": seed}) + "\n"))


def learned_fields(task: Task, algorithm: Algorithm, settings: Any) -> dict[str, Any]:
    """What a seed record names of what it learned: the task (id, digest, rules, budget), the learner, its settings."""
    named = {key: getattr(task, key) for key in ("rules", "pieces", "budget")}
    return json.loads(
        json.dumps(
            {
                "task": {"id": task.id, "digest": task.digest, **named},
                "algo": algorithm.name,
                **({"algorithm_source": algorithm.source} if algorithm.source else {}),
                "settings": dataclasses.asdict(settings),
            }
        )
    )


def say(line: str) -> None:
    """A progress line, flushed at once (a cluster's log shows it as it happens)."""
    print(line, flush=True)


def point_line(point: dict[str, Any]) -> str:
    """An evaluation point's figures in words: decisions and the metrics measured there."""
    decisions = point.get("decisions", point.get("timesteps", 0))
    words = [plural(int(decisions), "decision")]
    if "win_rate" in point:
        words.append(f"win rate {point['win_rate']:.2f}%")
    if "exploitability" in point:
        words.append(f"exploitability {point['exploitability']:.2f}")
    if "test_regret" in point:
        words.append(f"test regret {point['test_regret']:.4f}")
    return ", ".join(words)


def _clock(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{rest:02d}"


def _point(point: dict[str, Any]) -> dict[str, Any]:
    """A point of the run's curve as a seed record holds it: ``decisions`` for ``timesteps``."""
    return {"decisions": int(point["timesteps"]), **{k: v for k, v in point.items() if k != "timesteps"}}


class SeedRun(NamedTuple):
    """What a seed of a run learns: the task, the algorithm and its settings."""

    task: Task
    algorithm: Algorithm
    settings: Any


def _seed_done(folder: Path, seed: int, run: SeedRun, warn: bool = True) -> dict[str, Any] | None:
    """The record of a finished seed of this run, or None (none, or one that is not: trained again, with a warning).

    A record counts only if it is intact (its figures' digest, its final figures its last point's), names this
    run's task, learner and settings, and reached the task's budget.
    """
    path = folder / "seed.json"
    if not path.exists() and not path.is_symlink():
        return None
    try:
        if folder.is_symlink():
            raise ResultError(f"{folder} is a symbolic link, not a seed folder of the run")
        record = load_seed_record(path)
        expected = {"seed": seed, **learned_fields(*run)}
        for key, want in expected.items():
            if record.get(key) != want:
                raise ResultError(f"it names {key} {record.get(key)!r:.60}, not this run's {want!r:.60}")
        if "digest" not in record:
            raise ResultError("it carries no digest of its figures")
        if record["decisions"] < run.task.budget:
            raise ResultError(f"its {record['decisions']:,} decisions fall short of the budget, {run.task.budget:,}")
    except (OSError, ValueError) as err:  # ResultError is a ValueError
        if warn:
            reason = str(err).removeprefix(f"{path}: ")
            warnings.warn(f"{path} is damaged ({reason}); seed {seed} is trained again", stacklevel=3)
        return None
    return record


def check_run_folder(out: Path) -> None:
    """Refuse, before any work, a run folder urgym did not make or could not write its results into.

    A folder that exists and holds files must hold a run's ``run.json`` (urgym removes or replaces only what it wrote
    itself); ``results.json`` and ``curves.png`` must be writable files.

    Raises:
        ValueError: Naming the folder or file and what is allowed.
    """
    check_not_broken_link(out, "a run folder")
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out} is not a folder; --out names a run folder")
    if out.is_dir() and not (out / "run.json").is_file():
        held = sorted(p.name for p in out.iterdir() if p.name != CLAIM_NAME)
        if held:
            raise ValueError(
                f"{out} holds files urgym did not write ({', '.join(held[:3])}{'...' if len(held) > 3 else ''}) and "
                "no run.json: give a new or empty folder (urgym replaces only what it wrote)"
            )
    for name in ("results.json", "curves.png"):
        check_output(out / name)


def run_identity(task: Task, algorithm: Algorithm, settings: Any, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """What a run is, as its ``run.json`` holds it (tuples as lists: read back, it compares equal)."""
    identity = {
        "format": RESULT_FORMAT,
        "task": task.to_dict(),
        "algo": algorithm.name,
        **({"algorithm_source": algorithm.source} if algorithm.source else {}),
        "settings": dataclasses.asdict(settings),
        **({"overrides": dict(overrides)} if overrides else {}),
        "urgym": urgym.__version__,
    }
    return json.loads(json.dumps(identity))


def _comparable(identity: dict[str, Any]) -> dict[str, Any]:
    """A run's identity with its task as what defines it (a record of urgym before tasks had digests compares)."""
    try:
        task = Task.from_dict(identity.get("task", {}))
    except ValueError:
        return identity
    return {**identity, "task": task.digest}


def _check_folder(out: Path, identity: dict[str, Any]) -> None:
    """Refuse a folder that holds another run (another task, algorithm, settings or urgym version)."""
    path = out / "run.json"
    if path.exists():
        try:
            held = load_run(path)
        except (OSError, ValueError) as err:
            raise ValueError(f"{path} is damaged ({err}); give a new --out, or remove the folder") from None
        if _comparable(held) != _comparable(identity):
            raise ValueError(
                f"{out} holds a run of {held.get('algo')!r} on {held.get('task', {}).get('id')!r} with other settings "
                f"or another urgym; give a new --out to run {identity['algo']!r} on {identity['task']['id']!r}"
            )
    else:
        write_atomic(path, lambda tmp: tmp.write_text(json.dumps(identity, indent=1)))


def _run_one(args: tuple[Task, Algorithm, int, Path, dict[str, Any], bool]) -> dict[str, Any]:
    """One seed of a run, in this process or a worker (the settings travel as their plain overrides)."""
    task, algorithm, seed, folder, overrides, lines = args
    settings = with_settings(algorithm, overrides)
    finished = _seed_done(folder, seed, SeedRun(task, algorithm, settings), warn=False)
    if finished is not None:  # a unit retried after its worker wrote the record: never trained twice
        return finished
    cut_short = folder.is_dir() and not folder.is_symlink() and not (folder / CHECKPOINT).exists()
    if cut_short and (folder / SEED_MARK).is_file():  # urgym's own, with no checkpoint: trained again from its start
        shutil.rmtree(folder)
    return train_seed(task, algorithm, seed, folder, settings=settings, lines=lines)


def run_task(
    task: Task,
    algo: str | Algorithm,
    out: str | Path,
    seeds: int | Sequence[int] | None = None,
    jobs: int = 1,
    progress: bool = True,
    on_seed: Callable[[dict[str, Any]], None] | None = None,
    settings: Mapping[str, Any] | None = None,
    lines: bool = False,
    ray: str | None = None,
) -> dict[str, Any]:
    """Train ``algo`` on ``task`` under seeds 0 to ``seeds`` - 1 (default: the task's) or those listed.

    ``jobs`` seeds train at once. ``algo`` is a name, ``FILE.py:CLASS``, ``module:CLASS`` or a record; ``settings``
    overrides its defaults (``--set KEY=VALUE``: text, or values). Finished seeds in ``out`` are kept; the rest are
    trained. Writes and returns ``results.json``'s content: every setting used, the overrides marked. ``lines``: a
    progress line when each seed starts and finishes and at each evaluation point (where no bar is drawn: a log).
    ``ray``: train the seeds as tasks of a Ray cluster instead (:func:`map_ray`; ``"auto"``: the local one or a new
    one), each writing its seed folder under ``out`` (a folder every node sees).

    Raises:
        ValueError: For an unknown algorithm, bad settings, or a folder that holds another run.
        LearnerError: For a learner that fails or breaks the protocol (the seeds finished before are kept).
    """
    algorithm = bench_algorithm(algo)
    chosen = with_settings(algorithm, settings)
    chosen_seeds = seed_list(task, seeds)
    out = Path(out)
    check_run_folder(out)
    out.mkdir(parents=True, exist_ok=True)
    claim_folder(out, "a benchmark run")
    origin = provenance()  # at the start, as each seed's: the code the run loaded
    try:
        facts = _facts(task, progress)  # a missing table solved once, before the seeds' processes need it
        overrides = {key: getattr(chosen, key) for key in settings or {}}
        identity = run_identity(task, algorithm, chosen, overrides)
        _check_folder(out, identity)
        run = SeedRun(task, algorithm, chosen)
        records = {seed: _seed_done(_seed_folder(out, seed), seed, run) for seed in chosen_seeds}
        todo = [
            (task, algorithm, seed, _seed_folder(out, seed), overrides, lines)
            for seed, record in records.items()
            if record is None
        ]
        bar = _bar(len(chosen_seeds), len(records) - len(todo), progress)
        done = len(records) - len(todo)
        if lines:
            kept = f"{plural(done, 'seed')} finished before, " if done else ""
            say(f"{task.id} {algorithm.name}: {kept}{plural(len(todo), 'seed')} to train, {jobs} at once")
        mapped = _map(_run_one, todo, jobs) if ray is None else map_ray(_run_one, todo, ray, lines)
        with contextlib.closing(mapped) as finished:
            for record in finished:
                records[record["seed"]] = record
                bar.update(1)
                done += 1
                if lines:
                    say(
                        f"{task.id} {algorithm.name} seed {record['seed']}: finished in "
                        f"{_clock(record['wall_seconds'])}, {point_line(record['final'])} "
                        f"({done} of {plural(len(chosen_seeds), 'seed')} done)"
                    )
                if on_seed is not None:
                    on_seed(record)
        bar.close()
        extra = {**facts, "machine": machine(), "provenance": {**origin, "date": utc_now()}}
        result = summarize(identity, [records[seed] for seed in chosen_seeds], extra)
        validate_result(result)
        write_atomic(out / "results.json", lambda tmp: tmp.write_text(json.dumps(result, indent=1)))
        plot_seed_curves(result, out / "curves.png")
        return result
    finally:
        release_folder(out)


def _facts(task: Task, progress: bool) -> dict[str, Any]:
    """What a result records of the measuring: of the task's table (solved here if missing or not reproducible)."""
    return table_facts(table_for(task.get_rules(), solve=True, progress=progress, reproducible=True))


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


RAY_RETRIES = 3
"""How many times a unit whose Ray worker was lost is run again (it goes on from its seed's last checkpoint)."""


def map_ray(fn: Callable, items: list, address: str, lines: bool = False) -> Iterator[Any]:
    """``fn`` over ``items`` as tasks of a Ray cluster, one core each, in the order they finish.

    ``address``: the head's (``HOST:PORT``, ``ray://HOST:PORT``), or ``"auto"`` (a cluster this machine runs, else a
    new local one). A task whose worker is lost (a node gone, a process killed) is run again, up to
    :data:`RAY_RETRIES` times; a seed unit then goes on from its last checkpoint. Closed early (Ctrl-C, an error), the
    tasks still running are cancelled.
    """
    ray = require_extra("ray", "ray", "urgym bench --ray")
    if not ray.is_initialized():
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=lines)
        except ConnectionError:
            if address != "auto":
                raise ValueError(f"no Ray cluster answers at {address}; start one with ray start --head") from None
            ray.init(include_dashboard=False, log_to_driver=lines)  # none running here: a new local one
    remote = ray.remote(num_cpus=1, max_retries=RAY_RETRIES)(fn)
    pending = [remote.remote(item) for item in items]
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield ray.get(done[0])
    except BaseException:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise


def _bar(total: int, done: int, progress: bool) -> Any:
    from urgym.progress import progress_bar

    bar = progress_bar(total, "seeds", progress, unit="seed")
    bar.update(done)
    return bar


def score_agent(task: Task, spec: str, seed: int = 0, progress: bool = True) -> dict[str, Any]:
    """Score an agent (a spec) under ``task`` without training: every metric of the task, once."""
    origin = provenance()  # the code that scores, as a trained seed's
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
    extra = {**evaluator.facts(), "machine": machine(), "provenance": {**origin, "date": utc_now()}}
    result = summarize(identity, [record], extra)
    validate_result(result)
    return result
