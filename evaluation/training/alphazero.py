"""``train --algo alphazero``: AlphaZero-style self-play with search, mctx over the JAX port (``jax``, ``learn``).

Every move of self-play is chosen by a Gumbel search (mctx's ``stochastic_muzero_policy``) that plans with the true
rules of :mod:`urgym.jax`, not a learned model: a decision node's children come from ``env.decision_step``, a chance
node's from ``env.chance_step`` with the exact roll distribution as its chance logits. A policy-value network learns
from the search's visit counts and the games' outcomes. Ur breaks two assumptions of two-player search, and the model
handles both: an extra roll keeps the turn (the discount between a node and its child is +1 when the mover stays, -1
when it changes), and a roll with no legal move passes (a "pass" node with one action, whose afterstate is the other
side's chance node).

What is measured and saved is the network's own policy, without search (depth 0): the best legal action by its
policy logits. It is saved as a TorchScript module (``model.pt``, observations to action scores) that
``torchscript:PATH`` plays, with its card. Nothing of the solved table is learned; it only measures.

A round plays ``games`` games at once for ``steps`` moves each (every move a decision of the learner, both sides
being the learner), then trains on the moves whose game ended within the round. The run's bookkeeping is
:class:`~urgym.evaluation.training.run.TrainingRun`'s; after each evaluation it writes a checkpoint (the network, the
optimizer, the games in progress and the random key) from which ``RunPlan(resume=True)`` goes on exactly.
"""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from urgym.agents.outside.policies import ScoringAgent
from urgym.evaluation.training.learner import Algorithm, Learner, LearningTask

from urgym import Rules
from urgym.files import require_extra, write_atomic

__all__ = [
    "ALPHAZERO",
    "AlphaZeroLearner",
    "AlphaZeroSettings",
    "AlphaZeroTrainer",
    "forward",
    "init_network",
    "make_search",
    "make_selfplay",
    "make_train_step",
    "masked",
    "policy_module",
]


@dataclass(frozen=True)
class AlphaZeroSettings:
    """How ``train --algo alphazero`` learns (the command's defaults are these)."""

    games: int = 256
    """Self-play games played at once."""
    steps: int = 32
    """Moves of each game in a round, between trainings."""
    simulations: int = 32
    """Search simulations per self-play move."""
    epochs: int = 4
    """Passes over each round's moves."""
    batch: int = 1024
    learning_rate: float = 1e-3
    hidden: int = 128
    """Units of each of the network's two hidden layers."""
    threads: int = 1
    """Threads of XLA (set before JAX starts; a process that imported JAX already keeps its own) and torch."""


# --- the network: observation -> (policy logits, value of the mover) -----------------------------------------------
def init_network(key: Any, inputs: int, actions: int, hidden: int = 128) -> dict[str, Any]:
    """A policy-value network's parameters, seeded by ``key``."""
    jax, jnp = _jax()
    sizes = [(inputs, hidden), (hidden, hidden), (hidden, actions + 1)]
    keys = jax.random.split(key, len(sizes))
    return {
        f"w{i}": jax.random.normal(k, shape) * jnp.sqrt(2.0 / shape[0])
        for i, (k, shape) in enumerate(zip(keys, sizes, strict=True))
    } | {f"b{i}": jnp.zeros(shape[1]) for i, shape in enumerate(sizes)}


def forward(params: dict[str, Any], observations: Any) -> tuple[Any, Any]:
    """Policy logits and value of a batch of observations."""
    jax, jnp = _jax()
    x = jax.nn.relu(observations @ params["w0"] + params["b0"])
    x = jax.nn.relu(x @ params["w1"] + params["b1"])
    out = x @ params["w2"] + params["b2"]
    return out[..., :-1], jnp.tanh(out[..., -1])


def masked(logits: Any, mask: Any) -> Any:
    """``logits`` with illegal actions masked out."""
    _, jnp = _jax()
    return jnp.where(mask, logits, jnp.finfo(logits.dtype).min)


