"""Agents from outside, measured.

A stable-baselines3 PPO (2x64, and the shipped 2x128 MaskablePPO) scoring its decisions against perfect play and taking
the position benchmark, the reference UEI engine's moves per second, and the luck-adjusted win rate's bias on a lopsided
pairing.

Run: ``python -m benchmarks.bench_outside [--games 1000] [--repeats 5] [--unbiased-games 10000]``

Needs finkel's solved table in the cache and the ``learn`` extra. Each figure is the median of ``--repeats`` runs in
this process after a warm-up run (JIT compilation, table loading and torch's import stay out of the timings).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from urgym.evaluation.scoring.match import play_match
from urgym.evaluation.scoring.positions import benchmark_positions, score_positions
from urgym.evaluation.scoring.runner import RunOptions
from urgym.solver import table_for

from benchmarks.common import machine
from urgym import get_rules

ENGINE = f"engine:{sys.executable} -m urgym.examples.uei_engine"


def ppo_2x64(folder: Path) -> str:
    """A PPO with two hidden layers of 64 (untrained: the speed does not depend on the weights), saved."""
    from stable_baselines3 import PPO

    from urgym.env import UrEnv

    model = PPO("MlpPolicy", UrEnv("finkel"), policy_kwargs={"net_arch": [64, 64]}, seed=0, device="cpu")
    path = folder / "ppo64.zip"
    model.save(path)
    return f"sb3:{path}"


def decisions_per_second(spec: str, rules, table, games: int, repeats: int) -> None:
    play_match(spec, "perfect", rules, 50, seed=99, table=table, run=RunOptions(progress=False))  # warm-up
    end_to_end, own = [], []
    for run in range(repeats):
        began = time.perf_counter()
        match = play_match(spec, "perfect", rules, games, seed=run, table=table, run=RunOptions(progress=False))
        seconds = time.perf_counter() - began
        regret = match.agents[0].regret
        end_to_end.append(regret.decisions / seconds)
        own.append(1.0 / regret.seconds_per_move)
    positions = benchmark_positions(table, 1000)
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        score_positions(spec, table, positions, run=RunOptions(progress=False))
        times.append(time.perf_counter() - began)
    print(
        f"{spec.split('/')[-1]}: {regret.decisions:,} decisions with a choice in {games:,} games vs perfect; "
        f"end to end median {statistics.median(end_to_end):,.0f} decisions/s "
        f"(runs: {', '.join(f'{r:,.0f}' for r in end_to_end)}); the agent's own time "
        f"{statistics.median(own):,.0f} decisions/s; 1,000-position benchmark median "
        f"{1e3 * statistics.median(times):.1f} ms (runs: {', '.join(f'{1e3 * t:.1f}' for t in times)})"
    )


def engine_speed(rules, table, games: int) -> None:
    began = time.perf_counter()
    match = play_match(ENGINE, "greedy", rules, games, seed=0, table=table, run=RunOptions(workers=1, progress=False))
    seconds = time.perf_counter() - began
    regret = match.agents[0].regret
    print(
        f"reference UEI engine (Python, one process): {regret.decisions / seconds:,.0f} decisions/s end to end, "
        f"{1e3 * regret.seconds_per_move:.3f} ms per move ({games} games vs greedy, regret {regret.mean:.3f})"
    )


def unbiased(rules, table, games: int) -> None:
    """Random against perfect: the raw win rate and the luck-adjusted one estimate the same thing."""
    match = play_match("random", "perfect", rules, games, seed=0, table=table, run=RunOptions(progress=False))
    side = match.agents[0]
    adjusted, raw = side.luck_adjusted, side.wins
    low, high = raw.interval
    print(
        f"random vs perfect, {games:,} games: raw win rate {raw.rate:.3%} [{low:.3%}, {high:.3%}] (Wilson), "
        f"luck-adjusted {adjusted.mean:+.3%} [{adjusted.low:+.3%}, {adjusted.high:+.3%}]; difference "
        f"{adjusted.mean - raw.rate:+.3%}, shown as {adjusted}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--unbiased-games", type=int, default=10_000)
    parser.add_argument("--engine-games", type=int, default=40)
    args = parser.parse_args()
    rules = get_rules("finkel")
    table = table_for(rules, solve=False)
    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory() as folder:
        for spec in (ppo_2x64(Path(folder)), "ppo"):
            decisions_per_second(spec, rules, table, args.games, args.repeats)
    engine_speed(rules, table, args.engine_games)
    unbiased(rules, table, args.unbiased_games)


if __name__ == "__main__":
    main()
