"""A game in Python on the core's game flow: roll, pass, decide, move, extra roll.

:class:`Game` is the Python face of :func:`urgym.core.next_decision` and :func:`urgym.core.play_move`: it
stops at every decision, and game ``game`` of seed ``seed`` rolls the same dice as the simulator, the
environments, match play and the terminal game do for that (seed, game).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from urgym import core
from urgym.checks import integer, is_integer
from urgym.position import SIDES, MoveResult, Position
from urgym.rules import Rules, get_rules

__all__ = ["MAX_RECORD_STEPS", "Game", "GameStep", "check_record_length", "check_seed"]

MAX_RECORD_STEPS = 100_000
"""Most rolls a record may hold: far more than any real game (random play of murray with 15 pieces, the longest
rule set, stays near 14,000), far fewer than a record made to exhaust the review (10^6 passes took 98 s and 5.6 GB)."""


class GameStep(NamedTuple):
    """One roll of a game: who rolled, what, and the move played (``None``: no legal move, the turn passed)."""

    side: str
    roll: int
    move: int | None


def check_seed(value: object, name: str = "seed", bits: int = 64) -> int:
    """``value`` as a seed: a non-negative integer below ``2**bits`` (bools and floats are refused).

    Seeds take 64 bits; game indices 63 (the kernels count games in int64).
    """
    return integer(value, name, 0, 2**bits - 1, bounds=f"from 0 to 2**{bits} - 1")


class Game:
    """One game, always standing at a decision (:attr:`legal_moves` not empty) or over.

    Args:
        rules: A :class:`~urgym.Rules` or a rule-set name.
        seed: Seed of the dice (a non-negative integer).
        game: Which game of that seed: the dice stream is keyed by (seed, game).
        pieces: Pieces per side (default: the rule set's).

    Rolls with no legal move pass by themselves; :attr:`history` records every roll, passes included.
    """

    def __init__(self, rules: Rules | str = "finkel", seed: int = 0, game: int = 0, pieces: int | None = None) -> None:
        self.rules = get_rules(rules, pieces)
        self.seed = check_seed(seed)
        self.game = check_seed(game, "game", bits=63)
        self.history: list[GameStep] = []
        self._geom = core.geometry(self.rules)
        self._flow = core.flow_buffers(1)
        core.start_game(self._flow, 0, self.rules.pieces, np.uint64(self.seed), self.game)
        self._legal: tuple[int, ...] = ()  # the legal moves of the roll, derived once per decision
        self._roll_until_decision()

    @property
    def position(self) -> Position:
        """The current position (before the move of :attr:`roll`)."""
        return Position(self.rules, self._state)

    @property
    def _state(self) -> int:
        return int(self._flow[0]["state"])

    @property
    def roll(self) -> int:
        """The roll the side to move must play (0 once the game is over)."""
        return int(self._flow[0]["roll"]) if self._legal else 0

    @property
    def legal_moves(self) -> tuple[int, ...]:
        """The legal moves of :attr:`roll` (empty once the game is over)."""
        return self._legal

    @property
    def turn(self) -> str:
        """The side to choose now."""
        return SIDES[core.turn_of(self._state)]

    @property
    def is_over(self) -> bool:
        """Whether the game has ended."""
        return not self._legal

    @property
    def winner(self) -> str | None:
        """The winning side, None while the game goes on."""
        return self.position.winner

    @property
    def turns(self) -> int:
        """Turns finished by both sides (a turn ends when the dice pass to the other side)."""
        return int(self._flow[0]["turns"])

    @property
    def moves_played(self) -> int:
        """Moves played so far (passes not counted)."""
        return int(self._flow[0]["played"])

    def play(self, move: int) -> MoveResult:
        """Play ``move`` (a source path position, 0 enters a piece), then roll on to the next decision.

        Raises:
            ValueError: If the game is over or the move is not legal (the message lists the legal moves).
        """
        if self.is_over:
            raise ValueError(f"the game is over: {self.winner} has won")
        if not is_integer(move) or int(move) not in self._legal:
            raise ValueError(
                f"illegal move {move!r} for roll {self.roll} ({self.turn} to move); legal moves: {list(self._legal)}"
            )
        self.history.append(GameStep(self.turn, self.roll, int(move)))
        flags = core.play_move(self._flow, 0, int(move), self._geom)
        result = MoveResult.from_flags(self.position, flags)
        self._roll_until_decision()
        return result

    def _roll_until_decision(self) -> None:
        flow = self._flow[0]
        while not core.is_over(self._state):
            side = self.turn
            n = core.roll_turn(self._flow, 0, self._geom)
            if n:
                self._legal = tuple(flow["moves"][:n].tolist())
                return
            self.history.append(GameStep(side, int(flow["roll"]), None))
        self._legal = ()

    def __repr__(self) -> str:
        state = f"{self.winner} won" if self.is_over else f"{self.turn} to play roll {self.roll}"
        return f"Game(rules={self.rules.name!r}, seed={self.seed}, game={self.game}, {state})"


def check_record_length(steps: int) -> None:
    """Refuse a record of more rolls than any real game has (:data:`MAX_RECORD_STEPS`).

    Raises:
        ValueError: Saying how long the record is and what is allowed.
    """
    if steps > MAX_RECORD_STEPS:
        raise ValueError(
            f"the record has {steps:,} rolls, more than any real game (at most {MAX_RECORD_STEPS:,}; "
            "the longest of 2,000 random games of murray with 15 pieces has about 14,000)"
        )
