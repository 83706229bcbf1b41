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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from urgym.files import write_atomic
from urgym.game import Game, GameStep
from urgym.position import SIDES, Position
from urgym.rules import Rules

__all__ = ["RECORD_FORMAT", "RECORD_VERSION", "GameRecord"]

RECORD_FORMAT = "urgym-game-record"
RECORD_VERSION = 1


@dataclass(frozen=True)
class GameRecord:
    """A whole game: rules, players, dice seed and every roll with the move played (None: a pass)."""

    rules: Rules
    steps: tuple[GameStep, ...]
    players: dict[str, str] = field(default_factory=lambda: {"light": "", "dark": ""})
    seed: int | None = None
    game: int | None = None

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
        position = Position.start(self.rules)
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
        return self.replay().winner

    # --- JSON ---------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {"format": RECORD_FORMAT, "version": RECORD_VERSION, "rules": self.rules.to_dict(),
                "players": dict(self.players), "seed": self.seed, "game": self.game,
                "steps": [{"side": s.side, "roll": s.roll, "move": s.move} for s in self.steps],
                "winner": self.winner}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameRecord:
        """Rebuild a record, checking the format, every entry and the winner by replaying.

        Raises:
            ValueError: For another format or version, a missing field, or the first bad step.
        """
        if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
            raise ValueError(f"not a urgym game record (its 'format' should be {RECORD_FORMAT!r})")
        if data.get("version") != RECORD_VERSION:
            raise ValueError(f"game record version {data.get('version')!r}; this urgym reads version {RECORD_VERSION}")
        missing = [k for k in ("rules", "players", "steps") if k not in data]
        if missing:
            raise ValueError(f"game record lacks {missing}")
        steps = []
        for i, entry in enumerate(data["steps"]):
            if not isinstance(entry, dict) or set(entry) != {"side", "roll", "move"}:
                raise ValueError(f"step {i} ({entry!r}): a step is {{'side', 'roll', 'move'}}")
            side, roll, move = entry["side"], entry["roll"], entry["move"]
            if side not in SIDES or not _is_int(roll) or not (move is None or _is_int(move)):
                raise ValueError(f"step {i} ({entry!r}): side is 'light' or 'dark', roll an integer, move an "
                                 "integer or null")
            steps.append(GameStep(side, roll, move))
        record = cls(Rules.from_dict(data["rules"]), tuple(steps), dict(data["players"]), data.get("seed"),
                     data.get("game"))
        winner = record.winner  # replays, naming the first bad step
        if data.get("winner") is not None and data["winner"] != winner:
            raise ValueError(f"the record says {data['winner']} won, but its moves end with "
                             f"{winner or 'no winner yet'}")
        return record

    # --- RGN --------------------------------------------------------------------------------------
    def to_rgn(self) -> str:
        """The game in RoyalUr's RGN notation (see :mod:`urgym.notation`)."""
        from urgym.notation import format_rgn

        return format_rgn(self)

    @classmethod
    def from_rgn(cls, text: str, rules: Rules | str | None = None) -> GameRecord:
        """Read RGN text (``rules`` is needed when it has no ``Rules`` metadata); see :mod:`urgym.notation`."""
        from urgym.notation import parse_rgn

        return parse_rgn(text, rules)

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
        try:
            text = path.read_text()
            if path.suffix.lower() == ".rgn":
                return cls.from_rgn(text, rules)
            try:
                data = json.loads(text)
            except json.JSONDecodeError as err:
                raise ValueError(f"not a game record: it is not JSON ({err.msg} at line {err.lineno}); records are "
                                 "urgym's JSON or RGN files ending in .rgn") from None
            return cls.from_dict(data)
        except (ValueError, UnicodeDecodeError) as err:
            raise ValueError(f"{path}: {err}") from None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _show(step: GameStep) -> str:
    return f"{step.side} rolled {step.roll}, " + ("passed" if step.move is None else f"moved {step.move}")
