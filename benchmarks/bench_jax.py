"""urgym.jax on the CPU: steps/s of ``jit(vmap(step))`` with random legal actions, beside pgx's backgammon.

Run: ``python -m benchmarks.bench_jax [--batch 4096] [--steps 100] [--repeats 5] [--rules finkel,blitz,masters]``

Two loops per environment, both with random legal actions (pgx's ``act_randomly``) and auto-reset (a finished
game starts again, so every step plays a move):

- ``per step``: a Python loop calling one jitted ``vmap`` step of the whole batch (actions drawn inside it), the
  loop of pgx's examples;
- ``scan``: ``--steps`` steps fused into one jitted ``lax.scan``, the loop of a pure-JAX training pipeline.

Compilation is kept out of the timings (one warm-up run); figures are medians of ``--repeats`` runs.
"""

from __future__ import annotations

import argparse
import time

import jax
import pgx
from pgx.experimental import act_randomly, auto_reset

from benchmarks.common import machine, median_rate
from urgym.jax import UrJaxEnv


def _one_step(env):
    step = jax.vmap(auto_reset(env.step, env.init))

    def one(state, key):
        act_key, step_key = jax.random.split(key)
        action = act_randomly(act_key, state.legal_action_mask)
        return step(state, action, jax.random.split(step_key, action.shape[0]))

    return one


def rates(env, batch: int, steps: int, repeats: int) -> tuple[float, float]:
    """(per-step loop, scan) steps/s of ``env`` at ``batch`` games."""
    one = _one_step(env)
    jitted = jax.jit(one)
    scanned = jax.jit(
        lambda state, key: jax.lax.scan(lambda s, k: (one(s, k), None), state, jax.random.split(key, steps))[0]
    )
    state = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(0), batch))
    keys = iter(jax.random.split(jax.random.PRNGKey(1), 100_000))

    def per_step() -> int:
        nonlocal state
        for _ in range(steps):
            state = jitted(state, next(keys))
        state.terminated.block_until_ready()
        return steps * batch

    def scan() -> int:
        nonlocal state
        state = scanned(state, next(keys))
        state.terminated.block_until_ready()
        return steps * batch

    return median_rate(per_step, repeats)[0], median_rate(scan, repeats)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rules", default="finkel,blitz,masters")
    args = parser.parse_args()
    print(
        f"{machine()}; jax {jax.__version__} on {jax.default_backend()}, pgx {pgx.__version__}; batch "
        f"{args.batch}, {args.steps} steps per run, medians of {args.repeats}"
    )
    envs = [(f"urgym.jax {name}", UrJaxEnv(name)) for name in args.rules.split(",")]
    envs.append(("pgx backgammon", pgx.make("backgammon")))
    for label, env in envs:
        start = time.perf_counter()
        per_step, scan = rates(env, args.batch, args.steps, args.repeats)
        print(
            f"{label:24s} per step {per_step:>12,.0f} steps/s   scan {scan:>12,.0f} steps/s   "
            f"({time.perf_counter() - start:.0f} s with compilation)",
            flush=True,
        )


if __name__ == "__main__":
    main()
