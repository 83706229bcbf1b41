"""The RL benchmark: tasks, protocol runs, results and the leaderboard, built on training and scoring.

- :mod:`~urgym.evaluation.bench.tasks`: the named, versioned tasks (rules, budget in the learner's decisions,
  schedule, seeds, metrics);
- :mod:`~urgym.evaluation.bench.metrics`: a task's metrics of a policy (exact winning chance against perfect play,
  exploitability, test-set regret) and their intervals across seeds;
- :mod:`~urgym.evaluation.bench.protocol`: an algorithm trained under every seed of a task (resumable seed by seed),
  or an agent scored under it;
- :mod:`~urgym.evaluation.bench.results`: results as versioned JSON, their schema, the shipped baselines and the
  leaderboard;
- :mod:`~urgym.evaluation.bench.callback`: the task's metrics during any stable-baselines3 training.

Any learner runs the protocol: the learner API (:class:`Learner`, :class:`Algorithm`, :func:`register_algorithm`,
re-exported here from :mod:`urgym.evaluation.training.learner` and :mod:`urgym.evaluation.training.algorithms`, where
``train`` uses them too) is what a researcher's algorithm implements, and :class:`SB3Learner` enters any
stable-baselines3 algorithm in a few lines. The command line is ``urgym bench`` (:mod:`urgym.commands.bench`);
docs/benchmark.md is the protocol, docs/own-learner.md the walk-through.
"""

from urgym.evaluation.bench.metrics import TaskEvaluator, across_seeds
from urgym.evaluation.bench.protocol import bench_algorithms, run_task, score_agent, train_seed
from urgym.evaluation.bench.results import baseline_results, leaderboard, load_result, validate_result
from urgym.evaluation.bench.tasks import METRICS, TASKS, Task, get_task
from urgym.evaluation.training.algorithms import algorithm_names, get_algorithm, register_algorithm
from urgym.evaluation.training.learner import (
    LONG_GAME,
    Algorithm,
    Learner,
    LearnerError,
    LearningTask,
    NoSettings,
    Schedule,
    with_settings,
)
from urgym.evaluation.training.ppo import SB3Learner

__all__ = [
    "LONG_GAME",
    "METRICS",
    "TASKS",
    "Algorithm",
    "Learner",
    "LearnerError",
    "LearningTask",
    "NoSettings",
    "SB3Learner",
    "Schedule",
    "Task",
    "TaskEvaluator",
    "across_seeds",
    "algorithm_names",
    "baseline_results",
    "bench_algorithms",
    "get_algorithm",
    "get_task",
    "leaderboard",
    "load_result",
    "register_algorithm",
    "run_task",
    "score_agent",
    "train_seed",
    "validate_result",
    "with_settings",
]
