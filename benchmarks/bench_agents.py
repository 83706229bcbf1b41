"""Expectiminimax time per move on finkel, one core, over decisions taken from real games.

Run: ``python -m benchmarks.bench_agents [--positions 200] [--depths 3 5 7] [--repeats 3]``

The positions come from games of expectimax depth 2 against itself (seeded), keeping every decision with
at least two legal moves. Each depth searches them in game order with one agent, as in play (its
transposition table carries over between moves). JIT compilation is warmed up before timing. The
figures are medians over the repeats of each run's median, 90th percentile and nodes per second.
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import statistics

import numpy as np
from urgym.agents import ExpectimaxAgent, make_agent

from benchmarks.common import machine
from urgym import Game, Position


def game_decisions(count: int, seed: int = 0) -> list[tuple[Position, int]]:
    """Decisions with two or more legal moves from seeded expectimax:2 self-play games."""
    player = make_agent("expectimax:2")
    decisions: list[tuple[Position, int]] = []
    game_index = 0
    while len(decisions) < count:
        game = Game("finkel", seed, game_index)
        game_index += 1
        while not game.is_over and len(decisions) < count:
            if len(game.legal_moves) >= 2:
                decisions.append((game.position, game.roll))
            game.play(player.select_move(game.position, game.roll))
    return decisions


def run(depth: int, decisions: list[tuple[Position, int]]) -> tuple[float, float, float]:
    agent = ExpectimaxAgent(depth=depth)
    times, nodes = [], 0
    for position, roll in decisions:
        result = agent.search(position, roll)
        times.append(result.seconds)
        nodes += result.nodes
    return float(np.median(times)), float(np.percentile(times, 90)), nodes / sum(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--positions", type=int, default=200)
    parser.add_argument("--depths", type=int, nargs="+", default=[3, 5, 7])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    decisions = game_decisions(args.positions)
    ExpectimaxAgent(depth=3).search(*decisions[0])  # JIT warm-up (compiled code is cached on disk too)
    print(f"machine: {machine()}; {len(decisions)} finkel decisions from expectimax:2 self-play")
    print("| depth | median ms/move | p90 ms/move | nodes/s | runs (median ms) |")
    print("|---|---|---|---|---|")
    for depth in args.depths:
        runs = [run(depth, decisions) for _ in range(args.repeats)]
        median = statistics.median(r[0] for r in runs)
        p90 = statistics.median(r[1] for r in runs)
        rate = statistics.median(r[2] for r in runs)
        each = ", ".join(f"{r[0] * 1e3:.1f}" for r in runs)
        print(f"| {depth} | {median * 1e3:.2f} | {p90 * 1e3:.2f} | {rate:,.0f} | {each} |")


if __name__ == "__main__":
    main()
