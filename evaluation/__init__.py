"""Benchmark agents against perfect play: match play, regret per decision, the position benchmark, tournaments.

The command line is ``evaluate`` (:mod:`evaluation.cli`); in Python start from :func:`play_match`,
:func:`benchmark_positions` with :func:`score_positions`, and :func:`run_tournament`.
"""

from evaluation.luck import GameAnalysis, RollAnalysis, analyse_game
from evaluation.match import AgentMatchStats, MatchResult, play_match
from evaluation.positions import PositionBenchmark, benchmark_positions, score_positions
from evaluation.stats import RegretSummary, WinRate, wilson_interval
from evaluation.tournament import TournamentResult, run_tournament

__all__ = [
    "AgentMatchStats",
    "GameAnalysis",
    "MatchResult",
    "PositionBenchmark",
    "RegretSummary",
    "RollAnalysis",
    "TournamentResult",
    "WinRate",
    "analyse_game",
    "benchmark_positions",
    "play_match",
    "run_tournament",
    "score_positions",
    "wilson_interval",
]
