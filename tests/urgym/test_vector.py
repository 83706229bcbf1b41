"""The native vector environment: equal to Gymnasium's SyncVectorEnv over UrEnv, transition by transition."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers.vector import RecordEpisodeStatistics

from urgym import agents  # noqa: F401  (registers the agent specs the opponents name)
from urgym.env import UrEnv
from urgym.game import Game
from urgym.vector import UrVectorEnv

INFO_KEYS = ("action_mask", "roll", "agent_side", "illegal_action", "winner", "player")


def random_actions(info, rng, n, illegal_rate=0.05, actions=8):
    """A legal action at random where one exists, and now and then an arbitrary one (often illegal)."""
    chosen = np.array([rng.choice(np.flatnonzero(row)) for row in info["action_mask"]])  # any action once ended
    if rng.random() < illegal_rate:
        chosen[rng.integers(n)] = rng.integers(0, actions)
    return chosen


def expected_observation(position, roll):
    """The observation layout docs/environments.md documents, written from the position's public accessors."""
    length, pieces = position.rules.length, position.rules.pieces
    mover = position.turn
    other = "dark" if mover == "light" else "light"
    obs = np.zeros(2 * length + 4 + position.rules.max_roll, dtype=np.float32)
    for p in position.pieces(mover):
        obs[p - 1] = 1
    for p in position.pieces(other):
        obs[length + p - 1] = 1
    obs[2 * length : 2 * length + 4] = (
        np.array([position.home(mover), position.home(other), position.scored(mover), position.scored(other)]) / pieces
    )
    obs[2 * length + 3 + roll] = 1
    return obs


def assert_same_info(ours, theirs, where):
    for key in INFO_KEYS:
        assert (key in ours) == (key in theirs), (where, key)
        if key in theirs:
            present = theirs[f"_{key}"]
            assert np.array_equal(ours[f"_{key}"], present), (where, key)
            assert np.array_equal(np.asarray(ours[key])[present], np.asarray(theirs[key])[present]), (where, key)


def assert_same_games(n=6, steps=1500, seed=7, illegal_rate=0.05, **kwargs):
    """Step UrVectorEnv and SyncVectorEnv(UrEnv) with the same actions; every output must be equal."""
    ours = UrVectorEnv(num_envs=n, **kwargs)
    kwargs.pop("autoreset_mode", None)
    limit = kwargs.pop("max_episode_steps", None)

    def single():
        return UrEnv(**kwargs) if limit is None else gym.wrappers.TimeLimit(UrEnv(**kwargs), limit)

    theirs = gym.vector.SyncVectorEnv([single for _ in range(n)], autoreset_mode=ours.autoreset_mode)
    obs, info = ours.reset(seed=seed)
    obs_theirs, info_theirs = theirs.reset(seed=seed)
    assert np.array_equal(obs, obs_theirs)
    assert_same_info(info, info_theirs, "reset")
    rng = np.random.default_rng(seed)
    ended = 0
    for t in range(steps):
        actions = random_actions(info, rng, n, illegal_rate, ours.single_action_space.n)
        mine, other = ours.step(actions), theirs.step(actions)
        for k, name in enumerate(("obs", "reward", "terminated", "truncated")):
            assert np.array_equal(mine[k], other[k]), (t, name, mine[k], other[k])
        info, info_theirs = mine[4], other[4]
        assert_same_info(info, info_theirs, t)
        assert ("final_info" in info) == ("final_info" in info_theirs)
        if "final_info" in info:
            assert np.array_equal(info["_final_obs"], info_theirs["_final_obs"])
            for j in np.flatnonzero(info["_final_obs"]):
                assert np.array_equal(info["final_obs"][j], info_theirs["final_obs"][j])
            assert_same_info(info["final_info"], info_theirs["final_info"], (t, "final_info"))
        ended += int((mine[2] | mine[3]).sum())
    assert ended > n  # several episodes ended, so autoreset was exercised


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"agent_side": "random"},
        {"agent_side": "dark", "illegal_action": "replace", "illegal_penalty": 0.1},
        {"opponent": "greedy", "pieces": 1, "agent_side": "random"},
        {"opponent": "last", "rules": "masters", "pieces": 3},
        {"rules": "blitz", "pieces": 2, "agent_side": "random"},
        {"pieces": 1, "agent_side": "random", "autoreset_mode": AutoresetMode.SAME_STEP},
        {"agent_side": "random", "illegal_action": "replace", "autoreset_mode": AutoresetMode.SAME_STEP},
        {"opponent": "self", "pieces": 3},
        {"opponent": "self", "pieces": 2, "rules": "masters", "autoreset_mode": AutoresetMode.SAME_STEP},
    ],
    ids=lambda kwargs: ",".join(f"{k}={v}" for k, v in kwargs.items()) or "default",
)
def test_equals_sync_vector_env_with_built_in_opponents(kwargs):
    assert_same_games(**kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"opponent": "perfect", "pieces": 2, "agent_side": "random"},
        {"opponent": "perfect:epsilon=0.3", "pieces": 2, "agent_side": "random"},
        {
            "opponent": "perfect:epsilon=0.3",
            "pieces": 2,
            "agent_side": "random",
            "autoreset_mode": AutoresetMode.SAME_STEP,
        },
        {"opponent": "expectimax:2", "pieces": 2, "agent_side": "random", "steps": 300},
        {"opponent": "heuristic", "pieces": 3, "agent_side": "dark", "steps": 500},
    ],
    ids=lambda kwargs: ",".join(f"{k}={v}" for k, v in kwargs.items()),
)
def test_equals_sync_vector_env_with_agents(kwargs):
    assert_same_games(**{"steps": 800, **kwargs})


