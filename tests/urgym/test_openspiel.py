"""The OpenSpiel game passes OpenSpiel's own checks, and OpenSpiel's search on it agrees with the solved table."""

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel", reason="the openspiel extra is not installed")
from open_spiel.python.algorithms import mcts  # noqa: E402
from open_spiel.python.algorithms.minimax import expectiminimax  # noqa: E402

import urgym.openspiel  # noqa: E402, F401  (registers the game)
from urgym import Position, core  # noqa: E402
from urgym.openspiel import pass_action  # noqa: E402


@pytest.mark.parametrize(
    "params",
    [
        {"rules": "finkel", "pieces": 2},
        {"rules": "blitz", "pieces": 2},
        {"rules": "masters", "pieces": 2},
        {"rules": "aseb", "pieces": 1},
    ],
)
def test_openspiel_random_sim_test(params):
    game = pyspiel.load_game("urgym", params)
    pyspiel.random_sim_test(game, num_sims=10, serialize=True, verbose=False)


def test_game_shape_and_chance_nodes():
    game = pyspiel.load_game("urgym(rules=masters,pieces=3)")
    assert game.num_distinct_actions() == 16 + 2 and game.max_chance_outcomes() == 5  # L = 16, and the pass
    state = game.new_initial_state()
    assert state.is_chance_node()
    rolls, probabilities = core.chance_outcomes(state.rules)
    assert state.chance_outcomes() == list(zip(rolls.tolist(), probabilities.tolist(), strict=True))
    state.apply_action(2)
    assert state.current_player() == 0 and state.legal_actions() == [0]
    observation = np.array(state.observation_tensor(1))
    assert observation.shape == (core.observation_size(state.rules),)
    assert observation[-4:].tolist() == [0, 1, 0, 0]  # the roll is public: dark sees it too
    state.apply_action(0)
    assert state.is_chance_node() and state.current_player() == pyspiel.PlayerId.CHANCE


def test_a_roll_without_moves_is_a_pass_decision():
    game = pyspiel.load_game("urgym", {"rules": "finkel", "pieces": 2})
    state = game.new_initial_state()
    state.apply_action(0)
    assert state.legal_actions() == [pass_action(state.rules)]
    assert state.action_to_string(0, pass_action(state.rules)) == "pass"
    state.apply_action(pass_action(state.rules))
    assert state.is_chance_node() and state.position.turn == "dark"


def test_serialize_round_trip():
    game = pyspiel.load_game("urgym", {"rules": "blitz", "pieces": 3})
    state = game.new_initial_state()
    rng = np.random.default_rng(0)
    for _ in range(40):
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0])
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    text = pyspiel.serialize_game_and_state(game, state)
    _, again = pyspiel.deserialize_game_and_state(text)
    assert again.position == state.position and again.history() == state.history()


def table_value(table):
    """OpenSpiel value function: the table's winning chance as a return in [-1, 1] for a player."""

    def value(state, player):
        if state.is_chance_node():
            p = table.win_probability(state.position, ("light", "dark")[player])
        else:  # a decision: the best move's chance for the mover
            values = table.move_values(state.position, state.roll)
            best = max(values.values()) if values else 1 - table.win_probability(state.position.play(state.roll, None))
            p = best if state.current_player() == player else 1 - best
        return 2 * p - 1

    return value


def test_expectiminimax_reproduces_the_solved_table(finkel3_table):
    """OpenSpiel's expectiminimax over our chance nodes, with the table at the leaves, gives the table back."""
    game = pyspiel.load_game("urgym", {"rules": "finkel", "pieces": 3})
    value = table_value(finkel3_table)
    rng = np.random.default_rng(5)
    state = game.new_initial_state()
    checked = 0
    while checked < 40:
        if state.is_terminal():
            state = game.new_initial_state()
        if state.is_chance_node():
            player = state.position.turn == "dark"
            searched, _ = expectiminimax(state, 2, lambda s, p=int(player): value(s, p), int(player))
            assert searched == pytest.approx(2 * finkel3_table.win_probability(state.position) - 1, abs=1e-9)
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0])
        else:
            player = state.current_player()
            searched, action = expectiminimax(state, 1, lambda s, p=player: value(s, p), player)
            if action != pass_action(state.rules):
                best = finkel3_table.best_move(state.position, state.roll)
                values = finkel3_table.move_values(state.position, state.roll)
                assert values[action] == pytest.approx(values[best], abs=1e-12)  # ties may pick either
                assert searched == pytest.approx(2 * values[best] - 1, abs=1e-9)
            state.apply_action(int(rng.choice(state.legal_actions())))
            checked += 1


