"""The rules core: packed positions, the chance node, moves, observations and the one game flow, single and batched.

This module is the contract every other layer builds on (environments, solver, agents, evaluation). Its
functions are numba kernels over ints, arrays and two structured records, plus a few cached Python helpers that
turn a :class:`~urgym.Rules` into what the kernels read. Python users normally want :class:`urgym.Position` and
:class:`urgym.Game`, which wrap these kernels.

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
    read the same from either side and one geometry serves both. A finished game is seen by the side that
    lost (the winner is the side not to move).

Geometry
    :func:`geometry` turns a rule set into one record of :data:`GEOMETRY` (a one-element structured array, so
    that it crosses from Python into a kernel as cheaply as a plain array): the path length, pieces, largest
    roll and the three rule flags, per destination position the tiles it shares with each side's path and
    whether it is a rosette, and the roll distribution. Kernels read it by name (``g = geom[0]; g.length``).
    Only this module interprets it: other layers ask the core about captures (:func:`captured_position`),
    rosettes and bear-offs (:func:`apply_move`'s flags).

Chance node
    Every turn starts with a roll. The geometry's ``rolls``/``probabilities`` are the rolls with a positive
    probability (:func:`chance_outcomes` gives them in Python); search and the solver enumerate them, and only
    the game flow samples them, through :func:`roll_dice` on a SplitMix64 stream that :func:`seed_stream` keys
    by (seed, game).

Moves
    A move is the source path position of the piece to move (0 enters a piece from home).
    :func:`legal_moves` lists them for a roll; none means the turn passes. :func:`apply_move` plays one
    and reports what happened (``EXTRA_ROLL``, ``CAPTURE``, ``ROSETTE``, ``SCORED``, ``WIN`` flags).

Observation
    :func:`write_features` encodes a position from the mover's side (2 L + 4 numbers) and
    :func:`write_observation` from either side with the roll one-hot after it (2 L + 4 + R numbers): the
    one encoder of the environments and the learned agents.

Game flow
    A game alternates chance nodes and decisions, and lives in one record of :data:`FLOW` (its position, the
    roll to play and its legal moves, its dice stream, two policy streams and its counters): an array of
    :func:`flow_buffers` holds one game or a batch of thousands. :func:`start_game` seeds game ``i`` with the
    dice stream of (seed, game); :func:`roll_turn` is one chance node (roll, and pass the turn when the roll has
    no legal move); :func:`next_decision` rolls until a side must choose among ``n >= 1`` legal moves (n == 0:
    the game is over); :func:`play_move` plays the chosen move, which keeps the turn after an extra roll;
    :func:`advance` also plays the built-in policies' moves until a side with ``POLICY_EXTERNAL`` must decide.
    The counters count turns (a turn ends when the dice pass to the other side or the game ends) and moves.

    Many games in lockstep: :func:`start_games`, then :func:`step_games` plays the chosen move of every game
    awaiting one and advances every game to its next external decision, on the single-game primitives above
    (a loop over games, not a second game flow). Simulator, environments, match play, position sampling, TD
    training and the terminal game are all "choose a move, then advance" on these, so the same (seed, game)
    gives the same dice everywhere, alone or in a batch. Built-in policies that randomize draw from the game's
    own policy streams (:func:`policy_stream`), never the dice, and only when there is a choice.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numba import njit

from urgym.rules import MAX_PATH_LENGTH, MAX_ROLL, Rules

__all__ = [
    "BUILTIN_POLICIES",
    "CAPTURE",
    "EXTRA_ROLL",
    "FIELD_BITS",
    "FIELD_MASK",
    "FLOW",
    "GEOMETRY",
    "HOME_MASK",
    "MAX_MOVES",
    "MAX_ROLLS",
    "OPP_HOME_SHIFT",
    "OPP_SHIFT",
    "OWN_HOME_SHIFT",
    "POLICY_EXTERNAL",
    "POLICY_FIRST",
    "POLICY_GREEDY",
    "POLICY_LAST",
    "POLICY_PERFECT",
    "POLICY_RANDOM",
    "ROSETTE",
    "SCORED",
    "SIDE_SALT",
    "TURN_SHIFT",
    "WIN",
    "advance",
    "advance_for",
    "advancement",
    "apply_move",
    "can_move",
    "captured_position",
    "chance_outcomes",
    "episode_side",
    "feature_count",
    "flow_buffers",
    "geometry",
    "is_legal",
    "is_over",
    "landing_flags",
    "legal_moves",
    "move_index",
    "next_below",
    "next_decision",
    "next_u64",
    "next_uniform",
    "observation_size",
    "opp_home",
    "opp_mask",
    "opp_scored",
    "own_home",
    "own_mask",
    "own_scored",
    "pack",
    "play_move",
    "policy_choice",
    "policy_choices",
    "policy_stream",
    "popcount",
    "positions_mask",
    "replacement_move",
    "roll_dice",
    "roll_turn",
    "seed_stream",
    "slip",
    "start_game",
    "start_games",
    "start_state",
    "step_games",
    "swap_sides",
    "turn_of",
    "winner_of",
    "write_features",
    "write_observation",
    "write_observations",
]

# --- packed position layout -----------------------------------------------------------------------
FIELD_BITS = 27
FIELD_MASK = (1 << FIELD_BITS) - 1
OPP_SHIFT = 27
OWN_HOME_SHIFT = 54
OPP_HOME_SHIFT = 58
HOME_MASK = 15
TURN_SHIFT = 62

MAX_MOVES = MAX_PATH_LENGTH + 1  # room for every source position of the longest path plus entering
PATH_SLOTS = MAX_PATH_LENGTH + 2  # per-destination tables: positions 0..L+1
MAX_ROLLS = MAX_ROLL + 1  # rolls 0..MAX_ROLL

# --- the geometry record --------------------------------------------------------------------------
GEOMETRY = np.dtype(
    [
        ("length", np.int64),  # L: path positions on the board
        ("pieces", np.int64),
        ("max_roll", np.int64),
        ("safe_rosettes", np.int64),  # the three rule flags, 0 or 1
        ("rosette_extra_roll", np.int64),
        ("capture_extra_roll", np.int64),
        ("own_same_tile", np.int64, (PATH_SLOTS,)),  # [p]: mask of own path positions on the tile of position p
        ("opp_same_tile", np.int64, (PATH_SLOTS,)),  # [p]: mask of the opponent's positions on that tile
        ("rosette", np.int64, (PATH_SLOTS,)),  # [p]: 1 if position p's tile is a rosette
        ("n_rolls", np.int64),  # rolls with a positive probability ...
        ("rolls", np.int64, (MAX_ROLLS,)),  # ... ascending, in rolls[:n_rolls]
        ("probabilities", np.float64, (MAX_ROLLS,)),  # their probabilities
        ("cumulative", np.float64, (MAX_ROLLS,)),  # cumulative probabilities of rolls 0..max_roll, the last exactly 1
    ]
)
"""The rule set as the kernels read it: one record, by field name (see the module docstring)."""

# --- the game-flow record -------------------------------------------------------------------------
FLOW = np.dtype(
    [
        ("state", np.int64),  # the position (packed)
        ("roll", np.int64),  # the roll the side to move must play (0 when there is none)
        ("n", np.int64),  # its legal moves, in moves[:n] (0: the game is over or it is not at a decision)
        ("moves", np.int64, (MAX_MOVES,)),
        ("dice", np.uint64, (1,)),  # the dice stream of (seed, game)
        ("policy_rngs", np.uint64, (2, 1)),  # two policy streams (by side, or by agent slot in match play)
        ("turns", np.int64),  # turns finished (the dice passed to the other side, or the game ended)
        ("played", np.int64),  # moves played
        ("game", np.int64),  # which game of the seed
    ]
)
"""One game's flow: position, decision, random streams and counters (see the module docstring)."""

