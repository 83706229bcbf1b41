"""Random playouts on every rule set: the numba core agrees with the naive reference, and invariants hold."""

import random

import numpy as np
import pytest

from urgym import RULE_SET_NAMES, Position, get_rules, simulate

from .reference import RefState, legal, play


def _ref_state(p: Position) -> RefState:
    return RefState({s: p.pieces(s) for s in ("light", "dark")}, {s: p.home(s) for s in ("light", "dark")}, p.turn)


def _random_position(rules, rng: random.Random) -> Position:
    """A random valid position: pieces dropped on free tiles, the rest split between home and scored."""
    while True:
        sides = {"light": [], "dark": []}
        used = set()
        homes = {}
        for side, path in (("light", rules.path), ("dark", rules.dark_path)):
            for _ in range(rules.pieces):
                where = rng.random()
                if where < 0.5:
                    p = rng.randint(1, rules.length)
                    if path[p - 1] not in used:
                        used.add(path[p - 1])
                        sides[side].append(p)
            homes[side] = rng.randint(0, rules.pieces - len(sides[side]))
        if (sides["light"] or homes["light"]) or (sides["dark"] or homes["dark"]):
            return Position.from_pieces(
                rules, sides["light"], sides["dark"], homes["light"], homes["dark"], rng.choice(["light", "dark"])
            )


@pytest.mark.parametrize("name", RULE_SET_NAMES)
def test_kernel_agrees_with_reference_on_random_positions(name):
    rng = random.Random(hash(name) % 1000)
    for pieces in (1, 3, 7):
        rules = get_rules(name, pieces)
        for _ in range(300):
            p = _random_position(rules, rng)
            if p.is_over:
                continue
            ref = _ref_state(p)
            for roll in rules.rolls:
                moves = p.legal_moves(roll)
                assert list(moves) == legal(rules, ref, roll), (p, roll)
                for m in moves:
                    result = p.move_result(roll, m)
                    expected, flags = play(rules, ref, roll, m)
                    assert _ref_state(result.position) == expected, (p, roll, m)
                    assert (
                        result.captured,
                        result.landed_on_rosette,
                        result.extra_roll,
                        result.won,
                        result.scored,
                    ) == (flags["captured"], flags["rosette"], flags["extra"], flags["won"], flags["scored"])


@pytest.mark.parametrize("name", RULE_SET_NAMES)
@pytest.mark.parametrize("pieces", [2, 7])
def test_random_playouts_keep_invariants(name, pieces):
    rules = get_rules(name, pieces)
    rng = random.Random(pieces)
    for _ in range(4):
        p = Position.start(rules)
        for _ in range(20000):
            assert p.winner is None
            for side in ("light", "dark"):
                assert p.home(side) + len(p.pieces(side)) + p.scored(side) == pieces
            tiles = p.tiles("light") + p.tiles("dark")
            assert len(set(tiles)) == len(tiles)
            roll = rng.choices(range(rules.max_roll + 1), weights=rules.roll_probabilities)[0]
            moves = p.legal_moves(roll)
            p = p.play(roll, rng.choice(moves) if moves else None)
            if p.is_over:
                break
        assert p.is_over
        winner = p.winner
        assert p.scored(winner) == pieces
        loser = "dark" if winner == "light" else "light"
        assert p.scored(loser) < pieces
        assert p.legal_moves(1) == ()


@pytest.mark.parametrize("name", RULE_SET_NAMES)
def test_simulator_plays_complete_games(name):
    result = simulate(get_rules(name, 3), "random", "greedy", games=200, seed=3)
    assert set(np.unique(result.winners)) <= {0, 1}
    assert (result.moves >= 3).all()  # the winner alone needs at least one move per piece
    assert (result.turns >= 1).all() and (result.turns <= result.moves + 10_000).all()


def test_simulator_is_seeded_and_independent_of_batching():
    a = simulate("finkel", games=300, seed=11)
    b = simulate("finkel", games=300, seed=11)
    c1 = simulate("finkel", games=100, seed=11)
    c2 = simulate("finkel", games=200, seed=11, first_game=100)
    d = simulate("finkel", games=300, seed=12)
    assert np.array_equal(a.winners, b.winners) and np.array_equal(a.turns, b.turns)
    assert np.array_equal(a.moves, np.concatenate([c1.moves, c2.moves]))
    assert not np.array_equal(a.moves, d.moves)


def test_simulator_policies_differ_in_strength():
    # Greedy captures and takes rosettes; it must beat random clearly over many games, from both sides.
    as_light = simulate("finkel", "greedy", "random", games=4000, seed=1)
    as_dark = simulate("finkel", "random", "greedy", games=4000, seed=2)
    assert as_light.light_win_rate > 0.6
    assert 1 - as_dark.light_win_rate > 0.6
    mirror = simulate("finkel", "random", "random", games=20000, seed=3)
    assert 0.48 < mirror.light_win_rate < 0.56  # light moves first: a small edge, not a large one


def test_simulator_rejects_unknown_policies():
    with pytest.raises(ValueError, match="unknown built-in policy 'smart'; built-in policies: random, first"):
        simulate("finkel", "smart", "random", games=1)
