"""The one search agent: expectiminimax over a leaf evaluation, answering a batch of decisions in numba on threads.

:class:`SearchAgent` is the shell around :mod:`urgym.agents.search` that every searching agent is: it holds one
search state per thread (a transposition table and buffers, kept between calls), answers a batch of decisions with
:func:`urgym.agents.search.choose_all` over slices of it, one thread each (the kernel releases the GIL), and gives its
whole policy at once by dynamic programming (:func:`urgym.agents.whole.search_policy`). Inside, depth has one
meaning: the plies searched beyond the move (``plies``). The agents built on it keep their specs' meanings for users:
``expectimax:N`` searches N - 1 plies beyond the move (its depth counts the move), ``neural:N`` and ``td:N`` N.

A subclass says what sits at the leaves (:meth:`SearchAgent.evaluation`).
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import numpy as np
from urgym.agents import search
from urgym.agents.base import Agent
from urgym.agents.whole import search_policy, search_policy_seconds
from urgym.solver import PositionIndex

from urgym import Position, Rules
from urgym.batch import Decisions
from urgym.checks import integer
from urgym.core import geometry

__all__ = ["MAX_THREADS", "SearchAgent", "SearchStats", "default_threads"]

MAX_THREADS = 256
"""Most threads a :class:`SearchAgent` takes (each holds its own transposition table and buffers)."""
MIN_SLICE = 64
"""Decisions a thread takes at once when it searches no ply beyond the move (a network's or the heuristic's best
after-state): fewer would cost more in calls than they take to answer."""
GAMES_PER_BATCH = 64
"""Games a match plays in lockstep in one task with a search agent: each step a batch of about half as many
decisions for the threads, and the progress bar moves every task."""


def default_threads() -> int:
    """Every core in a main process; one in a child process (a pool's worker: the pool spreads over the cores)."""
    return 1 if multiprocessing.parent_process() is not None else max(1, os.cpu_count() or 1)


class SearchStats(NamedTuple):
    """What a search agent's searches did: chance nodes, leaf evaluations, cache and transposition-table hits."""

    nodes: int
    leaves: int
    cache_hits: int
    tt_hits: int


class SearchAgent(Agent):
    """Expectiminimax ``plies`` beyond the move over :meth:`evaluation`'s leaf values, batched on threads.

    Args:
        plies: Plies searched beyond the move (0: the best value after the move).
        threads: Threads answering a batch (each with its own search state); 0: every core, or one in a worker
            process (:func:`default_threads`); at most :data:`MAX_THREADS`.
        tt_bits: log2 of each thread's transposition-table entries (18 bytes each), kept between calls.
        prune: Prune (Star1, alpha-beta, transpositions); never changes the move, only the time.
        seed: Unused (the search is deterministic); accepted like every agent's.
    """

    in_process = True
    """Play in the main process: the threads use every core, and a solved table is loaded once, not per worker."""
    games_per_batch = GAMES_PER_BATCH

    def __init__(
        self, plies: int, threads: int = 0, tt_bits: int = 16, prune: bool = True, seed: int | None = None
    ) -> None:
        integer(threads, "threads", 0, MAX_THREADS)
        integer(tt_bits, "tt_bits", 4, 28)
        self.plies, self.tt_bits, self.prune = int(plies), int(tt_bits), bool(prune)
        self.threads = int(threads) or default_threads()
        self._contexts: dict[Rules, list[search.SearchContext]] = {}
        super().__init__(seed)

    def evaluation(self, rules: Rules) -> Any:
        """A new leaf evaluation of ``rules`` (a :mod:`urgym.agents.search` evaluation type); subclasses give it."""
        raise NotImplementedError

    def contexts(self, rules: Rules) -> list[search.SearchContext]:
        """One search state per thread for ``rules``, built at the first call and kept (their tables too)."""
        if rules not in self._contexts:  # an evaluation per thread: a network's holds its own cache of values
            self._contexts[rules] = [
                search.search_context(geometry(rules), self.evaluation(rules), self.plies, self.tt_bits, self.prune)
                for _ in range(self.threads)
            ]
        return self._contexts[rules]

    def select_move(self, position: Position, roll: int) -> int:
        """The searched best move (a single legal move is played without searching)."""
        return self.select_one(position, roll)

    def select_moves(self, rules: Rules, decisions: Decisions) -> np.ndarray:
        """The searched move of every decision of the batch, on the threads at once.

        Each thread takes the next slice of decisions as it finishes one (searches differ widely in cost, so equal
        shares would leave a thread waiting on the other).
        """
        contexts = self.contexts(rules)
        out = np.empty(len(decisions), dtype=np.int64)
        size = self.slice_size
        slices = -(-len(decisions) // size)
        threads = min(len(contexts), slices)
        if threads <= 1:
            search.choose_all(decisions, self.plies, contexts[0], out, 0, len(decisions))
            return out
        taken = itertools.count()  # next() is atomic under the GIL: each slice goes to one thread

        def work(ctx: search.SearchContext) -> None:
            for k in iter(taken.__next__, None):
                if k >= slices:
                    return
                search.choose_all(decisions, self.plies, ctx, out, k * size, min((k + 1) * size, len(decisions)))

        with ThreadPoolExecutor(threads) as pool:
            for job in [pool.submit(work, contexts[t]) for t in range(threads)]:
                job.result()
        return out

    @property
    def slice_size(self) -> int:
        """Decisions a thread takes at once: one search at a time when it looks ahead, else enough to repay a call."""
        return 1 if self.plies > 0 else MIN_SLICE

    def policy_table(self, rules: Rules, progress: bool = True) -> np.ndarray:
        """The searched move in every decision of ``rules`` at once, each position evaluated once per ply.

        (:func:`urgym.agents.whole.search_policy`: dynamic programming over the solver's graphs, not a search per
        decision.)
        """
        return search_policy(rules, self.contexts(rules)[0], self.plies, progress)

    def policy_table_seconds(self, rules: Rules, threads: int) -> float:
        """About how long :meth:`policy_table` takes (:func:`urgym.agents.whole.search_policy_seconds`)."""
        positions = PositionIndex(rules).size
        return search_policy_seconds(rules, self.contexts(rules)[0], self.plies, positions, threads)

    def search_stats(self, rules: Rules) -> SearchStats:
        """The counters of every search so far on ``rules`` (all threads)."""
        totals = sum(ctx.stats for ctx in self.contexts(rules))
        return SearchStats(*(int(x) for x in totals))
