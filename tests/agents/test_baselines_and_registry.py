import gymnasium as gym
import numpy as np
import pytest
from urgym.agents import AGENTS, Agent, BaselineAgent, ExpectimaxAgent, GainAgent, PerfectAgent, make_agent, parse_spec

from tests.agents.positions import decision_positions
from urgym import Position


def test_first_and_last_move_the_least_and_most_advanced_piece():
    for position, roll in decision_positions("finkel", 30, seed=1):
        moves = position.legal_moves(roll)
        assert make_agent("first").select_move(position, roll) == min(moves)
        assert make_agent("last").select_move(position, roll) == max(moves)


def test_greedy_prefers_capture_then_rosette_then_the_most_advanced():
    greedy = make_agent("greedy")
    # Roll 3: 1 -> 4 lands on a rosette, 3 -> 6 captures dark's piece on the shared tile 6.
    capture = Position.from_pieces("finkel", light=[1, 3], dark=[6], light_home=5, dark_home=6)
    assert greedy.select_move(capture, 3) == 3
    rosette = Position.from_pieces("finkel", light=[1, 3], dark=[10], light_home=5, dark_home=6)
    assert greedy.select_move(rosette, 3) == 1
    plain = Position.from_pieces("finkel", light=[2, 6], dark=[], light_home=5)
    assert greedy.select_move(plain, 1) == 6


def test_random_is_seeded_and_covers_the_moves():
    positions = decision_positions("finkel", 40, seed=2)
    agent = make_agent("random", seed=5)
    a = [agent.select_move(p, r) for p, r in positions]
    same_seed = make_agent("random", seed=5)
    assert [same_seed.select_move(p, r) for p, r in positions] == a
    agent.reseed(5)
    assert [agent.select_move(p, r) for p, r in positions] == a
    other = make_agent("random", seed=6)
    assert a != [other.select_move(p, r) for p, r in positions]
    position, roll = positions[0]
    chosen = {make_agent("random", seed=s).select_move(position, roll) for s in range(40)}
    assert chosen == set(position.legal_moves(roll))


@pytest.mark.parametrize(
    "spec, cls, attrs",
    [
        ("expectimax", ExpectimaxAgent, {"depth": 7}),
        ("expectimax:3", ExpectimaxAgent, {"depth": 3}),
        ("expectimax:depth=5:prune=false", ExpectimaxAgent, {"depth": 5, "prune": False}),
        ("expectimax --depth 6", ExpectimaxAgent, {"depth": 6}),
        ("expectimax --depth=4 --tt-bits 12", ExpectimaxAgent, {"depth": 4}),
        ("perfect", PerfectAgent, {"epsilon": 0.0}),
        ("perfect:0.1", PerfectAgent, {"epsilon": 0.1}),
        ("perfect --epsilon 0.25 --solve false", PerfectAgent, {"epsilon": 0.25, "solve": False}),
        ("heuristic", GainAgent, {"max_moves": 2, "threats": "all"}),
        ("heuristic:threats=paper", GainAgent, {"threats": "paper"}),
        ("greedy", BaselineAgent, {"policy": "greedy"}),
    ],
)
def test_specs_build_agents(spec, cls, attrs):
    agent = make_agent(spec)
    assert isinstance(agent, cls)
    for key, value in attrs.items():
        assert getattr(agent, key) == value
    # The agent's own spec rebuilds an equal agent.
    again = make_agent(agent.spec)
    for key, value in attrs.items():
        assert getattr(again, key) == value


@pytest.mark.parametrize(
    "spec, message",
    [
        (
            "alphazero",
            "unknown agent 'alphazero'; agents: random, first, last, greedy, heuristic, expectimax, perfect, td",
        ),
        ("expectimax:deep", "depth must be int, got 'deep'"),
        ("expectimax:depth=0", "depth must be an integer from 1 to 30"),
        ("expectimax:breadth=3", "has no parameter 'breadth'; its parameters: depth, tt_bits, prune"),
        ("perfect:epsilon=2", "epsilon must be a probability"),
        ("greedy:3", "takes no main parameter"),
        ("heuristic:threats=none", "threats must be one of all, paper"),
        ("expectimax:3:4", "should be key=value"),
        ("", "non-empty"),
    ],
)
def test_bad_specs_say_what_exists(spec, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        make_agent(spec)


def test_parse_spec_forms_agree():
    assert parse_spec("expectimax:7") == ("expectimax", {"": "7"})
    assert parse_spec("expectimax --depth 7") == ("expectimax", {"depth": "7"})
    assert parse_spec("expectimax:depth=7") == ("expectimax", {"depth": "7"})


def test_every_registered_agent_plays_legal_moves():
    # The learned agents' shipped models play 5 or 7 pieces; tests/evaluation/test_training.py and
    # tests/agents/test_valuenet.py play them.
    positions = decision_positions("finkel", 5, seed=9, pieces=3)
    for name in (a for a in AGENTS if a not in ("td", "ppo", "neural")):
        agent = make_agent(name, seed=1)
        assert isinstance(agent, Agent)
        for position, roll in positions:
            assert agent.select_move(position, roll) in position.legal_moves(roll)


def test_an_agent_passes_through_make_agent():
    agent = ExpectimaxAgent(depth=2)
    assert make_agent(agent) is agent


def test_environment_opponent_from_a_spec():
    env = gym.make("urgym/Ur-v2", rules="finkel", pieces=3, opponent="expectimax:2")
    rewards = []
    for seed in range(3):
        _, info = env.reset(seed=seed)
        done = False
        while not done:
            action = int(np.flatnonzero(info["action_mask"])[0])
            _obs, reward, done, _, info = env.step(action)
        rewards.append(reward)
    assert set(rewards) <= {-1.0, 1.0}
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        gym.make("urgym/Ur-v2", opponent="nobody")


def test_environment_reseeds_a_random_agent_opponent():
    def episode(seed):
        env = gym.make("urgym/Ur-v2", pieces=2, opponent=make_agent("random"))
        obs, info = env.reset(seed=seed)
        trace = [obs.tobytes()]
        done = False
        while not done:
            obs, _, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
            trace.append(obs.tobytes())
        return trace

    assert episode(4) == episode(4)
