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

import string
from dataclasses import dataclass

from urgym.agents.base import Agent, legal_moves_or_raise

from urgym import Position
from urgym.checks import integer

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
        moves = legal_moves_or_raise(position, roll)
        if len(moves) == 1:
            return moves[0]
        return gain_table(position, roll, self.max_moves, self.threats).best().sources[0]
