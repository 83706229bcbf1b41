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
"""

from __future__ import annotations

from math import comb
from typing import NamedTuple

import numpy as np
from numba import njit

from urgym import Position, Rules, core

MAX_INDEX_PATH = 20  # the per-mask tables have 2^L entries

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


class PositionIndex:
    """Bijection between the positions of a rule set and 0..size-1, both directions by arithmetic.

    Raises:
        ValueError: For a path that visits a tile twice (murray, skiriuk) or is longer than 20.
    """

    def __init__(self, rules: Rules) -> None:
        if rules.visits_tiles_twice:
            raise ValueError(
                f"the dense index needs a path that visits each tile once; {rules.name!r} visits "
                "some tiles twice (the solver supports finkel, blitz, masters, aseb and custom "
                "single-visit paths)"
            )
        if rules.length > MAX_INDEX_PATH:
            raise ValueError(
                f"the dense index supports paths of at most {MAX_INDEX_PATH} tiles, {rules.name!r} has {rules.length}"
            )
        self.rules = rules
        shared = rules.shared_positions
        self.private_positions = tuple(p for p in range(1, rules.length + 1) if p not in shared)
        self.shared_positions = shared
        n, p, s = rules.pieces, len(self.private_positions), len(shared)
        self.pieces, self.n_private, self.n_war = n, p, s
        info, war_rank, war_classes = self._mask_tables()
        war_own, war_opp, class_start = self._war_masks(war_classes)
        self.pairs = _pairs(n)
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


@njit(cache=True)
def rank_state(state, index):
    """Index of a packed position (see :class:`PositionIndex`; ``index`` is its :class:`IndexTables`)."""
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


@njit(cache=True)
def unrank_in_block(local, b, index):
    """The packed position (light to move) at rank ``local`` within block ``b`` (a row of ``index.blocks``)."""
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
