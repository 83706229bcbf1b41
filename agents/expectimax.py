"""Expectiminimax to a fixed depth over the advancement heuristic (the search itself: :mod:`urgym.agents.search`)."""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np
from urgym.agents import search
from urgym.agents.base import legal_moves_or_raise
from urgym.agents.search_agent import SearchAgent

from urgym import Position, Rules, core
from urgym.checks import integer

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


class ExpectimaxAgent(SearchAgent):
    """Expectiminimax to ``depth`` plies, scoring the horizon by the advancement difference.

    Depth counts decisions (plies) of either side, the agent's own move included, as the Ur literature
    does; a roll with no legal move passes and also counts as a ply. Pruning (Star1, alpha-beta with move
    ordering, a transposition table) never changes the value or the move; ``prune=False`` searches the
    whole tree. A roll with one legal move is played without searching. A batch of decisions is searched on
    ``threads`` threads at once (:class:`urgym.agents.search_agent.SearchAgent`).

    Args:
        depth: Plies to search (1 plays the move with the best immediate advancement gain).
        tt_bits: Each thread's transposition table holds 2**tt_bits entries (18 bytes each), kept between moves.
        prune: Whether to prune (the result is the same either way; only the time differs).
        threads: Threads answering a batch of decisions; 0: every core.
        seed: Unused (the search is deterministic); accepted like every agent's.
    """

    def __init__(
        self, depth: int = 7, tt_bits: int = 18, prune: bool = True, threads: int = 0, seed: int | None = None
    ) -> None:
        integer(depth, "depth", 1, MAX_DEPTH)
        self.depth = int(depth)
        self.spec = f"expectimax:depth={self.depth}" + ("" if prune else ":prune=false")
        self._values = np.zeros(core.MAX_MOVES, dtype=np.float64)
        # The search's depth counts the plies beyond the move; this agent's counts the move too.
        super().__init__(self.depth - 1, threads, tt_bits, prune, seed)

    def evaluation(self, rules: Rules) -> search.Heuristic:
        """The advancement difference, mapped onto a winning chance (an affine map: the same moves)."""
        return search.Heuristic(win_score(rules))

    def search(self, position: Position, roll: int, all_values: bool = False) -> SearchResult:
        """Search every legal move of ``roll`` (even a single one) and return the best, with each move's value.

        With ``all_values`` every move gets its exact value; otherwise a move pruning proved worse than the
        best gets ``-inf`` (which is faster).
        """
        moves = legal_moves_or_raise(position, roll)
        rules = position.rules
        context = self.contexts(rules)[0]
        before = context.stats[search.S_NODES] + context.stats[search.S_LEAVES]
        start = time.perf_counter()
        array = np.asarray(moves, dtype=np.int64)
        chosen = int(
            search.choose(position.code, roll, array, len(moves), self.plies, context, self._values, all_values)
        )
        seconds = time.perf_counter() - start
        nodes = int(context.stats[search.S_NODES] + context.stats[search.S_LEAVES] - before)
        win = win_score(rules)
        # Back from winning chances to the advancement scores this result reports (the map is affine).
        values = {
            m: float(v * 2 * win - win) if v != -np.inf else -np.inf
            for m, v in zip(moves, self._values[: len(moves)], strict=True)
        }
        return SearchResult(int(moves[chosen]), values, nodes, seconds)
