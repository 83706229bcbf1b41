"""AlphaZero-style self-play with mctx's Stochastic MuZero search over urgym.jax's explicit chance nodes.

The search plans with the true rules, not a learned model: a decision node's children come from
``env.decision_step``, a chance node's from ``env.chance_step`` with the exact roll distribution
``env.chance_probs`` as its chance logits. A small network (policy and value, pure JAX) learns from the search's
visit counts and the games' outcomes. Ur breaks two assumptions of two-player search, and the model handles both:
an extra roll keeps the turn (the discount between a node and its child is +1 when the mover stays, -1 when it
changes), and a roll with no legal move passes (a "pass" node with one action, whose afterstate is the other
side's chance node).

At the end the regret of the network's own policy (no search) and of the search with the network (``--eval-sims``
simulations) is measured on the solved table's test positions, beside ``greedy`` and ``heuristic`` on the same
positions.

Run: ``python -m urgym.examples.mctx_alphazero [--rules finkel] [--pieces 3] [--minutes 20] [--games 256] [--sims 32]``
(the ``jax`` extra; the table is solved and cached first if it is missing).
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import mctx
import numpy as np
import optax
from urgym.agents.registry import make_agent
from urgym.evaluation.scoring.positions import benchmark_arrays
from urgym.solver.cache import load_or_solve

from urgym import Position
from urgym.jax import UrJaxEnv, from_code


# --- the network: observation -> (policy logits, value of the mover) -----------------------------------------------
def init_network(key, inputs: int, actions: int, hidden: int = 128) -> dict:
    """A policy-value network's parameters, seeded by ``key``."""
    sizes = [(inputs, hidden), (hidden, hidden), (hidden, actions + 1)]
    keys = jax.random.split(key, len(sizes))
    return {
        f"w{i}": jax.random.normal(k, shape) * jnp.sqrt(2.0 / shape[0])
        for i, (k, shape) in enumerate(zip(keys, sizes, strict=True))
    } | {f"b{i}": jnp.zeros(shape[1]) for i, shape in enumerate(sizes)}


def forward(params: dict, observations) -> tuple:
    """Policy logits and value of a batch of observations."""
    x = jax.nn.relu(observations @ params["w0"] + params["b0"])
    x = jax.nn.relu(x @ params["w1"] + params["b1"])
    out = x @ params["w2"] + params["b2"]
    return out[..., :-1], jnp.tanh(out[..., -1])


def masked(logits, mask):
    """``logits`` with illegal actions masked out."""
    return jnp.where(mask, logits, jnp.finfo(logits.dtype).min)


# --- the search's model: the rules themselves ---------------------------------------------------------------------
def make_search(env: UrJaxEnv, simulations: int, train: bool):
    """A batched Gumbel MuZero search over the JAX environment."""
    decide, roll = jax.vmap(env.decision_step), jax.vmap(env.chance_step)
    chance_logits = jnp.log(jnp.maximum(env.chance_probs, 1e-30))
    pass_logits = masked(jnp.zeros(env.num_actions), jnp.arange(env.num_actions) == 0)

    def where(cond, a, b):
        return jax.tree_util.tree_map(
            lambda x, y: jnp.where(cond.reshape(cond.shape + (1,) * (x.ndim - 1)), x, y), a, b
        )

    def decision_fn(params, rng, action, state):
        # a pass node (a chance node of the other side: the roll had no move) or a finished game stays as it is
        frozen = state._is_chance | state.terminated
        actor = jnp.where(state._is_chance, 1 - state.current_player, state.current_player)
        after = where(frozen, state, decide(state, action))
        _, value = forward(params, after.observation)  # of after.current_player, at its chance node
        value = jnp.where(after.current_player == actor, value, -value)
        value = jnp.where(after.terminated, jnp.where(state.terminated, 0.0, 1.0), value)  # a win is the actor's
        output = mctx.DecisionRecurrentFnOutput(
            chance_logits=jnp.broadcast_to(chance_logits, (action.shape[0], chance_logits.shape[0])),
            afterstate_value=value,
        )
        return output, {"state": after, "actor": actor, "done": state.terminated}

    def chance_fn(params, rng, outcome, afterstate):
        after, actor = afterstate["state"], afterstate["actor"]
        nxt = where(after.terminated, after, roll(after, outcome))
        logits, value = forward(params, nxt.observation)
        passing = nxt._is_chance & ~nxt.terminated
        player = jnp.where(passing, 1 - nxt.current_player, nxt.current_player)
        logits = jnp.where(passing[:, None], pass_logits, masked(logits, nxt.legal_action_mask))
        value = jnp.where(passing, -value, value)
        won = after.terminated & ~afterstate["done"]
        output = mctx.ChanceRecurrentFnOutput(
            action_logits=logits,
            value=jnp.where(after.terminated, 0.0, value),
            reward=jnp.where(won, 1.0, 0.0),
            discount=jnp.where(after.terminated, 0.0, jnp.where(player == actor, 1.0, -1.0)),
        )
        return output, nxt

    def search(params, key, state):
        logits, value = forward(params, state.observation)
        root = mctx.RootFnOutput(prior_logits=masked(logits, state.legal_action_mask), value=value, embedding=state)
        return mctx.stochastic_muzero_policy(
            params,
            key,
            root,
            decision_fn,
            chance_fn,
            num_simulations=simulations,
            invalid_actions=~state.legal_action_mask,
            dirichlet_fraction=0.25 if train else 0.0,
            temperature=1.0 if train else 0.0,
        )

    return search


