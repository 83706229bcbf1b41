"""Solved tables on disk and their queries.

File layout: the magic ``URGYMTBL``, the header length (8 bytes, little-endian), a UTF-8 JSON header,
padding to a 4096-byte boundary, then the values as a flat little-endian array, one per position of
:class:`~urgym.solver._index.PositionIndex`: the winning probability of the side to move. ``uint16`` tables
store ``round(65535 * value)``.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from urgym.solver._index import PositionIndex
from urgym.solver.graph import layer_pairs, swept_by_every_thread
from urgym.solver.lookup import TableView, move_probability

from urgym import SIDES, Position, Rules
from urgym.checks import integer
from urgym.core import geometry
from urgym.files import loads_json, open_regular, write_atomic

__all__ = ["DTYPES", "EXACT_TOL", "FORMAT_VERSION", "MIN_TOL", "SolvedTable", "TableError"]

EXACT_TOL = 1e-12
"""The tolerance of ground-truth tables: what the cache holds and every regret is measured against."""
MIN_TOL = 1e-15
"""The smallest tolerance a solve accepts: values near 1 are 1.1e-16 apart in float64, so a sweep cannot
promise changes much below this."""
_NUMPY_DTYPES = {"float64": "<f8", "float32": "<f4", "uint16": "<u2"}

MAGIC = b"URGYMTBL"
FORMAT_VERSION = 2
"""Version 2 adds ``header_checksum`` (CRC-32 of the rest of the header); version 1 files still load."""
_READABLE_VERSIONS = (1, 2)
DTYPES = ("float64", "float32", "uint16")
_ALIGN = 4096
_UINT16_SCALE = 65535.0


class TableError(ValueError):
    """A solved table that is corrupt, truncated or does not match the rules asked for."""


def encode(values: np.ndarray, dtype: str) -> np.ndarray:
    """Values (float64 in [0, 1]) in a storage dtype."""
    if dtype not in DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}; allowed: {', '.join(DTYPES)}")
    if dtype == "uint16":
        return np.rint(np.clip(values, 0.0, 1.0) * _UINT16_SCALE).astype("<u2")
    return values.astype("<f8" if dtype == "float64" else "<f4", copy=False)


def checksum(data: np.ndarray, chunk: int = 1 << 24) -> str:
    flat = data.reshape(-1).view(np.uint8)
    crc = 0
    for start in range(0, flat.shape[0], chunk):
        crc = zlib.crc32(flat[start : start + chunk], crc)
    return f"crc32:{crc:08x}"


class SolvedTable:
    """Every position's winning probability under perfect play, for one rule set.

    Attributes:
        rules: The rule set.
        index: Its :class:`~urgym.solver._index.PositionIndex`.
        values: One value per index (the side to move's winning probability), possibly quantized.
        header: Metadata (tolerance, final residual, solve time, dtype, checksum, ...).
        path: The file the table was loaded from (None for a table only in memory).
    """

    def __init__(
        self,
        rules: Rules,
        values: np.ndarray,
        header: dict[str, Any],
        index: PositionIndex | None = None,
        path: Path | None = None,
    ) -> None:
        self.rules = rules
        self.index = index or PositionIndex(rules)
        if values.shape != (self.index.size,):
            raise TableError(f"table has {values.shape[0]} values, the rules need {self.index.size}")
        self.values = values
        self.header = header
        self.path = path

    # --- queries -----------------------------------------------------------------------------------
    @property
    def is_exact(self) -> bool:
        """True for ground truth: float64 values solved to :data:`EXACT_TOL` or tighter."""
        tol = self.header.get("tol")
        return self.values.dtype == np.float64 and isinstance(tol, (int, float)) and 0 < tol <= EXACT_TOL

    @property
    def reproducible(self) -> bool:
        """True if every machine's solve gives these values to the last bit: no layer pair was swept on several threads.

        A table written before solves recorded it is reproducible only if all its pairs are below
        :data:`~urgym.solver.graph.SMALL_PAIR` positions (always swept on one thread).
        """
        recorded = self.header.get("reproducible")
        if isinstance(recorded, bool):
            return recorded
        return not any(swept_by_every_thread(pair.positions) for pair in layer_pairs(self.index))

    @property
    def precision_note(self) -> str | None:
        """What to tell a user about a table that is not ground truth (None for an exact one)."""
        if self.is_exact:
            return None
        if self.values.dtype == np.uint16:
            return (
                f"the table of {self.rules.name} ({self.rules.pieces} pieces) holds 16-bit values (RoyalUr's "
                "precision, about 1.5e-5): regrets smaller than that cannot be told apart; solve the rules for "
                "exact values"
            )
        return (
            f"the table of {self.rules.name} ({self.rules.pieces} pieces) was solved to tolerance "
            f"{self.header.get('tol')} in {self.values.dtype}, looser than the ground truth's {EXACT_TOL}"
        )

    def value_at(self, index: int) -> float:
        """The stored value at an index, as a probability.

        Raises:
            ValueError: If ``index`` is not an integer from 0 to ``index.size - 1``.
        """
        integer(index, "index", 0, self.index.size - 1)
        v = self.values[index]
        return float(v) / _UINT16_SCALE if self.values.dtype == np.uint16 else float(v)

    def probabilities(self) -> np.ndarray:
        """All values as float64 probabilities (decoding a quantized table)."""
        if self.values.dtype == np.uint16:
            return self.values / _UINT16_SCALE
        return np.asarray(self.values, dtype=np.float64)

    def win_probability(self, position: Position, side: str | None = None) -> float:
        """The winning probability of ``side`` (default: the side to move) under perfect play."""
        self._check(position)
        side = position.turn if side is None else side
        if side not in SIDES:
            raise ValueError(f"side must be 'light' or 'dark' (or None for the side to move), got {side!r}")
        if position.is_over:
            return 1.0 if position.winner == side else 0.0
        v = self.value_at(self.index.rank(position))
        return v if side == position.turn else 1.0 - v

    def move_values(self, position: Position, roll: int) -> dict[int, float]:
        """Each legal move's winning probability for the side to move (empty: the roll passes)."""
        self._check(position)
        geom, view = geometry(self.rules), self.view
        return {m: float(move_probability(position.code, roll, m, geom, view)) for m in position.legal_moves(roll)}

    def best_move(self, position: Position, roll: int) -> int | None:
        """The move with the highest winning probability (the lowest source on ties); None: no move."""
        values = self.move_values(position, roll)
        return max(values, key=lambda m: (values[m], -m)) if values else None

    @cached_property
    def view(self) -> TableView:
        """The table as the :mod:`urgym.solver.lookup` kernels take it."""
        scale = 1.0 / _UINT16_SCALE if self.values.dtype == np.uint16 else 1.0
        return TableView(self.values, scale, self.index.tables)

    def _check(self, position: Position) -> None:
        if not isinstance(position, Position):
            raise ValueError(f"expected a urgym.Position, got {type(position).__name__}")
        if position.rules != self.rules:
            raise ValueError(f"position of {position.rules.describe()!r} given to a table of {self.rules.describe()!r}")

    # --- files -------------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike, dtype: str | None = None) -> Path:
        """Write the table atomically (a temporary file renamed into place)."""
        dtype = dtype or self.header.get("dtype", "float64")
        data = encode(self.probabilities(), dtype)
        header = dict(
            self.header,
            format_version=FORMAT_VERSION,
            rules=self.rules.to_dict(),
            positions=int(self.index.size),
            index=self.index.layout,
            dtype=dtype,
            checksum=checksum(data),
            value="winning probability of the side to move",
        )
        return write_table(Path(path), header, data)

    @classmethod
    def load(cls, path: str | os.PathLike, rules: Rules | None = None, verify: bool = True) -> SolvedTable:
        """Memory-map a table; check it matches ``rules`` (if given), its size and (``verify``) checksum.

        Raises:
            TableError: For a corrupt, truncated or mismatched file.
            FileNotFoundError: If there is no file.
        """
        path = Path(path)
        header, offset = read_header(path)
        try:
            table_rules = Rules.from_dict(header["rules"])
        except ValueError as err:
            raise TableError(f"{path} has a corrupt header: {err}") from None
        if rules is not None and rules != table_rules:
            raise TableError(f"{path} was solved for {table_rules.describe()!r}, not {rules.describe()!r}")
        dtype = np.dtype(_NUMPY_DTYPES[header["dtype"]])
        expected = offset + header["positions"] * dtype.itemsize
        actual = path.stat().st_size
        if actual != expected:
            raise TableError(
                f"{path} is {'truncated' if actual < expected else 'too long'}: {actual} bytes, "
                f"expected {expected} for {header['positions']} {header['dtype']} values"
            )
        values = np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=(header["positions"],))
        if verify and checksum(values) != header["checksum"]:
            raise TableError(f"{path} is corrupt: its checksum does not match its header")
        table = cls(table_rules, values, header, path=path.resolve())
        made = header.get("index", "dense" if table.index.layout == "dense" else "tiles-1")  # before the field
        if made != table.index.layout:
            raise TableError(
                f"{path} orders its positions by the index layout {made!r}, this urgym by {table.index.layout!r}: "
                "solve the rules again (the cache moves such a table aside and solves them when it is next needed)"
            )
        return table


