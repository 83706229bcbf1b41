"""One game of a person against an agent, for every shell that shows it (the terminal, the browser).

A :class:`GameSession` holds the game (:class:`urgym.Game`, its dice from one seed), the person's side and the
agent, and keeps the game moving as the person sees it: after each of the person's moves, the agent's moves, the
person's only legal moves (played for them) and the rolls that pass are played until the person has a choice to
make or the game ends, each kept as an :class:`Event`. Hints come from the solved table when one is cached, else
from the rule set's shipped neural network (an estimate, which a :class:`Hint` says); the record is the game's.
The shells only show events and ask for moves, as pgx keeps a pure game under a thin environment.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from urgym.agents import Agent
from urgym.agents.networks.neural import NetworkEstimate, shipped_estimate
from urgym.solver import SolvedTable, TableMissingError, is_cached, table_for

from urgym import SIDES, Game, GameRecord, Position, Rules
from urgym.notation import move_text
from urgym.records import player_name
from urgym.startup import interruptible

__all__ = ["Event", "GameSession", "Hint", "cached_table", "describe_move", "hint_source", "other_side"]


def other_side(side: str) -> str:
    """The side that is not ``side``."""
    return "dark" if side == "light" else "light"


def describe_move(position: Position, roll: int, source: int) -> str:
    """A move for people: its RGN notation, then in words.

    The notation is the one of ``play``, ``review``, RGN files and the pages: source and destination tile of the mover's
    own path, ``x`` a capture, ``+`` a rosette.
    """
    result = position.move_result(roll, source)
    path = position.rules.path if position.turn == "light" else position.rules.dark_path
    dest = source + roll
    if source == 0:
        words = f"enter a piece onto {path[dest - 1]}"
    elif dest == position.rules.length + 1:
        words = f"bear off from {path[source - 1]}"
    else:
        words = f"{path[source - 1]} to {path[dest - 1]}"
    notes = [
        note
        for flag, note in (
            (result.captured, "captures"),
            (result.landed_on_rosette, "rosette"),
            (result.extra_roll, "rolls again"),
            (result.won, "wins"),
        )
        if flag
    ]
    return f"{move_text(position, roll, source)}: {words}" + (f" [{', '.join(notes)}]" if notes else "")


def cached_table(rules: Rules) -> SolvedTable | None:
    """The solved table of ``rules`` if an intact one is cached (never solves: a damaged one is moved aside)."""
    if not is_cached(rules):
        return None
    try:
        return table_for(rules, solve=False, progress=False)
    except TableMissingError:  # it was damaged: moved aside, and no solve inside a request
        return None


def hint_source(rules: Rules) -> SolvedTable | NetworkEstimate | None:
    """What hints read for ``rules``.

    The cached solved table (exact), else the rule set's shipped neural network (an estimate, ``exact`` False), else
    None.
    """
    if is_cached(rules):
        return cached_table(rules)
    return shipped_estimate(rules)


@dataclass(frozen=True)
class Event:
    """One step of the game as the person sees it: a move (``move``, a source path position) or a pass (None)."""

    side: str
    roll: int
    move: int | None
    before: Position
    after: Position
    forced: bool = False
    """The person's only legal move, played for them."""

    @property
    def notation(self) -> str:
        """The step in RGN notation (``4-`` for a pass)."""
        return f"{self.roll}-" if self.move is None else move_text(self.before, self.roll, self.move)

    @property
    def text(self) -> str:
        """The step in words."""
        if self.move is None:
            return "no legal move: the turn passes"
        return describe_move(self.before, self.roll, self.move)


@dataclass(frozen=True)
class Hint:
    """Every legal move's winning chance for the person, the best move and the chance before the roll."""

    values: dict[int, float]
    best: int
    before: float
    exact: bool
    """True from the solved table; False for a network's estimate."""
    source: str
    """What the numbers come from, in words."""


