"""``train --algo maskable-ppo``: sb3-contrib's MaskablePPO on ``urgym/Ur-v2`` (masks from ``action_masks()``).

:class:`SB3Learner` makes any stable-baselines3 or sb3-contrib algorithm a learner of the training loop (MaskablePPO
here, DQN with action masks in :mod:`~urgym.evaluation.training.dqn`, a stranger's in a few lines). The model plays
``envs`` games stepped together on the native vector environment (or SB3's own vector environments), against any
agent spec, its own live policy (``self``), or a mixture (``--opponent`` repeated: dealt to the environments in
turn). The run's bookkeeping is :class:`~urgym.evaluation.training.run.TrainingRun`'s; stable-baselines3's logger
writes ``logs/`` (CSV and TensorBoard), with each evaluation point's figures as ``eval/NAME``.
:func:`regret_callback` scores any stable-baselines3 training on the position benchmark.

At each evaluation point the run writes its checkpoint (the model with its optimizer and buffers, the environments
with their games in progress, every random stream); ``RunPlan(resume=True)`` goes on from it and ends exactly as an
uninterrupted run would. stable-baselines3 starts ``logs/progress.csv`` afresh then: the interrupted stretch's is kept
as ``logs/progress-before-N.csv`` (N: the decisions it was resumed from; ``-2``, ``-3`` ... added when a run is
resumed from the same checkpoint again).
"""

from __future__ import annotations

import contextlib
import functools
import os
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from urgym.agents import Agent
from urgym.agents.outside.policies import SB3Agent, played_as_saved
from urgym.evaluation.scoring.report import write_csv
from urgym.evaluation.training.learner import LONG_GAME, Algorithm, Learner, LearningTask, Schedule
from urgym.evaluation.training.run import UNCAPPED

from urgym import Position, Rules
from urgym.batch import Decisions
from urgym.files import require_extra

