"""Training learned agents (``train``).

One training run (:mod:`~urgym.evaluation.training.run`: budget, progress, validation, curve, logs, best and last model
with their cards, the learning-rate schedule) and an algorithm per module, each with a settings dataclass whose defaults
the command reads: TD(lambda) (:mod:`~urgym.evaluation.training.td_lambda`), MaskablePPO
(:mod:`~urgym.evaluation.training.ppo`), distillation from the table (:mod:`~urgym.evaluation.training.distill`) and
expected TD (:mod:`~urgym.evaluation.training.expected_td`), the last two sharing the torch helpers of
:mod:`~urgym.evaluation.training.valuefit`.

The names the module ``urgym.evaluation.training`` of urgym 0.5 exported that still exist are importable from
here (``regret_callback`` among them, as the docs show).
"""

from urgym.evaluation.training.ppo import VEC_ENVS, LearnerOpponent, regret_callback, slot_opponents
from urgym.evaluation.training.run import ALGORITHMS, RunPlan, TrainingRun, plot_curves

__all__ = [
    "ALGORITHMS",
    "VEC_ENVS",
    "LearnerOpponent",
    "RunPlan",
    "TrainingRun",
    "plot_curves",
    "regret_callback",
    "slot_opponents",
]