def test_mcts_plays_legal_moves_and_finds_the_winning_move():
    game = pyspiel.load_game("urgym", {"rules": "finkel", "pieces": 2})
    bot = mcts.MCTSBot(
        game,
        uct_c=2,
        max_simulations=200,
        evaluator=mcts.RandomRolloutEvaluator(1, np.random.RandomState(0)),
        random_state=np.random.RandomState(1),
    )
    # Light can bear off its last piece with a 1, or move its other piece: MCTS must take the win.
    state = game.new_initial_state()
    position = Position.from_pieces(state.rules, light=[14], dark=[3, 10], light_home=0, dark_home=0)
    state.code = position.code
    state.apply_action(1)
    assert set(state.legal_actions()) == {14}
    assert bot.step(state) == 14
    state = game.new_initial_state()
    for _ in range(30):  # a stretch of play: every MCTS move is legal
        if state.is_terminal():
            break
        if state.is_chance_node():
            state.apply_action(state.chance_outcomes()[2][0])
        else:
            action = bot.step(state)
            assert action in state.legal_actions()
            state.apply_action(action)


def test_an_illegal_action_is_refused_and_names_the_legal_ones():
    state = pyspiel.load_game("urgym").new_initial_state()
    state.apply_action(2)
    with pytest.raises(ValueError, match=r"illegal action 5 for roll 2; legal actions: \[0\]"):
        state.apply_action(5)
    state.apply_action(0)
    assert state.position.pieces("light") == (2,)


def test_deserialize_state_replays_the_history_and_never_unpickles(tmp_path):
    import base64
    import os
    import pickle

    game = pyspiel.load_game("urgym", {"rules": "finkel", "pieces": 2})
    state = game.new_initial_state()
    for action in (2, 0, 1, 0, 4):
        state.apply_action(action)
    text = state.serialize()
    assert text == "2,0,1,0,4"
    again = game.deserialize_state(text)
    assert again.position == state.position and again.history() == state.history() and again.roll == state.roll

    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    crafted = "history=\nmove_number=0\n__dict__=" + base64.b64encode(pickle.dumps({"x": Payload()})).decode()
    for bad, message in (
        (crafted, "is not a number"),
        ("2,9", "not legal there"),
        ("7", "illegal chance outcome"),
        ("2,,0", "is not a number"),
        ("-1", "is not a number"),
        ("2,0" + ",0" * 10, "not legal"),
    ):
        with pytest.raises(ValueError, match=message):
            game.deserialize_state(bad)
    assert not marker.exists()


def test_illegal_chance_actions_and_terminal_states():
    game = pyspiel.load_game("urgym", {"rules": "finkel", "pieces": 1})
    state = game.new_initial_state()
    with pytest.raises(Exception, match="illegal chance outcome 7"):
        state.apply_action(7)
    assert state.is_chance_node() and state.history() == [] and state.roll is None  # unchanged
    rolls = iter([1, 2, 3, 4] * 100)
    while not state.is_terminal():
        state.apply_action(next(rolls) if state.is_chance_node() else state.legal_actions()[-1])
    with pytest.raises(Exception, match="the game is over"):
        state.apply_action(0)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"pieces": 0}, "pieces must be from 1 to 15"),
        ({"pieces": -5}, "pieces must be from 1 to 15"),
        ({"pieces": 16}, "pieces must be an integer from 1 to 15"),
        ({"rules": "chess"}, "unknown rule set 'chess'"),
    ],
)
def test_bad_game_parameters_are_refused(params, message):
    with pytest.raises(Exception, match=message):
        pyspiel.load_game("urgym", params)
    assert pyspiel.load_game("urgym", {"rules": "blitz"}).rules.pieces == 5  # the default keeps the rule set's
