"""Encodings of a position for value networks, from the side to move: the inputs of every after-state network.

Two feature sets, each a numba writer over the packed state (:mod:`urgym.core`), chosen by name:

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

A writer fills ``out[:size]`` (it zeroes what it does not set). Networks store the name of their feature set,
so a model is read only with the encoding it learned.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from urgym import core
from urgym.rules import Rules

__all__ = ["FEATURE_SETS", "TACTICS_V1", "TD_V1", "feature_set_id", "feature_size", "write_value_features",
           "write_value_features_batch"]

TD_V1 = 0
TACTICS_V1 = 1
FEATURE_SETS = {"td-v1": TD_V1, "tactics-v1": TACTICS_V1}
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
    return 2 * rules.length + 4 * (rules.pieces + 1) + 8 * rules.max_roll


@njit(cache=True)
def _write_tactics(state, geom, moves, out, base):
    """For each roll r = 1 .. R of the side to move in ``state``: [a legal move, a capture, a rosette, a bear-off]
    at ``out[base + 4 (r - 1):]``."""
    g = geom[0]
    for r in range(1, g.max_roll + 1):
        at = base + 4 * (r - 1)
        n = core.legal_moves(state, r, geom, moves)
        out[at] = 1.0 if n > 0 else 0.0
        out[at + 1] = 0.0
        out[at + 2] = 0.0
        out[at + 3] = 0.0
        for k in range(n):
            _, flags = core.apply_move(state, r, moves[k], geom)
            if flags & core.CAPTURE:
                out[at + 1] = 1.0
            if flags & core.ROSETTE:
                out[at + 2] = 1.0
            if flags & core.SCORED:
                out[at + 3] = 1.0


@njit(cache=True)
def write_value_features(state, geom, kind, moves, out):
    """Encode ``state`` from the side to move with feature set ``kind`` into ``out`` (``moves``: a scratch array of
    :data:`urgym.core.MAX_MOVES` ints)."""
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
    _write_tactics(state, geom, moves, out, base)
    _write_tactics(core.swap_sides(state), geom, moves, out, base + 4 * g.max_roll)


@njit(cache=True)
def write_value_features_batch(states, geom, kind, out):
    """:func:`write_value_features` of each of ``states`` into the rows of ``out``."""
    moves = np.zeros(core.MAX_MOVES, dtype=np.int64)
    for i in range(states.shape[0]):
        write_value_features(states[i], geom, kind, moves, out[i])
