"""Where solved tables are cached, and loading one or solving it on first use.

The cache holds ground truth only: float64 tables solved to :data:`~urgym.solver.table.EXACT_TOL`, and RoyalUr's 16-bit
tables imported with ``solve --import-rgu`` (which every command that uses one says). A table solved to a looser
tolerance or stored in another type is written elsewhere (``solve --out``) and never lands in a cache slot.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import weakref
from pathlib import Path

from urgym.solver.table import SolvedTable, TableError

from urgym import RULE_SET_NAMES, Rules, get_rules
from urgym.files import cache_dir

__all__ = [
    "TableMissingError",
    "cache_dir",
    "cache_slots",
    "cached_reproducible",
    "cached_table_path",
    "is_cached",
    "load_or_solve",
    "solve_command",
    "table_for",
]


def cached_table_path(rules: Rules, dtype: str = "float64", directory: str | os.PathLike | None = None) -> Path:
    """The cache file of a rule set: its name, piece count and a fingerprint of every rule.

    The name comes from the rules, which may come from a stranger's record: it is a short identifier
    (:data:`urgym.rules.NAME_PATTERN`), and the file is checked to stay inside the cache folder all the same.
    """
    if dtype not in ("float64", "uint16"):
        raise ValueError(f"the cache holds float64 tables (solved) and uint16 ones (imported), not {dtype!r}")
    fingerprint = hashlib.sha256(json.dumps(rules.to_dict(), sort_keys=True).encode()).hexdigest()[:10]
    folder = Path(directory or cache_dir())
    path = folder / f"{rules.name}-{rules.pieces}p-{dtype}-{fingerprint}.urtable"
    if path.parent != folder or path.name.startswith("."):
        raise ValueError(f"rule set name {rules.name!r} cannot name a file in the table cache")
    return path


def cache_slots(rules: Rules, directory: str | os.PathLike | None = None) -> tuple[Path, Path]:
    """The two cache files of a rule set: the solved float64 table and the imported uint16 one."""
    return cached_table_path(rules, "float64", directory), cached_table_path(rules, "uint16", directory)


def is_cached(rules: Rules) -> bool:
    """True if a table of ``rules`` is cached: solved (float64) or imported from RoyalUr (uint16)."""
    return any(path.exists() for path in cache_slots(rules))


def cached_reproducible(rules: Rules) -> bool:
    """True if the cached solved table of ``rules`` is intact and every machine's solve gives it to the last bit."""
    path = cached_table_path(rules)
    try:
        return path.exists() and _load(path, rules).reproducible
    except TableError:
        return False


class TableMissingError(FileNotFoundError):
    """No solved table is cached for a rule set and solving it was not allowed."""


def solve_command(rules: Rules, record: str | os.PathLike | None = None, reproducible: bool = False) -> str:
    """The ``solve`` command that caches the table of ``rules`` (custom rules are read from ``record``).

    ``reproducible``: on one thread, the table every machine's solve gives to the last bit.
    """
    threads = " --threads 1" if reproducible else ""
    if rules.name in RULE_SET_NAMES and rules == get_rules(rules.name, rules.pieces):
        return f"solve --rules {rules.name} --pieces {rules.pieces}{threads}"
    return (
        f"solve --rules-file {record}{threads}"
        if record
        else f"solve --rules-file RULES.json{threads} (the rules as JSON)"
    )


def table_for(
    rules: Rules,
    solve: bool = True,
    progress: bool = True,
    record: str | os.PathLike | None = None,
    max_solve_minutes: float = math.inf,
    reproducible: bool = False,
) -> SolvedTable:
    """The one way to get the solved table of ``rules``: the cached one, solved and cached first if ``solve``.

    ``max_solve_minutes`` bounds a solve this call would start (a missing table, or a damaged one moved aside: the
    same rule for both); with ``solve`` False nothing is solved, a damaged table included. ``reproducible``: a table
    every machine's solve gives to the last bit (:attr:`SolvedTable.reproducible`), as the benchmark measures with;
    a cached one that is not is solved again on one thread and replaced (the same rule as a missing one).

    Raises:
        TableMissingError: If no table is cached and ``solve`` is False, or a solve would take longer than
            ``max_solve_minutes`` (the message gives the command; for custom rules it reads them from ``record``
            when given).
    """
    if not solve and not is_cached(rules):
        raise TableMissingError(
            f"no solved table for {rules.describe()} at {cached_table_path(rules)}; create it "
            f"with `{solve_command(rules, record)}`"
        )
    limit = max_solve_minutes if solve else -1.0  # a damaged table is not solved again either
    return load_or_solve(rules, progress=progress, max_solve_minutes=limit, record=record, reproducible=reproducible)


