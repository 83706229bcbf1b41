"""``urgym bench --verify``: a result checked by training its seeds again and comparing, figure by figure.

A seed's figures depend only on the task, the learner, its settings and the seed, given the same library versions on
the same kind of processor (a library may choose its kernels by the processor's vector instructions, and a kernel
that rounds differently sends training down another path). :func:`verify` reruns the seeds asked for with this
machine's urgym and compares every metric at every point with the record: bit-identical, or which figures differ and
by how much, with what could explain it (other library versions, other vector instructions, another urgym, another
solved table). A
scored agent is scored again the same way. The report can be recorded in the result (``verifications``), where a
merge finds the libraries that stand for seeds that record none.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from urgym.evaluation.bench.metrics import local_table_facts
from urgym.evaluation.bench.protocol import bench_algorithm, score_agent, train_seed
from urgym.evaluation.bench.provenance import figures, figures_digest, machine, provenance
from urgym.evaluation.bench.tasks import Task
from urgym.evaluation.training.learner import with_settings

import urgym

__all__ = ["MAX_DIFFERENCES", "result_task", "verify"]

MAX_DIFFERENCES = 20
"""The differing figures a report lists per seed (it counts them all)."""


def result_task(result: dict[str, Any]) -> Task:
    """The task a result was trained under, from the fields it records.

    Raises:
        ValueError: For fields that make no task, or an id or digest they do not give.
    """
    return Task.from_dict(result["task"])


def _rerun(result: dict[str, Any], task: Task, seed: int) -> dict[str, Any]:
    """Seed ``seed`` of the result, trained (or scored) again here."""
    if "agent" in result:
        return score_agent(task, result["agent"], seed, progress=False)["per_seed"][0]
    algorithm = bench_algorithm(result.get("algorithm_source") or result["algo"])
    settings = with_settings(algorithm, result.get("overrides"))
    recorded = result.get("settings")
    if recorded is not None and recorded != _plain(dataclasses.asdict(settings)):
        differ = sorted(
            k
            for k in {*recorded, *dataclasses.asdict(settings)}
            if recorded.get(k) != _plain(getattr(settings, k, None))
        )
        raise ValueError(
            f"the result's settings are not {algorithm.name}'s defaults with its overrides here ({', '.join(differ)} "
            "differ): urgym cannot train it again as it was"
        )
    with tempfile.TemporaryDirectory(prefix="urgym-verify-") as folder:
        return train_seed(task, algorithm, seed, Path(folder) / f"seed-{seed}", settings=settings)


def _plain(value: Any) -> Any:
    """A setting as JSON holds it (tuples as lists)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return [_plain(v) for v in value] if isinstance(value, (list, tuple)) else value


def _compare(recorded: dict[str, Any], rerun: dict[str, Any]) -> list[dict[str, Any]]:
    """Every figure that differs: where (the point's decisions, or ``final``), which metric, both values."""
    a, b = figures(recorded), figures(rerun)
    pairs = [(str(p.get("decisions")), p, q) for p, q in zip(a["curve"], b["curve"], strict=False)]
    pairs.append(("final", a["final"], b["final"]))
    differences = []
    if len(a["curve"]) != len(b["curve"]):
        differences.append({"at": "curve", "metric": "points", "recorded": len(a["curve"]), "rerun": len(b["curve"])})
    for at, p, q in pairs:
        for metric in dict.fromkeys([*p, *q]):
            if p.get(metric) != q.get(metric):
                differences.append({"at": at, "metric": metric, "recorded": p.get(metric), "rerun": q.get(metric)})
    if a["decisions"] != b["decisions"]:
        differences.append({"at": "seed", "metric": "decisions", "recorded": a["decisions"], "rerun": b["decisions"]})
    return differences


TABLE_BITS = (
    "a table solved on more than one thread ends, within the solver's tolerance, at last bits that depend on the "
    "thread count and timing, and the exact metrics follow them"
)
"""Why two solves of one rule set can differ (see benchmarks/RESULTS.md, "Bits of a solved table")."""


def _explanations(record: dict[str, Any], here: dict[str, Any], tables: tuple[Any, Any]) -> list[str]:
    """What could make a rerun differ from its record: another table, other libraries, vector instructions or urgym.

    ``tables``: the result's table hash and this machine's.
    """
    reasons = []
    if tables[0] is not None and tables[0] != tables[1]:
        reasons.append(f"measured with another solved table ({tables[0]} there, {tables[1]} here): {TABLE_BITS}")
    there = record.get("machine")
    if not isinstance(there, dict):
        reasons.append(
            "the record names no machine or library versions (trained before urgym 0.7.0); rerun here with "
            f"{', '.join(here['vector_instructions']) or 'no vector instructions'}: a machine with others may rerun it"
        )
    else:
        for name, version in sorted(there.get("libraries", {}).items()):
            mine = here["libraries"].get(name)
            if mine is not None and mine != version:
                reasons.append(f"{name} {version} there, {mine} here")
        theirs, mine = set(there.get("vector_instructions", [])), set(here["vector_instructions"])
        if theirs != mine:
            reasons.append(
                f"other vector instructions (there only: {', '.join(sorted(theirs - mine)) or 'none'}; here only: "
                f"{', '.join(sorted(mine - theirs)) or 'none'})"
            )
    version = (record.get("provenance") or {}).get("urgym")
    if version and version != urgym.__version__:
        reasons.append(f"urgym {version} there, {urgym.__version__} here")
    return reasons


def verify(result: dict[str, Any], seeds: Sequence[int] | None = None) -> dict[str, Any]:
    """Train (or score) ``seeds`` of ``result`` again (default: every seed) and compare each figure.

    Returns the report: this machine and run's provenance, and per seed whether every figure is the same to the bit,
    the rerun's digest, the differing figures (the first :data:`MAX_DIFFERENCES`) and what could explain them.

    Raises:
        ValueError: For a seed the result does not hold, a task or settings urgym cannot train again as they were.
    """
    task = result_task(result)
    records = {record["seed"]: record for record in result["per_seed"]}
    chosen = list(records) if seeds is None else list(seeds)
    missing = [seed for seed in chosen if seed not in records]
    if missing:
        raise ValueError(f"the result holds no seed {missing[0]}; its seeds: {', '.join(map(str, records))}")
    here = machine()
    tables = (result.get("table_hash"), local_table_facts(task)["table_hash"])
    checked = []
    for seed in chosen:
        record, rerun = records[seed], _rerun(result, task, seed)
        differences = _compare(record, rerun)
        checked.append(
            {
                "seed": seed,
                "identical": not differences,
                "digest": figures_digest(rerun),
                "figures": sum(len(p) for p in figures(record)["curve"]) + len(figures(record)["final"]),
                "differing": len(differences),
                "differences": differences[:MAX_DIFFERENCES],
                **({"explanations": _explanations(record, here, tables)} if differences else {}),
            }
        )
    return {"provenance": provenance(), "machine": here, "seeds": checked}
