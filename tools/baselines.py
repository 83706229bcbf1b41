"""The shipped baselines (``urgym/evaluation/bench/baseline-*.json``) brought to the current result format.

Run: ``python -m tools.baselines migrate`` (rewrites the files in place, atomically; run again, it changes nothing).

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

from urgym.evaluation.bench.protocol import bench_algorithm
from urgym.evaluation.bench.provenance import figures_digest
from urgym.evaluation.bench.results import summarize, validate_result
from urgym.evaluation.bench.tasks import Task

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


def baseline_files() -> list[Path]:
    """The shipped baseline files, in the source tree."""
    folder = Path(str(resources.files("urgym.evaluation.bench")))
    return sorted(folder.glob("baseline-*.json"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["migrate"])
    parser.parse_args()
    for path in baseline_files():
        before = json.loads(path.read_text())
        after = migrate(before)
        if after != before:
            write_atomic(path, lambda tmp, a=after: tmp.write_text(json.dumps(a, indent=1)))
            print(f"migrated {path.name}")


if __name__ == "__main__":
    main()