_BLANK_CHECKSUM = "crc32:00000000"


def _checksum_field(value: str) -> bytes:
    return f'"header_checksum": "{value}"'.encode()


def _header_checksum(blob: bytes, stored: str) -> str:
    """CRC-32 of the header's exact bytes with its own checksum blanked.

    Every byte counts, even ones that would parse to the same JSON.
    """
    return f"crc32:{zlib.crc32(blob.replace(_checksum_field(stored), _checksum_field(_BLANK_CHECKSUM), 1)):08x}"


def write_table(path: Path, header: dict[str, Any], data: np.ndarray) -> Path:
    header = dict(header, format_version=FORMAT_VERSION, header_checksum=_BLANK_CHECKSUM)
    blob = json.dumps(header, sort_keys=True).encode()
    blob = blob.replace(_checksum_field(_BLANK_CHECKSUM), _checksum_field(_header_checksum(blob, _BLANK_CHECKSUM)))
    offset = -(-(len(MAGIC) + 8 + len(blob)) // _ALIGN) * _ALIGN

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            f.write(MAGIC + struct.pack("<Q", len(blob)) + blob)
            f.write(b"\0" * (offset - f.tell()))
            data.tofile(f)

    return write_atomic(path, write, table=True)


def read_header(path: Path) -> tuple[dict[str, Any], int]:
    try:
        f = open_regular(path, "a solved table")
    except ValueError as err:
        raise TableError(str(err)) from None
    with f:
        start = f.read(len(MAGIC) + 8)
        if len(start) < len(MAGIC) + 8 or start[: len(MAGIC)] != MAGIC:
            raise TableError(f"{path} is not a urgym solved table (bad magic)")
        (length,) = struct.unpack("<Q", start[len(MAGIC) :])
        if length > os.fstat(f.fileno()).st_size - len(start):
            raise TableError(f"{path} has a corrupt header: its length ({length:,} bytes) runs past the file's end")
        blob = f.read(length)
    try:
        header = loads_json(blob, "its header")
    except ValueError as e:
        raise TableError(f"{path} has a corrupt header: {e}") from None
    if not isinstance(header, dict) or header.get("format_version") not in _READABLE_VERSIONS:
        version = header.get("format_version") if isinstance(header, dict) else None
        raise TableError(
            f"{path} has format version {version}, this urgym reads "
            f"{', '.join(map(str, _READABLE_VERSIONS))}; solve it again"
        )
    stored = header.get("header_checksum")
    if header["format_version"] >= 2 and (not isinstance(stored, str) or stored != _header_checksum(blob, stored)):
        raise TableError(f"{path} has a corrupt header: its header checksum does not match")
    for key in ("rules", "positions", "dtype", "checksum"):
        if key not in header:
            raise TableError(f"{path} has a corrupt header: no {key!r}")
    if header["dtype"] not in _NUMPY_DTYPES:
        raise TableError(f"{path} has a corrupt header: dtype {header['dtype']!r} is not one of {', '.join(DTYPES)}")
    positions, tol = header["positions"], header.get("tol")
    if type(positions) is not int or positions < 1 or not isinstance(header["checksum"], str):
        raise TableError(f"{path} has a corrupt header: positions {positions!r} or checksum of the wrong type")
    if tol is not None and (isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 < tol < 1):
        raise TableError(f"{path} has a corrupt header: tol {tol!r} is not a tolerance between 0 and 1")
    return header, -(-(len(MAGIC) + 8 + length) // _ALIGN) * _ALIGN
