"""Positions from real games (random play), with a roll that leaves a choice, for agent tests."""

from __future__ import annotations

import numpy as np

from urgym import Game, Position


def decision_positions(
    rules_name: str, count: int, seed: int = 0, pieces: int | None = None, min_moves: int = 2
) -> list[tuple[Position, int]]:
    """``count`` (position, roll) pairs with at least ``min_moves`` legal moves, from random games."""
    rng = np.random.default_rng(seed)
    found: list[tuple[Position, int]] = []
    game_index = 0
    while len(found) < count:
        game = Game(rules_name, seed, game_index, pieces)
        game_index += 1
        while not game.is_over and len(found) < count:
            moves = game.legal_moves
            if len(moves) >= min_moves and rng.random() < 0.3:
                found.append((game.position, game.roll))
            game.play(moves[int(rng.integers(len(moves)))])
    return found
