"""``train``: learn an agent, scored during training on the validation positions (never the reported test set).

Two methods:

- ``maskable-ppo``: sb3-contrib's MaskablePPO on ``urgym/Ur-v0`` (masks from ``action_masks()``), vectorized
  over ``--envs`` environments, against any agent spec, frozen snapshots of itself (``self``), or a mixture
  (``--opponent`` repeated: each episode draws one).
- ``td-lambda``: TD(lambda) self-play on after-states with a small network (:mod:`agents.td`), in numba.

Both write to ``--out``: the final and the best model (by mean regret on the validation positions of
:func:`evaluation.positions.validation_positions`, disjoint from the test set that ``evaluate`` reports), a model
card (``.json``), the learning curve (``curve.csv``, ``curve.png``) and logs (CSV and TensorBoard in
``logs/``).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from agents import Agent, make_agent
from agents.learned import PPOAgent
from evaluation.positions import score_positions, validation_positions
from solver import SolvedTable, table_for
from urgym import RULE_SET_NAMES, Position, Rules, get_rules
from urgym.cli import ArgumentParser, command, seed
from urgym.files import check_output, require_extra, write_atomic

__all__ = ["ALGORITHMS", "OpponentMix", "main", "plot_curves", "train_ppo", "train_td"]

ALGORITHMS = ("maskable-ppo", "td-lambda")
VEC_ENVS = ("dummy", "subproc")


class Curve:
    """The learning curve: (timesteps, seconds, mean regret) rows, kept in ``curve.csv``."""

    def __init__(self, out: Path) -> None:
        self.path = out / "curve.csv"
        self.rows: list[dict[str, float]] = []
        self.best = float("inf")

    def add(self, timesteps: int, seconds: float, regret: float) -> bool:
        """Record a point; True if it is the best regret so far."""
        self.rows.append({"timesteps": timesteps, "seconds": round(seconds, 1), "mean_regret": regret})
        with open(self.path, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(self.rows[0]))
            writer.writeheader()
            writer.writerows(self.rows)
        if regret < self.best:
            self.best = regret
            return True
        return False


def plot_curves(curves: dict[str, str | Path], path: str | Path) -> Path:
    """Plot mean regret against timesteps for one or more ``curve.csv`` files (label -> file)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
    for label, file in curves.items():
        with open(file, newline="") as f:
            rows = list(csv.DictReader(f))
        ax.plot([float(r["timesteps"]) for r in rows], [float(r["mean_regret"]) for r in rows], label=label)
    ax.set_xlabel("timesteps (the learner's moves)")
    ax.set_ylabel("mean regret (win-% points)")
    ax.set_title("position benchmark during training")
    ax.legend()
    out = write_atomic(path, lambda tmp: fig.savefig(tmp, format=Path(path).suffix.lstrip(".") or "png"))
    plt.close(fig)
    return out


def _score(agent: Any, table: SolvedTable, positions: list[tuple[Position, int]]) -> float:
    return score_positions(agent, table, positions, workers=1, progress=False).regret.mean


class OpponentMix(Agent):
    """A training opponent that is, for each episode, one of several: agent specs or the learner's past self.

    ``"self"`` stands for a frozen snapshot of the learner, drawn uniformly from the ``.zip`` files in
    ``snapshots`` (a random player until the first snapshot exists). The environment calls :meth:`reseed`
    on every reset, which draws the episode's opponent.
    """

    def __init__(self, specs: list[str], snapshots: str | os.PathLike | None = None, seed: int | None = None) -> None:
        if not specs:
            raise ValueError("an opponent mix needs at least one opponent")
        if "self" in specs and snapshots is None:
            raise ValueError("self-play needs a snapshot directory")
        self.specs = list(specs)
        self.snapshots = Path(snapshots) if snapshots else None
        self._agents = {s: make_agent(s) for s in specs if s != "self"}
        self._frozen: dict[Path, PPOAgent] = {}
        self._fallback = make_agent("random")
        self.spec = "mix:" + ",".join(specs)
        self.current: Agent = self._fallback
        super().__init__(seed)

    def reseed(self, seed: int | None) -> None:
        super().reseed(seed)
        choice = self.specs[int(self.rng.integers(len(self.specs)))]
        if choice == "self":
            self.current = self._snapshot()
        else:
            self.current = self._agents[choice]
        self.current.reseed(int(self.rng.integers(2**63)))

    def _snapshot(self) -> Agent:
        files = sorted(self.snapshots.glob("*.zip")) if self.snapshots and self.snapshots.exists() else []
        if not files:
            return self._fallback
        path = files[int(self.rng.integers(len(files)))]
        if path not in self._frozen:
            self._frozen[path] = PPOAgent(path)
        return self._frozen[path]

    def select_move(self, position: Position, roll: int) -> int:
        return self.current.select_move(position, roll)


