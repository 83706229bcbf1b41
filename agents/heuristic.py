"""The heuristic "gain" of Raposo & Lamont (2023), §4.3-4.4 and Appendix C, as an agent.

A turn is a sequence of moves: a move that lands on a rosette earns another roll, so a sequence such as
"BA" means: move piece B, and if it reaches a rosette, move piece A with the next roll. For a sequence,
summing over the roll sequences that play it legally (probability P(s), a forbidden move drops the roll
sequence, as does one that would need more moves than the sequence names),

    W = sum_s P(s) * (tiles walked in s)                                        walking, Eqs. 8-10
    A = sum_s P(s) * n_a   over roll sequences that capture a piece on tile n_a   attack, Eq. 11
    C = -sum_(i, n_c) n_c * sum_(p, s') P(s')                                   capture, Eq. 12

where in C, (i, n_c) runs over the shared, non-rosette tiles the sequence's i-th move can end its turn on,
and the inner sum runs over the opponent's pieces p and roll sequences s' (a piece that reaches its own
rosette rolls again) that would capture a piece there on the opponent's next turn. The gain is
G = W + A + C. In play the roll is known: the first roll is fixed (probability 1), and the agent plays
the first move of the sequence with the highest gain.

Which opponent pieces threaten: ``threats="all"`` (the default) counts every opponent piece on the board
the sequence leaves, a piece it captured included. The paper's worked example (Figure 8, Tables 3 and 6)
counts only the pieces that stood at home or on the opponent's private tiles when the turn began: it leaves
out a grey piece on the shared tile just behind black's piece, and a captured piece coming back.
``threats="paper"`` follows the example, which is how the tests reproduce its tables.
"""

from __future__ import annotations

import os
import string
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from numba import njit
from urgym.agents.base import Agent

from urgym import Position, Rules, core
from urgym.batch import Decisions
from urgym.checks import integer
from urgym.core import geometry

__all__ = ["THREAT_MODELS", "GainAgent", "GainTable", "SequenceGain", "gain_table"]


@dataclass(frozen=True)
class SequenceGain:
    """The gain of one sequence of moves, with its three terms."""

    name: str
    """Letters of the pieces moved, in order; pieces are lettered A, B, ... from the least advanced."""
    sources: tuple[int, ...]
    """Each moved piece's path position at the start of the turn (0: at home)."""
    walking: float
    attack: float
    capture: float

    @property
    def total(self) -> float:
        """G = W + A + C."""
        return self.walking + self.attack + self.capture


@dataclass(frozen=True)
class GainTable:
    """Every sequence's gain in a position, and the pieces they are made of."""

    position: Position
    roll: int | None
    pieces: tuple[int, ...]
    """Path position of each lettered piece at the start of the turn (A first)."""
    sequences: tuple[SequenceGain, ...]

    def __getitem__(self, name: str) -> SequenceGain:
        for sequence in self.sequences:
            if sequence.name == name:
                return sequence
        raise KeyError(f"no sequence {name!r}; sequences: {', '.join(s.name for s in self.sequences)}")

    def best(self) -> SequenceGain:
        """The sequence with the highest gain (the least advanced first piece on ties)."""
        return max(self.sequences, key=lambda s: (s.total, -s.sources[0]))


THREAT_MODELS = ("all", "paper")


