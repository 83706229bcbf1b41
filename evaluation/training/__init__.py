"""Training learned agents (``train``), and the one loop that drives every learner (``urgym bench`` too).

- :mod:`~urgym.evaluation.training.learner`: the learner protocol (:class:`Learner`), an algorithm's record
  (:class:`Algorithm`), the evaluation schedule and settings overrides;
- :mod:`~urgym.evaluation.training.algorithms`: the registry (urgym's own, code, entry points, ``FILE.py:CLASS``);
- :mod:`~urgym.evaluation.training.run`: one training run, the loop (budget, schedule, progress, validation, curve,
  logs, checkpoints, best and last model with their cards, the learning-rate schedule);
- an algorithm per module, each with its settings dataclass, its learner and its record: TD(lambda)
  (:mod:`~urgym.evaluation.training.td_lambda`), MaskablePPO and any stable-baselines3 algorithm
  (:mod:`~urgym.evaluation.training.ppo`), DQN with action masks (:mod:`~urgym.evaluation.training.dqn`), the
  AlphaZero-style learner (:mod:`~urgym.evaluation.training.alphazero`), distillation from the table
  (:mod:`~urgym.evaluation.training.distill`) and expected TD (:mod:`~urgym.evaluation.training.expected_td`), the
  last two sharing the torch helpers of :mod:`~urgym.evaluation.training.valuefit`;
- :mod:`~urgym.evaluation.training.checkpoint`: signed checkpoints.

The names the module ``urgym.evaluation.training`` of urgym 0.5 exported that still exist are importable from
here (``regret_callback`` among them, as the docs show).
"""

from urgym.evaluation.training.algorithms import algorithm_names, get_algorithm, register_algorithm
from urgym.evaluation.training.learner import Algorithm, Learner, Schedule
from urgym.evaluation.training.ppo import VEC_ENVS, LearnerOpponent, SB3Learner, regret_callback, slot_opponents
from urgym.evaluation.training.run import RunPlan, TrainingRun, plot_curves, train

__all__ = [
    "VEC_ENVS",
    "Algorithm",
    "Learner",
    "LearnerOpponent",
    "RunPlan",
    "SB3Learner",
    "Schedule",
    "TrainingRun",
    "algorithm_names",
    "get_algorithm",
    "plot_curves",
    "register_algorithm",
    "regret_callback",
    "slot_opponents",
    "train",
]
