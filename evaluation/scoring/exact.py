"""Exact evaluation: an agent's exact result against perfect play or another agent, and its exploitability.

Ur is solved, so a match between agents whose moves can be asked for every position need not be sampled: it is a
policy evaluation over the solved rule set (:mod:`urgym.solver.policy`). The agents' policies come from
:mod:`urgym.evaluation.scoring.policies` (asked in batches, cached, resumable); :func:`exact_match` gives two
agents' exact winning chances; :func:`exploitability` the winning chance of an agent's best response (the perfect
adversary that knows its policy) and how many win-% points that takes beyond the game's value; :func:`worst_decisions`
where an agent loses most, weighted by how often its games reach there, as records ``review`` reads.

Win rates are in percent, averaged over the two sides (and given for each); exploitability and losses are in
win-% points.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from urgym.agents import Agent
from urgym.evaluation.scoring.policies import AgentPolicy, agent_policy
from urgym.solver import PositionIndex, table_for
from urgym.solver.policy import PolicyValues, evaluate_policies, policy_losses

from urgym import Position, Rules, core, get_rules
from urgym.checks import integer
from urgym.records import GameRecord, GameStep
from urgym.threads import keep_torch_threads

__all__ = [
    "ExactReport",
    "ExactResult",
    "ExactTournament",
    "WorstDecision",
    "exact_match",
    "exact_results",
    "exact_tournament",
    "exploitability",
    "perfect_values",
    "save_worst",
    "worst_decisions",
]


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
    """Decisions with a choice asked of the agents (0 for a policy read from the cache)."""
    exact_policies: bool
    """False where an agent randomizes without giving its distribution: its figures are those of one draw of its
    move per decision."""
    seconds: float
    """Seconds of the policy evaluation (asking the agents not included)."""

    def to_dict(self) -> dict[str, Any]:
        """The result as plain JSON."""
        return asdict(self)


@dataclass(frozen=True)
class WorstDecision:
    """A position where the agent loses much, weighted by how often its games reach it."""

    position: Position
    reach: float
    """Expected visits with the agent to move, per game (half played as light, half as dark)."""
    loss: float
    """Win-% points per game the agent's moves here give away: reach times the roll-averaged regret."""
    rolls: tuple[tuple[int, float, int, int, float], ...]
    """Per roll where it errs: (roll, chance of the roll, the agent's most likely move, the best move, its regret
    in win-% points)."""

    def to_dict(self) -> dict[str, Any]:
        """As plain JSON (the position by its code and in words)."""
        return {
            "position": self.position.code,
            "board": str(self.position),
            "reach": self.reach,
            "loss_points": self.loss,
            "rolls": [
                {"roll": r, "chance": p, "move": m, "best": b, "regret_points": g} for r, p, m, b, g in self.rolls
            ],
        }


class ExactReport(NamedTuple):
    """Everything ``evaluate --exact`` computes."""

    match: ExactResult | None
    exploitability: dict[str, Any] | None
    worst: tuple[WorstDecision, ...]


def exact_match(
    agent: str | Agent, opponent: str | Agent, rules: Rules | str, seed: int = 0, progress: bool = True
) -> ExactResult:
    """The exact result of ``agent`` against ``opponent`` (``"perfect"`` for perfect play), sides averaged."""
    return exact_results(agent, opponent, rules, seed, progress).match


def exploitability(agent: str | Agent, rules: Rules | str, seed: int = 0, progress: bool = True) -> dict[str, Any]:
    """How much a perfect adversary that knows ``agent``'s policy takes from it.

    Returns the agent's exact result against its best response (``vs_best_response``, an :class:`ExactResult` as a
    dict), the best response's winning chance (``best_response_win_rate``, percent) and the exploitability: that
    chance minus the game's value, 50% when the sides are averaged (``exploitability_points``). A perfect agent's is
    0; no agent's is below it.
    """
    return exact_results(agent, None, rules, seed, progress, best_response=True).exploitability


def exact_results(
    agent: str | Agent,
    opponent: str | Agent | None,
    rules: Rules | str,
    seed: int = 0,
    progress: bool = True,
    best_response: bool = False,
    worst: int = 0,
    cache: bool = True,
) -> ExactReport:
    """Everything ``evaluate --exact`` computes, each agent asked its moves once.

    :func:`exact_match` against ``opponent`` (None: none), :func:`exploitability` with ``best_response``, and the
    ``worst`` decisions of :func:`worst_decisions` against the opponent.

    ``cache`` reads and writes the agents' policies in urgym's cache (see :mod:`~urgym.evaluation.scoring.policies`).
    Torch's thread count is left as it was (:func:`urgym.threads.keep_torch_threads`): an exact evaluation inside a
    training process does not slow its learner.
    """
    integer(worst, "worst", 0)
    integer(seed, "seed", 0, 2**64 - 2, "from 0 to 2**64 - 2 (the opponent plays seed + 1)")
    with keep_torch_threads():
        return _exact_results(agent, opponent, get_rules(rules), seed, progress, best_response, worst, cache)


def _exact_results(agent, opponent, rules, seed, progress, best_response, worst, cache) -> ExactReport:
    a = agent_policy(agent, rules, seed, progress, cache)
    b = agent_policy(opponent, rules, seed + 1, progress, cache) if opponent is not None else None
    match = exploit = values = None
    found: tuple[WorstDecision, ...] = ()
    if b is not None:
        start = perfect_values(rules, progress) if b.spec == "perfect" else None
        values = evaluate_policies(rules, a.policy, b.policy, progress=progress, initial=start)
        match = _result(a, b, values)
        if worst:
            found = worst_decisions(a, b, worst, progress)
    if best_response:  # from the match's values, or perfect play's: the same fixed point in fewer sweeps
        start = values if values is not None else perfect_values(rules, progress)
        versus = _result(a, None, evaluate_policies(rules, a.policy, None, progress=progress, initial=start))
        best = 100.0 - versus.win_rate
        exploit = {
            "vs_best_response": versus.to_dict(),
            "best_response_win_rate": best,
            "exploitability_points": best - 50.0,
        }
    return ExactReport(match, exploit, found)


