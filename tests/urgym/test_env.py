import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import urgym
from urgym.env import UrEnv


def masked_random_episode(env, seed, rng_seed=0):
    rng = np.random.default_rng(rng_seed)
    obs, info = env.reset(seed=seed)
    trace = [obs]
    while True:
        action = rng.choice(np.flatnonzero(info["action_mask"]))
        obs, reward, terminated, truncated, info = env.step(action)
        trace.append(obs)
        if terminated or truncated:
            return np.array(trace), reward, info


@pytest.mark.parametrize("rules", ["finkel", "masters", "murray"])
def test_check_env_passes(rules):
    env = gym.make("urgym/Ur-v2", rules=rules, pieces=3, render_mode="rgb_array")
    check_env(env.unwrapped)


def test_make_uses_registered_id_and_rules():
    env = gym.make("urgym/Ur-v2", rules="blitz", opponent="greedy")
    assert env.unwrapped.rules.name == "blitz"
    assert env.action_space.n == 17 and env.observation_space.shape == (2 * 16 + 8,)


def test_seeded_episodes_repeat_exactly():
    env = gym.make("urgym/Ur-v2", rules="finkel", agent_side="random")
    a = masked_random_episode(env, seed=5)
    b = masked_random_episode(env, seed=5)
    c = masked_random_episode(env, seed=6)
    assert np.array_equal(a[0], b[0]) and a[1] == b[1]
    assert not (len(a[0]) == len(c[0]) and np.array_equal(a[0], c[0]))


@pytest.mark.parametrize("side", ["light", "dark"])
def test_mask_and_observation_match_the_position(side):
    env = UrEnv(rules="finkel", pieces=4, agent_side=side, opponent="greedy")
    obs, info = env.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(200):
        pos = env.position
        assert pos.turn == side
        legal = pos.legal_moves(info["roll"])
        assert info["legal_moves"] == list(legal)
        assert np.flatnonzero(env.action_masks()).tolist() == list(legal)
        assert np.array_equal(info["action_mask"], env.action_masks())
        length = env.rules.length
        opponent = "dark" if side == "light" else "light"
        assert np.flatnonzero(obs[:length]).tolist() == [p - 1 for p in pos.pieces(side)]
        assert np.flatnonzero(obs[length : 2 * length]).tolist() == [p - 1 for p in pos.pieces(opponent)]
        assert obs[2 * length] == pos.home(side) / 4 and obs[2 * length + 3] == pos.scored(opponent) / 4
        assert obs[2 * length + 3 + info["roll"]] == 1 and obs[2 * length + 4 :].sum() == 1
        obs, reward, terminated, _, info = env.step(rng.choice(legal))
        if terminated:
            assert reward == (1.0 if info["winner"] == side else -1.0)
            assert env.position.winner == info["winner"]
            # the documented rule for an ended episode: an all-ones mask, no legal move, no roll
            assert env.action_masks().all() and info["action_mask"].all() and info["legal_moves"] == []
            assert info["roll"] == 0 and obs[2 * length + 4 :].sum() == 0
            obs, info = env.reset()


def test_random_side_gives_both_sides():
    env = UrEnv(agent_side="random")
    sides = {env.reset(seed=s)[1]["agent_side"] for s in range(20)}
    assert sides == {"light", "dark"}


def test_rewards_over_many_episodes_favour_the_stronger_side():
    env = UrEnv(rules="finkel", pieces=3, opponent="random")
    wins = 0
    for seed in range(60):
        env.reset(seed=seed)
        while True:  # greedy-ish agent: always the most advanced piece that can move
            _, reward, terminated, _, _ = env.step(np.flatnonzero(env.action_masks())[-1])
            if terminated:
                wins += reward > 0
                assert reward in (1.0, -1.0)
                break
    assert wins > 30


def test_illegal_action_ends_the_episode_as_a_loss():
    env = UrEnv()
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated) == (-1.0, True, False)
    assert info["illegal_action"] and info["winner"] == "dark"
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(0)


def test_illegal_action_can_raise():
    env = UrEnv(illegal_action="raise")
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.raises(ValueError, match=r"illegal action .* legal actions: \[0\]"):
        env.step(illegal)


