"""An immutable, hashable position of the Royal Game of Ur: the public way to handle positions.

A :class:`Position` wraps the packed integer form of :mod:`urgym.core` and a :class:`~urgym.Rules`.
Every rule it applies comes from the kernels; this module validates input and converts at the boundary.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

from urgym import core
from urgym.checks import integer, integer_array, is_integer
from urgym.core import geometry, positions_mask
from urgym.render import board_text
from urgym.rules import Rules, get_rules

__all__ = ["SIDES", "Decision", "MoveResult", "Position", "check_codes"]

SIDES = ("light", "dark")


class MoveResult(NamedTuple):
    """What one move did (see :meth:`Position.move_result`)."""

    position: Position
    extra_roll: bool
    captured: bool
    landed_on_rosette: bool
    scored: bool
    won: bool

    @classmethod
    def from_flags(cls, position: Position, flags: int) -> MoveResult:
        """Wrap the outcome flags of :func:`urgym.core.apply_move` and the position they led to."""
        return cls(
            position,
            bool(flags & core.EXTRA_ROLL),
            bool(flags & core.CAPTURE),
            bool(flags & core.ROSETTE),
            bool(flags & core.SCORED),
            bool(flags & core.WIN),
        )


class Position:
    """A position: each side's pieces, pieces at home, scored pieces, and the side to move.

    Build one with :meth:`start`, :meth:`from_pieces` or :meth:`from_code`; positions compare and hash
    by rule set and content. Path positions run 0 (home), 1..L (on the board), L + 1 (scored).
    """

    __slots__ = ("_code", "_rules")

    def __init__(self, rules: Rules, code: int) -> None:
        # Cheap checks only (it is built at every decision): from_code validates a code fully.
        if not isinstance(rules, Rules):
            raise ValueError(f"rules must be a Rules (see urgym.get_rules), got {type(rules).__name__}")
        code = integer(code, "a position code (Position.code)")
        problem = _code_problem(rules, code)
        if problem:
            raise ValueError(f"position code {code} {problem}")
        self._rules = rules
        self._code = code

    # --- construction -------------------------------------------------------------------------------
    @classmethod
    def start(cls, rules: Rules | str) -> Position:
        """The opening position: every piece at home, light to move."""
        rules = get_rules(rules)
        return cls(rules, core.start_state(rules.pieces))

    @classmethod
    def from_pieces(
        cls,
        rules: Rules | str,
        light: Iterable[int] = (),
        dark: Iterable[int] = (),
        light_home: int | None = None,
        dark_home: int | None = None,
        turn: str = "light",
    ) -> Position:
        """Build a position from each side's on-board path positions and pieces at home.

        Args:
            rules: A :class:`Rules` or a rule-set name.
            light: Light's on-board path positions (1..L).
            dark: Dark's on-board path positions (1..L), on dark's own path.
            light_home: Light's pieces at home; ``None`` means every piece not on the board (none scored).
            dark_home: The same for dark.
            turn: ``"light"`` or ``"dark"``, the side to move.

        Raises:
            ValueError: For an impossible position, saying why.
        """
        rules = get_rules(rules)
        length, pieces = rules.length, rules.pieces
        sides = {"light": _positions(light, "light", length), "dark": _positions(dark, "dark", length)}
        homes = {"light": light_home, "dark": dark_home}
        for side, on_board in sides.items():
            if homes[side] is None:
                homes[side] = pieces - len(on_board)
            home = homes[side]
            integer(home, f"{side}_home", 0)
            if len(on_board) + home > pieces:
                raise ValueError(
                    f"{side} has {len(on_board)} pieces on the board and {home} at home: more than the "
                    f"{pieces} pieces of the rule set {rules.name!r}"
                )
        _check_tiles(rules, sides)
        finished = [s for s in SIDES if not sides[s] and homes[s] == 0]
        if len(finished) == 2:
            raise ValueError("both sides have scored every piece; a game ends when the first side does")
        if turn not in SIDES:
            raise ValueError(f"turn must be 'light' or 'dark', got {turn!r}")
        mover = turn
        other = "dark" if mover == "light" else "light"
        code = core.pack(
            positions_mask(sides[mover]),
            positions_mask(sides[other]),
            int(homes[mover]),
            int(homes[other]),
            SIDES.index(mover),
        )
        return cls(rules, code)

    @classmethod
    def from_code(cls, rules: Rules | str, code: int) -> Position:
        """Rebuild a position from its packed integer form (:attr:`code`), validating it."""
        rules = get_rules(rules)
        probe = cls(rules, code)
        return cls.from_pieces(
            rules, probe.pieces("light"), probe.pieces("dark"), probe.home("light"), probe.home("dark"), probe.turn
        )

    # --- state --------------------------------------------------------------------------------------
    @property
    def rules(self) -> Rules:
        """The rule set of the position."""
        return self._rules

    @property
    def code(self) -> int:
        """The packed integer form used by the numba kernels (mover's point of view)."""
        return self._code

    @property
    def turn(self) -> str:
        """The side to move, ``"light"`` or ``"dark"`` (after a win: the losing side)."""
        return SIDES[core.turn_of(self._code)]

    @property
    def winner(self) -> str | None:
        """``"light"`` or ``"dark"`` once a side has scored every piece, else ``None``."""
        w = core.winner_of(self._code)
        return None if w < 0 else SIDES[w]

    @property
    def is_over(self) -> bool:
        """Whether a side has borne off every piece."""
        return self.winner is not None

    def pieces(self, side: str) -> tuple[int, ...]:
        """The side's on-board path positions, ascending."""
        mask = core.own_mask(self._code) if self._is_mover(side) else core.opp_mask(self._code)
        return tuple(p for p in range(1, self._rules.length + 1) if (mask >> (p - 1)) & 1)

    def home(self, side: str) -> int:
        """The side's pieces at home (not yet entered)."""
        return int(core.own_home(self._code) if self._is_mover(side) else core.opp_home(self._code))

    def scored(self, side: str) -> int:
        """The side's pieces borne off."""
        return self._rules.pieces - self.home(side) - len(self.pieces(side))

    def tiles(self, side: str) -> tuple[str, ...]:
        """The tiles the side's on-board pieces stand on."""
        path = self._rules.path if _check_side(side) == "light" else self._rules.dark_path
        return tuple(path[p - 1] for p in self.pieces(side))

    # --- chance -------------------------------------------------------------------------------------
    @property
    def is_chance_node(self) -> bool:
        """True while the game goes on: a position is always met before its roll (OpenSpiel's chance node)."""
        return not self.is_over

    def chance_outcomes(self) -> tuple[tuple[int, float], ...]:
        """The rolls this position can meet and their probabilities (rolls of probability 0 left out).

        Raises:
            ValueError: If the game is over (a finished game has no chance node).
        """
        if self.is_over:
            raise ValueError(f"the game is over: {self.winner} has won, so there is no roll to make")
        rolls, probabilities = core.chance_outcomes(self._rules)
        return tuple((int(r), float(p)) for r, p in zip(rolls, probabilities, strict=True))

    def after_roll(self, roll: int) -> Decision:
        """The decision this position meets after ``roll``: its legal moves, or a forced pass."""
        if self.is_over:
            raise ValueError(f"the game is over: {self.winner} has won, so there is no roll to make")
        return Decision(self, roll, self.legal_moves(roll))

    # --- moves --------------------------------------------------------------------------------------
    def legal_moves(self, roll: int) -> tuple[int, ...]:
        """Source positions of the legal moves for ``roll`` (0 enters a piece); empty: the turn passes."""
        self._check_roll(roll)
        if self.is_over:
            return ()
        out = np.empty(core.MAX_MOVES, dtype=np.int64)
        n = core.legal_moves(self._code, roll, geometry(self._rules), out)
        return tuple(int(m) for m in out[:n])

    def move_result(self, roll: int, move: int | None) -> MoveResult:
        """Play ``move`` for ``roll`` and say what happened (capture, rosette, extra roll, score, win).

        ``move`` is the source position of the piece to move (0 enters a piece from home), or ``None``
        to pass when the roll has no legal move.

        Raises:
            ValueError: If the game is over, the roll is impossible, or the move is illegal (the message
                lists the legal moves).
        """
        if self.is_over:
            raise ValueError(f"the game is over: {self.winner} has won")
        if move is not None:
            integer(move, "a move (the source position of the piece, or None to pass)")
        legal = self.legal_moves(roll)
        if move is None:
            if legal:
                raise ValueError(f"roll {roll} has legal moves {list(legal)}; a player must move if they can")
            return MoveResult(Position(self._rules, core.swap_sides(self._code)), False, False, False, False, False)
        if move not in legal:
            allowed = f"legal moves: {list(legal)}" if legal else "no move is legal: pass with move=None"
            raise ValueError(f"illegal move {move!r} for roll {roll} ({self.turn} to move); {allowed}")
        code, flags = core.apply_move(self._code, roll, int(move), geometry(self._rules))
        return MoveResult.from_flags(Position(self._rules, code), flags)

    def play(self, roll: int, move: int | None) -> Position:
        """The position after ``move`` for ``roll`` (``None`` passes a roll with no legal move)."""
        return self.move_result(roll, move).position

    # --- dunder -------------------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return isinstance(other, Position) and self._code == other._code and self._rules == other._rules

    def __hash__(self) -> int:
        return hash((self._rules, self._code))

    def __repr__(self) -> str:
        return (
            f"Position(rules={self._rules.name!r}, light={list(self.pieces('light'))}, "
            f"dark={list(self.pieces('dark'))}, light_home={self.home('light')}, "
            f"dark_home={self.home('dark')}, turn={self.turn!r})"
        )

    def __str__(self) -> str:
        return board_text(self)

    # --- helpers ------------------------------------------------------------------------------------
    def _is_mover(self, side: str) -> bool:
        return SIDES.index(_check_side(side)) == core.turn_of(self._code)

    def _check_roll(self, roll: int) -> None:
        probs = self._rules.roll_probabilities
        if not is_integer(roll) or not (0 <= roll < len(probs) and probs[roll] > 0):
            raise ValueError(
                f"roll {roll!r} is impossible with the dice of {self._rules.name!r}; "
                f"possible rolls: {list(self._rules.rolls)}"
            )


class Decision(NamedTuple):
    """A decision point: a position after its roll (see :meth:`Position.after_roll`).

    ``legal_moves`` is empty when the roll has no legal move; then the only continuation is the pass,
    ``play(None)``.
    """

    position: Position
    roll: int
    legal_moves: tuple[int, ...]

    @property
    def is_chance_node(self) -> bool:
        """False: a decision has its roll already (OpenSpiel's decision node, not a chance node)."""
        return False

    @property
    def must_pass(self) -> bool:
        """True when the roll has no legal move and the turn passes."""
        return not self.legal_moves

    def play(self, move: int | None) -> Position:
        """The position after ``move`` (``None`` passes; only allowed when there is no legal move)."""
        return self.position.play(self.roll, move)


def _code_problem(rules: Rules, code: int) -> str | None:
    """What makes ``code`` no packed position of ``rules`` (None: nothing a cheap check finds)."""
    if code < 0 or code >> (core.TURN_SHIFT + 1):
        return "is outside the packed format"
    length, pieces = rules.length, rules.pieces
    for shift, home_shift in ((0, core.OWN_HOME_SHIFT), (core.OPP_SHIFT, core.OPP_HOME_SHIFT)):
        mask = (code >> shift) & core.FIELD_MASK
        if mask >> length:
            return f"has pieces beyond path position {length}"
        if ((code >> home_shift) & core.HOME_MASK) + mask.bit_count() > pieces:
            return f"gives a side more than the {pieces} pieces of {rules.name!r}"
    return None


def check_codes(rules: Rules, codes: np.ndarray) -> None:
    """Validate many packed positions at once, as :meth:`Position.from_code` validates one.

    A vectorised screen over the codes (ranges, piece counts, two pieces on one tile, both sides finished); the
    first code it flags is rebuilt by :meth:`Position.from_code`, whose message says what is wrong with it.

    Raises:
        ValueError: For the first code that is no position of ``rules``.
    """
    codes = integer_array(codes, "code").reshape(-1)
    length, pieces = rules.length, rules.pieces
    g = geometry(rules)[0]
    own, opp = codes & core.FIELD_MASK, (codes >> core.OPP_SHIFT) & core.FIELD_MASK
    own_h, opp_h = (codes >> core.OWN_HOME_SHIFT) & core.HOME_MASK, (codes >> core.OPP_HOME_SHIFT) & core.HOME_MASK
    bad = (codes < 0) | ((own | opp) >> length != 0)
    bad |= (own_h + _bit_counts(own) > pieces) | (opp_h + _bit_counts(opp) > pieces)
    bad |= ((own == 0) & (own_h == 0)) & ((opp == 0) & (opp_h == 0))
    for p in range(1, length + 1):
        at_p = (own >> (p - 1)) & 1 == 1
        others = int(g["own_same_tile"][p]) & ~(1 << (p - 1))
        bad |= at_p & (((own & others) != 0) | ((opp & int(g["opp_same_tile"][p])) != 0))
        at_p_opp = (opp >> (p - 1)) & 1 == 1
        bad |= at_p_opp & ((opp & others) != 0)  # the paths mirror each other: the same tiles for the opponent
    flagged = np.flatnonzero(bad)
    if len(flagged):
        Position.from_code(rules, int(codes[flagged[0]]))
        raise ValueError(f"position code {int(codes[flagged[0]])} is no position of {rules.name!r}")


def _bit_counts(masks: np.ndarray) -> np.ndarray:
    return np.unpackbits(masks.astype("<u8").view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1)


def _check_side(side: str) -> str:
    if side not in SIDES:
        raise ValueError(f"side must be 'light' or 'dark', got {side!r}")
    return side


def _positions(values: Iterable[int], side: str, length: int) -> tuple[int, ...]:
    positions = tuple(values)
    for p in positions:
        if not is_integer(p) or not 1 <= p <= length:
            raise ValueError(
                f"{side} piece at {p!r}: on-board path positions run from 1 to {length} "
                "(home and scored pieces are given as counts)"
            )
    if len(set(positions)) != len(positions):
        raise ValueError(f"{side} has two pieces at the same path position: {sorted(positions)}")
    return tuple(sorted(int(p) for p in positions))


def _check_tiles(rules: Rules, sides: dict[str, tuple[int, ...]]) -> None:
    """Two pieces can never stand on one tile, whatever their path positions."""
    seen: dict[str, str] = {}
    for side, path in (("light", rules.path), ("dark", rules.dark_path)):
        for p in sides[side]:
            tile = path[p - 1]
            if tile in seen:
                raise ValueError(f"two pieces on tile {tile}: {seen[tile]} and {side} at path position {p}")
            seen[tile] = f"{side} at path position {p}"