# --- move outcome flags (returned by apply_move) ------------------------------------------------------
EXTRA_ROLL = 1
CAPTURE = 2
ROSETTE = 4
SCORED = 8
WIN = 16

# --- policy kinds ------------------------------------------------------------------------------------
POLICY_EXTERNAL = -1
"""The side's moves come from outside the kernel (a Python agent, a learner, a human)."""
POLICY_RANDOM = 0
POLICY_FIRST = 1
POLICY_LAST = 2
POLICY_GREEDY = 3
POLICY_PERFECT = 4
"""The solved table's best move, with an optional slip (:func:`slip`): played by kernels that hold a table
(match play, position sampling), never by :func:`advance`."""
BUILTIN_POLICIES = {"random": POLICY_RANDOM, "first": POLICY_FIRST, "last": POLICY_LAST, "greedy": POLICY_GREEDY}
"""The policies the core plays by itself, by name."""


# --- field access -------------------------------------------------------------------------------------
@njit(cache=True)
def own_mask(state):
    """The mover's pieces on the path, one bit per position."""
    return state & FIELD_MASK


@njit(cache=True)
def opp_mask(state):
    """The opponent's pieces on its path, one bit per position."""
    return (state >> OPP_SHIFT) & FIELD_MASK


@njit(cache=True)
def own_home(state):
    """The mover's pieces at home."""
    return (state >> OWN_HOME_SHIFT) & HOME_MASK


