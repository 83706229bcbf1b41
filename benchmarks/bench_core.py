"""Rules-core throughput: random-vs-random games/s with the numba simulator, and environment steps/s.

Run: ``python -m benchmarks.bench_core [--games 100000] [--steps 100000] [--repeats 5]``
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import gymnasium as gym
import numpy as np

import urgym
from benchmarks.common import machine, median_rate
from urgym.env import UrEnv


def simulator_games(games: int, repeats: int) -> None:
    def work() -> int:
        urgym.simulate("finkel", "random", "random", games=games, seed=work.calls)
        work.calls += 1
        return games

    work.calls = 0
    median, rates = median_rate(work, repeats)
    print(f"simulator, finkel random vs random, one core: {median:,.0f} games/s "
          f"(runs: {', '.join(f'{r:,.0f}' for r in rates)})")


def env_steps(env, label: str, steps: int, repeats: int) -> None:
    """Steps/s with a cheap agent (the first legal action) so the figure measures the environment."""
    def work() -> int:
        _, info = env.reset(seed=work.calls)
        work.calls += 1
        for _ in range(steps):
            _, _, terminated, _, info = env.step(int(np.argmax(info["action_mask"])))
            if terminated:
                _, info = env.reset()
        return steps

    work.calls = 0
    median, rates = median_rate(work, repeats)
    print(f"environment ({label}), finkel vs random opponent: {median:,.0f} steps/s "
          f"(runs: {', '.join(f'{r:,.0f}' for r in rates)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    simulator_games(args.games, args.repeats)
    env_steps(UrEnv(opponent="random"), "UrEnv directly", args.steps, args.repeats)
    env_steps(gym.make("urgym/Ur-v0", opponent="random"), "gymnasium.make with its wrappers", args.steps,
              args.repeats)


if __name__ == "__main__":
    main()