# --- self-play and training ---------------------------------------------------------------------------------------
def make_selfplay(env: UrJaxEnv, games: int, steps: int, simulations: int):
    """A jitted self-play of ``games`` games for ``steps`` steps, with search targets."""
    search = make_search(env, simulations, train=True)
    step = jax.vmap(env.step)
    init = jax.vmap(env.init)

    def one_step(carry, key):
        params, state = carry
        search_key, step_key, reset_key = jax.random.split(key, 3)
        out = search(params, search_key, state)
        mover = state.current_player
        nxt = step(state, out.action, jax.random.split(step_key, games))
        record = {
            "observation": state.observation,
            "policy": out.action_weights,
            "mover": mover,
            "reward": nxt.rewards[jnp.arange(games), mover],
            "done": nxt.terminated,
        }
        fresh = init(jax.random.split(reset_key, games))
        nxt = jax.tree_util.tree_map(
            lambda a, b: jnp.where(nxt.terminated.reshape((-1,) + (1,) * (a.ndim - 1)), a, b), fresh, nxt
        )
        return (params, nxt), record

    @jax.jit
    def selfplay(params, state, key):
        (_, state), records = jax.lax.scan(one_step, (params, state), jax.random.split(key, steps))

        # the outcome from each mover's side, backwards: the sign flips where the mover changes
        def back(later, t):
            value, mover = later
            same = records["mover"][t] == mover
            target = jnp.where(records["done"][t], records["reward"][t], jnp.where(same, value, -value))
            return (target, records["mover"][t]), target

        _, targets = jax.lax.scan(back, (jnp.zeros(games), records["mover"][-1]), jnp.arange(steps), reverse=True)
        # a step's target is known when its game finished within this window (at that step or a later one)
        known = jax.lax.cumsum(records["done"].astype(jnp.int32), axis=0, reverse=True) > 0
        return state, records, targets, known

    return selfplay


def make_train_step(optimizer):
    """A jitted training step of the network on self-play targets."""

    def loss(params, observations, policies, values, weights):
        logits, predicted = forward(params, observations)
        policy_loss = optax.softmax_cross_entropy(logits, policies)
        # the value of the same position before its roll (the chance node the search asks about): roll one-hot off
        before_roll = observations.at[:, -4:].set(0.0)
        _, predicted_before = forward(params, before_roll)
        value_loss = (predicted - values) ** 2 + (predicted_before - values) ** 2
        return jnp.sum((policy_loss + value_loss) * weights) / jnp.maximum(weights.sum(), 1.0)

    @jax.jit
    def train_step(params, opt_state, observations, policies, values, weights):
        value, grads = jax.value_and_grad(loss)(params, observations, policies, values, weights)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, value

    return train_step


# --- evaluation on the solved table -------------------------------------------------------------------------------
def network_regret(params, arrays) -> float:
    """The mean regret of the network's best actions on the benchmark arrays."""
    logits, _ = forward(params, jnp.asarray(arrays.observations))
    actions = np.asarray(masked(logits, jnp.asarray(arrays.masks)).argmax(axis=1))
    return float(arrays.regrets(actions).mean())


