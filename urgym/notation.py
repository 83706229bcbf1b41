r"""RGN, the Royal Game Notation of RoyalUr.net, for game records.

RGN is RoyalUr's text notation for whole games (RoyalUr-Java, ``notation/RGN.java``), modelled on chess's PGN.
What this module writes and reads:

- Metadata first, one ``[Key "value"]`` line each (``\``, ``"``, newlines escaped with a backslash), then a
  blank line. urgym writes ``Rules``, ``Pieces``, ``Light``, ``Dark``, ``Seed`` and ``Game``; other keys are
  read and ignored.
- Then the turns. A turn is every roll one side makes before the dice pass; light's turns start with their
  number (``1.``), dark's with ``/``, and each line holds one light turn and the dark turn after it.
- A roll with a move is written as the move alone (the roll is the distance moved): the source tile, the
  destination tile, ``x`` if it captures, ``+`` if it lands on a rosette. Tiles are lower-case (``a4``); a
  piece enters from the tile just before its path (``a5`` under Bell's path) and is borne off onto the tile
  just beyond it (``a6``). A roll with no legal move is its value and ``-`` (``0-``). ``#`` ends a finished
  game's last action.

Example, the start of a finkel game::

    [Rules "finkel"]
    [Pieces "7"]

    1. a5a3 / c5c1+ c5c4
    2. 0- / c4b1 ...

RoyalUr's own files may lack ``Rules``: pass the rules to :func:`parse_rgn`. The module reads every rule set
urgym has whose path steps tile by tile (all the named ones).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from urgym.game import GameStep, check_record_length, check_seed
from urgym.position import Position
from urgym.rules import RULE_SET_NAMES, Rules, get_rules

__all__ = ["RGNGame", "format_rgn", "move_text", "parse_rgn"]


class RGNGame(NamedTuple):
    """What RGN holds of a game (:class:`urgym.GameRecord` is built from it and writes itself through it)."""

    rules: Rules
    steps: tuple[GameStep, ...]
    players: dict[str, str]
    seed: int | None
    game: int | None


_TURN_LINE = 60
_METADATA = re.compile(r'^\[(\w+)\s+"((?:[^"\\]|\\.)*)"\]$')
_ACTION = re.compile(r"^(?:([0-9]{1,2})-|([a-z][0-9]{1,2})([a-z][0-9]{1,2})(x?)(\+?))(#?)$")  # ASCII digits only
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "r": "\r"}


# --- tiles -------------------------------------------------------------------------------------------
def _parts(tile: str) -> tuple[int, int]:
    return "ABC".index(tile[0]), int(tile[1:])


def _beyond(tile: str, previous: str) -> str:
    """The tile one step past ``tile``, continuing the step from ``previous``."""
    (x1, y1), (x0, y0) = _parts(tile), _parts(previous)
    return f"{'ABC'[x1 + x1 - x0]}{y1 + y1 - y0}"


def _path_tiles(rules: Rules, side: str) -> list[str]:
    """Tiles of ``side`` at path positions 0..L+1: the entry tile, the path, the tile pieces leave onto."""
    path = list(rules.path if side == "light" else rules.dark_path)
    if len(path) < 2:
        raise ValueError(f"RGN needs a path of at least two tiles; {rules.name!r} has {len(path)}")
    start, end = _beyond(path[0], path[1]), _beyond(path[-1], path[-2])
    return [start, *path, end]


def move_text(position: Position, roll: int, move: int | None) -> str:
    """The RGN text of one roll and its move (``a4b1x+``) or pass (``0-``), checked for legality."""
    if move is None:
        position.move_result(roll, None)  # raises if the roll had a move
        return f"{roll}-"
    result = position.move_result(roll, move)
    tiles = _path_tiles(position.rules, position.turn)
    text = f"{tiles[move].lower()}{tiles[move + roll].lower()}"
    return text + ("x" if result.captured else "") + ("+" if result.landed_on_rosette else "")


# --- writing -----------------------------------------------------------------------------------------
def _escape(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r") + '"'


def format_rgn(record: RGNGame) -> str:
    """The record as RGN text (metadata, then one line per light turn and the dark turn after it).

    Raises:
        ValueError: For custom rules named like a built-in rule set (the text would read back as that rule set).
    """
    _check_round_trip(record.rules)
    metadata = {
        "Rules": record.rules.name,
        "Pieces": str(record.rules.pieces),
        "Light": record.players.get("light", ""),
        "Dark": record.players.get("dark", ""),
        "Seed": "" if record.seed is None else str(record.seed),
        "Game": "" if record.game is None else str(record.game),
    }
    lines = [f"[{key} {_escape(value)}]" for key, value in metadata.items() if value]
    lines.append("")
    positions = [Position.start(record.rules)]
    for step in record.steps:
        positions.append(positions[-1].play(step.roll, step.move))
    finished = positions[-1].is_over
    turns: list[list[str]] = []
    for i, step in enumerate(record.steps):
        action = move_text(positions[i], step.roll, step.move)
        if finished and i == len(record.steps) - 1:
            action += "#"
        if i == 0 or step.side != record.steps[i - 1].side:
            turns.append([f"{len(turns) // 2 + 1}." if step.side == "light" else "/"])
        turns[-1].append(action)
    for first in range(0, len(turns), 2):
        lines.append(" ".join(_wrap(turn) for turn in turns[first : first + 2]))
    return "\n".join(lines).rstrip("\n") + "\n"


def _check_round_trip(rules: Rules) -> None:
    """RGN names the rule set only: a custom rule set that borrows a built-in name would come back as another."""
    if rules.name.lower() in RULE_SET_NAMES and rules != get_rules(rules.name, rules.pieces):
        raise ValueError(
            f"cannot write RGN for custom rules named {rules.name!r}: RGN names rule sets only, and "
            f"{rules.name!r} is the built-in rule set; give the custom rules another name"
        )


def _wrap(turn: list[str]) -> str:
    """One turn's actions, broken onto further lines past ``_TURN_LINE`` characters (long rosette chains)."""
    out, length = turn[0], len(turn[0])
    for action in turn[1:]:
        if length + 1 + len(action) > _TURN_LINE:
            out, length = out + "\n" + action, len(action)
        else:
            out, length = out + " " + action, length + 1 + len(action)
    return out


