"""The RL benchmark's costs: one evaluation point per task, and training with the exact-metrics callback on and off.

Run: ``python -m benchmarks.bench_bench [--tasks finkel-3,finkel-4] [--repeats 3] [--steps 65536]``

For each task: the seconds of one evaluation point (the task's metrics during training, and every metric at the
end) of a TD(lambda) network and of a MaskablePPO network, each on one core as ``urgym bench`` runs a seed (medians
of ``--repeats`` after a warm-up). Then MaskablePPO on the small task, one torch thread: its training speed alone,
with the callback at the task's schedule scaled to ``--steps`` (the callback's share of the time), and after one
exact evaluation without torch's threads kept (the slowdown the fix prevents: numba's OpenMP layer leaves torch on
every core).
"""

from __future__ import annotations

import argparse
import statistics
import time

from urgym.evaluation.bench import TaskEvaluator, get_task
from urgym.evaluation.bench.callback import exact_metrics_callback
from urgym.evaluation.training.td_lambda import TDLambda

from benchmarks.common import machine
from urgym.sb3 import SB3VecEnv
from urgym.threads import one_thread


def _ppo(rules, seed: int = 0):
    from sb3_contrib import MaskablePPO

    env = SB3VecEnv(num_envs=16, rules=rules, opponent="greedy")
    return MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=512,
        batch_size=256,
        n_epochs=4,
        seed=seed,
        device="cpu",
        policy_kwargs={"net_arch": [128, 128]},
        gamma=1.0,
    )


def point_costs(task_id: str, repeats: int) -> None:
    """The seconds of an evaluation point of ``task_id`` for a TD network and a PPO network, one core."""
    from urgym.agents.networks.td import TDAgent
    from urgym.agents.outside.policies import played_as_saved

    task = get_task(task_id)
    rules = task.get_rules()
    with one_thread():
        evaluator = TaskEvaluator(task)
        agents = {
            "td-lambda network": TDAgent(TDLambda.initial(rules, 80, 0).network()),
            "maskable-ppo network": played_as_saved(_ppo(rules), rules),
        }
        for name, agent in agents.items():
            for final in (False, True):
                if final and task.exact_during:
                    continue
                evaluator(agent, final=final)  # warm-up
                seconds = []
                for _ in range(repeats):
                    began = time.perf_counter()
                    evaluator(agent, final=final)
                    seconds.append(time.perf_counter() - began)
                kind = "the end (every metric)" if final else "a point during training"
                print(f"{task.id}: {name}, {kind}: {statistics.median(seconds):.2f} s (runs {_list(seconds)})")


def training_costs(steps: int, repeats: int) -> None:
    """MaskablePPO's training speed on the small task, with the callback at the task's schedule, and without the fix.

    The callback's share is measured on a run of ``steps`` with a point every tenth of it, and given at the task's
    schedule too (a point's seconds over the training seconds of ``eval_every`` steps). The case without the fix runs
    in a fresh process where numba's threads start after torch's work, unguarded, as urgym's first exact evaluation
    started them before the fix (urgym now starts them when imported, torch's count kept).
    """
    import torch

    task = get_task("finkel-3")
    rules = task.get_rules()
    torch.set_num_threads(1)
    measured = {}
    for label in ("alone", "with the callback"):
        seconds = []
        for k in range(repeats):
            model = _ppo(rules, seed=k)
            callback = exact_metrics_callback(task, every=steps // 10, final=False) if label != "alone" else None
            began = time.perf_counter()
            model.learn(steps, callback=callback)
            seconds.append(time.perf_counter() - began)
        measured[label] = statistics.median(seconds)
        print(
            f"MaskablePPO on {task.id}, {steps:,} steps, {label}: {measured[label]:.1f} s "
            f"({steps / measured[label]:,.0f} steps/s; runs {_list(seconds)}; torch threads after: "
            f"{torch.get_num_threads()})"
        )
    point = (measured["with the callback"] - measured["alone"]) / 10
    interval = task.eval_every / (steps / measured["alone"])
    print(
        f"a point costs {point:.2f} s; at {task.id}'s schedule (every {task.eval_every:,} steps, {interval:.0f} s of "
        f"training at this speed) the callback's share is {point / interval:.1%}"
    )
    script = (  # numba's threads started after torch's, unguarded: what urgym's first exact evaluation did before
        "import time, torch; torch.set_num_threads(1); torch.ones(256, 256) @ torch.ones(256, 256)\n"
        "import numba; numba.get_num_threads()\n"
        "from urgym import get_rules\n"
        "from benchmarks.bench_bench import _ppo\n"
        "rules = get_rules('finkel', 3); model = _ppo(rules); model.learn(4096)\n"
        "threads = torch.get_num_threads(); began = time.perf_counter()\n"
        f"model.learn({steps}, reset_num_timesteps=False)\n"
        "print(threads, time.perf_counter() - began)\n"
    )
    import subprocess
    import sys

    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
        threads, taken = int(out[-2]), float(out[-1])
        print(
            f"MaskablePPO on {task.id}, {steps:,} steps, after an exact evaluation without the fix: {taken:.1f} s "
            f"({steps / taken:,.0f} steps/s; torch threads {threads})"
        )


def _list(values: list[float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", default="finkel-3,finkel-4")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=65_536)
    parser.add_argument("--skip-training", action="store_true")
    parser.add_argument("--skip-points", action="store_true")
    args = parser.parse_args()
    print(machine())
    for task_id in [] if args.skip_points else args.tasks.split(","):
        point_costs(task_id, args.repeats)
    if not args.skip_training:
        training_costs(args.steps, args.repeats)


if __name__ == "__main__":
    main()