@njit(cache=True)
def opp_home(state):
    """The opponent's pieces at home."""
    return (state >> OPP_HOME_SHIFT) & HOME_MASK


@njit(cache=True)
def turn_of(state):
    """The side to move: 0 light, 1 dark."""
    return (state >> TURN_SHIFT) & 1


@njit(cache=True)
def pack(own, opp, own_h, opp_h, turn):
    """A packed state from its parts."""
    return own | (opp << OPP_SHIFT) | (own_h << OWN_HOME_SHIFT) | (opp_h << OPP_HOME_SHIFT) | (turn << TURN_SHIFT)


@njit(cache=True)
def swap_sides(state):
    """The same position seen by the other side: the turn passes."""
    return pack(opp_mask(state), own_mask(state), opp_home(state), own_home(state), 1 - turn_of(state))


@njit(cache=True)
def popcount(x):
    """The number of set bits of ``x``."""
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return (x * 0x0101010101010101 >> 56) & 0xFF


@njit(cache=True)
def own_scored(state, pieces):
    """The mover's pieces borne off."""
    return pieces - own_home(state) - popcount(own_mask(state))


@njit(cache=True)
def opp_scored(state, pieces):
    """The opponent's pieces borne off."""
    return pieces - opp_home(state) - popcount(opp_mask(state))


@njit(cache=True)
def start_state(pieces):
    """The start of a game of ``pieces`` pieces, light to move."""
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
    g = geom[0]
    if dest > g.length + 1:
        return False  # overshooting the exit is illegal
    if dest == g.length + 1:
        return True  # exact bear-off lands on no tile
    if (own & ~_position_bit(src)) & g.own_same_tile[dest]:
        return False  # own piece on the destination tile
    # An opponent's piece is captured, unless it stands on a rosette and rosettes are safe.
    return not ((opp & g.opp_same_tile[dest]) and g.safe_rosettes and g.rosette[dest])


@njit(cache=True)
def legal_moves(state, roll, geom, out):
    """Write the legal source positions for ``roll`` into ``out`` (ascending); return their count."""
    if roll <= 0:
        return 0
    length = geom[0].length
    own = own_mask(state)
    opp = opp_mask(state)
    n = 0
    if own_home(state) > 0 and can_move(own, opp, 0, roll, geom):
        out[n] = 0
        n += 1
    last_source = min(length, length + 1 - roll)
    for p in range(1, last_source + 1):
        if (own >> (p - 1)) & 1 and can_move(own, opp, p, p + roll, geom):
            out[n] = p
            n += 1
    return n


@njit(cache=True)
def captured_position(opp, dest, geom):
    """The path position (on its own path) of the opponent's piece a move to ``dest`` captures; 0 if none.

    ``dest`` past the board (a bear-off) captures nothing; on single-visit paths one tile is one position.
    """
    g = geom[0]
    if dest > g.length:
        return 0
    hit = opp & g.opp_same_tile[dest]
    if hit == 0:
        return 0
    p = 1
    while not (hit >> (p - 1)) & 1:
        p += 1
    return p


@njit(cache=True, inline="always")  # inlined in numba's IR: the networks' features call it at every leaf
def landing_flags(opp, dest, geom):
    """The outcome flags of a legal move landing on ``dest`` against the opponent's pieces ``opp``.

    ``dest`` is ``length + 1`` when the piece is borne off. All flags but WIN: SCORED, or CAPTURE and ROSETTE, with the
    EXTRA_ROLL the rules give for them.
    """
    g = geom[0]
    if dest == g.length + 1:
        return SCORED
    flags = 0
    if opp & g.opp_same_tile[dest]:
        flags |= CAPTURE
        if g.capture_extra_roll:
            flags |= EXTRA_ROLL
    if g.rosette[dest]:
        flags |= ROSETTE
        if g.rosette_extra_roll:
            flags |= EXTRA_ROLL
    return flags


