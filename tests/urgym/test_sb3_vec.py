"""stable-baselines3 on the native vector environment (SB3VecEnv) and sampling policies over legal actions."""

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from sb3_contrib import MaskablePPO
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor
from urgym.agents.outside.policies import sample_legal

from urgym import core
from urgym.env import UrEnv
from urgym.sb3 import SB3VecEnv
from urgym.vector import UrVectorEnv


def legal_actions(masks, rng):
    return np.array([rng.choice(np.flatnonzero(row)) for row in masks])


@pytest.mark.parametrize(
    "kwargs",
    [
        {"opponent": "greedy", "agent_side": "random"},
        {"opponent": "perfect:epsilon=0.2", "pieces": 2},
        {"illegal_action": "replace", "illegal_penalty": 0.1, "pieces": 3},
    ],
)
def test_sb3_vec_env_equals_dummy_vec_env(kwargs):
    """Same seeds, same actions: SB3VecEnv gives DummyVecEnv(UrEnv)'s observations, rewards, dones and infos."""
    from urgym import agents  # noqa: F401  (registers 'perfect')

    n = 5
    ours = SB3VecEnv(num_envs=n, **kwargs)
    theirs = DummyVecEnv([lambda: UrEnv(**kwargs) for _ in range(n)])
    ours.seed(3)
    theirs.seed(3)
    obs, obs_theirs = ours.reset(), theirs.reset()
    assert np.array_equal(obs, obs_theirs)
    rng = np.random.default_rng(0)
    dones_seen = illegal_seen = 0
    for t in range(600):
        masks = ours.env_method("action_masks")
        assert np.array_equal(masks, np.stack(theirs.env_method("action_masks")))
        actions = legal_actions(masks, rng)
        if kwargs.get("illegal_action") == "replace" and t % 3 == 0:
            actions[t % n] = 0 if not masks[t % n, 0] else ours.action_space.n - 1
        obs, rewards, dones, infos = ours.step(actions)
        obs_theirs, rewards_theirs, dones_theirs, infos_theirs = theirs.step(actions)
        assert np.array_equal(obs, obs_theirs) and np.array_equal(rewards, rewards_theirs)
        assert np.array_equal(dones, dones_theirs)
        for i in range(n):
            assert ("terminal_observation" in infos[i]) == dones[i]
            if dones[i]:
                assert np.array_equal(infos[i]["terminal_observation"], infos_theirs[i]["terminal_observation"])
                assert infos[i]["TimeLimit.truncated"] is False
            assert infos[i].get("illegal_action", False) == infos_theirs[i].get("illegal_action", False)
        dones_seen += int(dones.sum())
        illegal_seen += sum(info.get("illegal_action", False) for info in infos)
    assert dones_seen > n
    assert illegal_seen > 0 or kwargs.get("illegal_action") != "replace"


def test_sb3_vec_env_needs_same_step_autoreset():
    with pytest.raises(ValueError, match="SAME_STEP"):
        SB3VecEnv(UrVectorEnv(num_envs=2))
    with pytest.raises(ValueError, match="not both"):
        SB3VecEnv(UrVectorEnv(num_envs=2), opponent="greedy")


def test_maskable_ppo_and_plain_ppo_learn_on_the_native_vector_env():
    env = VecMonitor(SB3VecEnv(num_envs=16, pieces=2, opponent="random"))
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=128, n_epochs=1, seed=0, device="cpu")
    model.learn(1024)
    assert model.num_timesteps >= 1024 and len(model.ep_info_buffer) > 0
    plain = VecMonitor(
        SB3VecEnv(num_envs=16, pieces=2, opponent="random", illegal_action="replace", illegal_penalty=0.05)
    )
    model = PPO("MlpPolicy", plain, n_steps=32, batch_size=128, n_epochs=1, seed=0, device="cpu")
    model.learn(1024)
    assert model.num_timesteps >= 1024 and len(model.ep_info_buffer) > 0


def test_sample_legal_draws_legal_actions_with_softmax_frequencies():
    scores = np.array([[0.0, np.log(3.0), 5.0, 0.0]] * 20000)
    masks = np.array([[True, True, False, False]] * 20000)
    rngs = np.zeros((20000, 1), dtype=np.uint64)
    for i in range(len(rngs)):
        core.seed_stream(rngs[i], np.uint64(7), np.uint64(i))
    out = np.zeros(20000, dtype=np.int64)
    sample_legal(scores, masks, rngs, out)
    assert set(out.tolist()) == {0, 1}  # the high-scoring illegal action is never drawn
    assert abs(np.mean(out == 1) - 0.75) < 0.015  # exp(log 3) / (1 + 3)
    again = np.zeros_like(out)
    rngs2 = np.zeros_like(rngs)
    for i in range(len(rngs2)):
        core.seed_stream(rngs2[i], np.uint64(7), np.uint64(i))
    sample_legal(scores, masks, rngs2, again)
    assert np.array_equal(out, again)  # each row's draw comes from its own stream
