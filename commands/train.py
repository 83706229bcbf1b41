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
from pathlib import Path
from typing import Any

from urgym.agents import make_agent
from urgym.agents.networks.value import ValueNetwork
from urgym.commands.common import AUTO_SOLVE_MINUTES, ArgumentParser, check_solve_allowed, command, seed
from urgym.evaluation.scoring.runner import default_workers
from urgym.evaluation.training.alphazero import AlphaZeroSettings, train_alphazero
from urgym.evaluation.training.checkpoint import CHECKPOINT
from urgym.evaluation.training.distill import DistillSettings, train_distill
from urgym.evaluation.training.dqn import DQNSettings, train_dqn
from urgym.evaluation.training.expected_td import ExpectedTDSettings, train_expected_td
from urgym.evaluation.training.ppo import VEC_ENVS, PPOSettings, train_ppo
from urgym.evaluation.training.run import (
    ALGO_ALIASES,
    ALGORITHMS,
    CHECKPOINTING,
    MODEL_SUFFIXES,
    UNCAPPED,
    RunPlan,
    check_run_folder,
    plot_curves,
)
from urgym.evaluation.training.td_lambda import TDLambdaSettings, train_td_lambda
from urgym.solver import table_for

from urgym import RULE_SET_NAMES, Rules, get_rules
from urgym.features import FEATURE_SETS
from urgym.files import check_not_broken_link, check_output, claim_folder, require_extra

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
VALIDATION = {
    "maskable-ppo": PPO.validation,
    "dqn": DQN.validation,
    "td-lambda": TD.validation,
    "distill": DISTILL.validation,
    "expected-td": EXPECTED.validation,
    "alphazero": ALPHAZERO.validation,
}


def _sizes(sizes: tuple[int, ...]) -> str:
    return ",".join(map(str, sizes))