# --- the search's model: the rules themselves ---------------------------------------------------------------------
def make_search(env: Any, simulations: int, train: bool) -> Any:
    """A batched stochastic MuZero search over the JAX environment (``train``: Dirichlet noise and sampling)."""
    jax, jnp = _jax()
    mctx = require_extra("mctx", "jax", "AlphaZero-style search")
    decide, roll = jax.vmap(env.decision_step), jax.vmap(env.chance_step)
    chance_logits = jnp.log(jnp.maximum(env.chance_probs, 1e-30))
    pass_logits = masked(jnp.zeros(env.num_actions), jnp.arange(env.num_actions) == 0)

    def where(cond: Any, a: Any, b: Any) -> Any:
        return jax.tree_util.tree_map(
            lambda x, y: jnp.where(cond.reshape(cond.shape + (1,) * (x.ndim - 1)), x, y), a, b
        )

    def decision_fn(params: Any, rng: Any, action: Any, state: Any) -> tuple[Any, Any]:
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

    def chance_fn(params: Any, rng: Any, outcome: Any, afterstate: Any) -> tuple[Any, Any]:
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

    def search(params: Any, key: Any, state: Any) -> Any:
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
def make_selfplay(env: Any, games: int, steps: int, simulations: int) -> Any:
    """A jitted self-play of ``games`` games for ``steps`` moves, with the search's targets.

    Returns ``selfplay(params, state, key) -> (state, records, targets, known)``: the games' states after the round
    (a finished game starts again), each move's observation, search policy and mover, each move's outcome from its
    mover's side, and whether that outcome is known (its game ended within the round).
    """
    jax, jnp = _jax()
    search = make_search(env, simulations, train=True)
    step = jax.vmap(env.step)
    init = jax.vmap(env.init)

    def one_step(carry: tuple[Any, Any], key: Any) -> tuple[tuple[Any, Any], dict[str, Any]]:
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
    def selfplay(params: Any, state: Any, key: Any) -> tuple[Any, Any, Any, Any]:
        (_, state), records = jax.lax.scan(one_step, (params, state), jax.random.split(key, steps))

        # the outcome from each mover's side, backwards: the sign flips where the mover changes
        def back(later: tuple[Any, Any], t: Any) -> tuple[tuple[Any, Any], Any]:
            value, mover = later
            same = records["mover"][t] == mover
            target = jnp.where(records["done"][t], records["reward"][t], jnp.where(same, value, -value))
            return (target, records["mover"][t]), target

        _, targets = jax.lax.scan(back, (jnp.zeros(games), records["mover"][-1]), jnp.arange(steps), reverse=True)
        known = jax.lax.cumsum(records["done"].astype(jnp.int32), axis=0, reverse=True) > 0
        return state, records, targets, known

    return selfplay


def make_train_step(optimizer: Any) -> Any:
    """A jitted training step of the network on self-play targets (policy cross-entropy and value error)."""
    jax, jnp = _jax()
    optax = require_extra("optax", "jax", "AlphaZero-style training")

    def loss(params: Any, observations: Any, policies: Any, values: Any, weights: Any) -> Any:
        logits, predicted = forward(params, observations)
        policy_loss = optax.softmax_cross_entropy(logits, policies)
        # the value of the same position before its roll (the chance node the search asks about): roll one-hot off
        before_roll = observations.at[:, -4:].set(0.0)
        _, predicted_before = forward(params, before_roll)
        value_loss = (predicted - values) ** 2 + (predicted_before - values) ** 2
        return jnp.sum((policy_loss + value_loss) * weights) / jnp.maximum(weights.sum(), 1.0)

    @jax.jit
    def train_step(
        params: Any, opt_state: Any, observations: Any, policies: Any, values: Any, weights: Any
    ) -> tuple[Any, Any, Any]:
        value, grads = jax.value_and_grad(loss)(params, observations, policies, values, weights)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, value

    return train_step