__all__ = [
    "MASKABLE_PPO",
    "ROLLOUT_STEPS",
    "VEC_ENVS",
    "LearnerOpponent",
    "MaskablePPOLearner",
    "PPOSettings",
    "SB3Learner",
    "regret_callback",
    "scheduled_callback",
    "slot_opponents",
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


class SB3Learner(Learner):
    """A stable-baselines3 (or sb3-contrib) algorithm as a learner: subclass it and write :meth:`make_model`.

    The model plays ``settings.envs`` games on the native vector environment (its ``vec_env``: ``dummy`` and
    ``subproc`` too) against the opponents dealt to them in turn (``settings.opponents``; ``self`` is its own live
    policy, sampled), torch on ``settings.threads`` threads; settings without those fields get 16 games,
    ``("self", "greedy")`` and one thread. Each :meth:`learn` is one ``model.learn`` call, which stops at the first
    rollout boundary past the decisions asked (its :attr:`granularity`: one rollout) or at the budget. Its schedules
    (learning rate, exploration) follow the whole budget, not the call. stable-baselines3's logger writes ``logs/``;
    the state is the model with its buffers, the environments with their games, and every random stream.
    """

    writes_logs = True
    model_suffix = ".zip"
    """What :meth:`save` writes (a stable-baselines3 zip, which ``sb3:PATH`` plays)."""
    illegal_action = "loss"
    """What the environments do with an illegal action (``replace``: play the nearest legal move, for an algorithm
    that knows no action masks)."""

    def make_model(self, env: Any, seed: int, settings: Any) -> Any:
        """The stable-baselines3 model, on ``env``, seeded by ``seed`` (``device="cpu"``)."""
        raise NotImplementedError(f"{type(self).__name__} has no make_model()")

    def setup(self, task: LearningTask, seed: int, settings: Any, folder: Path) -> None:
        """The environments and the model, seeded."""
        torch = require_extra("torch", "learn", "a stable-baselines3 learner")
        torch.set_num_threads(getattr(settings, "threads", 1))
        self.task, self.folder, self.settings = task, folder, settings
        self.opponent = LearnerOpponent()
        opponents = list(getattr(settings, "opponents", ("self", "greedy")))
        kind = getattr(settings, "vec_env", "native")
        self.venv = vec_env(
            task.get_rules(), opponents, getattr(settings, "envs", 16), kind, seed, self.opponent, self.illegal_action
        )
        self.model = self.make_model(self.venv, seed, settings)
        self.model.__class__ = _budgeted_class(type(self.model))
        self.model.urgym_budget = task.budget
        self.opponent.set_model(self.model)
        self.granularity = _rollout(self.model)

    def learn(self, decisions: int) -> int:
        """``model.learn`` for ``decisions`` more steps (to the rollout's end), or until the budget is spent."""
        from stable_baselines3.common.callbacks import BaseCallback

        task = self.task

        class StopAtBudget(BaseCallback):
            def _on_step(self) -> bool:
                return task.share(self.num_timesteps) < 1.0

        before = self.model.num_timesteps
        self._logger()
        self.model.learn(decisions, callback=StopAtBudget(), reset_num_timesteps=False)
        return self.model.num_timesteps - before

    def _logger(self) -> Any:
        """The model's logger, writing ``logs/`` (CSV and TensorBoard), made on first use."""
        from stable_baselines3.common.logger import configure

        if getattr(self.model, "_logger", None) is None:  # a new model, or one restored from a checkpoint
            self.model.set_logger(configure(str(self.folder / "logs"), ["csv", "tensorboard"]))
        return self.model.logger

    def agent(self) -> Any:
        """The model as ``sb3:PATH`` plays it once saved."""
        return played_as_saved(self.model, self.task.get_rules())

    def save(self, path: Path, facts: dict[str, Any]) -> None:
        """Write the model's zip (its card is the run's)."""
        self.model.save(path)

    def record(self, done: int, figures: dict[str, Any]) -> None:
        """Write the point's figures to the model's logs as ``eval/NAME``."""
        logger = self._logger()
        for key, value in figures.items():
            logger.record(f"eval/{key}", value)
        logger.dump(done)

    def state(self) -> bytes:
        """The model, its environments and every random stream, pickled."""
        import cloudpickle

        with _detached(self.model) as state:
            return cloudpickle.dumps(state)

    def load(self, state: bytes) -> None:
        """Go on from :meth:`state` (the interrupted stretch's log kept beside the new one)."""
        import pickle

        self.venv.close()
        self.model, self.venv = _restored(pickle.loads(state))  # a checkpoint is read only once signed
        _set_aside_log(self.folder / "logs", self.model.num_timesteps)

    def facts(self) -> dict[str, Any]:
        """Its opponents and environments."""
        return {k: getattr(self.settings, k) for k in ("opponents", "envs", "vec_env") if hasattr(self.settings, k)}


@functools.cache
def _budgeted_class(cls: type) -> type:
    """``cls`` with its progress (learning-rate and exploration schedules) counted over the whole budget.

    stable-baselines3 counts progress over one ``learn`` call; the loop makes one call per evaluation interval.
    """

    class Budgeted(cls):
        def _update_current_progress_remaining(self, num_timesteps: int, total_timesteps: int) -> None:
            super()._update_current_progress_remaining(num_timesteps, self.urgym_budget)

    return Budgeted


def _rollout(model: Any) -> int:
    """The steps one ``learn`` call may take past its target: one rollout (on-policy) or one collection."""
    from stable_baselines3.common.on_policy_algorithm import OnPolicyAlgorithm

    envs = model.n_envs
    if isinstance(model, OnPolicyAlgorithm):
        return model.n_steps * envs
    frequency = model.train_freq
    return frequency.frequency * (envs if frequency.unit.value == "step" else LONG_GAME * envs)


class MaskablePPOLearner(SB3Learner):
    """sb3-contrib's MaskablePPO (see the module docstring)."""

    def make_model(self, env: Any, seed: int, settings: PPOSettings) -> Any:
        """MaskablePPO with urgym's hyperparameters: rollouts of :data:`ROLLOUT_STEPS`, gamma 1, [128, 128]."""
        MaskablePPO = require_extra("sb3_contrib", "learn", "train --algo maskable-ppo").MaskablePPO
        return MaskablePPO(
            "MlpPolicy",
            env,
            seed=seed,
            n_steps=max(16, ROLLOUT_STEPS // settings.envs),
            batch_size=256,
            n_epochs=4,
            gamma=1.0,
            learning_rate=3e-4,
            ent_coef=0.01,
            policy_kwargs={"net_arch": [128, 128]},
            device="cpu",
        )


MASKABLE_PPO = Algorithm(
    name="maskable-ppo",
    learner=MaskablePPOLearner,
    settings=PPOSettings,
    policy_network=True,
    decisions_per_second=3_000,
    description="sb3-contrib's MaskablePPO against itself and greedy, on the native vector environment",
    aliases=("ppo",),
    requires=(("sb3_contrib", "learn"),),
    model_suffix=".zip",
    eval_every=200_000,
)
"""MaskablePPO (measured on finkel 4: about 3,000 decisions a second on one core)."""


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


def scheduled_callback(
    every: int,
    measure: Callable[[Any, bool], None],
    final: bool = False,
    start: Callable[[Any], None] | None = None,
) -> Any:
    """A stable-baselines3 callback that calls ``measure(callback, final)`` on a :class:`Schedule` of ``every`` steps.

    A point is measured at the first rollout's start past it, not at a step: there the model has taken every update
    so far (on- and off-policy alike), as a model saved then would have. With ``final``, once more when training
    ends. ``start(callback)`` is called when training starts (the model known: a check of what it learns).

    Raises:
        ValueError: For ``every`` that is not a whole number of at least 1.
    """
    from stable_baselines3.common.callbacks import BaseCallback

    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise ValueError(f"every must be a whole number of steps of at least 1, got {every!r}")
    schedule = Schedule(UNCAPPED, every)

    class ScheduledCallback(BaseCallback):
        def _on_training_start(self) -> None:
            if start is not None:
                start(self)
            self.next_eval = schedule.next_point(self.num_timesteps)
            self.started = time.perf_counter()

        def _on_step(self) -> bool:
            return True

        def _on_rollout_start(self) -> None:
            if self.num_timesteps >= self.next_eval:
                self.next_eval = schedule.next_point(self.num_timesteps)
                measure(self, False)

        def _on_training_end(self) -> None:
            if final:
                measure(self, True)

    return ScheduledCallback()


def regret_callback(
    rules: Rules | str,
    every: int = 10_000,
    split: str = "validation",
    count: int | None = None,
    csv: str | os.PathLike | None = None,
    table: Any = None,
) -> Any:
    """A stable-baselines3 callback that scores the model on the position benchmark every ``every`` steps.

    Its mean regret (win-% points) goes to SB3's logger as ``eval/regret`` (TensorBoard and CSV, as configured) and,
    with ``csv``, to a file of its own (timesteps, seconds, mean regret); its ``rows`` hold them, its ``evaluate()``
    scores the model now. Points follow :func:`scheduled_callback`.

    The model plays the best legal action by its own scores (masked, like
    :class:`urgym.agents.outside.policies.SB3Agent`), so a model trained without action masks is scored fairly.
    Score on the ``validation`` split while training and report the ``test`` split (``evaluate``) at the end.
    """
    from urgym.evaluation.scoring.positions import benchmark_arrays

    arrays = benchmark_arrays(rules, split, count, table)
    rows: list[dict[str, float]] = []

    def evaluate(callback: Any, final: bool = False) -> float:
        scores = SB3Agent(callback.model).scores(arrays.observations)
        actions = np.where(arrays.masks, scores, -np.inf).argmax(axis=1)
        regret = float(arrays.regrets(actions).mean())
        callback.logger.record("eval/regret", regret)
        seconds = round(time.perf_counter() - callback.started, 1)
        rows.append({"timesteps": callback.num_timesteps, "seconds": seconds, "mean_regret": regret})
        if csv is not None:
            write_csv(Path(csv), rows)
        return regret

    callback = scheduled_callback(every, evaluate)
    callback.rows = rows
    callback.evaluate = lambda: evaluate(callback)
    return callback


def vec_env(
    rules: Rules,
    opponents: list[str],
    envs: int,
    kind: str,
    seed: int,
    learner: LearnerOpponent,
    illegal_action: str = "loss",
) -> Any:
    """The training environments of an SB3 learner, monitored (episode returns and lengths reach SB3's logger).

    ``kind``: ``native`` (every game stepped together in numba), ``dummy`` or ``subproc`` (see :class:`PPOSettings`);
    ``illegal_action``: what they do with an illegal action (:class:`urgym.env.UrEnv`).
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
        venv = SB3VecEnv(
            num_envs=envs, rules=rules, opponent=per_env, agent_side="random", illegal_action=illegal_action
        )
    else:
        factories = [
            lambda o=o: UrEnv(rules=rules, opponent=o, agent_side="random", illegal_action=illegal_action)
            for o in per_env
        ]
        venv = SubprocVecEnv(factories) if kind == "subproc" else DummyVecEnv(factories)
    venv.seed(seed)
    return VecMonitor(venv)
