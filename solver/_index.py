"""Dense O(1) ranking of positions in self/other form.

A position (mover's view) splits each side's on-board pieces into private tiles (on one path only) and
war-zone tiles (on both paths). Positions are grouped in *blocks* by

    (own scored, opp scored, a = own private, b = own war, c = opp war, d = opp private)

and, within a block, ranked as ``(war_rank * C(P, a) + own_private_rank) * C(P, d) + opp_private_rank``,
where the war zone is read as a base-3 number (empty / own / opponent per tile) ranked within its class
(b, c), and private subsets by their colex rank. Every lookup is a table read: a per-mask table gives a
side's private rank, counts and war-zone digits; a 3^S table ranks the war zone; a block table gives
the offset. Pieces at home follow from the counts, so the layout is dense: the index runs over every
combinatorially valid position (137,913,936 for finkel, as published).

Blocks of one *pair* of layers {(x, y), (y, x)} are stored together: moves that score nothing stay in
the pair (the turn passes to the other layer), so the solver solves one pair at a time.

Paths that visit a tile twice (murray, skiriuk) or are longer than 20 tiles use the *tile* layout instead
(``kind == KIND_TILES``): a tile there has up to five states (empty, the mover's piece on its first or second
pass, the opponent's on its first or second), so a position is read tile by tile (see :mod:`urgym.solver.tiles`).
The tiles, ordered by the mover's furthest path position on them (the order that needs the fewest sweeps of the
orders tried), are cut into groups of at most 2^15 states; a per-byte table of each side's path mask adds up every
group's state code at once (four 16-bit codes to a word), and a position's rank within its block
``(own scored, opp scored, own on board A, opp on board B)`` is, group after group, the positions of the group's
earlier (a, b) classes, plus its rank within its class times the ways to place the rest, plus the rest's rank.
Murray's codes (5^7 3^13 states) never form one number, and every lookup stays a table read.
"""

from __future__ import annotations

from math import comb
from typing import NamedTuple

import numpy as np
from numba import njit
from urgym.solver.tiles import Tile, TileLayout, truncated_product

from urgym import Position, Rules, core

MAX_INDEX_PATH = 20  # the per-mask tables have 2^L entries
TILE_LAYOUT_VERSION = 2
"""Version of the tile layout's order of positions (2: tiles by the mover's furthest path position on them; 1, in
development before urgym 0.6: by name). A table records its index's :attr:`PositionIndex.layout`, and one made
with another order is refused, never read in the wrong order."""
KIND_DENSE, KIND_TILES = 0, 1  # IndexTables.kind: single-visit paths up to 20 tiles, or the tile layout
_GROUP_STATES = 1 << 15  # a tile group's codes fit 15 bits, four to an int64 word with no sign bit touched
_MAX_GROUPS = 8  # two words

# INFO[mask] fields (int64): private rank, private count, war count, own war digits, opp war digits.
_PRIV_RANK_MASK = 255
_PRIV_COUNT_SHIFT = 8
_WAR_COUNT_SHIFT = 12
_OWN_TRIT_SHIFT = 16
_OPP_TRIT_SHIFT = 40
_TRIT_MASK = (1 << 24) - 1

# Columns of PositionIndex.blocks.
B_START, B_END, B_OWN_SCORED, B_OPP_SCORED, B_A, B_B, B_C, B_D, B_WAR_CLASS = range(9)


