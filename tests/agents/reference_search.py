"""A plain expectiminimax written from the definition on the Position API, for checking the numba search."""

from __future__ import annotations

from urgym import Position


def advancement(position: Position, side: str) -> int:
    """Scored pieces times L + 1 plus on-board positions, ``side`` minus the other side."""
    other = "dark" if side == "light" else "light"
    weight = position.rules.length + 1

    def score(s: str) -> int:
        return position.scored(s) * weight + sum(position.pieces(s))

    return score(side) - score(other)


def chance_value(position: Position, depth: int, win: float) -> float:
    """Expected score of the side about to roll, searching ``depth`` >= 1 plies."""
    if position.is_over:
        return -win
    mover = position.turn
    total = 0.0
    for roll, p in enumerate(position.rules.roll_probabilities):
        if p == 0:
            continue
        moves = position.legal_moves(roll)
        if not moves:
            passed = position.play(roll, None)
            v = advancement(position, mover) if depth == 1 else -chance_value(passed, depth - 1, win)
        else:
            v = max(move_value(position, roll, m, depth, win) for m in moves)
        total += p * v
    return total


def move_value(position: Position, roll: int, move: int, depth: int, win: float) -> float:
    """Score for the mover of playing ``move``, the move itself being the first of ``depth`` plies."""
    mover = position.turn
    result = position.move_result(roll, move)
    if result.won:
        return win
    after = result.position
    if depth == 1:
        return advancement(after, mover)
    v = chance_value(after, depth - 1, win)
    return v if after.turn == mover else -v


def best_move(position: Position, roll: int, depth: int, win: float) -> tuple[int, dict[int, float]]:
    """The best move (lowest source on ties) and every move's value."""
    values = {m: move_value(position, roll, m, depth, win) for m in position.legal_moves(roll)}
    return max(values, key=lambda m: (values[m], -m)), values