# --- reading -----------------------------------------------------------------------------------------
def parse_rgn(text: str, rules: Rules | str | None = None) -> RGNGame:
    """Read RGN text, replaying and checking every action (``GameRecord.from_rgn`` makes a record of it).

    Args:
        text: The RGN text.
        rules: The rule set, needed when the text has no ``Rules`` metadata; if both are given they must agree.

    Raises:
        ValueError: Naming the first bad metadata line or action (an illegal move, a roll that had a move
            written as a pass, a capture or rosette mark that does not match the move, an action in the
            other side's turn, an action after the end).
    """
    if not isinstance(text, str):
        raise ValueError(f"RGN text must be a string, got {type(text).__name__}")
    metadata, body = _split(text)
    rules = _rules(metadata, rules)
    position = Position.start(rules)
    steps = []
    side = None
    new_turn = True  # the next action starts a turn, so a turn marker must come first
    light_turns = 0
    tokens = body.split()
    check_record_length(sum(token != "/" and not token.endswith(".") for token in tokens))
    actions = 0
    for i, token in enumerate(tokens):
        if re.fullmatch(r"[0-9]{1,6}\.", token) or token == "/":
            if not new_turn:
                raise ValueError(
                    f"RGN turn marker {_quote(token)} after action {actions}: {position.turn}'s turn "
                    "goes on there (a rosette gave another roll), so no new turn starts"
                )
            side = "light" if token != "/" else "dark"
            if side == "light":
                light_turns += 1
                if int(token[:-1]) != light_turns:
                    raise ValueError(
                        f"RGN turn marker {_quote(token)}: light's turn {light_turns} is numbered '{light_turns}.'"
                    )
            new_turn = False
            continue
        actions += 1
        where = f"RGN action {actions} ({_quote(token)})"
        match = _ACTION.fullmatch(token)
        if match is None:
            raise ValueError(
                f"{where}: not an action; an action is a move like 'a4b1', 'b3xb5+' or a pass like "
                "'0-', optionally ending with '#'"
            )
        if position.is_over:
            raise ValueError(f"{where}: the game was already over ({position.winner} won)")
        if new_turn:
            marker = f"'{light_turns + 1}.'" if position.turn == "light" else "'/'"
            raise ValueError(f"{where}: {position.turn}'s turn starts here, so {marker} must come before it")
        if side != position.turn:
            raise ValueError(f"{where}: it stands in {side}'s turn, but it is {position.turn}'s roll")
        step = _read_action(position, match, where)
        steps.append(step)
        before = position.turn
        position = position.play(step.roll, step.move)
        new_turn = position.turn != before
        if match.group(6) and (not position.is_over or i != len(tokens) - 1):
            raise ValueError(
                f"{where}: '#' marks the end of a finished game, but "
                + ("the game goes on" if not position.is_over else "more actions follow")
            )
    players = {"light": metadata.get("Light", ""), "dark": metadata.get("Dark", "")}
    return RGNGame(rules, tuple(steps), players, _int_or_none(metadata, "Seed"), _int_or_none(metadata, "Game"))


