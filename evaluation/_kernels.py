"""Numba match play for agents that run in numba (the baselines and the perfect player).

Every decision with two or more legal moves is scored against the solved table: regret is the best move's
winning chance minus the chosen move's. Regrets go into per-agent accumulators (see :data:`ACC_*`) and a
histogram, so any number of games fits in fixed memory.

Game g uses the dice stream ``seed_stream(seed, g)`` (the same stream the Python match loop uses) and agent
a's own stream ``seed_stream(seed ^ AGENT_SALT, 2 g + a)``; agent 0 plays light in even games.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver._lookup import best_of
from urgym import _kernels as K

KIND_PERFECT = 4  # kinds 0..3 are the built-in policies of urgym._kernels

AGENT_SALT = 0x5EED0A6E

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
    """Add one decision's regret to agent ``agent``'s accumulators."""
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


@njit(cache=True)
def _choose(kind, epsilon, best, n, state, roll, moves, geom, agent_rng):
    """The index of the move an agent of ``kind`` plays, given the table's best index."""
    if kind == KIND_PERFECT:
        if epsilon > 0.0 and n > 1 and K.next_uniform(agent_rng) < epsilon:
            slip = K.next_below(agent_rng, n - 1)
            return slip + (1 if slip >= best else 0)
        return best
    move = K.policy_choice(kind, state, roll, moves, n, geom, agent_rng)
    for i in range(n):
        if moves[i] == move:
            return i
    return 0


@njit(cache=True)
def play_games(kinds, epsilons, seed, first_game, n_games, geom, cumulative, values, scale, info, war_rank,
               block_offset, choose_private, dims, winners, turns, acc, hist, legal_counts):
    """Play games ``first_game .. first_game + n_games - 1`` between two numba agents.

    Writes per game the winning agent (0 or 1) and the turns played (both sides); accumulates regrets
    and ``legal_counts`` = (decisions with a legal move, their legal moves summed).
    """
    dice = np.zeros(1, dtype=np.uint64)
    agent_rngs = np.zeros((2, 1), dtype=np.uint64)
    moves = np.zeros(K.MAX_MOVES, dtype=np.int64)
    probabilities = np.zeros(K.MAX_MOVES, dtype=np.float64)
    start = K.start_state(geom[K.G_PIECES])
    for i in range(n_games):
        g = first_game + i
        K.seed_stream(dice, seed, g)
        for a in range(2):
            K.seed_stream(agent_rngs[a], seed ^ AGENT_SALT, 2 * g + a)
        light_agent = g % 2
        state = start
        n_turns = 0
        while not K.is_over(state):
            roll = K.roll_dice(cumulative, dice)
            n = K.legal_moves(state, roll, geom, moves)
            if n == 0:
                state = K.swap_sides(state)
                n_turns += 1
                continue
            legal_counts[0] += 1
            legal_counts[1] += n
            agent = light_agent if K.turn_of(state) == 0 else 1 - light_agent
            chosen = 0
            if n > 1:
                best = best_of(state, roll, moves, n, probabilities, geom, values, scale, info, war_rank,
                               block_offset, choose_private, dims)
                chosen = _choose(kinds[agent], epsilons[agent], best, n, state, roll, moves, geom,
                                 agent_rngs[agent])
                record_regret(acc, hist, agent, probabilities[best] - probabilities[chosen])
            state, flags = K.apply_move(state, roll, moves[chosen], geom)
            if not flags & K.EXTRA_ROLL:
                n_turns += 1
        # A finished game is seen by the loser: the winner is the side not to move.
        winner_side = 1 - K.turn_of(state)
        winners[i] = light_agent if winner_side == 0 else 1 - light_agent
        turns[i] = n_turns


@njit(cache=True)
def sample_decisions(seed, wanted, keep, geom, cumulative, values, scale, info, war_rank, block_offset,
                     choose_private, dims, states, rolls):
    """Fill ``states``/``rolls`` with ``wanted`` decisions (two or more legal moves) of perfect self-play.

    Each decision is kept with probability ``keep``, so the sample spreads over many games.
    """
    dice = np.zeros(1, dtype=np.uint64)
    pick = np.zeros(1, dtype=np.uint64)
    K.seed_stream(pick, seed ^ AGENT_SALT, 0)
    moves = np.zeros(K.MAX_MOVES, dtype=np.int64)
    probabilities = np.zeros(K.MAX_MOVES, dtype=np.float64)
    start = K.start_state(geom[K.G_PIECES])
    found = 0
    g = 0
    while found < wanted:
        K.seed_stream(dice, seed, g)
        g += 1
        state = start
        while not K.is_over(state) and found < wanted:
            roll = K.roll_dice(cumulative, dice)
            n = K.legal_moves(state, roll, geom, moves)
            if n == 0:
                state = K.swap_sides(state)
                continue
            chosen = 0
            if n > 1:
                if K.next_uniform(pick) < keep:
                    states[found] = state
                    rolls[found] = roll
                    found += 1
                chosen = best_of(state, roll, moves, n, probabilities, geom, values, scale, info, war_rank,
                                 block_offset, choose_private, dims)
            state, _ = K.apply_move(state, roll, moves[chosen], geom)
    return g