class GameSession:
    """A person's game against ``agent``, or two people's on one screen; the dice are game 0 of ``seed``.

    Args:
        rules: The rules of the game.
        agent: The opponent, or None for two people taking turns (each side a person).
        human_side: ``light`` or ``dark``: the person's side against an agent (with two people, the first to move).
        seed: The dice seed (the same rolls every loop of the package makes for it).
        hints: What hints read (the solved table, or a network's estimate), or None to look it up when a hint is
            first asked (:func:`hint_source`: a cached table, else the shipped network).
    """

    def __init__(
        self,
        rules: Rules,
        agent: Agent | None,
        human_side: str,
        seed: int,
        hints: SolvedTable | NetworkEstimate | None = None,
    ) -> None:
        self.rules, self.agent, self.seed = rules, agent, seed
        self.people = SIDES if agent is None else (human_side,)
        self._side = human_side
        self.game = Game(rules, seed)
        self.events: list[Event] = []
        self._source: Any = False if hints is None else hints  # what hints read (False: not looked up yet)

    @property
    def two_players(self) -> bool:
        """Whether two people play each other (no agent)."""
        return self.agent is None

    @property
    def human(self) -> str:
        """The person's side; with two people, the side to move (the last one to move once the game is over)."""
        if not self.two_players:
            return self._side
        game = self.game
        if not game.is_over:
            return game.turn
        return self.events[-1].side if self.events else self._side

    @property
    def awaiting(self) -> bool:
        """Whether a person has a move to choose now."""
        return not self.game.is_over and self.game.turn in self.people and len(self.game.legal_moves) > 1

    def advance(self) -> list[Event]:
        """Play until the person has a choice to make or the game ends; return the new events.

        The agent's moves, the person's only legal moves and the passes are played.
        """
        start = len(self.events)
        game = self.game
        self._tell_passes()
        while not game.is_over and not self.awaiting:
            if game.turn not in self.people:
                self._play(interruptible(self.agent.select_move, game.position, game.roll))
            else:
                self._play(game.legal_moves[0], forced=True)
        return self.events[start:]

    def play(self, move: Any) -> list[Event]:
        """Play the person's ``move`` (a source path position), then :meth:`advance`; return the new events.

        Raises:
            ValueError: When it is not the person's turn, or ``move`` is not one of the legal moves.
        """
        game = self.game
        if game.is_over or game.turn not in self.people:
            raise ValueError("it is not your turn")
        if isinstance(move, bool) or not isinstance(move, int) or move not in game.legal_moves:
            raise ValueError(f"{move!r} is not a legal move; the legal moves are {list(game.legal_moves)}")
        start = len(self.events)
        self._play(move)
        self.advance()
        return self.events[start:]

    def hint_source(self) -> SolvedTable | NetworkEstimate | None:
        """What hints read: the source given, else one looked up once, else None.

        Looked up: the cached table, else the shipped network's estimate of the rules.
        """
        if self._source is False:
            self._source = hint_source(self.rules)
        return self._source

    def hint(self) -> Hint:
        """Every legal move's winning chance for the person, and the best move.

        Raises:
            LookupError: When no solved table of the rules is cached and no neural network plays them.
            ValueError: When the game is over or it is not the person's turn.
        """
        source = self.hint_source()
        if source is None:
            raise LookupError(
                f"no solved table of {self.rules.describe()} is cached: hints need one "
                f"(solve --rules {self.rules.name} --pieces {self.rules.pieces})"
            )
        if self.game.is_over:
            raise ValueError("the game is over: no move to hint at")
        if self.game.turn not in self.people:
            raise ValueError("it is not your turn")
        position, roll = self.game.position, self.game.roll
        exact = not isinstance(source, NetworkEstimate)
        return Hint(
            source.move_values(position, roll),
            source.best_move(position, roll),
            source.win_probability(position),
            exact,
            "the solved table (exact)" if exact else source.name,
        )

    def record(self) -> GameRecord:
        """The game so far as a record (the person named ``human``, the agent by its spec; two people by side)."""
        if self.two_players:
            return GameRecord.from_game(self.game, {"light": "human (light)", "dark": "human (dark)"})
        return GameRecord.from_game(
            self.game, {self.human: "human", other_side(self.human): player_name(self.agent.spec)}
        )

    def _play(self, move: int, forced: bool = False) -> None:
        game = self.game
        before, roll = game.position, game.roll
        after = before.play(roll, move)
        self.events.append(Event(game.turn, roll, move, before, after, forced))
        game.play(move)
        self._tell_passes()

    def _tell_passes(self) -> None:
        """Add the rolls that passed since the last event (every step of the game's history is one event)."""
        for step in self.game.history[len(self.events) :]:
            # Before the first event the game stood at its start (the game may open with passes).
            before = self.events[-1].after if self.events else Position.start(self.rules)
            self.events.append(Event(step.side, step.roll, None, before, before.play(step.roll, None)))