def _split(text: str) -> tuple[dict[str, str], str]:
    """The metadata lines at the top (unescaped) and the rest of the text."""
    metadata: dict[str, str] = {}
    lines = text.removeprefix("\ufeff").splitlines()  # a byte-order mark some editors write first
    body = 0
    while body < len(lines) and lines[body].strip().startswith("["):
        line = lines[body].strip()
        match = _METADATA.fullmatch(line)
        if match is None:
            raise ValueError(f'RGN metadata line {body + 1} ({_quote(line)}): a metadata line is [Key "value"]')
        if match.group(1) in metadata:
            raise ValueError(f"RGN metadata line {body + 1} ({_quote(line)}): {match.group(1)!r} is given twice")
        metadata[match.group(1)] = re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), match.group(2))
        body += 1
    return metadata, "\n".join(lines[body:])


def _rules(metadata: dict[str, str], rules: Rules | str | None) -> Rules:
    pieces = metadata.get("Pieces")
    if pieces is not None and not re.fullmatch(r"[0-9]{1,2}", pieces):
        raise ValueError(f"RGN metadata Pieces {_quote(pieces)} is not a number of pieces")
    count = int(pieces) if pieces else None
    given = get_rules(rules) if rules is not None else None
    name = metadata.get("Rules")
    if name is None:
        if given is None:
            raise ValueError('the RGN names no rule set (no [Rules "..."] line); give the rules to read it with')
        named = None
    elif given is not None and name == given.name:  # custom rules read back by the caller's own definition
        named = given if count in (None, given.pieces) else get_rules(given, count)
    else:
        named = get_rules(name, count)
    if given is None:
        return named
    if named is not None and named != given:
        raise ValueError(f"the RGN is of {named.describe()!r}, not {given.describe()!r}")
    return given


def _read_action(position: Position, match: re.Match, where: str) -> GameStep:
    side = position.turn
    if match.group(1) is not None:
        roll = int(match.group(1))
        try:
            position.move_result(roll, None)
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
        return GameStep(side, roll, None)
    tiles = [t.lower() for t in _path_tiles(position.rules, side)]
    source, dest = match.group(2), match.group(3)
    candidates = [p for p in (0, *position.pieces(side)) if tiles[p] == source]
    if not candidates:
        raise ValueError(f"{where}: {side} has no piece on {source} (its pieces enter from {tiles[0]})")
    move = candidates[0]
    rolls = [r for r in position.rules.rolls if r > 0 and move + r < len(tiles) and tiles[move + r] == dest]
    if not rolls:
        raise ValueError(
            f"{where}: no roll of {list(position.rules.rolls)} takes a {side} piece from {source} to {dest}"
        )
    roll = rolls[0]
    try:
        result = position.move_result(roll, move)
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None
    for mark, happened, what in (
        ("x", result.captured, "captures"),
        ("+", result.landed_on_rosette, "lands on a rosette"),
    ):
        written = mark in (match.group(4) + match.group(5))
        if written != happened:
            raise ValueError(
                f"{where}: the move {what if happened else 'does not ' + _base(what)}, so it is "
                f"written {move_text(position, roll, move)!r}"
            )
    return GameStep(side, roll, move)


def _base(verb: str) -> str:
    return {"captures": "capture", "lands on a rosette": "land on a rosette"}[verb]


def _int_or_none(metadata: dict[str, str], key: str) -> int | None:
    """An integer metadata value (a seed, or a game index below 2**63), None when absent or empty."""
    value = metadata.get(key, "")
    if value == "":
        return None
    if not re.fullmatch(r"[0-9]{1,20}", value):
        raise ValueError(f"RGN metadata {key} {_quote(value)} is not a whole number (ASCII digits, at most 20)")
    return check_seed(int(value), f"RGN metadata {key}", 64 if key == "Seed" else 63)


def _quote(text: str, limit: int = 40) -> str:
    """``repr(text)``, cut to ``limit`` characters (a stranger's token may be thousands long)."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text):,} characters)"
