"""``train``: learn an agent, scored during training on the validation positions (never the reported test set).

Two methods:

- ``maskable-ppo``: sb3-contrib's MaskablePPO on ``urgym/Ur-v1`` (masks from ``action_masks()``), over
  ``--envs`` games stepped together on the native vector environment, against any agent spec, its own live
  policy (``self``), or a mixture (``--opponent`` repeated: dealt to the environments in turn).
- ``td-lambda``: TD(lambda) self-play on after-states with a small network (:mod:`urgym.agents.td`), in numba.

Both write to ``--out``: the final and the best model (by mean regret on the validation positions of
:func:`urgym.evaluation.positions.validation_positions`, disjoint from the test set that ``evaluate`` reports), a model
card (``.json``), the learning curve (``curve.csv``, ``curve.png``) and logs (CSV and TensorBoard in
``logs/``).
"""

from __future__ import annotations

import csv
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm
from urgym.agents import Agent
from urgym.agents.learned import PPOAgent
from urgym.agents.neural import SB3Agent
from urgym.evaluation.positions import score_positions, validation_positions
from urgym.evaluation.runner import RunOptions
from urgym.solver import SolvedTable

from urgym import Position, Rules
from urgym.batch import Decisions
from urgym.files import require_extra, write_atomic

__all__ = ["ALGORITHMS", "VEC_ENVS", "LearnerOpponent", "plot_curves", "regret_callback", "slot_opponents", "train_ppo",
           "train_td"]

ALGORITHMS = ("maskable-ppo", "td-lambda", "distill", "expected-td")
VEC_ENVS = ("native", "dummy", "subproc")
ROLLOUT_STEPS = 8192  # the steps of one PPO rollout over all environments


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


