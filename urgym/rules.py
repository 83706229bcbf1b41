"""Rule sets of the Royal Game of Ur as data.

A rule set is a frozen :class:`Rules`: light's path as a tuple of tile names, the board's rosettes, the
piece count, the roll distribution and three flags. Dark's path is light's with columns A and C swapped.
Everything downstream (kernels, environment, solver, agents) reads the rules from here; nothing hard-codes
a rule set.

Tiles are named by column letter and row number (``"A4"``, ``"B12"``). A piece's place is its path
position: 0 at home, 1..L on the board, L + 1 scored.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from urgym.checks import integer

__all__ = [
    "DICE",
    "MAX_PATH_LENGTH",
    "MAX_PIECES",
    "MAX_ROLL",
    "NAME_PATTERN",
    "RULE_SET_NAMES",
    "Rules",
    "get_rules",
]

MAX_PATH_LENGTH = 27
"""Longest path the packed position format holds (Murray's path)."""

MAX_PIECES = 15
"""Most pieces per side the packed position format holds (home counts use four bits)."""

MAX_ROLL = 31
"""The largest roll a rule set's dice may show (the kernels' roll tables have 32 entries)."""

DICE: dict[str, tuple[float, ...]] = {
    # Four binary dice: the number of marked tips up, a binomial(4, 1/2).
    "four-binary": (1 / 16, 4 / 16, 6 / 16, 4 / 16, 1 / 16),
    # Three binary dice where zero counts as four (RoyalUr's Masters): never a 0.
    "three-binary-zero-as-four": (0.0, 3 / 8, 3 / 8, 1 / 8, 1 / 8),
}
"""Named roll distributions: index r is the probability of rolling r."""

_TILE = re.compile(r"^[ABC]([1-9][0-9]?)$")

NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}"
"""What a rule set's name may be: letters, digits, ``-`` and ``_``, at most 40 characters, not starting with
``-`` or ``_``. Names reach file names (the table cache) and pages, so nothing else is allowed."""
_NAME = re.compile(NAME_PATTERN)
_FLAGS = ("safe_rosettes", "rosette_extra_roll", "capture_extra_roll")

_BELL = ("A4", "A3", "A2", "A1", *(f"B{i}" for i in range(1, 9)), "A8", "A7")
_MASTERS = ("A4", "A3", "A2", "A1", *(f"B{i}" for i in range(1, 8)), "C7", "C8", "B8", "A8", "A7")
_ASEB = ("A4", "A3", "A2", "A1", *(f"B{i}" for i in range(1, 13)))
_SKIRIUK = (*_MASTERS, *(f"B{i}" for i in range(7, 0, -1)))
_MURRAY = (*_SKIRIUK, "C1", "C2", "C3", "C4")
_STANDARD_ROSETTES = frozenset({"A1", "C1", "B4", "A7", "C7"})
_ASEB_ROSETTES = frozenset({"A1", "C1", "B4", "B8", "B12"})


