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
import sys
from pathlib import Path

from urgym.commands.common import (
    ArgumentParser,
    check_count,
    check_solve_allowed,
    command,
    key_values,
    seed,
)
from urgym.evaluation.bench.compare import compare
from urgym.evaluation.bench.merge import merge_runs
from urgym.evaluation.bench.protocol import (
    SeedRun,
    bench_algorithm,
    bench_algorithms,
    check_run_folder,
    estimate_minutes,
    estimate_scoring_minutes,
    finished_seeds,
    run_task,
    score_agent,
)
from urgym.evaluation.bench.results import (
    ResultError,
    baseline_results,
    check_rankable,
    leaderboard,
    load_result,
    plot_curves,
    validate_result,
)
from urgym.evaluation.bench.stats import REPS
from urgym.evaluation.bench.tasks import METRICS, TASKS, Task, get_task
from urgym.evaluation.bench.verify import result_task, verify
from urgym.evaluation.training.algorithms import get_algorithm
from urgym.evaluation.training.learner import Algorithm, settings_help, with_settings
from urgym.solver import table_for

from urgym.checks import plural
from urgym.files import PLOT_FORMATS, check_not_broken_link, check_output, require_extra, write_atomic

__all__ = ["main"]

MAX_SEEDS = 100
MAX_MINUTES = 24 * 60.0
"""The longest run started without ``--max-minutes`` raised (a day)."""
BENCH_SOLVE_MINUTES = 1.0
"""The longest solve of a task's missing table that ``urgym bench`` starts without ``--solve`` (finkel with 4 pieces
takes seconds; full finkel minutes and 1.4 GB: asked for, with what it costs)."""


MODES = {
    "list": (),
    "leaderboard": ("plot",),
    "compare": ("out", "reps"),
    "merge": ("out",),
    "verify": ("seed", "record", "max_minutes", "solve", "no_progress", "quiet"),
    "agent": ("task", "seed", "out", "max_minutes", "solve", "no_progress", "quiet"),
    "algo": (
        "task",
        "set",
        "seeds",
        "seed_range",
        "jobs",
        "out",
        "max_minutes",
        "solve",
        "no_progress",
        "quiet",
        "ray",
    ),
}
"""Each mode of the command (its option) and the options that go with it; any other option given is refused."""


@command(
    "urgym bench",
    interrupted="run the same command again to resume: finished seeds are kept, the unfinished one goes on from its "
    "last checkpoint",
)
def main(argv: list[str] | None = None) -> int:
    """Run ``urgym bench``; return the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    mode = _mode(parser, args)
    if mode == "list":
        print(_task_list())
    elif mode == "leaderboard":
        _leaderboard(parser, args)
    elif mode == "compare":
        _compare(parser, args)
    elif mode == "merge":
        _merge(parser, args)
    elif mode == "verify":
        return _verify(parser, args)
    else:
        _run(parser, args)
    return 0


def _mode(parser: argparse.ArgumentParser, args: argparse.Namespace) -> str:
    """The one mode given; refuse a second mode, or an option the mode does not take (naming both)."""
    chosen = [mode for mode in MODES if _given(parser, args, mode)]
    if not chosen:
        parser.error("give --task with --algo or --agent, or --list, --leaderboard, --compare, --merge or --verify")
    if len(chosen) > 1:
        parser.error(f"{' and '.join(_flag(m) for m in chosen)} are separate modes: give one")
    mode = chosen[0]
    for dest in ("task", "set", "seeds", "seed_range", "jobs", "out", "plot", "reps", "seed", "record", "max_minutes"):
        if _given(parser, args, dest) and dest not in MODES[mode]:
            takers = [_flag(m) for m, options in MODES.items() if dest in options]
            parser.error(f"{_flag(dest)} does not go with {_flag(mode)} (it goes with {', '.join(takers)})")
    for dest in ("solve", "no_progress", "quiet", "ray"):
        if _given(parser, args, dest) and dest not in MODES[mode]:
            parser.error(f"{_flag(dest)} does not go with {_flag(mode)}")
    if mode in ("agent", "algo") and args.task is None:
        parser.error(f"{_flag(mode)} needs --task (see --list)")
    return mode


def _given(parser: argparse.ArgumentParser, args: argparse.Namespace, dest: str) -> bool:
    return getattr(args, dest) != parser.get_default(dest)


def _flag(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def _leaderboard(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    given = _results(parser, args.leaderboard)
    for path, result in zip(args.leaderboard, given, strict=True):
        try:
            check_rankable(result)
        except ResultError as err:
            parser.error(f"{path}: {err}")
    wrote = None
    if args.plot is not None:
        try:
            check_output(args.plot, PLOT_FORMATS)
            wrote = plot_curves(given, args.plot)
        except ValueError as err:
            parser.error(f"--plot: {err}")
    print(leaderboard([*baseline_results(), *given]))  # a shipped baseline given again is listed once
    if wrote is not None:
        print(f"wrote {wrote}")


def _compare(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    results = _results(parser, args.compare)
    out = None
    if args.out is not None:
        try:
            check_not_broken_link(args.out, "a folder for the comparison's plots")
            for name in ("profiles.png", "aggregates.png", "statistics.json"):
                check_output(Path(args.out) / name)
        except ValueError as err:
            parser.error(f"--out: {err}")
        out = Path(args.out)
    try:
        table, _ = compare(results, out, args.reps)
    except ValueError as err:
        parser.error(str(err))
    print(table)
    if out is not None:
        print(f"plots and statistics.json in {out}")


def _merge(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.out is None:
        parser.error("--merge writes a run folder: give --out DIR")
    try:
        check_not_broken_link(args.out, "a folder for the merged run")
        check_output(Path(args.out) / "results.json")
        result = merge_runs(args.merge, args.out)
    except ValueError as err:
        parser.error(str(err))
    print(leaderboard([result]))
    print(f"merged {plural(len(result['seeds']), 'seed')} into {Path(args.out) / 'results.json'}")


def _verify(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Rerun seeds of a result; exit status 1 where a figure differs."""
    (result,) = _results(parser, [args.verify])
    seeds = args.seed if args.seed is not None else result["seeds"]
    try:
        task = result_task(result)
        check_solve_allowed(task.get_rules(), args.solve, limit=BENCH_SOLVE_MINUTES, reproducible=True)
        minutes = _verify_minutes(result, task, seeds)
    except ValueError as err:
        parser.error(str(err))
    if minutes > args.max_minutes:
        parser.error(
            f"rerunning {plural(len(seeds), 'seed')} of {args.verify} is estimated at {minutes:.0f} minutes, over "
            f"--max-minutes {args.max_minutes:g}: raise it, or name fewer seeds with --seed"
        )
    table_for(task.get_rules(), solve=True, progress=not args.no_progress, reproducible=True)
    try:
        report = verify(result, seeds)
    except ValueError as err:
        parser.error(str(err))
    for seed_report in report["seeds"]:
        print(verification_line(seed_report))
    if args.record:
        result.setdefault("verifications", []).append(report)
        validate_result(result)
        write_atomic(args.verify, lambda tmp: tmp.write_text(json.dumps(result, indent=1)))
        print(f"recorded in {args.verify}")
    return 0 if all(seed_report["identical"] for seed_report in report["seeds"]) else 1


