"""The rules core: packed positions, the chance node, moves, observations and the one game-flow primitive.

This module is the contract every other layer builds on (environments, solver, agents, evaluation). Its
functions are numba kernels over plain ints and arrays, plus a few cached Python helpers that turn a
:class:`~urgym.Rules` into the arrays the kernels read. Python users normally want :class:`urgym.Position`
and :class:`urgym.Game`, which wrap these kernels.

Packed state
    A position is one int64 in self/other form, seen from the side to move ("own") against the other
    side ("opp"):

    =========  ======  ==========================================================
    bits       field   meaning
    =========  ======  ==========================================================
    0..26      own     bit p-1 set: the mover has a piece at path position p
    27..53     opp     the same for the opponent, on the opponent's own path
    54..57     own_h   the mover's pieces at home
    58..61     opp_h   the opponent's pieces at home
    62         turn    0: light is the mover, 1: dark is the mover
    =========  ======  ==========================================================

    Scored pieces are the rest (pieces - home - on board). Dark's path mirrors light's, so the rules
    read the same from either side and one geometry array (:func:`geometry`) serves both. A finished
    game is seen by the side that lost (the winner is the side not to move).

Chance node
    Every turn starts with a roll. :func:`chance_outcomes` gives the rolls with a positive probability
    and their probabilities; search and the solver enumerate them, and only the game flow samples them,
    through :func:`roll_dice` on a SplitMix64 stream that :func:`seed_stream` keys by (seed, game).

Moves
    A move is the source path position of the piece to move (0 enters a piece from home).
    :func:`legal_moves` lists them for a roll; none means the turn passes. :func:`apply_move` plays one
    and reports what happened (``EXTRA_ROLL``, ``CAPTURE``, ``ROSETTE``, ``SCORED``, ``WIN`` flags).

Observation
    :func:`write_features` encodes a position from the mover's side (2 L + 4 numbers) and
    :func:`write_observation` from either side with the roll one-hot after it (2 L + 4 + R numbers): the
    one encoder of the environments and the learned agents.

Game flow
    A game alternates chance nodes and decisions. :func:`start_game` seeds the dice stream of
    (seed, game) and returns the opening position; :func:`roll_turn` is one chance node (roll, and pass
    the turn when the roll has no legal move); :func:`next_decision` rolls until a side must choose
    among ``n >= 1`` legal moves (n == 0: the game is over); :func:`play_move` plays the chosen move,
    which keeps the turn after an extra roll. Both keep the ``counters`` (``C_TURNS``: turns finished,
    a turn ending when the dice pass to the other side or the game ends; ``C_MOVES``: moves played).
    Every loop of the package (simulator, environments, match play, training, the terminal game) is
    "choose a move, then advance" on these, so the same (seed, game) gives the same dice everywhere.
    Built-in policies that randomize draw from their own stream, :func:`policy_stream`, never the dice.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

if TYPE_CHECKING:
    from urgym.rules import Rules

# The documented contract; the G_* offsets, field helpers and generator steps below are public too, for
# kernels in other packages, but kept out of ``import *``.
__all__ = [
    "BUILTIN_POLICIES",
    "CAPTURE",
    "COUNTERS_SIZE",
    "C_MOVES",
    "C_TURNS",
    "EXTRA_ROLL",
    "MAX_MOVES",
    "POLICY_EXTERNAL",
    "ROSETTE",
    "SCORED",
    "WIN",
    "advance",
    "advancement",
    "apply_move",
    "can_move",
    "chance_outcomes",
    "feature_count",
    "geometry",
    "is_over",
    "legal_moves",
    "next_decision",
    "observation_size",
    "opp_home",
    "opp_mask",
    "own_home",
    "own_mask",
    "pack",
    "play_move",
    "policy_choice",
    "policy_stream",
    "roll_cumulative",
    "roll_dice",
    "roll_turn",
    "seed_stream",
    "simulate_games",
    "start_game",
    "start_state",
    "swap_sides",
    "turn_of",
    "winner_of",
    "write_features",
    "write_observation",
]

# --- packed position layout -----------------------------------------------------------------------
FIELD_BITS = 27
FIELD_MASK = (1 << FIELD_BITS) - 1
OPP_SHIFT = 27
OWN_HOME_SHIFT = 54
OPP_HOME_SHIFT = 58
HOME_MASK = 15
TURN_SHIFT = 62

# --- geometry array layout --------------------------------------------------------------------------
G_LENGTH = 0
G_PIECES = 1
G_SAFE_ROSETTES = 2
G_ROSETTE_EXTRA = 3
G_CAPTURE_EXTRA = 4
G_MAX_ROLL = 5
G_OWN_SAME_TILE = 8  # + destination position p (0..L+1)
G_OPP_SAME_TILE = 40  # + destination position p
G_ROSETTE = 72  # + position p
GEOMETRY_SIZE = 104
MAX_MOVES = 32  # room for every source position of the longest path plus entering

# --- move outcome flags (returned by apply_move) ------------------------------------------------------
EXTRA_ROLL = 1
CAPTURE = 2
ROSETTE = 4
SCORED = 8
WIN = 16

# --- built-in policies --------------------------------------------------------------------------------
POLICY_EXTERNAL = -1
POLICY_RANDOM = 0
POLICY_FIRST = 1
POLICY_LAST = 2
POLICY_GREEDY = 3
BUILTIN_POLICIES = {"random": POLICY_RANDOM, "first": POLICY_FIRST, "last": POLICY_LAST,
                    "greedy": POLICY_GREEDY}


# --- field access -------------------------------------------------------------------------------------
@njit(cache=True)
def own_mask(state):
    return state & FIELD_MASK


@njit(cache=True)
def opp_mask(state):
    return (state >> OPP_SHIFT) & FIELD_MASK


@njit(cache=True)
def own_home(state):
    return (state >> OWN_HOME_SHIFT) & HOME_MASK


@njit(cache=True)
def opp_home(state):
    return (state >> OPP_HOME_SHIFT) & HOME_MASK


@njit(cache=True)
def turn_of(state):
    return (state >> TURN_SHIFT) & 1


@njit(cache=True)
def pack(own, opp, own_h, opp_h, turn):
    return own | (opp << OPP_SHIFT) | (own_h << OWN_HOME_SHIFT) | (opp_h << OPP_HOME_SHIFT) | (turn << TURN_SHIFT)


@njit(cache=True)
def swap_sides(state):
    """The same position seen by the other side: the turn passes."""
    return pack(opp_mask(state), own_mask(state), opp_home(state), own_home(state), 1 - turn_of(state))


@njit(cache=True)
def popcount(x):
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return (x * 0x0101010101010101 >> 56) & 0xFF


@njit(cache=True)
def own_scored(state, pieces):
    return pieces - own_home(state) - popcount(own_mask(state))


@njit(cache=True)
def opp_scored(state, pieces):
    return pieces - opp_home(state) - popcount(opp_mask(state))


@njit(cache=True)
def start_state(pieces):
    return pack(0, 0, pieces, pieces, 0)


@njit(cache=True)
def is_over(state):
    """True when either side has scored every piece."""
    return (own_mask(state) == 0 and own_home(state) == 0) or (opp_mask(state) == 0 and opp_home(state) == 0)


@njit(cache=True)
def winner_of(state):
    """0 if light has won, 1 if dark has, -1 while the game goes on."""
    if own_mask(state) == 0 and own_home(state) == 0:
        return turn_of(state)
    if opp_mask(state) == 0 and opp_home(state) == 0:
        return 1 - turn_of(state)
    return -1


# --- moves --------------------------------------------------------------------------------------------
@njit(cache=True)
def _position_bit(p):
    return (1 << (p - 1)) if p > 0 else 0


@njit(cache=True)
def can_move(own, opp, src, dest, geom):
    """Whether the mover's piece at ``src`` (0 = home) may move to ``dest``; the piece exists."""
    length = geom[G_LENGTH]
    if dest > length + 1:
        return False  # overshooting the exit is illegal
    if dest == length + 1:
        return True  # exact bear-off lands on no tile
    if (own & ~_position_bit(src)) & geom[G_OWN_SAME_TILE + dest]:
        return False  # own piece on the destination tile
    # An opponent's piece is captured, unless it stands on a rosette and rosettes are safe.
    return not ((opp & geom[G_OPP_SAME_TILE + dest]) and geom[G_SAFE_ROSETTES] and geom[G_ROSETTE + dest])