def search_regret(env: UrJaxEnv, params, arrays, simulations: int) -> float:
    """The mean regret of the search's actions on the benchmark arrays."""
    search = jax.jit(make_search(env, simulations, train=False))
    state = from_code(env.rules, arrays.states, arrays.rolls)
    actions = np.asarray(search(params, jax.random.PRNGKey(0), state).action)
    return float(arrays.regrets(actions).mean())


def agent_regret(spec: str, arrays, rules) -> float:
    """The mean regret of a urgym agent on the benchmark arrays, for comparison."""
    agent = make_agent(spec, seed=0)
    actions = [
        agent.select_move(Position(rules, int(code)), int(roll))
        for code, roll in zip(arrays.states, arrays.rolls, strict=True)
    ]
    return float(arrays.regrets(np.array(actions)).mean())


def main() -> None:
    """Train by self-play with search, then report the regrets."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rules", default="finkel")
    parser.add_argument("--pieces", type=int, default=3)
    parser.add_argument("--minutes", type=float, default=20.0, help="wall-clock budget of the training")
    parser.add_argument("--games", type=int, default=256, help="self-play games played at once")
    parser.add_argument("--steps", type=int, default=32, help="moves per game between training rounds")
    parser.add_argument("--sims", type=int, default=32, help="search simulations per move in self-play")
    parser.add_argument("--eval-sims", type=int, default=64, help="search simulations per move when evaluated")
    parser.add_argument("--epochs", type=int, default=4, help="passes over each round's moves")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    table = load_or_solve(args.rules, args.pieces)
    env = UrJaxEnv(table.rules)
    validation = benchmark_arrays(table.rules, "validation", table=table)
    test = benchmark_arrays(table.rules, "test", table=table)
    key = jax.random.PRNGKey(args.seed)
    key, init_key, games_key = jax.random.split(key, 3)
    params = init_network(init_key, env.observation_shape[0], env.num_actions)
    optimizer = optax.adam(1e-3)
    opt_state = optimizer.init(params)
    train_step = make_train_step(optimizer)
    selfplay = make_selfplay(env, args.games, args.steps, args.sims)
    state = jax.jit(jax.vmap(env.init))(jax.random.split(games_key, args.games))

    print(
        f"{table.rules.describe()}: self-play with {args.games} games x {args.sims} simulations, "
        f"{args.minutes:g} min on {jax.default_backend()}"
    )
    start = time.perf_counter()
    deadline = start + 60 * args.minutes
    moves, rounds, best = 0, 0, (float("inf"), params)
    while time.perf_counter() < deadline:
        key, play_key, shuffle_key = jax.random.split(key, 3)
        state, records, targets, known = selfplay(params, state, play_key)
        observations = records["observation"].reshape(-1, records["observation"].shape[-1])
        policies = records["policy"].reshape(-1, env.num_actions)
        values, weights = targets.reshape(-1), known.reshape(-1).astype(jnp.float32)
        for epoch_key in jax.random.split(shuffle_key, args.epochs):
            order = jax.random.permutation(epoch_key, observations.shape[0])
            for batch in jnp.array_split(order, max(1, observations.shape[0] // 1024)):
                params, opt_state, _ = train_step(
                    params, opt_state, observations[batch], policies[batch], values[batch], weights[batch]
                )
        moves += observations.shape[0]
        rounds += 1
        if rounds % 10 == 0:
            regret = network_regret(params, validation)
            if regret < best[0]:
                best = (regret, params)
            print(
                f"{(time.perf_counter() - start) / 60:5.1f} min  {moves:>9,} moves  validation regret {regret:.3f}",
                flush=True,
            )
    trained = time.perf_counter() - start
    params = best[1]  # the network that scored best on the validation set
    print(
        f"trained {trained / 60:.1f} min, {moves:,} self-play moves; regret on the {len(test.rolls)} test "
        f"positions (win-% points, lower is better):"
    )
    print(f"  network policy        {network_regret(params, test):.3f}")
    print(f"  search, {args.eval_sims} sims       {search_regret(env, params, test, args.eval_sims):.3f}")
    for spec in ("greedy", "heuristic"):
        print(f"  {spec:<21} {agent_regret(spec, test, table.rules):.3f}")


if __name__ == "__main__":
    main()
