"""An agent's card: the figures to quote, on every solved rule set it can play.

For each rule set (finkel, blitz and masters by default) whose table is cached or may be solved and that the agent
can play: its mean regret on the position benchmark's test set, and its result against perfect play over a match,
raw and luck-adjusted, with 95% intervals. The card names the position sets by a hash of their positions and
rolls, and the urgym version, so two cards say whether they measured the same thing. It is written as JSON and as
one row of the leaderboard (Markdown; docs/evaluation.md).
"""

from __future__ import annotations

import datetime
import hashlib
from typing import Any

import numpy as np
from urgym.agents import Agent, make_agent
from urgym.evaluation.scoring.exact import exact_results
from urgym.evaluation.scoring.match import play_match
from urgym.evaluation.scoring.positions import DEFAULT_POSITIONS, benchmark_positions, score_positions
from urgym.evaluation.scoring.runner import RunOptions
from urgym.solver import TableMissingError, table_for

import urgym
from urgym import get_rules

__all__ = ["CARD_RULE_SETS", "agent_card", "card_header", "card_row", "positions_hash"]

CARD_RULE_SETS = ("finkel", "blitz", "masters")
"""The rule sets a card covers by default: the solved ones urgym plays at their own piece counts."""


def positions_hash(positions: list) -> str:
    """A short hash of a position set (its packed positions and rolls), to tell two sets apart."""
    data = np.array([(p.code, r) for p, r in positions], dtype=np.int64).tobytes()
    return hashlib.sha256(data).hexdigest()[:12]


def agent_card(
    agent: str | Agent,
    rule_sets: tuple[str, ...] = CARD_RULE_SETS,
    games: int = 150,
    seed: int = 0,
    positions: int = DEFAULT_POSITIONS,
    run: RunOptions = RunOptions(),
    solve: bool = True,
    pieces: int | None = None,
    exact: bool = False,
) -> dict[str, Any]:
    """The card of ``agent`` (see the module docstring) as a dict, ready for JSON.

    ``pieces`` plays every rule set with that many pieces (default: each one's own). ``exact`` adds each rule set's
    exact figures (:mod:`urgym.evaluation.scoring.exact`): the exact win rate against perfect play and the
    exploitability, beside the sampled ones. A rule set the agent cannot
    play, or whose table is not cached when ``solve`` is False, is listed with the reason instead of figures.
    """
    built = make_agent(agent)
    card: dict[str, Any] = {
        "format": "urgym-agent-card",
        "version": 1,
        "agent": built.spec,
        "urgym": urgym.__version__,
        "date": datetime.date.today().isoformat(),
        "games": games,
        "seed": seed,
        "pieces": pieces,
        "rule_sets": {},
    }
    for name in rule_sets:
        rules = get_rules(name, pieces)
        try:
            built.check_rules(rules)
        except ValueError as err:
            card["rule_sets"][name] = {"skipped": f"cannot play: {err}"}
            continue
        try:
            table = table_for(rules, solve=solve, progress=run.progress)
        except TableMissingError as err:
            card["rule_sets"][name] = {"skipped": str(err)}
            continue
        chosen = benchmark_positions(table, positions)
        bench = score_positions(agent, table, chosen, run)
        match = play_match(agent, "perfect", rules, games, seed, table, run)
        side = match.agents[0]
        card["rule_sets"][name] = {
            "rules": rules.describe(),
            "positions": len(chosen),
            "positions_hash": positions_hash(chosen),
            "regret": bench.regret.mean,
            "regret_summary": bench.regret.to_dict(),
            "vs_perfect": {
                "games": games,
                "raw": side.wins.to_dict(),
                "luck_adjusted": side.luck_adjusted.to_dict(),
                "raw_is_narrower": side.wins.width <= side.luck_adjusted.width,
            },
        }
        if exact:
            report = exact_results(agent, "perfect", rules, seed, run.progress, best_response=True)
            card["rule_sets"][name]["exact"] = {
                "win_rate": report.match.win_rate,
                "exploitability_points": report.exploitability["exploitability_points"],
                "exact_policies": report.match.exact_policies,
            }
    return card


def card_header(rule_sets: tuple[str, ...] = CARD_RULE_SETS) -> str:
    """The header of the leaderboard's Markdown table."""
    columns = ["agent"] + [f"{name}: regret" for name in rule_sets] + [f"{name}: vs perfect" for name in rule_sets]
    return "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns)


def card_row(card: dict[str, Any]) -> str:
    """The card as one row of the leaderboard.

    Each rule set's mean regret (win-% points per decision) and its luck-adjusted result against perfect play (the raw
    one when its interval is the narrower).
    """
    names = list(card["rule_sets"])
    regrets, results = [], []
    for name in names:
        entry = card["rule_sets"][name]
        if "skipped" in entry:
            regrets.append("-")
            results.append("-")
            continue
        regrets.append(f"{entry['regret']:.4f}")
        vs = entry["vs_perfect"]
        if vs["raw_is_narrower"]:
            raw = vs["raw"]
            results.append(f"{raw['rate']:.1%} [{raw['low95']:.1%}, {raw['high95']:.1%}] raw")
        else:
            adjusted = vs["luck_adjusted"]
            results.append(f"{adjusted['shown_mean']:.1%} [{adjusted['shown_low']:.1%}, {adjusted['shown_high']:.1%}]")
    return "| " + " | ".join([f"`{card['agent']}`", *regrets, *results]) + " |"
