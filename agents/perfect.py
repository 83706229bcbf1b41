"""The perfect player: the solved table's best move, optionally with deliberate slips."""

from __future__ import annotations

import numpy as np
from numba import njit
from urgym.agents.base import Agent, slip_probabilities
from urgym.agents.whole import PASS_RATE
from urgym.solver import PositionIndex, SolvedTable, table_for
from urgym.solver.lookup import best_of
from urgym.solver.policy import best_moves

from urgym import Position, Rules, core
from urgym.batch import Decisions
from urgym.core import geometry

__all__ = ["PerfectAgent", "perfect_choice", "perfect_choices", "perfect_play_turns"]


@njit(cache=True)
def perfect_choice(state, roll, moves, n, geom, table, epsilon, rng, probabilities):
    """The index of the perfect player's move among ``moves[:n]``.

    The table's best (lowest source on ties), or with probability ``epsilon`` a slip to another
    (:func:`urgym.core.slip`). ``probabilities[:n]`` gets every move's winning chance.
    """
    if n == 1:
        return 0
    return core.slip(best_of(state, roll, moves, n, probabilities, geom, table), n, epsilon, rng)


@njit(cache=True)
def perfect_choices(decisions, geom, table, epsilon, out):
    """:func:`perfect_choice`'s move for each of a batch of decisions, each drawing from its own stream."""
    probabilities = np.zeros(core.MAX_MOVES, dtype=np.float64)
    for i in range(decisions.states.shape[0]):
        moves = decisions.moves[i]
        out[i] = moves[
            perfect_choice(
                decisions.states[i],
                decisions.rolls[i],
                moves,
                decisions.counts[i],
                geom,
                table,
                epsilon,
                decisions.rngs[i],
                probabilities,
            )
        ]


@njit(cache=True)
def perfect_play_turns(flows, games, sides, policies, geom, table, epsilon):
    """Play one side's decisions perfectly in each of ``games``, until the other side must decide.

    In game ``games[j]`` of ``flows``, side ``sides[j]``'s decisions are played perfectly (with slips drawn from the
    game's policy stream of that side), advancing by :func:`urgym.core.advance` with ``policies[games[j]]``, until the
    other side must decide or the game ends.
    """
    probabilities = np.zeros(core.MAX_MOVES, dtype=np.float64)
    for j in range(games.shape[0]):
        i, side = games[j], sides[j]
        f = flows[i]
        while f.n > 0 and core.turn_of(f.state) == side:
            k = perfect_choice(f.state, f.roll, f.moves, f.n, geom, table, epsilon, f.policy_rngs[side], probabilities)
            core.play_move(flows, i, f.moves[k], geom)
            core.advance(flows, i, policies[i], geom)


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

    def __init__(
        self, table: SolvedTable | None = None, epsilon: float = 0.0, solve: bool = True, seed: int | None = None
    ) -> None:
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must be a probability in [0, 1], got {epsilon!r}")
        self.epsilon = float(epsilon)
        self.randomizes = self.epsilon > 0.0
        self.solve = solve
        self.spec = "perfect" + (f":epsilon={epsilon:g}" if epsilon else "") + ("" if solve else ":solve=false")
        if table is not None and not isinstance(table, SolvedTable):
            raise ValueError(f"table must be a solver.SolvedTable, got {type(table).__name__}")
        self._given = table
        self._tables: dict[Rules, SolvedTable] = {table.rules: table} if table is not None else {}
        self._rng_state = np.zeros(1, dtype=np.uint64)
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
            raise ValueError(
                f"this perfect player was given the table of {self._given.rules.describe()!r}, so it "
                f"cannot play {rules.describe()!r}"
            )

    def check_rules(self, rules: Rules) -> None:
        """Raise ``ValueError`` if a given table is of other rules."""
        self._check_given(rules)

    def prepare(self, rules: Rules) -> None:
        """Load the table of ``rules`` now, solving it first if this agent may (else raise ``TableMissingError``).

        The environments call this when they are made, so a missing table is solved or refused then, never inside
        a step.
        """
        self.table(rules)

    def reseed(self, seed: int | None) -> None:
        """Restart the stream the slips are drawn from."""
        super().reseed(seed)
        self._rng_state[0] = np.uint64(self.rng.integers(0, 2**63))

    def select_move(self, position: Position, roll: int) -> int:
        """The table's best move, or a slip with chance ``epsilon``."""
        self._check_given(position.rules)
        return self.select_one(position, roll, self._rng_state)

    def select_moves(self, rules: Rules, decisions: Decisions) -> np.ndarray:
        """The table's best move for every decision (with this agent's slips), in numba."""
        out = np.empty(len(decisions), dtype=np.int64)
        perfect_choices(decisions, geometry(rules), self.table(rules).view, self.epsilon, out)
        return out

    def policy_table(self, rules: Rules, progress: bool = True) -> np.ndarray | None:
        """The table's best move in every decision at once (:func:`urgym.solver.policy.best_moves`); None with slips."""
        if self.randomizes:
            return None
        table = self.table(rules)
        return best_moves(table.index, table.probabilities(), 0.0)

    def policy_table_seconds(self, rules: Rules, threads: int) -> float | None:
        """About how long :meth:`policy_table` takes: one pass over the rule set's graphs."""
        return None if self.randomizes else PositionIndex(rules).size / (PASS_RATE * threads)

    def move_probabilities(self, rules: Rules, decisions: Decisions) -> np.ndarray:
        """The table's best move with chance 1 - ``epsilon``, every other legal move an equal share of the rest."""
        best = np.empty(len(decisions), dtype=np.int64)
        perfect_choices(decisions, geometry(rules), self.table(rules).view, 0.0, best)
        return slip_probabilities(decisions, best, self.epsilon)

    def play_turns(
        self, rules: Rules, flows: np.ndarray, games: np.ndarray, sides: np.ndarray, policies: np.ndarray
    ) -> None:
        """Play this agent's turns inside a kernel, where a batched game loop hands it the games awaiting it.

        As in :class:`urgym.vector.UrVectorEnv`: in game ``games[j]`` of ``flows``, while side ``sides[j]`` must move,
        play the table's move and advance with ``policies[games[j]]``. The same moves as :meth:`select_moves`.
        """
        perfect_play_turns(flows, games, sides, policies, geometry(rules), self.table(rules).view, self.epsilon)
