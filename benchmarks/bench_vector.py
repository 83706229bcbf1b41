"""The native vector environment.

Steps/s of UrVectorEnv against one UrEnv and Gymnasium's SyncVectorEnv, and MaskablePPO's training steps/s on it against
DummyVecEnv of UrEnv (same network and hyper-parameters).

Run: ``python -m benchmarks.bench_vector [--envs 1024] [--steps 200] [--repeats 5] [--ppo-steps 32768]``

Environment steps use the first legal action (the cheapest agent), so the figures measure the environment. The
``perfect`` opponent needs finkel's solved table (``solve`` makes it; the line is skipped without it); the
MaskablePPO figures need the ``learn`` extra.
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import gymnasium as gym
import numpy as np

from benchmarks.bench_core import env_steps
from benchmarks.common import machine, median_rate
from urgym.env import UrEnv
from urgym.vector import UrVectorEnv


def first_legal(masks: np.ndarray) -> np.ndarray:
    return masks.argmax(axis=1)


def vector_steps(env: gym.vector.VectorEnv, label: str, steps: int, repeats: int) -> float:
    """Steps/s over all environments (a vector step of N environments counts N)."""

    def work() -> int:
        _, info = env.reset(seed=work.calls * env.num_envs)
        work.calls += 1
        for _ in range(steps):
            *_, info = env.step(first_legal(info["action_mask"]))
        return steps * env.num_envs

    work.calls = 0
    median, rates = median_rate(work, repeats)
    print(f"{label}: {median:,.0f} steps/s (runs: {', '.join(f'{r:,.0f}' for r in rates)})")
    return median


def single_steps(steps: int, repeats: int) -> float:
    return env_steps(UrEnv(), "one UrEnv", steps, repeats)


def have_finkel_table() -> bool:
    from urgym.solver.cache import is_cached

    from urgym import get_rules

    return is_cached(get_rules("finkel"))


def ppo_steps(vec_env: str, envs: int, timesteps: int, repeats: int) -> float:
    """MaskablePPO's learn() steps/s with train's network and hyper-parameters against greedy."""
    import torch
    from stable_baselines3.common.vec_env import DummyVecEnv
    from urgym.evaluation.training.ppo import MaskablePPOLearner, PPOSettings

    from urgym.sb3 import SB3VecEnv

    torch.set_num_threads(1)
    if vec_env == "native":
        venv = SB3VecEnv(num_envs=envs, opponent="greedy", agent_side="random")
    else:
        venv = DummyVecEnv([lambda: UrEnv(opponent="greedy", agent_side="random") for _ in range(envs)])
    model = MaskablePPOLearner().make_model(venv, 0, PPOSettings(envs=envs))  # train's MaskablePPO

    def work() -> int:
        before = model.num_timesteps
        model.learn(timesteps, reset_num_timesteps=False)
        return model.num_timesteps - before

    median, rates = median_rate(work, repeats)
    print(
        f"MaskablePPO on {vec_env} ({envs} envs, n_steps {8192 // envs}, batch 256, 4 epochs, 2x128) vs greedy: "
        f"{median:,.0f} steps/s (runs: {', '.join(f'{r:,.0f}' for r in rates)})"
    )
    return median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=200, help="vector steps per run")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--ppo-envs", type=int, default=16)
    parser.add_argument("--ppo-steps", type=int, default=32768, help="timesteps per MaskablePPO run (0: skip)")
    args = parser.parse_args()
    print(f"machine: {machine()}; numba threads: {os.environ['NUMBA_NUM_THREADS']}; first legal action")
    single = single_steps(args.steps * 500, args.repeats)
    native = vector_steps(UrVectorEnv(args.envs), f"UrVectorEnv, {args.envs} envs vs random", args.steps, args.repeats)
    print(f"  = {native / single:.1f}x one UrEnv")
    vector_steps(
        UrVectorEnv(args.envs, opponent="self"), f"UrVectorEnv, {args.envs} envs, self-play", args.steps, args.repeats
    )
    if have_finkel_table():
        from urgym import agents  # noqa: F401  (registers perfect)

        vector_steps(
            UrVectorEnv(args.envs, opponent="perfect"),
            f"UrVectorEnv, {args.envs} envs vs perfect",
            args.steps,
            args.repeats,
        )
    else:
        print("UrVectorEnv vs perfect: skipped (no solved finkel table; run `solve`)")
    sync = gym.make_vec("urgym/Ur-v2", num_envs=64, vectorization_mode="sync")
    vector_steps(sync, "Gymnasium SyncVectorEnv of UrEnv, 64 envs vs random", args.steps * 4, args.repeats)
    if args.ppo_steps:
        try:
            import sb3_contrib  # noqa: F401
        except ImportError:
            print("MaskablePPO: skipped (needs the learn extra)")
            return
        native_ppo = ppo_steps("native", args.ppo_envs, args.ppo_steps, args.repeats)
        dummy_ppo = ppo_steps("dummy", args.ppo_envs, args.ppo_steps, args.repeats)
        print(f"  native / dummy: {native_ppo / dummy_ppo:.2f}x")


if __name__ == "__main__":
    main()
