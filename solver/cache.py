"""Where solved tables are cached, and loading one or solving it on first use."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from solver.table import SolvedTable, rules_to_dict
from urgym import Rules, get_rules

__all__ = ["cache_dir", "cached_table_path", "load_or_solve"]


def cache_dir() -> Path:
    """``$URGYM_CACHE``, else ``$XDG_CACHE_HOME/urgym``, else ``~/.cache/urgym``."""
    if os.environ.get("URGYM_CACHE"):
        return Path(os.environ["URGYM_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "urgym"


def cached_table_path(rules: Rules, dtype: str = "float64", directory: str | os.PathLike | None = None) -> Path:
    """The cache file of a rule set: its name, piece count and a fingerprint of every rule."""
    fingerprint = hashlib.sha256(json.dumps(rules_to_dict(rules), sort_keys=True).encode()).hexdigest()[:10]
    return Path(directory or cache_dir()) / f"{rules.name}-{rules.pieces}p-{dtype}-{fingerprint}.urtable"


def load_or_solve(rules: Rules | str, pieces: int | None = None, tol: float = 1e-12, dtype: str = "float64",
                  progress: bool = True, directory: str | os.PathLike | None = None) -> SolvedTable:
    """Load the cached table of a rule set, solving it (and caching it) first if there is none."""
    from solver.solve import solve

    rules = get_rules(rules, pieces)
    path = cached_table_path(rules, dtype, directory)
    if path.exists():
        return SolvedTable.load(path, rules)
    return solve(rules, tol=tol, progress=progress, out=path, dtype=dtype)