@njit(cache=True)
def apply_move(state, roll, src, geom):
    """Play the legal move of the piece at ``src``; return (next state, outcome flags).

    The next state is seen from the side to move next: the same side when ``flags & EXTRA_ROLL``,
    otherwise the opponent (also after a win, so a finished game is one where the mover has lost).
    """
    g = geom[0]
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
    flags = landing_flags(opp, dest, geom)
    if flags & SCORED:
        if own == 0 and own_h == 0:
            flags |= WIN
    else:
        own |= _position_bit(dest)
        if flags & CAPTURE:
            hit = opp & g.opp_same_tile[dest]
            opp &= ~hit
            opp_h += popcount(hit)
    nxt = pack(own, opp, own_h, opp_h, turn_of(state))
    if not flags & EXTRA_ROLL:
        nxt = swap_sides(nxt)
    return nxt, flags


@njit(cache=True)
def advancement(state, geom):
    """Own advancement minus the opponent's: scored pieces weigh L + 1, on-board pieces their position."""
    g = geom[0]
    length = g.length
    total = (own_scored(state, g.pieces) - opp_scored(state, g.pieces)) * (length + 1)
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
    """A uniform float in [0, 1) from the stream ``rng``."""
    return (next_u64(rng) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def next_below(rng, n):
    """A uniform integer in [0, n) from the stream ``rng``."""
    return np.int64(next_u64(rng) % np.uint64(n))


@njit(cache=True)
def roll_dice(geom, rng):
    """Sample a roll from the rule set's roll distribution."""
    g = geom[0]
    u = next_uniform(rng)
    r = 0
    while r < g.max_roll and u >= g.cumulative[r]:
        r += 1
    return r


POLICY_SALT = 0x5EED0A6E
"""Mixed into the seed of the policies' streams so they never coincide with the dice streams."""


@njit(cache=True)
def seed_stream(rng, seed, stream):
    """Set ``rng`` to an independent stream for (seed, stream), so results do not depend on batching."""
    rng[0] = np.uint64(seed) ^ (np.uint64(stream) * np.uint64(0xD1B54A32D192ED03))
    next_u64(rng)


@njit(cache=True)
def policy_stream(rng, seed, game, side):
    """Seed ``rng`` for the choices of ``side`` (0 or 1) in game ``game``: apart from the dice."""
    seed_stream(rng, np.uint64(seed) ^ np.uint64(POLICY_SALT), np.uint64(2) * np.uint64(game) + np.uint64(side))


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
    """The move a built-in policy plays among the ``n`` legal ``moves`` (a random one draws only when n > 1)."""
    if n == 1:
        return moves[0]
    if policy == POLICY_RANDOM:
        return moves[next_below(rng, n)]
    if policy == POLICY_FIRST:
        return moves[0]
    if policy == POLICY_LAST:
        return moves[n - 1]
    return greedy_choice(state, roll, moves, n, geom)


@njit(cache=True)
def policy_choices(policy, decisions, geom, out):
    """:func:`policy_choice` for each of a batch of :class:`urgym.batch.Decisions`, drawing from its own stream."""
    for i in range(decisions.states.shape[0]):
        out[i] = policy_choice(
            policy,
            decisions.states[i],
            decisions.rolls[i],
            decisions.moves[i],
            decisions.counts[i],
            geom,
            decisions.rngs[i],
        )


@njit(cache=True)
def slip(best, n, epsilon, rng):
    """The index a player aiming at move ``best`` of ``n`` plays.

    With probability ``epsilon`` (and a choice) a uniformly random other move, else ``best``. The perfect player's
    slips, wherever it plays.
    """
    if epsilon > 0.0 and n > 1 and next_uniform(rng) < epsilon:
        other = next_below(rng, n - 1)
        return other + (1 if other >= best else 0)
    return best


@njit(cache=True)
def is_legal(move, moves, n):
    """Whether ``move`` is one of the ``n`` legal ``moves``."""
    for k in range(n):  # noqa: SIM110  (numba compiles no generator inside any())
        if moves[k] == move:
            return True
    return False


@njit(cache=True, inline="always")
def move_index(moves, move):
    """The place of ``move`` among the legal ``moves`` (it must be one of them: a move checked legal already)."""
    k = 0
    while moves[k] != move:
        k += 1
    return k


@njit(cache=True)
def replacement_move(action, moves, n):
    """The legal move that stands in for an illegal ``action`` (the environments' ``illegal_action="replace"``).

    The legal source position nearest to ``action``, the lower one on a tie (so out-of-range actions map to the first or
    last legal move).
    """
    best = moves[0]
    for k in range(1, n):
        if abs(moves[k] - action) < abs(best - action):
            best = moves[k]
    return best


SIDE_SALT = 0x51DE5A17
"""Mixed into the seed of the stream that draws an agent's side, apart from the dice and the policies."""


@njit(cache=True)
def episode_side(seed, game):
    """The side (0 light, 1 dark) an environment's agent plays in game ``game`` of ``seed``.

    When its side is drawn (``agent_side="random"``): a function of (seed, game) alone, so a game is the same alone or
    in a batch.
    """
    rng = np.zeros(1, dtype=np.uint64)
    seed_stream(rng, np.uint64(seed) ^ np.uint64(SIDE_SALT), np.uint64(game))
    return np.int64(next_u64(rng) >> np.uint64(63))


# --- game flow: one game ------------------------------------------------------------------------------
def flow_buffers(games: int = 1) -> np.ndarray:
    """A zeroed :data:`FLOW` array for ``games`` games: the one constructor of game-flow buffers."""
    return np.zeros(games, dtype=FLOW)


@njit(cache=True)
def start_game(flows, i, pieces, seed, game):
    """Set game ``i`` of ``flows`` to game ``game`` of ``seed``.

    The opening position, the dice stream of (seed, game), both policy streams, zero counters, no decision yet.
    """
    f = flows[i]
    f.state = start_state(pieces)
    f.roll = 0
    f.n = 0
    f.turns = 0
    f.played = 0
    f.game = game
    seed_stream(f.dice, seed, game)
    for side in range(2):
        policy_stream(f.policy_rngs[side], seed, game, side)


@njit(cache=True, inline="always")
def roll_turn(flows, i, geom):
    """One chance node of game ``i`` (not over): roll for the side to move; return the legal moves' count.

    When it is 0 the roll had no legal move and the turn has passed (and is counted).
    """
    f = flows[i]
    f.roll = roll_dice(geom, f.dice)
    f.n = legal_moves(f.state, f.roll, geom, f.moves)
    if f.n == 0:
        f.state = swap_sides(f.state)
        f.turns += 1
    return f.n


@njit(cache=True, inline="always")
def next_decision(flows, i, geom):
    """Roll (passing rolls with no legal move) until a side must choose; return n (0: the game is over)."""
    f = flows[i]
    while True:
        if is_over(f.state):
            f.roll = 0
            f.n = 0
            return 0
        if roll_turn(flows, i, geom) > 0:
            return f.n


@njit(cache=True, inline="always")
def play_move(flows, i, move, geom):
    """Play the legal ``move`` of game ``i``'s decision and count it; return :func:`apply_move`'s flags."""
    f = flows[i]
    state, flags = apply_move(f.state, f.roll, move, geom)
    f.state = state
    f.played += 1
    if not flags & EXTRA_ROLL:
        f.turns += 1
    f.roll = 0
    f.n = 0
    return flags


@njit(cache=True)
def advance(flows, i, policies, geom):
    """Play the built-in policies' moves until a side with ``POLICY_EXTERNAL`` must decide or the game ends.

    ``policies[s]`` is a ``POLICY_*`` id for side s (0 light, 1 dark), which draws from policy stream s.
    Returns the decision's legal moves' count as :func:`next_decision` does (0: the game is over).
    """
    f = flows[i]
    # next_decision's loop spelled out: calling it here cost the simulator 6-18% of its games per second.
    while True:
        if is_over(f.state):
            f.roll = 0
            f.n = 0
            return 0
        if roll_turn(flows, i, geom) == 0:
            continue
        side = turn_of(f.state)
        if policies[side] == POLICY_EXTERNAL:
            return f.n
        move = policy_choice(policies[side], f.state, f.roll, f.moves, f.n, geom, f.policy_rngs[side])
        play_move(flows, i, move, geom)


@njit(cache=True)
def advance_for(flows, i, side, move, policies, geom, out):
    """One step of an agent playing ``side`` against the policies.

    Play ``move`` (when >= 0) at game i's decision, advance (as :func:`advance`), and write what ``side`` observes into
    ``out`` (:func:`write_observation`, the roll only when it is ``side``'s to play). Returns the decision's legal
    moves' count (0: the game is over).

    The environments' step in one call; a decision of the other side with ``POLICY_EXTERNAL`` also stops it.
    """
    if move >= 0:
        play_move(flows, i, move, geom)
    f = flows[i]
    n = advance(flows, i, policies, geom)
    write_observation(f.state, side, f.roll if n > 0 and turn_of(f.state) == side else 0, geom, out)
    return n


# --- game flow: many games in lockstep ------------------------------------------------------------------
@njit(cache=True)
def start_games(flows, pieces, seed, first_game):
    """Start every game of ``flows``: game i is game ``first_game + i`` of ``seed``."""
    for i in range(flows.shape[0]):
        start_game(flows, i, pieces, seed, first_game + i)


@njit(cache=True)
def step_games(flows, chosen, policies, geom):
    """Play the chosen moves, then advance every game to its next external decision.

    ``chosen[i]`` is played in every game awaiting a move with ``chosen[i] >= 0``; every game not at a decision advances
    (as :func:`advance`). Returns how many games await a move.

    ``chosen`` is read only where a game awaits one. Right after :func:`start_games`, pass ``chosen`` all -1.
    """
    waiting = 0
    for i in range(flows.shape[0]):
        f = flows[i]
        if f.n > 0 and chosen[i] >= 0:
            play_move(flows, i, chosen[i], geom)
        if f.n == 0 and not is_over(f.state):
            advance(flows, i, policies, geom)
        if f.n > 0:
            waiting += 1
    return waiting


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
    g = geom[0]
    length = g.length
    pieces = g.pieces
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
    g = geom[0]
    base = 2 * g.length + 3
    for r in range(1, g.max_roll + 1):
        out[base + r] = 1.0 if r == roll else 0.0


@njit(cache=True)
def write_observations(decisions, geom, out):
    """The observation of each of a batch of decisions (:class:`urgym.batch.Decisions`) into ``out[i]``.

    From its mover's side with its roll: what a network choosing the moves sees.
    """
    for i in range(decisions.states.shape[0]):
        state = decisions.states[i]
        write_observation(state, turn_of(state), decisions.rolls[i], geom, out[i])


# --- a rule set as kernel data --------------------------------------------------------------------------
@cache
def geometry(rules: Rules) -> np.ndarray:
    """The :data:`GEOMETRY` record of ``rules``: a read-only one-element structured array, cached."""
    geom = np.zeros(1, dtype=GEOMETRY)
    g = geom[0]
    length = rules.length
    g["length"] = length
    g["pieces"] = rules.pieces
    g["max_roll"] = rules.max_roll
    g["safe_rosettes"] = rules.safe_rosettes
    g["rosette_extra_roll"] = rules.rosette_extra_roll
    g["capture_extra_roll"] = rules.capture_extra_roll
    own_tiles, opp_tiles = rules.path, rules.dark_path
    for dest in range(1, length + 1):
        tile = own_tiles[dest - 1]
        g["own_same_tile"][dest] = positions_mask(p for p, t in enumerate(own_tiles, 1) if t == tile)
        g["opp_same_tile"][dest] = positions_mask(p for p, t in enumerate(opp_tiles, 1) if t == tile)
        g["rosette"][dest] = tile in rules.rosettes
    rolls = rules.rolls
    g["n_rolls"] = len(rolls)
    g["rolls"][: len(rolls)] = rolls
    g["probabilities"][: len(rolls)] = [rules.roll_probabilities[r] for r in rolls]
    cumulative = np.cumsum(np.asarray(rules.roll_probabilities, dtype=np.float64))
    cumulative[-1] = 1.0  # so sampling always ends
    g["cumulative"][: len(cumulative)] = cumulative
    geom.flags.writeable = False
    return geom


@cache
def chance_outcomes(rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    """The chance node of ``rules``: (rolls, probabilities), the rolls with a positive probability.

    Read-only cached arrays (int64 and float64), the same numbers as the geometry's ``rolls`` and
    ``probabilities``.
    """
    g = geometry(rules)[0]
    rolls = np.array(g["rolls"][: g["n_rolls"]], dtype=np.int64)
    probabilities = np.array(g["probabilities"][: g["n_rolls"]], dtype=np.float64)
    rolls.flags.writeable = False
    probabilities.flags.writeable = False
    return rolls, probabilities


def positions_mask(positions) -> int:
    """Bit p-1 set for each path position p."""
    mask = 0
    for p in positions:
        mask |= 1 << (p - 1)
    return mask
