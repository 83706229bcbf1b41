"""``train``: learn an agent and pick its best model on validation positions (never the test set ``evaluate`` reports).

Six methods:

- ``maskable-ppo``: sb3-contrib's MaskablePPO on ``urgym/Ur-v2``, over ``--envs`` games stepped together, against
  any agent spec, its own live policy (``self``), or a mixture (``--opponent`` repeated);
- ``dqn``: DQN with action masks (in acting and in its targets), the same environments and opponents;
- ``td-lambda``: TD(lambda) self-play on after-states with a small network, in numba (no table needed to learn);
- ``distill``: an after-state value network learned from the solved table, or from a network's own search
  (``--teacher``: no table needed to learn);
- ``expected-td``: an after-state value network learned by self-play alone, with expected TD.
- ``alphazero``: AlphaZero-style self-play with search (mctx over the JAX port), a policy-value network learned
  from the search's visit counts and the games' outcomes; its policy alone (no search) is what is saved and scored.

Each writes to ``--out``: the final and the best model with their cards (``.json``), the learning curve
(``curve.csv``, ``curve.png``) and logs (CSV and TensorBoard in ``logs/``).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import typing
from pathlib import Path
from typing import Any

from urgym.agents import make_agent
from urgym.agents.networks.value import ValueNetwork
from urgym.commands.common import (
    AUTO_SOLVE_MINUTES,
    ArgumentParser,
    check_solve_allowed,
    command,
    key_values,
    progress_off,
    seed,
)
from urgym.evaluation.scoring.runner import default_workers
from urgym.evaluation.training.algorithms import algorithm_names, get_algorithm
from urgym.evaluation.training.alphazero import AlphaZeroSettings
from urgym.evaluation.training.checkpoint import CHECKPOINT
from urgym.evaluation.training.distill import DISTILL as DISTILL_ALGORITHM
from urgym.evaluation.training.distill import DistillSettings
from urgym.evaluation.training.dqn import DQNSettings
from urgym.evaluation.training.expected_td import EXPECTED_TD, ExpectedTDSettings
from urgym.evaluation.training.learner import Algorithm, offers, with_settings
from urgym.evaluation.training.ppo import MASKABLE_PPO, VEC_ENVS, PPOSettings
from urgym.evaluation.training.run import UNCAPPED, RunPlan, check_run_folder, finished_run, plot_curves, train
from urgym.evaluation.training.td_lambda import TD_LAMBDA, TDLambdaSettings
from urgym.solver import table_for

from urgym import RULE_SET_NAMES, Rules, get_rules
from urgym.features import FEATURE_SETS
from urgym.files import check_not_broken_link, check_output, claim_folder

__all__ = ["main"]

DEFAULT_TIMESTEPS = 5_000_000
"""The budget of moves when neither ``--timesteps`` nor ``--minutes`` is given."""

# The defaults of every option below are the algorithms' own settings (read here, never written twice).
TD, PPO, DISTILL, EXPECTED, DQN, ALPHAZERO = (
    TDLambdaSettings(),
    PPOSettings(),
    DistillSettings(),
    ExpectedTDSettings(),
    DQNSettings(),
    AlphaZeroSettings(),
)


def _sizes(sizes: tuple[int, ...]) -> str:
    return ",".join(map(str, sizes))


@command("train", interrupted="the best model so far is in --out; add --resume to go on from the last evaluation")
def main(argv: list[str] | None = None) -> int:
    """Run ``train``; return the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        algorithm = get_algorithm(args.algo)
    except ValueError as err:
        parser.error(str(err))
    if args.timesteps is None:  # --minutes alone is the budget: no hidden cap of moves ends the run before it
        args.timesteps = DEFAULT_TIMESTEPS if args.minutes is None else UNCAPPED
    _check(parser, args, algorithm)
    try:
        rules = get_rules(args.rules, args.pieces)
        check_solve_allowed(rules, args.solve)  # before the output folder is made
    except ValueError as err:
        parser.error(str(err))
    if args.teacher is not None:
        _check_teacher(parser, args.teacher, rules)
    settings = _settings(parser, args, algorithm)
    if not args.out.strip():  # Path("") is the current folder: an empty --out is a mistake, never "here"
        parser.error("--out must name a folder for the models, card, curve and logs, got an empty path")
    out = Path(args.out)
    try:
        check_not_broken_link(out, "a folder for the models, card, curve and logs")
    except ValueError as err:
        parser.error(f"--out: {err}")
    if out.exists() and not out.is_dir():
        parser.error(f"--out {args.out} is a file; give a folder for the models, card, curve and logs")
    if args.rounds == 1:
        _check_out(parser, args, algorithm, out)
        _train_once(args, algorithm, rules, settings, out, args.seed)
        return 0
    teacher = args.teacher
    for number in range(1, args.rounds + 1):  # each round's best network teaches the next
        folder = out / f"round-{number}"
        if finished_run(folder, algorithm.model_suffix) and not args.replace:
            print(f"round {number} of {args.rounds}: finished before, in {folder}")
        else:
            print(f"round {number} of {args.rounds}: taught by {teacher}", flush=True)
            resume = args.resume or (folder / CHECKPOINT).is_file()
            _check_out(parser, argparse.Namespace(**{**vars(args), "resume": resume}), algorithm, folder)
            round_settings = dataclasses.replace(settings, teacher=str(teacher))
            _train_once(args, algorithm, rules, round_settings, folder, args.seed + number - 1, resume)
        teacher = folder / ("best_model.npz" if args.select == "best" else "model.npz")
    print(f"the last round's {'best ' if args.select == 'best' else ''}network: {teacher}")
    return 0


