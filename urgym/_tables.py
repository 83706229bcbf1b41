"""Arrays the numba kernels read a rule set from, built once per rule set."""

from __future__ import annotations

from functools import cache

import numpy as np

from urgym import _kernels as K
from urgym.rules import Rules


@cache
def geometry(rules: Rules) -> np.ndarray:
    """The int64 geometry array of ``rules`` (layout: the ``G_*`` offsets of :mod:`urgym._kernels`)."""
    g = np.zeros(K.GEOMETRY_SIZE, dtype=np.int64)
    length = rules.length
    g[K.G_LENGTH] = length
    g[K.G_PIECES] = rules.pieces
    g[K.G_SAFE_ROSETTES] = rules.safe_rosettes
    g[K.G_ROSETTE_EXTRA] = rules.rosette_extra_roll
    g[K.G_CAPTURE_EXTRA] = rules.capture_extra_roll
    g[K.G_MAX_ROLL] = rules.max_roll
    own_tiles, opp_tiles = rules.path, rules.dark_path
    for dest in range(1, length + 1):
        tile = own_tiles[dest - 1]
        g[K.G_OWN_SAME_TILE + dest] = positions_mask(p for p, t in enumerate(own_tiles, 1) if t == tile)
        g[K.G_OPP_SAME_TILE + dest] = positions_mask(p for p, t in enumerate(opp_tiles, 1) if t == tile)
        g[K.G_ROSETTE + dest] = tile in rules.rosettes
    return g


@cache
def roll_cumulative(rules: Rules) -> np.ndarray:
    """Cumulative roll probabilities, the last forced to exactly 1 so sampling always ends."""
    cumulative = np.cumsum(np.asarray(rules.roll_probabilities, dtype=np.float64))
    cumulative[-1] = 1.0
    return cumulative


def positions_mask(positions) -> int:
    """Bit p-1 set for each path position p."""
    mask = 0
    for p in positions:
        mask |= 1 << (p - 1)
    return mask
