"""Benchmark agents against perfect play: match play, regret per decision, the position benchmark, tournaments.

The command line is ``evaluate``, ``review`` and ``stats`` (:mod:`urgym.commands`); in Python start from
:func:`play_match`, :func:`benchmark_positions` with :func:`score_positions`, :func:`run_tournament`,
:func:`review_game` and :func:`game_tree_stats`.
"""

from urgym.evaluation.game_stats import GameTreeStats, game_tree_stats
from urgym.evaluation.luck import GameAnalysis, RollAnalysis, analyse_game
from urgym.evaluation.match import AgentMatchStats, MatchResult, play_match
from urgym.evaluation.positions import PositionBenchmark, benchmark_positions, score_positions, validation_positions
from urgym.evaluation.review import GameReview, MoveReview, PlayerReview, review_game
from urgym.evaluation.runner import RunOptions
from urgym.evaluation.stats import RegretSummary, WinRate, wilson_interval
from urgym.evaluation.tournament import TournamentResult, run_tournament

import urgym  # noqa: F401 (first: Ctrl-C while a command starts ends with one line)

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