# --- TD(lambda) -------------------------------------------------------------------------------------------
def train_td(rules: Rules, table: SolvedTable, out: Path, timesteps: int, minutes: float | None, seed: int = 0,
             hidden: int = 80, alpha: float = 0.1, lam: float = 0.7, eval_every: int = 1_000_000,
             eval_positions: int = 500, progress: bool = True) -> dict[str, Any]:
    """Self-play TD(lambda); ``alpha`` decays linearly to a tenth of itself over the run."""
    from agents.td import TDAgent, TDNetwork, train_chunk

    network = TDNetwork.initial(rules, hidden, seed)
    positions = validation_positions(table, eval_positions)
    curve, writer = Curve(out), _tensorboard(out)
    start, done, games = time.perf_counter(), 0, 0
    bar = tqdm(total=timesteps, desc="td-lambda", unit="step", disable=not progress, dynamic_ncols=True)
    while done < timesteps and not _out_of_time(start, minutes):
        progress_share = max(done / timesteps, (time.perf_counter() - start) / (60 * minutes) if minutes else 0)
        step_alpha = alpha * (1 - 0.9 * min(progress_share, 1.0))
        chunk_games = min(500, max(1, (timesteps - done) // 60))  # a game is 100-200 moves: stop near the target
        moves = train_chunk(network, chunk_games, seed, games, step_alpha, lam)
        games += chunk_games
        done += moves
        bar.update(moves)
        if done // eval_every != (done - moves) // eval_every or done >= timesteps:
            regret = _score(TDAgent(network), table, positions)
            elapsed = time.perf_counter() - start
            bar.set_postfix_str(f"regret {regret:.3f}")
            if writer:
                writer.add_scalar("eval/mean_regret", regret, done)
            if curve.add(done, elapsed, regret):
                best = network.copy()
                best.info = _facts(rules, "td-lambda", seed, done, elapsed, regret, games=games, hidden=hidden,
                                   alpha=alpha, lam=lam)
                best.save(out / "best_model.npz")
    bar.close()
    if not curve.rows or curve.rows[-1]["timesteps"] != done:
        curve.add(done, time.perf_counter() - start, _score(TDAgent(network), table, positions))
    elapsed = time.perf_counter() - start
    network.info = _facts(rules, "td-lambda", seed, done, elapsed, curve.rows[-1]["mean_regret"], games=games,
                          hidden=hidden, alpha=alpha, lam=lam)
    network.save(out / "model.npz")
    return {"model": str(out / "model.npz"), "best_model": str(out / "best_model.npz"), "timesteps": done,
            "seconds": elapsed, "best_regret": curve.best}


# --- MaskablePPO ------------------------------------------------------------------------------------------
def train_ppo(rules: Rules, table: SolvedTable, out: Path, timesteps: int, minutes: float | None,
              opponents: list[str], seed: int = 0, envs: int = 8, vec_env: str = "dummy", threads: int = 1,
              eval_every: int = 200_000, eval_positions: int = 500, snapshot_every: int = 200_000,
              progress: bool = True) -> dict[str, Any]:
    """MaskablePPO against a mixture of opponents (``self``: the learner's frozen snapshots).

    ``vec_env="dummy"`` steps the ``envs`` environments in this process and batches the policy over them;
    ``"subproc"`` gives each its own process. An environment step takes microseconds, so here batching
    pays and inter-process messages do not (measured: 8 dummy environments ran 5 times faster than 2
    subprocess ones).
    """
    torch = require_extra("torch", "learn", "train --algo maskable-ppo")
    MaskablePPO = require_extra("sb3_contrib", "learn", "train --algo maskable-ppo").MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from agents.learned import write_model_card
    from urgym.env import UrEnv

    torch.set_num_threads(threads)
    snapshots = out / "snapshots"
    snapshots.mkdir(parents=True, exist_ok=True)
    opponent = OpponentMix(opponents, snapshots)
    if vec_env not in VEC_ENVS:
        raise ValueError(f"unknown vec_env {vec_env!r}; choose one of {', '.join(VEC_ENVS)}")
    venv = make_vec_env(UrEnv, n_envs=envs, seed=seed,
                        vec_env_cls=SubprocVecEnv if vec_env == "subproc" else DummyVecEnv,
                        env_kwargs={"rules": rules, "opponent": opponent, "agent_side": "random"})
    model = MaskablePPO("MlpPolicy", venv, seed=seed, n_steps=1024, batch_size=256, n_epochs=4, gamma=1.0,
                        learning_rate=3e-4, ent_coef=0.01, policy_kwargs={"net_arch": [128, 128]}, device="cpu")
    model.set_logger(configure(str(out / "logs"), ["csv", "tensorboard"]))
    positions = validation_positions(table, eval_positions)
    curve = Curve(out)
    start = time.perf_counter()

    class Progress(BaseCallback):
        def _on_training_start(self) -> None:
            self.bar = tqdm(total=timesteps, desc="maskable-ppo", unit="step", disable=not progress,
                            dynamic_ncols=True)
            self.next_eval = eval_every
            self.next_snapshot = snapshot_every

        def _on_step(self) -> bool:
            self.bar.n = self.num_timesteps
            self.bar.refresh()
            if self.num_timesteps >= self.next_snapshot:
                self.next_snapshot += snapshot_every
                self.model.save(snapshots / f"step_{self.num_timesteps:012d}.zip")
            if self.num_timesteps >= self.next_eval:
                self.next_eval += eval_every
                self._evaluate()
            return not _out_of_time(start, minutes)

        def _evaluate(self) -> None:
            regret = _score(PPOAgent(self.model), table, positions)
            elapsed = time.perf_counter() - start
            self.logger.record("eval/mean_regret", regret)
            self.bar.set_postfix_str(f"regret {regret:.3f}")
            if curve.add(self.num_timesteps, elapsed, regret):
                self.model.save(out / "best_model.zip")
                write_model_card(out / "best_model.zip", rules, **_facts(
                    rules, "maskable-ppo", seed, self.num_timesteps, elapsed, regret, opponents=opponents))

        def _on_training_end(self) -> None:
            self.bar.close()

    callback = Progress()
    model.learn(timesteps, callback=callback)
    callback._evaluate()
    elapsed = time.perf_counter() - start
    model.save(out / "model.zip")
    write_model_card(out / "model.zip", rules, **_facts(rules, "maskable-ppo", seed, model.num_timesteps, elapsed,
                                                        curve.rows[-1]["mean_regret"], opponents=opponents))
    venv.close()
    return {"model": str(out / "model.zip"), "best_model": str(out / "best_model.zip"),
            "timesteps": model.num_timesteps, "seconds": elapsed, "best_regret": curve.best}


# --- shared -----------------------------------------------------------------------------------------------
def _out_of_time(start: float, minutes: float | None) -> bool:
    return minutes is not None and time.perf_counter() - start >= 60 * minutes


def _facts(rules: Rules, algo: str, seed: int, timesteps: int, seconds: float, regret: float,
           **more: Any) -> dict[str, Any]:
    return {"algo": algo, "rule_set": rules.name, "pieces": rules.pieces, "seed": seed, "timesteps": int(timesteps),
            "train_seconds": round(seconds, 1), "position_benchmark_regret": regret,
            "command": " ".join(["train", *sys.argv[1:]]), **more}


def _tensorboard(out: Path):
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        return None
    return SummaryWriter(str(out / "logs"))


@command("train", interrupted="the best model so far is in --out")
def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(prog="train", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--algo", default="maskable-ppo", choices=ALGORITHMS)
    parser.add_argument("--rules", default="finkel", help=f"rule set: {', '.join(RULE_SET_NAMES)} (default finkel)")
    parser.add_argument("--pieces", type=int, help="pieces per side (default: the rule set's)")
    parser.add_argument("--timesteps", type=int, default=5_000_000, help="the learner's moves to train for")
    parser.add_argument("--minutes", type=float, help="also stop after this much training time")
    parser.add_argument("--opponent", action="append",
                        help="an agent spec, or 'self' for frozen snapshots of the learner; repeat for a mixture "
                        "(each episode draws one). maskable-ppo only; default: self and greedy")
    parser.add_argument("--out", required=True, help="directory for models, card, curve and logs")
    parser.add_argument("--seed", type=seed, default=0)
    parser.add_argument("--envs", type=int, default=8, help="environments stepped together (maskable-ppo; default 8)")
    parser.add_argument("--vec-env", default="dummy", choices=VEC_ENVS,
                        help="dummy: all environments in this process, policy batched (default, fastest here); "
                        "subproc: one process each")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of the learner (default 1)")
    parser.add_argument("--eval-every", type=int, help="timesteps between position-benchmark scorings")
    parser.add_argument("--eval-positions", type=int, default=500,
                        help="validation positions scored to pick the best model (default 500; never the test set "
                        "that evaluate reports)")
    parser.add_argument("--hidden", type=int, default=80, help="hidden units of the TD network")
    parser.add_argument("--alpha", type=float, default=0.1, help="TD learning rate (decays to a tenth)")
    parser.add_argument("--lam", type=float, default=0.7, help="TD trace decay lambda")
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
    if args.algo == "td-lambda" and args.opponent:
        parser.error("td-lambda learns by self-play; --opponent is for maskable-ppo")
    opponents = args.opponent or ["self", "greedy"]
    try:
        for spec in opponents:
            if spec != "self":
                make_agent(spec)
    except ValueError as err:
        parser.error(str(err))
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
    if args.algo == "td-lambda":
        result = train_td(rules, table, out, args.timesteps, args.minutes, args.seed, args.hidden, args.alpha,
                          args.lam, args.eval_every or 1_000_000, args.eval_positions, not args.no_progress)
    else:
        result = train_ppo(rules, table, out, args.timesteps, args.minutes, opponents, args.seed, args.envs,
                           args.vec_env, args.threads, args.eval_every or 200_000, args.eval_positions,
                           progress=not args.no_progress)
    plot_curves({args.algo: out / "curve.csv"}, out / "curve.png")
    print(f"trained {result['timesteps']:,} timesteps in {result['seconds'] / 60:.1f} min; best mean regret "
          f"{result['best_regret']:.3f} win-% points; models in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
