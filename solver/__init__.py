"""Exact solver of the Royal Game of Ur: every position's winning probability under perfect play."""

from solver._index import PositionIndex
from solver.cache import TableMissingError, cache_dir, cached_table_path, load_or_solve, table_for
from solver.solve import solve
from solver.table import DTYPES, SolvedTable, TableError

__all__ = ["DTYPES", "PositionIndex", "SolvedTable", "TableError", "TableMissingError", "cache_dir",
           "cached_table_path", "load_or_solve", "solve", "table_for"]
