"""Benchmark agents against perfect play, review games, play games, train agents: a folder per concern.

- :mod:`urgym.evaluation.scoring`: match play and scoring (regret per decision, luck-adjusted rates, the position
  benchmark, tournaments, cards, reports);
- :mod:`urgym.evaluation.review`: the review of recorded games (grades, luck, one player's summary, game statistics);
- :mod:`urgym.evaluation.play`: the games a person plays (one session, the terminal and the browser);
- :mod:`urgym.evaluation.training`: training learned agents (one training run, an algorithm per module);
- :mod:`urgym.evaluation.pages`: the web pages the review and the game share.

The command line is ``evaluate``, ``review`` and ``stats`` (:mod:`urgym.commands`); in Python start from
:func:`play_match`, :func:`benchmark_positions` with :func:`score_positions`, :func:`run_tournament`,
:func:`review_game` and :func:`game_tree_stats`.
"""

from urgym.evaluation.review.game_stats import GameTreeStats, game_tree_stats
from urgym.evaluation.review.grades import GameReview, MoveReview, PlayerReview, review_game
from urgym.evaluation.review.luck import GameAnalysis, RollAnalysis, analyse_game
from urgym.evaluation.scoring.match import AgentMatchStats, MatchResult, play_match
from urgym.evaluation.scoring.positions import (
    PositionBenchmark,
    benchmark_positions,
    score_positions,
    validation_positions,
)
from urgym.evaluation.scoring.runner import RunOptions
from urgym.evaluation.scoring.stats import RegretSummary, WinRate, wilson_interval
from urgym.evaluation.scoring.tournament import TournamentResult, run_tournament

__all__ = [
    "AgentMatchStats",
    "GameAnalysis",
    "GameReview",
    "GameTreeStats",
    "MatchResult",
    "MoveReview",
    "PlayerReview",
    "PositionBenchmark",
    "RegretSummary",
    "RollAnalysis",
    "RunOptions",
    "TournamentResult",
    "WinRate",
    "analyse_game",
    "benchmark_positions",
    "game_tree_stats",
    "play_match",
    "review_game",
    "run_tournament",
    "score_positions",
    "validation_positions",
    "wilson_interval",
]