# --- the network's policy as urgym plays it ------------------------------------------------------------------------
def policy_module(params: dict[str, Any]) -> Any:
    """The network's policy head as a torch module: observations ``[k, obs]`` to action scores ``[k, L + 1]``.

    What ``model.pt`` holds (scripted), and what the run scores: the moves measured are those the saved file plays.
    """
    torch = require_extra("torch", "learn", "AlphaZero-style training")
    weights = [np.array(params[f"w{i}"], dtype=np.float32) for i in range(3)]  # copies: torch wants them writable
    biases = [np.array(params[f"b{i}"], dtype=np.float32) for i in range(3)]
    weights[2], biases[2] = weights[2][:, :-1], biases[2][:-1]  # the value unit is not a policy score
    layers: list[Any] = []
    for k, (weight, bias) in enumerate(zip(weights, biases, strict=True)):
        linear = torch.nn.Linear(*weight.shape)
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(weight.T.copy()))
            linear.bias.copy_(torch.from_numpy(bias))
        layers.append(linear)
        if k < 2:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers).eval()


class _NetworkPolicy(ScoringAgent):
    """The network's policy as an agent: the best legal action by its policy logits (no search)."""

    def __init__(self, params: dict[str, Any], rules: Rules) -> None:
        self._torch = require_extra("torch", "learn", "AlphaZero-style training")
        self._module = policy_module(params)
        super().__init__("alphazero:live", rules, None, None)

    def scores(self, observations: np.ndarray) -> np.ndarray:
        """The policy logits of every action."""
        with self._torch.no_grad():
            return self._module(self._torch.from_numpy(observations)).numpy()


def _save_policy(params: dict[str, Any], path: Any) -> None:
    torch = require_extra("torch", "learn", "AlphaZero-style training")
    scripted = torch.jit.script(policy_module(params))
    write_atomic(path, lambda tmp: torch.jit.save(scripted, str(tmp)))