def gain_table(position: Position, roll: int | None = None, max_moves: int = 2, threats: str = "all") -> GainTable:
    """The gain of every sequence of up to ``max_moves`` moves the side to move can play this turn.

    Args:
        position: A position of a game in progress.
        roll: The roll already thrown, which fixes the first move's roll; ``None`` averages over every
            roll, as the paper's analysis does.
        max_moves: Moves per sequence (each after the first needs a rosette); the paper uses 2.
        threats: Which opponent pieces the capture term counts: ``"all"`` or ``"paper"`` (see the module).
    """
    if threats not in THREAT_MODELS:
        raise ValueError(f"unknown threats {threats!r}; choose one of {', '.join(THREAT_MODELS)}")
    if position.is_over:
        raise ValueError("the game is over: there is no move to evaluate")
    if not isinstance(max_moves, int) or max_moves < 1:
        raise ValueError(f"max_moves must be a positive integer, got {max_moves!r}")
    if roll is not None and roll not in position.rules.rolls:
        raise ValueError(f"roll {roll!r} is impossible; rolls of {position.rules.name}: {position.rules.rolls}")
    rules = position.rules
    setup = _gain_setup(rules, max_moves, threats == "paper")
    state = position.code
    first_roll = -1 if roll is None else roll
    pieces = _lettered_pieces(state, max_moves, setup.geom)
    work = _workspace(max_moves, rules.length)
    sequences = []
    rows, first, last = setup.tables
    home = min(position.home(position.turn), max_moves)
    for order in rows[first[home, len(pieces)] : last[home, len(pieces)]]:
        if roll is not None and not _can_play(state, roll, pieces[order[0]], setup.geom):
            continue
        walking, attack, capture = _sequence_gain(state, pieces, order, first_roll, setup, work)
        name = "".join(string.ascii_uppercase[i] if i < 26 else "?" for i in order.tolist())
        sources = tuple(int(pieces[i]) for i in order)
        sequences.append(SequenceGain(name, sources, walking, attack, capture))
    return GainTable(position, roll, tuple(int(p) for p in pieces), tuple(sequences))


# --- the gain's kernels ------------------------------------------------------------------------------------------
# One implementation serves gain_table and the agent. The tests hold a plain Python evaluation written from the
# paper's equations (tests/agents/reference_gain.py) and compare every term, float for float.


@njit(cache=True, inline="always")
def _can_play(state, roll, source, geom):
    """Whether the mover's piece at ``source`` (0: a home piece) exists and may move ``roll`` (a legal move)."""
    length = geom[0].length
    if roll <= 0 or source > length:
        return False
    own = core.own_mask(state)
    if source == 0:
        if core.own_home(state) == 0:
            return False
    elif not (own >> (source - 1)) & 1:
        return False
    return core.can_move(own, core.opp_mask(state), source, source + roll, geom)


@njit(cache=True)
def _reach_kernel(state, source, target, max_moves, geom, rolls, probs, frames):
    """The chance the piece at ``source`` captures on ``target``.

    The recursion is unrolled into frames (numba's cache cannot hold self-recursive functions safely), each frame
    summing its own terms and adding its child's total where the recursive call would, so the floats are the same.
    ``frames`` (from :func:`_workspace`) is reused from call to call: a decision makes thousands of calls.
    """
    states, sources, next_roll, chances, totals = frames
    states[0], sources[0], chances[0], next_roll[0], totals[0] = state, source, 1.0, 0, 0.0
    d = 0
    while True:
        if next_roll[d] == rolls.shape[0]:
            if d == 0:
                return totals[0]
            d -= 1
            totals[d] += totals[d + 1]
            continue
        t = next_roll[d]
        next_roll[d] += 1
        roll = rolls[t]
        if roll == 0 or not _can_play(states[d], roll, sources[d], geom):
            continue
        nxt, flags = core.apply_move(states[d], roll, sources[d], geom)
        victim = core.opp_mask(nxt) if flags & core.EXTRA_ROLL else core.own_mask(nxt)
        if flags & core.CAPTURE and not (victim >> (target - 1)) & 1:
            totals[d] += chances[d] * probs[t]
        elif flags & core.EXTRA_ROLL and not flags & core.WIN and d + 1 < max_moves:
            states[d + 1], sources[d + 1], chances[d + 1] = nxt, sources[d] + roll, chances[d] * probs[t]
            next_roll[d + 1], totals[d + 1] = 0, 0.0
            d += 1


@njit(cache=True)
def _threat_kernel(state, target, max_moves, attackers_allowed, geom, rolls, probs, frames):
    """The side to move's chance to capture the piece on ``target`` this turn (C's inner sum, Eq. 12)."""
    total = 0.0
    if core.own_home(state) and attackers_allowed[0]:
        total += _reach_kernel(state, 0, target, max_moves, geom, rolls, probs, frames)
    own = core.own_mask(state)
    for p in range(1, geom[0].length + 1):
        if (own >> (p - 1)) & 1 and attackers_allowed[p]:
            total += _reach_kernel(state, p, target, max_moves, geom, rolls, probs, frames)
    return total


