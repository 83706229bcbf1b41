"""Plain stable-baselines3 PPO (no action masking) on the native vector environment.

An illegal action is replaced by the nearest legal move (``illegal_action="replace"``) with a small penalty, so
the policy learns to prefer legal moves while every game still finishes; the regret callback scores the best
*legal* action on the validation positions as training goes.

Run: ``python -m urgym.examples.plain_ppo [--rules finkel] [--pieces 3] [--minutes 4] [--envs 64] [--opponent greedy]``
"""

from __future__ import annotations

import argparse
import time

import torch
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback, CallbackList
from stable_baselines3.common.vec_env import VecMonitor
from urgym.evaluation.training.ppo import regret_callback
from urgym.solver.cache import load_or_solve

from urgym.sb3 import SB3VecEnv


class Deadline(BaseCallback):
    """Stop after a wall-clock budget."""

    def __init__(self, minutes: float) -> None:
        super().__init__()
        self.until = time.perf_counter() + 60 * minutes

    def _on_step(self) -> bool:
        return time.perf_counter() < self.until


def main() -> None:
    """Train PPO on the environment and report its regret."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rules", default="finkel")
    parser.add_argument("--pieces", type=int, default=3)
    parser.add_argument("--minutes", type=float, default=4.0)
    parser.add_argument("--envs", type=int, default=64)
    parser.add_argument("--opponent", default="greedy")
    parser.add_argument("--penalty", type=float, default=0.05, help="subtracted from a replaced action's reward")
    args = parser.parse_args()
    torch.set_num_threads(1)
    table = load_or_solve(args.rules, args.pieces)
    env = VecMonitor(
        SB3VecEnv(
            num_envs=args.envs,
            rules=table.rules,
            opponent=args.opponent,
            agent_side="random",
            illegal_action="replace",
            illegal_penalty=args.penalty,
        )
    )
    env.seed(0)
    model = PPO(
        "MlpPolicy",
        env,
        n_steps=8192 // args.envs,
        batch_size=256,
        n_epochs=4,
        gamma=1.0,
        ent_coef=0.01,
        policy_kwargs={"net_arch": [128, 128]},
        seed=0,
        device="cpu",
    )
    regret = regret_callback(table.rules, every=50_000, table=table)
    start = time.perf_counter()
    model.learn(10**9, callback=CallbackList([regret, Deadline(args.minutes)]))
    final = regret.evaluate()
    best = min(row["mean_regret"] for row in regret.rows)
    print(
        f"plain PPO, {args.rules} {args.pieces} pieces vs {args.opponent}: {model.num_timesteps:,} steps in "
        f"{(time.perf_counter() - start) / 60:.1f} min; validation regret {final:.3f} (best {best:.3f}) "
        "win-% points"
    )


if __name__ == "__main__":
    main()
