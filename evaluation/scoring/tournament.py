"""A round robin: every pair of agents plays a match, and every agent takes the position benchmark."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
from urgym.agents import Agent, make_agent
from urgym.evaluation.scoring.match import MatchResult, play_match, records_directory
from urgym.evaluation.scoring.positions import PositionBenchmark, benchmark_positions, score_positions
from urgym.evaluation.scoring.runner import RunOptions
from urgym.solver import SolvedTable

from urgym import Rules

__all__ = ["TournamentResult", "pair_folders", "run_tournament", "tournament_specs"]


@dataclass(frozen=True)
class TournamentResult:
    """Matches of every pair and each agent's position benchmark."""

    specs: tuple[str, ...]
    matches: dict[tuple[int, int], MatchResult]
    """The match of agents i < j (agent i is the match's agent 0)."""
    benchmarks: tuple[PositionBenchmark, ...] | None

    @property
    def win_matrix(self) -> np.ndarray:
        """Row agent's win rate against the column agent (NaN on the diagonal)."""
        n = len(self.specs)
        matrix = np.full((n, n), np.nan)
        for (i, j), match in self.matches.items():
            matrix[i, j] = match.agents[0].wins.rate
            matrix[j, i] = match.agents[1].wins.rate
        return matrix

    @property
    def adjusted_matrix(self) -> np.ndarray | None:
        """Row agent's luck-adjusted win rate against the column agent, ``[n, n, 3]``.

        (mean, low, high) of its 95% interval (NaN on the diagonal); None when the matches were played without the
        solved table.
        """
        n = len(self.specs)
        matrix = np.full((n, n, 3), np.nan)
        for (i, j), match in self.matches.items():
            for row, col, side in ((i, j, match.agents[0]), (j, i, match.agents[1])):
                if side.luck_adjusted is None:
                    return None
                adjusted = side.luck_adjusted
                matrix[row, col] = (adjusted.mean, adjusted.low, adjusted.high)
        return matrix

    def _adjusted_dicts(self) -> list[list[dict[str, Any] | None]] | None:
        """The luck-adjusted matrix for JSON: per cell the unbiased estimate and interval, and the shown (clipped)."""
        if any(side.luck_adjusted is None for match in self.matches.values() for side in match.agents):
            return None
        n = len(self.specs)
        cells: list[list[dict[str, Any] | None]] = [[None] * n for _ in range(n)]
        for (i, j), match in self.matches.items():
            cells[i][j] = match.agents[0].luck_adjusted.to_dict()
            cells[j][i] = match.agents[1].luck_adjusted.to_dict()
        return cells

    def describe(self) -> str:
        """The rules and the games per pair, for titles."""
        match = next(iter(self.matches.values()))
        return f"{match.rules.name}, {match.rules.pieces} pieces, {match.games:,} games per pair"

    def match_regret(self, i: int) -> float:
        """Agent i's mean regret (win-% points) over its decisions in all its matches."""
        total, count = 0.0, 0
        for (a, b), match in self.matches.items():
            if i in (a, b) and match.agents[0 if i == a else 1].regret is not None:
                regret = match.agents[0 if i == a else 1].regret
                total += regret.mean * regret.decisions
                count += regret.decisions
        return total / count if count else float("nan")

    def to_dict(self) -> dict[str, Any]:
        """The tournament's results as plain JSON."""
        return {
            "agents": list(self.specs),
            "win_matrix": [[None if np.isnan(x) else float(x) for x in row] for row in self.win_matrix],
            "luck_adjusted_matrix": self._adjusted_dicts(),
            "matches": [m.to_dict() for m in self.matches.values()],
            "position_benchmark": [b.to_dict() for b in self.benchmarks] if self.benchmarks else None,
        }


def run_tournament(
    agents: list[str | Agent],
    rules: Rules,
    games: int,
    seed: int = 0,
    table: SolvedTable | None = None,
    positions: int = 1000,
    run: RunOptions = RunOptions(),
) -> TournamentResult:
    """Play every pair ``games`` games (same seed, so every pair sees the same dice) and benchmark each agent.

    ``run.save_games``: a directory for the games' records, one folder per pair (``expectimax_3-vs-greedy``); a
    pair's folder that already holds records is refused unless ``run.replace_games``.

    Raises:
        ValueError: For fewer than two agents, or an agent given twice (the same spec, however written).
    """
    specs = tournament_specs(agents)
    folders = pair_folders(specs, run.save_games) if run.save_games is not None else {}
    for folder in folders.values():
        records_directory(folder, run.replace_games)  # every pair's folder is checked before the first game
    matches = {}
    for i, j in combinations(range(len(agents)), 2):
        pair_run = replace(run, save_games=folders.get((i, j)), replace_games=run.replace_games and (i, j) in folders)
        matches[(i, j)] = play_match(agents[i], agents[j], rules, games, seed, table, pair_run)
    benchmarks = None
    if table is not None and positions:
        chosen = benchmark_positions(table, positions)
        scoring = replace(run, save_games=None, replace_games=False)
        benchmarks = tuple(score_positions(a, table, chosen, scoring) for a in agents)
    return TournamentResult(specs, matches, benchmarks)


def tournament_specs(agents: list[str | Agent]) -> tuple[str, ...]:
    """The agents' specs, each agent once.

    Raises:
        ValueError: For fewer than two agents, or one given twice (``expectimax:3`` and ``expectimax:depth=3``).
    """
    if len(agents) < 2:
        raise ValueError(f"a tournament needs at least two agents, got {len(agents)}")
    specs = tuple(make_agent(a).spec for a in agents)
    for i, spec in enumerate(specs):
        if spec in specs[:i]:
            raise ValueError(
                f"agent {spec!r} is in the tournament twice ({agents[specs.index(spec)]!r} and "
                f"{agents[i]!r}); each agent plays once"
            )
    return specs


def pair_folders(specs: tuple[str, ...], save_games: str | os.PathLike) -> dict[tuple[int, int], Path]:
    """The records folder of each pair (``expectimax_depth=3-vs-greedy``), inside ``save_games``."""
    return {
        (i, j): Path(save_games) / f"{_folder(specs[i])}-vs-{_folder(specs[j])}"
        for i, j in combinations(range(len(specs)), 2)
    }


def _folder(spec: str) -> str:
    """A spec as a folder name (``expectimax:3`` -> ``expectimax_3``): no separators, never ``..``."""
    name = re.sub(r"[^A-Za-z0-9=-]+", "_", spec).strip("_")
    return name[:80] or "agent"