@njit(cache=True)
def legal_moves(state, roll, geom, out):
    """Write the legal source positions for ``roll`` into ``out`` (ascending); return their count."""
    if roll <= 0:
        return 0
    own = own_mask(state)
    opp = opp_mask(state)
    n = 0
    if own_home(state) > 0 and can_move(own, opp, 0, roll, geom):
        out[n] = 0
        n += 1
    last_source = min(geom[G_LENGTH], geom[G_LENGTH] + 1 - roll)
    for p in range(1, last_source + 1):
        if (own >> (p - 1)) & 1 and can_move(own, opp, p, p + roll, geom):
            out[n] = p
            n += 1
    return n


@njit(cache=True)
def apply_move(state, roll, src, geom):
    """Play the legal move of the piece at ``src``; return (next state, outcome flags).

    The next state is seen from the side to move next: the same side when ``flags & EXTRA_ROLL``,
    otherwise the opponent (also after a win, so a finished game is one where the mover has lost).
    """
    length = geom[G_LENGTH]
    dest = src + roll
    own = own_mask(state)
    opp = opp_mask(state)
    own_h = own_home(state)
    opp_h = opp_home(state)
    flags = 0
    if src == 0:
        own_h -= 1
    else:
        own &= ~_position_bit(src)
    if dest == length + 1:
        flags |= SCORED
        if own == 0 and own_h == 0:
            flags |= WIN
    else:
        own |= _position_bit(dest)
        hit = opp & geom[G_OPP_SAME_TILE + dest]
        if hit:
            opp &= ~hit
            opp_h += popcount(hit)
            flags |= CAPTURE
            if geom[G_CAPTURE_EXTRA]:
                flags |= EXTRA_ROLL
        if geom[G_ROSETTE + dest]:
            flags |= ROSETTE
            if geom[G_ROSETTE_EXTRA]:
                flags |= EXTRA_ROLL
    nxt = pack(own, opp, own_h, opp_h, turn_of(state))
    if not flags & EXTRA_ROLL:
        nxt = swap_sides(nxt)
    return nxt, flags