def load_or_solve(
    rules: Rules | str,
    pieces: int | None = None,
    progress: bool = True,
    directory: str | os.PathLike | None = None,
    max_solve_minutes: float = math.inf,
    record: str | os.PathLike | None = None,
    reproducible: bool = False,
) -> SolvedTable:
    """Load the cached table of a rule set, solving it exactly (and caching it) first if there is none.

    A cached table that fails its checks (corrupt, truncated, of other rules) or that is not ground truth (a
    float64 slot holding a looser solve) is moved aside to ``NAME.corrupt`` or ``NAME.loose`` with a message on
    stderr, and the rules are solved again: unless that solve is estimated past ``max_solve_minutes``, as a missing
    table's would be refused. With ``reproducible`` only a table every machine's solve gives to the last bit will do
    (:attr:`SolvedTable.reproducible`): a cached one that is not is solved again on one thread and replaced, under
    the same rule.

    Raises:
        TableMissingError: If the solve it would start is estimated past ``max_solve_minutes``.
    """
    from urgym.solver.solve import solve

    rules = get_rules(rules, pieces)
    path, imported = cache_slots(rules, directory)
    lacking = "has no intact solved table"
    why = "a damaged one was moved aside"
    for candidate in (path, imported) if not reproducible else (path,):
        if not candidate.exists():
            continue
        try:
            table = _load(candidate, rules)
        except TableError as err:
            _move_aside(candidate, ".corrupt", f"the cached table failed its checks ({err})")
            continue
        if candidate == path and not table.is_exact:
            _move_aside(
                candidate, ".loose", f"the cached table {candidate} is not ground truth ({table.precision_note})"
            )
            continue
        if reproducible and not table.reproducible:
            lacking, why = "has no reproducible solved table", "the cached one was swept on several threads"
            print(
                f"urgym: the cached table {candidate} is not reproducible (swept on several threads, its last bits "
                "depend on their timing); solving the one every machine gives, on one thread, to replace it",
                file=sys.stderr,
            )
            break
        return table
    if max_solve_minutes < math.inf:
        from urgym.solver.budget import estimate_solve

        if max_solve_minutes < 0:
            raise TableMissingError(
                f"{rules.name} ({rules.pieces} pieces) {lacking} ({why}); "
                f"create it with `{solve_command(rules, record, reproducible)}`"
            )
        estimate = estimate_solve(rules)
        if estimate.minutes > max_solve_minutes:
            raise TableMissingError(
                f"{rules.name} ({rules.pieces} pieces) {lacking}, and solving it takes long "
                f"({estimate.describe()}): add --solve to solve it now, or run "
                f"`{solve_command(rules, record, reproducible)}` first"
            )
    return solve(rules, progress=progress, out=path, threads=1 if reproducible else None)


_LOADED: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
"""The cached tables loaded in this process and still in use, by file (path, change time, size) and rules."""


def _load(path: Path, rules: Rules) -> SolvedTable:
    """The table in ``path``, read and checked once while any part of the process still holds it.

    An exact evaluation asks for the same table for perfect play's moves, its values and the worst decisions: each
    asks here, and all get the one table (a file changed since is read afresh).
    """
    stat = path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size, rules)
    table = _LOADED.get(key)
    if table is None:
        table = SolvedTable.load(path, rules)
        _LOADED[key] = table
    return table


def _move_aside(path: Path, suffix: str, why: str) -> None:
    aside = path.with_name(path.name + suffix)
    try:
        os.replace(path, aside)
    except OSError as err:  # a read-only cache: the table's fault is what the user must hear, not the rename's
        raise TableError(
            f"{why}, and it cannot be moved aside to solve the rules again ({err.strerror}): remove it, or set "
            "URGYM_CACHE to a writable folder"
        ) from None
    print(f"urgym: {why}; moved it to {aside} and solving the rules again", file=sys.stderr)
