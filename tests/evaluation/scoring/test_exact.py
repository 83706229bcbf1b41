"""Exact evaluation, checked against an independent computation.

The plain computation here shares nothing with :mod:`urgym.solver.policy` but the position index: it asks the agents
one position at a time through ``select_move`` (not the batches of ``select_moves``), follows the game with
:class:`urgym.Position` (not the solver's successor graphs), and solves the policies' linear equations with a Krylov
method, BiCGSTAB, checked by substituting the solution (not sweeps); the best response comes from policy iteration
over such solves (not value iteration).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse
import scipy.sparse.linalg
from urgym.agents import make_agent
from urgym.evaluation.scoring.exact import agent_policy, exact_match, exploitability
from urgym.evaluation.scoring.match import play_match
from urgym.evaluation.scoring.runner import RunOptions
from urgym.solver import PositionIndex, load_or_solve
from urgym.solver.policy import evaluate_policies

from urgym import get_rules

RULES = get_rules("finkel", 2)


class PlainGame:
    """Every position of a small rule set with its rolls and, per roll, each legal move's outcome."""

    def __init__(self, rules):
        self.rules = rules
        self.index = PositionIndex(rules)
        self.positions = [self._position(i) for i in range(self.index.size)]
        self.outcomes = {}  # (i, roll) -> [(move, j, kind)] with kind "won", "again" or "passes"
        for i, position in enumerate(self.positions):
            if position is None or position.is_over:
                continue
            for roll, _ in position.chance_outcomes():
                legal = position.legal_moves(roll) or (None,)
                rows = []
                for move in legal:
                    after = position.play(roll, move)
                    kind = "won" if after.is_over else "again" if after.turn == position.turn else "passes"
                    rows.append((move, None if kind == "won" else self.index.rank(after), kind))
                self.outcomes[i, roll] = rows

    def _position(self, i):
        """Position i, or None where the index holds an impossible one (both sides have scored everything)."""
        try:
            return self.index.unrank(i)
        except ValueError:
            return None

    def moves_of(self, agent):
        """The agent's move per (position, roll) with a choice, asked one decision at a time."""
        return {
            (i, roll): agent.select_move(self.positions[i], roll)
            for (i, roll), rows in self.outcomes.items()
            if len(rows) > 1
        }

    def solve(self, moves_a, moves_b):
        """The exact values (a, b) of two fixed policies: one sparse linear solve of their 2N equations."""
        n = self.index.size
        rows, cols, data, rhs = [], [], [], np.zeros(2 * n)
        for i, position in enumerate(self.positions):
            for side, moves in ((0, moves_a), (1, moves_b)):
                row = side * n + i
                rows.append(row), cols.append(row), data.append(1.0)
                if position is None:  # never reached: 0, as the solver's terminal layers have it
                    continue
                if position.is_over:  # seen by the side to move: it has won only if it scored everything
                    rhs[row] = 1.0 if position.winner == position.turn else 0.0
                    continue
                for roll, p in position.chance_outcomes():
                    options = self.outcomes[i, roll]
                    move = moves.get((i, roll), options[0][0])
                    _, j, kind = next(o for o in options if o[0] == move)
                    if kind == "won":
                        rhs[row] += p
                    elif kind == "again":
                        rows.append(row), cols.append(side * n + j), data.append(-p)
                    else:  # the other side moves next: W = 1 - its value
                        rhs[row] += p
                        rows.append(row), cols.append((1 - side) * n + j), data.append(p)
        matrix = scipy.sparse.csr_matrix((data, (rows, cols)), shape=(2 * n, 2 * n))
        values, failed = scipy.sparse.linalg.bicgstab(matrix, rhs, rtol=1e-15, atol=0.0, maxiter=100_000)
        assert failed == 0 and np.abs(matrix @ values - rhs).max() < 1e-12  # solved, checked by substitution
        return values[:n], values[n:]

    def best_response(self, moves_a, moves_b):
        """Policy iteration: B's moves improved against A until none gains; the values at the end."""
        moves_b = dict(moves_b)
        while True:
            a, b = self.solve(moves_a, moves_b)
            changed = False
            for (i, roll), options in self.outcomes.items():
                if len(options) < 2:
                    continue
                worth = {m: 1.0 if k == "won" else b[j] if k == "again" else 1.0 - a[j] for m, j, k in options}
                best = max(worth, key=worth.get)
                if worth[best] > worth[moves_b[i, roll]] + 1e-12:
                    moves_b[i, roll] = best
                    changed = True
            if not changed:
                return a, b


@pytest.fixture(scope="module")
def plain():
    load_or_solve(RULES, progress=False)
    game = PlainGame(RULES)
    game.perfect = game.moves_of(make_agent("perfect"))
    return game


def start_rates(index, a, b):
    i = index.rank(__import__("urgym").Position.start(RULES))
    return a[i], 1.0 - b[i]