@njit(cache=True)
def _walk_kernel(state, pieces, order, first_roll, max_moves, ctx, work):
    """Walk the roll sequences of ``order`` from the turn's start: adds to ``sums`` (W, A) and ``endings`` (for C).

    ``endings`` rows are (move, tile, threat) after a count in ``endings[0, 0]``. The recursion is unrolled into
    frames, visited in the recursion's order, so every sum is made in the same order. ``work``: see
    :func:`_workspace`.
    """
    geom, rolls, probs, capturable, attackers_allowed = ctx
    sums, endings, reach_frames = work[0], work[1], work[2]
    states, walked, next_roll, chances, squares = work[3]
    depth = order.shape[0]
    n_pieces = pieces.shape[0]
    states[0], chances[0], walked[0], next_roll[0] = state, 1.0, 0, 0
    squares[0, :n_pieces] = pieces
    i = 0
    while True:
        if next_roll[i] == rolls.shape[0]:
            if i == 0:
                return
            i -= 1
            continue
        t = next_roll[i]
        next_roll[i] += 1
        roll = rolls[t]
        p = probs[t]
        if i == 0 and first_roll >= 0:  # the roll thrown (-1: every first roll, by its chance)
            if roll != first_roll:
                continue
            p = 1.0
        if roll == 0:
            sums[0] += chances[i] * p * walked[i]
            continue
        piece = order[i]
        source = squares[i, piece]
        if not _can_play(states[i], roll, source, geom):
            continue
        nxt, flags = core.apply_move(states[i], roll, source, geom)
        path_prob = chances[i] * p
        if flags & core.CAPTURE:
            sums[1] += path_prob * core.captured_position(core.opp_mask(states[i]), source + roll, geom)
        dest = source + roll
        if flags & core.EXTRA_ROLL and not flags & core.WIN:
            if i + 1 < depth:
                squares[i + 1, :n_pieces] = squares[i, :n_pieces]
                squares[i + 1, piece] = dest
                states[i + 1], chances[i + 1], walked[i + 1], next_roll[i + 1] = nxt, path_prob, walked[i] + roll, 0
                i += 1
            continue
        sums[0] += path_prob * (walked[i] + roll)
        if capturable[dest]:
            threat = _threat_kernel(nxt, dest, max_moves, attackers_allowed, geom, rolls, probs, reach_frames)
            n = int(endings[0, 0])
            found = False
            for row in range(1, n + 1):
                if endings[row, 0] == i and endings[row, 1] == dest:
                    endings[row, 2] = max(endings[row, 2], threat)
                    found = True
            if not found:
                endings[n + 1, 0] = i
                endings[n + 1, 1] = dest
                endings[n + 1, 2] = threat
                endings[0, 0] = n + 1


@njit(cache=True)
def _sequences_kernel(n_pieces, home, length):
    """The sequences of ``length`` piece indices, lexicographic (home pieces, below ``home``, join in order)."""
    total = n_pieces**length
    out = np.zeros((total, length), dtype=np.int64)
    count = 0
    seq = np.zeros(length, dtype=np.int64)
    for code in range(total):
        rest = code
        for j in range(length - 1, -1, -1):
            seq[j] = rest % n_pieces
            rest //= n_pieces
        valid = True
        for j in range(length):
            next_home = 0
            for q in range(j):
                if seq[q] < home:
                    next_home = max(next_home, seq[q] + 1)
            if seq[j] < home and seq[j] > next_home:
                valid = False
                break
        if valid:
            out[count] = seq
            count += 1
    return out[:count]


class GainSetup(NamedTuple):
    """What the gain's kernels read of the rules and the agent's settings (built once per batch)."""

    max_moves: int
    paper: bool
    """The paper's threat model: only the opponent's pieces at home or on its private tiles threaten."""
    geom: np.ndarray
    rolls: np.ndarray
    """The rolls with a chance (int64), in :func:`urgym.core.chance_outcomes` order."""
    probs: np.ndarray
    capturable: np.ndarray
    """bool per path position: a shared tile where a piece can be captured."""
    shared: np.ndarray
    tables: tuple[np.ndarray, np.ndarray, np.ndarray]
    """:func:`_sequence_tables` of the rules."""


