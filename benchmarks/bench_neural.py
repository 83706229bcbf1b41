"""Value networks: held-out regret at each search depth, and decisions per second answered in batches.

Run: ``python -m benchmarks.bench_neural [--agents neural,td] [--rules finkel,blitz,masters] [--depths 0,1,2]
[--decisions 4000] [--repeats 3]``

For each agent spec (default: ``neural``, the shipped network of each rule set, and ``td`` on finkel) and rule set
it can play: the mean regret (win-% points) on the test set that ``evaluate`` reports (1,000 positions of perfect
play) at each depth, then the speed: ``--decisions`` decisions of perfect play (another seed) answered in one
``select_moves`` batch by a fresh agent (its caches empty), every core, the median of ``--repeats`` runs after a
warm-up run that compiles the kernels.
"""

from __future__ import annotations

import argparse
import statistics
import time

from urgym.agents import make_agent
from urgym.evaluation.scoring.positions import benchmark_positions, score_positions
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
            test = benchmark_positions(table)
            row = {"rules": name, "agent": spec}
            for depth in (int(d) for d in args.depths.split(",")):
                agent = make_agent(with_depth(spec, depth))
                regret = score_positions(agent, table, test, RunOptions(workers=1, progress=False)).regret.mean
                row[f"regret{depth}"] = regret
                print(f"{name} {with_depth(spec, depth)}: test-set regret {regret:.4f}", flush=True)
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
    depths = [int(d) for d in args.depths.split(",")]
    speeds = [int(d) for d in args.speed_depths.split(",")]
    print(
        "\n| rule set | agent | "
        + " | ".join(f"regret, depth {d}" for d in depths)
        + " | "
        + " | ".join(f"decisions/s, depth {d}" for d in speeds)
        + " |"
    )
    print("|---|---|" + "---|" * (len(depths) + len(speeds)))
    for row in rows:
        print(
            f"| {row['rules']} | `{row['agent']}` | "
            + " | ".join(f"{row[f'regret{d}']:.4f}" for d in depths)
            + " | "
            + " | ".join(f"{row[f'speed{d}']:,.0f}" for d in speeds)
            + " |"
        )


if __name__ == "__main__":
    main()