def test_callable_and_per_environment_opponents_equal_sync_vector_env():
    def highest(position, roll):
        return max(position.legal_moves(roll))

    opponents = ["random", highest, "perfect:epsilon=0.2", "greedy", highest, "first"]
    ours = UrVectorEnv(num_envs=6, pieces=2, opponent=opponents, agent_side="random")
    theirs = gym.vector.SyncVectorEnv([lambda o=o: UrEnv(pieces=2, opponent=o, agent_side="random") for o in opponents])
    obs, info = ours.reset(seed=3)
    assert np.array_equal(obs, theirs.reset(seed=3)[0])
    rng = np.random.default_rng(0)
    for t in range(600):
        actions = random_actions(info, rng, 6)
        mine, other = ours.step(actions), theirs.step(actions)
        for k in range(4):
            assert np.array_equal(mine[k], other[k]), (t, k)
        info = mine[4]
        assert_same_info(info, other[4], t)


def test_make_vec_builds_the_native_vector_env():
    env = gym.make_vec("urgym/Ur-v2", num_envs=4, rules="blitz", opponent="greedy")
    assert isinstance(env, UrVectorEnv) and env.rules.name == "blitz" and env.num_envs == 4
    env = gym.make_vec("urgym/Ur-v2", num_envs=4, vectorization_mode="vector_entry_point")
    assert isinstance(env, UrVectorEnv)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (4, 2 * 14 + 4 + 4) and obs.dtype == np.float32
    assert env.observation_space.contains(obs)
    sync = gym.make_vec("urgym/Ur-v2", num_envs=2, vectorization_mode="sync")
    assert isinstance(sync, gym.vector.SyncVectorEnv)


def test_next_step_autoreset_ignores_the_action_and_starts_the_next_game():
    env = UrVectorEnv(num_envs=3, pieces=1)
    obs, info = env.reset(seed=11)
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(400):
        obs, rewards, terminated, _, info = env.step(random_actions(info, rng, 3, 0))
        for i in np.flatnonzero(terminated):
            assert rewards[i] in (-1.0, 1.0) and info["winner"][i] in ("light", "dark")
            assert info["action_mask"][i].all() and info["roll"][i] == 0  # an ended episode's all-ones mask
            # whatever the action, the next step starts a new episode there: reward 0, a decision again
            actions = random_actions(info, rng, 3, 0)
            actions[i] = 99
            obs, rewards, terminated, _, info = env.step(actions)
            assert rewards[i] == 0 and not terminated[i] and 0 < info["action_mask"][i].sum() < 5
            assert obs[i, 2 * env.rules.length] == 1.0  # the one piece is at home again
            checked += 1
            break
    assert checked > 5


