"""Numba kernels of match play and position sampling, on the core's batched game flow.

Match play keeps a task's games in one :data:`urgym.core.FLOW` array and steps them in lockstep:
:func:`advance_match` plays the moves Python agents chose, then advances every game, letting the agents that run
in numba (the built-in policies and the perfect player, :class:`MatchSetup`) choose inside the kernel, until each
game awaits a Python agent or has ended. Every decision with two or more legal moves is scored against the
solved table on the way: regret is the best move's winning chance minus the chosen move's. Regrets go into
per-agent accumulators (see :data:`ACC_*`) and a histogram (:class:`MatchTallies`), so any number of games fits
in fixed memory.

Game g of a match is game g of the seed in the core's game flow (the dice every loop of the package rolls
for it), agent a draws its own choices from the game's policy stream a (``core.policy_stream(seed, g, a)``),
and agent 0 plays light in even games.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit
from urgym.agents.perfect import perfect_choice
from urgym.solver.lookup import best_of

from urgym import core

REGRET_BINS = 100_000
"""Histogram bins over regrets 0..1 (a bin is 0.001 win-% points)."""

BLUNDER = 0.05
"""A regret above this (5 win-% points) is a blunder."""

PERFECT_TOLERANCE = 1e-12
"""A regret at most this is a perfect move (ties between moves count as perfect)."""

# Columns of the per-agent float accumulator.
ACC_CHOICES, ACC_REGRET_SUM, ACC_PERFECT, ACC_BLUNDERS, ACC_SECONDS, ACC_REGRET_SQUARES = range(6)
ACC_SIZE = 6


class MatchSetup(NamedTuple):
    """Who plays in numba, and whether a table scores the decisions.

    Per agent slot a ``core.POLICY_*`` kind (``POLICY_EXTERNAL``: a Python agent, asked from Python) and the perfect
    player's slip chance.
    """

    kinds: np.ndarray  # int64[2]
    epsilons: np.ndarray  # float64[2]
    scored: bool


class MatchTallies(NamedTuple):
    """What a task's games add up to.

    Per game the summed regret of each agent and its length in turns, per agent the accumulators and the regret
    histogram, the decisions with a legal move and their legal moves summed, and (when ``log`` has columns) every game's
    moves in order, ``log_count`` of them (past the log's width they are counted but not kept, so the caller can see
    that and play again with more room).
    """

    errors: np.ndarray  # float64[games, 2]
    acc: np.ndarray  # float64[2, ACC_SIZE]
    hist: np.ndarray  # int64[2, REGRET_BINS]
    legal: np.ndarray  # int64[2]
    log: np.ndarray  # int64[games, width]
    log_count: np.ndarray  # int64[games]


def match_tallies(games: int, log_width: int = 0) -> MatchTallies:
    """Zeroed tallies of a task of ``games`` games (``log_width`` moves logged per game, 0: none)."""
    return MatchTallies(
        np.zeros((games, 2)),
        np.zeros((2, ACC_SIZE)),
        np.zeros((2, REGRET_BINS), dtype=np.int64),
        np.zeros(2, dtype=np.int64),
        np.zeros((games, log_width), dtype=np.int64),
        np.zeros(games, dtype=np.int64),
    )


@njit(cache=True)
def record_regret(acc, hist, agent, regret):
    """Add one decision's regret to agent ``agent``'s accumulators; return it (clipped at 0)."""
    if regret < 0.0:
        regret = 0.0  # a tie computed in another order; never below zero
    acc[agent, ACC_CHOICES] += 1
    acc[agent, ACC_REGRET_SUM] += regret
    acc[agent, ACC_REGRET_SQUARES] += regret * regret  # the mean's interval
    if regret <= PERFECT_TOLERANCE:
        acc[agent, ACC_PERFECT] += 1
    if regret > BLUNDER:
        acc[agent, ACC_BLUNDERS] += 1
    b = int(regret * REGRET_BINS)
    hist[agent, min(b, REGRET_BINS - 1)] += 1
    return regret


@njit(cache=True)
def mover_slot(flow):
    """The agent slot to move in a game: agent 0 plays light in even games."""
    return core.turn_of(flow.state) ^ (flow.game & 1)


@njit(cache=True, inline="always")
def _play_scored(flows, i, slot, k, best, setup, tallies, probabilities, geom):
    """Score game i's decision by agent ``slot``, then log and play move ``k``.

    The decision is scored when there is a choice and a table (``probabilities`` holds every move's chance and ``best``
    the best one's index); ``k`` is an index into the legal moves.
    """
    f = flows[i]
    move = f.moves[k]
    if setup.scored and f.n > 1:
        tallies.errors[i, slot] += record_regret(
            tallies.acc, tallies.hist, slot, probabilities[best] - probabilities[k]
        )
    if tallies.log.shape[1] > 0:
        count = tallies.log_count[i]
        if count < tallies.log.shape[1]:
            tallies.log[i, count] = move
        tallies.log_count[i] = count + 1
    core.play_move(flows, i, move, geom)


@njit(cache=True)
def advance_match(flows, chosen, geom, table, setup, tallies):
    """Play ``chosen[i]`` in each game awaiting a Python agent's move, then advance every game.

    Numba agents choose and play inside, until the game awaits a Python agent (``flows[i].n > 0``) or ends. Returns how
    many await.

    Each decision's moves are looked up in the table once, for the perfect player's choice and the regret alike.
    """
    probabilities = np.zeros(core.MAX_MOVES, dtype=np.float64)
    waiting = 0
    for i in range(flows.shape[0]):
        f = flows[i]
        if f.n > 0:
            if chosen[i] < 0:
                waiting += 1
                continue
            k = core.move_index(f.moves, chosen[i])
            best = best_of(f.state, f.roll, f.moves, f.n, probabilities, geom, table) if setup.scored and f.n > 1 else 0
            _play_scored(flows, i, mover_slot(f), k, best, setup, tallies, probabilities, geom)
        while core.next_decision(flows, i, geom) > 0:
            slot = mover_slot(f)
            tallies.legal[0] += 1
            tallies.legal[1] += f.n
            kind = setup.kinds[slot]
            if kind == core.POLICY_EXTERNAL:
                waiting += 1
                break
            best = 0
            if f.n > 1 and (setup.scored or kind == core.POLICY_PERFECT):
                best = best_of(f.state, f.roll, f.moves, f.n, probabilities, geom, table)
            if kind == core.POLICY_PERFECT:
                k = core.slip(best, f.n, setup.epsilons[slot], f.policy_rngs[slot])
            else:
                move = core.policy_choice(kind, f.state, f.roll, f.moves, f.n, geom, f.policy_rngs[slot])
                k = core.move_index(f.moves, move)
            _play_scored(flows, i, slot, k, best, setup, tallies, probabilities, geom)
    return waiting


class Sample(NamedTuple):
    """Decisions kept by :func:`sample_perfect_decisions`: ``found[0]`` of them so far, in ``states`` and ``rolls``."""

    states: np.ndarray  # int64[wanted]
    rolls: np.ndarray  # int64[wanted]
    found: np.ndarray  # int64[1]


@njit(cache=True)
def sample_perfect_decisions(flows, geom, table, pick, keep, sample):
    """Sample decisions of perfect play; return how many games were played.

    The started games of ``flows`` are played one after another with the perfect player on both sides, keeping each
    decision with two or more legal moves with probability ``keep`` (drawn from the stream ``pick``), until ``sample``
    is full.
    """
    probabilities = np.zeros(core.MAX_MOVES, dtype=np.float64)
    wanted = sample.states.shape[0]
    for i in range(flows.shape[0]):
        f = flows[i]
        while sample.found[0] < wanted and core.next_decision(flows, i, geom) > 0:
            if f.n > 1 and core.next_uniform(pick) < keep:
                sample.states[sample.found[0]] = f.state
                sample.rolls[sample.found[0]] = f.roll
                sample.found[0] += 1
            choice = perfect_choice(f.state, f.roll, f.moves, f.n, geom, table, 0.0, f.policy_rngs[0], probabilities)
            core.play_move(flows, i, f.moves[choice], geom)
        if sample.found[0] >= wanted:
            return i + 1
    return flows.shape[0]


@njit(cache=True)
def position_regrets(decisions, chosen, geom, table, out):
    """Each decision's regret: the best move's winning chance minus the chosen move's (never below 0)."""
    probabilities = np.zeros(core.MAX_MOVES, dtype=np.float64)
    for i in range(decisions.states.shape[0]):
        moves = decisions.moves[i]
        best = best_of(decisions.states[i], decisions.rolls[i], moves, decisions.counts[i], probabilities, geom, table)
        k = core.move_index(moves, chosen[i])
        out[i] = max(0.0, probabilities[best] - probabilities[k])