def perfect_values(rules: Rules, progress: bool = False) -> PolicyValues:
    """Perfect play's values on both sides: where a match against perfect play starts its sweeps.

    The match ends near them (they differ by what A's mistakes cost), in about a tenth fewer sweeps than from zeros.
    """
    table = table_for(rules, progress=progress)
    values = table.probabilities()
    return PolicyValues(rules, values, values, PositionIndex(rules), 0, 0.0)  # evaluate_policies copies each


def _result(a: AgentPolicy, b: AgentPolicy | None, values: PolicyValues) -> ExactResult:
    light, dark = values.start()
    return ExactResult(
        a.spec,
        b.spec if b is not None else "best response",
        a.rules.describe(),
        100.0 * (light + dark) / 2,
        100.0 * light,
        100.0 * dark,
        a.asked + (b.asked if b is not None else 0),
        a.exact and (b is None or b.exact),
        values.seconds,
    )


def worst_decisions(a: AgentPolicy, b: AgentPolicy, count: int, progress: bool = True) -> tuple[WorstDecision, ...]:
    """The ``count`` positions where A's moves give away the most winning chance as A plays B, weighted by reach.

    The regrets are measured against perfect play (the solved table, solved first if missing); against a perfect B
    the losses of every position add up to 50% minus A's exact win rate.
    """
    integer(count, "count", 0)
    table = table_for(a.rules, progress=progress)
    losses = policy_losses(a.rules, a.policy, b.policy, table.probabilities(), progress)
    order = np.argsort(-losses.loss, kind="stable")[:count]
    return tuple(_worst(losses.index.unrank(int(i)), losses, int(i), a, table) for i in order if losses.loss[i] > 0)


def _worst(position: Position, losses: Any, i: int, a: AgentPolicy, table: Any) -> WorstDecision:
    dice, probabilities = core.chance_outcomes(position.rules)  # the policy's rows: one per roll of these
    rolls = []
    for k, (roll, chance) in enumerate(zip(dice.tolist(), probabilities.tolist(), strict=True)):
        legal = position.legal_moves(roll)
        if len(legal) < 2:
            continue
        values = table.move_values(position, roll)
        row = i * len(dice) + k
        chances = a.policy.chances(row, len(legal))
        played = sum(c * values[m] for c, m in zip(chances, legal, strict=True))
        regret = 100.0 * (max(values.values()) - played)
        if regret > 1e-12:
            best = max(values, key=lambda m: (values[m], -m))
            rolls.append((roll, chance, legal[int(np.argmax(chances))], best, float(regret)))
    return WorstDecision(position, float(losses.reach[0, i]), 100.0 * float(losses.loss[i]), tuple(rolls))


def save_worst(worst: tuple[WorstDecision, ...], agent: str, folder: str | os.PathLike) -> list[Path]:
    """Write each worst decision's rolls as records ``review`` reads: one record per roll where the agent errs.

    Each record (``game-000001.json``, ...) begins at the position (its ``start``), holds the roll and the agent's
    most likely move, numbers the decision's rank as its ``game``, and names the agent on the side to move and
    ``perfect`` on the other. Returns the files written.
    """
    folder = Path(folder)
    written: list[Path] = []
    for rank, decision in enumerate(worst, 1):
        position = decision.position
        for roll, _, move, _, _ in decision.rolls:
            other = "dark" if position.turn == "light" else "light"
            record = GameRecord(
                position.rules,
                (GameStep(position.turn, roll, move),),
                {position.turn: agent, other: "perfect"},
                game=rank,
                start=position.code,
            )
            written.append(record.save(folder / f"game-{len(written) + 1:06d}.json"))
    return written


@dataclass(frozen=True)
class ExactTournament:
    """Every pair of agents' exact head-to-head result.

    ``win_rate[i][j]`` is agent i's against agent j (percent, sides averaged; the diagonal is 50).
    """

    agents: tuple[str, ...]
    rules: str
    win_rate: tuple[tuple[float, ...], ...]
    exact_policies: bool
    seconds: float

    def mean(self, i: int) -> float:
        """Agent i's mean win rate against the others."""
        others = [w for j, w in enumerate(self.win_rate[i]) if j != i]
        return sum(others) / len(others)

    def to_dict(self) -> dict[str, Any]:
        """As plain JSON."""
        return {**asdict(self), "mean_win_rate": [self.mean(i) for i in range(len(self.agents))]}


def exact_tournament(
    agents: list[str | Agent], rules: Rules | str, seed: int = 0, progress: bool = True, cache: bool = True
) -> ExactTournament:
    """Every pair of ``agents`` evaluated exactly (each agent asked its policy once): no games, no dice noise."""
    rules = get_rules(rules)
    policies = [agent_policy(agent, rules, seed + k, progress, cache) for k, agent in enumerate(agents)]
    n = len(policies)
    table = [[50.0] * n for _ in range(n)]
    seconds = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            values = evaluate_policies(rules, policies[i].policy, policies[j].policy, progress=progress)
            result = _result(policies[i], policies[j], values)
            table[i][j], table[j][i] = result.win_rate, 100.0 - result.win_rate
            seconds += result.seconds
    return ExactTournament(
        tuple(p.spec for p in policies),
        rules.describe(),
        tuple(tuple(row) for row in table),
        all(p.exact for p in policies),
        seconds,
    )