@lru_cache(maxsize=32)
def _gain_setup(rules: Rules, max_moves: int, paper: bool) -> GainSetup:
    """The rules' arrays and sequence tables, built once per (rules, settings): a match asks every step."""
    rolls, probs = core.chance_outcomes(rules)
    keep = probs > 0
    capturable = np.zeros(rules.length + 2, dtype=np.bool_)
    shared = np.zeros(rules.length + 2, dtype=np.bool_)
    for p in rules.shared_positions:
        shared[p] = True
        capturable[p] = not (rules.safe_rosettes and p in rules.rosette_positions)
    return GainSetup(
        max_moves,
        paper,
        geometry(rules),
        np.ascontiguousarray(rolls[keep]).astype(np.int64),
        np.ascontiguousarray(probs[keep]),
        capturable,
        shared,
        _sequence_tables(max_moves, rules.pieces),
    )


@njit(cache=True, nogil=True)  # threads answer slices of a batch at once
def gain_choices(decisions, setup, out, start, stop):
    """The gain agent's move for decisions ``start:stop`` of a batch (``setup``: a :class:`GainSetup`)."""
    work = _workspace(setup.max_moves, setup.geom[0].length)
    for d in range(start, stop):
        if decisions.counts[d] == 1:
            out[d] = decisions.moves[d, 0]
        else:
            out[d] = _gain_choice(decisions.states[d], decisions.rolls[d], setup, work)


@njit(cache=True)
def _lettered_pieces(state, max_moves, geom):
    """The mover's pieces as the sequences letter them: home pieces first (as many as moves), then by position."""
    own = core.own_mask(state)
    home = min(core.own_home(state), max_moves)
    pieces = np.zeros(home + core.popcount(own), dtype=np.int64)
    k = home
    for p in range(1, geom[0].length + 1):
        if (own >> (p - 1)) & 1:
            pieces[k] = p
            k += 1
    return pieces


@njit(cache=True)
def _sequence_gain(state, pieces, order, first_roll, setup, work):
    """(W, A, C) of the sequence ``order`` of ``pieces`` (``first_roll`` -1: every first roll, by its chance)."""
    allowed = work[4]
    if setup.paper:
        opp = core.opp_mask(state)
        allowed[0] = core.opp_home(state) > 0
        for p in range(1, setup.geom[0].length + 1):
            allowed[p] = (opp >> (p - 1)) & 1 and not setup.shared[p]
    ctx = (setup.geom, setup.rolls, setup.probs, setup.capturable, allowed)
    sums, endings = work[0], work[1]
    sums[:] = 0.0
    endings[0, 0] = 0
    _walk_kernel(state, pieces, order, first_roll, setup.max_moves, ctx, work)
    capture = 0.0
    for row in range(1, int(endings[0, 0]) + 1):
        capture += endings[row, 1] * endings[row, 2]
    return sums[0], sums[1], -capture


@njit(cache=True)
def _workspace(max_moves, length):
    """The scratch arrays one thread's decisions reuse: the sums, the endings, both walks' frames, the threats."""
    reach = (
        np.zeros(max_moves + 1, dtype=np.int64),
        np.zeros(max_moves + 1, dtype=np.int64),
        np.zeros(max_moves + 1, dtype=np.int64),
        np.zeros(max_moves + 1),
        np.zeros(max_moves + 1),
    )
    walk = (
        np.zeros(max_moves, dtype=np.int64),
        np.zeros(max_moves, dtype=np.int64),
        np.zeros(max_moves, dtype=np.int64),
        np.zeros(max_moves),
        np.zeros((max_moves, max_moves + length), dtype=np.int64),
    )
    return np.zeros(2), np.zeros((64, 3)), reach, walk, np.ones(length + 1, dtype=np.bool_)