@pytest.mark.parametrize("agent", ["greedy", "heuristic", "expectimax:2", "first"])
def test_agent_against_perfect_equals_the_linear_solve(plain, agent):
    ours = exact_match(agent, "perfect", RULES, progress=False)
    a, b = plain.solve(plain.moves_of(make_agent(agent)), plain.perfect)
    light, dark = start_rates(plain.index, a, b)
    assert ours.win_rate_light == pytest.approx(100 * light, abs=1e-8)
    assert ours.win_rate_dark == pytest.approx(100 * dark, abs=1e-8)
    assert ours.win_rate == pytest.approx(50 * (light + dark), abs=1e-8)


@pytest.mark.parametrize("agent", ["greedy", "last", "perfect"])
def test_best_response_equals_policy_iteration(plain, agent):
    ours = exploitability(agent, RULES, progress=False)
    moves_a = plain.moves_of(make_agent(agent))
    a, b = plain.best_response(moves_a, plain.perfect)
    light, dark = start_rates(plain.index, a, b)
    assert ours["vs_best_response"]["win_rate"] == pytest.approx(50 * (light + dark), abs=1e-8)
    assert ours["exploitability_points"] >= -1e-8  # no agent does better than the game's value
    if agent == "perfect":
        assert ours["exploitability_points"] == pytest.approx(0.0, abs=1e-8)
    else:
        assert ours["exploitability_points"] > 1.0


def test_perfect_against_perfect_is_the_solved_start_value():
    table = load_or_solve(RULES, progress=False)
    result = exact_match("perfect", "perfect", RULES, progress=False)
    start = table.win_probability(__import__("urgym").Position.start(RULES), "light")
    assert result.win_rate_light == pytest.approx(100 * start, abs=1e-8)
    assert result.win_rate == pytest.approx(50.0, abs=1e-8)


def test_a_long_sampled_match_agrees_with_the_exact_figure():
    """20,000 sampled games against the exact figure: within the raw 95% interval, per side and over both."""
    table = load_or_solve(RULES, progress=False)
    exact = exact_match("greedy", "perfect", RULES, progress=False)
    match = play_match("greedy", "perfect", RULES, 20_000, 5, table, RunOptions(workers=1, progress=False))
    side = match.agents[0]
    for sampled, figure in ((side.wins, exact.win_rate), (side.as_light, exact.win_rate_light)):
        low, high = sampled.interval
        assert low <= figure / 100 <= high, (sampled, figure)
    adjusted = side.luck_adjusted  # the luck-adjusted estimate is far tighter: within two of its half-widths
    assert abs(adjusted.mean - exact.win_rate / 100) < adjusted.high - adjusted.low, (adjusted, exact.win_rate)


def test_a_policy_is_one_legal_move_per_decision():
    choices, asked = agent_policy("greedy", RULES, progress=False)
    index = PositionIndex(RULES)
    assert choices.shape == (index.size * 5,) and choices.dtype == np.uint8 and 0 < asked < len(choices)
    with pytest.raises(ValueError, match=r"policy A must be uint8\[65560\]"):
        evaluate_policies(RULES, choices[:-1], None, progress=False)


def test_evaluate_exact_prints_and_writes_the_exact_figures(tmp_path, capsys):
    import json

    from urgym.commands.evaluate import main as evaluate_main

    out = tmp_path / "exact.json"
    argv = ["--agent", "greedy", "--exact", "--best-response", "--pieces", "2", "--no-progress", "--json", str(out)]
    assert evaluate_main(argv) == 0
    data = json.loads(out.read_text())["exact"]
    expected = exact_match("greedy", "perfect", RULES, progress=False)
    assert data["win_rate"] == pytest.approx(expected.win_rate, abs=1e-9)
    assert data["win_rate_light"] == pytest.approx(expected.win_rate_light, abs=1e-9)
    exploit = exploitability("greedy", RULES, progress=False)
    assert data["exploitability_points"] == pytest.approx(exploit["exploitability_points"], abs=1e-9)
    assert data["best_response_win_rate"] == pytest.approx(50 + exploit["exploitability_points"], abs=1e-9)
    printed = capsys.readouterr().out
    assert f"wins {expected.win_rate:.3f}%" in printed and "exploitability" in printed


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--best-response"], "--best-response goes with --exact"),
        (["--exact", "--no-table"], "--no-table does not go with --exact"),
        (["--exact", "--plot", "x.png"], "--plot does not go with --exact"),
    ],
)
def test_evaluate_exact_refuses_what_it_cannot_do(extra, message, capsys):
    from urgym.commands.evaluate import main as evaluate_main

    with pytest.raises(SystemExit):
        evaluate_main(["--agent", "greedy", "--pieces", "2", *extra])
    assert message in capsys.readouterr().err