@njit(cache=True)
def advancement(state, geom):
    """Own advancement minus the opponent's: scored pieces weigh L + 1, on-board pieces their position."""
    length = geom[G_LENGTH]
    pieces = geom[G_PIECES]
    total = (own_scored(state, pieces) - opp_scored(state, pieces)) * (length + 1)
    own = own_mask(state)
    opp = opp_mask(state)
    for p in range(1, length + 1):
        total += p * (((own >> (p - 1)) & 1) - ((opp >> (p - 1)) & 1))
    return total


# --- randomness ---------------------------------------------------------------------------------------
@njit(cache=True)
def next_u64(rng):
    """SplitMix64 step on the generator state ``rng[0]`` (a uint64 array)."""
    z = rng[0] + np.uint64(0x9E3779B97F4A7C15)
    rng[0] = z
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def next_uniform(rng):
    return (next_u64(rng) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def next_below(rng, n):
    return np.int64(next_u64(rng) % np.uint64(n))


@njit(cache=True)
def roll_dice(cumulative, rng):
    """Sample a roll from the cumulative roll distribution."""
    u = next_uniform(rng)
    r = 0
    last = cumulative.shape[0] - 1
    while r < last and u >= cumulative[r]:
        r += 1
    return r


# --- built-in policies --------------------------------------------------------------------------------
@njit(cache=True)
def greedy_choice(state, roll, moves, n, geom):
    """Capture if possible, else land on a rosette, else move the most advanced piece."""
    best_rosette = -1
    for i in range(n - 1, -1, -1):
        _, flags = apply_move(state, roll, moves[i], geom)
        if flags & CAPTURE:
            return moves[i]
        if best_rosette < 0 and flags & ROSETTE:
            best_rosette = moves[i]
    if best_rosette >= 0:
        return best_rosette
    return moves[n - 1]


@njit(cache=True, inline="always")
def policy_choice(policy, state, roll, moves, n, geom, rng):
    """The move a built-in policy plays among the ``n`` legal ``moves``."""
    if policy == POLICY_RANDOM:
        return moves[next_below(rng, n)]
    if policy == POLICY_FIRST:
        return moves[0]
    if policy == POLICY_LAST:
        return moves[n - 1]
    return greedy_choice(state, roll, moves, n, geom)


# --- game flow ----------------------------------------------------------------------------------------
C_TURNS = 0
C_MOVES = 1
COUNTERS_SIZE = 2

POLICY_SALT = 0x5EED0A6E
"""Mixed into the seed of the policies' streams so they never coincide with the dice streams."""


@njit(cache=True)
def seed_stream(rng, seed, stream):
    """Set ``rng`` to an independent stream for (seed, stream), so results do not depend on batching."""
    rng[0] = np.uint64(seed) ^ (np.uint64(stream) * np.uint64(0xD1B54A32D192ED03))
    next_u64(rng)


@njit(cache=True)
def policy_stream(rng, seed, game, side):
    """Seed ``rng`` for the choices of ``side`` (0 light, 1 dark) in game ``game``: apart from the dice."""
    seed_stream(rng, np.uint64(seed) ^ np.uint64(POLICY_SALT), np.uint64(2) * np.uint64(game) + np.uint64(side))


@njit(cache=True)
def start_game(pieces, seed, game, dice, counters):
    """Seed ``dice`` with the stream of (seed, game), zero ``counters``; return the opening position."""
    seed_stream(dice, seed, game)
    counters[:] = 0
    return start_state(pieces)


@njit(cache=True, inline="always")
def roll_turn(state, geom, cumulative, dice, moves, counters):
    """One chance node: roll the dice for the side to move in ``state`` (a game not over).

    Returns (state, roll, n) with the ``n`` legal moves in ``moves[:n]``. When n == 0 the roll had no
    legal move and the turn has passed: ``state`` is already the other side's, and the turn is counted.
    """
    roll = roll_dice(cumulative, dice)
    n = legal_moves(state, roll, geom, moves)
    if n == 0:
        state = swap_sides(state)
        counters[C_TURNS] += 1
    return state, roll, n


@njit(cache=True, inline="always")
def next_decision(state, geom, cumulative, dice, moves, counters):
    """Roll (passing rolls with no legal move) until a side must choose; n == 0 when the game is over.

    Returns (state, roll, n): the side to move in ``state`` chooses one of ``moves[:n]`` for ``roll``.
    """
    while True:
        if is_over(state):
            return state, 0, 0
        state, roll, n = roll_turn(state, geom, cumulative, dice, moves, counters)
        if n > 0:
            return state, roll, n


@njit(cache=True, inline="always")
def play_move(state, roll, move, geom, counters):
    """Play a legal ``move`` and count it; returns (next state, outcome flags of :func:`apply_move`)."""
    state, flags = apply_move(state, roll, move, geom)
    counters[C_MOVES] += 1
    if not flags & EXTRA_ROLL:
        counters[C_TURNS] += 1
    return state, flags


@njit(cache=True)
def advance(state, policies, geom, cumulative, dice, policy_rngs, moves, counters):
    """Play the built-in policies' moves until a side with ``POLICY_EXTERNAL`` must decide or the game ends.

    ``policies[side]`` is a ``POLICY_*`` id; side s draws its random choices from ``policy_rngs[s]``.
    Returns (state, roll, n) as :func:`next_decision` does.
    """
    while True:
        if is_over(state):
            return state, 0, 0
        # roll_turn rather than next_decision: one loop level less measured 25% faster in the simulator.
        state, roll, n = roll_turn(state, geom, cumulative, dice, moves, counters)
        if n == 0:
            continue
        side = turn_of(state)
        if policies[side] == POLICY_EXTERNAL:
            return state, roll, n
        move = policy_choice(policies[side], state, roll, moves, n, geom, policy_rngs[side])
        state, _ = play_move(state, roll, move, geom, counters)


@njit(cache=True)
def simulate_games(policies, geom, cumulative, seed, first_game, winners, turns, moves_played):
    """Play ``winners.shape[0]`` games between built-in policies; game i is game first_game + i of ``seed``."""
    dice = np.zeros(1, dtype=np.uint64)
    policy_rngs = np.zeros((2, 1), dtype=np.uint64)
    moves = np.zeros(MAX_MOVES, dtype=np.int64)
    counters = np.zeros(COUNTERS_SIZE, dtype=np.int64)
    for g in range(winners.shape[0]):
        game = first_game + g
        state = start_game(geom[G_PIECES], seed, game, dice, counters)
        for side in range(2):
            policy_stream(policy_rngs[side], seed, game, side)
        state, _, _ = advance(state, policies, geom, cumulative, dice, policy_rngs, moves, counters)
        winners[g] = winner_of(state)
        turns[g] = counters[C_TURNS]
        moves_played[g] = counters[C_MOVES]


# --- observations -------------------------------------------------------------------------------------
def feature_count(rules: Rules) -> int:
    """Length of :func:`write_features`' encoding: 2 L + 4."""
    return 2 * rules.length + 4


def observation_size(rules: Rules) -> int:
    """Length of :func:`write_observation`'s encoding: 2 L + 4 + R, R the largest roll."""
    return feature_count(rules) + rules.max_roll


@njit(cache=True)
def write_features(state, geom, out):
    """Encode ``state`` from the mover's side into ``out[:2 L + 4]``.

    ``[0, L)``: 1 where the mover has a piece at path position index + 1; ``[L, 2 L)``: the same for the
    opponent on its own path; then the mover's and the opponent's pieces at home, then their scored
    pieces, each divided by the piece count.
    """
    length = geom[G_LENGTH]
    pieces = geom[G_PIECES]
    own = own_mask(state)
    opp = opp_mask(state)
    for p in range(1, length + 1):
        out[p - 1] = (own >> (p - 1)) & 1
        out[length + p - 1] = (opp >> (p - 1)) & 1
    base = 2 * length
    out[base] = own_home(state) / pieces
    out[base + 1] = opp_home(state) / pieces
    out[base + 2] = own_scored(state, pieces) / pieces
    out[base + 3] = opp_scored(state, pieces) / pieces


@njit(cache=True)
def write_observation(state, side, roll, geom, out):
    """Encode ``state`` as ``side`` (0 light, 1 dark) sees it, then the one-hot of ``roll`` (0: none)."""
    if turn_of(state) != side:
        state = swap_sides(state)
    write_features(state, geom, out)
    base = 2 * geom[G_LENGTH] + 3
    for r in range(1, geom[G_MAX_ROLL] + 1):
        out[base + r] = 1.0 if r == roll else 0.0


# --- arrays of a rule set -----------------------------------------------------------------------------
@cache
def geometry(rules: Rules) -> np.ndarray:
    """The int64 geometry array of ``rules`` (layout: the ``G_*`` offsets above); read-only and cached."""
    g = np.zeros(GEOMETRY_SIZE, dtype=np.int64)
    length = rules.length
    g[G_LENGTH] = length
    g[G_PIECES] = rules.pieces
    g[G_SAFE_ROSETTES] = rules.safe_rosettes
    g[G_ROSETTE_EXTRA] = rules.rosette_extra_roll
    g[G_CAPTURE_EXTRA] = rules.capture_extra_roll
    g[G_MAX_ROLL] = rules.max_roll
    own_tiles, opp_tiles = rules.path, rules.dark_path
    for dest in range(1, length + 1):
        tile = own_tiles[dest - 1]
        g[G_OWN_SAME_TILE + dest] = positions_mask(p for p, t in enumerate(own_tiles, 1) if t == tile)
        g[G_OPP_SAME_TILE + dest] = positions_mask(p for p, t in enumerate(opp_tiles, 1) if t == tile)
        g[G_ROSETTE + dest] = tile in rules.rosettes
    g.flags.writeable = False
    return g


@cache
def chance_outcomes(rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    """The chance node of ``rules``: (rolls, probabilities), the rolls with a positive probability.

    Read-only cached arrays (int64 and float64); search agents and the solver enumerate them.
    """
    rolls = np.array(rules.rolls, dtype=np.int64)
    probabilities = np.array([rules.roll_probabilities[r] for r in rules.rolls], dtype=np.float64)
    rolls.flags.writeable = False
    probabilities.flags.writeable = False
    return rolls, probabilities


@cache
def roll_cumulative(rules: Rules) -> np.ndarray:
    """Cumulative probabilities of rolls 0..R for :func:`roll_dice`, the last exactly 1 so sampling ends."""
    cumulative = np.cumsum(np.asarray(rules.roll_probabilities, dtype=np.float64))
    cumulative[-1] = 1.0
    cumulative.flags.writeable = False
    return cumulative


def positions_mask(positions) -> int:
    """Bit p-1 set for each path position p."""
    mask = 0
    for p in positions:
        mask |= 1 << (p - 1)
    return mask
