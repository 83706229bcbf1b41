"""The shape of games from their records: turns per player, branching factors, game-tree complexity.

Raposo & Lamont (2023, section 3.2) estimate the game-tree complexity of Ur as ``(b * c) ** N`` from 2,000
games of expectimax depth-7 self-play under the Bell/BM (finkel) rules: decision branching factor
``b = 2.45``, chance branching factor ``c = 5`` (the rolls 0 to 4) and ``N = 106.35`` turns per player,
giving 5.3e115. They do not say how they counted. Records hold every roll, so each plausible counting rule is
computed here side by side:

N, per player per game:
    ``rolls``     every roll, passes and the extra rolls of rosettes included;
    ``turns``     turns, a turn ending when the dice pass to the other side;
    ``moves``     rolls with at least one legal move (a move is played);
    ``choices``   rolls with two or more legal moves (a decision is made).
b, the mean number of legal moves:
    ``rolls``         over every roll, a pass counting 0 moves;
    ``rolls_pass_1``  over every roll, a pass counting as 1 option (passing);
    ``moves``         over the rolls with a legal move (forced moves in, passes out);
    ``choices``       over the rolls with a choice (forced moves and passes out).
c is the number of roll outcomes of the dice (5 for four binary dice, 4 for masters' three).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from urgym.records import GameRecord
from urgym.rules import Rules

__all__ = ["B_COUNTINGS", "N_COUNTINGS", "PAPER", "GameTreeStats", "format_stats", "game_tree_stats"]

N_COUNTINGS = {
    "rolls": "every roll (passes and extra rolls in)",
    "turns": "turns (the dice pass to the other side)",
    "moves": "rolls with a legal move",
    "choices": "rolls with a choice (2+ legal moves)",
}
B_COUNTINGS = {
    "rolls": "every roll, a pass as 0 moves",
    "rolls_pass_1": "every roll, a pass as 1 option",
    "moves": "rolls with a legal move (forced in)",
    "choices": "rolls with a choice only",
}
PAPER = {"rules": "finkel", "pieces": 7, "b": 2.45, "N": 106.35, "c": 5, "games": 2000, "agent": "expectimax:7"}
"""Raposo & Lamont (2023), section 3.2: the figures measured under the Bell/BM rules (urgym's finkel)."""


@dataclass(frozen=True)
class GameTreeStats:
    """Per-player game lengths and branching factors of a set of games, under each counting rule."""

    rules: Rules
    games: int
    n: dict[str, float]
    """Mean per player per game, by counting rule (:data:`N_COUNTINGS`)."""
    n_stderr: dict[str, float]
    b: dict[str, float]
    """Mean legal moves, by counting rule (:data:`B_COUNTINGS`)."""
    c: int

    def complexity_log10(self, b: str = "rolls", n: str = "rolls") -> float:
        """log10 of the game-tree complexity ``(b * c) ** N`` under the given counting rules."""
        return self.n[n] * math.log10(self.b[b] * self.c)

    def to_dict(self) -> dict[str, Any]:
        """The statistics as plain JSON."""
        return {
            **self.rules.report_header(),
            "games": self.games,
            "N": self.n,
            "N_stderr": self.n_stderr,
            "b": self.b,
            "c": self.c,
            "complexity_log10": {f"b={b},N={n}": self.complexity_log10(b, n) for b in self.b for n in self.n},
            "paper": PAPER,
        }


def game_tree_stats(records: Iterable[GameRecord]) -> GameTreeStats:
    """Count every game's rolls, turns, moves and choices and the legal moves of each roll.

    Raises:
        ValueError: For no records, records of different rules, or an unfinished game.
    """
    per_game = []
    legal = {"rolls": 0, "rolls_pass_1": 0, "moves": 0, "choices": 0}
    seen = {"rolls": 0, "rolls_pass_1": 0, "moves": 0, "choices": 0}
    rules = None
    for record in records:
        if rules is not None and record.rules != rules:
            raise ValueError(f"records of different rules: {rules.describe()!r} and {record.rules.describe()!r}")
        rules = record.rules
        positions = record.positions()
        if not positions[-1].is_over:
            raise ValueError(f"game {record.game} is unfinished; game lengths need finished games")
        counts = dict.fromkeys(N_COUNTINGS, 0)
        for i, step in enumerate(record.steps):
            n = len(positions[i].legal_moves(step.roll))
            counts["rolls"] += 1
            counts["turns"] += i == 0 or step.side != record.steps[i - 1].side
            counts["moves"] += n >= 1
            counts["choices"] += n >= 2
            for key, included, options in (
                ("rolls", True, n),
                ("rolls_pass_1", True, max(n, 1)),
                ("moves", n >= 1, n),
                ("choices", n >= 2, n),
            ):
                if included:
                    seen[key] += 1
                    legal[key] += options
        per_game.append([counts[k] / 2 for k in N_COUNTINGS])  # per player
    if rules is None:
        raise ValueError("no game records to count")
    table = np.array(per_game)
    stderr = (
        table.std(axis=0, ddof=1) / math.sqrt(len(table)) if len(table) > 1 else np.full(len(N_COUNTINGS), math.inf)
    )
    c = sum(p > 0 for p in rules.roll_probabilities)
    return GameTreeStats(
        rules,
        len(table),
        dict(zip(N_COUNTINGS, table.mean(axis=0).tolist(), strict=True)),
        dict(zip(N_COUNTINGS, stderr.tolist(), strict=True)),
        {k: legal[k] / seen[k] if seen[k] else math.nan for k in B_COUNTINGS},
        c,
    )


def format_stats(stats: GameTreeStats, source: str, positions: int | None) -> str:
    """The terminal report, with the paper's figures beside the counting rules when the rules are finkel."""
    rules = stats.rules
    paper = rules.name == PAPER["rules"] and rules.pieces == PAPER["pieces"]
    lines = [
        f"Game-tree statistics of {rules.describe()}",
        f"{stats.games:,} games: {source}",
        "",
        "turns per player N, by counting rule" + (f"   (paper: N = {PAPER['N']})" if paper else ""),
    ]
    for key, label in N_COUNTINGS.items():
        gap = f"   {100 * (stats.n[key] / PAPER['N'] - 1):+.1f}% from the paper" if paper else ""
        lines.append(f"  {label:<42} {stats.n[key]:8.2f} +- {1.96 * stats.n_stderr[key]:.2f}{gap}")
    lines.append("decision branching factor b, by counting rule" + (f"   (paper: b = {PAPER['b']})" if paper else ""))
    for key, label in B_COUNTINGS.items():
        gap = f"   {100 * (stats.b[key] / PAPER['b'] - 1):+.1f}% from the paper" if paper else ""
        lines.append(f"  {label:<42} {stats.b[key]:8.3f}{gap}")
    lines.append(f"chance branching factor c = {stats.c} (the rolls the dice can show)")
    closest_n = min(N_COUNTINGS, key=lambda k: abs(stats.n[k] - PAPER["N"])) if paper else "rolls"
    closest_b = min(B_COUNTINGS, key=lambda k: abs(stats.b[k] - PAPER["b"])) if paper else "rolls"
    lines.append(
        f"game-tree complexity (b*c)^N with b = {B_COUNTINGS[closest_b]}, N = {N_COUNTINGS[closest_n]}: "
        f"10^{stats.complexity_log10(closest_b, closest_n):.1f}"
    )
    if paper:
        lines.append(
            f"  (paper: ({PAPER['b']} * 5)^{PAPER['N']} = 10^{PAPER['N'] * math.log10(PAPER['b'] * 5):.1f},"
            f" from {PAPER['games']:,} games of {PAPER['agent']} self-play; the closest counting rules are "
            "used above)"
        )
    spread = [stats.complexity_log10(b, n) for b in B_COUNTINGS for n in N_COUNTINGS]
    lines.append(f"  over every pair of counting rules: 10^{min(spread):.1f} to 10^{max(spread):.1f}")
    if positions is not None:
        lines.append(f"positions (exact, as `solve --count`): {positions:,}")
    return "\n".join(lines)
