"""AlphaZero-style self-play with mctx's Stochastic MuZero search over urgym.jax's explicit chance nodes.

The learner is :class:`urgym.evaluation.training.alphazero.AlphaZeroLearner` (what ``train --algo alphazero`` and
``urgym bench --algo alphazero`` train): the search plans with the true rules, not a learned model, and a small
policy-value network learns from its visit counts and the games' outcomes. This example trains it for a number of
minutes and then measures the regret of the network's own policy (no search) and of the search with the network
(``--eval-sims`` simulations) on the solved table's test positions, beside ``greedy`` and ``heuristic``.

Run: ``python -m urgym.examples.mctx_alphazero [--rules finkel] [--pieces 3] [--minutes 20] [--games 256] [--sims 32]``
(the ``jax`` and ``learn`` extras; the table is solved and cached first if it is missing).
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import jax
import jax.numpy as jnp
import numpy as np
from urgym.agents.registry import make_agent
from urgym.evaluation.scoring.positions import benchmark_arrays
from urgym.evaluation.training.alphazero import AlphaZeroLearner, AlphaZeroSettings, forward, make_search, masked
from urgym.solver.cache import load_or_solve

from urgym import Position
from urgym.jax import UrJaxEnv, from_code


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
    settings = dataclasses.replace(
        AlphaZeroSettings(), games=args.games, steps=args.steps, simulations=args.sims, epochs=args.epochs
    )
    learner = AlphaZeroLearner(env, settings, seed=args.seed)

    print(
        f"{table.rules.describe()}: self-play with {args.games} games x {args.sims} simulations, "
        f"{args.minutes:g} min on {jax.default_backend()}"
    )
    start = time.perf_counter()
    deadline = start + 60 * args.minutes
    rounds, best = 0, (float("inf"), learner.params)
    while time.perf_counter() < deadline:
        learner.round()
        rounds += 1
        if rounds % 10 == 0:
            regret = network_regret(learner.params, validation)
            if regret < best[0]:
                best = (regret, learner.params)
            print(
                f"{(time.perf_counter() - start) / 60:5.1f} min  {learner.moves:>9,} moves  validation regret "
                f"{regret:.3f}",
                flush=True,
            )
    trained = time.perf_counter() - start
    params = best[1]  # the network that scored best on the validation set
    print(
        f"trained {trained / 60:.1f} min, {learner.moves:,} self-play moves; regret on the {len(test.rolls)} test "
        f"positions (win-% points, lower is better):"
    )
    print(f"  network policy        {network_regret(params, test):.3f}")
    print(f"  search, {args.eval_sims} sims       {search_regret(env, params, test, args.eval_sims):.3f}")
    for spec in ("greedy", "heuristic"):
        print(f"  {spec:<21} {agent_regret(spec, test, table.rules):.3f}")


if __name__ == "__main__":
    main()