class IndexTables(NamedTuple):
    """A :class:`PositionIndex` as the numba kernels take it: one bundle, passed whole.

    Ranking reads ``info``, ``war_rank``, ``block_offset`` and ``choose_private``; unranking reads
    ``private_masks``, ``war_own`` and ``war_opp``; ``blocks`` holds one row per block (columns ``B_*``).
    """

    pieces: int  # N
    n_private: int  # P: private path positions
    n_war: int  # S: war-zone (shared) path positions
    info: np.ndarray  # int64[2^L]: per position mask, private rank, counts and war-zone digits (see INFO fields)
    war_rank: np.ndarray  # int64[3^S]
    block_offset: np.ndarray  # int64[(N+1)^2 (P+1)^2 (S+1)^2], -1 where empty
    choose_private: np.ndarray  # int64[P+1]: C(P, k)
    private_masks: np.ndarray  # int64[(P+1) 2^P]: see _private_masks
    war_own: np.ndarray  # int64[3^S]: own position mask of each war code, grouped by class in rank order
    war_opp: np.ndarray  # int64[3^S]: the opponent's position mask (on its own path) of the same codes
    blocks: np.ndarray  # int64[blocks, 9]: PositionIndex.blocks
    # The tile layout (kind KIND_TILES); empty for KIND_DENSE. G groups, C codes in the largest group.
    kind: int = KIND_DENSE
    tile_own: np.ndarray = np.zeros((0, 256, 2), dtype=np.int64)  # [byte of own mask, value, word]: group codes
    tile_opp: np.ndarray = np.zeros((0, 256, 2), dtype=np.int64)  # the same for the opponent's mask
    group_class: np.ndarray = np.zeros((0, 1), dtype=np.int64)  # [g, code]: a | b << 4 | rank in class << 8
    group_codes: np.ndarray = np.zeros((0, 1), dtype=np.int64)  # [g, class_start + rank]: the code
    group_own: np.ndarray = np.zeros((0, 1), dtype=np.int64)  # [g, code]: the mover's path mask of the code
    group_opp: np.ndarray = np.zeros((0, 1), dtype=np.int64)  # [g, code]: the opponent's
    class_start: np.ndarray = np.zeros((0, 1, 1), dtype=np.int64)  # [g, a, b]: first slot of class (a, b)
    class_count: np.ndarray = np.zeros((0, 1, 1), dtype=np.int64)  # [g, a, b]: codes of class (a, b)
    ways: np.ndarray = np.zeros((1, 1, 1), dtype=np.int64)  # [g, A, B]: placements on groups g.. (ways[G] = [[1]])
    class_offset: np.ndarray = np.zeros((0, 1, 1, 1, 1), dtype=np.int64)  # [g, A, B, a, b]: see _tile_tables