def test_callable_and_agent_opponents():
    calls = []

    def last_piece(position, roll):
        calls.append((position.turn, roll))
        return position.legal_moves(roll)[-1]

    env = UrEnv(pieces=2, opponent=last_piece)
    masked_random_episode(env, seed=3)
    assert calls and all(turn == "dark" for turn, _ in calls)

    class Agent:
        def select_move(self, position, roll):
            return position.legal_moves(roll)[0]

    masked_random_episode(UrEnv(pieces=2, opponent=Agent(), agent_side="dark"), seed=4)

    env = UrEnv(pieces=2, opponent=lambda position, roll: 99)
    with pytest.raises(ValueError, match="the opponent chose illegal move 99"):
        masked_random_episode(env, seed=3)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(opponent="smart"), "bad opponent 'smart': unknown agent 'smart'; agents: random, first, last"),
        (dict(rules="go"), "unknown rule set 'go'"),
        (dict(agent_side="white"), "agent_side must be one of"),
        (dict(illegal_action="ignore"), "illegal_action must be one of"),
        (dict(render_mode="video"), "render_mode must be one of"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        UrEnv(**kwargs)


def test_render_modes(capsys):
    text = UrEnv(render_mode="ansi")
    text.reset(seed=0)
    assert "light to move" in text.render() and "legal moves [0]" in text.render()
    image = UrEnv(render_mode="rgb_array")
    image.reset(seed=0)
    frame = image.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    masked_random_episode(image, seed=0)
    assert not np.array_equal(image.render(), frame)  # pieces moved
    human = UrEnv(render_mode="human")
    human.reset(seed=0)
    assert "light to move" in capsys.readouterr().out


def test_make_vec_steps_with_masks():
    envs = gym.make_vec("urgym/Ur-v2", num_envs=3, vectorization_mode="sync", rules="finkel", pieces=2)
    obs, infos = envs.reset(seed=7)
    assert obs.shape == (3, 36)
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(300):
        masks = infos["action_mask"]
        actions = [rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks]
        obs, rewards, terminated, _, infos = envs.step(actions)
        finished += int(terminated.sum())
        assert set(np.unique(rewards)) <= {-1.0, 0.0, 1.0}
    assert finished > 0
    envs.close()


def test_package_registers_the_environment():
    assert "urgym/Ur-v2" in gym.registry
    assert urgym.__version__


@pytest.mark.parametrize("old", ["urgym/Ur-v0", "urgym/Ur-v1"])
def test_the_old_ids_are_refused_with_the_new_one_named(old):
    assert old not in gym.registry
    with pytest.warns(DeprecationWarning), pytest.raises(gym.error.DeprecatedEnv, match="urgym/Ur-v2"):
        gym.make(old)


def test_spec_opponents_resolve_through_the_entry_point_without_urgym_importing_agents():
    """Urgym never imports agents; a spec opponent is built by the resolver agents registers (entry point)."""
    import subprocess
    import sys

    code = (
        "import sys, gymnasium as gym, urgym\n"
        "assert 'agents' not in sys.modules\n"
        "env = gym.make('urgym/Ur-v2', opponent='expectimax:1')\n"
        "env.reset(seed=0)\n"
        "print(type(env.unwrapped._opponent_agent).__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ExpectimaxAgent"


def test_float_actions_are_refused_not_rounded():
    env = UrEnv("finkel")
    env.reset(seed=0)
    for bad in (0.7, -0.5, np.float32(0.2)):
        with pytest.raises(ValueError, match="must be an integer"):
            env.step(bad)
    _, _, _, _, info = env.step(np.array(int(np.flatnonzero(env.action_masks())[0])))  # a 0-d integer array is fine
    assert not info["illegal_action"]


def test_an_opponent_that_cannot_play_the_rules_fails_at_construction():
    import gymnasium as gym

    with pytest.raises(ValueError, match="too large to solve"):
        gym.make("urgym/Ur-v2", rules="murray", opponent="perfect")
    with pytest.raises(ValueError, match="TD model was trained on"):
        gym.make("urgym/Ur-v2", rules="finkel", pieces=3, opponent="td")


@pytest.mark.parametrize("make", ["env", "vector"])
def test_a_perfect_opponents_table_is_had_when_the_environment_is_made_never_in_a_step(tmp_path, monkeypatch, make):
    """A missing table is refused (solve=false) or solved when the environment is made (issue 42)."""
    from urgym.agents import PerfectAgent
    from urgym.solver import is_cached
    from urgym.solver.cache import TableMissingError

    from urgym.vector import UrVectorEnv

    monkeypatch.setenv("URGYM_CACHE", str(tmp_path))  # an empty cache
    rules = urgym.get_rules("finkel", 1)

    def build(agent):
        return UrEnv(rules=rules, opponent=agent) if make == "env" else UrVectorEnv(2, rules=rules, opponent=agent)

    with pytest.raises(TableMissingError, match="solve --rules finkel --pieces 1"):
        build(PerfectAgent(solve=False))
    assert not is_cached(rules)
    built = build(PerfectAgent(solve=True))
    assert is_cached(rules)  # solved now, before the first reset or step
    built.close()


@pytest.mark.parametrize("illegal_action", ["loss", "replace"])
def test_action_space_sample_takes_the_info_mask_through_every_episode_end(illegal_action):
    """Gymnasium's ``sample(mask=...)`` wants int8; an ended episode's all-ones mask keeps it (and softmax) defined."""
    env = gym.make("urgym/Ur-v2", pieces=2, opponent="greedy", illegal_action=illegal_action)
    _, info = env.reset(seed=3)
    env.action_space.seed(3)
    ends = 0
    for _ in range(400):
        mask = info["action_mask"]
        assert mask.dtype == np.int8 and set(np.unique(mask)) <= {0, 1}
        action = env.action_space.sample(mask=mask)
        if info["legal_moves"]:
            assert action in info["legal_moves"]
            _, _, terminated, _, info = env.step(action)
        else:
            terminated = True
        if terminated:
            assert info["action_mask"].all() and info["legal_moves"] == [] and info["roll"] == 0
            env.action_space.sample(mask=info["action_mask"])  # Gymnasium accepts the ended mask too
            logits = np.where(info["action_mask"] == 1, 0.0, -np.inf)  # a masked softmax stays finite
            assert np.isfinite(np.exp(logits) / np.exp(logits).sum()).all()
            ends += 1
            _, info = env.reset()
    assert ends > 10


def test_sb3_contrib_masked_categorical_survives_the_terminal_mask():
    """MaskablePPO's distribution over the mask ``action_masks()`` gives at an episode's end (all True)."""
    torch = pytest.importorskip("torch", reason="the learn extra (torch, sb3-contrib) is not installed")
    distributions = pytest.importorskip("sb3_contrib.common.maskable.distributions")
    env = UrEnv(pieces=1, opponent="first")
    _, info = env.reset(seed=0)
    while info["legal_moves"]:
        _, _, terminated, _, info = env.step(info["legal_moves"][0])
    assert terminated and env.action_masks().dtype == bool
    dist = distributions.MaskableCategoricalDistribution(env.action_space.n)
    dist.proba_distribution(torch.zeros(1, env.action_space.n))
    dist.apply_masking(env.action_masks()[None])
    assert torch.isfinite(dist.entropy()).all() and 0 <= int(dist.sample()[0]) < env.action_space.n


def test_self_play_through_gym_make_plays_both_sides_from_the_movers_view():
    """``opponent="self"`` in ``gymnasium.make``: every decision is a step, seen by the side that makes it."""
    from urgym.game import Game

    env = gym.make("urgym/Ur-v2", pieces=3, opponent="self")
    for seed in range(4):
        _, info = env.reset(seed=seed)
        game = Game("finkel", seed=seed, game=0, pieces=3)
        sides = set()
        while True:
            assert info["agent_side"] == game.turn and info["player"] == ("light", "dark").index(game.turn)
            assert info["legal_moves"] == list(game.legal_moves) and info["roll"] == game.roll
            sides.add(info["player"])
            mover, move = game.turn, game.legal_moves[-1]
            _, reward, terminated, _, info = env.step(move)
            game.play(move)
            if terminated:
                assert game.is_over and game.winner == mover and reward == 1.0 and info["winner"] == mover
                break
            assert reward == 0.0
        assert sides == {0, 1}
    with pytest.raises(ValueError, match="self-play"):
        gym.make("urgym/Ur-v2", opponent="self", agent_side="dark")
    check_env(gym.make("urgym/Ur-v2", pieces=3, opponent="self").unwrapped)
