"""Value networks: held-out regret at each search depth, and decisions per second answered in batches.

Run: ``python -m benchmarks.bench_neural [--agents neural,td] [--rules finkel,blitz,masters] [--depths 0,1,2]
[--held-out 20000] [--decisions 4000] [--repeats 3]``

For each agent spec (default: ``neural``, the shipped network of each rule set, and ``td`` on finkel) and rule set
it can play: the mean regret (win-% points) with its 95% interval at each depth, on the test set that ``evaluate``
reports (1,000 positions of perfect play) and on the held-out check (``--held-out``, 20,000 positions of a seed
nothing trains or selects on; 0 skips it), then the speed: ``--decisions`` decisions of perfect play (another
seed) answered in one ``select_moves`` batch by a fresh agent (its caches empty), every core, the median of
``--repeats`` runs after a warm-up run that compiles the kernels.
"""

from __future__ import annotations

import argparse
import statistics
import time

from urgym.agents import make_agent
from urgym.evaluation.scoring.positions import (
    HELD_OUT_POSITIONS,
    PositionBenchmark,
    benchmark_positions,
    held_out_positions,
    score_positions,
)
from urgym.evaluation.scoring.runner import RunOptions
from urgym.solver import table_for

from benchmarks.common import machine
from urgym import get_rules
from urgym.batch import Decisions


def with_depth(spec: str, depth: int) -> str:
    return spec if depth == 0 else f"{spec}:depth={depth}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default="neural,td")
    parser.add_argument("--rules", default="finkel,blitz,masters")
    parser.add_argument("--depths", default="0,1,2")
    parser.add_argument("--speed-depths", default="0,2")
    parser.add_argument("--held-out", type=int, default=HELD_OUT_POSITIONS)
    parser.add_argument("--decisions", type=int, default=4000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(machine())
    rows = []
    for name in args.rules.split(","):
        rules = get_rules(name)
        table = None
        for spec in args.agents.split(","):
            try:
                make_agent(spec).check_rules(rules)
            except ValueError as err:
                print(f"{spec} on {name}: skipped ({err})")
                continue
            table = table or table_for(rules, solve=False, progress=False)
            sets = {"test": benchmark_positions(table)}
            if args.held_out:
                sets["held-out"] = held_out_positions(table, args.held_out)
            row = {"rules": name, "agent": spec}
            for depth in (int(d) for d in args.depths.split(",")):
                for split, positions in sets.items():
                    agent = make_agent(with_depth(spec, depth))
                    run = RunOptions(workers=1, progress=False)
                    row[f"{split}{depth}"] = figure = with_interval(score_positions(agent, table, positions, run))
                    print(f"{name} {with_depth(spec, depth)}: {split}-set regret {figure}", flush=True)
            batch = Decisions.of_positions(benchmark_positions(table, args.decisions, seed=777))
            for depth in (int(d) for d in args.speed_depths.split(",")):
                make_agent(with_depth(spec, depth)).select_moves(rules, batch)  # compiles the kernels
                seconds = []
                for _ in range(args.repeats):
                    agent = make_agent(with_depth(spec, depth))
                    start = time.perf_counter()
                    agent.select_moves(rules, batch)
                    seconds.append(time.perf_counter() - start)
                rate = len(batch) / statistics.median(seconds)
                row[f"speed{depth}"] = rate
                print(
                    f"{name} {with_depth(spec, depth)}: {rate:,.0f} decisions/s (median of {args.repeats}, "
                    f"{len(batch):,} decisions per batch)",
                    flush=True,
                )
            rows.append(row)
    regrets = [f"{split}{d}" for d in (int(d) for d in args.depths.split(",")) for split in ("test", "held-out")]
    regrets = [key for key in regrets if any(key in row for row in rows)]
    speeds = [f"speed{d}" for d in args.speed_depths.split(",")]
    heads = [f"{key[:-1]}, depth {key[-1]}" for key in regrets] + [f"decisions/s, depth {k[-1]}" for k in speeds]
    print("\n| rule set | agent | " + " | ".join(heads) + " |")
    print("|---|---|" + "---|" * len(heads))
    for row in rows:
        cells = [row[key] for key in regrets] + [f"{row[key]:,.0f}" for key in speeds]
        print(f"| {row['rules']} | `{row['agent']}` | " + " | ".join(cells) + " |")


def with_interval(bench: PositionBenchmark) -> str:
    """A position benchmark's mean regret with its 95% interval, as the tables show it."""
    regret = bench.regret
    return f"{regret.mean:.5f} [{regret.low95:.5f}, {regret.high95:.5f}]"


if __name__ == "__main__":
    main()
