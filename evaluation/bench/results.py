"""Benchmark results: their summary across seeds, their schema, the shipped baselines and the leaderboard.

A result (``results.json``) is versioned JSON holding what it takes to reproduce and compare it: the task and its
version, the algorithm and its settings (or the agent scored), urgym's version, the solved table's hash, the test
set's version, the machine, every seed's curve and final figures, and the mean and 95% interval of each metric
across seeds (:func:`urgym.evaluation.bench.metrics.across_seeds`). Every result, a user's or a shipped baseline,
is checked against one schema (``results.schema.json`` beside this module, JSON Schema) by :func:`validate_result`.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from urgym.evaluation.bench import stats
from urgym.evaluation.bench.metrics import across_seeds
from urgym.evaluation.bench.provenance import figures_digest
from urgym.evaluation.bench.tasks import METRICS
from urgym.evaluation.training.learner import setting_text

from urgym.checks import plural, printable
from urgym.files import read_json, write_atomic

__all__ = [
    "BASELINE_DIGESTS",
    "RESULT_FORMAT",
    "ResultError",
    "baseline_results",
    "check_rankable",
    "is_baseline",
    "leaderboard",
    "load_result",
    "load_run",
    "load_seed_record",
    "plot_curves",
    "plot_seed_curves",
    "result_digest",
    "result_schema",
    "summarize",
    "validate_result",
    "validate_seed_record",
]

RESULT_FORMAT = 1
"""The version of the result format (the schema's ``format``)."""
MAX_RESULT_BYTES = 64 << 20
"""The largest result file read (a result of five seeds is tens of kilobytes)."""
MAX_SEED_BYTES = 4 << 20
"""The largest seed record read (one is a few kilobytes)."""
MAX_RUN_BYTES = 1 << 20
"""The largest ``run.json`` read (one is about a kilobyte)."""


class ResultError(ValueError):
    """A result that is not valid JSON of the result schema, named with what is wrong."""


def summarize(identity: dict[str, Any], records: list[dict[str, Any]], facts: dict[str, Any]) -> dict[str, Any]:
    """A result from its identity, every seed's record and the facts of the measuring (table hash, machine, ...)."""
    finals = [record["final"] for record in records]
    final = {metric: across_seeds([f[metric] for f in finals]) for metric in METRICS}
    final["decisions"] = across_seeds([record["decisions"] for record in records])
    final["wall_seconds"] = across_seeds([record["wall_seconds"] for record in records])
    return {
        **identity,
        **facts,
        "seeds": [record["seed"] for record in records],
        "complete": "agent" in identity or set(range(identity["task"]["seeds"])) <= {r["seed"] for r in records},
        "per_seed": records,
        "summary": {"final": final, "curve": _curve(records)},
    }


def _curve(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The k-th evaluation point of every seed together: mean decisions, and each metric across seeds."""
    length = min(len(record["curve"]) for record in records)
    points = []
    for k in range(length):
        at = [record["curve"][k] for record in records]
        point: dict[str, Any] = {"decisions": round(math.fsum(p["decisions"] for p in at) / len(at))}
        for metric in METRICS:
            if all(metric in p for p in at):
                point[metric] = across_seeds([p[metric] for p in at])
        points.append(point)
    return points


def result_schema() -> dict[str, Any]:
    """The JSON Schema every result follows."""
    text = resources.files("urgym.evaluation.bench").joinpath("results.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


_TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "integer": int,
    "number": (int, float),
    "null": type(None),
}


def _is_type(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    if name == "number" and isinstance(value, float) and not math.isfinite(value):
        return False
    return isinstance(value, _TYPES[name])


def _check(value: Any, schema: dict[str, Any], root: dict[str, Any], where: str) -> None:
    """Check ``value`` against the subset of JSON Schema the result schema uses; raise naming the place."""
    if "$ref" in schema:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[1]]
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(_is_type(value, kind) for kind in kinds):
            raise ResultError(f"{where} must be {' or '.join(kinds)}, got {type(value).__name__} {value!r:.60}")
    if "enum" in schema and value not in schema["enum"]:
        raise ResultError(f"{where} must be one of {schema['enum']}, got {value!r:.60}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise ResultError(f"{where} must be at least {schema['minimum']}, got {value}")
        if "maximum" in schema and value > schema["maximum"]:
            raise ResultError(f"{where} must be at most {schema['maximum']}, got {value}")
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
                raise ResultError(f"{where} lacks {key!r}")
        named = schema.get("properties", {})
        for key, sub in named.items():
            if key in value:
                _check(value[key], sub, root, f"{where}.{key}")
        if isinstance(schema.get("additionalProperties"), dict):
            for key in value.keys() - named.keys():
                _check(value[key], schema["additionalProperties"], root, f"{where}.{key}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            raise ResultError(f"{where} must hold at least {schema['minItems']} items, got {len(value)}")
        if "items" in schema:
            for i, item in enumerate(value):
                _check(item, schema["items"], root, f"{where}[{i}]")


def validate_result(result: Any) -> None:
    """Check a result against the schema, and its seeds against its records.

    Raises:
        ResultError: Naming the first field that is wrong and what it must be.
    """
    schema = result_schema()
    _check(result, schema, schema, "result")
    if ("algo" in result) == ("agent" in result):
        raise ResultError("result must name either the algorithm trained ('algo') or the agent scored ('agent')")
    if result["seeds"] != [record["seed"] for record in result["per_seed"]]:
        raise ResultError("result.seeds must list the seeds of result.per_seed, in order")
    if len(set(result["seeds"])) != len(result["seeds"]):
        raise ResultError(f"result.seeds lists a seed twice ({result['seeds']}): each seed counts once")
    for i, record in enumerate(result["per_seed"]):
        validate_seed_record(record, f"result.per_seed[{i}]")
    _check_summary(result)


def _check_summary(result: dict[str, Any]) -> None:
    """Refuse a result whose summary, or whose word that it is complete, is not what its seeds give."""
    identity = {key: result[key] for key in ("task", "algo", "agent") if key in result}
    try:
        recomputed = summarize(identity, result["per_seed"], {})
    except (KeyError, TypeError, ValueError) as err:
        raise ResultError(f"result.per_seed cannot be summarized ({err})") from None
    if result.get("complete", recomputed["complete"]) != recomputed["complete"]:
        raise ResultError(
            f"result.complete says {result['complete']}, but its seeds {result['seeds']} are "
            f"{'' if recomputed['complete'] else 'not '}every seed of {result['task']['id']}"
        )
    held, want = json.loads(json.dumps(result["summary"])), json.loads(json.dumps(recomputed["summary"]))
    if held != want:
        where = _first_difference(held, want, "result.summary")
        raise ResultError(f"{where} is not what the seeds give: the summary was edited, or the seeds were")


def _first_difference(a: Any, b: Any, where: str) -> str:
    """The first place two JSON values differ, with both values."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in dict.fromkeys([*a, *b]):
            if a.get(key) != b.get(key):
                return _first_difference(a.get(key), b.get(key), f"{where}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{where}[{i}]")
    return f"{where} ({json.dumps(a)[:40]}, the seeds give {json.dumps(b)[:40]})"


def validate_seed_record(record: Any, where: str = "seed record") -> None:
    """Check one seed's record (``seed.json``, an item of ``per_seed``) against the schema.

    Raises:
        ResultError: Naming the first field that is wrong and what it must be.
    """
    schema = result_schema()
    _check(record, schema["properties"]["per_seed"]["items"], schema, where)
    if isinstance(record.get("machine"), str) and record["machine"] != "unknown":
        raise ResultError(f"{where}.machine must be an object or 'unknown', got {record['machine']!r:.60}")
    curve = record["curve"]
    if curve:
        last = {key: value for key, value in curve[-1].items() if key not in ("seconds", "mean_regret")}
        if record["final"] != last:
            raise ResultError(f"{where}.final is not its last point's figures (one of them was edited)")
        decisions = [point["decisions"] for point in curve]
        if decisions != sorted(set(decisions)) or record["decisions"] != decisions[-1]:
            raise ResultError(f"{where}: its points must follow one another, the last at its decisions")
    if "digest" in record and record["digest"] != figures_digest(record):
        raise ResultError(f"{where}.digest is not its figures' (a figure was edited, or the digest)")


def load_result(path: str | Path) -> dict[str, Any]:
    """Read and validate a result file (bounded: a regular file of at most 64 MB, nested at most 64 deep).

    Raises:
        ResultError: For a file that is not a result (naming the file and what is wrong).
    """
    try:
        result = read_json(path, MAX_RESULT_BYTES, "a benchmark result")
        validate_result(result)
    except OSError as err:
        raise ResultError(f"cannot read {path}: {err.strerror or err}") from None
    except ResultError as err:
        raise ResultError(f"{path}: {err}") from None
    except ValueError as err:
        raise ResultError(str(err)) from None
    return result


def load_seed_record(path: str | Path) -> dict[str, Any]:
    """Read and validate a seed's record (``seed.json``; bounded: a regular file of at most 4 MB).

    Raises:
        ResultError: For a file that is not a seed record (naming the file and what is wrong).
        OSError: If it cannot be read.
    """
    try:
        record = read_json(path, MAX_SEED_BYTES, "a seed record")
        validate_seed_record(record)
    except ResultError as err:
        raise ResultError(f"{path}: {err}") from None
    except ValueError as err:
        raise ResultError(str(err)) from None
    return record


def load_run(path: str | Path) -> dict[str, Any]:
    """Read a run folder's ``run.json`` (what the run is; bounded: a regular file of at most 1 MB).

    Raises:
        ResultError: For a file that is not a run's record.
        OSError: If it cannot be read.
    """
    try:
        identity = read_json(path, MAX_RUN_BYTES, "a run's record")
    except ValueError as err:
        raise ResultError(str(err)) from None
    if not isinstance(identity, dict) or not isinstance(identity.get("task"), dict):
        raise ResultError(f"{path} is not a run's record (an object naming its task, algorithm and settings)")
    return identity


BASELINE_DIGESTS = "baselines.sha256"
"""The list, inside the package, of every shipped baseline's digest (:func:`result_digest`) and file name: what marks
a result as a shipped baseline (never a field a file can claim)."""


def result_digest(result: dict[str, Any]) -> str:
    """SHA-256 of a result's content as canonical JSON (keys sorted: the same whatever its file's layout)."""
    text = json.dumps(result, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _shipped_digests() -> dict[str, str]:
    """The shipped baselines' digests, by file name."""
    text = resources.files("urgym.evaluation.bench").joinpath(BASELINE_DIGESTS).read_text(encoding="utf-8")
    return {name: digest for digest, name in (line.split() for line in text.splitlines() if line.strip())}


def baseline_results() -> list[dict[str, Any]]:
    """The baselines that ship with urgym (``baseline-*.json`` beside this module), each validated.

    Raises:
        ResultError: For a shipped file changed since it shipped (its digest not the package's list), or missing.
    """
    folder = resources.files("urgym.evaluation.bench")
    digests = _shipped_digests()
    found = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.startswith("baseline-") and entry.name.endswith(".json"):
            result = json.loads(entry.read_text(encoding="utf-8"))
            validate_result(result)
            if digests.pop(entry.name, None) != result_digest(result):
                raise ResultError(
                    f"the shipped baseline {entry.name} is not the one urgym shipped (its digest is not in "
                    f"{BASELINE_DIGESTS}): reinstall urgym"
                )
            found.append(result)
    if digests:
        raise ResultError(f"the shipped baselines {', '.join(sorted(digests))} are missing: reinstall urgym")
    return found


def is_baseline(result: dict[str, Any]) -> bool:
    """Whether ``result`` is one of the shipped baselines, to the bit (by the package's digest list)."""
    return result_digest(result) in set(_shipped_digests().values())


def check_rankable(result: dict[str, Any]) -> None:
    """Refuse, for the leaderboard, a result of a task that is not one of the benchmark's, or not as it is defined.

    Raises:
        ResultError: Naming the task and what is allowed.
    """
    from urgym.evaluation.bench.tasks import TASKS, Task

    claimed = result["task"].get("id")
    try:
        task = Task.from_dict(result["task"])
    except ValueError as err:
        raise ResultError(f"its task {claimed!r:.40} {err}") from None
    if task.id not in TASKS:
        raise ResultError(
            f"its task {task.id!r:.60} is not one of the benchmark's ({', '.join(TASKS)}), or not as defined there: "
            "its results are not ranked (urgym bench --compare compares them)"
        )


def _interval(summary: dict[str, Any], digits: int) -> str:
    mean = round(summary["mean"], digits) + 0.0  # + 0.0: a rounding error below zero shows as 0.00, not -0.00
    if summary["low95"] is None:
        return f"{mean:.{digits}f}"
    half = (summary["high95"] - summary["low95"]) / 2
    return f"{mean:.{digits}f} ± {half:.{digits}f}"


def _iqm(result: dict[str, Any]) -> str:
    """The interquartile mean of a result's seeds' win rates, with its stratified-bootstrap 95% interval."""
    scores = [np.array([record["final"]["win_rate"] for record in result["per_seed"]])]
    if len(scores[0]) == 1:
        return f"{scores[0][0]:.2f}"
    return stats.interval("iqm", scores).text(2)


def leaderboard(results: Iterable[dict[str, Any]]) -> str:
    """A table of results by task, best win rate first.

    Each metric's mean ± the half-width of its 95% Student's t interval across seeds, and the win rate's interquartile
    mean with its stratified-bootstrap 95% interval (:mod:`urgym.evaluation.bench.stats`). A row says whether it is a
    shipped baseline (by the package's digest list: :func:`is_baseline`) or a result given; a result given twice, or
    the same seeds in two files, is listed once, with a note.
    """
    by_task: dict[str, list[dict[str, Any]]] = {}
    changed: list[str] = []
    notes: list[str] = []
    seen: dict[str, str] = {}
    for result in results:
        key = result_digest(result)
        runs = _run_key(result)
        name = printable(str(result.get("algo") or result.get("agent")))
        if key in seen or runs in seen:
            task = printable(result["task"]["id"])
            notes.append(f"{name} on {task} given again ({seen.get(key) or seen[runs]}): listed once")
            continue
        seen[key], seen[runs] = "the same file", "the same seeds in another file"
        by_task.setdefault(result["task"]["id"], []).append(result)
    lines = []
    for task, group in sorted(by_task.items()):
        lines += [
            printable(task),
            f"  {'learner':<26} {'from':<8} {'seeds':>5} {'vs perfect (%)':>16} {'IQM [95% interval]':>22} "
            f"{'exploitability':>16} {'test regret':>16} {'decisions':>11} {'minutes':>8}",
        ]
        group.sort(key=lambda r: -r["summary"]["final"]["win_rate"]["mean"])
        for result in group:
            final = result["summary"]["final"]
            name = printable(result.get("algo") or result["agent"])  # a submitted result's words are a stranger's
            if result.get("overrides"):
                changed.append(f"{name} {', '.join(f'{k}={setting_text(v)}' for k, v in result['overrides'].items())}")
                name += "†"
            seeds = f"{len(result['seeds'])}" + ("" if result.get("complete", True) else "*")
            source = "shipped" if is_baseline(result) else "given"
            lines.append(
                f"  {name:<26.26} {source:<8} {seeds:>5} {_interval(final['win_rate'], 2):>16} {_iqm(result):>22} "
                f"{_interval(final['exploitability'], 2):>16} {_interval(final['test_regret'], 4):>16} "
                f"{final['decisions']['mean']:>11,.0f} {final['wall_seconds']['mean'] / 60:>8.1f}"
            )
    if any(not r.get("complete", True) for group in by_task.values() for r in group):
        lines.append("  * fewer seeds than the task asks for")
    for line in changed:
        lines.append(printable(f"  † settings changed from the algorithm's defaults (--set): {line}"))
    lines += [f"  note: {note}" for note in notes]
    return "\n".join(lines)


def _run_key(result: dict[str, Any]) -> str:
    """What makes two files the same run: the learner, the task and every seed's figures."""
    figures = sorted(record.get("digest") or figures_digest(record) for record in result["per_seed"])
    who = [result.get("algo"), result.get("agent"), result.get("overrides"), result["task"].get("id")]
    return hashlib.sha256(json.dumps([who, figures], sort_keys=True).encode()).hexdigest()


def plot_seed_curves(result: dict[str, Any], path: str | Path) -> Path:
    """Plot a result's learning curves: each metric's mean across seeds against decisions, with its 95% band."""
    name = result.get("algo") or result.get("agent")
    title = f"{name} on {result['task']['id']} ({plural(len(result['seeds']), 'seed')}, mean and 95% interval)"
    return plot_curves([result], path, title)


_LABELS = {"win_rate": "vs perfect play (%)", "exploitability": "exploitability (points)", "test_regret": "test regret"}


def plot_curves(results: list[dict[str, Any]], path: str | Path, title: str = "") -> Path:
    """Plot the learning curves of trained results of one task side by side: per metric, each mean and 95% band."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    trained = [r for r in results if r["summary"]["curve"]]
    if not trained or len({r["task"]["id"] for r in trained}) != 1:
        raise ValueError("give the results of trained runs of one task to plot their curves together")
    metrics = [m for m in METRICS if any(m in point for r in trained for point in r["summary"]["curve"])]
    # One decisions axis from 0 for every panel: a metric measured at the end alone is placed within the budget.
    fig, axes = plt.subplots(
        1, len(metrics), figsize=(4.2 * len(metrics), 3.4), layout="constrained", squeeze=False, sharex=True
    )
    for ax, metric in zip(axes[0], metrics, strict=True):
        for result in trained:
            points = [p for p in result["summary"]["curve"] if metric in p]
            xs = [p["decisions"] for p in points]
            line = ax.plot(xs, [p[metric]["mean"] for p in points], marker="o", markersize=3, label=result["algo"])
            if all(p[metric]["low95"] is not None for p in points):
                lows, highs = [p[metric]["low95"] for p in points], [p[metric]["high95"] for p in points]
                if len(points) == 1:  # a metric measured at the end only (finkel-7-v1's exact ones): a bar, not a band
                    mean = points[0][metric]["mean"]
                    ax.errorbar(
                        xs, [mean], yerr=[[mean - lows[0]], [highs[0] - mean]], capsize=5, color=line[0].get_color()
                    )
                else:
                    ax.fill_between(xs, lows, highs, alpha=0.2, color=line[0].get_color())
        ax.set_xlabel("decisions (the learner's moves)")
        ax.set_ylabel(_LABELS[metric])
    axes[0][0].set_xlim(left=0)
    if len(trained) > 1:
        axes[0][0].legend(fontsize="small")
    fig.suptitle(title or f"{trained[0]['task']['id']}: mean and 95% interval across seeds")
    out = write_atomic(path, lambda tmp: fig.savefig(tmp, format="png"))
    plt.close(fig)
    return out
