"""Encodings of a position for value networks, from the side to move: the inputs of every after-state network.

Three feature sets, each a numba writer over the packed state (:mod:`urgym.core`), chosen by name:

``td-v1`` (:data:`TD_V1`)
    :func:`urgym.core.write_features`, the environments' encoding without the roll: the mover's and the
    opponent's pieces per path position (2 L ones and zeros), then each side's pieces at home and scored, divided
    by the piece count (4 numbers). TD(lambda)'s networks read it.

``tactics-v1`` (:data:`TACTICS_V1`)
    2 L + 4 (P + 1) + 8 R numbers, all 0 or 1: the pieces per path position as above; the pieces at home and
    scored of each side one-hot (P + 1 slots each, so a network need not learn that 6 of 7 scored is nearly a
    win); then, for each roll r = 1 .. R of the side to move, whether r has a legal move, a capture, a move onto a
    rosette and a bear-off; then the same four for the opponent, as if it rolled next (its threats). The tactics
    are read from the core's legal moves, so they follow every rule set's own rules (shared tiles, safe
    rosettes).

``tactics-v2`` (:data:`TACTICS_V2`)
    ``tactics-v1``, then 4 R numbers more: for each roll r of the side to move, how far along its own path the most
    advanced piece a move with r captures stood (its path position over L; 0 when r captures nothing), and how many
    legal moves r has, over P; then the same two for the opponent. What a capture costs grows with how far the piece
    had come, and a roll with one legal move is a forced one: a small network would spend units on both.

A writer fills ``out[:size]`` (it zeroes what it does not set). Networks store the name of their feature set,
so a model is read only with the encoding it learned.
"""

from __future__ import annotations

from numba import njit

from urgym import core
from urgym.rules import Rules

__all__ = [
    "FEATURE_SETS",
    "TACTICS_V1",
    "TACTICS_V2",
    "TD_V1",
    "feature_set_id",
    "feature_size",
    "write_value_features",
    "write_value_features_batch",
]

TD_V1 = 0
TACTICS_V1 = 1
TACTICS_V2 = 2
FEATURE_SETS = {"td-v1": TD_V1, "tactics-v1": TACTICS_V1, "tactics-v2": TACTICS_V2}
"""Feature sets by name (a model's file names its own)."""


def feature_set_id(name: str) -> int:
    """The id of feature set ``name``.

    Raises:
        ValueError: For a name that is not one of :data:`FEATURE_SETS`.
    """
    if name not in FEATURE_SETS:
        raise ValueError(f"unknown feature set {name!r}; known: {', '.join(FEATURE_SETS)}")
    return FEATURE_SETS[name]


def feature_size(rules: Rules, name: str) -> int:
    """How many numbers feature set ``name`` writes for ``rules``."""
    kind = feature_set_id(name)
    if kind == TD_V1:
        return core.feature_count(rules)
    size = 2 * rules.length + 4 * (rules.pieces + 1) + 8 * rules.max_roll
    return size + 4 * rules.max_roll if kind == TACTICS_V2 else size


@njit(cache=True)
def _write_tactics(state, geom, out, base, extra):
    """For each roll r = 1 .. R of the side to move in ``state``: its tactics at ``out[base + 4 (r - 1):]``.

    Those are [a legal move, a capture, a rosette, a bear-off]; when ``extra`` is not negative, also [the captured
    piece's progress, the legal moves over P] at ``out[extra + 2 (r - 1):]`` (``tactics-v2``). The core's move rules
    (:func:`urgym.core.can_move`, :func:`urgym.core.landing_flags`) on the occupancy masks, as
    :func:`urgym.core.legal_moves` and :func:`urgym.core.apply_move` read them, without building each move's position
    (this runs at every leaf of a search).
    """
    g = geom[0]
    length = g.length
    own, opp = core.own_mask(state), core.opp_mask(state)
    home = core.own_home(state)
    for r in range(1, g.max_roll + 1):
        legal = capture = rosette = off = taken = 0.0
        moves = 0
        for p in range(0, length + 1):
            if p == 0:
                if home == 0:
                    continue
            elif not (own >> (p - 1)) & 1:
                continue
            dest = p + r
            if not core.can_move(own, opp, p, dest, geom):
                continue
            legal = 1.0
            moves += 1
            flags = core.landing_flags(opp, dest, geom)
            if flags & core.SCORED:
                off = 1.0
            if flags & core.CAPTURE:
                capture = 1.0
                if extra >= 0:  # the captured piece's one bit: its position counts the zeros below it
                    victim = opp & g.opp_same_tile[dest]
                    taken = max(taken, (core.popcount((victim & -victim) - 1) + 1) / length)
            if flags & core.ROSETTE:
                rosette = 1.0
        at = base + 4 * (r - 1)
        out[at] = legal
        out[at + 1] = capture
        out[at + 2] = rosette
        out[at + 3] = off
        if extra >= 0:
            out[extra + 2 * (r - 1)] = taken
            out[extra + 2 * (r - 1) + 1] = moves / g.pieces


@njit(cache=True)
def write_value_features(state, geom, kind, out):
    """Encode ``state`` from the side to move with feature set ``kind`` into ``out``."""
    if kind == TD_V1:
        core.write_features(state, geom, out)
        return
    g = geom[0]
    length, pieces = g.length, g.pieces
    own, opp = core.own_mask(state), core.opp_mask(state)
    for p in range(1, length + 1):
        out[p - 1] = (own >> (p - 1)) & 1
        out[length + p - 1] = (opp >> (p - 1)) & 1
    base = 2 * length
    for i in range(4 * (pieces + 1)):
        out[base + i] = 0.0
    out[base + core.own_home(state)] = 1.0
    out[base + pieces + 1 + core.opp_home(state)] = 1.0
    out[base + 2 * (pieces + 1) + core.own_scored(state, pieces)] = 1.0
    out[base + 3 * (pieces + 1) + core.opp_scored(state, pieces)] = 1.0
    base += 4 * (pieces + 1)
    rolls = g.max_roll
    extra = base + 8 * rolls if kind == TACTICS_V2 else -1
    _write_tactics(state, geom, out, base, extra)
    _write_tactics(core.swap_sides(state), geom, out, base + 4 * rolls, extra + 2 * rolls if extra >= 0 else -1)


@njit(cache=True)
def write_value_features_batch(states, geom, kind, out):
    """:func:`write_value_features` of each of ``states`` into the rows of ``out``."""
    for i in range(states.shape[0]):
        write_value_features(states[i], geom, kind, out[i])
