"""Positions from real games (random play), with a roll that leaves a choice, for agent tests."""

from __future__ import annotations

import numpy as np

from urgym import Position, get_rules


def decision_positions(rules_name: str, count: int, seed: int = 0, pieces: int | None = None,
                       min_moves: int = 2) -> list[tuple[Position, int]]:
    """``count`` (position, roll) pairs with at least ``min_moves`` legal moves, from random games."""
    rules = get_rules(rules_name, pieces)
    rng = np.random.default_rng(seed)
    probabilities = np.asarray(rules.roll_probabilities)
    found: list[tuple[Position, int]] = []
    position = Position.start(rules)
    while len(found) < count:
        roll = int(rng.choice(len(probabilities), p=probabilities))
        moves = position.legal_moves(roll)
        if len(moves) >= min_moves and rng.random() < 0.3:
            found.append((position, roll))
        position = position.play(roll, moves[int(rng.integers(len(moves)))] if moves else None)
        if position.is_over:
            position = Position.start(rules)
    return found
