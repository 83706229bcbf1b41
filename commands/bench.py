"""``urgym bench``: the RL benchmark's protocol, from the command line.

- ``urgym bench --list``: the tasks and what each fixes;
- ``urgym bench --task T --algo A --out DIR``: train A on every seed of T, write ``DIR/results.json`` and
  ``DIR/curves.png``; run again, it resumes (finished seeds kept, an unfinished one from its last checkpoint where
  the algorithm writes them: maskable-ppo, dqn, alphazero);
- ``urgym bench --task T --agent SPEC``: score an existing agent or model under T's metrics, without training;
- ``urgym bench --leaderboard [FILES] [--plot FILE]``: the shipped baselines beside the results given (and the
  given runs' learning curves together).

docs/benchmark.md gives the protocol: tasks, budgets, metrics and their equations, seeds, intervals, and how to
submit a result.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from urgym.commands.common import (
    ArgumentParser,
    check_count,
    check_solve_allowed,
    command,
    key_values,
    seed,
)
from urgym.evaluation.bench.protocol import (
    bench_algorithm,
    bench_algorithms,
    estimate_minutes,
    estimate_scoring_minutes,
    finished_seeds,
    run_task,
    score_agent,
)
from urgym.evaluation.bench.results import ResultError, baseline_results, leaderboard, load_result, plot_curves
from urgym.evaluation.bench.tasks import METRICS, TASKS, Task, get_task
from urgym.evaluation.training.algorithms import get_algorithm
from urgym.evaluation.training.learner import Algorithm, settings_help, with_settings
from urgym.solver import table_for

from urgym.checks import plural
from urgym.files import PLOT_FORMATS, check_not_broken_link, check_output, write_atomic

__all__ = ["main"]

MAX_SEEDS = 100
MAX_MINUTES = 24 * 60.0
"""The longest run started without ``--max-minutes`` raised (a day)."""


@command(
    "urgym bench",
    interrupted="run the same command again to resume: finished seeds are kept, the unfinished one goes on from its "
    "last checkpoint",
)
def main(argv: list[str] | None = None) -> int:
    """Run ``urgym bench``; return the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.list:
        print(_task_list())
        return 0
    if args.leaderboard is not None:
        given = _results(parser, args.leaderboard)
        if args.plot is not None:
            try:
                check_output(args.plot, PLOT_FORMATS)
                wrote = plot_curves(given, args.plot)
            except ValueError as err:
                parser.error(f"--plot: {err}")
        shipped = baseline_results()
        print(leaderboard([*shipped, *(result for result in given if result not in shipped)]))  # each row once
        if args.plot is not None:
            print(f"wrote {wrote}")
        return 0
    if args.plot is not None:
        parser.error("--plot goes with --leaderboard FILES (a run writes its own curves.png)")
    if args.task is None:
        parser.error("give --task (see --list), or --list, or --leaderboard")
    try:
        task = get_task(args.task)
    except ValueError as err:
        parser.error(str(err))
    if (args.algo is None) == (args.agent is None):
        parser.error("give either --algo (train under the task) or --agent (score an existing agent)")
    if args.agent is not None and args.set:
        parser.error("--set changes an algorithm's settings: it goes with --algo, not --agent")
    algorithm, overrides = None, {}
    if args.algo is not None:
        try:
            algorithm = bench_algorithm(args.algo)
            overrides = key_values(args.set, "--set")
            with_settings(algorithm, overrides)  # checked before any work
        except ValueError as err:
            parser.error(str(err))
    if args.seeds is not None:
        check_count(parser, "seeds", args.seeds, 1, MAX_SEEDS)
    if args.seed_range is not None and args.seeds is not None:
        parser.error("give --seeds N (seeds 0 to N-1) or --seed-range A:B, not both")
    seeds = (
        list(range(task.seeds if args.seeds is None else args.seeds)) if args.seed_range is None else args.seed_range
    )
    check_count(parser, "jobs", args.jobs, 1, os.cpu_count() or 1, "this machine's cores")
    if not 0 < args.max_minutes <= 10 * MAX_MINUTES:
        parser.error(f"--max-minutes must be above 0 and at most {10 * MAX_MINUTES:g}, got {args.max_minutes}")
    if algorithm is not None and args.out is None:
        parser.error("--algo trains: give --out DIR for the seeds' models, curves and results.json")
    try:
        check_solve_allowed(task.get_rules(), args.solve)
        if algorithm is not None:
            algorithm.require(f"urgym bench --algo {algorithm.name}")
            if args.out is not None:
                check_not_broken_link(args.out, "a folder for the run")
                check_output(Path(args.out) / "results.json")
    except (ValueError, ImportError) as err:
        parser.error(str(err))
    _check_estimate(parser, args, task, algorithm, seeds)  # last: it may build and time the agent
    progress = not args.no_progress
    table_for(task.get_rules(), solve=True, progress=progress)  # a missing table solved before any other work
    if algorithm is None:
        result = score_agent(task, args.agent, args.seed, progress)
        if args.out is not None:
            out = Path(args.out) / "results.json"
            write_atomic(out, lambda tmp: tmp.write_text(json.dumps(result, indent=1)))
    else:
        result = run_task(task, algorithm, args.out, seeds, args.jobs, progress, settings=overrides)
    print(leaderboard([result]))
    if args.out is not None:
        print(f"results in {Path(args.out) / 'results.json'}")
    return 0


