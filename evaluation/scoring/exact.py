"""Exact evaluation: an agent's exact result against perfect play or another agent, and its exploitability.

Ur is solved, so a match between agents whose moves can be asked for every position need not be sampled: it is a
policy evaluation over the solved rule set (:mod:`urgym.solver.policy`). :func:`agent_policy` asks an agent its move
in every decision of a rule set, in large batches through ``select_moves``; :func:`exact_match` gives the two agents'
exact winning chances; :func:`exploitability` the winning chance of the agent's best response (the perfect adversary
that knows its policy) and how many win-% points that takes beyond the game's value.

An agent that randomizes is asked once per decision, with a random stream fixed by the decision and ``seed``: its
exact figures are those of that one deterministic policy (the result says so with ``deterministic: False``).

Win rates are in percent, averaged over the two sides (and given for each); exploitability is in win-% points.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from urgym.agents import Agent, make_agent
from urgym.solver import PositionIndex
from urgym.solver.policy import PolicyValues, decision_states, evaluate_policies, legal_move_lists

from urgym import Rules, core, get_rules
from urgym.batch import Decisions, check_choices
from urgym.progress import progress_bar

__all__ = ["ExactResult", "agent_policy", "exact_match", "exact_results", "exploitability"]

BATCH = 65_536
"""Decisions asked of an agent at once."""
_RANDOM_AGENTS = ("random",)


@dataclass(frozen=True)
class ExactResult:
    """Exact figures of agent A against B (a fixed policy or A's best response), in percent."""

    agent: str
    opponent: str
    rules: str
    win_rate: float
    """A's winning chance, the mean of its chances as light and as dark."""
    win_rate_light: float
    win_rate_dark: float
    decisions: int
    """Decisions with a choice asked of the agents."""
    deterministic: bool
    """False where an agent randomizes: the figures are those of one draw of its moves per decision."""
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """The result as plain JSON."""
        return asdict(self)


def agent_policy(
    agent: str | Agent, rules: Rules | str, seed: int = 0, progress: bool = True
) -> tuple[np.ndarray, int]:
    """The move ``agent`` plays in every decision of ``rules``, and how many decisions had a choice (those asked).

    The moves come as :func:`urgym.solver.policy.evaluate_policies` takes them: ``uint8[positions * rolls]``, each
    the move's place among the legal moves.

    Raises:
        ValueError: If the agent cannot play the rules or answers an illegal move (naming the decision).
    """
    rules = get_rules(rules)
    built = make_agent(agent, seed=seed)
    built.check_rules(rules)
    if hasattr(built, "prepare"):
        built.prepare(rules)
    index = PositionIndex(rules)
    n_rolls = int(core.geometry(rules)[0]["n_rolls"])
    choices = np.zeros(index.size * n_rolls, dtype=np.uint8)
    asked = 0
    bar = progress_bar(index.size, f"policy of {built.spec}", progress, unit="pos", unit_scale=True)
    try:
        for pair, (start, end) in zip(index.pairs, index.pair_ranges, strict=True):
            if index.pieces in pair:  # the game is over there: no decision
                bar.update(end - start)
                continue
            states = decision_states(index, start, end)
            rolls, moves, counts = legal_move_lists(states, rules)
            rows = np.flatnonzero(counts > 1)
            row_states = np.repeat(states, n_rolls)
            for lo in range(0, len(rows), BATCH):
                chunk = rows[lo : lo + BATCH]
                decisions = Decisions(
                    row_states[chunk],
                    rolls[chunk],
                    moves[chunk],
                    counts[chunk],
                    _streams(seed, start * n_rolls + chunk),
                )
                chosen = check_choices(decisions, built.select_moves(rules, decisions), built.spec, rules)
                choices[start * n_rolls + chunk] = (moves[chunk] == chosen[:, None]).argmax(axis=1)
                asked += len(chunk)
            bar.update(end - start)
    finally:
        bar.close()
    return choices, asked


def _streams(seed: int, rows: np.ndarray) -> np.ndarray:
    """A random stream per decision, fixed by ``seed`` and the decision (splitmix64 of both)."""
    z = (rows.astype(np.uint64) + np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15)) * np.uint64(0xBF58476D1CE4E5B9)
    z ^= z >> np.uint64(31)
    return np.ascontiguousarray(z.reshape(-1, 1))


def exact_match(
    agent: str | Agent, opponent: str | Agent, rules: Rules | str, seed: int = 0, progress: bool = True
) -> ExactResult:
    """The exact result of ``agent`` against ``opponent`` (``"perfect"`` for perfect play), sides averaged."""
    return exact_results(agent, opponent, rules, seed, progress)[0]


def exploitability(agent: str | Agent, rules: Rules | str, seed: int = 0, progress: bool = True) -> dict[str, Any]:
    """How much a perfect adversary that knows ``agent``'s policy takes from it.

    Returns the agent's exact result against its best response (``vs_best_response``, an :class:`ExactResult` as a
    dict), the best response's winning chance (``best_response_win_rate``, percent) and the exploitability: that
    chance minus the game's value, 50% when the sides are averaged (``exploitability_points``). A perfect agent's is
    0; no agent's is below it.
    """
    return exact_results(agent, None, rules, seed, progress, best_response=True)[1]


def exact_results(
    agent: str | Agent,
    opponent: str | Agent | None,
    rules: Rules | str,
    seed: int = 0,
    progress: bool = True,
    best_response: bool = False,
) -> tuple[ExactResult | None, dict[str, Any] | None]:
    """:func:`exact_match` against ``opponent`` (None: none) and, with ``best_response``, :func:`exploitability`.

    The agent is asked its moves once for both.
    """
    rules = get_rules(rules)
    a, asked = agent_policy(agent, rules, seed, progress)
    match = exploit = None
    if opponent is not None:
        b, asked_b = agent_policy(opponent, rules, seed + 1, progress)
        match = _result(agent, opponent, rules, evaluate_policies(rules, a, b, progress=progress), asked + asked_b)
    if best_response:
        versus = _result(agent, "best response", rules, evaluate_policies(rules, a, None, progress=progress), asked)
        best = 100.0 - versus.win_rate
        exploit = {
            "vs_best_response": versus.to_dict(),
            "best_response_win_rate": best,
            "exploitability_points": best - 50.0,
        }
    return match, exploit


def _result(agent: Any, opponent: Any, rules: Rules, values: PolicyValues, decisions: int) -> ExactResult:
    light, dark = values.start()
    names = [a.spec if isinstance(a, Agent) else str(a) for a in (agent, opponent)]
    return ExactResult(
        names[0],
        names[1],
        rules.describe(),
        100.0 * (light + dark) / 2,
        100.0 * light,
        100.0 * dark,
        decisions,
        not any(n.split(":")[0] in _RANDOM_AGENTS for n in names),
        values.seconds,
    )
