"""The paper's gain written plainly in Python, from Raposo & Lamont's equations: the tests' reference.

It walks the roll sequences of each sequence of moves with :class:`urgym.Position` (no numba, no packed states) and
sums W, A and C in the order the package's kernels do, so the two agree float for float
(``test_heuristic.py`` compares every term of every sequence, and the moves of thousands of decisions).
"""

from __future__ import annotations

import string

from urgym.agents.heuristic import THREAT_MODELS, GainTable, SequenceGain

from urgym import Position


def reference_gain_table(position: Position, roll: int | None = None, max_moves: int = 2, threats: str = "all"):
    """What :func:`urgym.agents.heuristic.gain_table` returns, computed by the plain walk below."""
    assert threats in THREAT_MODELS
    mover = position.turn
    home = min(position.home(mover), max_moves)  # more home pieces than moves cannot all move
    pieces = (0,) * home + position.pieces(mover)
    evaluator = _GainEvaluator(position, roll, max_moves, pieces, threats)
    sequences = []
    for order in _piece_sequences(len(pieces), home, max_moves):
        if roll is not None and not _first_move_legal(position, roll, pieces[order[0]]):
            continue
        sequences.append(evaluator.evaluate(order))
    return GainTable(position, roll, pieces, tuple(sequences))


def _piece_sequences(n_pieces: int, home: int, length: int) -> list[tuple[int, ...]]:
    """Sequences of piece indices; home pieces (indices below ``home``) are alike, so they join in order."""
    sequences: list[tuple[int, ...]] = [()]
    for _ in range(length):
        longer = []
        for seq in sequences:
            next_home = max((i for i in seq if i < home), default=-1) + 1
            for i in range(n_pieces):
                if i < home and i > next_home:
                    continue
                longer.append((*seq, i))
        sequences = longer
    return sequences


def _first_move_legal(position: Position, roll: int, source: int) -> bool:
    return source in position.legal_moves(roll)


class _GainEvaluator:
    """Walks the roll sequences of one position; caches the opponent's capture chances."""

    def __init__(
        self, position: Position, roll: int | None, max_moves: int, pieces: tuple[int, ...], threats: str
    ) -> None:
        self.position = position
        self.roll = roll
        self.max_moves = max_moves
        self.pieces = pieces
        rules = position.rules
        self.probabilities = dict(position.chance_outcomes())
        self.length = rules.length
        self.capturable = (
            set(rules.shared_positions) - set(rules.rosette_positions)
            if rules.safe_rosettes
            else set(rules.shared_positions)
        )
        self._threats: dict[tuple[int, int], float] = {}
        opponent = "dark" if position.turn == "light" else "light"
        self.paper_attackers = None
        if threats == "paper":
            shared = set(rules.shared_positions)
            self.paper_attackers = {p for p in position.pieces(opponent) if p not in shared}
            if position.home(opponent):
                self.paper_attackers.add(0)

    def evaluate(self, order: tuple[int, ...]) -> SequenceGain:
        self.walking = 0.0
        self.attack = 0.0
        self.endings: dict[tuple[int, int], float] = {}  # (move index, tile) -> opponent's capture chance
        self._walk(self.position, list(self.pieces), order, 0, 1.0, 0)
        capture = -sum(tile * threat for (_, tile), threat in self.endings.items())
        name = "".join(string.ascii_uppercase[i] if i < 26 else "?" for i in order)
        return SequenceGain(name, tuple(self.pieces[i] for i in order), self.walking, self.attack, capture)

    def _walk(
        self, position: Position, squares: list[int], order: tuple[int, ...], i: int, prob: float, walked: int
    ) -> None:
        rolls = {self.roll: 1.0} if (i == 0 and self.roll is not None) else self.probabilities
        piece = order[i]
        for roll, p in rolls.items():
            if roll == 0:
                self.walking += prob * p * walked  # no move: the turn ends where it stands
                continue
            source = squares[piece]
            if source > self.length or source not in position.legal_moves(roll):
                continue  # a forbidden move drops this roll sequence
            result = position.move_result(roll, source)
            path_prob = prob * p
            mover = position.turn
            opponent = "dark" if mover == "light" else "light"
            if result.captured:
                lost = set(position.pieces(opponent)) - set(result.position.pieces(opponent))
                self.attack += path_prob * sum(lost)
            dest = source + roll
            if result.extra_roll and not result.won:
                if i + 1 < len(order):
                    moved = squares.copy()
                    moved[piece] = dest
                    self._walk(result.position, moved, order, i + 1, path_prob, walked + roll)
                continue  # a further move the sequence does not name: dropped, as in the paper's Table 5
            self.walking += path_prob * (walked + roll)
            if dest in self.capturable:
                key = (i, dest)
                self.endings[key] = max(self.endings.get(key, 0.0), self._threat(result.position, dest))

    def _threat(self, position: Position, target: int) -> float:
        """The chance the side to move (the opponent) captures the piece on the target position next turn."""
        key = (position.code, target)
        if key not in self._threats:
            mover = position.turn
            attackers = ((0,) if position.home(mover) else ()) + position.pieces(mover)
            if self.paper_attackers is not None:
                attackers = tuple(a for a in attackers if a in self.paper_attackers)
            total = sum(self._reach(position, source, target, 1.0, 1) for source in attackers)
            self._threats[key] = total
        return self._threats[key]

    def _reach(self, position: Position, source: int, target: int, prob: float, moves: int) -> float:
        """Chance the opponent's piece at ``source`` captures on ``target`` this turn, rosettes included."""
        victim = "dark" if position.turn == "light" else "light"
        total = 0.0
        for roll, p in self.probabilities.items():
            if roll == 0 or source not in position.legal_moves(roll):
                continue
            result = position.move_result(roll, source)
            if result.captured and target not in result.position.pieces(victim):
                total += prob * p
            elif result.extra_roll and not result.won and moves < self.max_moves:
                total += self._reach(result.position, source + roll, target, prob * p, moves + 1)
        return total