def _check_estimate(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    task: Task,
    algorithm: Algorithm | None,
    seeds: list[int],
) -> None:
    """Refuse, before any work, a run estimated to take longer than ``--max-minutes``.

    Seeds already finished in ``--out`` are not counted; an agent is timed on a sample of its decisions.
    """
    try:
        if algorithm is None:
            minutes, what = estimate_scoring_minutes(task, args.agent, args.seed), f"scoring {args.agent}"
        else:
            finished = finished_seeds(args.out, seeds) if args.out is not None else 0
            minutes = estimate_minutes(task, algorithm, len(seeds), args.jobs, finished)
            what = f"{algorithm.name} with {plural(len(seeds), 'seed')}"
    except ValueError as err:  # an unknown agent, a bad spec
        parser.error(str(err))
    if minutes > args.max_minutes:
        parser.error(
            f"{what} on {task.id} is estimated at {minutes:.0f} minutes on this machine, over --max-minutes "
            f"{args.max_minutes:g}: raise --max-minutes"
            + ("" if algorithm is None else ", or run fewer --seeds now (a later run with more resumes)")
        )


def _parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="urgym bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--list", action="store_true", help="list the tasks, what each fixes, and the algorithms")
    parser.add_argument("--task", help=f"the task: {', '.join(TASKS)} (a name without -vN: its newest version)")
    parser.add_argument(
        "--algo",
        help=f"train this algorithm under the task: {', '.join(bench_algorithms())} (td = td-lambda, ppo = "
        "maskable-ppo), an installed package's, or your own as FILE.py:CLASS or package.module:CLASS",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change one of the algorithm's settings (repeat for more; --list names each algorithm's settings)",
    )
    parser.add_argument("--agent", help="score this agent spec under the task without training (any evaluate --agent)")
    parser.add_argument("--seeds", type=int, help="seeds 0 to N-1 (default: the task's)")
    parser.add_argument(
        "--seed-range",
        type=seed_range,
        metavar="A:B",
        help="seeds A to B-1 only: part of a table, to run anywhere and join with --merge",
    )
    parser.add_argument("--seed", type=seed, default=0, help="--agent: the agent's seed (default 0)")
    parser.add_argument("--jobs", type=int, default=1, help="seeds trained at once, one core each (default 1)")
    parser.add_argument(
        "--out", help="folder of the run (seed folders, results.json, curves.png); resumed if it exists"
    )
    parser.add_argument(
        "--leaderboard",
        nargs="*",
        metavar="FILE",
        help="print the shipped baselines beside these results.json files",
    )
    parser.add_argument(
        "--plot", help="with --leaderboard FILES: plot their learning curves together (trained runs of one task)"
    )
    parser.add_argument(
        "--max-minutes",
        type=float,
        default=MAX_MINUTES,
        help=f"refuse a run estimated to take longer on this machine (default {MAX_MINUTES:g})",
    )
    parser.add_argument("--solve", action="store_true", help="solve the task's table even when that takes long")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    return parser


def seed_range(text: str) -> list[int]:
    """``--seed-range A:B`` as the seeds A to B - 1 (argparse's type)."""
    first, sep, last = text.partition(":")
    try:
        low, high = int(first), int(last)
    except ValueError:
        low = high = -1
    if not sep or not 0 <= low < high or high - low > MAX_SEEDS:
        raise argparse.ArgumentTypeError(
            f"--seed-range takes A:B, whole numbers with 0 <= A < B and at most {MAX_SEEDS} seeds, got {text!r}"
        )
    return list(range(low, high))


def _task_list() -> str:
    lines = []
    for task in TASKS.values():
        lines += [
            f"{task.id}: {task.description}",
            f"    rules {task.rules}, {task.pieces} pieces; the learner plays {task.learner}",
            f"    budget {task.budget:,} decisions, evaluated every {task.eval_every:,}; {task.seeds} seeds",
            f"    metrics: {', '.join(task.metrics_at(False))} at every point, "
            f"{', '.join(task.metrics_at(True))} at the end",
        ]
    lines.append("metrics:")
    lines += [f"    {name}: {meaning}" for name, meaning in METRICS.items()]
    lines.append("algorithms (--algo; --set KEY=VALUE changes a setting):")
    for name in bench_algorithms():
        try:
            algorithm = get_algorithm(name)
        except ValueError as err:  # an installed package's that does not load: said, not fatal to the list
            lines.append(f"    {name}: cannot be loaded ({err})")
            continue
        lines.append(f"    {algorithm.name}: {algorithm.description or algorithm.label}")
        lines.append(f"        settings: {settings_help(algorithm)}")
    return "\n".join(lines)


def _results(parser: argparse.ArgumentParser, files: list[str]) -> list[dict]:
    try:
        return [load_result(path) for path in files]
    except ResultError as err:
        parser.error(str(err))