def test_masks_match_every_position_and_observation():
    env = UrVectorEnv(num_envs=5, rules="masters", pieces=4, opponent="greedy", agent_side="random")
    obs, info = env.reset(seed=2)
    rng = np.random.default_rng(2)
    for _ in range(150):
        masks = env.action_masks()
        assert masks.dtype == bool and info["action_mask"].dtype == np.int8
        assert np.array_equal(masks, info["action_mask"])
        for i in range(env.num_envs):
            position = env.position(i)
            if info["roll"][i] == 0:
                assert masks[i].all() and position.is_over  # the ended episode's all-ones mask
                continue
            side = int(env.agent_sides[i])
            assert position.turn == ("light", "dark")[side] == info["agent_side"][i]
            assert np.flatnonzero(masks[i]).tolist() == list(position.legal_moves(int(info["roll"][i])))
            assert np.array_equal(obs[i], expected_observation(position, int(info["roll"][i])))
        obs, _, _, _, info = env.step(random_actions(info, rng, 5, 0))


def test_self_play_observes_from_the_mover_side_and_follows_the_game():
    """With opponent='self' every decision is a step; environment i plays urgym.Game's games of seed s + i."""
    n, seed = 4, 20
    env = UrVectorEnv(num_envs=n, pieces=3, opponent="self")
    games = [Game("finkel", seed=seed + i, game=0, pieces=3) for i in range(n)]
    played = [0] * n
    obs, info = env.reset(seed=seed)
    seen_sides = set()
    for _ in range(600):
        actions = np.zeros(n, dtype=np.int64)
        for i, game in enumerate(games):
            if info["roll"][i] == 0:  # ended: the next step starts the next game
                continue
            assert info["player"][i] == ("light", "dark").index(game.turn) == env.agent_sides[i]
            assert info["agent_side"][i] == game.turn and info["roll"][i] == game.roll
            assert np.array_equal(obs[i], expected_observation(game.position, game.roll))
            seen_sides.add(int(info["player"][i]))
            actions[i] = game.legal_moves[0]
        acting = info["roll"] > 0  # an ended environment's step starts its next game
        obs, rewards, terminated, _, info = env.step(actions)
        for i in np.flatnonzero(acting):
            mover = games[i].turn
            games[i].play(int(actions[i]))
            if games[i].is_over:
                assert terminated[i] and rewards[i] == 1.0 and games[i].winner == mover
                played[i] += 1
                games[i] = Game("finkel", seed=seed + i, game=played[i], pieces=3)
            else:
                assert not terminated[i] and rewards[i] == 0.0
    assert seen_sides == {0, 1} and sum(played) > n


def test_self_play_refuses_a_side_and_a_mixture():
    with pytest.raises(ValueError, match="self-play"):
        UrVectorEnv(num_envs=2, opponent="self", agent_side="dark")
    with pytest.raises(ValueError, match="every environment or none"):
        UrVectorEnv(num_envs=2, opponent=["self", "random"])
    with pytest.raises(ValueError, match="one per environment"):
        UrVectorEnv(num_envs=3, opponent=["random", "greedy"])


def test_illegal_action_raise_plays_nothing():
    env = UrVectorEnv(num_envs=3, illegal_action="raise")
    _, info = env.reset(seed=4)
    before = [env.position(i).code for i in range(3)]
    actions = np.array([np.flatnonzero(row)[0] for row in info["action_mask"]])
    bad = next(a for a in range(env.single_action_space.n) if not info["action_mask"][1, a])
    actions[1] = bad
    with pytest.raises(ValueError, match=f"illegal action {bad} in environment 1"):
        env.step(actions)
    assert [env.position(i).code for i in range(3)] == before


