"""``train --algo maskable-ppo``: sb3-contrib's MaskablePPO on ``urgym/Ur-v2`` (masks from ``action_masks()``).

The learner plays ``envs`` games stepped together on the native vector environment (or SB3's own vector
environments), against any agent spec, its own live policy (``self``), or a mixture (``--opponent`` repeated: dealt
to the environments in turn). The run's bookkeeping is :class:`~urgym.evaluation.training.run.TrainingRun`'s;
stable-baselines3's logger writes ``logs/`` (CSV and TensorBoard), with the validation regret as
``eval/mean_regret``. :func:`regret_callback` scores any stable-baselines3 training the same way.

After each evaluation the run writes its checkpoint (the model with its optimizer and buffers, the environments with
their games in progress, every random stream); ``RunPlan(resume=True)`` goes on from it and ends exactly as an
uninterrupted run would. stable-baselines3 starts ``logs/progress.csv`` afresh then: the interrupted stretch's is kept
as ``logs/progress-before-N.csv`` (N: the timesteps it was resumed from; ``-2``, ``-3`` ... added when a run is
resumed from the same checkpoint again).
"""

from __future__ import annotations

import contextlib
import os
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from urgym.agents import Agent
from urgym.agents.outside.policies import SB3Agent, played_as_saved
from urgym.evaluation.scoring.positions import validation_positions
from urgym.evaluation.scoring.report import write_csv
from urgym.evaluation.training.checkpoint import read_checkpoint
from urgym.evaluation.training.run import AgentLearner, Metrics, RunPlan, TrainingRun, next_point
from urgym.solver import SolvedTable

from urgym import Position, Rules
from urgym.batch import Decisions
from urgym.files import require_extra

__all__ = [
    "ROLLOUT_STEPS",
    "VEC_ENVS",
    "LearnerOpponent",
    "PPOSettings",
    "progress_callback",
    "regret_callback",
    "run_sb3",
    "slot_opponents",
    "train_ppo",
    "vec_env",
]

VEC_ENVS = ("native", "dummy", "subproc")
ROLLOUT_STEPS = 8192
"""The steps of one PPO rollout over all environments."""


@dataclass(frozen=True)
class PPOSettings:
    """How ``train --algo maskable-ppo`` learns (the command's defaults are these)."""

    opponents: tuple[str, ...] = ("self", "greedy")
    """Agent specs dealt to the environments in turn; ``self`` is the learner's own live policy, sampled."""
    envs: int = 16
    """Environments stepped together."""
    vec_env: str = "native"
    """``native``: every game stepped together in numba, opponents batched; ``dummy``: one UrEnv after another;
    ``subproc``: one process each (no ``self``)."""
    threads: int = 1
    """Torch threads of the learner."""
    eval_every: int = 200_000
    """Timesteps between scorings on the validation positions."""
    validation: int = 500
    """Validation positions scored to pick the best model."""


