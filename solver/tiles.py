"""The board as tiles, and exact position counts from it without enumerating.

Seen from the side to move, a position puts each side's on-board pieces at path positions, at most one piece on
any tile. A tile that the mover's path visits ``k`` times and the opponent's path ``m`` times has ``1 + k + m``
states (empty, one of the mover's pieces at one of its ``k`` path positions there, or one of the opponent's at one
of its ``m``). On a path that visits each tile once (finkel, blitz, masters, aseb) that is 2 or 3; on murray's and
skiriuk's, whose middle row is walked down and back, a tile can have 5 — the tile alone does not say how far its
piece has gone.

The number of ways to place ``a`` of the mover's pieces and ``b`` of the opponent's on the board is the coefficient
of ``x^a y^b`` in the product over tiles of ``1 + k x + m y``; pieces not on the board are at home or scored. So
the positions of a rule set (the solver's count: every combination, the side to move fixed) are counted exactly by
multiplying polynomials, in microseconds, where enumerating murray's 108 billion positions would take days.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from urgym import Rules


@dataclass(frozen=True)
class Tile:
    """One tile and the path positions (1-based) at which each side stands on it."""

    name: str
    own: tuple[int, ...]
    """The mover's path positions on this tile (light's path, as every position is seen by its mover)."""
    opp: tuple[int, ...]
    """The opponent's path positions on this tile (dark's path)."""

    @property
    def states(self) -> int:
        """Empty, or one of the mover's pieces at one of ``own``, or one of the opponent's at one of ``opp``."""
        return 1 + len(self.own) + len(self.opp)

    @property
    def polynomial(self) -> tuple[tuple[int, ...], ...]:
        """``1 + k x + m y`` as coefficients ``[a][b]`` of ``x^a y^b``: the ways to leave it empty or put a piece."""
        return ((1, len(self.opp)), (len(self.own), 0))


@dataclass(frozen=True)
class TileLayout:
    """Every tile either side's path visits, with both sides' path positions on it.

    In the order the tile layout of the index ranks them: by the mover's furthest path position on the tile,
    ascending (tiles off the mover's path first, then by name). The order sets the solver's sweep order, and this one
    needs fewer sweeps than board order (murray 3: 1,062 against 1,359; skiriuk 3: 864 against 1,105).
    """

    rules: Rules
    tiles: tuple[Tile, ...]

    @classmethod
    def of(cls, rules: Rules) -> TileLayout:
        """The layout of ``rules``."""
        own: dict[str, list[int]] = {}
        opp: dict[str, list[int]] = {}
        for p, tile in enumerate(rules.path, start=1):
            own.setdefault(tile, []).append(p)
        for p, tile in enumerate(rules.dark_path, start=1):
            opp.setdefault(tile, []).append(p)
        names = sorted(set(own) | set(opp), key=lambda t: (max(own.get(t, [0])), t))
        return cls(rules, tuple(Tile(t, tuple(own.get(t, ())), tuple(opp.get(t, ()))) for t in names))

    @cached_property
    def placements(self) -> tuple[tuple[int, ...], ...]:
        """``placements[a][b]``: the ways to put ``a`` of the mover's pieces and ``b`` of the opponent's on the board.

        Exact integers (the coefficients of the product of ``1 + k x + m y`` over tiles), up to the piece count.
        """
        n = self.rules.pieces
        ways: list[list[int]] = [[1]]
        for tile in self.tiles:
            ways = truncated_product(ways, tile.polynomial, n)
        return tuple(tuple(row) for row in ways)

    def layer_size(self, own_scored: int, opp_scored: int) -> int:
        """Positions with ``own_scored`` of the mover's pieces and ``opp_scored`` of the opponent's borne off."""
        n = self.rules.pieces
        if not (0 <= own_scored <= n and 0 <= opp_scored <= n):
            raise ValueError(f"scored counts must lie in 0..{n}, got ({own_scored}, {opp_scored})")
        ways = self.placements
        return sum(ways[a][b] for a in range(n - own_scored + 1) for b in range(n - opp_scored + 1))


def truncated_product(p: Sequence[Sequence[int]], q: Sequence[Sequence[int]], n: int) -> list[list[int]]:
    """The coefficients of ``p * q`` up to ``x^n y^n`` (``p[a][b]`` is the coefficient of ``x^a y^b``).

    Placement counts multiply this way: the ways to put pieces on two sets of tiles are the products of each set's
    ways, summed over how the pieces split between them. Exact Python integers.
    """
    out = [[0] * (n + 1) for _ in range(n + 1)]
    for a, row in enumerate(p[: n + 1]):
        for b, c in enumerate(row[: n + 1]):
            if c:
                for a2, row2 in enumerate(q[: n + 1 - a]):
                    for b2, c2 in enumerate(row2[: n + 1 - b]):
                        out[a + a2][b + b2] += int(c) * int(c2)
    return out


@dataclass(frozen=True)
class PositionCount:
    """The exact size of a rule set's position space, as the solver lays it out."""

    rules: Rules
    positions: int
    """Every position with its side to move fixed (both sides' pieces at home, on the board or scored)."""
    layers: dict[tuple[int, int], int]
    """Positions per layer (mover's scored pieces, opponent's scored pieces)."""

    @property
    def largest_pair(self) -> int:
        """The most positions the solver holds at once: a layer and its mirror, solved together."""
        return max(self.pair_size(x, y) for (x, y) in self.layers if x <= y)

    def pair_size(self, x: int, y: int) -> int:
        """Positions of the layer pair {(x, y), (y, x)}."""
        return self.layers[x, y] + (self.layers[y, x] if x != y else 0)


def count_positions(rules: Rules) -> PositionCount:
    """The exact position count of ``rules`` (any rule set and piece count), without enumerating a position."""
    layout = TileLayout.of(rules)
    n = rules.pieces
    layers = {(x, y): layout.layer_size(x, y) for x in range(n + 1) for y in range(n + 1)}
    return PositionCount(rules, sum(layers.values()), layers)