def _check_out(parser: argparse.ArgumentParser, args: argparse.Namespace, algorithm: Algorithm, out: Path) -> None:
    """Refuse an output folder the run could not write, or would overwrite unasked."""
    suffix = algorithm.model_suffix if offers(algorithm.learner, "save") else None
    try:
        check_output(out / "curve.csv")  # the folder can be created and written, before any training
        out.mkdir(parents=True, exist_ok=True)
        claim_folder(out, "a training run")
        check_run_folder(out, suffix, args.replace, args.resume)
        if args.resume and not (out / CHECKPOINT).is_file():
            raise ValueError(f"{out} holds no checkpoint ({CHECKPOINT}) to resume; run without --resume")
    except ValueError as err:
        parser.error(f"--out: {err}")


def _train_once(
    args: argparse.Namespace,
    algorithm: Algorithm,
    rules: Rules,
    settings: Any,
    out: Path,
    run_seed: int,
    resume: bool | None = None,
) -> None:
    """One run into ``out``: train, plot its curve, say where its models are."""
    allowed = math.inf if args.solve else AUTO_SOLVE_MINUTES  # a damaged table is treated as a missing one
    table = table_for(rules, solve=True, progress=not args.no_progress, max_solve_minutes=allowed)
    plan = RunPlan(
        out,
        args.timesteps,
        args.minutes,
        run_seed,
        not args.no_progress,
        args.replace,
        args.resume if resume is None else resume,
        args.eval_every,
        args.eval_positions,
        args.select == "best",
    )
    with progress_off(args.no_progress):  # the learner's own bars too (distill's labels)
        result = train(algorithm, rules, plan, settings, table)
    if result["best_regret"] is not None:
        plot_curves({algorithm.name: out / "curve.csv"}, out / "curve.png")
    best = "" if result["best_regret"] is None else f"; best mean regret {result['best_regret']:.4f} win-% points"
    if args.select == "last" and "mean_regret" in result["curve"][-1]:  # nothing was chosen: the last model is it
        best = f"; the last model's mean regret {result['curve'][-1]['mean_regret']:.4f} win-% points (--select last)"
    print(f"trained {result['timesteps']:,} decisions in {result['seconds'] / 60:.1f} min{best}; models in {out}")


