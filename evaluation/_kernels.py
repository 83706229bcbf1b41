"""Numba match play for agents that run in numba (the baselines and the perfect player).

Every decision with two or more legal moves is scored against the solved table: regret is the best move's
winning chance minus the chosen move's. Regrets go into per-agent accumulators (see :data:`ACC_*`) and a
histogram, so any number of games fits in fixed memory.

Game g of a match is game g of the seed in the core's game flow (the dice every loop of the package rolls
for it), agent a draws its own choices from ``core.policy_stream(seed, g, a)``, and agent 0 plays light in
even games.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.lookup import best_of
from urgym import core

KIND_PERFECT = 4  # kinds 0..3 are the built-in policies of urgym.core

REGRET_BINS = 100_000
"""Histogram bins over regrets 0..1 (a bin is 0.001 win-% points)."""

BLUNDER = 0.05
"""A regret above this (5 win-% points) is a blunder."""

PERFECT_TOLERANCE = 1e-12
"""A regret at most this is a perfect move (ties between moves count as perfect)."""

# Columns of the per-agent float accumulator.
ACC_CHOICES, ACC_REGRET_SUM, ACC_PERFECT, ACC_BLUNDERS, ACC_SECONDS = range(5)
ACC_SIZE = 5


@njit(cache=True)
def record_regret(acc, hist, agent, regret):
    """Add one decision's regret to agent ``agent``'s accumulators; return it (clipped at 0)."""
    if regret < 0.0:
        regret = 0.0  # a tie computed in another order; never below zero
    acc[agent, ACC_CHOICES] += 1
    acc[agent, ACC_REGRET_SUM] += regret
    if regret <= PERFECT_TOLERANCE:
        acc[agent, ACC_PERFECT] += 1
    if regret > BLUNDER:
        acc[agent, ACC_BLUNDERS] += 1
    b = int(regret * REGRET_BINS)
    hist[agent, min(b, REGRET_BINS - 1)] += 1
    return regret


@njit(cache=True)
def _choose(kind, epsilon, best, n, state, roll, moves, geom, agent_rng):
    """The index of the move an agent of ``kind`` plays, given the table's best index."""
    if kind == KIND_PERFECT:
        if epsilon > 0.0 and n > 1 and core.next_uniform(agent_rng) < epsilon:
            slip = core.next_below(agent_rng, n - 1)
            return slip + (1 if slip >= best else 0)
        return best
    move = core.policy_choice(kind, state, roll, moves, n, geom, agent_rng)
    for i in range(n):
        if moves[i] == move:
            return i
    return 0


@njit(cache=True)
def play_games(kinds, epsilons, seed, first_game, n_games, geom, cumulative, values, scale, info, war_rank,
               block_offset, choose_private, dims, winners, turns, errors, acc, hist, legal_counts, move_log,
               log_ends):
    """Play games ``first_game .. first_game + n_games - 1`` between two numba agents.

    Writes per game the winning agent (0 or 1), the turns played (both sides) and each agent's summed
    regret (``errors[i, agent]``); accumulates regrets and ``legal_counts`` = (decisions with a legal move,
    their legal moves summed). With a non-empty ``move_log``, logs the move played at every decision in
    order, and ``log_ends[i]`` is where game i's moves end; a log too short for them all is filled as far as
    it goes while the ends still count every move, so the caller can see that and play again with more room.
    """
    logged = 0
    dice = np.zeros(1, dtype=np.uint64)
    agent_rngs = np.zeros((2, 1), dtype=np.uint64)
    moves = np.zeros(core.MAX_MOVES, dtype=np.int64)
    counters = np.zeros(core.COUNTERS_SIZE, dtype=np.int64)
    probabilities = np.zeros(core.MAX_MOVES, dtype=np.float64)
    for i in range(n_games):
        g = first_game + i
        state = core.start_game(geom[core.G_PIECES], seed, g, dice, counters)
        for a in range(2):
            core.policy_stream(agent_rngs[a], seed, g, a)
        light_agent = g % 2
        while True:
            state, roll, n = core.next_decision(state, geom, cumulative, dice, moves, counters)
            if n == 0:
                break
            legal_counts[0] += 1
            legal_counts[1] += n
            agent = light_agent if core.turn_of(state) == 0 else 1 - light_agent
            chosen = 0
            if n > 1:
                best = best_of(state, roll, moves, n, probabilities, geom, values, scale, info, war_rank,
                               block_offset, choose_private, dims)
                chosen = _choose(kinds[agent], epsilons[agent], best, n, state, roll, moves, geom,
                                 agent_rngs[agent])
                errors[i, agent] += record_regret(acc, hist, agent, probabilities[best] - probabilities[chosen])
            if move_log.shape[0] > 0:
                if logged < move_log.shape[0]:
                    move_log[logged] = moves[chosen]
                logged += 1
            state, _ = core.play_move(state, roll, moves[chosen], geom, counters)
        winners[i] = light_agent if core.winner_of(state) == 0 else 1 - light_agent
        turns[i] = counters[core.C_TURNS]
        if move_log.shape[0] > 0:
            log_ends[i] = logged


@njit(cache=True)
def sample_decisions(seed, wanted, keep, geom, cumulative, values, scale, info, war_rank, block_offset,
                     choose_private, dims, states, rolls, max_games):
    """Fill ``states``/``rolls`` with decisions (two or more legal moves) of perfect self-play.

    Each decision is kept with probability ``keep``, so the sample spreads over many games. Stops after
    ``wanted`` decisions or ``max_games`` games (a rule set with few choices may never offer enough);
    returns (decisions found, games played).
    """
    dice = np.zeros(1, dtype=np.uint64)
    pick = np.zeros(1, dtype=np.uint64)
    core.policy_stream(pick, seed, 0, 0)
    moves = np.zeros(core.MAX_MOVES, dtype=np.int64)
    counters = np.zeros(core.COUNTERS_SIZE, dtype=np.int64)
    probabilities = np.zeros(core.MAX_MOVES, dtype=np.float64)
    found = 0
    g = 0
    while found < wanted and g < max_games:
        state = core.start_game(geom[core.G_PIECES], seed, g, dice, counters)
        g += 1
        while found < wanted:
            state, roll, n = core.next_decision(state, geom, cumulative, dice, moves, counters)
            if n == 0:
                break
            chosen = 0
            if n > 1:
                if core.next_uniform(pick) < keep:
                    states[found] = state
                    rolls[found] = roll
                    found += 1
                chosen = best_of(state, roll, moves, n, probabilities, geom, values, scale, info, war_rank,
                                 block_offset, choose_private, dims)
            state, _ = core.play_move(state, roll, moves[chosen], geom, counters)
    return found, g