def plot_curves(curves: dict[str, str | Path], path: str | Path, x: str = "timesteps", log: bool = False) -> Path:
    """Plot mean regret against ``x`` (``"timesteps"`` or ``"minutes"``) for ``curve.csv`` files (label -> file);
    ``log`` puts the regret on a log scale, for curves that span orders of magnitude."""
    if x not in ("timesteps", "minutes"):
        raise ValueError(f"x must be 'timesteps' or 'minutes', not {x!r}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
    for label, file in curves.items():
        with open(file, newline="") as f:
            rows = list(csv.DictReader(f))
        xs = [float(r["timesteps"]) if x == "timesteps" else float(r["seconds"]) / 60 for r in rows]
        ax.plot(xs, [float(r["mean_regret"]) for r in rows], label=label)
    ax.set_xlabel("timesteps (the learner's moves)" if x == "timesteps" else "training time (minutes)")
    ax.set_ylabel("mean regret (win-% points)")
    if log:
        ax.set_yscale("log")
    ax.set_title("position benchmark during training")
    ax.legend(fontsize="small")
    out = write_atomic(path, lambda tmp: fig.savefig(tmp, format=Path(path).suffix.lstrip(".") or "png"))
    plt.close(fig)
    return out


def _score(agent: Any, table: SolvedTable, positions: list[tuple[Position, int]]) -> float:
    return score_positions(agent, table, positions, RunOptions(workers=1, progress=False)).regret.mean


class LearnerOpponent(Agent):
    """The learner as its own opponent (``--opponent self``): the live model's policy, sampled from its legal
    actions' softmax, so the opponent improves with the learner and stays varied. Set :attr:`model` once the
    model exists; the environments hold this object from the start."""

    spec = "self"

    def __init__(self) -> None:
        self._agent: Agent | None = None
        super().__init__(None)

    def set_model(self, model: Any) -> None:
        """Play ``model``'s current policy from now on."""
        self._agent = SB3Agent(model, spec="self", sample=True)

    def select_moves(self, rules: Rules, decisions: Decisions) -> np.ndarray:
        if self._agent is None:
            raise RuntimeError("the learner opponent has no model yet (call set_model)")
        return self._agent.select_moves(rules, decisions)

    def select_move(self, position: Position, roll: int) -> int:
        if self._agent is None:
            raise RuntimeError("the learner opponent has no model yet (call set_model)")
        return self._agent.select_move(position, roll)


def slot_opponents(opponents: list[str], envs: int, learner: LearnerOpponent) -> list[Any]:
    """Each environment's opponent: the specs dealt to the environments in turn (``self`` is the learner)."""
    if not opponents:
        raise ValueError("training needs at least one opponent")
    if len(opponents) > envs:
        raise ValueError(f"{len(opponents)} opponents need at least as many environments (--envs), got {envs}")
    return [learner if spec == "self" else spec for spec in (opponents[i % len(opponents)] for i in range(envs))]


# --- a callback for any stable-baselines3 training ---------------------------------------------------------------
def regret_callback(rules: Rules | str, every: int = 10_000, split: str = "validation", count: int | None = None,
                    csv: str | os.PathLike | None = None, table: SolvedTable | None = None):
    """A stable-baselines3 callback that scores the model on the position benchmark every ``every`` steps: its
    mean regret (win-% points) goes to SB3's logger as ``eval/regret`` (TensorBoard and CSV, as configured) and,
    with ``csv``, to a file of its own (timesteps, seconds, mean regret).

    The model plays the best legal action by its own scores (masked, like :class:`urgym.agents.neural.SB3Agent`), so a
    model trained without action masks is scored fairly. Score on the ``validation`` split while training and
    report the ``test`` split (``evaluate``) at the end.
    """
    from stable_baselines3.common.callbacks import BaseCallback
    from urgym.agents.neural import SB3Agent
    from urgym.evaluation.positions import benchmark_arrays

    arrays = benchmark_arrays(rules, split, count, table)
    if every < 1:
        raise ValueError(f"every must be at least 1 step, got {every}")

    class RegretCallback(BaseCallback):
        def _on_training_start(self) -> None:
            self.next_eval = self.num_timesteps + every
            self.started = time.perf_counter()
            self.rows: list[dict[str, float]] = []

        def _on_step(self) -> bool:
            if self.num_timesteps >= self.next_eval:
                self.next_eval += every
                self.evaluate()
            return True

        def evaluate(self) -> float:
            scores = SB3Agent(self.model).scores(arrays.observations)
            actions = np.where(arrays.masks, scores, -np.inf).argmax(axis=1)
            regret = 100.0 * float(arrays.regrets(actions).mean())
            self.logger.record("eval/regret", regret)
            self.rows.append({"timesteps": self.num_timesteps, "seconds": round(time.perf_counter() - self.started, 1),
                              "mean_regret": regret})
            if csv is not None:
                _write_rows(Path(csv), self.rows)
            return regret

    return RegretCallback()


def _write_rows(path: Path, rows: list[dict[str, float]]) -> None:
    if not rows:
        return
    text = ",".join(rows[0]) + "\n" + "".join(",".join(str(v) for v in row.values()) + "\n" for row in rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, lambda tmp: tmp.write_text(text))


# --- TD(lambda) -------------------------------------------------------------------------------------------
def train_td(rules: Rules, table: SolvedTable, out: Path, timesteps: int, minutes: float | None, seed: int = 0,
             hidden: int = 80, alpha: float = 0.1, lam: float = 0.7, eval_every: int = 1_000_000,
             eval_positions: int = 500, progress: bool = True, features: str = "td-v1") -> dict[str, Any]:
    """Self-play TD(lambda) over ``features`` (a feature set of :mod:`urgym.features`); ``alpha`` decays linearly
    to a tenth of itself over the run. The table only measures (the validation regret): no position of it is
    learned from."""
    from urgym.agents.learned import write_model_card
    from urgym.agents.td import TDAgent, TDLambda

    learner = TDLambda.initial(rules, hidden, seed, features)
    positions = validation_positions(table, eval_positions)
    curve, writer = Curve(out), _tensorboard(out)
    log: list[dict[str, float]] = []  # logs/progress.csv, as SB3's logger writes it for PPO
    start, done, games = time.perf_counter(), 0, 0
    bar = tqdm(total=timesteps, desc="td-lambda", unit="step", disable=not progress, dynamic_ncols=True)
    while done < timesteps and not _out_of_time(start, minutes):
        progress_share = max(done / timesteps, (time.perf_counter() - start) / (60 * minutes) if minutes else 0)
        step_alpha = alpha * (1 - 0.9 * min(progress_share, 1.0))
        chunk_games = min(500, max(1, (timesteps - done) // 60))  # a game is 100-200 moves: stop near the target
        moves = learner.train(chunk_games, seed, games, step_alpha, lam)
        games += chunk_games
        done += moves
        bar.update(moves)
        log.append({"timesteps": done, "games": games, "seconds": round(time.perf_counter() - start, 2),
                    "alpha": step_alpha, "eval/mean_regret": ""})
        if done // eval_every != (done - moves) // eval_every or done >= timesteps:
            regret = _score(TDAgent(learner.network()), table, positions)
            elapsed = time.perf_counter() - start
            bar.set_postfix_str(f"regret {regret:.3f}")
            log[-1]["eval/mean_regret"] = regret
            _write_rows(out / "logs" / "progress.csv", log)
            if writer:
                writer.add_scalar("eval/mean_regret", regret, done)
            if curve.add(done, elapsed, regret):
                best = learner.network()
                best.info = _facts(rules, "td-lambda", seed, done, elapsed, regret, games=games, hidden=hidden,
                                   alpha=alpha, lam=lam, features=features)
                best.save(out / "best_model.npz")
                write_model_card(out / "best_model.npz", rules, **best.info)
    bar.close()
    if not curve.rows or curve.rows[-1]["timesteps"] != done:
        curve.add(done, time.perf_counter() - start, _score(TDAgent(learner.network()), table, positions))
    elapsed = time.perf_counter() - start
    network = learner.network()
    network.info = _facts(rules, "td-lambda", seed, done, elapsed, curve.rows[-1]["mean_regret"], games=games,
                          hidden=hidden, alpha=alpha, lam=lam, features=features)
    network.save(out / "model.npz")
    write_model_card(out / "model.npz", rules, **network.info)
    _write_rows(out / "logs" / "progress.csv", log)
    return {"model": str(out / "model.npz"), "best_model": str(out / "best_model.npz"), "timesteps": done,
            "seconds": elapsed, "best_regret": curve.best}


# --- MaskablePPO ------------------------------------------------------------------------------------------
def train_ppo(rules: Rules, table: SolvedTable, out: Path, timesteps: int, minutes: float | None,
              opponents: list[str], seed: int = 0, envs: int = 16, vec_env: str = "native", threads: int = 1,
              eval_every: int = 200_000, eval_positions: int = 500, progress: bool = True) -> dict[str, Any]:
    """MaskablePPO against opponents dealt to the environments in turn (``self``: the live learner, sampled).

    ``vec_env="native"`` steps the ``envs`` games together in numba (:class:`urgym.sb3.SB3VecEnv` over
    :class:`urgym.vector.UrVectorEnv`), with every non-built-in opponent batched over its games; ``"dummy"``
    steps one ``UrEnv`` after another in this process and ``"subproc"`` gives each its own process (no ``self``
    there: the learner lives in this process). A rollout is :data:`ROLLOUT_STEPS` steps over all environments.
    """
    torch = require_extra("torch", "learn", "train --algo maskable-ppo")
    MaskablePPO = require_extra("sb3_contrib", "learn", "train --algo maskable-ppo").MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.logger import configure
    from urgym.agents.learned import write_model_card

    torch.set_num_threads(threads)
    learner = LearnerOpponent()
    venv = _vec_env(rules, opponents, envs, vec_env, seed, learner)
    model = MaskablePPO("MlpPolicy", venv, seed=seed, n_steps=max(16, ROLLOUT_STEPS // envs), batch_size=256,
                        n_epochs=4, gamma=1.0, learning_rate=3e-4, ent_coef=0.01,
                        policy_kwargs={"net_arch": [128, 128]}, device="cpu")
    learner.set_model(model)
    model.set_logger(configure(str(out / "logs"), ["csv", "tensorboard"]))
    positions = validation_positions(table, eval_positions)
    curve = Curve(out)
    start = time.perf_counter()
    facts = {"opponents": opponents, "envs": envs, "vec_env": vec_env}

    class Progress(BaseCallback):
        def _on_training_start(self) -> None:
            self.bar = tqdm(total=timesteps, desc="maskable-ppo", unit="step", disable=not progress,
                            dynamic_ncols=True)
            self.next_eval = eval_every

        def _on_step(self) -> bool:
            self.bar.n = self.num_timesteps
            self.bar.refresh()
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
                    rules, "maskable-ppo", seed, self.num_timesteps, elapsed, regret, **facts))

        def _on_training_end(self) -> None:
            self.bar.close()

    callback = Progress()
    model.learn(timesteps, callback=callback)
    callback._evaluate()
    elapsed = time.perf_counter() - start
    model.save(out / "model.zip")
    write_model_card(out / "model.zip", rules, **_facts(rules, "maskable-ppo", seed, model.num_timesteps, elapsed,
                                                        curve.rows[-1]["mean_regret"], **facts))
    venv.close()
    return {"model": str(out / "model.zip"), "best_model": str(out / "best_model.zip"),
            "timesteps": model.num_timesteps, "seconds": elapsed, "best_regret": curve.best}


def _vec_env(rules: Rules, opponents: list[str], envs: int, vec_env: str, seed: int, learner: LearnerOpponent):
    """The training environments, monitored (episode returns and lengths reach SB3's logger)."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    from urgym.env import UrEnv
    from urgym.sb3 import SB3VecEnv

    if vec_env not in VEC_ENVS:
        raise ValueError(f"unknown vec_env {vec_env!r}; choose one of {', '.join(VEC_ENVS)}")
    if vec_env == "subproc" and "self" in opponents:
        raise ValueError("opponent 'self' (the live learner) needs the learner's process: use vec_env 'native' "
                         "or 'dummy'")
    per_env = slot_opponents(opponents, envs, learner)
    if vec_env == "native":
        venv = SB3VecEnv(num_envs=envs, rules=rules, opponent=per_env, agent_side="random")
    else:
        factories = [lambda o=o: UrEnv(rules=rules, opponent=o, agent_side="random") for o in per_env]
        venv = SubprocVecEnv(factories) if vec_env == "subproc" else DummyVecEnv(factories)
    venv.seed(seed)
    return VecMonitor(venv)


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
