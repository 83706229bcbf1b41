"""The PettingZoo AEC environment passes PettingZoo's own tests and plays the rules of the core."""

import functools
import sys

import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="the pettingzoo extra is not installed")
from pettingzoo.test import api_test, render_test, seed_test

from urgym import Position, core, get_rules
from urgym.multiagent import env, raw_env


# PettingZoo's generic advice (agents named player_0, Box observations) does not fit a board game with
# action masks and the agents light and dark; its classic environments get the same warnings.
@pytest.mark.filterwarnings(
    "ignore:Observation space for each agent",
    "ignore:We recommend agents to be named",
    "ignore:Observation is not a NumPy array",
)
@pytest.mark.parametrize("rules", ["finkel", "blitz", "masters", "murray"])
def test_pettingzoo_api_test(rules):
    api_test(env(rules=rules, pieces=2), num_cycles=300)


def test_pettingzoo_seed_test():
    seed_test(functools.partial(env, rules="finkel", pieces=3), num_cycles=300)


def test_pettingzoo_render_test():
    render_test(lambda render_mode=None: env(rules="finkel", pieces=2, render_mode=render_mode))


def play_out(game, rng):
    rewards = {"light": 0.0, "dark": 0.0}
    for agent in game.agent_iter():
        observation, reward, termination, truncation, info = game.last()
        rewards[agent] += reward
        if termination or truncation:
            game.step(None)
            continue
        mask = observation["action_mask"]
        legal = game.unwrapped.position.legal_moves(game.unwrapped.roll)
        assert np.flatnonzero(mask).tolist() == list(legal)  # the mask is the core's legal moves
        assert info["roll"] == game.unwrapped.roll
        game.step(int(rng.choice(np.flatnonzero(mask))))
    return rewards


def test_zero_sum_rewards_and_winner():
    game = env(rules="finkel", pieces=3)
    rng = np.random.default_rng(1)
    winners = set()
    for seed in range(20):
        game.reset(seed=seed)
        rewards = play_out(game, rng)
        winner = game.unwrapped.position.winner
        winners.add(winner)
        assert rewards[winner] == 1.0 and sum(rewards.values()) == 0.0
    assert winners == {"light", "dark"}


def test_observations_are_from_each_agents_side():
    game = raw_env(rules="finkel")
    game.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(15):
        game.step(int(rng.choice(np.flatnonzero(game.observe(game.agent_selection)["action_mask"]))))
    position, roll, to_move = game.position, game.roll, game.agent_selection
    other = "dark" if to_move == "light" else "light"
    geom = core.geometry(game.rules)
    expected = np.zeros(core.observation_size(game.rules), dtype=np.float32)
    core.write_observation(position.code, ("light", "dark").index(to_move), roll, geom, expected)
    assert np.array_equal(game.observe(to_move)["observation"], expected)
    core.write_observation(position.code, ("light", "dark").index(other), 0, geom, expected)
    assert np.array_equal(game.observe(other)["observation"], expected)  # no roll shown to the waiting agent
    assert game.observe(other)["action_mask"].sum() == 0
    own = game.observe(to_move)["observation"]
    assert own[: game.rules.length].sum() == len(position.pieces(to_move))


def test_extra_roll_selects_the_same_agent_again():
    game = raw_env(rules="finkel")
    game.reset(seed=0)
    # Find a moment where the agent to move can land on a rosette; it then moves again.
    rng = np.random.default_rng(2)
    for _ in range(500):
        position, roll, agent = game.position, game.roll, game.agent_selection
        rosette_moves = [m for m in position.legal_moves(roll) if position.move_result(roll, m).extra_roll]
        if rosette_moves:
            game.step(rosette_moves[0])
            if not game.terminations[agent]:
                assert game.agent_selection == agent
                return
        else:
            game.step(int(rng.choice(position.legal_moves(roll))))
        if all(game.terminations.values()):
            game.reset()
    pytest.fail("no rosette move came up in 500 decisions")


def test_bad_actions_and_arguments():
    game = env(rules="finkel")
    game.reset(seed=0)
    legal = np.flatnonzero(game.observe(game.agent_selection)["action_mask"]).tolist()
    illegal = next(a for a in range(15) if a not in legal)
    with pytest.raises(ValueError, match="legal actions"):
        game.step(illegal)
    with pytest.raises(ValueError, match="must be an integer"):
        game.step(0.5)
    with pytest.raises(RuntimeError, match="call reset"):
        raw_env().step(0)
    with pytest.raises(ValueError, match="render_mode"):
        raw_env(render_mode="video")
    with pytest.raises(ValueError, match="unknown rule set"):
        raw_env(rules="chess")


def test_same_seed_same_positions_as_the_game_core():
    game = raw_env(rules=get_rules("blitz", 3))
    game.reset(seed=9)
    assert game.position == Position.start(game.rules)
    first_roll = game.roll
    game.reset(seed=9)
    assert game.roll == first_roll


def test_self_play_example_learns_to_beat_random_play():
    from urgym.examples.selfplay_pettingzoo import new_policy, train, win_rate_against_random

    untrained = win_rate_against_random(new_policy(env(rules="finkel", pieces=3)), 400)
    trained = win_rate_against_random(train(800), 400)
    assert 0.4 < untrained < 0.6  # a random legal move against a random legal move
    assert trained > 0.6


@pytest.mark.parametrize("make", [env, raw_env], ids=["env", "raw_env"])
def test_misuse_before_reset_and_after_the_end_raises(make):
    game = make(rules="finkel", pieces=1)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before last\(\)"):
        game.last()
    game.reset(seed=3)
    for _agent in game.agent_iter():
        observation, _, termination, truncation, _ = game.last()
        game.step(None if termination or truncation else int(np.flatnonzero(observation["action_mask"])[0]))
    with pytest.raises(RuntimeError, match="the game is over"):
        game.step(0)


@pytest.mark.parametrize("seed", [2**63, 2**64 - 1])
def test_seeds_up_to_2_64_work(seed):
    game = env(rules="finkel", pieces=2)
    game.reset(seed=seed)
    assert game.last()[0]["action_mask"].any()


def test_the_environment_is_named_ur_v1():
    assert raw_env.metadata["name"] == "ur_v1"


def test_the_self_play_examples_figures_are_the_docs(capsys, monkeypatch):
    """docs/environments.md quotes the example's output; it is deterministic, so the figures must reproduce."""
    from urgym.examples.selfplay_pettingzoo import main

    monkeypatch.setattr(sys, "argv", ["selfplay_pettingzoo"])
    main()
    out = capsys.readouterr().out
    assert "before training: 46.9% against a random player" in out
    assert "after 3,000 self-play games: 68.3% against a random player" in out
