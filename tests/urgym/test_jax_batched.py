"""urgym.jax under jit(vmap): every loop ends on every state a batch can hold, and a batch equals its games.

A batch holds finished games, chance nodes and decisions side by side, and under vmap every branch of every
guard runs on every game: these tests give every public function such batches, with any action (legal or not)
and any roll, and check that it returns (in a subprocess with a time bound, so a hang fails instead of holding
the suite), that each game's result equals the unbatched call, and that finished games stay finished.
"""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("jax", reason="the jax extra is not installed")
pytest.importorskip("pgx", reason="the jax extra is not installed")

import jax
import jax.numpy as jnp

from urgym import Game, get_rules
from urgym.jax import UrJaxEnv, from_code

RULES = get_rules("finkel", 3)


def _mixed_batch(count: int, seed: int):
    """States of every kind: decisions (with their roll), chance nodes, and finished games of either winner."""
    rng = np.random.default_rng(seed)
    states, kinds = [], []
    game_index = 0
    while len(states) < count:
        game = Game(RULES, seed, game_index)
        game_index += 1
        while not game.is_over and len(states) < count:
            kind = int(rng.integers(3))  # 0: the decision, 1: its chance node, 2: neither (play on)
            if kind < 2:
                states.append(from_code(RULES, game.position.code, game.roll if kind == 0 else None))
                kinds.append(kind)
            game.play(game.legal_moves[rng.integers(len(game.legal_moves))])
        if len(states) < count:  # the finished game
            states.append(from_code(RULES, game.position.code))
            kinds.append(2)
    batch = jax.tree_util.tree_map(lambda *leaves: jnp.stack(leaves), *states)
    return batch, states, np.array(kinds)


def test_every_public_function_under_jit_vmap_equals_its_games_and_keeps_finished_games_finished():
    env = UrJaxEnv(RULES)
    batch, states, kinds = _mixed_batch(96, seed=3)
    assert {0, 1, 2} <= set(kinds.tolist())
    rng = np.random.default_rng(4)
    actions = jnp.asarray(rng.integers(0, RULES.length + 1, len(states)), dtype=jnp.int32)  # legal or not
    rolls = jnp.asarray(rng.integers(0, RULES.max_roll + 1, len(states)), dtype=jnp.int32)
    keys = jax.random.split(jax.random.PRNGKey(5), len(states))
    calls = {
        "step": (env.step, (batch, actions, keys)),
        "decision_step": (env.decision_step, (batch, actions)),
        "chance_step": (env.chance_step, (batch, rolls)),
        "legal_moves_mask": (env.legal_moves_mask, (batch, rolls)),
        "observe": (env.observe, (batch, batch.current_player)),
    }
    for name, (function, args) in calls.items():
        batched = jax.jit(jax.vmap(function))(*args)
        single = jax.jit(function)
        for i in range(len(states)):
            alone = single(*(jax.tree_util.tree_map(lambda leaf, i=i: leaf[i], a) for a in args))
            for got, want in zip(jax.tree_util.tree_leaves(batched), jax.tree_util.tree_leaves(alone), strict=True):
                assert np.array_equal(np.asarray(got)[i], np.asarray(want)), (name, i, kinds[i])
        if name in ("step", "decision_step", "chance_step"):
            finished = kinds == 2
            assert np.asarray(batched.terminated)[finished].all(), name
            assert np.array_equal(np.asarray(batched._board)[finished], np.asarray(batch._board)[finished]), name
            assert np.array_equal(np.asarray(batched._home)[finished], np.asarray(batch._home)[finished]), name
            assert (np.asarray(batched._home) >= 0).all() and (np.asarray(batched._home) <= RULES.pieces).all()


def test_a_finished_game_stays_finished_through_decision_and_chance_steps():
    env = UrJaxEnv(RULES)
    _, states, kinds = _mixed_batch(60, seed=8)
    finished = [s for s, k in zip(states, kinds, strict=True) if k == 2]
    assert finished
    for state in finished:
        for action in range(RULES.length + 1):
            after = env.decision_step(state, action)
            assert bool(after.terminated) and int(after._home.min()) >= 0
            rolled = env.chance_step(after, 2)
            assert bool(rolled.terminated) and np.array_equal(np.asarray(rolled._board), np.asarray(state._board))


HANG_SCRIPT = textwrap.dedent(
    """
    import jax, jax.numpy as jnp
    from pgx.experimental import act_randomly
    from urgym.jax import UrJaxEnv

    env = UrJaxEnv("finkel", 3)
    step = jax.jit(jax.vmap(env.step))
    state = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(0), 512))
    key = jax.random.PRNGKey(1)
    for t in range(300):  # no auto_reset: finished games stay in the batch and get actions too
        key, a, k = jax.random.split(key, 3)
        actions = act_randomly(a, state.legal_action_mask)
        if t % 3 == 0:
            actions = jnp.zeros_like(actions)  # action 0 to every game, finished ones included
        state = step(state, actions, jax.random.split(k, 512))
    jax.block_until_ready(state)
    print("finished", int(state.terminated.sum()))
    """
)


def test_a_batched_loop_without_auto_reset_returns_with_finished_games_in_the_batch():
    """jit(vmap(step)) never returned once a finished game of the batch got certain actions (issue 42)."""
    done = subprocess.run([sys.executable, "-c", HANG_SCRIPT], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout.split()[-1]) > 100  # most of the 512 games ended, and the loop went on past them
