"""The game-flow core: Game, the chance API of Position, one observation encoder, seeds and actions."""

import numpy as np
import pytest

from urgym import Game, Position, core, get_rules
from urgym.env import action_index


@pytest.mark.parametrize("rules", ["finkel", "blitz", "masters", "aseb", "murray", "skiriuk"])
def test_game_history_replays_through_position(rules):
    game = Game(rules, seed=3, game=1, pieces=3)
    rng = np.random.default_rng(0)
    while not game.is_over:
        game.play(game.legal_moves[int(rng.integers(len(game.legal_moves)))])
    position = Position.start(game.rules)
    for step in game.history:
        assert step.side == position.turn
        position = position.play(step.roll, step.move)
    assert position == game.position and position.winner == game.winner
    assert game.moves_played == sum(step.move is not None for step in game.history)
    passes = sum(step.move is None for step in game.history)
    assert passes > 0  # a whole game meets rolls with no legal move; they are recorded as passes
    # A turn ends at every pass and at every move after which the other side rolls.
    turn_ends = (
        passes
        + sum(
            1 for a, b in zip(game.history, game.history[1:], strict=False) if a.move is not None and b.side != a.side
        )
        + 1
    )
    assert game.turns == turn_ends


def test_game_counts_turns_like_the_simulator():
    from urgym.simulate import simulate

    result = simulate(get_rules("finkel", 4), "first", "first", games=5, seed=11)
    for g in range(5):
        game = Game("finkel", seed=11, game=g, pieces=4)
        while not game.is_over:
            game.play(game.legal_moves[0])
        assert (game.winner == "light") == (result.winners[g] == 0)
        assert game.turns == result.turns[g] and game.moves_played == result.moves[g]


def test_same_seed_same_game_other_seed_other_game():
    def rolls(seed, game):
        g = Game("finkel", seed=seed, game=game)
        for _ in range(30):
            g.play(g.legal_moves[-1])
        return [s.roll for s in g.history]

    assert rolls(1, 0) == rolls(1, 0)
    assert rolls(1, 0) != rolls(1, 1) and rolls(1, 0) != rolls(2, 0)


def test_game_rejects_illegal_moves_and_bad_seeds():
    game = Game("finkel", seed=0)
    with pytest.raises(ValueError, match="legal moves"):
        game.play(99)
    with pytest.raises(ValueError, match=r"illegal move 0\.5"):
        game.play(0.5)
    for bad in (-1, 1.5, "3", True, 2**64):
        with pytest.raises(ValueError, match="seed must be an integer"):
            Game("finkel", seed=bad)
    with pytest.raises(ValueError, match="unknown rule set"):
        Game("chess")


def test_finished_game_refuses_moves():
    game = Game("finkel", seed=0, pieces=1)
    while not game.is_over:
        game.play(game.legal_moves[0])
    assert game.legal_moves == () and game.roll == 0
    with pytest.raises(ValueError, match="game is over"):
        game.play(0)


@pytest.mark.parametrize("rules", ["finkel", "masters"])
def test_chance_outcomes(rules):
    r = get_rules(rules)
    position = Position.start(r)
    outcomes = position.chance_outcomes()
    assert position.is_chance_node
    assert [roll for roll, _ in outcomes] == list(r.rolls)
    assert sum(p for _, p in outcomes) == pytest.approx(1.0, abs=1e-15)
    assert all(p == r.roll_probabilities[roll] for roll, p in outcomes)
    rolls, probabilities = core.chance_outcomes(r)
    assert not rolls.flags.writeable and not probabilities.flags.writeable
    if rules == "masters":
        assert 0 not in rolls  # three binary dice with zero as four never roll 0


def test_decisions_after_a_roll():
    position = Position.from_pieces("finkel", light=[14], dark=[], light_home=0, dark_home=7)
    win = position.after_roll(1)
    assert not win.is_chance_node and win.legal_moves == (14,) and not win.must_pass
    assert win.play(14).winner == "light"
    blocked = Position.start("finkel").after_roll(0)
    assert blocked.must_pass and blocked.play(None).turn == "dark"
    finished = win.play(14)
    assert not finished.is_chance_node
    with pytest.raises(ValueError, match="game is over"):
        finished.chance_outcomes()


def test_expected_value_through_the_chance_api_matches_the_table(finkel3_table):
    """A one-ply expectimax over chance_outcomes() reproduces the table's value (the Bellman equation)."""
    table = finkel3_table
    position = Position.from_pieces(table.rules, light=[3, 6], dark=[5], light_home=1, dark_home=2, turn="dark")
    total = 0.0
    for roll, p in position.chance_outcomes():
        decision = position.after_roll(roll)
        if decision.must_pass:
            total += p * (1 - table.win_probability(decision.play(None)))
        else:
            total += p * max(table.move_values(position, roll).values())
    assert total == pytest.approx(table.win_probability(position), abs=1e-11)


def test_observation_is_features_plus_roll():
    rules = get_rules("finkel")
    position = Position.from_pieces(rules, light=[2, 9], dark=[5, 12], light_home=3, dark_home=4, turn="dark")
    geom = core.geometry(rules)
    features = np.zeros(core.feature_count(rules))
    core.write_features(position.code, geom, features)
    observation = np.zeros(core.observation_size(rules))
    core.write_observation(position.code, 1, 3, geom, observation)  # dark is to move: its own view
    assert np.array_equal(observation[: features.size], features)
    assert observation[features.size :].tolist() == [0, 0, 1, 0]
    assert features[5 - 1] == 1 and features[12 - 1] == 1  # dark's pieces come first in dark's view
    assert features[rules.length + 2 - 1] == 1 and features[rules.length + 9 - 1] == 1
    light_view = np.zeros(core.observation_size(rules))
    core.write_observation(position.code, 0, 0, geom, light_view)
    assert light_view[2 - 1] == 1 and light_view[rules.length + 5 - 1] == 1 and light_view[-4:].sum() == 0


@pytest.mark.parametrize("good", [3, np.int64(3), np.array(3), np.uint8(3)])
def test_action_index_takes_integers(good):
    assert action_index(good) == 3


@pytest.mark.parametrize("bad", [0.7, -0.5, np.float32(0.2), "1", True, np.array([1, 2]), np.array(1.0), None])
def test_action_index_refuses_the_rest(bad):
    with pytest.raises(ValueError, match=r"an action \(a path position, 0 enters a piece\) must be an integer"):
        action_index(bad)


def test_rules_round_trip_through_dict():
    for name in ("finkel", "blitz", "masters"):
        rules = get_rules(name, 4)
        assert type(rules).from_dict(rules.to_dict()) == rules
    with pytest.raises(ValueError, match="lacks the fields"):
        type(rules).from_dict({"name": "x"})
