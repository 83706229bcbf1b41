"""The perfect player: the solved table's best move, optionally with deliberate slips."""

from __future__ import annotations

import numpy as np

from agents.base import Agent, legal_moves_or_raise
from solver import SolvedTable, table_for
from solver.lookup import best_of
from urgym import Position, Rules, core

__all__ = ["PerfectAgent"]


class PerfectAgent(Agent):
    """Plays the move with the highest winning probability in the solved table (lowest source on ties).

    Args:
        table: A solved table; by default the cached one of the position's rule set, loaded (or solved, if
            ``solve``) on first use.
        epsilon: Chance of a slip: with probability ``epsilon`` the agent plays a uniformly random move
            other than the best, when there is one. 0 is perfect play.
        solve: Whether a missing table may be solved (minutes for the full rule sets) rather than raise.
        seed: Seeds the slips.
    """

    def __init__(self, table: SolvedTable | None = None, epsilon: float = 0.0, solve: bool = True,
                 seed: int | None = None) -> None:
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must be a probability in [0, 1], got {epsilon!r}")
        self.epsilon = float(epsilon)
        self.solve = solve
        self.spec = "perfect" + (f":epsilon={epsilon:g}" if epsilon else "") + ("" if solve else ":solve=false")
        if table is not None and not isinstance(table, SolvedTable):
            raise ValueError(f"table must be a solver.SolvedTable, got {type(table).__name__}")
        self._given = table
        self._tables: dict[Rules, SolvedTable] = {table.rules: table} if table is not None else {}
        self._moves = np.zeros(core.MAX_MOVES, dtype=np.int64)
        self._probabilities = np.zeros(core.MAX_MOVES, dtype=np.float64)
        super().__init__(seed)

    def table(self, rules: Rules) -> SolvedTable:
        """The table this agent uses for ``rules``: the one it was given, else the cached one.

        Raises:
            ValueError: If the agent was given a table of other rules.
        """
        self._check_given(rules)
        if rules not in self._tables:
            self._tables[rules] = table_for(rules, solve=self.solve)
        return self._tables[rules]

    def _check_given(self, rules: Rules) -> None:
        if self._given is not None and rules != self._given.rules:
            raise ValueError(f"this perfect player was given the table of {self._given.rules.describe()!r}, so it "
                             f"cannot play {rules.describe()!r}")

    def check_rules(self, rules: Rules) -> None:
        self._check_given(rules)
        if rules.visits_tiles_twice:
            raise ValueError(f"the perfect player needs a solved table, and {rules.name!r} cannot be solved (its "
                             "path visits tiles twice); solvable: finkel, blitz, masters, aseb")

    def select_move(self, position: Position, roll: int) -> int:
        self._check_given(position.rules)
        moves = legal_moves_or_raise(position, roll)
        if len(moves) == 1:
            return moves[0]
        n = len(moves)
        self._moves[:n] = moves
        best = int(best_of(position.code, roll, self._moves, n, self._probabilities,
                           *self.table(position.rules).lookup_args))
        if self.epsilon and self.rng.random() < self.epsilon:
            slip = int(self.rng.integers(n - 1))
            return moves[slip + (slip >= best)]
        return moves[best]
