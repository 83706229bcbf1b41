"""Exact solver of the Royal Game of Ur: every position's winning probability under perfect play."""

from solver._index import PositionIndex
from solver.cache import TableMissingError, cache_dir, cached_table_path, is_cached, load_or_solve, table_for
from solver.rgu import RoyalUrTable, TableComparison, compare_tables, read_rgu, write_rgu
from solver.solve import solve
from solver.table import DTYPES, SolvedTable, TableError

__all__ = ["DTYPES", "PositionIndex", "RoyalUrTable", "SolvedTable", "TableComparison", "TableError",
           "TableMissingError", "cache_dir", "cached_table_path", "compare_tables", "is_cached", "load_or_solve",
           "read_rgu", "solve", "table_for", "write_rgu"]