def test_illegal_action_replace_plays_the_nearest_legal_move_and_flags_it():
    """Twin environments on one seed: one gets illegal actions, the other the move the rule says replaces them.

    The games stay equal and only the flag and the penalty differ.
    """
    kwargs = {"num_envs": 16, "opponent": "greedy", "agent_side": "random", "illegal_action": "replace"}
    replaced_env, twin = UrVectorEnv(illegal_penalty=0.25, **kwargs), UrVectorEnv(**kwargs)
    obs, info = replaced_env.reset(seed=8)
    twin.reset(seed=8)
    rng = np.random.default_rng(3)
    replaced = 0
    for _ in range(300):
        masks, playing = info["action_mask"], info["roll"] > 0  # an ended game's step ignores its action
        actions = rng.integers(-2, replaced_env.single_action_space.n + 2, size=16)
        expected = actions.copy()
        for i in np.flatnonzero(playing):
            legal = np.flatnonzero(masks[i])
            inside = 0 <= actions[i] < masks.shape[1]
            if not (inside and masks[i, actions[i]]):
                expected[i] = legal[np.argmin(np.abs(legal - actions[i]))]  # argmin: the lower on a tie
        obs, rewards, terminated, _, info = replaced_env.step(actions)
        twin_obs, twin_rewards, twin_terminated, _, twin_info = twin.step(expected)
        flagged = info["illegal_action"]
        assert np.array_equal(flagged, (actions != expected) & playing)
        assert not twin_info["illegal_action"].any()
        assert np.array_equal(obs, twin_obs) and np.array_equal(terminated, twin_terminated)
        assert np.allclose(rewards, twin_rewards - 0.25 * flagged)
        replaced += int(flagged.sum())
    assert replaced > 100


def test_single_env_replace_mode_matches_the_rule():
    env, twin = UrEnv(illegal_action="replace", illegal_penalty=0.5), UrEnv(illegal_action="replace")
    _, info = env.reset(seed=9)
    twin.reset(seed=9)
    flagged = 0
    for action in np.random.default_rng(0).integers(0, env.action_space.n, size=2000):
        legal = np.array(info["legal_moves"])
        expected = int(legal[np.argmin(np.abs(legal - action))])
        obs, reward, terminated, _, info = env.step(int(action))
        twin_obs, twin_reward, _, _, twin_info = twin.step(expected)
        assert info["illegal_action"] == (expected != action) and not twin_info["illegal_action"]
        assert np.array_equal(obs, twin_obs) and reward == twin_reward - 0.5 * (expected != action)
        flagged += expected != action
        if terminated:
            _, info = env.reset()  # both draw the next dice seed from equal generators
            twin.reset()
    assert flagged > 200


def test_max_episode_steps_truncates_as_time_limit_does():
    assert_same_games(n=4, steps=300, max_episode_steps=7, agent_side="random", opponent="greedy")


def test_seeding_repeats_and_data_is_not_reused():
    def run(seed):
        env = UrVectorEnv(num_envs=8, agent_side="random", opponent="random")
        obs, info = env.reset(seed=seed)
        trace = [obs.copy()]
        rng = np.random.default_rng(0)
        outputs = []
        for _ in range(100):
            step = env.step(random_actions(info, rng, 8, 0))
            outputs.append(step)
            info = step[4]
            trace.append(step[0].copy())
        # the arrays of one step are not overwritten by the next (Gymnasium's data_equivalence check)
        assert not any(outputs[k][0] is outputs[k + 1][0] for k in range(len(outputs) - 1))
        assert np.array_equal(outputs[0][0], trace[1])
        return np.array(trace)

    assert np.array_equal(run(5), run(5))
    assert not np.array_equal(run(5), run(6))


def test_partial_reset_and_seed_list():
    env = UrVectorEnv(num_envs=3)
    obs, _ = env.reset(seed=[10, None, 12])
    single = UrEnv()
    assert np.array_equal(obs[0], single.reset(seed=10)[0]) and np.array_equal(obs[2], single.reset(seed=12)[0])
    mask = np.array([False, True, False])
    again, info = env.reset(seed=[None, 10, None], options={"reset_mask": mask})
    assert np.array_equal(again[1], obs[0]) and np.array_equal(again[[0, 2]], obs[[0, 2]])
    assert np.array_equal(info["_roll"], mask)
    with pytest.raises(ValueError, match="reset_mask"):
        env.reset(options={"reset_mask": np.zeros(3, bool)})
    with pytest.raises(ValueError, match="seed must be"):
        env.reset(seed=[1, 2])


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="num_envs"):
        UrVectorEnv(num_envs=0)
    with pytest.raises(ValueError, match="autoreset_mode"):
        UrVectorEnv(num_envs=2, autoreset_mode="disabled")
    with pytest.raises(ValueError, match="illegal_action"):
        UrVectorEnv(num_envs=2, illegal_action="ignore")
    with pytest.raises(ValueError, match="unknown agent"):
        UrVectorEnv(num_envs=2, opponent="nobody")
    env = UrVectorEnv(num_envs=2)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(2, dtype=np.int64))
    env.reset(seed=0)
    with pytest.raises(ValueError, match="2 integers"):
        env.step(np.zeros(3, dtype=np.int64))


