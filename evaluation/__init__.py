"""Benchmark agents against perfect play: match play, regret per decision, the position benchmark, tournaments.

The command line is ``evaluate``, ``review`` and ``stats`` (:mod:`evaluation.cli`); in Python start from
:func:`play_match`, :func:`benchmark_positions` with :func:`score_positions`, :func:`run_tournament`,
:func:`review_game` and :func:`game_tree_stats`.
"""

import urgym  # noqa: F401 (first: Ctrl-C while a command starts ends with one line)
from evaluation.game_stats import GameTreeStats, game_tree_stats
from evaluation.luck import GameAnalysis, RollAnalysis, analyse_game
from evaluation.match import AgentMatchStats, MatchResult, play_match
from evaluation.positions import PositionBenchmark, benchmark_positions, score_positions, validation_positions
from evaluation.review import GameReview, MoveReview, PlayerReview, review_game
from evaluation.stats import RegretSummary, WinRate, wilson_interval
from evaluation.tournament import TournamentResult, run_tournament

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
