"""Match-play throughput: perfect against perfect on finkel, games per second on all cores.

Run: ``python -m benchmarks.bench_evaluation [--games 200000] [--repeats 3] [--workers N]``

Needs finkel's solved table in the cache (``solve --rules finkel``). A first short match starts the worker
processes, loads the table in each and compiles nothing (numba's cache is warm after the first run ever);
the timed matches reuse those workers, as a tournament or a long evaluation does.
"""

from __future__ import annotations

import argparse
import statistics
import time

from urgym.evaluation.scoring.match import play_match
from urgym.evaluation.scoring.runner import RunOptions, default_workers
from urgym.solver import table_for

from benchmarks.common import machine
from urgym import get_rules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=default_workers())
    args = parser.parse_args()
    rules = get_rules("finkel")
    table = table_for(rules, solve=False)
    play_match(
        "perfect", "perfect", rules, 2000, seed=0, table=table, run=RunOptions(workers=args.workers, progress=False)
    )
    rates = []
    for run in range(args.repeats):
        start = time.perf_counter()
        result = play_match(
            "perfect",
            "perfect",
            rules,
            args.games,
            seed=run + 1,
            table=table,
            run=RunOptions(workers=args.workers, progress=False),
        )
        rates.append(args.games / (time.perf_counter() - start))
        light = result.agents[0].as_light.wins + result.agents[1].as_light.wins
        print(
            f"run {run + 1}: {rates[-1]:,.0f} games/s; light won {light / args.games:.2%}, "
            f"{result.turns_per_player:.2f} turns per player, {result.legal_moves_per_decision:.3f} legal moves "
            f"per decision"
        )
    print(f"machine: {machine()}, {args.workers} workers")
    print(
        f"perfect vs perfect, finkel: median {statistics.median(rates):,.0f} games/s "
        f"(runs: {', '.join(f'{r:,.0f}' for r in rates)})"
    )


if __name__ == "__main__":
    main()
