"""RoyalUr's lookup tables (``.rgu``): read them, write ours in their format, and compare any two tables.

The format (RoyalUr-Java's ``lut/``, RoyalUr-Python's ``royalur/lut/reader.py``), all integers big-endian:

- ``RGU``, a version byte (0), a signed 4-byte header length, the UTF-8 JSON header (``game_settings``: board
  shape, paths, dice, start pieces and the three rule flags);
- a 4-byte number of maps, then each map's entry count (4 bytes each);
- every map's keys (unsigned 4-byte, ascending), then every map's values (unsigned 2-byte ``percent16``:
  light's winning chance times 65535, rounded).

Keys use RoyalUr's simple state encoding, for light to move only, on the standard board with Bell's paths
(urgym's finkel, any piece count up to 7): bits 0-5 are dark's lane (C1, C2, C3, C4, C7, C8 occupied),
bits 6-18 the middle lane B1..B8 (each tile empty, dark or light, as a base-3 number with B1 the most
significant digit, ranked among the 3^8 - 2 patterns that 7 pieces a side allow), bits 19-24 light's lane
(A1, A2, A3, A4, A7, A8), bits 25-27 dark's pieces at home and bits 28-30 light's.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numba import njit
from urgym.solver._index import PositionIndex, unrank_in_block
from urgym.solver.table import SolvedTable, TableError

from urgym import Position, Rules, core, get_rules
from urgym.files import loads_json, read_bounded, write_atomic

__all__ = ["RGU_MAGIC", "RoyalUrTable", "TableComparison", "compare_tables", "read_rgu", "rgu_key", "write_rgu"]

RGU_MAGIC = b"RGU"
_VERSION = 0
_PERCENT16 = 65535
MAX_RGU_BYTES = 4 << 30
"""The largest RoyalUr table read (finkel with 7 pieces, the largest rule set RoyalUr solves, is far below)."""
_ALL_DARK = 3280  # 11111111 in base 3: eight dark pieces, impossible with 7 a side (and skipped by the ranking)
_SIDE_ROWS = (1, 2, 3, 4, 7, 8)  # the side lanes' tiles, bit by bit
_SETTINGS = {"board_shape": "Standard", "paths": "Bell", "dice": "FourBinary"}


# --- the key encoding ----------------------------------------------------------------------------------
def _supported(rules: Rules) -> None:
    finkel = get_rules("finkel", rules.pieces) if 1 <= rules.pieces <= 7 else None
    if rules != finkel:
        raise ValueError(
            f"RoyalUr's table format covers finkel (Bell's paths, four binary dice) with 1 to 7 pieces; "
            f"not {rules.describe()!r}"
        )


class Lanes(NamedTuple):
    """Where RoyalUr's key encoding puts each path position 1..L.

    Its side-lane bit (or -1) and its middle-lane index (or -1); ``length`` is L.
    """

    length: int
    side: np.ndarray
    middle: np.ndarray


def _lane_maps(rules: Rules) -> Lanes:
    """The :class:`Lanes` of ``rules`` (finkel's board)."""
    side = np.full(rules.length + 1, -1, dtype=np.int64)
    middle = np.full(rules.length + 1, -1, dtype=np.int64)
    for p, tile in enumerate(rules.path, start=1):
        row = int(tile[1:])
        if tile[0] == "B":
            middle[p] = row - 1
        else:
            side[p] = _SIDE_ROWS.index(row)
    return Lanes(rules.length, side, middle)


@njit(cache=True)
def _key_of_state(state, lanes):
    """RoyalUr's key of a packed position, read as light to move (the mover's pieces are light's)."""
    length, side, middle = lanes.length, lanes.side, lanes.middle
    light, dark = core.own_mask(state), core.opp_mask(state)
    left = 0
    right = 0
    digits = np.zeros(8, dtype=np.int64)
    for p in range(1, length + 1):
        bit = 1 << (p - 1)
        if light & bit:
            if side[p] >= 0:
                left |= 1 << side[p]
            else:
                digits[middle[p]] = 2
        if dark & bit:
            if side[p] >= 0:
                right |= 1 << side[p]
            else:
                digits[middle[p]] = 1
    value = 0
    for d in range(8):
        value = value * 3 + digits[d]
    if value > _ALL_DARK:
        value -= 1
    return right | (value << 6) | (left << 19) | (core.opp_home(state) << 25) | (core.own_home(state) << 28)


@njit(cache=True)
def _keys_of_states(states, lanes, keys):
    for i in range(states.shape[0]):
        keys[i] = _key_of_state(states[i], lanes)


@njit(cache=True)
def _states_of_keys(keys, lanes, states):
    """The packed positions (light to move) of keys (see :func:`_check_keys` for keys outside the encoding)."""
    length, side, middle = lanes.length, lanes.side, lanes.middle
    for i in range(keys.shape[0]):
        key = keys[i]
        right, value, left = key & 63, (key >> 6) & 8191, (key >> 19) & 63
        dark_home, light_home = (key >> 25) & 7, (key >> 28) & 7
        if value >= _ALL_DARK:
            value += 1
        digits = np.zeros(8, dtype=np.int64)
        for d in range(7, -1, -1):
            digits[d] = value % 3
            value //= 3
        light = 0
        dark = 0
        for p in range(1, length + 1):
            if side[p] >= 0:
                if left >> side[p] & 1:
                    light |= 1 << (p - 1)
                if right >> side[p] & 1:
                    dark |= 1 << (p - 1)
            elif digits[middle[p]] == 2:
                light |= 1 << (p - 1)
            elif digits[middle[p]] == 1:
                dark |= 1 << (p - 1)
        states[i] = core.pack(light, dark, light_home, dark_home, 0)


def rgu_key(position: Position) -> int:
    """RoyalUr's key of a position with light to move (finkel only)."""
    _supported(position.rules)
    if position.turn != "light":
        raise ValueError("RoyalUr's keys encode positions with light to move only")
    lanes = _lane_maps(position.rules)
    keys = np.zeros(1, dtype=np.int64)
    _keys_of_states(np.array([position.code], dtype=np.int64), lanes, keys)
    return int(keys[0])


# --- reading -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RoyalUrTable:
    """A table read from a ``.rgu`` file: sorted keys, light's winning chances, and the header."""

    rules: Rules
    keys: np.ndarray
    values: np.ndarray
    """Light's winning chance per key (percent16 / 65535)."""
    header: dict[str, Any]
    path: Path | None = None

    def __len__(self) -> int:
        return int(self.keys.shape[0])

    def win_probability(self, position: Position, side: str | None = None) -> float:
        """``side``'s (default: the mover's) winning chance; a dark-to-move position is looked up mirrored.

        Raises:
            KeyError: If the table has no entry for the position (RoyalUr leaves out finished games).
        """
        side = side or position.turn
        # The packed form is the mover's view: with the turn bit cleared it is the mirrored, light-to-move position.
        light_view = Position(position.rules, position.code & ~(1 << core.TURN_SHIFT))
        key = rgu_key(light_view)
        i = int(np.searchsorted(self.keys, key))
        if i == len(self) or self.keys[i] != key:
            raise KeyError(f"no entry for {position!r} (key {key})")
        mover = float(self.values[i])
        return mover if side == position.turn else 1.0 - mover

    def to_solved_table(self) -> SolvedTable:
        """The table as a :class:`SolvedTable` of 16-bit values (RoyalUr's own precision), over urgym's index.

        What ``evaluate``, the perfect player and ``review`` use.

        Raises:
            TableError: If the file lacks an unfinished position (naming how many and one of them).
        """
        index = PositionIndex(self.rules)
        states = _all_states(index)
        lanes = _lane_maps(self.rules)
        keys = np.zeros(states.shape[0], dtype=np.int64)
        _keys_of_states(states, lanes, keys)
        at = np.minimum(np.searchsorted(self.keys, keys), len(self) - 1)
        found = self.keys[at] == keys
        missing = ~found & ~_finished(states)
        if missing.any():
            example = Position(self.rules, int(states[np.flatnonzero(missing)[0]]))
            raise TableError(f"{self.path or 'the RGU table'} lacks {int(missing.sum()):,} positions, e.g. {example!r}")
        won = _light_has_won(states)
        percent16 = np.where(found, np.rint(self.values[at] * _PERCENT16), np.where(won, _PERCENT16, 0))
        header = {
            "dtype": "uint16",
            "source": f"RoyalUr lookup table {self.path.name if self.path else ''}".strip(),
            "rgu_header": self.header,
            "tolerance": None,
            "residual": None,
        }
        return SolvedTable(self.rules, percent16.astype(np.uint16), header, index)

    def states(self) -> np.ndarray:
        """Every key as a packed position with light to move."""
        lanes = _lane_maps(self.rules)
        out = np.zeros(len(self), dtype=np.int64)
        _states_of_keys(self.keys.astype(np.int64), lanes, out)
        return out


def read_rgu(path: str | os.PathLike, rules: Rules | None = None) -> RoyalUrTable:
    """Read a RoyalUr ``.rgu`` lookup table (its rules come from its header).

    Raises:
        TableError: For a file that is not an RGU table, is truncated, has unsorted keys or values out of
            range, or is of rules other than ``rules`` or that urgym cannot map (naming the file).
    """
    path = Path(path)
    try:
        data = read_bounded(path, MAX_RGU_BYTES, "a RoyalUr table")
    except ValueError as err:
        raise TableError(str(err)) from None
    try:
        header, keys, values = _parse(data)
        table_rules = _rules_of(header)
        if rules is not None and rules != table_rules:
            raise TableError(f"{path} holds {table_rules.describe()!r}, not {rules.describe()!r}")
        table = RoyalUrTable(table_rules, keys, values / _PERCENT16, header, path)
        states = table.states()
        _check_keys(keys, states, table_rules)
        _check_values(table, states)
    except ValueError as err:
        raise TableError(f"{path}: {err}") from None
    return table


def _parse(data: bytes) -> tuple[dict[str, Any], np.ndarray, np.ndarray]:
    if data[:3] != RGU_MAGIC:
        raise ValueError("not a RoyalUr lookup table (it does not start with 'RGU')")
    if len(data) < 8 or data[3] != _VERSION:
        raise ValueError(f"RGU version {data[3] if len(data) > 3 else '?'}; urgym reads version {_VERSION}")
    (length,) = struct.unpack(">i", data[4:8])
    if length < 0 or 8 + length + 8 > len(data):
        raise ValueError("truncated: its header length runs past the end of the file")
    header = loads_json(data[8 : 8 + length], "its JSON header")
    if not isinstance(header, dict):
        raise ValueError(f"its JSON header is a {type(header).__name__}, not an object")
    at = 8 + length
    (maps,) = struct.unpack(">i", data[at : at + 4])
    if maps != 1:
        raise ValueError(f"{maps} maps; urgym reads tables of one map (a value per position)")
    (entries,) = struct.unpack(">i", data[at + 4 : at + 8])
    start = at + 8
    if entries == 0:
        raise ValueError("it holds no entries")
    if entries < 0 or start + 6 * entries != len(data):
        raise ValueError(
            f"truncated or too long: {len(data)} bytes for {entries} entries (expected {start + 6 * max(entries, 0)})"
        )
    keys = np.frombuffer(data, dtype=">u4", count=entries, offset=start).astype(np.int64)
    values = np.frombuffer(data, dtype=">u2", count=entries, offset=start + 4 * entries).astype(np.float64)
    if entries > 1 and not np.all(np.diff(keys) > 0):
        raise ValueError("its keys are not strictly ascending")
    return header, keys, values


def _rules_of(header: dict[str, Any]) -> Rules:
    settings = header.get("game_settings")
    if not isinstance(settings, dict):
        raise ValueError("its header has no game_settings")
    for key, expected in _SETTINGS.items():
        if settings.get(key) != expected:
            raise ValueError(
                f"game_settings {key} is {settings.get(key)!r}; urgym maps only finkel's tables "
                f"({', '.join(f'{k}={v}' for k, v in _SETTINGS.items())})"
            )
    pieces = settings.get("start_pieces")
    if not isinstance(pieces, int) or not 1 <= pieces <= 7:
        raise ValueError(f"game_settings start_pieces is {pieces!r}; 1 to 7 fit the encoding")
    rules = get_rules("finkel", pieces)
    flags = {
        "safe_rosettes": rules.safe_rosettes,
        "rosettes_grant_rolls": rules.rosette_extra_roll,
        "captures_grant_rolls": rules.capture_extra_roll,
    }
    for key, value in flags.items():
        if settings.get(key) != value:
            raise ValueError(f"game_settings {key} is {settings.get(key)!r}; finkel has {value}")
    return rules


# --- checking a stranger's table ----------------------------------------------------------------------
BELLMAN_SAMPLE = 200_000
"""Positions whose values are checked against the Bellman equation when a table is read: all of a small table's,
a sample of a large one's (about a second for the 7-piece table)."""
BELLMAN_TOLERANCE = 3 / _PERCENT16
"""Largest Bellman residual a 16-bit table may show: a value and its successors are each rounded by half a unit."""


def _check_keys(keys: np.ndarray, states: np.ndarray, rules: Rules) -> None:
    """Refuse keys with bits outside the encoding, or that decode to no position of the rules."""
    lanes = _lane_maps(rules)
    again = np.zeros(keys.shape[0], dtype=np.int64)
    _keys_of_states(states, lanes, again)
    bad = np.flatnonzero(again != keys)
    if bad.size:
        raise ValueError(
            f"key {int(keys[bad[0]])} (entry {int(bad[0])}) has bits outside RoyalUr's encoding "
            f"({bad.size:,} such keys)"
        )
    for label, home, mask in (("light", core.OWN_HOME_SHIFT, 0), ("dark", core.OPP_HOME_SHIFT, core.OPP_SHIFT)):
        on_board = _popcounts((states >> mask) & core.FIELD_MASK)
        count = ((states >> home) & core.HOME_MASK) + on_board
        bad = np.flatnonzero(count > rules.pieces)
        if bad.size:
            raise ValueError(
                f"key {int(keys[bad[0]])} (entry {int(bad[0])}) gives {label} {int(count[bad[0]])} "
                f"pieces; the table's rules have {rules.pieces}"
            )
    both = np.flatnonzero(_outcomes(states) == BOTH_FINISHED)
    if both.size:
        raise ValueError(f"key {int(keys[both[0]])} (entry {int(both[0])}) has both sides finished")


def _popcounts(masks: np.ndarray) -> np.ndarray:
    counts = np.zeros(masks.shape[0], dtype=np.int64)
    for bit in range(core.FIELD_BITS):
        counts += (masks >> bit) & 1
    return counts


def _check_values(table: RoyalUrTable, states: np.ndarray) -> None:
    """Refuse values no solved table can hold.

    Light's wins not worth 1, dark's not worth 0, all values alike, or values that break the Bellman equation (checked
    on a sample of positions).
    """
    values = table.values
    outcomes = _outcomes(states)
    won, lost = outcomes == LIGHT_WON, outcomes == DARK_WON
    for mask, expected, what in ((won, 1.0, "light has won"), (lost, 0.0, "dark has won")):
        bad = np.flatnonzero(mask & (values != expected))
        if bad.size:
            raise ValueError(
                f"key {int(table.keys[bad[0]])} is a position {what}, worth {expected:g}, but the "
                f"table gives {values[bad[0]]:.5f} ({bad.size:,} such entries)"
            )
    playing = np.flatnonzero(outcomes == PLAYING)
    if playing.size and np.ptp(values[playing]) == 0:
        raise ValueError(
            f"every unfinished position has the value {values[playing[0]]:.5f}, which does not solve the game"
        )
    sample = (
        playing
        if playing.size <= BELLMAN_SAMPLE
        else np.sort(np.random.default_rng(0).choice(playing, BELLMAN_SAMPLE, replace=False))
    )
    rules = table.rules
    lanes = _lane_maps(rules)
    residuals = np.zeros(sample.shape[0])
    _bellman_residuals(states[sample], table.keys, values, core.geometry(rules), lanes, residuals)
    worst = int(np.argmax(residuals))
    if residuals[worst] > BELLMAN_TOLERANCE:
        what = (
            "a successor is missing"
            if residuals[worst] == np.inf
            else f"it is {residuals[worst]:.5f} from the value its successors give"
        )
        raise ValueError(
            f"the value of key {int(table.keys[sample[worst]])} does not solve the game: {what} "
            f"(a 16-bit table is within {BELLMAN_TOLERANCE:.1e})"
        )


@njit(cache=True)
def _lookup(keys, values, key):
    """The value of ``key`` (binary search in the sorted keys); -1 when absent."""
    i = np.searchsorted(keys, key)
    if i < keys.shape[0] and keys[i] == key:
        return values[i]
    return -1.0


@njit(cache=True)
def _bellman_residuals(states, keys, values, geom, lanes, out):
    """|V(s) - sum_r P(r) max_m W(s, r, m)| per light-to-move position, inf where a successor is missing."""
    g = geom[0]
    moves = np.zeros(core.MAX_MOVES, dtype=np.int64)
    turn = np.int64(1) << core.TURN_SHIFT
    for i in range(states.shape[0]):
        state = states[i]
        expected = 0.0
        for k in range(g.n_rolls):
            n = core.legal_moves(state, g.rolls[k], geom, moves)
            best = -1.0
            if n == 0:
                v = _lookup(keys, values, _key_of_state(core.swap_sides(state) & ~turn, lanes))
                best = 1.0 - v if v >= 0 else -1.0
            for j in range(n):
                nxt, flags = core.apply_move(state, g.rolls[k], moves[j], geom)
                if flags & core.WIN:
                    w = 1.0
                elif flags & core.EXTRA_ROLL:
                    w = _lookup(keys, values, _key_of_state(nxt, lanes))
                else:
                    v = _lookup(keys, values, _key_of_state(nxt & ~turn, lanes))
                    w = 1.0 - v if v >= 0 else -1.0
                if w < 0:
                    best = -2.0
                    break
                best = max(best, w)
            if best < 0:
                expected = -1.0
                break
            expected += g.probabilities[k] * best
        own = _lookup(keys, values, _key_of_state(state, lanes))
        out[i] = np.inf if expected < 0 else abs(own - expected)


# --- writing -------------------------------------------------------------------------------------------
def write_rgu(table: SolvedTable, path: str | os.PathLike) -> Path:
    """Write a solved finkel table in RoyalUr's format.

    Every position with light to move, keyed and valued as RoyalUr's own files are (like them, it holds the finished
    games light has won and not those dark has).

    Raises:
        ValueError: If the table's rules are not finkel with 1 to 7 pieces.
    """
    rules = table.rules
    _supported(rules)
    states = _all_states(table.index)
    won = _light_has_won(states)
    keep = ~_finished(states) | won  # RoyalUr keeps light's wins (value 1) and leaves out dark's
    states = states[keep]
    values = np.where(won[keep], 1.0, table.probabilities()[keep])
    lanes = _lane_maps(rules)
    keys = np.zeros(states.shape[0], dtype=np.int64)
    _keys_of_states(states, lanes, keys)
    order = np.argsort(keys, kind="stable")
    keys, values = keys[order], values[order]
    header = {
        "author": "urgym",
        "game_settings": {
            **_SETTINGS,
            "start_pieces": rules.pieces,
            "safe_rosettes": rules.safe_rosettes,
            "rosettes_grant_rolls": rules.rosette_extra_roll,
            "captures_grant_rolls": rules.capture_extra_roll,
        },
    }
    blob = json.dumps(header, separators=(",", ":")).encode()
    percent16 = np.rint(np.clip(values, 0.0, 1.0) * _PERCENT16).astype(">u2")

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            f.write(RGU_MAGIC + bytes([_VERSION]) + struct.pack(">i", len(blob)) + blob)
            f.write(struct.pack(">ii", 1, keys.shape[0]))
            f.write(keys.astype(">u4").tobytes())
            f.write(percent16.tobytes())

    return write_atomic(path, write, table=True)


def _all_states(index: PositionIndex) -> np.ndarray:
    """Every index's packed position (light to move), in index order."""
    states = np.zeros(index.size, dtype=np.int64)
    _unrank_all(index.tables, states)
    return states


@njit(cache=True)
def _unrank_all(index, states):
    blocks = index.blocks
    for b in range(blocks.shape[0]):
        for i in range(blocks[b, 0], blocks[b, 1]):
            states[i] = unrank_in_block(i - blocks[b, 0], b, index)


LIGHT_WON, DARK_WON, BOTH_FINISHED, PLAYING = 0, 1, 2, -1


@njit(cache=True)
def _outcomes(states):
    """Per light-to-move position: ``LIGHT_WON``, ``DARK_WON``, ``BOTH_FINISHED`` (impossible) or ``PLAYING``."""
    out = np.empty(states.shape[0], dtype=np.int8)
    for i in range(states.shape[0]):
        s = states[i]
        light = core.own_mask(s) == 0 and core.own_home(s) == 0
        dark = core.opp_mask(s) == 0 and core.opp_home(s) == 0
        out[i] = BOTH_FINISHED if light and dark else LIGHT_WON if light else DARK_WON if dark else PLAYING
    return out


def _finished(states: np.ndarray) -> np.ndarray:
    return _outcomes(states) != PLAYING


def _light_has_won(states: np.ndarray) -> np.ndarray:
    return _outcomes(states) == LIGHT_WON


# --- comparing -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TableComparison:
    """Two tables compared position by position over the positions both hold (light to move)."""

    common: int
    only_first: int
    only_second: int
    max_difference: float
    mean_difference: float
    worst_position: Position | None

    def __str__(self) -> str:
        worst = f"; largest at {self.worst_position!r}" if self.worst_position is not None else ""
        return (
            f"{self.common:,} positions in both ({self.only_first:,} only in the first, {self.only_second:,} only "
            f"in the second): largest difference {self.max_difference:.3e}, mean {self.mean_difference:.3e}"
            f"{worst}"
        )


def compare_tables(first: SolvedTable | RoyalUrTable, second: SolvedTable | RoyalUrTable) -> TableComparison:
    """Compare two tables of the same rules, ours (``.urtable``) or RoyalUr's (``.rgu``).

    On every unfinished position with light to move that both hold.

    Raises:
        ValueError: If the tables are of different rules.
    """
    if first.rules != second.rules:
        raise ValueError(
            f"the tables are of different rules: {first.rules.describe()!r} and {second.rules.describe()!r}"
        )
    (s1, v1), (s2, v2) = _light_values(first), _light_values(second)
    common, i1, i2 = np.intersect1d(s1, s2, assume_unique=True, return_indices=True)
    diff = np.abs(v1[i1] - v2[i2])
    worst = Position(first.rules, int(common[int(np.argmax(diff))])) if diff.size else None
    return TableComparison(
        int(common.size),
        int(s1.size - common.size),
        int(s2.size - common.size),
        float(diff.max()) if diff.size else 0.0,
        float(diff.mean()) if diff.size else 0.0,
        worst,
    )


def _light_values(table: SolvedTable | RoyalUrTable) -> tuple[np.ndarray, np.ndarray]:
    """(sorted packed positions with light to move, light's chances), unfinished positions only."""
    if isinstance(table, RoyalUrTable):
        states, values = table.states(), np.asarray(table.values)
    else:
        states, values = _all_states(table.index), table.probabilities()
    keep = ~_finished(states)
    states, values = states[keep], values[keep]
    order = np.argsort(states)
    return states[order], values[order]