def _parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="train", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--algo",
        default="maskable-ppo",
        help=f"the algorithm (default maskable-ppo): {', '.join(algorithm_names())}; td and ppo, the agent specs' "
        "names, train td-lambda and maskable-ppo; your own as FILE.py:CLASS or package.module:CLASS",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change any setting of the algorithm (repeat for more; urgym bench --list names them); the options "
        "below set the common ones",
    )
    parser.add_argument("--rules", default="finkel", help=f"rule set: {', '.join(RULE_SET_NAMES)} (default finkel)")
    parser.add_argument("--pieces", type=int, help="pieces per side (default: the rule set's)")
    parser.add_argument(
        "--timesteps",
        type=int,
        help=f"the learner's moves to train for (default {DEFAULT_TIMESTEPS:,}, or no cap with --minutes)",
    )
    parser.add_argument(
        "--minutes", type=float, help="stop after this much training time (and at --timesteps, if given)"
    )
    parser.add_argument(
        "--opponent",
        action="append",
        help="an agent spec, or 'self' for the learner's own live policy; repeat for a mixture "
        "(dealt to the environments in turn). maskable-ppo only; default: "
        f"{' and '.join(PPO.opponents)}",
    )
    parser.add_argument("--out", required=True, help="directory for models, card, curve and logs")
    parser.add_argument(
        "--replace", action="store_true", help="overwrite a finished run in --out (without it, one is refused)"
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="go on from the checkpoint in --out of an interrupted run (every algorithm of urgym writes one at each "
        "evaluation), given the same arguments; it ends as the run would have",
    )
    parser.add_argument("--seed", type=seed, default=0)
    parser.add_argument(
        "--envs",
        type=int,
        help=f"environments stepped together (maskable-ppo, dqn; default {PPO.envs}); alphazero: self-play games "
        f"played at once (default {ALPHAZERO.games})",
    )
    parser.add_argument(
        "--vec-env",
        choices=VEC_ENVS,
        help="native: every game stepped together in numba, opponents batched (default: "
        f"{PPO.vec_env}, fastest); dummy: one UrEnv after another in this process; subproc: one "
        "process each (no 'self')",
    )
    parser.add_argument(
        "--threads",
        type=int,
        help=f"torch threads of the learner (default {PPO.threads}); td-lambda: self-play threads sharing the "
        "weights (more than one is faster and not repeatable bit for bit)",
    )
    parser.add_argument(
        "--eval-every",
        type=int,
        help=f"decisions between position-benchmark scorings (default {MASKABLE_PPO.eval_every:,} for "
        f"maskable-ppo, dqn and alphazero, {TD_LAMBDA.eval_every:,} for td-lambda and expected-td, "
        f"{DISTILL_ALGORITHM.eval_every:,} for distill)",
    )
    parser.add_argument(
        "--eval-positions",
        type=int,
        help=f"validation positions scored to pick the best model (default {TD_LAMBDA.validation}; "
        f"{EXPECTED_TD.validation:,} for distill and expected-td; never the test set that evaluate "
        "reports)",
    )
    parser.add_argument(
        "--select",
        choices=("best", "last"),
        default="best",
        help="best: keep the model of the lowest validation regret as best_model (the table picks it); last: the "
        "run's last model is its result, the validation regret only measured (nothing chosen with the table: a "
        "table-free run's claim; --rounds then teaches each round with the last one's model)",
    )
    parser.add_argument(
        "--hidden",
        type=int,
        help=f"hidden units of the TD network (default {TD.hidden}); alphazero: of each of its two hidden layers "
        f"(default {ALPHAZERO.hidden})",
    )
    parser.add_argument("--alpha", type=float, help=f"TD learning rate (decays to a tenth; default {TD.alpha})")
    parser.add_argument("--lam", type=float, help=f"TD trace decay lambda (default {TD.lam})")
    parser.add_argument(
        "--layers",
        help="distill and expected-td: hidden layer sizes, comma-separated (default "
        f"{_sizes(DISTILL.hidden)} for distill, {_sizes(EXPECTED.hidden)} for expected-td)",
    )
    parser.add_argument(
        "--features",
        choices=sorted(FEATURE_SETS),
        help=f"distill and td-lambda: the network's feature set (default: {DISTILL.features} for "
        f"distill, {TD.features} for td-lambda)",
    )
    parser.add_argument(
        "--decisions",
        type=int,
        help=f"distill: training decisions drawn from play (default {DISTILL.decisions:,}; memory: "
        "about 150 bytes each at 7 pieces)",
    )
    parser.add_argument(
        "--lr",
        type=float,
        help=f"distill, expected-td and alphazero: peak learning rate (default {DISTILL.learning_rate}, "
        f"{EXPECTED.learning_rate} and {ALPHAZERO.learning_rate})",
    )
    parser.add_argument(
        "--epsilon",
        type=float,
        help=f"expected-td: chance of a random exploring move in self-play (default {EXPECTED.epsilon})",
    )
    parser.add_argument(
        "--rank",
        type=float,
        help=f"distill: weight of the softmax policy's regret in the loss (default {DISTILL.rank}: squared error only)",
    )
    parser.add_argument(
        "--close-weight",
        type=float,
        help="distill: extra weight of decisions whose two best moves lie within a point (default "
        f"{DISTILL.close_weight})",
    )
    parser.add_argument(
        "--teacher",
        metavar="MODEL",
        help="distill: a value network file (a train run's .npz) whose own search labels the decisions instead of "
        "the solved table, which then only picks the best model (learning without the table when the teacher "
        "learned without it, as td-lambda does)",
    )
    parser.add_argument(
        "--teacher-depth",
        type=int,
        help=f"distill --teacher: plies the teacher searches beyond each move (default {DISTILL.teacher_depth}; "
        f"0 to {MAX_TEACHER_DEPTH})",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="distill --teacher: rounds of distillation, each taught by the last one's network (as --select "
        "says) searched --teacher-depth plies (in --out/round-1 ...; run seeds --seed, --seed + 1 ...; a finished "
        "round is kept, so the same command goes on where it stopped; default 1)",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument(
        "--solve",
        action="store_true",
        help=f"solve the rules' missing table even when that takes longer than {AUTO_SOLVE_MINUTES:g} minutes",
    )
    return parser


MAX_HIDDEN = 16_384
MAX_TEACHER_DEPTH = 3
MAX_ROUNDS = 20
"""The most rounds one ``train --rounds`` runs."""
MAX_ENVS = 65_536
MAX_EVAL_POSITIONS = 1_000_000
MAX_DECISIONS = 50_000_000
_BOUND_REASON = {
    "threads": " (this machine's cores)",
    "eval-positions": " (each is scored against the table at every validation)",
    "decisions": " (about 150 bytes each, kept in memory: 7.5 GB at the bound)",
    "hidden": " (the TD network's hidden units)",
    "envs": " (each holds a game and its buffers)",
    "teacher-depth": " (each ply multiplies the labels' time by about ten)",
}


def _check(parser: argparse.ArgumentParser, args: argparse.Namespace, algorithm: Algorithm) -> None:
    """Refuse options out of range, and options that do not go with the algorithm."""
    if args.timesteps < 1:
        parser.error(f"--timesteps must be at least 1, got {args.timesteps}")
    if args.minutes is not None and not 0 < args.minutes < math.inf:
        parser.error(f"--minutes must be a positive number, got {args.minutes}")
    if args.eval_every is not None and args.eval_every < 1:
        parser.error(f"--eval-every must be at least 1, got {args.eval_every}")
    for name, value, low, high in (
        ("hidden", args.hidden, 1, MAX_HIDDEN),
        ("envs", args.envs, 1, MAX_ENVS),
        ("threads", args.threads, 1, default_workers()),
        ("eval-positions", args.eval_positions, 1, MAX_EVAL_POSITIONS),
        ("decisions", args.decisions, 1000, MAX_DECISIONS),
        ("teacher-depth", args.teacher_depth, 0, MAX_TEACHER_DEPTH),
    ):
        if value is not None and not low <= value <= high:
            parser.error(f"--{name} must be from {low:,} to {high:,}{_BOUND_REASON[name]}, got {value:,}")
    if args.alpha is not None and not 0 < args.alpha < math.inf:
        parser.error(f"--alpha (the TD learning rate) must be a positive finite number, got {args.alpha}")
    if args.lam is not None and not 0 <= args.lam <= 1:
        parser.error(f"--lam (the TD trace decay) must be from 0 to 1, got {args.lam}")
    name = algorithm.name
    if args.resume and not offers(algorithm.learner, "state"):
        parser.error(f"--resume: {name} writes no checkpoint (its learner gives no state)")
    if name != "distill" and (args.teacher is not None or args.teacher_depth is not None):
        parser.error(f"--teacher and --teacher-depth are for distill, not {name}")
    if not 1 <= args.rounds <= MAX_ROUNDS:
        parser.error(f"--rounds must be from 1 to {MAX_ROUNDS}, got {args.rounds}")
    if args.rounds > 1 and args.teacher is None:
        parser.error("--rounds needs --teacher (the network whose search teaches the first round)")
    if args.teacher_depth is not None and args.teacher is None:
        parser.error("--teacher-depth needs --teacher (the network whose search labels the decisions)")
    fields = {field.name for field in dataclasses.fields(algorithm.settings)}
    if args.opponent and "opponents" not in fields:
        parser.error(f"{name} needs no opponent; --opponent is for maskable-ppo and dqn")
    if args.epsilon is not None and not 0 <= args.epsilon < 1:
        parser.error(f"--epsilon must be from 0 to below 1, got {args.epsilon}")
    for option, value in (("lr", args.lr), ("rank", args.rank), ("close-weight", args.close_weight)):
        if value is not None and (not (0 <= value < math.inf) or (option == "lr" and value == 0)):
            parser.error(
                f"--{option} must be a {'positive' if option == 'lr' else 'non-negative'} finite number, got {value}"
            )
    try:  # before the table, which may take minutes to solve
        algorithm.require(f"train --algo {name}")
    except ImportError as err:
        parser.error(str(err))
    opponents = args.opponent or list(PPO.opponents)
    try:
        for spec in opponents:
            if spec != "self":
                make_agent(spec)
    except ValueError as err:
        parser.error(str(err))
    envs = args.envs or PPO.envs
    if "opponents" in fields and len(opponents) > envs:
        parser.error(
            f"{len(opponents)} opponents are dealt to the environments in turn: give --envs of at least "
            f"{len(opponents)}, got {envs}"
        )
    if (args.vec_env or PPO.vec_env) == "subproc" and "self" in opponents:
        parser.error(
            "--opponent self plays the live learner, which lives in this process: use --vec-env native "
            "(default) or dummy with it"
        )


_OPTION_FIELDS = {
    "opponent": "opponents",
    "envs": "envs",
    "vec_env": "vec_env",
    "threads": "threads",
    "hidden": "hidden",
    "layers": "hidden",
    "alpha": "alpha",
    "lam": "lam",
    "features": "features",
    "decisions": "decisions",
    "lr": "learning_rate",
    "epsilon": "epsilon",
    "rank": "rank",
    "close_weight": "close_weight",
    "teacher": "teacher",
    "teacher_depth": "teacher_depth",
}
"""The settings the options set (the dataclass field of each); ``--set`` reaches every other."""


def _settings(parser: argparse.ArgumentParser, args: argparse.Namespace, algorithm: Algorithm) -> Any:
    """The algorithm's settings: its defaults, with the options and ``--set`` given (an option it lacks refused)."""
    fields = {field.name for field in dataclasses.fields(algorithm.settings)}
    layered = "hidden" in fields and typing.get_origin(typing.get_type_hints(algorithm.settings)["hidden"]) is tuple
    given: dict[str, Any] = {}
    for option, field in _OPTION_FIELDS.items():
        value = getattr(args, option)
        if value is None:
            continue
        flag = "--" + option.replace("_", "-")
        if option == "envs" and "envs" not in fields and "games" in fields:
            field = "games"  # alphazero's games played at once are its environments
        if field not in fields:
            parser.error(f"{flag} does not go with {algorithm.name} (it has no setting {field!r})")
        if option in ("hidden", "layers") and (option == "layers") != layered:
            other = "--hidden" if layered is False else "--layers"
            parser.error(f"{flag} does not go with {algorithm.name}: give its hidden layers with {other}")
        given[field] = tuple(value) if option == "opponent" else _layers(parser, value) if option == "layers" else value
    try:
        return with_settings(algorithm, {**given, **key_values(args.set, "--set")})
    except ValueError as err:
        parser.error(str(err))


def _check_teacher(parser: argparse.ArgumentParser, path: str, rules: Rules) -> None:
    """Refuse a teacher that is not a value network of ``rules``, before the table and the output folder."""
    try:
        teacher = ValueNetwork.load(path)
    except (ValueError, OSError) as err:
        parser.error(f"--teacher: {err}")
    if teacher.rules != rules:
        parser.error(f"--teacher {path} was trained on {teacher.rules.describe()}, not on {rules.describe()}")


def _layers(parser: argparse.ArgumentParser, text: str) -> tuple[int, ...]:
    """``--layers`` as sizes: 1 to 6 whole numbers from 1 to 4096, comma-separated."""
    try:
        sizes = tuple(int(part) for part in text.split(","))
    except ValueError:
        sizes = ()
    if not 1 <= len(sizes) <= 6 or not all(1 <= n <= 4096 for n in sizes):
        parser.error(
            f"--layers must be 1 to 6 hidden layer sizes from 1 to 4096, comma-separated (384,128), got {text!r}"
        )
    return sizes
