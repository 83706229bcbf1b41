"""``urgym bench --merge``: seeds of one table run in several places joined into one result.

A table's seeds may be trained anywhere (``--seed-range 5:10`` on another machine, a Slurm array job per range, a
Ray cluster): :func:`merge_runs` joins the seed records of run folders and result files of the same task, the same
algorithm (or agent), the same settings and the same library versions into one result, and refuses anything else,
saying what differs. A seed given twice is kept once if its figures are the same to the bit (its digest), refused if
not. A seed that records no library versions (trained by urgym before 0.7.0) joins only where its result carries a
verification that reran its seeds bit-identically (``urgym bench --verify --record``), whose libraries then stand for
it. The merged folder is a run folder like any other: ``run.json``, ``seed-N/seed.json``, ``results.json`` and
``curves.png``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from urgym.evaluation.bench.metrics import local_table_facts
from urgym.evaluation.bench.protocol import check_run_folder, mark_seed_folder
from urgym.evaluation.bench.provenance import figures_digest, machine, provenance
from urgym.evaluation.bench.results import (
    RESULT_FORMAT,
    ResultError,
    load_result,
    load_run,
    load_seed_record,
    plot_seed_curves,
    summarize,
    validate_result,
)
from urgym.evaluation.bench.tasks import Task

import urgym
from urgym.files import claim_folder, release_folder, write_atomic

__all__ = ["IDENTITY", "Source", "merge_runs", "read_source"]

IDENTITY = ("task", "algo", "agent", "algorithm_source", "settings", "overrides")
"""What the sources of one result must share (a result's urgym version may differ: each seed names its own)."""


class Source(NamedTuple):
    """A run folder or a result file, as a merge reads it."""

    path: Path
    identity: dict[str, Any]
    records: list[dict[str, Any]]
    verifications: list[dict[str, Any]]


def read_source(path: str | Path) -> Source:
    """A run folder's finished seeds (``run.json`` and ``seed-N/seed.json``), or a result file's seeds.

    Raises:
        ResultError: For a folder that holds no run, a damaged record, or a file that is no result (named).
    """
    path = Path(path)
    if path.is_dir():
        if not (path / "run.json").is_file():
            raise ResultError(f"{path} is no run folder of urgym bench (it has no run.json)")
        identity = load_run(path / "run.json")
        records = []
        for folder in sorted(path.glob("seed-*"), key=lambda p: (len(p.name), p.name)):
            record_path = folder / "seed.json"
            if folder.is_dir() and not folder.is_symlink() and record_path.is_file():
                records.append(load_seed_record(record_path))
        if not records:
            raise ResultError(f"{path} holds no finished seed (no seed-N/seed.json)")
        return Source(path, identity, records, [])
    result = load_result(path)
    return Source(path, result, result["per_seed"], list(result.get("verifications", [])))


def _identity_of(held: dict[str, Any]) -> dict[str, Any]:
    """What sources of one result share (:data:`IDENTITY`), the task by what defines it (its id and digest)."""
    identity = {key: held.get(key) for key in IDENTITY}
    identity["overrides"] = identity["overrides"] or {}  # none changed: recorded as {} or, by older runs, not at all
    task = Task.from_dict(held["task"])
    identity["task"] = {"id": task.id, "digest": task.digest}
    return identity


def _differences(a: Any, b: Any, where: str = "") -> list[str]:
    """Where two identities differ, as ``settings.alpha: 0.1 / 0.2``."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = list(dict.fromkeys([*a, *b]))
        return [line for key in keys for line in _differences(a.get(key), b.get(key), f"{where}.{key}".lstrip("."))]
    return [] if a == b else [f"{where}: {json.dumps(a)[:60]} / {json.dumps(b)[:60]}"]


def _libraries(record: dict[str, Any], source: Source) -> dict[str, str] | None:
    """The library versions a seed was trained with: its own, or those of a verification that reran it."""
    recorded = record.get("machine")
    if isinstance(recorded, dict) and recorded.get("libraries"):
        return recorded["libraries"]
    for verification in source.verifications:
        seeds = verification.get("seeds", [])
        if seeds and all(seed.get("identical") for seed in seeds):
            return verification["machine"]["libraries"]
    return None


def merge_runs(sources: Sequence[str | Path], out: str | Path) -> dict[str, Any]:
    """Join the seeds of ``sources`` (run folders or result files) into one result in run folder ``out``.

    Returns the result (``out/results.json``).

    Raises:
        ValueError: For sources of another task, algorithm, settings or library versions (saying what differs), a
            seed given twice with other figures, or an ``out`` that holds another run.
    """
    if len(sources) < 2:
        raise ValueError("--merge joins at least two run folders or result files")
    read = [read_source(path) for path in sources]
    first = read[0]
    for other in read[1:]:
        differ = _differences(_identity_of(first.identity), _identity_of(other.identity))
        if differ:
            raise ValueError(
                f"{other.path} is not a run of {first.path}'s task, learner and settings: {'; '.join(differ[:4])}"
            )
    records: dict[int, tuple[dict[str, Any], Source]] = {}
    for source in read:
        for record in source.records:
            held = records.get(record["seed"])
            if held is not None and figures_digest(held[0]) != figures_digest(record):
                raise ValueError(
                    f"seed {record['seed']} is in {held[1].path} and {source.path} with other figures; give one"
                )
            records.setdefault(record["seed"], (record, source))
    _check_libraries(records)
    identity = {
        "format": RESULT_FORMAT,
        **{key: first.identity[key] for key in IDENTITY if key in first.identity},
        "urgym": urgym.__version__,
    }
    identity["task"] = Task.from_dict(first.identity["task"]).to_dict()
    ordered = [records[seed][0] for seed in sorted(records)]
    extra = {**_table_facts(read), "machine": machine(), "provenance": provenance()}
    verifications = [v for source in read for v in source.verifications]
    result = summarize(identity, ordered, extra)
    if verifications:
        result["verifications"] = verifications
    validate_result(result)
    _write(Path(out), identity, ordered, result)
    return result


def _check_libraries(records: dict[int, tuple[dict[str, Any], Source]]) -> None:
    """Refuse seeds trained with other versions of a library both record, or with versions unknown."""
    known: dict[str, tuple[str, int]] = {}
    for seed, (record, source) in sorted(records.items()):
        libraries = _libraries(record, source)
        if libraries is None:
            raise ValueError(
                f"seed {seed} of {source.path} records no library versions and no verification reran it "
                "bit-identically: run urgym bench --verify FILE --record on it first"
            )
        for name, version in libraries.items():
            held = known.setdefault(name, (version, seed))
            if held[0] != version:
                raise ValueError(
                    f"seed {seed} of {source.path} was trained with {name} {version}, seed {held[1]} with {held[0]}: "
                    "seeds of one result share their library versions"
                )


def _table_facts(read: list[Source]) -> dict[str, Any]:
    """The table's hash and the test set's version all sources were measured with.

    A run folder's are this machine's table of the task, which its seeds were measured with.
    """
    local: dict[str, Any] = {}
    seen: dict[tuple[Any, Any], Path] = {}
    for source in read:
        if "table_hash" in source.identity:
            facts = {key: source.identity[key] for key in ("table_hash", "test_set_version")}
        else:
            local = local or local_table_facts(Task.from_dict(source.identity["task"]))
            facts = local
        seen.setdefault((facts["table_hash"], facts["test_set_version"]), source.path)
    if len(seen) > 1:
        named = "; ".join(f"{path}: table {h[:12]}, test set v{v}" for (h, v), path in seen.items())
        raise ValueError(f"the sources were measured with other tables or test sets ({named})")
    (table_hash, version), _ = seen.popitem()
    return {"table_hash": table_hash, "test_set_version": version}


def _write(out: Path, identity: dict[str, Any], records: list[dict[str, Any]], result: dict[str, Any]) -> None:
    """The merged run folder: refused where ``out`` holds another run; its seeds' records, result and curves."""
    check_run_folder(out)  # a folder of the user's files is refused: urgym replaces only what it wrote
    out.mkdir(parents=True, exist_ok=True)
    claim_folder(out, "a merged benchmark run")
    try:
        held = out / "run.json"
        if held.exists():
            differ = _differences(_identity_of(load_run(held)), _identity_of(identity))
            if differ:
                raise ValueError(f"{out} holds another run ({'; '.join(differ[:3])}); give a new --out")
        write_atomic(held, lambda tmp: tmp.write_text(json.dumps(identity, indent=1)))
        for record in records:
            folder = out / f"seed-{record['seed']}"
            if not (folder / "seed.json").exists() or figures_digest(load_seed_record(folder / "seed.json")) != (
                figures_digest(record)
            ):
                mark_seed_folder(folder, record["seed"])
                write_atomic(folder / "seed.json", lambda tmp, r=record: tmp.write_text(json.dumps(r, indent=1)))
        write_atomic(out / "results.json", lambda tmp: tmp.write_text(json.dumps(result, indent=1)))
        if result["summary"]["curve"]:
            plot_seed_curves(result, out / "curves.png")
    finally:
        release_folder(out)
