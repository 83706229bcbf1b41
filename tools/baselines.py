"""The shipped baselines (``urgym/evaluation/bench/baseline-*.json``) brought to the current result format.

Run: ``python -m tools.baselines migrate`` (rewrites the files in place, atomically; run again, it changes nothing),
and ``python -m tools.baselines digests`` after any baseline file changes: it writes the package's list of the shipped
baselines' digests (``baselines.sha256``), by which a result is known as a shipped baseline.
``python -m tools.baselines runs FOLDER ...`` gives the finished seed records of run folders trained before records
named what they learned (their task, learner and settings) those of the folder's ``run.json``, so that the run
resumes or merges without training them again (and marks their seed folders as urgym's: ``.urgym-seed``).

- **Settings**: a learner's settings as urgym records them now, every one of its settings dataclass, defaults
  included. Before the open benchmark the settings held the run's ``eval_every`` and ``validation`` (the task's and
  the run's, not the learner's: dropped) and lacked ``threads`` where urgym 0.6.0 had none (1, as it trained). Any
  other difference from the defaults stops the migration: the figures would not be the defaults'.
- **Provenance**: each seed without one gets the urgym version that made it, with the commit, command and date
  unknown (null), and ``machine`` ``"unknown"`` where it recorded none; each seed gets the digest of its figures.
- **The task**: with its digest (the id its fields give).
- **The result**: its summary recomputed from its seeds, with the table facts and machine it had.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from importlib import resources
from pathlib import Path
from typing import Any

from urgym.evaluation.bench.protocol import SEED_MARK, bench_algorithm, learned_fields
from urgym.evaluation.bench.provenance import figures_digest
from urgym.evaluation.bench.results import BASELINE_DIGESTS, result_digest, summarize, validate_result
from urgym.evaluation.bench.tasks import Task
from urgym.evaluation.training.learner import with_settings

from urgym.files import write_atomic

RUN_SETTINGS = ("eval_every", "validation")
"""What the settings of a result held before the open benchmark that belongs to the run, not the learner."""


def current_settings(result: dict[str, Any]) -> dict[str, Any]:
    """A trained result's settings in the current form, checked to be its algorithm's defaults.

    Raises:
        ValueError: For a setting that differs from the default (the migration cannot vouch for it).
    """
    algorithm = bench_algorithm(result["algo"])
    defaults = json.loads(json.dumps(dataclasses.asdict(algorithm.defaults())))
    held = {key: value for key, value in result.get("settings", {}).items() if key not in RUN_SETTINGS}
    differ = sorted(key for key, value in held.items() if defaults.get(key) != value)
    if differ:
        raise ValueError(f"{result['task']['id']} {result['algo']}: settings {differ} are not the defaults")
    return defaults


def migrate(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` in the current format (see the module docstring)."""
    identity_keys = ("format", "task", "algo", "agent", "algorithm_source", "overrides", "urgym")
    identity = {key: result[key] for key in identity_keys if key in result}
    identity["task"] = Task.from_dict(result["task"]).to_dict()  # with its digest
    if "algo" in result:
        identity["settings"] = current_settings(result)
    records = []
    for record in result["per_seed"]:
        record = dict(record)
        record.setdefault("machine", "unknown")
        record.setdefault(
            "provenance", {"urgym": result["urgym"], "commit": None, "modified": None, "command": None, "date": None}
        )
        record["digest"] = figures_digest(record)
        records.append(record)
    facts = {key: result[key] for key in ("table_hash", "test_set_version", "machine", "provenance") if key in result}
    migrated = summarize(identity, records, facts)
    for key in ("verifications",):
        if key in result:
            migrated[key] = result[key]
    validate_result(migrated)
    return migrated


def migrate_run(folder: Path) -> int:
    """Name, in each finished seed record of run ``folder``, the task, learner and settings of its ``run.json``."""
    run = json.loads((folder / "run.json").read_text())
    algorithm = bench_algorithm(run.get("algorithm_source") or run["algo"])
    settings = with_settings(algorithm, run.get("overrides"))
    if json.loads(json.dumps(dataclasses.asdict(settings))) != run["settings"]:
        raise ValueError(f"{folder}: its settings are not {algorithm.name}'s defaults with its overrides")
    named = learned_fields(Task.from_dict(run["task"]), algorithm, settings)
    for seed_folder in sorted(folder.glob("seed-*")):  # urgym made them (the run.json says so): its mark
        if seed_folder.is_dir() and not seed_folder.is_symlink() and not (seed_folder / SEED_MARK).exists():
            seed = int(seed_folder.name.removeprefix("seed-"))
            (seed_folder / SEED_MARK).write_text(json.dumps({"seed": seed}) + "\n")
    changed = 0
    for path in sorted(folder.glob("seed-*/seed.json")):
        record = json.loads(path.read_text())
        if any(record.get(key) != value for key, value in named.items()):
            record.update(named)
            record["digest"] = figures_digest(record)
            write_atomic(path, lambda tmp, r=record: tmp.write_text(json.dumps(r, indent=1)))
            changed += 1
    return changed


def baseline_files() -> list[Path]:
    """The shipped baseline files, in the source tree."""
    folder = Path(str(resources.files("urgym.evaluation.bench")))
    return sorted(folder.glob("baseline-*.json"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["migrate", "digests", "runs"])
    parser.add_argument("folders", nargs="*", type=Path)
    args = parser.parse_args()
    if args.action == "runs":
        for folder in args.folders:
            print(f"{folder}: {migrate_run(folder)} seed records named what they learned")
        return
    if args.action == "digests":
        lines = [f"{result_digest(json.loads(path.read_text()))}  {path.name}\n" for path in baseline_files()]
        listing = baseline_files()[0].parent / BASELINE_DIGESTS
        write_atomic(listing, lambda tmp: tmp.write_text("".join(lines)))
        print(f"wrote {listing}: {len(lines)} baselines")
        return
    for path in baseline_files():
        before = json.loads(path.read_text())
        after = migrate(before)
        if after != before:
            write_atomic(path, lambda tmp, a=after: tmp.write_text(json.dumps(a, indent=1)))
            print(f"migrated {path.name}")


if __name__ == "__main__":
    main()