def _verify_minutes(result: dict, task: Task, seeds: list[int]) -> float:
    if "agent" in result:
        return len(seeds) * estimate_scoring_minutes(task, result["agent"])
    algorithm = bench_algorithm(result.get("algorithm_source") or result["algo"])
    return estimate_minutes(task, algorithm, len(seeds), 1)


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Train an algorithm under the task's seeds, or score an agent."""
    try:
        task = get_task(args.task)
    except ValueError as err:
        parser.error(str(err))
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
    seeds = args.seed_range or list(range(task.seeds if args.seeds is None else args.seeds))
    check_count(parser, "jobs", args.jobs, 1, os.cpu_count() or 1, "this machine's cores")
    if not 0 < args.max_minutes <= 10 * MAX_MINUTES:
        parser.error(f"--max-minutes must be above 0 and at most {10 * MAX_MINUTES:g}, got {args.max_minutes}")
    if algorithm is not None and args.out is None:
        parser.error("--algo trains: give --out DIR for the seeds' models, curves and results.json")
    try:
        solve = check_solve_allowed(task.get_rules(), args.solve, limit=BENCH_SOLVE_MINUTES, reproducible=True)
        if algorithm is not None:
            algorithm.require(f"urgym bench --algo {algorithm.name}")
        if args.ray is not None:
            require_extra("ray", "ray", "urgym bench --ray")
            if args.jobs != 1:
                raise ValueError("--jobs counts local processes; with --ray the cluster's cores run the seeds")
        if args.out is not None and algorithm is not None:
            check_run_folder(Path(args.out))
        elif args.out is not None:
            _check_agent_out(Path(args.out))
    except (ValueError, ImportError) as err:
        parser.error(str(err))
    if algorithm is None and args.seed is not None and len(args.seed) > 1:
        parser.error("--agent scores one agent once: give at most one --seed")
    args.seed = args.seed[0] if args.seed else 0
    _check_estimate(parser, args, task, algorithm, seeds, solve.minutes if solve else 0.0)  # last: it times the agent
    progress = not args.no_progress
    lines = not args.quiet and not sys.stdout.isatty()
    # a missing table solved before any other work: the reproducible one the measuring asks for, solved once
    table_for(task.get_rules(), solve=True, progress=progress, reproducible=True)
    if algorithm is None:
        result = score_agent(task, args.agent, args.seed, progress)
        if args.out is not None:
            out = Path(args.out) / "results.json"
            write_atomic(out, lambda tmp: tmp.write_text(json.dumps(result, indent=1)))
    else:
        result = run_task(
            task, algorithm, args.out, seeds, args.jobs, progress, settings=overrides, lines=lines, ray=args.ray
        )
    print(leaderboard([result]))
    if args.out is not None:
        print(f"results in {Path(args.out) / 'results.json'}")


