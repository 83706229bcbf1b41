"""Exact solver of the Royal Game of Ur: every position's winning probability under perfect play."""

from urgym.solver._index import IndexTables, PositionIndex
from urgym.solver.cache import (
    TableMissingError,
    cache_dir,
    cache_slots,
    cached_reproducible,
    cached_table_path,
    is_cached,
    load_or_solve,
    solve_command,
    table_for,
)
from urgym.solver.rgu import RoyalUrTable, TableComparison, compare_tables, read_rgu, write_rgu
from urgym.solver.solve import solve
from urgym.solver.table import DTYPES, EXACT_TOL, SolvedTable, TableError

import urgym  # noqa: F401 (first: Ctrl-C while a command starts ends with one line)

__all__ = [
    "DTYPES",
    "EXACT_TOL",
    "IndexTables",
    "PositionIndex",
    "RoyalUrTable",
    "SolvedTable",
    "TableComparison",
    "TableError",
    "TableMissingError",
    "cache_dir",
    "cache_slots",
    "cached_reproducible",
    "cached_table_path",
    "compare_tables",
    "is_cached",
    "load_or_solve",
    "read_rgu",
    "solve",
    "solve_command",
    "table_for",
    "write_rgu",
]