@dataclass(frozen=True)
class Rules:
    """A rule set of the Royal Game of Ur.

    Attributes:
        name: Short name (``"finkel"``, ``"blitz"``, ... or a custom name).
        path: Light's tiles at path positions 1..L.
        rosettes: Rosette tiles of the board (only those on a path matter).
        pieces: Pieces per side.
        roll_probabilities: Probability of each roll 0..max_roll.
        safe_rosettes: A piece on a rosette cannot be captured.
        rosette_extra_roll: Landing on a rosette grants another roll.
        capture_extra_roll: Capturing grants another roll.
    """

    name: str
    path: tuple[str, ...]
    rosettes: frozenset[str]
    pieces: int
    roll_probabilities: tuple[float, ...]
    safe_rosettes: bool = True
    rosette_extra_roll: bool = True
    capture_extra_roll: bool = False

    def __post_init__(self) -> None:
        _validate(self)

    @classmethod
    def custom(
        cls,
        name: str,
        path: Sequence[str],
        rosettes: Sequence[str],
        pieces: int,
        dice: str | Sequence[float] = "four-binary",
        *,
        safe_rosettes: bool = True,
        rosette_extra_roll: bool = True,
        capture_extra_roll: bool = False,
    ) -> Rules:
        """Build a rule set from a path, rosettes, dice and the three flags.

        Args:
            name: A name for the rule set (used in headers of solved tables and in reports).
            path: Light's tiles in order, e.g. ``["A4", "A3", ..., "A7"]``; dark's path mirrors it.
            rosettes: Rosette tiles.
            pieces: Pieces per side, 1 to ``MAX_PIECES``.
            dice: A name from :data:`DICE` or the probabilities of rolls 0, 1, 2, ...
            safe_rosettes: Whether a piece on a rosette cannot be captured.
            rosette_extra_roll: Whether landing on a rosette gives another roll.
            capture_extra_roll: Whether a capture gives another roll.
        """
        if isinstance(dice, str):
            if dice not in DICE:
                raise ValueError(f"unknown dice {dice!r}; known dice: {', '.join(DICE)}")
            probabilities = DICE[dice]
        else:
            if isinstance(dice, (bytes, dict)) or any(
                isinstance(p, bool) or not isinstance(p, (int, float)) for p in dice
            ):
                raise ValueError(f"dice must be a name ({', '.join(DICE)}) or numbers, got {dice!r}")
            probabilities = tuple(float(p) for p in dice)
        return cls(
            name=name,
            path=tuple(path),
            rosettes=frozenset(rosettes),
            pieces=pieces,
            roll_probabilities=probabilities,
            safe_rosettes=safe_rosettes,
            rosette_extra_roll=rosette_extra_roll,
            capture_extra_roll=capture_extra_roll,
        )

    def __copy__(self) -> Rules:
        return self  # immutable: copies (OpenSpiel clones states by deep copy) share one object

    def __deepcopy__(self, memo: dict) -> Rules:
        return self

    def to_dict(self) -> dict[str, Any]:
        """The rule set as JSON-ready data (for file headers, model cards and game records)."""
        return {
            "name": self.name,
            "path": list(self.path),
            "rosettes": sorted(self.rosettes),
            "pieces": self.pieces,
            "roll_probabilities": list(self.roll_probabilities),
            "safe_rosettes": self.safe_rosettes,
            "rosette_extra_roll": self.rosette_extra_roll,
            "capture_extra_roll": self.capture_extra_roll,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rules:
        """Rebuild a rule set from :meth:`to_dict`'s data (untrusted: records, tables and cards carry it).

        Every field must have its JSON type: a name, a list of tile names, a list of rosette tiles, an integer,
        a list of numbers and three booleans (``true``/``false``, never the strings ``"no"`` or ``"false"``).

        Raises:
            ValueError: If a field is missing, unknown or of the wrong type, or the rules are invalid.
        """
        fields = ("name", "path", "rosettes", "pieces", "roll_probabilities", *_FLAGS)
        if not isinstance(data, dict):
            raise ValueError(
                f"rule set data must be a JSON object with the fields {list(fields)}, got {type(data).__name__}"
            )
        missing = [f for f in fields if f not in data]
        if missing:
            raise ValueError(f"rule set data lacks the fields {missing}")
        unknown = sorted(str(k) for k in data if k not in fields)
        if unknown:
            raise ValueError(f"rule set data has unknown fields {unknown}; its fields are {list(fields)}")
        for key in ("path", "rosettes", "roll_probabilities"):
            if not isinstance(data[key], list):
                raise ValueError(f"rule set field {key!r} must be a list, got {data[key]!r}")
        probabilities = data["roll_probabilities"]
        if any(isinstance(p, bool) or not isinstance(p, (int, float)) for p in probabilities):
            raise ValueError(f"rule set field 'roll_probabilities' must hold numbers, got {probabilities!r}")
        return cls(
            name=data["name"],
            path=tuple(data["path"]),
            rosettes=frozenset(_hashable(data["rosettes"])),
            pieces=data["pieces"],
            roll_probabilities=tuple(float(p) for p in data["roll_probabilities"]),
            **{flag: data[flag] for flag in _FLAGS},
        )

    def with_pieces(self, pieces: int) -> Rules:
        """The same rule set played with another piece count."""
        return replace(self, pieces=pieces)

    @property
    def length(self) -> int:
        """L, the number of path positions on the board (a piece scores at L + 1)."""
        return len(self.path)

    @property
    def max_roll(self) -> int:
        """The largest roll the dice can show."""
        return len(self.roll_probabilities) - 1

    @property
    def rolls(self) -> tuple[int, ...]:
        """The rolls that have a positive probability."""
        return tuple(r for r, p in enumerate(self.roll_probabilities) if p > 0)

    @cached_property
    def dark_path(self) -> tuple[str, ...]:
        """Dark's tiles at path positions 1..L (light's path with columns A and C swapped)."""
        return tuple(mirror_tile(t) for t in self.path)

    @cached_property
    def board(self) -> frozenset[str]:
        """Every tile on either player's path."""
        return frozenset(self.path) | frozenset(self.dark_path)

    @cached_property
    def rosette_positions(self) -> tuple[int, ...]:
        """Path positions (1..L) whose tile is a rosette."""
        return tuple(p for p, t in enumerate(self.path, start=1) if t in self.rosettes)

    @cached_property
    def shared_positions(self) -> tuple[int, ...]:
        """Path positions whose tile is also on the opponent's path (the war zone)."""
        opponent_tiles = set(self.dark_path)
        return tuple(p for p, t in enumerate(self.path, start=1) if t in opponent_tiles)

    @property
    def visits_tiles_twice(self) -> bool:
        """True when the path visits some tile twice (Murray, Skiriuk)."""
        return len(set(self.path)) != len(self.path)

    def describe(self) -> str:
        """One line summarising the rule set."""
        dice = next((k for k, v in DICE.items() if v == self.roll_probabilities), "custom dice")
        flags = [
            "safe rosettes" if self.safe_rosettes else "rosettes not safe",
            "rosette extra roll" if self.rosette_extra_roll else "no rosette extra roll",
            "capture extra roll" if self.capture_extra_roll else "no capture extra roll",
        ]
        return f"{self.name}: path of {self.length}, {self.pieces} pieces, {dice}, " + ", ".join(flags)

    def report_header(self) -> dict[str, str | int]:
        """What every JSON report says of its rules: the one-line description, the rule set's name, the pieces."""
        return {"rules": self.describe(), "rule_set": self.name, "pieces": self.pieces}


def mirror_tile(tile: str) -> str:
    """The tile on the other side of the board (A <-> C; B stays)."""
    return {"A": "C", "C": "A", "B": "B"}[tile[0]] + tile[1:]


def _validate(rules: Rules) -> None:
    if not isinstance(rules.name, str) or not _NAME.fullmatch(rules.name):
        raise ValueError(
            f"invalid rule set name {rules.name!r}: a name is 1 to 40 letters, digits, '-' or '_', "
            "starting with a letter or digit"
        )
    problems = []
    for flag in _FLAGS:
        if not isinstance(getattr(rules, flag), bool):
            problems.append(f"{flag} must be true or false, got {getattr(rules, flag)!r}")
    if not rules.path:
        problems.append("the path is empty")
    if len(rules.path) > MAX_PATH_LENGTH:
        problems.append(f"the path has {len(rules.path)} tiles; at most {MAX_PATH_LENGTH} are supported")
    bad_tiles = {}
    for where, tiles in (("path", rules.path), ("rosettes", rules.rosettes)):
        bad = [t for t in tiles if not isinstance(t, str) or not _TILE.match(t)]
        if bad:
            bad_tiles[where] = bad
            problems.append(
                f"bad tile names {bad[:5]} in the {where} (a tile is a column A, B or C and a row, like 'B4')"
            )
    if not bad_tiles:
        for a, b in zip(rules.path, rules.path[1:], strict=False):
            if a == b:
                problems.append(f"the path stays on tile {a} for two positions")
    try:
        integer(rules.pieces, "pieces", 1, MAX_PIECES)
    except ValueError as err:
        problems.append(str(err))
    probs = rules.roll_probabilities
    if not isinstance(probs, tuple) or any(isinstance(p, bool) or not isinstance(p, (int, float)) for p in probs):
        raise ValueError(
            f"invalid rule set {rules.name!r}: roll probabilities must be a tuple of numbers, got {probs!r}"
        )
    if len(probs) > MAX_ROLL + 1:
        problems.append(f"the dice have {len(probs)} outcomes; rolls run from 0 to at most {MAX_ROLL}")
    elif len(probs) < 2 or any(not math.isfinite(p) or p < 0 for p in probs) or abs(math.fsum(probs) - 1.0) > 1e-12:
        problems.append(f"roll probabilities {probs} must be finite, non-negative, cover rolls 0..n and sum to 1")
    elif all(p == 0 for p in probs[1:]):
        problems.append("the dice never roll a positive number, so no piece could ever move")
    if problems:
        raise ValueError(f"invalid rule set {rules.name!r}: " + "; ".join(problems))


def _hashable(items: list) -> list:
    """``items`` if every one can go into a set (JSON lists and objects cannot), else a ValueError naming one."""
    for item in items:
        if isinstance(item, (list, dict)):
            raise ValueError(f"bad tile name {item!r} (a tile is a column A, B or C and a row, like 'B4')")
    return items


def _standard(
    name: str, path: tuple[str, ...], rosettes: frozenset[str], pieces: int, dice: str, **flags: bool
) -> Rules:
    return Rules(name=name, path=path, rosettes=rosettes, pieces=pieces, roll_probabilities=DICE[dice], **flags)


_RULE_SETS: dict[str, Rules] = {
    "finkel": _standard("finkel", _BELL, _STANDARD_ROSETTES, 7, "four-binary"),
    "blitz": _standard(
        "blitz", _MASTERS, _STANDARD_ROSETTES, 5, "four-binary", safe_rosettes=False, capture_extra_roll=True
    ),
    "masters": _standard("masters", _MASTERS, _STANDARD_ROSETTES, 7, "three-binary-zero-as-four", safe_rosettes=False),
    "aseb": _standard("aseb", _ASEB, _ASEB_ROSETTES, 5, "four-binary"),
    "murray": _standard("murray", _MURRAY, _STANDARD_ROSETTES, 7, "four-binary"),
    "skiriuk": _standard("skiriuk", _SKIRIUK, _STANDARD_ROSETTES, 7, "four-binary"),
}

RULE_SET_NAMES: tuple[str, ...] = tuple(_RULE_SETS)
"""Names accepted by :func:`get_rules`."""


def get_rules(name: str | Rules, pieces: int | None = None) -> Rules:
    """Return a named rule set, optionally with another piece count.

    Args:
        name: One of :data:`RULE_SET_NAMES` (case-insensitive), or a :class:`Rules` to pass through.
        pieces: Pieces per side (1 to ``MAX_PIECES``); ``None`` keeps the rule set's own count.

    Raises:
        ValueError: For an unknown name or a piece count out of range.
    """
    if isinstance(name, Rules):
        rules = name
    elif isinstance(name, str) and name.strip().lower() in _RULE_SETS:
        rules = _RULE_SETS[name.strip().lower()]
    else:
        raise ValueError(f"unknown rule set {name!r}; known rule sets: {', '.join(RULE_SET_NAMES)}")
    if pieces is not None and pieces != rules.pieces:
        rules = rules.with_pieces(integer(pieces, "pieces", 1, MAX_PIECES))
    return rules