def _check_agent_out(out: Path) -> None:
    """Refuse an ``--out`` for a scoring that holds a trained run, or a ``results.json`` urgym did not write there."""
    check_not_broken_link(out, "a folder for the result")
    check_output(out / "results.json")
    if (out / "run.json").exists():
        raise ValueError(f"{out} holds a trained run (run.json): a scoring writes into a folder of its own")
    if (out / "results.json").exists():
        try:
            held = load_result(out / "results.json")
        except ResultError:
            held = {}
        if "agent" not in held:
            raise ValueError(f"{out / 'results.json'} is not an agent's result urgym wrote: give another --out")


def _check_estimate(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    task: Task,
    algorithm: Algorithm | None,
    seeds: list[int],
    solve_minutes: float = 0.0,
) -> None:
    """Refuse, before any work, a run estimated to take longer than ``--max-minutes``.

    Seeds already finished in ``--out`` are not counted; an agent is timed on a sample of its decisions; a missing
    table's solve is counted.
    """
    try:
        if algorithm is None:
            minutes, what = estimate_scoring_minutes(task, args.agent, args.seed), f"scoring {args.agent}"
        else:
            run = SeedRun(task, algorithm, with_settings(algorithm, key_values(args.set, "--set")))
            finished = finished_seeds(args.out, seeds, run) if args.out is not None else 0
            jobs = len(seeds) if args.ray is not None else args.jobs  # a cluster runs them at once, cores allowing
            minutes = estimate_minutes(task, algorithm, len(seeds), jobs, finished)
            what = f"{algorithm.name} with {plural(len(seeds), 'seed')}"
    except ValueError as err:  # an unknown agent, a bad spec
        parser.error(str(err))
    minutes += solve_minutes
    if solve_minutes:
        what += " and its table's solve"
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
    parser.add_argument(
        "--seed",
        type=seed,
        action="append",
        help="--agent: the agent's seed (default 0); --verify: a seed to rerun (repeat for more; default: every seed)",
    )
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
        "--compare",
        nargs="+",
        metavar="FILE",
        help="the statistics of results of several learners: IQM, mean and median with stratified-bootstrap "
        "intervals per task and across tasks, probabilities of improvement; --out DIR for the plots",
    )
    parser.add_argument(
        "--reps", type=int, default=REPS, help=f"--compare: bootstrap draws of each interval (default {REPS:,})"
    )
    parser.add_argument(
        "--merge",
        nargs="+",
        metavar="RUN",
        help="join the seeds of run folders or results.json files of one task, learner, settings and library "
        "versions into one result in --out DIR",
    )
    parser.add_argument(
        "--verify",
        metavar="FILE",
        help="train (or score) a result's seeds again and compare every figure to the bit (--seed N for some)",
    )
    parser.add_argument("--record", action="store_true", help="--verify: write the verification into the result file")
    parser.add_argument(
        "--ray",
        nargs="?",
        const="auto",
        metavar="ADDRESS",
        help="train the seeds as tasks of a Ray cluster (ADDRESS: the head's; alone: the local one, or a new one)",
    )
    parser.add_argument(
        "--max-minutes",
        type=float,
        default=MAX_MINUTES,
        help=f"refuse a run estimated to take longer on this machine (default {MAX_MINUTES:g})",
    )
    parser.add_argument("--solve", action="store_true", help="solve the task's table even when that takes long")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    parser.add_argument(
        "--quiet",
        action="store_true",
        help="no progress lines where output is not a terminal (one a seed started and finished, one a point)",
    )
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


def verification_line(seed_report: dict) -> str:
    """One seed's verification, in a line."""
    seed = seed_report["seed"]
    if seed_report["identical"]:
        figures, digest = seed_report["figures"], seed_report["digest"][:16]
        return f"seed {seed}: bit-identical, every one of its {figures} figures (digest {digest})"
    first = seed_report["differences"][0]
    why = "; ".join(seed_report.get("explanations", [])) or "no difference of libraries, processor or urgym found"
    return (
        f"seed {seed}: {seed_report['differing']} of {seed_report['figures']} figures differ, the first at "
        f"{first['at']}: {first['metric']} {first['recorded']!r} recorded, {first['rerun']!r} rerun ({why})"
    )


def _results(parser: argparse.ArgumentParser, files: list[str]) -> list[dict]:
    try:
        return [load_result(path) for path in files]
    except ResultError as err:
        parser.error(str(err))
