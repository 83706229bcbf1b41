"""Where solved tables are cached, and loading one or solving it on first use."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

from solver.table import SolvedTable, TableError
from urgym import Rules, get_rules

__all__ = ["TableMissingError", "cache_dir", "cached_table_path", "is_cached", "load_or_solve", "table_for"]


def cache_dir() -> Path:
    """``$URGYM_CACHE``, else ``$XDG_CACHE_HOME/urgym``, else ``~/.cache/urgym``."""
    if os.environ.get("URGYM_CACHE"):
        path = Path(os.environ["URGYM_CACHE"])
        if path.exists() and not path.is_dir():
            raise ValueError(f"URGYM_CACHE={path} is a file; it should name a directory for solved tables")
        return path
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "urgym"


def cached_table_path(rules: Rules, dtype: str = "float64", directory: str | os.PathLike | None = None) -> Path:
    """The cache file of a rule set: its name, piece count and a fingerprint of every rule."""
    fingerprint = hashlib.sha256(json.dumps(rules.to_dict(), sort_keys=True).encode()).hexdigest()[:10]
    return Path(directory or cache_dir()) / f"{rules.name}-{rules.pieces}p-{dtype}-{fingerprint}.urtable"


def is_cached(rules: Rules) -> bool:
    """True if a table of ``rules`` is cached: solved (float64) or imported from RoyalUr (uint16)."""
    return cached_table_path(rules).exists() or cached_table_path(rules, "uint16").exists()


class TableMissingError(FileNotFoundError):
    """No solved table is cached for a rule set and solving it was not allowed."""


def table_for(rules: Rules, solve: bool = True, progress: bool = True) -> SolvedTable:
    """The one way to get the solved table of ``rules``: the cached one, solved and cached first if ``solve``.

    Raises:
        TableMissingError: If no table is cached and ``solve`` is False (the message gives the command).
    """
    path = cached_table_path(rules)
    if not solve and not is_cached(rules):
        raise TableMissingError(
            f"no solved table for {rules.describe()} at {path}; create it with "
            f"`solve --rules {rules.name} --pieces {rules.pieces}`")
    return load_or_solve(rules, progress=progress)


def load_or_solve(rules: Rules | str, pieces: int | None = None, tol: float = 1e-12, dtype: str = "float64",
                  progress: bool = True, directory: str | os.PathLike | None = None) -> SolvedTable:
    """Load the cached table of a rule set, solving it (and caching it) first if there is none.

    A cached table that fails its checks (corrupt, truncated, of other rules) is moved aside to
    ``NAME.corrupt`` with a message on stderr, and the rules are solved again.
    """
    from solver.solve import solve

    rules = get_rules(rules, pieces)
    path = cached_table_path(rules, dtype, directory)
    imported = cached_table_path(rules, "uint16", directory)
    for candidate in (path, imported) if dtype == "float64" else (path,):  # uint16: RoyalUr's, imported
        if candidate.exists():
            try:
                return SolvedTable.load(candidate, rules)
            except TableError as err:
                aside = candidate.with_name(candidate.name + ".corrupt")
                os.replace(candidate, aside)
                print(f"urgym: the cached table failed its checks ({err}); moved it to {aside} and solving "
                      "the rules again", file=sys.stderr)
    return solve(rules, tol=tol, progress=progress, out=path, dtype=dtype)
