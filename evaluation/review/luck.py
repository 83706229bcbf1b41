"""Luck and skill of a recorded game, exactly, from the solved table.

For each roll of a game, seen from the side that rolls, with V the solved table's winning chances:

- ``before``: the roller's chance before the roll, V(s);
- ``best``: its chance after the roll if it then plays the best move (a roll with no move: after passing);
- ``chosen``: its chance after the move it played;
- ``luck = best - before`` (what the dice gave) and ``error = best - chosen`` (the move's regret, >= 0).

Identity. Write L_x and E_x for the sums of luck and error over side x's rolls, V_0 for light's chance at
the start and R for light's result (1 if light won, else 0). Light's chance moves from V_0 to R in steps
that are, roll by roll, either a luck or an error of one side, with the sign of that side, so

    R = V_0 + (L_light - L_dark) - (E_light - E_dark).

The luck-adjusted result takes the dice out: ``R - (L_light - L_dark) = V_0 - E_light + E_dark`` for light
(one minus that for dark). Each roll's luck has expectation zero (the Bellman equation: V(s) is the
probability-weighted mean of the best values after each roll), so the luck-adjusted result has the same
expectation as the result, with far less variance.
"""

from __future__ import annotations

from dataclasses import dataclass

from urgym.solver import SolvedTable

from urgym.position import SIDES, Position
from urgym.records import GameRecord

__all__ = ["GameAnalysis", "RollAnalysis", "analyse_game"]


@dataclass(frozen=True)
class RollAnalysis:
    """One roll of a game from the roller's side (chances are probabilities in [0, 1])."""

    index: int
    side: str
    roll: int
    move: int | None
    before: float
    best: float
    chosen: float
    values: dict[int, float]
    """Every legal move's winning chance for the roller (empty for a pass)."""
    after: float
    """Light's winning chance after this roll and its move."""

    @property
    def luck(self) -> float:
        """The roll's luck for the roller: its winning chance after the roll (with the best move) minus before it."""
        return self.best - self.before

    @property
    def error(self) -> float:
        """The winning chance the roller's move gave away (0 for a pass)."""
        return self.best - self.chosen


@dataclass(frozen=True)
class GameAnalysis:
    """Every roll of a game with its luck and error, and the totals per side."""

    rolls: tuple[RollAnalysis, ...]
    start_value: float
    """Light's winning chance at the start."""
    result: float | None
    """Light's result: 1 if light won, 0 if dark did, None while the game goes on."""
    positions: tuple[Position, ...] = ()
    """The position before each roll, then the final one."""

    def luck(self, side: str) -> float:
        """The total luck of ``side``'s rolls."""
        return sum(r.luck for r in self.rolls if r.side == side)

    def error(self, side: str) -> float:
        """The total error (regret) of ``side``'s moves."""
        return sum(r.error for r in self.rolls if r.side == side)

    def luck_adjusted(self, side: str) -> float:
        """``side``'s result with the luck of both sides taken out (see the module docstring)."""
        light = self.start_value - self.error("light") + self.error("dark")
        return light if side == "light" else 1.0 - light

    def identity_gap(self) -> float:
        """R - (V_0 + L_light - L_dark - E_light + E_dark): zero up to the table's precision.

        Raises:
            ValueError: If the game is not finished (it has no result R yet).
        """
        if self.result is None:
            raise ValueError(f"the game is not finished after its {len(self.rolls)} steps; the identity needs a result")
        return self.result - (
            self.start_value + self.luck("light") - self.luck("dark") - self.error("light") + self.error("dark")
        )


def analyse_game(record: GameRecord, table: SolvedTable) -> GameAnalysis:
    """Luck and error of every roll of a game (finished or not: an unfinished one has no result).

    Raises:
        ValueError: If the record is of other rules than the table, or a step is not legal.
    """
    if record.rules != table.rules:
        raise ValueError(f"the record is of {record.rules.describe()!r}, the table of {table.rules.describe()!r}")
    positions = record.positions()
    rolls = []
    for i, (step, position) in enumerate(zip(record.steps, positions, strict=False)):
        before = table.win_probability(position)
        values = table.move_values(position, step.roll)
        after = table.win_probability(positions[i + 1], step.side)
        best, chosen = (max(values.values()), values[step.move]) if values else (after, after)
        light_after = after if step.side == SIDES[0] else 1.0 - after
        rolls.append(RollAnalysis(i, step.side, step.roll, step.move, before, best, chosen, values, light_after))
    start = table.win_probability(positions[0], "light")
    final = positions[-1]
    result = None if not final.is_over else 1.0 if final.winner == SIDES[0] else 0.0
    return GameAnalysis(tuple(rolls), start, result, tuple(positions))
