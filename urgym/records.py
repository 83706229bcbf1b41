"""Game records: every roll and move of a game, in a documented, versioned JSON format.

A record holds the rule set, the players, the seed and game index of the dice, and one entry per roll::

    {
      "format": "urgym-game-record",
      "version": 1,
      "rules": {...Rules.to_dict()...},
      "players": {"light": "expectimax:7", "dark": "perfect"},
      "seed": 0, "game": 12,
      "steps": [{"side": "light", "roll": 2, "move": 0},
                {"side": "dark", "roll": 0, "move": null}, ...],
      "winner": "dark"
    }

``move`` is the source path position of the piece moved (0 enters a piece) or ``null`` when the roll had
no legal move and the turn passed. ``seed`` and ``game`` may be ``null`` for games whose dice did not come
from urgym. :meth:`GameRecord.replay` plays the steps through the rules core and raises ``ValueError``
naming the first bad entry; ``winner`` is checked against the replay.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from urgym.files import loads_json, read_bounded, write_atomic
from urgym.game import MAX_RECORD_STEPS, Game, GameStep, check_record_length, check_seed
from urgym.notation import RGNGame, format_rgn, parse_rgn
from urgym.position import SIDES, Position
from urgym.rules import Rules

__all__ = [
    "MAX_PLAYER_NAME",
    "MAX_RECORD_BYTES",
    "MAX_RECORD_STEPS",
    "RECORD_FORMAT",
    "RECORD_VERSION",
    "GameRecord",
    "check_record_length",
    "player_name",
]

RECORD_FORMAT = "urgym-game-record"
RECORD_VERSION = 1
MAX_RECORD_BYTES = 32 << 20
"""Largest record file read (100,000 steps of JSON take about 5 MB)."""
MAX_PLAYER_NAME = 200
"""Longest player name a record may carry (names are shown in terminals, pages and plots)."""
_UNSHOWABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
"""Characters a player name may not hold: control characters (terminal escapes, newlines), bidirectional
overrides (text that reads differently from how it is stored) and lone surrogates (not encodable)."""
_FIELDS = ("format", "version", "rules", "players", "seed", "game", "start", "steps", "winner")


@dataclass(frozen=True)
class GameRecord:
    """A whole game: rules, players, dice seed and every roll with the move played (None: a pass).

    A record may begin at another position than the start (``start``, a position's :attr:`~urgym.Position.code`):
    a study of one position, such as the decisions where exact evaluation found an agent loses most.
    """

    rules: Rules
    steps: tuple[GameStep, ...]
    players: dict[str, str] = field(default_factory=lambda: {"light": "", "dark": ""})
    seed: int | None = None
    game: int | None = None
    start: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.rules, Rules):
            raise ValueError(f"a record's rules must be a Rules, got {type(self.rules).__name__}")
        object.__setattr__(self, "players", _players(self.players))
        for name, bits in (("seed", 64), ("game", 63)):
            value = getattr(self, name)
            if value is not None:
                check_seed(value, f"the record's {name}", bits)
        if not isinstance(self.steps, tuple) or not all(isinstance(s, GameStep) for s in self.steps):
            raise ValueError("a record's steps must be a tuple of GameStep")
        if self.start is not None:
            if not _is_int(self.start):
                raise ValueError(f"a record's start must be a position code (an integer), got {self.start!r}")
            try:
                Position.from_code(self.rules, self.start)
            except (ValueError, OverflowError) as err:
                raise ValueError(f"the record's start {self.start!r} is not a position of its rules: {err}") from None

    def first_position(self) -> Position:
        """The position the record begins at: the start of the game, or its ``start``."""
        return Position.start(self.rules) if self.start is None else Position.from_code(self.rules, self.start)

    @classmethod
    def from_game(cls, game: Game, players: dict[str, str] | None = None) -> GameRecord:
        """The record of a :class:`~urgym.Game` so far (passes included)."""
        return cls(game.rules, tuple(game.history), dict(players or {"light": "", "dark": ""}), game.seed, game.game)

    # --- replay --------------------------------------------------------------------------------------
    def positions(self) -> list[Position]:
        """The position before each step, then the final one (``len(steps) + 1`` positions).

        Raises:
            ValueError: Naming the first entry that is not legal where it stands (wrong side to roll, an
                impossible roll, an illegal move, a pass with a legal move, a step after the end).
        """
        position = self.first_position()
        out = [position]
        for i, step in enumerate(self.steps):
            if position.is_over:
                raise ValueError(f"step {i} ({_show(step)}): the game was already over ({position.winner} won)")
            if step.side != position.turn:
                raise ValueError(f"step {i} ({_show(step)}): it is {position.turn}'s roll, not {step.side}'s")
            try:
                position = position.play(step.roll, step.move)
            except ValueError as err:
                raise ValueError(f"step {i} ({_show(step)}): {err}") from None
            out.append(position)
        return out

    def replay(self) -> Position:
        """The final position after every step (validating each, see :meth:`positions`)."""
        return self.positions()[-1]

    @property
    def winner(self) -> str | None:
        """The winning side, None for an unfinished game."""
        return self.replay().winner

    # --- JSON ---------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The record as plain JSON."""
        return {
            "format": RECORD_FORMAT,
            "version": RECORD_VERSION,
            "rules": self.rules.to_dict(),
            "players": dict(self.players),
            "seed": self.seed,
            "game": self.game,
            **({"start": self.start} if self.start is not None else {}),
            "steps": [{"side": s.side, "roll": s.roll, "move": s.move} for s in self.steps],
            "winner": self.winner,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameRecord:
        """Rebuild a record, checking the format, every field's type, every entry and the winner by replaying.

        Raises:
            ValueError: For another format or version, a missing, unknown or mistyped field, or the first bad step.
        """
        if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
            raise ValueError(f"not a urgym game record (its 'format' should be {RECORD_FORMAT!r})")
        version = data.get("version")
        if type(version) is not int or version != RECORD_VERSION:
            raise ValueError(f"game record version {version!r}; this urgym reads version {RECORD_VERSION}")
        missing = [k for k in ("rules", "players", "steps") if k not in data]
        if missing:
            raise ValueError(f"game record lacks {missing}")
        unknown = sorted(str(k) for k in data if k not in _FIELDS)
        if unknown:
            raise ValueError(f"game record has unknown fields {unknown}; its fields are {list(_FIELDS)}")
        if not isinstance(data["steps"], list):
            raise ValueError(f"the record's steps must be a list, got {type(data['steps']).__name__}")
        check_record_length(len(data["steps"]))
        steps = []
        for i, entry in enumerate(data["steps"]):
            if not isinstance(entry, dict) or set(entry) != {"side", "roll", "move"}:
                raise ValueError(f"step {i} ({entry!r}): a step is {{'side', 'roll', 'move'}}")
            side, roll, move = entry["side"], entry["roll"], entry["move"]
            if side not in SIDES or not _is_int(roll) or not (move is None or _is_int(move)):
                raise ValueError(
                    f"step {i} ({entry!r}): side is 'light' or 'dark', roll an integer, move an integer or null"
                )
            steps.append(GameStep(side, roll, move))
        claimed = data.get("winner")
        if claimed is not None and claimed not in SIDES:
            raise ValueError(f"the record's winner must be 'light', 'dark' or null, got {claimed!r}")
        record = cls(
            Rules.from_dict(data["rules"]),
            tuple(steps),
            data["players"],
            data.get("seed"),
            data.get("game"),
            data.get("start"),
        )
        winner = record.winner  # replays, naming the first bad step
        if claimed is not None and claimed != winner:
            raise ValueError(f"the record says {claimed} won, but its moves end with {winner or 'no winner yet'}")
        return record

    # --- RGN --------------------------------------------------------------------------------------
    def to_rgn(self) -> str:
        """The game in RoyalUr's RGN notation (see :mod:`urgym.notation`).

        Raises:
            ValueError: For a record that begins elsewhere than the start (RGN has no way to say where).
        """
        if self.start is not None:
            raise ValueError("RGN records begin at the start; this record begins at another position (keep it as JSON)")
        self.positions()  # a bad step is named as the record names it
        return format_rgn(RGNGame(self.rules, self.steps, self.players, self.seed, self.game))

    @classmethod
    def from_rgn(cls, text: str, rules: Rules | str | None = None) -> GameRecord:
        """Read RGN text (``rules`` is needed when it has no ``Rules`` metadata); see :mod:`urgym.notation`."""
        return cls(*parse_rgn(text, rules))

    # --- files --------------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> Path:
        """Write the record atomically: RGN for a ``.rgn`` file, JSON otherwise."""
        text = self.to_rgn() if Path(path).suffix.lower() == ".rgn" else json.dumps(self.to_dict(), indent=1) + "\n"
        return write_atomic(path, lambda tmp: tmp.write_text(text))

    @classmethod
    def load(cls, path: str | os.PathLike, rules: Rules | str | None = None) -> GameRecord:
        """Read a record: RGN for a ``.rgn`` file (``rules`` if it names none), JSON otherwise.

        Raises:
            ValueError: Naming the file and the first bad entry.
            FileNotFoundError: If there is no such file.
        """
        path = Path(path)
        if path.is_dir():
            raise ValueError(f"{path} is a directory, not a game record")
        try:
            data = read_bounded(path, MAX_RECORD_BYTES, "a game record")
        except ValueError:
            if path.is_file():  # regular but too long
                raise ValueError(
                    f"{path}: not a game record: more than {MAX_RECORD_BYTES:,} bytes, more than any real game's record"
                ) from None
            raise
        try:
            text = data.decode("utf-8")
            if path.suffix.lower() == ".rgn":
                return cls.from_rgn(text, rules)
            try:
                data = loads_json(text, "it")
            except ValueError as err:
                raise ValueError(
                    f"not a game record: {err}; records are urgym's JSON or RGN files ending in .rgn"
                ) from None
            return cls.from_dict(data)
        except UnicodeDecodeError:
            raise ValueError(f"{path}: not a game record: it is not UTF-8 text") from None
        except ValueError as err:
            raise ValueError(f"{path}: {err}") from None


def player_name(text: str) -> str:
    """A valid player name for ``text`` (an agent spec, say).

    What cannot be shown becomes ``?``, and a text longer than :data:`MAX_PLAYER_NAME` is cut with ``…``. A spec is
    not a name: a spec with a long or odd model path still plays, and its games' records are saved under this form
    of it, never lost when they are written.
    """
    name = _UNSHOWABLE.sub("?", text)
    return name if len(name) <= MAX_PLAYER_NAME else name[: MAX_PLAYER_NAME - 1] + "…"


def _players(players: object) -> dict[str, str]:
    """The players of a record.

    Names of ``light`` and ``dark`` (each optional), strings of at most :data:`MAX_PLAYER_NAME` characters.
    """
    if not isinstance(players, dict):
        raise ValueError(f"a record's players must be an object {{'light': name, 'dark': name}}, got {players!r}")
    unknown = [k for k in players if k not in SIDES]
    if unknown:
        raise ValueError(f"a record's players are 'light' and 'dark', not {unknown}")
    for side, name in players.items():
        if not isinstance(name, str):
            raise ValueError(f"the {side} player's name must be a string, got {name!r}")
        if len(name) > MAX_PLAYER_NAME:
            raise ValueError(f"the {side} player's name has {len(name)} characters; at most {MAX_PLAYER_NAME}")
        bad = _UNSHOWABLE.search(name)
        if bad:
            raise ValueError(
                f"the {side} player's name holds the control character {bad.group()!r}; names are printable text"
            )
    return {side: players.get(side, "") for side in SIDES}


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _show(step: GameStep) -> str:
    return f"{step.side} rolled {step.roll}, " + ("passed" if step.move is None else f"moved {step.move}")
