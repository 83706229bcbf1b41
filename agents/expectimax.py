"""Expectiminimax to a fixed depth over the advancement heuristic (the search itself: :mod:`urgym.agents.search`)."""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np
from urgym.agents import search
from urgym.agents.base import Agent, legal_moves_or_raise
from urgym.agents.whole import search_policy, search_policy_seconds
from urgym.solver import PositionIndex

from urgym import Position, Rules, core
from urgym.checks import integer
from urgym.core import geometry

__all__ = ["ExpectimaxAgent", "SearchResult", "win_score"]

MAX_DEPTH = 30


class SearchResult(NamedTuple):
    """What one search found: the move, each move's value, and the work it took."""

    move: int
    values: dict[int, float]
    """Each legal move's value (mover's advancement difference); moves pruning proved worse get ``-inf``."""
    nodes: int
    """Chance nodes searched plus moves evaluated at the horizon."""
    seconds: float


def win_score(rules: Rules) -> float:
    """The score of a won game: above any advancement difference a game in progress can have."""
    return float(rules.pieces * (rules.length + 1))


class ExpectimaxAgent(Agent):
    """Expectiminimax to ``depth`` plies, scoring the horizon by the advancement difference.

    Depth counts decisions (plies) of either side, the agent's own move included, as the Ur literature
    does; a roll with no legal move passes and also counts as a ply. Pruning (Star1, alpha-beta with move
    ordering, a transposition table) never changes the value or the move; ``prune=False`` searches the
    whole tree. A roll with one legal move is played without searching.

    Args:
        depth: Plies to search (1 plays the move with the best immediate advancement gain).
        tt_bits: The transposition table holds 2**tt_bits entries (18 bytes each), kept between moves.
        prune: Whether to prune (the result is the same either way; only the time differs).
        seed: Unused (the search is deterministic); accepted like every agent's.
    """

    def __init__(self, depth: int = 7, tt_bits: int = 18, prune: bool = True, seed: int | None = None) -> None:
        integer(depth, "depth", 1, MAX_DEPTH)
        integer(tt_bits, "tt_bits", 4, 28)
        self.depth = int(depth)
        self.prune = bool(prune)
        self.spec = f"expectimax:depth={self.depth}" + ("" if prune else ":prune=false")
        self._tt = search.transposition_table(tt_bits)
        self._values = np.zeros(core.MAX_MOVES, dtype=np.float64)
        self._rules: Rules | None = None
        self._context: search.SearchContext | None = None
        self.nodes = 0
        """Nodes searched since the agent was built."""
        super().__init__(seed)

    def select_move(self, position: Position, roll: int) -> int:
        """The searched best move; a single legal move is played without searching."""
        moves = legal_moves_or_raise(position, roll)
        if len(moves) == 1:
            return moves[0]
        return self.search(position, roll).move

    def policy_table(self, rules: Rules, progress: bool = True) -> np.ndarray:
        """The searched move of every decision of ``rules`` at once (:func:`urgym.agents.whole.search_policy`)."""
        context = search.search_context(geometry(rules), search.Heuristic(win_score(rules)), self.depth - 1)
        return search_policy(rules, context, self.depth - 1, progress)

    def policy_table_seconds(self, rules: Rules, threads: int) -> float:
        """About how long :meth:`policy_table` takes (:func:`urgym.agents.whole.search_policy_seconds`)."""
        context = search.search_context(geometry(rules), search.Heuristic(win_score(rules)), self.depth - 1)
        return search_policy_seconds(rules, context, self.depth - 1, PositionIndex(rules).size, threads)

    def search(self, position: Position, roll: int, all_values: bool = False) -> SearchResult:
        """Search every legal move of ``roll`` (even a single one) and return the best.

        With ``all_values`` every move gets its exact value; otherwise a move pruning proved worse than the
        best gets ``-inf`` (which is faster).
        """
        moves = legal_moves_or_raise(position, roll)
        rules = position.rules
        if rules != self._rules:
            self._tt.depth[:] = 0  # entries of another rule set would be wrong here
            self._rules = rules
            # The search's depth counts the plies beyond the move; this agent's counts the move too.
            self._context = search.search_context(
                geometry(rules), search.Heuristic(win_score(rules)), self.depth - 1, self._tt, self.prune
            )
        context = self._context
        context.stats[:] = 0
        start = time.perf_counter()
        chosen = self._choose(position, roll, moves, context, all_values)
        seconds = time.perf_counter() - start
        nodes = int(context.stats[search.S_NODES] + context.stats[search.S_LEAVES])
        self.nodes += nodes
        win = win_score(rules)
        # Back from winning chances to the advancement scores this result reports (the map is affine).
        values = {
            m: float(v * 2 * win - win) if v != -np.inf else -np.inf
            for m, v in zip(moves, self._values[: len(moves)], strict=True)
        }
        return SearchResult(int(moves[chosen]), values, nodes, seconds)

    def _choose(
        self, position: Position, roll: int, moves: list[int], context: search.SearchContext, all_values: bool
    ) -> int:
        array = np.asarray(moves, dtype=np.int64)
        return int(
            search.choose(position.code, roll, array, len(moves), self.depth - 1, context, self._values, all_values)
        )