class PositionIndex:
    """Bijection between the positions of a rule set and 0..size-1, both directions by arithmetic.

    Single-visit paths of up to 20 tiles take the dense layout; others (murray, skiriuk) the tile layout, which
    ``tiles=True`` also gives any rule set (the tests check the two layouts against each other).
    """

    def __init__(self, rules: Rules, tiles: bool = False) -> None:
        self.rules = rules
        self.pieces = rules.pieces
        self.pairs = _pairs(rules.pieces)
        if tiles or rules.visits_tiles_twice or rules.length > MAX_INDEX_PATH:
            self.kind = KIND_TILES
            self.layout = f"tiles-{TILE_LAYOUT_VERSION}"
            self.tables = _tile_tables(rules, self.pairs)
            self.blocks = self.tables.blocks
            self.pair_ranges = _pair_ranges(self.blocks, self.pairs)
            self.size = int(self.pair_ranges[-1][1])
            self.layer_sizes = self._layer_sizes()
            return
        self.kind = KIND_DENSE
        self.layout = "dense"
        shared = rules.shared_positions
        self.private_positions = tuple(p for p in range(1, rules.length + 1) if p not in shared)
        self.shared_positions = shared
        n, p, s = rules.pieces, len(self.private_positions), len(shared)
        self.n_private, self.n_war = p, s
        info, war_rank, war_classes = self._mask_tables()
        war_own, war_opp, class_start = self._war_masks(war_classes)
        block_offset, self.pair_ranges, self.blocks = self._layout(war_classes, class_start)
        self.size = int(self.pair_ranges[-1][1])
        self.layer_sizes = self._layer_sizes()
        self.tables = IndexTables(
            pieces=n,
            n_private=p,
            n_war=s,
            info=info,
            war_rank=war_rank,
            block_offset=block_offset,
            choose_private=np.array([comb(p, k) for k in range(p + 1)], dtype=np.int64),
            private_masks=_private_masks(self.private_positions),
            war_own=war_own,
            war_opp=war_opp,
            blocks=self.blocks,
        )

    # --- tables ----------------------------------------------------------------------------------------
    def _mask_tables(self):
        rules = self.rules
        length = rules.length
        war_tile = {rules.path[p - 1]: k for k, p in enumerate(self.shared_positions)}
        masks = np.arange(1 << length, dtype=np.int64)
        priv_rank = np.zeros_like(masks)
        priv_count = np.zeros_like(masks)
        war_count = np.zeros_like(masks)
        own_trit = np.zeros_like(masks)
        opp_trit = np.zeros_like(masks)
        for p in range(1, length + 1):
            bit = (masks >> (p - 1)) & 1
            if p in self.private_positions:
                i = self.private_positions.index(p)
                # colex rank: the j-th set bit (0-based) at index i adds C(i, j + 1)
                priv_rank += bit * np.array([comb(i, j + 1) for j in range(length + 1)])[priv_count]
                priv_count += bit
            else:
                war_count += bit
                own_trit += bit * 3 ** war_tile[rules.path[p - 1]]
                opp_trit += bit * 2 * 3 ** war_tile[rules.dark_path[p - 1]]
        info = (
            priv_rank
            | (priv_count << _PRIV_COUNT_SHIFT)
            | (war_count << _WAR_COUNT_SHIFT)
            | (own_trit << _OWN_TRIT_SHIFT)
            | (opp_trit << _OPP_TRIT_SHIFT)
        )
        s = self.n_war
        codes = np.arange(3**s, dtype=np.int64)
        digits = (codes[:, None] // 3 ** np.arange(s)) % 3
        b = (digits == 1).sum(axis=1)
        c = (digits == 2).sum(axis=1)
        war_rank = np.zeros(3**s, dtype=np.int64)
        war_classes = {}
        for bb in range(s + 1):
            for cc in range(s + 1 - bb):
                members = codes[(b == bb) & (c == cc)]
                war_rank[members] = np.arange(len(members))
                war_classes[bb, cc] = members
        return info, war_rank, war_classes

    def _war_masks(self, war_classes):
        """Own and opponent position masks of every war code, class by class, and each class's start."""
        rules = self.rules
        codes = np.concatenate([war_classes[key] for key in sorted(war_classes)])
        class_start, offset = {}, 0
        for key in sorted(war_classes):
            class_start[key] = offset
            offset += len(war_classes[key])
        own = np.zeros(len(codes), dtype=np.int64)
        opp = np.zeros(len(codes), dtype=np.int64)
        dark_position = {t: q for q, t in enumerate(rules.dark_path, 1)}
        for k, p in enumerate(self.shared_positions):
            digit = (codes // 3**k) % 3
            own |= (digit == 1).astype(np.int64) << (p - 1)
            opp |= (digit == 2).astype(np.int64) << (dark_position[rules.path[p - 1]] - 1)
        return own, opp, class_start

    def _layout(self, war_classes, class_start):
        n, p, s = self.pieces, self.n_private, self.n_war
        block_offset = np.full((n + 1, n + 1, p + 1, s + 1, s + 1, p + 1), -1, dtype=np.int64)
        pair_ranges, blocks = [], []
        offset = 0
        for x, y in self.pairs:
            start = offset
            for so, sp in ((x, y), (y, x)) if x != y else ((x, y),):
                for a in range(p + 1):
                    for bb in range(s + 1):
                        if a + bb > n - so:
                            continue
                        for cc in range(s + 1 - bb):
                            for d in range(p + 1):
                                if cc + d > n - sp:
                                    continue
                                size = comb(p, a) * len(war_classes[bb, cc]) * comb(p, d)
                                block_offset[so, sp, a, bb, cc, d] = offset
                                blocks.append((offset, offset + size, so, sp, a, bb, cc, d, class_start[bb, cc]))
                                offset += size
            pair_ranges.append((start, offset))
        return block_offset.ravel(), pair_ranges, np.array(blocks, dtype=np.int64)

    # --- public ----------------------------------------------------------------------------------------
    def rank(self, position: Position) -> int:
        """The index of a position (seen from its side to move)."""
        if position.rules != self.rules:
            raise ValueError(
                f"position of rule set {position.rules.describe()!r} given to an index of {self.rules.describe()!r}"
            )
        return int(rank_state(position.code, self.tables))

    def unrank(self, index: int, turn: str = "light") -> Position:
        """The position with this index, with ``turn`` as the side to move."""
        if not 0 <= index < self.size:
            raise ValueError(f"index {index} out of range 0..{self.size - 1}")
        # Blocks are few (thousands) and ordered: the first whose end passes the index holds it.
        block = int(np.argmax(self.blocks[:, B_END] > index))
        code = unrank_in_block(index - int(self.blocks[block, B_START]), block, self.tables)
        if turn == "dark":
            code |= 1 << core.TURN_SHIFT
        return Position.from_code(self.rules, code)

    def _layer_sizes(self) -> dict[tuple[int, int], int]:
        """Positions per layer (own scored, opponent scored)."""
        sizes: dict[tuple[int, int], int] = {}
        for row in self.blocks:
            key = (int(row[B_OWN_SCORED]), int(row[B_OPP_SCORED]))
            sizes[key] = sizes.get(key, 0) + int(row[B_END] - row[B_START])
        return sizes


def _tile_groups(layout: TileLayout) -> list[list[Tile]]:
    """The tiles cut, in the layout's order, into groups of at most 2^15 states (a code each)."""
    groups: list[list[Tile]] = [[]]
    states = 1
    for tile in layout.tiles:
        if states * tile.states > _GROUP_STATES:
            groups.append([])
            states = 1
        groups[-1].append(tile)
        states *= tile.states
    if len(groups) > _MAX_GROUPS:
        raise ValueError(f"{layout.rules.name!r} has too many tile states for the tile index ({len(groups)} groups)")
    return groups


def _group_codes(group: list[Tile]) -> tuple[np.ndarray, ...]:
    """Every code of a group: pieces of each side on it (a, b) and their path masks; and each tile's digit weight.

    A tile's digit is 0 when empty, 1 + i for the mover's piece at its i-th path position there, 1 + k + j for the
    opponent's at its j-th; the code is the digits read in mixed radix, the group's first tile the lowest digit.
    """
    weights = np.cumprod([1] + [t.states for t in group])
    codes = np.arange(weights[-1], dtype=np.int64)
    own_count = np.zeros_like(codes)
    opp_count = np.zeros_like(codes)
    own_mask = np.zeros_like(codes)
    opp_mask = np.zeros_like(codes)
    for t, tile in enumerate(group):
        digit = (codes // weights[t]) % tile.states
        for i, p in enumerate(tile.own):
            here = digit == 1 + i
            own_count += here
            own_mask |= here.astype(np.int64) << (p - 1)
        for j, q in enumerate(tile.opp):
            here = digit == 1 + len(tile.own) + j
            opp_count += here
            opp_mask |= here.astype(np.int64) << (q - 1)
    return own_count, opp_count, own_mask, opp_mask, weights[:-1]


def _tile_tables(rules: Rules, pairs: list[tuple[int, int]]) -> IndexTables:
    """The :class:`IndexTables` of the tile layout (see the module docstring)."""
    layout = TileLayout.of(rules)
    groups = _tile_groups(layout)
    n, g_count = rules.pieces, len(groups)
    width = max(int(np.prod([t.states for t in group])) for group in groups)
    group_class = np.zeros((g_count, width), dtype=np.int64)
    group_codes = np.zeros((g_count, width), dtype=np.int64)
    group_own = np.zeros((g_count, width), dtype=np.int64)
    group_opp = np.zeros((g_count, width), dtype=np.int64)
    class_start = np.zeros((g_count, n + 1, n + 1), dtype=np.int64)
    class_count = np.zeros((g_count, n + 1, n + 1), dtype=np.int64)
    chunks = (rules.length + 7) // 8
    tile_own = np.zeros((chunks, 256, 2), dtype=np.int64)
    tile_opp = np.zeros((chunks, 256, 2), dtype=np.int64)
    byte = np.arange(256)
    for g, group in enumerate(groups):
        a, b, own_mask, opp_mask, weights = _group_codes(group)
        size = len(a)
        group_own[g, :size], group_opp[g, :size] = own_mask, opp_mask
        order = np.lexsort((np.arange(size), b, a))  # classes (a, b) in order, codes ascending within each
        slot = 0
        for aa in range(n + 1):
            for bb in range(n + 1):
                members = order[(a[order] == aa) & (b[order] == bb)]
                class_start[g, aa, bb], class_count[g, aa, bb] = slot, len(members)
                group_codes[g, slot : slot + len(members)] = members
                group_class[g, members] = aa | bb << 4 | np.arange(len(members)) << 8
                slot += len(members)
        shift = 16 * (g % 4)
        for t, tile in enumerate(group):
            for i, p in enumerate(tile.own):
                tile_own[(p - 1) // 8, :, g // 4] += ((byte >> ((p - 1) % 8)) & 1) * ((1 + i) * weights[t]) << shift
            for j, q in enumerate(tile.opp):
                digit = 1 + len(tile.own) + j
                tile_opp[(q - 1) // 8, :, g // 4] += ((byte >> ((q - 1) % 8)) & 1) * (digit * weights[t]) << shift
    ways, class_offset = _tile_ways(class_count, n)
    blocks, block_offset = _tile_blocks(ways[0], n, pairs)
    empty = np.zeros(0, dtype=np.int64)
    return IndexTables(
        n, 0, 0, empty, empty, block_offset, empty, empty, empty, empty, blocks,
        KIND_TILES, tile_own, tile_opp, group_class, group_codes, group_own, group_opp,
        class_start, class_count, ways, class_offset,
    )  # fmt: skip


def _tile_ways(class_count: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The placements of A and B pieces on groups g.. (``ways[g, A, B]``), and the class offsets.

    ``class_count[g]`` is group g's placement polynomial, so ``ways[g]`` is the product of those of groups g...
    ``class_offset[g, A, B, a, b]``: positions with A and B pieces on groups g.. whose group g holds a class before
    (a, b), in (a, b) order.
    """
    g_count = len(class_count)
    ways = [truncated_product([[1]], [[1]], n)]  # groups g.., from the last back; none: one way to place no piece
    offset = np.zeros((g_count, n + 1, n + 1, n + 1, n + 1), dtype=np.int64)
    for g in range(g_count - 1, -1, -1):
        rest = ways[0]
        for big_a, big_b in np.ndindex(n + 1, n + 1):
            total = 0  # Python integers: exact before the check that they fit
            for a, b in np.ndindex(big_a + 1, big_b + 1):
                offset[g, big_a, big_b, a, b] = total  # a prefix of the sum that makes ways[g][big_a][big_b]
                total += int(class_count[g, a, b]) * rest[big_a - a][big_b - b]
        ways.insert(0, truncated_product(class_count[g].tolist(), rest, n))
    if ways[0][n][n] >= 2**62:
        raise ValueError("the rule set has too many positions for a 64-bit index")
    return np.array(ways, dtype=np.int64), offset


def _tile_blocks(placements: np.ndarray, n: int, pairs: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Blocks (so, sp, A on board, B on board), pair after pair, and their offsets by (so, sp, A, B)."""
    block_offset = np.full((n + 1,) * 4, -1, dtype=np.int64)
    rows, offset = [], 0
    for x, y in pairs:
        for so, sp in ((x, y), (y, x)) if x != y else ((x, y),):
            for a in range(n - so + 1):
                for b in range(n - sp + 1):
                    size = int(placements[a, b])
                    block_offset[so, sp, a, b] = offset
                    rows.append((offset, offset + size, so, sp, a, b, 0, 0, 0))
                    offset += size
    return np.array(rows, dtype=np.int64), block_offset.ravel()


def _pair_ranges(blocks: np.ndarray, pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Each pair's index range, from blocks laid out pair after pair."""
    ranges, row = [], 0
    for x, y in pairs:
        start = int(blocks[row, B_START])
        while row < len(blocks) and {int(blocks[row, B_OWN_SCORED]), int(blocks[row, B_OPP_SCORED])} == {x, y}:
            row += 1
        ranges.append((start, int(blocks[row - 1, B_END])))
    return ranges


def _private_masks(private_positions: tuple[int, ...]) -> np.ndarray:
    """Position masks of private subsets: row k * 2^P + r is the subset of size k with colex rank r."""
    p = len(private_positions)
    table = np.zeros((p + 1) * (1 << p), dtype=np.int64)
    for pattern in range(1 << p):
        bits = [i for i in range(p) if pattern >> i & 1]
        rank = sum(comb(i, j + 1) for j, i in enumerate(bits))
        table[len(bits) * (1 << p) + rank] = sum(1 << (private_positions[i] - 1) for i in bits)
    return table


def _pairs(n: int) -> list[tuple[int, int]]:
    """Layer pairs (x <= y scored), most scored first: the order the solver needs them in."""
    pairs = [(x, y) for x in range(n + 1) for y in range(x, n + 1)]
    return sorted(pairs, key=lambda xy: (-(xy[0] + xy[1]), xy))


@njit(cache=True, inline="always")  # inlined: a call would copy the bundle and count references to all its arrays
def rank_state(state, index):
    """Index of a packed position (see :class:`PositionIndex`; ``index`` is its :class:`IndexTables`)."""
    if index.kind == KIND_TILES:
        return _rank_tiles(state, index)
    n, p, s = index.pieces, index.n_private, index.n_war
    info, war_rank, choose_private = index.info, index.war_rank, index.choose_private
    io = info[core.own_mask(state)]
    ip = info[core.opp_mask(state)]
    a = (io >> _PRIV_COUNT_SHIFT) & 15
    b = (io >> _WAR_COUNT_SHIFT) & 15
    d = (ip >> _PRIV_COUNT_SHIFT) & 15
    c = (ip >> _WAR_COUNT_SHIFT) & 15
    so = n - core.own_home(state) - a - b
    sp = n - core.opp_home(state) - c - d
    war = war_rank[((io >> _OWN_TRIT_SHIFT) & _TRIT_MASK) + ((ip >> _OPP_TRIT_SHIFT) & _TRIT_MASK)]
    block = (((((so * (n + 1) + sp) * (p + 1) + a) * (s + 1) + b) * (s + 1) + c) * (p + 1)) + d
    rank_in_block = (war * choose_private[a] + (io & _PRIV_RANK_MASK)) * choose_private[d] + (ip & _PRIV_RANK_MASK)
    return index.block_offset[block] + rank_in_block


@njit(cache=True, inline="always")
def unrank_in_block(local, b, index):
    """The packed position (light to move) at rank ``local`` within block ``b`` (a row of ``index.blocks``)."""
    if index.kind == KIND_TILES:
        return _unrank_tiles(local, b, index)
    n, p = index.pieces, index.n_private
    choose_private, private_masks, war_own, war_opp = (
        index.choose_private,
        index.private_masks,
        index.war_own,
        index.war_opp,
    )
    block = index.blocks[b]
    a, d = block[B_A], block[B_D]
    opp_private = local % choose_private[d]
    rest = local // choose_private[d]
    own_private = rest % choose_private[a]
    war = block[B_WAR_CLASS] + rest // choose_private[a]
    own = private_masks[a * (1 << p) + own_private] | war_own[war]
    opp = private_masks[d * (1 << p) + opp_private] | war_opp[war]
    own_h = n - block[B_OWN_SCORED] - a - block[B_B]
    opp_h = n - block[B_OPP_SCORED] - block[B_C] - d
    return core.pack(own, opp, own_h, opp_h, 0)


@njit(cache=True, inline="always")
def _rank_tiles(state, index):
    """:func:`rank_state` in the tile layout."""
    own, opp = core.own_mask(state), core.opp_mask(state)
    low = high = 0  # groups 0-3 and 4-7, 16 bits each
    chunk, o, q = 0, own, opp
    while o or q:
        low += index.tile_own[chunk, o & 255, 0] + index.tile_opp[chunk, q & 255, 0]
        high += index.tile_own[chunk, o & 255, 1] + index.tile_opp[chunk, q & 255, 1]
        o, q, chunk = o >> 8, q >> 8, chunk + 1
    n = index.pieces
    big_a, big_b = core.popcount(own), core.popcount(opp)
    so, sp = n - core.own_home(state) - big_a, n - core.opp_home(state) - big_b
    rank = index.block_offset[((so * (n + 1) + sp) * (n + 1) + big_a) * (n + 1) + big_b]
    for g in range(index.group_class.shape[0]):
        code = ((low if g < 4 else high) >> (16 * (g & 3))) & 0xFFFF
        cls = index.group_class[g, code]
        a, b = cls & 15, (cls >> 4) & 15
        rank += index.class_offset[g, big_a, big_b, a, b] + (cls >> 8) * index.ways[g + 1, big_a - a, big_b - b]
        big_a, big_b = big_a - a, big_b - b
    return rank


@njit(cache=True, inline="always")
def _unrank_tiles(local, b, index):
    """:func:`unrank_in_block` in the tile layout: group by group, the class holding ``local``, then the code."""
    block = index.blocks[b]
    n, so, sp, big_a, big_b = index.pieces, block[B_OWN_SCORED], block[B_OPP_SCORED], block[B_A], block[B_B]
    own_h, opp_h = n - so - big_a, n - sp - big_b
    own = opp = 0
    for g in range(index.group_class.shape[0]):
        found_a = found_b = 0
        for a in range(big_a + 1):
            for bb in range(big_b + 1):
                holds = index.class_count[g, a, bb] and index.ways[g + 1, big_a - a, big_b - bb]
                if holds and index.class_offset[g, big_a, big_b, a, bb] <= local:
                    found_a, found_b = a, bb  # the last class starting at or before local holds it
        local -= index.class_offset[g, big_a, big_b, found_a, found_b]
        rest = index.ways[g + 1, big_a - found_a, big_b - found_b]
        code = index.group_codes[g, index.class_start[g, found_a, found_b] + local // rest]
        local %= rest
        own |= index.group_own[g, code]
        opp |= index.group_opp[g, code]
        big_a, big_b = big_a - found_a, big_b - found_b
    return core.pack(own, opp, own_h, opp_h, 0)
