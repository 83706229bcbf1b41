"""One game flow under every loop: the same (seed, game) gives the same game everywhere.

Both sides play the built-in policy ``first`` (the least advanced piece, the first legal move), which is
deterministic, so each loop's game is fixed by its dice alone.
"""

import numpy as np
import pytest
from urgym.agents.registry import make_agent
from urgym.evaluation.play.terminal import play_game
from urgym.evaluation.scoring.match import play_match
from urgym.evaluation.scoring.runner import RunOptions

from urgym import Game, get_rules
from urgym.env import UrEnv
from urgym.render import board_text
from urgym.simulate import simulate

RULES = get_rules("finkel", 3)
SEED = 7
GAMES = 6


def game_by_game(g: int) -> Game:
    game = Game(RULES, SEED, g)
    while not game.is_over:
        game.play(game.legal_moves[0])
    return game


@pytest.fixture(scope="module")
def reference():
    return [game_by_game(g) for g in range(GAMES)]


def test_simulator(reference):
    result = simulate(RULES, "first", "first", games=GAMES, seed=SEED)
    assert [("light", "dark")[w] for w in result.winners] == [g.winner for g in reference]
    assert result.turns.tolist() == [g.turns for g in reference]
    assert result.moves.tolist() == [g.moves_played for g in reference]


@pytest.mark.parametrize("use_numba", [True, False])
def test_match_loops(reference, finkel3_table, use_numba):
    match = play_match(
        "first",
        "last",
        RULES,
        games=GAMES,
        seed=SEED,
        table=finkel3_table,
        use_numba=use_numba,
        run=RunOptions(workers=1, progress=False),
    )
    # Agent 0 ("first") plays light in even games; compare against "first" vs "last" games built by hand.
    for g in range(GAMES):
        game = Game(RULES, SEED, g)
        while not game.is_over:
            light_moves_first = (game.turn == "light") == (g % 2 == 0)
            game.play(game.legal_moves[0] if light_moves_first else game.legal_moves[-1])
        winning_agent = 0 if (game.winner == "light") == (g % 2 == 0) else 1
        assert match.winners[g] == winning_agent


def test_gymnasium_environment(reference):
    env = UrEnv(RULES, opponent="first")
    for g in range(GAMES):
        env.reset(seed=SEED if g == 0 else None)  # episode g after reset(seed=SEED) is game g
        terminated = False
        while not terminated:
            _, _, terminated, _, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
        assert env.position == reference[g].position and info["winner"] == reference[g].winner


def test_pettingzoo_environment(reference):
    from urgym.multiagent import env as make_env

    env = make_env(rules=RULES)
    for g in range(GAMES):
        env.reset(seed=SEED if g == 0 else None)
        for _agent in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            env.step(None if termination or truncation else int(np.flatnonzero(observation["action_mask"])[0]))
        assert env.unwrapped.position == reference[g].position


def test_terminal_play(reference):
    lines: list[str] = []
    winner = play_game(RULES, make_agent("first"), "light", SEED, read=lambda prompt: "1", write=lines.append)
    assert winner == reference[0].winner
    assert lines[-3].strip() == board_text(reference[0].position).strip()  # the end: board, score, how to review
    assert "Pieces borne off" in lines[-2] and lines[-1].startswith("To review a game")


def test_openspiel_replays_the_history(reference):
    pyspiel = pytest.importorskip("pyspiel", reason="the openspiel extra is not installed")
    from urgym.openspiel import pass_action

    game = pyspiel.load_game("urgym", {"rules": "finkel", "pieces": 3})
    for ref in reference:
        state = game.new_initial_state()
        for step in ref.history:
            state.apply_action(step.roll)
            state.apply_action(pass_action(RULES) if step.move is None else step.move)
        assert state.is_terminal() and state.position == ref.position