@njit(cache=True)
def _sequence_tables(max_moves, pieces):
    """Every (home pieces, pieces) count's sequences, stacked: ``(rows, start[home, n], stop[home, n])``."""
    most = max_moves + pieces
    start = np.zeros((max_moves + 1, most + 1), dtype=np.int64)
    stop = np.zeros((max_moves + 1, most + 1), dtype=np.int64)
    total = 0
    for home in range(max_moves + 1):
        for n in range(home, most + 1):
            start[home, n] = total
            total += _sequences_kernel(n, home, max_moves).shape[0]
            stop[home, n] = total
    rows = np.zeros((total, max_moves), dtype=np.int64)
    for home in range(max_moves + 1):
        for n in range(home, most + 1):
            rows[start[home, n] : stop[home, n]] = _sequences_kernel(n, home, max_moves)
    return rows, start, stop


@njit(cache=True, inline="always")
def _rolls_again(state, roll, source, geom):
    """Whether the legal move of the piece at ``source`` gives another move this turn (an extra roll, no win)."""
    flags = core.apply_move(state, roll, source, geom)[1]
    return bool(flags & core.EXTRA_ROLL) and not flags & core.WIN


@njit(cache=True)
def _gain_choice(state, roll, setup, work):
    """The source of the first move of the best sequence (:meth:`GainTable.best`) for ``roll`` in ``state``."""
    geom, max_moves = setup.geom, setup.max_moves
    pieces = _lettered_pieces(state, max_moves, geom)
    home = min(core.own_home(state), max_moves)
    rows, first, last = setup.tables
    best_total = -np.inf
    best_source = -1
    settled = -1  # a first piece whose move ends the turn: its sequences (contiguous) all walk the same
    for s in range(first[home, pieces.shape[0]], last[home, pieces.shape[0]]):
        order = rows[s]
        if order[0] == settled:
            continue
        source = pieces[order[0]]
        if not _can_play(state, roll, source, geom):
            settled = order[0]
            continue
        if max_moves == 1 or not _rolls_again(state, roll, source, geom):
            settled = order[0]
        walking, attack, capture = _sequence_gain(state, pieces, order, roll, setup, work)
        total = walking + attack + capture
        if total > best_total or (total == best_total and source < best_source):
            best_total = total
            best_source = source
    return best_source


class GainAgent(Agent):
    """Plays the first move of the sequence with the highest gain (Raposo & Lamont 2023).

    Args:
        max_moves: Moves per sequence (each after the first needs a rosette); the paper uses 2.
        threats: Which opponent pieces the capture term counts: ``"all"`` or ``"paper"``.
        seed: Unused (the agent is deterministic); accepted like every agent's.
    """

    def __init__(self, max_moves: int = 2, threats: str = "all", seed: int | None = None) -> None:
        integer(max_moves, "max_moves", 1, 4)
        if threats not in THREAT_MODELS:
            raise ValueError(f"unknown threats {threats!r}; choose one of {', '.join(THREAT_MODELS)}")
        self.max_moves = max_moves
        self.threats = threats
        self.spec = (
            "heuristic"
            + ("" if max_moves == 2 else f":max_moves={max_moves}")
            + ("" if threats == "all" else f":threats={threats}")
        )
        super().__init__(seed)

    def select_move(self, position: Position, roll: int) -> int:
        """The move with the best gain sequence (see the module docstring)."""
        return self.select_one(position, roll)

    def select_moves(self, rules: Rules, decisions: Decisions) -> np.ndarray:
        """The move with the best gain sequence for every decision, in numba, on every core for a large batch."""
        setup = _gain_setup(rules, self.max_moves, self.threats == "paper")
        out = np.empty(len(decisions), dtype=np.int64)
        threads = min(os.cpu_count() or 1, max(1, len(decisions) // 256))
        parts = np.linspace(0, len(decisions), threads + 1).astype(np.int64)
        if threads == 1:
            gain_choices(decisions, setup, out, 0, len(decisions))
            return out
        with ThreadPoolExecutor(threads) as pool:
            jobs = [
                pool.submit(gain_choices, decisions, setup, out, int(parts[t]), int(parts[t + 1]))
                for t in range(threads)
            ]
            for job in jobs:
                job.result()
        return out