@command(
    "train",
    interrupted="the best model so far is in --out (maskable-ppo and dqn: add --resume to go on from the last "
    "evaluation)",
)
def main(argv: list[str] | None = None) -> int:
    """Run ``train``; return the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    args.algo = ALGO_ALIASES.get(args.algo, args.algo)
    if args.timesteps is None:  # --minutes alone is the budget: no hidden cap of moves ends the run before it
        args.timesteps = DEFAULT_TIMESTEPS if args.minutes is None else UNCAPPED
    _check(parser, args)
    try:
        rules = get_rules(args.rules, args.pieces)
        check_solve_allowed(rules, args.solve)  # before the output folder is made
    except ValueError as err:
        parser.error(str(err))
    if args.teacher is not None:
        _check_teacher(parser, args.teacher, rules)
    settings = _settings(parser, args)
    if not args.out.strip():  # Path("") is the current folder: an empty --out is a mistake, never "here"
        parser.error("--out must name a folder for the models, card, curve and logs, got an empty path")
    out = Path(args.out)
    try:
        check_not_broken_link(out, "a folder for the models, card, curve and logs")
    except ValueError as err:
        parser.error(f"--out: {err}")
    if out.exists() and not out.is_dir():
        parser.error(f"--out {args.out} is a file; give a folder for the models, card, curve and logs")
    try:
        check_output(out / "curve.csv")  # the folder can be created and written, before any training
        out.mkdir(parents=True, exist_ok=True)
        claim_folder(out, "a training run")
        check_run_folder(out, MODEL_SUFFIXES[args.algo], args.replace, args.resume)
        if args.resume and not (out / CHECKPOINT).is_file():
            raise ValueError(f"{out} holds no checkpoint ({CHECKPOINT}) to resume; run without --resume")
    except ValueError as err:
        parser.error(f"--out: {err}")
    allowed = math.inf if args.solve else AUTO_SOLVE_MINUTES  # a damaged table is treated as a missing one
    table = table_for(rules, solve=True, progress=not args.no_progress, max_solve_minutes=allowed)
    plan = RunPlan(out, args.timesteps, args.minutes, args.seed, not args.no_progress, args.replace, args.resume)
    train = {
        "distill": train_distill,
        "expected-td": train_expected_td,
        "td-lambda": train_td_lambda,
        "maskable-ppo": train_ppo,
        "dqn": train_dqn,
        "alphazero": train_alphazero,
    }[args.algo]
    result = train(rules, table, plan, settings)
    plot_curves({args.algo: out / "curve.csv"}, out / "curve.png")
    unit = "decisions" if args.algo in ("distill", "expected-td") else "timesteps"
    print(
        f"trained {result['timesteps']:,} {unit} in {result['seconds'] / 60:.1f} min; best mean regret "
        f"{result['best_regret']:.4f} win-% points; models in {out}"
    )
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="train", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--algo",
        default="maskable-ppo",
        choices=[*ALGORITHMS, *ALGO_ALIASES],
        help="the algorithm (default maskable-ppo); td and ppo, the agent specs' names, train td-lambda and "
        "maskable-ppo",
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
        help=f"go on from the checkpoint in --out of an interrupted run ({', '.join(CHECKPOINTING)} write one at "
        "each evaluation), given the same arguments; it ends as the run would have",
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
        help=f"timesteps between position-benchmark scorings (default {PPO.eval_every:,} for "
        f"maskable-ppo, {TD.eval_every:,} for td-lambda, {DISTILL.eval_every:,} for distill, "
        f"{EXPECTED.eval_every:,} for expected-td)",
    )
    parser.add_argument(
        "--eval-positions",
        type=int,
        help=f"validation positions scored to pick the best model (default {PPO.validation}; "
        f"{DISTILL.validation:,} for distill and expected-td; never the test set that evaluate "
        "reports)",
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
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument(
        "--solve",
        action="store_true",
        help=f"solve the rules' missing table even when that takes longer than {AUTO_SOLVE_MINUTES:g} minutes",
    )
    return parser


MAX_HIDDEN = 16_384
MAX_TEACHER_DEPTH = 3
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


def _check(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
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
    if args.resume and args.algo not in CHECKPOINTING:
        parser.error(f"--resume: {args.algo} writes no checkpoint (only {', '.join(CHECKPOINTING)} do)")
    if args.algo != "distill" and (args.teacher is not None or args.teacher_depth is not None):
        parser.error(f"--teacher and --teacher-depth are for distill, not {args.algo}")
    if args.teacher_depth is not None and args.teacher is None:
        parser.error("--teacher-depth needs --teacher (the network whose search labels the decisions)")
    if args.algo in ("td-lambda", "distill", "expected-td", "alphazero") and args.opponent:
        parser.error(f"{args.algo} needs no opponent; --opponent is for maskable-ppo and dqn")
    if args.epsilon is not None and not 0 <= args.epsilon < 1:
        parser.error(f"--epsilon must be from 0 to below 1, got {args.epsilon}")
    for name, value in (("lr", args.lr), ("rank", args.rank), ("close-weight", args.close_weight)):
        if value is not None and (not (0 <= value < math.inf) or (name == "lr" and value == 0)):
            parser.error(
                f"--{name} must be a {'positive' if name == 'lr' else 'non-negative'} finite number, got {value}"
            )
    if args.algo in ("distill", "expected-td", "maskable-ppo", "dqn", "alphazero"):
        module = "sb3_contrib" if args.algo in ("maskable-ppo", "dqn") else "torch"
        try:  # before the table, which may take minutes to solve
            require_extra(module, "learn", f"train --algo {args.algo}")
            if args.algo == "alphazero":
                require_extra("mctx", "jax", "train --algo alphazero")
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
    if args.algo in ("maskable-ppo", "dqn") and len(opponents) > envs:
        parser.error(
            f"{len(opponents)} opponents are dealt to the environments in turn: give --envs of at least "
            f"{len(opponents)}, got {envs}"
        )
    if (args.vec_env or PPO.vec_env) == "subproc" and "self" in opponents:
        parser.error(
            "--opponent self plays the live learner, which lives in this process: use --vec-env native "
            "(default) or dummy with it"
        )


def _settings(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Any:
    """The algorithm's settings: its defaults, with the options given."""
    given = {"eval_every": args.eval_every, "validation": args.eval_positions, "threads": args.threads}
    if args.algo == "maskable-ppo":
        given.update(opponents=tuple(args.opponent) if args.opponent else None, envs=args.envs, vec_env=args.vec_env)
        default: Any = PPO
    elif args.algo == "dqn":
        given.update(opponents=tuple(args.opponent) if args.opponent else None, envs=args.envs)
        default = DQN
    elif args.algo == "td-lambda":
        given.update(hidden=args.hidden, alpha=args.alpha, lam=args.lam, features=args.features)
        default = TD
    elif args.algo == "alphazero":
        given.update(games=args.envs, hidden=args.hidden, learning_rate=args.lr)
        default = ALPHAZERO
    else:
        given.update(
            hidden=_layers(parser, args.layers) if args.layers else None, features=args.features, learning_rate=args.lr
        )
        if args.algo == "distill":
            given.update(
                decisions=args.decisions,
                rank=args.rank,
                close_weight=args.close_weight,
                teacher=args.teacher,
                teacher_depth=args.teacher_depth,
            )
            default = DISTILL
        else:
            given.update(epsilon=args.epsilon)
            default = EXPECTED
    return dataclasses.replace(default, **{k: v for k, v in given.items() if v is not None})


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
