"""Rules-core throughput: simulator games/s, Gymnasium and PettingZoo steps/s, OpenSpiel playouts/s.

Run: ``python -m benchmarks.bench_core [--games 100000] [--steps 100000] [--playouts 200] [--repeats 5]``

The PettingZoo and OpenSpiel figures need the ``pettingzoo`` and ``openspiel`` extras (skipped, with a
line saying so, without them).
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
    print(
        f"simulator, finkel random vs random, one core: {median:,.0f} games/s "
        f"(runs: {', '.join(f'{r:,.0f}' for r in rates)})"
    )


def env_steps(env, label: str, steps: int, repeats: int) -> float:
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
    print(
        f"environment ({label}), finkel vs random opponent: {median:,.0f} steps/s "
        f"(runs: {', '.join(f'{r:,.0f}' for r in rates)})"
    )
    return median


def aec_steps(env, label: str, steps: int, repeats: int) -> None:
    """PettingZoo AEC steps/s with uniformly random masked actions (both agents)."""
    rng = np.random.default_rng(0)

    def work() -> int:
        env.reset(seed=work.calls)
        work.calls += 1
        done = 0
        while done < steps:
            for _agent in env.agent_iter():
                observation, _, termination, truncation, _ = env.last()
                if termination or truncation:
                    env.step(None)
                    continue
                env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
                done += 1
            env.reset()
        return done

    work.calls = 0
    median, rates = median_rate(work, repeats)
    print(
        f"PettingZoo AEC ({label}), finkel, random masked actions: {median:,.0f} steps/s "
        f"(runs: {', '.join(f'{r:,.0f}' for r in rates)})"
    )


def openspiel_playouts(playouts: int, repeats: int) -> None:
    """OpenSpiel random playouts/s: chance sampled from chance_outcomes(), uniformly random actions."""
    import pyspiel

    import urgym.openspiel  # noqa: F401  (registers the game)

    game = pyspiel.load_game("urgym")
    rng = np.random.default_rng(0)

    def work() -> int:
        for _ in range(playouts):
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    rolls, probabilities = zip(*state.chance_outcomes(), strict=True)
                    state.apply_action(int(rng.choice(rolls, p=probabilities)))
                else:
                    actions = state.legal_actions()
                    state.apply_action(actions[int(rng.integers(len(actions)))])
        return playouts

    median, rates = median_rate(work, repeats)
    print(
        f"OpenSpiel game (Python), finkel, random playouts: {median:,.1f} games/s "
        f"(runs: {', '.join(f'{r:,.1f}' for r in rates)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--playouts", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    simulator_games(args.games, args.repeats)
    env_steps(UrEnv(opponent="random"), "UrEnv directly", args.steps, args.repeats)
    env_steps(gym.make("urgym/Ur-v2", opponent="random"), "gymnasium.make with its wrappers", args.steps, args.repeats)
    try:
        from urgym.multiagent import env as aec_env
        from urgym.multiagent import raw_env
    except ImportError as err:
        print(f"PettingZoo AEC: skipped ({err})")
    else:
        aec_steps(raw_env(), "raw_env", args.steps, args.repeats)
        aec_steps(aec_env(), "env() with PettingZoo's order-enforcing wrapper", args.steps, args.repeats)
    try:
        openspiel_playouts(args.playouts, args.repeats)
    except ImportError as err:
        print(f"OpenSpiel: skipped ({err})")


if __name__ == "__main__":
    main()
