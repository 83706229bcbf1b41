"""Numba core of the rules: the one implementation of move generation and move application.

A position is one int64 in self/other form, seen from the side to move ("own") against the other side
("opp"):

=========  ======  ==========================================================
bits       field   meaning
=========  ======  ==========================================================
0..26      own     bit p-1 set: the mover has a piece at path position p
27..53     opp     the same for the opponent, on the opponent's own path
54..57     own_h   the mover's pieces at home
58..61     opp_h   the opponent's pieces at home
62         turn    0: light is the mover, 1: dark is the mover
=========  ======  ==========================================================

Scored pieces are the rest (pieces - home - on board). Dark's path mirrors light's, so the rules read
the same from either side and one geometry array serves both. Geometry (:func:`urgym.rules` ->
:func:`build_geometry`) is an int64 array with the layout given by the ``G_*`` offsets below: for each
destination position, a mask of the mover's positions on the same tile (for blocking) and of the
opponent's positions on that tile (for captures), and whether the tile is a rosette.

Functions take arrays and ints and return ints or write into preallocated arrays; the Python API in
:mod:`urgym.position` validates input and wraps results.
"""

from __future__ import annotations

import numpy as np
from numba import njit

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


@njit(cache=True)
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
@njit(cache=True)
def advance(state, policies, geom, cumulative, rng, moves, counters):
    """Roll and play built-in moves until a side with an external policy must decide or the game ends.

    ``policies[side]`` is a ``POLICY_*`` id for light (0) and dark (1); ``POLICY_EXTERNAL`` stops here.
    ``counters[0]`` counts finished turns (a turn ends when it passes or the game ends), ``counters[1]``
    moves played. Returns (state, roll, n): at a decision ``moves[:n]`` holds the n >= 1 legal moves;
    n == 0 means the game is over.
    """
    while True:
        if is_over(state):
            return state, 0, 0
        roll = roll_dice(cumulative, rng)
        n = legal_moves(state, roll, geom, moves)
        if n == 0:
            state = swap_sides(state)
            counters[0] += 1
            continue
        policy = policies[turn_of(state)]
        if policy == POLICY_EXTERNAL:
            return state, roll, n
        move = policy_choice(policy, state, roll, moves, n, geom, rng)
        state = play_counted(state, roll, move, geom, counters)


@njit(cache=True)
def play_counted(state, roll, move, geom, counters):
    """apply_move that also keeps the turn and move counters of :func:`advance`."""
    state, flags = apply_move(state, roll, move, geom)
    counters[1] += 1
    if not flags & EXTRA_ROLL:
        counters[0] += 1
    return state


@njit(cache=True)
def write_observation(state, side, roll, geom, out):
    """Fill ``out`` with the observation of ``side`` (0 light, 1 dark); see :class:`urgym.env.UrEnv`."""
    if turn_of(state) != side:
        state = swap_sides(state)
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
    for r in range(1, geom[G_MAX_ROLL] + 1):
        out[base + 3 + r] = 1.0 if r == roll else 0.0


@njit(cache=True)
def seed_stream(rng, seed, stream):
    """Set ``rng`` to an independent stream for (seed, stream), so results do not depend on batching."""
    rng[0] = np.uint64(seed) ^ (np.uint64(stream) * np.uint64(0xD1B54A32D192ED03))
    next_u64(rng)


@njit(cache=True)
def simulate_games(policies, geom, cumulative, seed, first_game, winners, turns, moves_played):
    """Play ``winners.shape[0]`` games between built-in policies; game i uses stream first_game + i."""
    rng = np.zeros(1, dtype=np.uint64)
    moves = np.zeros(MAX_MOVES, dtype=np.int64)
    counters = np.zeros(2, dtype=np.int64)
    start = start_state(geom[G_PIECES])
    for g in range(winners.shape[0]):
        seed_stream(rng, seed, first_game + g)
        counters[:] = 0
        state, _, _ = advance(start, policies, geom, cumulative, rng, moves, counters)
        winners[g] = winner_of(state)
        turns[g] = counters[0]
        moves_played[g] = counters[1]
