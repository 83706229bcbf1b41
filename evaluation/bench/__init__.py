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

The command line is ``urgym bench`` (:mod:`urgym.commands.bench`); docs/benchmark.md is the protocol.
"""

from urgym.evaluation.bench.metrics import TaskEvaluator, across_seeds
from urgym.evaluation.bench.protocol import BENCH_ALGORITHMS, run_task, score_agent
from urgym.evaluation.bench.results import baseline_results, leaderboard, load_result, validate_result
from urgym.evaluation.bench.tasks import METRICS, TASKS, Task, get_task

__all__ = [
    "BENCH_ALGORITHMS",
    "METRICS",
    "TASKS",
    "Task",
    "TaskEvaluator",
    "across_seeds",
    "baseline_results",
    "get_task",
    "leaderboard",
    "load_result",
    "run_task",
    "score_agent",
    "validate_result",
]
