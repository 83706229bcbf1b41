"""``train``: learn an agent (MaskablePPO, TD(lambda), or a network distilled from the solved table) and pick its best
model on validation positions."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from urgym.agents import make_agent
from urgym.commands.common import ArgumentParser, command, seed
from urgym.evaluation import training
from urgym.evaluation.distill import DistillSettings, train_distill
from urgym.evaluation.expected_td import ExpectedTDSettings, train_expected_td
from urgym.evaluation.training import ALGORITHMS, VEC_ENVS, plot_curves, train_ppo, train_td
from urgym.solver import table_for

from urgym import RULE_SET_NAMES, get_rules
from urgym.features import FEATURE_SETS
from urgym.files import check_output, require_extra

__all__ = ["main"]


@command("train", interrupted="the best model so far is in --out")
def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(prog="train", description=training.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--algo", default="maskable-ppo", choices=ALGORITHMS)
    parser.add_argument("--rules", default="finkel", help=f"rule set: {', '.join(RULE_SET_NAMES)} (default finkel)")
    parser.add_argument("--pieces", type=int, help="pieces per side (default: the rule set's)")
    parser.add_argument("--timesteps", type=int, default=5_000_000, help="the learner's moves to train for")
    parser.add_argument("--minutes", type=float, help="also stop after this much training time")
    parser.add_argument("--opponent", action="append",
                        help="an agent spec, or 'self' for the learner's own live policy; repeat for a mixture "
                        "(dealt to the environments in turn). maskable-ppo only; default: self and greedy")
    parser.add_argument("--out", required=True, help="directory for models, card, curve and logs")
    parser.add_argument("--seed", type=seed, default=0)
    parser.add_argument("--envs", type=int, default=16,
                        help="environments stepped together (maskable-ppo; default 16)")
    parser.add_argument("--vec-env", default="native", choices=VEC_ENVS,
                        help="native: every game stepped together in numba, opponents batched (default, fastest); "
                        "dummy: one UrEnv after another in this process; subproc: one process each (no 'self')")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of the learner (default 1)")
    parser.add_argument("--eval-every", type=int, help="timesteps between position-benchmark scorings")
    parser.add_argument("--eval-positions", type=int,
                        help="validation positions scored to pick the best model (default 500; 5,000 for distill and "
                        "expected-td; never the test set that evaluate reports)")
    parser.add_argument("--hidden", type=int, default=80, help="hidden units of the TD network")
    parser.add_argument("--alpha", type=float, default=0.1, help="TD learning rate (decays to a tenth)")
    parser.add_argument("--lam", type=float, default=0.7, help="TD trace decay lambda")
    parser.add_argument("--layers",
                        help="distill and expected-td: hidden layer sizes, comma-separated (default 384,128 for "
                        "distill, 256,128 for expected-td)")
    parser.add_argument("--features", choices=sorted(FEATURE_SETS),
                        help="distill and td-lambda: the network's feature set (default: tactics-v1 for distill, "
                        "td-v1 for td-lambda)")
    parser.add_argument("--decisions", type=int, default=8_000_000,
                        help="distill: training decisions drawn from play (default 8,000,000; memory: about 150 "
                        "bytes each at 7 pieces)")
    parser.add_argument("--lr", type=float,
                        help="distill and expected-td: peak learning rate (default 0.002 and 0.001)")
    parser.add_argument("--epsilon", type=float, default=0.05,
                        help="expected-td: chance of a random exploring move in self-play (default 0.05)")
    parser.add_argument("--rank", type=float, default=0.0,
                        help="distill: weight of the softmax policy's regret in the loss (default 0: squared error "
                        "only)")
    parser.add_argument("--close-weight", type=float, default=0.0,
                        help="distill: extra weight of decisions whose two best moves lie within a point")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    args = parser.parse_args(argv)
    if args.timesteps < 1:
        parser.error(f"--timesteps must be at least 1, got {args.timesteps}")
    if args.minutes is not None and not 0 < args.minutes < math.inf:
        parser.error(f"--minutes must be a positive number, got {args.minutes}")
    for name, value, low in (("hidden", args.hidden, 1), ("envs", args.envs, 1), ("threads", args.threads, 1),
                             ("eval-every", args.eval_every, 1), ("eval-positions", args.eval_positions, 1)):
        if value is not None and value < low:
            parser.error(f"--{name} must be at least {low}, got {value}")
    if not 0 < args.alpha < math.inf:
        parser.error(f"--alpha (the TD learning rate) must be a positive finite number, got {args.alpha}")
    if not 0 <= args.lam <= 1:
        parser.error(f"--lam (the TD trace decay) must be from 0 to 1, got {args.lam}")
    try:
        rules = get_rules(args.rules, args.pieces)
    except ValueError as err:
        parser.error(str(err))
    if args.algo in ("td-lambda", "distill") and args.opponent:
        parser.error(f"{args.algo} needs no opponent; --opponent is for maskable-ppo")
    validation = args.eval_positions or (5000 if args.algo in ("distill", "expected-td") else 500)
    layers = _layers(parser, args.layers or ("256,128" if args.algo == "expected-td" else "384,128"))
    lr = args.lr if args.lr is not None else (1e-3 if args.algo == "expected-td" else 2e-3)
    if not 0 <= args.epsilon < 1:
        parser.error(f"--epsilon must be from 0 to below 1, got {args.epsilon}")
    if args.decisions < 1000:
        parser.error(f"--decisions must be at least 1000, got {args.decisions}")
    for name, value in (("lr", lr), ("rank", args.rank), ("close-weight", args.close_weight)):
        if not (0 <= value < math.inf) or (name == "lr" and value == 0):
            parser.error(f"--{name} must be a {'positive' if name == 'lr' else 'non-negative'} finite number, "
                         f"got {value}")
    if args.algo in ("distill", "expected-td"):
        try:  # before the table, which may take minutes to solve
            require_extra("torch", "learn", f"train --algo {args.algo}")
        except ImportError as err:
            parser.error(str(err))
    opponents = args.opponent or ["self", "greedy"]
    try:
        for spec in opponents:
            if spec != "self":
                make_agent(spec)
    except ValueError as err:
        parser.error(str(err))
    if args.algo == "maskable-ppo" and len(opponents) > args.envs:
        parser.error(f"{len(opponents)} opponents are dealt to the environments in turn: give --envs of at least "
                     f"{len(opponents)}, got {args.envs}")
    if args.vec_env == "subproc" and "self" in opponents:
        parser.error("--opponent self plays the live learner, which lives in this process: use --vec-env native "
                     "(default) or dummy with it")
    if args.algo == "maskable-ppo":
        try:  # before the table, which may take minutes to solve
            require_extra("sb3_contrib", "learn", "train --algo maskable-ppo")
        except ImportError as err:
            parser.error(str(err))
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        parser.error(f"--out {args.out} is a file; give a folder for the models, card, curve and logs")
    try:
        check_output(out / "curve.csv")  # the folder can be created and written, before any training
    except ValueError as err:
        parser.error(f"--out: {err}")
    out.mkdir(parents=True, exist_ok=True)
    table = table_for(rules, solve=True, progress=not args.no_progress)
    if args.algo == "distill":
        settings = DistillSettings(hidden=layers, features=args.features or "tactics-v1", decisions=args.decisions,
                                   learning_rate=lr, rank=args.rank, close_weight=args.close_weight,
                                   threads=args.threads, validation=validation)
        result = train_distill(rules, table, out, args.timesteps, args.minutes, args.seed, settings,
                               args.eval_every or 2_000_000, not args.no_progress)
    elif args.algo == "expected-td":
        result = train_expected_td(rules, table, out, args.timesteps, args.minutes, args.seed, ExpectedTDSettings(
            hidden=layers, features=args.features or "tactics-v1", epsilon=args.epsilon, learning_rate=lr,
            threads=args.threads, validation=validation), args.eval_every or 1_000_000, not args.no_progress)
    elif args.algo == "td-lambda":
        result = train_td(rules, table, out, args.timesteps, args.minutes, args.seed, args.hidden, args.alpha,
                          args.lam, args.eval_every or 1_000_000, validation, not args.no_progress,
                          args.features or "td-v1")
    else:
        result = train_ppo(rules, table, out, args.timesteps, args.minutes, opponents, args.seed, args.envs,
                           args.vec_env, args.threads, args.eval_every or 200_000, validation,
                           progress=not args.no_progress)
    plot_curves({args.algo: out / "curve.csv"}, out / "curve.png")
    unit = {"distill": "decisions", "expected-td": "positions"}.get(args.algo, "timesteps")
    print(f"trained {result['timesteps']:,} {unit} in {result['seconds'] / 60:.1f} min; best mean regret "
          f"{result['best_regret']:.4f} win-% points; models in {out}")
    return 0


def _layers(parser: argparse.ArgumentParser, text: str) -> tuple[int, ...]:
    """``--layers`` as sizes: 1 to 6 whole numbers from 1 to 4096, comma-separated."""
    try:
        sizes = tuple(int(part) for part in text.split(","))
    except ValueError:
        sizes = ()
    if not 1 <= len(sizes) <= 6 or not all(1 <= n <= 4096 for n in sizes):
        parser.error(f"--layers must be 1 to 6 hidden layer sizes from 1 to 4096, comma-separated (384,128), got "
                     f"{text!r}")
    return sizes