def train_ppo(
    rules: Rules,
    table: SolvedTable,
    plan: RunPlan,
    settings: PPOSettings | None = None,
    metrics: Metrics | None = None,
) -> dict[str, Any]:
    """MaskablePPO against opponents dealt to the environments in turn (``self``: the live learner, sampled).

    ``vec_env="native"`` steps the ``envs`` games together in numba (:class:`urgym.sb3.SB3VecEnv` over
    :class:`urgym.vector.UrVectorEnv`), with every non-built-in opponent batched over its games; ``"dummy"``
    steps one ``UrEnv`` after another in this process and ``"subproc"`` gives each its own process (no ``self``
    there: the learner lives in this process). A rollout is :data:`ROLLOUT_STEPS` steps over all environments.
    """
    settings = settings or PPOSettings()
    torch = require_extra("torch", "learn", "train --algo maskable-ppo")
    MaskablePPO = require_extra("sb3_contrib", "learn", "train --algo maskable-ppo").MaskablePPO

    torch.set_num_threads(settings.threads)
    learner = LearnerOpponent()
    venv = vec_env(rules, list(settings.opponents), settings.envs, settings.vec_env, plan.seed, learner)
    model = MaskablePPO(
        "MlpPolicy",
        venv,
        seed=plan.seed,
        n_steps=max(16, ROLLOUT_STEPS // settings.envs),
        batch_size=256,
        n_epochs=4,
        gamma=1.0,
        learning_rate=3e-4,
        ent_coef=0.01,
        policy_kwargs={"net_arch": [128, 128]},
        device="cpu",
    )
    facts = {"opponents": list(settings.opponents), "envs": settings.envs, "vec_env": settings.vec_env}
    return run_sb3("maskable-ppo", model, learner, venv, rules, table, plan, settings, facts, metrics)


def run_sb3(
    algo: str,
    model: Any,
    learner: LearnerOpponent,
    venv: Any,
    rules: Rules,
    table: SolvedTable,
    plan: RunPlan,
    settings: Any,
    facts: dict[str, Any],
    metrics: Metrics | None = None,
) -> dict[str, Any]:
    """Train a stable-baselines3 ``model`` as one :class:`TrainingRun` (PPO's and DQN's, alike).

    The learner plays ``model`` (``self`` opponents), SB3's logger writes ``logs/``, the run is scored as the model
    plays once saved (:func:`~urgym.agents.outside.policies.played_as_saved`) every ``settings.eval_every`` steps and
    checkpointed after each scoring. With ``plan.resume`` and a checkpoint in ``plan.out``, ``model`` and ``venv``
    give way to the checkpoint's.
    """
    from stable_baselines3.common.logger import configure

    identity = plan.identity(algo, settings)
    checkpoint = read_checkpoint(plan.out, identity) if plan.resume else None
    if checkpoint is None:
        learner.set_model(model)
    else:
        venv.close()
        model, venv = _restored(checkpoint["learner"])
        _set_aside_log(plan.out / "logs", checkpoint["timesteps"])
    model.set_logger(configure(str(plan.out / "logs"), ["csv", "tensorboard"]))
    agent_learner = AgentLearner(
        ".zip",
        lambda: played_as_saved(model, rules),
        lambda path, facts: model.save(path),
        table,
        validation_positions(table, settings.validation),
    )
    facts = {**facts, "settings": asdict(settings)}
    options = {"own_logs": False, "metrics": metrics, "table": table, "checkpoint": checkpoint}
    run = TrainingRun(algo, rules, plan, agent_learner, "step", facts, **options)

    def save(done: int) -> None:
        with _detached(model) as state:
            run.save_checkpoint(done, identity, state)

    callback = progress_callback(run, settings.eval_every, save)
    model.learn(plan.timesteps - model.num_timesteps, callback=callback, reset_num_timesteps=checkpoint is None)
    result = run.finish(model.num_timesteps)
    venv.close()
    return result


@contextlib.contextmanager
def _detached(model: Any) -> Iterator[dict[str, Any]]:
    """The whole state of an SB3 ``model`` in training, picklable while the block runs.

    The model goes without its logger (open files) and its ``VecMonitor`` (SB3's wrappers do not pickle): the
    environments inside it and the monitor's counts go instead, beside every random stream.
    """
    import torch

    monitor, logger = model.env, model._logger
    counts = {name: getattr(monitor, name) for name in _MONITOR_COUNTS}
    model.env, model._logger = None, None
    try:
        yield {
            "model": model,
            "venv": monitor.venv,
            "monitor": counts,
            "random": {"numpy": np.random.get_state(), "torch": torch.get_rng_state(), "python": random.getstate()},
        }
    finally:
        model.env, model._logger = monitor, logger


_MONITOR_COUNTS = ("episode_returns", "episode_lengths", "episode_count", "t_start")


def _restored(state: dict[str, Any]) -> tuple[Any, Any]:
    """The model and its monitored environments as :func:`_detached` held them, random streams set as they were."""
    import torch
    from stable_baselines3.common.vec_env import VecMonitor

    monitor = VecMonitor(state["venv"])
    for name, value in state["monitor"].items():
        setattr(monitor, name, value)
    model = state["model"]
    model.env = monitor
    np.random.set_state(state["random"]["numpy"])
    torch.set_rng_state(state["random"]["torch"])
    random.setstate(state["random"]["python"])
    return model, monitor


def _set_aside_log(logs: Path, resumed_from: int) -> Path | None:
    """Keep the interrupted stretch's ``progress.csv`` (stable-baselines3 starts the file afresh); where it went.

    A run resumed twice from the same checkpoint (interrupted again before the next one) keeps both stretches:
    ``progress-before-N.csv``, then ``progress-before-N-2.csv`` and on.
    """
    log = logs / "progress.csv"
    if not log.is_file():
        return None
    kept = logs / f"progress-before-{resumed_from}.csv"
    again = 2
    while kept.exists():
        kept = logs / f"progress-before-{resumed_from}-{again}.csv"
        again += 1
    log.replace(kept)
    return kept


def progress_callback(run: TrainingRun, eval_every: int, checkpoint: Callable[[int], None] | None = None) -> Any:
    """The SB3 callback that drives a :class:`TrainingRun`: its bar, its minutes, an evaluation every ``eval_every``.

    An evaluation happens at the first rollout's start past its step count, not at a step: there the model has taken
    every update so far (on- and off-policy alike), as the model saved at the end will have. ``checkpoint`` is then
    called with the timesteps: the state it saves is the one the next rollout starts from.
    """
    from stable_baselines3.common.callbacks import BaseCallback

    class Progress(BaseCallback):
        def _on_training_start(self) -> None:
            self.next_eval = next_point(self.num_timesteps, eval_every)  # a resumed run: past its checkpoint

        def _on_step(self) -> bool:
            run.advance(self.num_timesteps)
            return run.share(self.num_timesteps) < 1.0  # the minutes (learn() itself stops at the timesteps)

        def _on_rollout_start(self) -> None:
            if self.num_timesteps >= self.next_eval:
                while self.next_eval <= self.num_timesteps:
                    self.next_eval += eval_every
                self.logger.record("eval/mean_regret", run.evaluate(self.num_timesteps))
                for key, value in run.figures.items():
                    if isinstance(value, (int, float)):
                        self.logger.record(f"eval/{key}", value)
                if checkpoint is not None:
                    checkpoint(self.num_timesteps)

    return Progress()


class LearnerOpponent(Agent):
    """The learner as its own opponent (``--opponent self``).

    The live model's policy, sampled from its legal actions' softmax, so the opponent improves with the learner and
    stays varied. Set :attr:`model` once the model exists; the environments hold this object from the start.
    """

    spec = "self"

    def __init__(self) -> None:
        self._agent: Agent | None = None
        super().__init__(None)

    def set_model(self, model: Any) -> None:
        """Play ``model``'s current policy from now on."""
        self._agent = SB3Agent(model, spec="self", sample=True)

    def select_moves(self, rules: Rules, decisions: Decisions) -> np.ndarray:
        """The live model's sampled moves."""
        if self._agent is None:
            raise RuntimeError("the learner opponent has no model yet (call set_model)")
        return self._agent.select_moves(rules, decisions)

    def select_move(self, position: Position, roll: int) -> int:
        """The live model's sampled move."""
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


def regret_callback(
    rules: Rules | str,
    every: int = 10_000,
    split: str = "validation",
    count: int | None = None,
    csv: str | os.PathLike | None = None,
    table: SolvedTable | None = None,
):
    """A stable-baselines3 callback that scores the model on the position benchmark every ``every`` steps.

    Its mean regret (win-% points) goes to SB3's logger as ``eval/regret`` (TensorBoard and CSV, as configured) and,
    with ``csv``, to a file of its own (timesteps, seconds, mean regret).

    The model plays the best legal action by its own scores (masked, like
    :class:`urgym.agents.outside.policies.SB3Agent`), so a model trained without action masks is scored fairly.
    Score on the ``validation`` split while training and report the ``test`` split (``evaluate``) at the end.
    """
    from stable_baselines3.common.callbacks import BaseCallback
    from urgym.agents.outside.policies import SB3Agent
    from urgym.evaluation.scoring.positions import benchmark_arrays

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
            regret = float(arrays.regrets(actions).mean())
            self.logger.record("eval/regret", regret)
            self.rows.append(
                {
                    "timesteps": self.num_timesteps,
                    "seconds": round(time.perf_counter() - self.started, 1),
                    "mean_regret": regret,
                }
            )
            if csv is not None:
                write_csv(Path(csv), self.rows)
            return regret

    return RegretCallback()


def vec_env(rules: Rules, opponents: list[str], envs: int, kind: str, seed: int, learner: LearnerOpponent) -> Any:
    """The training environments of an SB3 learner, monitored (episode returns and lengths reach SB3's logger).

    ``kind``: ``native`` (every game stepped together in numba), ``dummy`` or ``subproc`` (see :class:`PPOSettings`).
    """
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    from urgym.env import UrEnv
    from urgym.sb3 import SB3VecEnv

    if kind not in VEC_ENVS:
        raise ValueError(f"unknown vec_env {kind!r}; choose one of {', '.join(VEC_ENVS)}")
    if kind == "subproc" and "self" in opponents:
        raise ValueError(
            "opponent 'self' (the live learner) needs the learner's process: use vec_env 'native' or 'dummy'"
        )
    per_env = slot_opponents(opponents, envs, learner)
    if kind == "native":
        venv = SB3VecEnv(num_envs=envs, rules=rules, opponent=per_env, agent_side="random")
    else:
        factories = [lambda o=o: UrEnv(rules=rules, opponent=o, agent_side="random") for o in per_env]
        venv = SubprocVecEnv(factories) if kind == "subproc" else DummyVecEnv(factories)
    venv.seed(seed)
    return VecMonitor(venv)