# --- the learner and the run ---------------------------------------------------------------------------------------
class AlphaZeroLearner:
    """The network, its optimizer, the games in progress and the random key, played and trained round by round.

    Args:
        env: The JAX environment (:class:`urgym.jax.UrJaxEnv`) of the rules learned.
        settings: How it learns.
        seed: Seeds the network, the games and every draw (unless ``held`` is given).
        held: The state of a learner to go on from (:attr:`held`, as a checkpoint keeps it).
    """

    def __init__(self, env: Any, settings: AlphaZeroSettings, seed: int = 0, held: dict[str, Any] | None = None):
        jax, _ = _jax()
        self.settings = settings
        optimizer, self._train_step = _optimizer(settings.learning_rate)
        if held is None:
            key, init_key, games_key = jax.random.split(jax.random.PRNGKey(seed), 3)
            params = init_network(init_key, env.observation_shape[0], env.num_actions, settings.hidden)
            held = {
                "params": params,
                "opt_state": optimizer.init(params),
                "state": _starts(env)(jax.random.split(games_key, settings.games)),
                "key": key,
                "moves": 0,
            }
        self.held = held
        """Everything the learner is: ``params``, ``opt_state``, ``state`` (the games), ``key``, ``moves``."""
        self._selfplay = _selfplay(env, settings.games, settings.steps, settings.simulations)

    @property
    def params(self) -> dict[str, Any]:
        """The network's parameters now."""
        return self.held["params"]

    @property
    def moves(self) -> int:
        """Self-play moves (decisions) played so far."""
        return self.held["moves"]

    def round(self) -> None:
        """One round: self-play, then ``epochs`` passes of training over its moves whose outcome is known."""
        jax, jnp = _jax()
        held, settings = self.held, self.settings
        key, play_key, shuffle_key = jax.random.split(held["key"], 3)
        state, records, targets, known = self._selfplay(held["params"], held["state"], play_key)
        observations = records["observation"].reshape(-1, records["observation"].shape[-1])
        policies = records["policy"].reshape(observations.shape[0], -1)
        values, weights = targets.reshape(-1), known.reshape(-1).astype(jnp.float32)
        params, opt_state = held["params"], held["opt_state"]
        for epoch_key in jax.random.split(shuffle_key, settings.epochs):
            order = jax.random.permutation(epoch_key, observations.shape[0])
            for batch in jnp.array_split(order, max(1, observations.shape[0] // settings.batch)):
                params, opt_state, _ = self._train_step(
                    params, opt_state, observations[batch], policies[batch], values[batch], weights[batch]
                )
        moves = held["moves"] + int(observations.shape[0])
        self.held = {"params": params, "opt_state": opt_state, "state": state, "key": key, "moves": moves}


class AlphaZeroTrainer(Learner):
    """The AlphaZero-style learner under the training loop: rounds of self-play and training.

    A call plays rounds until the decisions asked are played (a round is ``games * steps`` moves: its granularity).
    What is measured and saved is the network's own policy, without search.
    """

    def setup(self, task: LearningTask, seed: int, settings: AlphaZeroSettings, folder: Path) -> None:
        """The network, its optimizer and the games, from ``seed``."""
        _one_xla_thread(settings.threads)
        require_extra("torch", "learn", "train --algo alphazero").set_num_threads(settings.threads)
        self.task, self.rules = task, task.get_rules()
        self.learner = AlphaZeroLearner(_env(self.rules), settings, seed)
        self.granularity = settings.games * settings.steps

    def learn(self, decisions: int) -> int:
        """Rounds until ``decisions`` more moves are played (or the budget is spent)."""
        learner, start = self.learner, self.learner.moves
        while learner.moves < start + decisions and self.task.share(learner.moves) < 1.0:
            learner.round()
        return learner.moves - start

    def agent(self) -> Any:
        """The network's policy, no search."""
        return _NetworkPolicy(self.learner.params, self.rules)

    def save(self, path: Path, facts: dict[str, Any]) -> None:
        """The policy as TorchScript (its card is the run's)."""
        _save_policy(self.learner.params, path)

    def facts(self) -> dict[str, Any]:
        """What the saved model plays."""
        return {"plays": "the network's policy, no search"}

    def state(self) -> dict[str, Any]:
        """The network, the optimizer, the games in progress and the random key."""
        return self.learner.held

    def load(self, state: dict[str, Any]) -> None:
        """Go on from :meth:`state`."""
        self.learner.held = state


ALPHAZERO = Algorithm(
    name="alphazero",
    learner=AlphaZeroTrainer,
    settings=AlphaZeroSettings,
    policy_network=True,
    decisions_per_second=1_500,
    description="AlphaZero-style self-play with search (mctx over the JAX port); its policy is scored without search",
    requires=(("torch", "learn"), ("mctx", "jax")),
    model_suffix=".pt",
    eval_every=200_000,
)
"""The AlphaZero-style learner (measured on finkel 4: about 1,500 decisions a second on one core)."""


# Compiled once per process: a benchmark's seeds, one after another, would each compile the same functions again.
@functools.lru_cache(maxsize=8)
def _env(rules: Rules) -> Any:
    from urgym.jax import UrJaxEnv

    return UrJaxEnv(rules)


@functools.lru_cache(maxsize=8)
def _starts(env: Any) -> Any:
    jax, _ = _jax()
    return jax.jit(jax.vmap(env.init))


@functools.lru_cache(maxsize=8)
def _selfplay(env: Any, games: int, steps: int, simulations: int) -> Any:
    return make_selfplay(env, games, steps, simulations)


@functools.lru_cache(maxsize=8)
def _optimizer(learning_rate: float) -> tuple[Any, Any]:
    optimizer = require_extra("optax", "jax", "AlphaZero-style training").adam(learning_rate)
    return optimizer, make_train_step(optimizer)


def _one_xla_thread(threads: int) -> None:
    """Keep XLA's CPU work on one thread (a benchmark seed's one core), if JAX has not started yet."""
    if threads == 1 and "jax" not in sys.modules and "XLA_FLAGS" not in os.environ:
        os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"


def _jax() -> tuple[Any, Any]:
    jax = require_extra("jax", "jax", "AlphaZero-style training")
    import jax.numpy as jnp

    return jax, jnp