def test_gymnasium_vector_wrappers_and_render():
    env = RecordEpisodeStatistics(UrVectorEnv(num_envs=4, pieces=1, opponent="greedy", render_mode="ansi"))
    _, info = env.reset(seed=0)
    frames = env.render()
    assert len(frames) == 4 and all(isinstance(f, str) and "roll" in f for f in frames)
    rng = np.random.default_rng(0)
    episodes = 0
    for _ in range(300):
        _, _, _, _, info = env.step(random_actions(info, rng, 4, 0))
        if "episode" in info:
            done = info["_episode"]
            episodes += int(done.sum())
            assert set(np.abs(info["episode"]["r"][done]).tolist()) <= {1.0}
    assert episodes > 10


def test_same_step_truncation_equals_time_limit():
    assert_same_games(n=4, steps=300, max_episode_steps=5, agent_side="random", autoreset_mode=AutoresetMode.SAME_STEP)


@pytest.mark.parametrize("kwargs", [{}, {"opponent": "self"}, {"max_episode_steps": 9}], ids=str)
def test_disabled_autoreset_equals_sync_vector_env(kwargs):
    """``AutoresetMode.DISABLED``: ended games wait for ``reset_mask``; stepping one is refused, as by SyncVectorEnv."""
    n, seed = 5, 13
    ours = UrVectorEnv(num_envs=n, pieces=3, autoreset_mode=AutoresetMode.DISABLED, **kwargs)
    limit = kwargs.get("max_episode_steps")
    single_kwargs = {k: v for k, v in kwargs.items() if k != "max_episode_steps"}

    def single():
        env = UrEnv(pieces=3, **single_kwargs)
        return env if limit is None else gym.wrappers.TimeLimit(env, limit)

    theirs = gym.vector.SyncVectorEnv([single] * n, autoreset_mode=AutoresetMode.DISABLED)
    obs, info = ours.reset(seed=seed)
    assert np.array_equal(obs, theirs.reset(seed=seed)[0])
    rng = np.random.default_rng(seed)
    resets = 0
    for t in range(400):
        actions = random_actions(info, rng, n, 0)
        mine, other = ours.step(actions), theirs.step(actions)
        for k in range(4):
            assert np.array_equal(mine[k], other[k]), (t, k)
        info = mine[4]
        assert_same_info(info, other[4], t)
        ended = mine[2] | mine[3]
        if ended.any():
            with pytest.raises(RuntimeError, match="reset_mask"):
                ours.step(random_actions(info, rng, n, 0))
            obs, info = ours.reset(options={"reset_mask": ended})
            obs_theirs, info_theirs = theirs.reset(options={"reset_mask": ended})
            assert np.array_equal(obs, obs_theirs)
            assert_same_info(info, info_theirs, (t, "reset"))
            resets += 1
    assert resets > 5


def test_vector_action_space_samples_from_the_info_masks():
    env = gym.make_vec("urgym/Ur-v2", num_envs=4, pieces=2, opponent="greedy")
    _, info = env.reset(seed=1)
    env.action_space.seed(1)
    ended = 0
    for _ in range(200):
        assert info["action_mask"].dtype == np.int8
        actions = env.action_space.sample(mask=tuple(info["action_mask"]))
        playing = info["roll"] > 0
        assert info["action_mask"][np.arange(4), actions][playing].all()
        _, _, terminated, _, info = env.step(actions)
        ended += int(terminated.sum())
    assert ended > 4
