"""Exact evaluation, checked against an independent computation.

The plain computation here shares nothing with :mod:`urgym.solver.policy` but the position index: it asks the agents
one position at a time through ``select_move`` (not the batches of ``select_moves``), follows the game with
:class:`urgym.Position` (not the solver's successor graphs), and solves the policies' linear equations with a Krylov
method, BiCGSTAB, checked by substituting the solution (not sweeps); the best response comes from policy iteration
over such solves (not value iteration).
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
import scipy.sparse
from urgym.agents import Agent, make_agent
from urgym.evaluation.scoring.exact import exact_match, exact_results, exploitability, perfect_values
from urgym.evaluation.scoring.match import play_match
from urgym.evaluation.scoring.policies import agent_policy
from urgym.evaluation.scoring.runner import RunOptions
from urgym.solver import PositionIndex, load_or_solve
from urgym.solver.policy import (
    BestMoves,
    Policy,
    _move_chances,
    best_moves,
    decision_states,
    evaluate_policies,
    policy_losses,
)

from tests.solver.independent import solve_linear
from urgym import Position, core, get_rules
from urgym.batch import every_roll
from urgym.records import GameRecord

RULES = get_rules("finkel", 2)


class PlainGame:
    """Every position of a small rule set with its rolls and, per roll, each legal move's outcome."""

    def __init__(self, rules):
        self.rules = rules
        self.index = PositionIndex(rules)
        self.positions = [self._position(i) for i in range(self.index.size)]
        self.outcomes = {}  # (i, roll) -> [(move, j, kind)] with kind "won", "again" or "passes"
        geometry = core.geometry(rules)
        for i, position in enumerate(self.positions):
            if position is None or position.is_over:
                continue
            for roll, _ in position.chance_outcomes():
                legal = position.legal_moves(roll)
                rows = []
                for move in legal or (None,):  # a move through the core's own: Position.play would list them again
                    if move is None:
                        after = position.play(roll, None)
                    else:
                        after = Position(rules, int(core.apply_move(position.code, roll, move, geometry)[0]))
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
                for roll, chance in position.chance_outcomes():
                    options = self.outcomes[i, roll]
                    played = moves.get((i, roll), options[0][0])
                    for move, weight in played.items() if isinstance(played, dict) else [(played, 1.0)]:
                        _, j, kind = next(o for o in options if o[0] == move)
                        p = chance * weight
                        if kind == "won":
                            rhs[row] += p
                        elif kind == "again":
                            rows.append(row), cols.append(side * n + j), data.append(-p)
                        else:  # the other side moves next: W = 1 - its value
                            rhs[row] += p
                            rows.append(row), cols.append((1 - side) * n + j), data.append(p)
        matrix = scipy.sparse.csr_matrix((data, (rows, cols)), shape=(2 * n, 2 * n))
        values = solve_linear(matrix, rhs)
        return values[:n], values[n:]

    def distribution_of(self, chances):
        """A randomizing policy: ``chances(position, roll, legal)`` gives each legal move's chance, per decision."""
        return {
            (i, roll): dict(zip(legal, chances(self.positions[i], roll, legal), strict=True))
            for (i, roll), rows in self.outcomes.items()
            if len(rows) > 1
            for legal in [[m for m, _, _ in rows]]
        }

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


def test_a_path_that_visits_tiles_twice_is_evaluated_exactly_too():
    """Skiriuk 2 (69,819 positions, its own index): greedy against perfect play, against the plain linear solve."""
    rules = get_rules("skiriuk", 2)
    load_or_solve(rules, progress=False)
    game = PlainGame(rules)
    a, b = game.solve(game.moves_of(make_agent("greedy")), game.moves_of(make_agent("perfect")))
    i = game.index.rank(Position.start(rules))
    ours = exact_match("greedy", "perfect", rules, progress=False)
    assert ours.win_rate_light == pytest.approx(100 * a[i], abs=1e-8)
    assert ours.win_rate_dark == pytest.approx(100 * (1.0 - b[i]), abs=1e-8)


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


@pytest.mark.parametrize(
    ("agent", "chances"),
    [
        ("random", lambda plain: lambda position, roll, legal: [1 / len(legal)] * len(legal)),
        ("perfect:epsilon=0.3", lambda plain: _slip(plain, 0.3)),
    ],
    ids=["random", "slip-0.3"],
)
def test_the_best_response_to_a_randomizing_agent_equals_policy_iteration(plain, agent, chances):
    ours = exploitability(agent, RULES, progress=False)
    a, b = plain.best_response(plain.distribution_of(chances(plain)), plain.perfect)
    light, dark = start_rates(plain.index, a, b)
    assert ours["vs_best_response"]["win_rate"] == pytest.approx(50 * (light + dark), abs=1e-8)
    assert ours["exploitability_points"] > 1.0


@pytest.mark.parametrize("agent", ["greedy", "random"])
def test_held_best_response_sweeps_reach_the_value_iteration_values(agent, monkeypatch):
    """Sweeps that hold B's moves between those that choose them end where choosing every sweep ends (finkel 3)."""
    import urgym.solver.policy as solver_policy

    rules = get_rules("finkel", 3)
    load_or_solve(rules, progress=False)
    policy = agent_policy(agent, rules, progress=False, cache=False).policy
    held = evaluate_policies(rules, policy, None, progress=False)
    monkeypatch.setattr(solver_policy, "POLICY_SWEEPS", 0)  # value iteration: every sweep takes the best move
    chosen = evaluate_policies(rules, policy, None, progress=False)
    np.testing.assert_allclose(held.a, chosen.a, rtol=0, atol=1e-10)
    np.testing.assert_allclose(held.b, chosen.b, rtol=0, atol=1e-10)


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
    policy = agent_policy("greedy", RULES, progress=False, cache=False)
    choices, index = policy.policy.choices, PositionIndex(RULES)
    assert choices.shape == (index.size * 5,) and choices.dtype == np.uint8 and 0 < policy.asked < len(choices)
    assert policy.exact and policy.policy.deterministic
    with pytest.raises(ValueError, match=r"policy A must choose with uint8\[65560\]"):
        evaluate_policies(RULES, choices[:-1], None, progress=False)


def _as_dense(policy):
    """The same deterministic policy written as a distribution over the legal moves (the general sweep reads it)."""
    from urgym.solver.policy import Policy

    dense = np.zeros((len(policy.choices), core.MAX_MOVES))
    dense[np.arange(len(policy.choices)), policy.choices] = 1.0
    return Policy(policy.choices, policy.keep, dense)


def _perfect_choices(rules):
    """Perfect play's moves listed for every decision (what :class:`BestMoves` reads off each graph instead)."""
    return best_moves(PositionIndex(rules), load_or_solve(rules, progress=False).probabilities())


@pytest.mark.parametrize("opponent", ["perfect", None])
def test_the_chosen_edge_sweeps_equal_the_general_sweep(opponent):
    """A deterministic policy is swept from its chosen edges alone; written as a distribution it takes every edge."""
    greedy = agent_policy("greedy", RULES, progress=False, cache=False).policy
    other = None if opponent is None else Policy.fixed(_perfect_choices(RULES))
    fast = evaluate_policies(RULES, greedy, other, progress=False)
    general = evaluate_policies(RULES, _as_dense(greedy), None if other is None else _as_dense(other), progress=False)
    assert not _as_dense(greedy).deterministic
    np.testing.assert_allclose(fast.a, general.a, rtol=0, atol=1e-11)
    np.testing.assert_allclose(fast.b, general.b, rtol=0, atol=1e-11)


def test_perfect_play_is_its_tables_best_moves_neither_asked_nor_cached(tmp_path):
    perfect = agent_policy("perfect", RULES, progress=False, directory=tmp_path)
    assert isinstance(perfect.policy, BestMoves) and perfect.exact and perfect.asked == 0 and perfect.cached is None
    assert list(tmp_path.iterdir()) == []
    assert np.array_equal(perfect.policy.values, load_or_solve(RULES, progress=False).probabilities())
    slips = agent_policy("perfect:epsilon=0.1", RULES, progress=False, cache=False)
    assert isinstance(slips.policy, Policy) and slips.asked > 0  # slips are a distribution, asked as any other


@pytest.mark.parametrize("rules", [RULES, get_rules("blitz", 2), get_rules("finkel", 3)])
def test_best_moves_read_off_each_graph_equal_the_listed_moves_on_either_side(rules):
    """The sweeps and the forward run read :class:`BestMoves` off the graph they hold: the listed moves' figures."""
    values = load_or_solve(rules, progress=False).probabilities()
    listed, read = Policy.fixed(_perfect_choices(rules)), BestMoves(values)
    greedy = agent_policy("greedy", rules, progress=False, cache=False).policy
    for a, b in ((greedy, listed), (listed, greedy), (listed, None)):
        expected = evaluate_policies(rules, a, b, progress=False)
        got = evaluate_policies(rules, read if a is listed else a, read if b is listed else b, progress=False)
        assert np.array_equal(got.a, expected.a) and np.array_equal(got.b, expected.b)
        assert got.sweeps == expected.sweeps
    expected = policy_losses(rules, greedy, listed, values, progress=False)
    got = policy_losses(rules, greedy, read, values, progress=False)
    assert np.array_equal(got.reach, expected.reach) and np.array_equal(got.loss, expected.loss)
    perfect_side = policy_losses(rules, read, greedy, values, progress=False)
    assert np.array_equal(perfect_side.loss, np.zeros_like(perfect_side.loss))  # perfect moves give nothing away
    assert perfect_side.reach.sum() > 1


def test_best_moves_of_values_that_do_not_fit_the_rules_are_refused():
    greedy = agent_policy("greedy", RULES, progress=False, cache=False).policy
    size = PositionIndex(RULES).size
    with pytest.raises(ValueError, match=rf"policy B's values must be float64\[{size}\] \(one per position\)"):
        evaluate_policies(RULES, greedy, BestMoves(np.zeros(size - 1)), progress=False)
    with pytest.raises(ValueError, match=r"policy A's values must be float64"):
        policy_losses(RULES, BestMoves(np.zeros(size, np.float32)), greedy, np.zeros(size), progress=False)
    holed = np.zeros(size)
    holed[7] = np.nan
    with pytest.raises(ValueError, match=r"policy B's values must be finite, got nan at position 7"):
        evaluate_policies(RULES, greedy, BestMoves(holed), progress=False)
    with pytest.raises(ValueError, match=r"policy B's tie must be a finite number >= 0, got nan"):
        evaluate_policies(RULES, greedy, BestMoves(np.zeros(size), float("nan")), progress=False)


def test_a_best_response_started_from_the_match_reaches_the_same_values_sooner():
    greedy = agent_policy("greedy", RULES, progress=False, cache=False).policy
    perfect = agent_policy("perfect", RULES, progress=False, cache=False).policy
    match = evaluate_policies(RULES, greedy, perfect, progress=False)
    cold = evaluate_policies(RULES, greedy, None, progress=False)
    warm = evaluate_policies(RULES, greedy, None, progress=False, initial=match)
    np.testing.assert_allclose(warm.a, cold.a, rtol=0, atol=1e-11)
    np.testing.assert_allclose(warm.b, cold.b, rtol=0, atol=1e-11)
    assert warm.sweeps < cold.sweeps
    three = match._replace(rules=get_rules("finkel", 3))
    with pytest.raises(ValueError, match=r"initial values are of finkel: .*3 pieces.*, not of finkel: .*2 pieces"):
        evaluate_policies(RULES, greedy, None, progress=False, initial=three)


def test_a_match_against_perfect_play_started_from_its_values_reaches_the_same_values_sooner():
    rules = get_rules("finkel", 3)
    load_or_solve(rules, progress=False)
    greedy = agent_policy("greedy", rules, progress=False, cache=False).policy
    perfect = agent_policy("perfect", rules, progress=False, cache=False).policy
    cold = evaluate_policies(rules, greedy, perfect, progress=False)
    warm = evaluate_policies(rules, greedy, perfect, progress=False, initial=perfect_values(rules))
    np.testing.assert_allclose(warm.a, cold.a, rtol=0, atol=1e-11)
    np.testing.assert_allclose(warm.b, cold.b, rtol=0, atol=1e-11)
    assert warm.sweeps < cold.sweeps


def test_a_choice_past_the_legal_moves_is_refused():
    choices = agent_policy("greedy", RULES, progress=False, cache=False).policy.choices.copy()
    start = PositionIndex(RULES).rank(Position.start(RULES))
    choices[start * 5 + 2] = 9  # a roll of 2 at the start has one legal move: entering a piece
    refusal = r"policy A chooses move 9 in position \d+ with roll number 2 .*has 1 legal move \(choices are 0 to 0\)"
    with pytest.raises(ValueError, match=refusal):
        evaluate_policies(RULES, choices, None, progress=False)
    randomizing = Policy(choices, np.full(core.MAX_MOVES + 1, 0.9), np.zeros((0, core.MAX_MOVES)))
    assert not randomizing.deterministic  # checked without listing its edges
    with pytest.raises(ValueError, match=refusal):
        evaluate_policies(RULES, randomizing, None, progress=False)


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


class Proportional(Agent):
    """Randomizes in no compact form: the j-th legal move with chance proportional to j * roll + 1."""

    spec = "proportional"
    randomizes = True

    def select_move(self, position, roll):
        raise AssertionError("exact evaluation asks its distribution, never a move")

    def move_probabilities(self, rules, decisions):
        legal = np.arange(core.MAX_MOVES)[None, :] < decisions.counts[:, None]
        weights = np.where(legal, np.arange(core.MAX_MOVES)[None, :] * decisions.rolls[:, None] + 1.0, 0.0)
        return weights / weights.sum(axis=1, keepdims=True)


def proportional(position, roll, legal):
    weights = [j * roll + 1.0 for j in range(len(legal))]
    return [w / sum(weights) for w in weights]


class Unsaid(Agent):
    """Randomizes without saying how: evaluated as one draw of its moves per decision."""

    spec = "unsaid"
    randomizes = True

    def select_move(self, position, roll):
        return self.select_one(position, roll)

    def select_moves(self, rules, decisions):
        return decisions.moves[np.arange(len(decisions)), decisions.rngs[:, 0] % decisions.counts.astype(np.uint64)]


def _slip(plain, epsilon):
    table = load_or_solve(RULES, progress=False)

    def chances(position, roll, legal):
        best = table.best_move(position, roll)
        return [1 - epsilon if m == best else epsilon / (len(legal) - 1) for m in legal]

    return chances


@pytest.mark.parametrize(
    ("agent", "chances"),
    [
        ("random", lambda plain: lambda position, roll, legal: [1 / len(legal)] * len(legal)),
        ("perfect:epsilon=0.3", lambda plain: _slip(plain, 0.3)),
        ("perfect:epsilon=0.9", lambda plain: _slip(plain, 0.9)),
        (Proportional(), lambda plain: proportional),
    ],
    ids=["random", "slip-0.3", "slip-0.9", "dense"],
)
def test_randomizing_agents_are_evaluated_by_their_distribution(plain, agent, chances):
    """The randomized policy itself, not one draw of it: the linear solve over the same chances agrees."""
    ours = exact_match(agent, "perfect", RULES, progress=False)
    a, b = plain.solve(plain.distribution_of(chances(plain)), plain.perfect)
    light, dark = start_rates(plain.index, a, b)
    assert ours.exact_policies
    assert ours.win_rate_light == pytest.approx(100 * light, abs=1e-8)
    assert ours.win_rate_dark == pytest.approx(100 * dark, abs=1e-8)


DISTRIBUTIONS = {
    "random": ("random", lambda plain: lambda position, roll, legal: [1 / len(legal)] * len(legal)),
    "slip-0.3": ("perfect:epsilon=0.3", lambda plain: _slip(plain, 0.3)),
    "dense": (Proportional(), lambda plain: proportional),
    "perfect": ("perfect", lambda plain: _slip(plain, 0.0)),  # (deterministic: A's moves held, B's read)
}


@pytest.mark.parametrize(
    ("a", "b"), [("random", "slip-0.3"), ("slip-0.3", "dense"), ("dense", "random"), ("perfect", "slip-0.3")]
)
def test_two_agents_given_by_their_distributions_equal_the_linear_solve(plain, a, b):
    """Both sides randomize, in each form (or A plays its moves held while B randomizes): each side's half-sweep."""
    (agent_a, chances_a), (agent_b, chances_b) = DISTRIBUTIONS[a], DISTRIBUTIONS[b]
    ours = exact_match(agent_a, agent_b, RULES, progress=False)
    values_a, values_b = plain.solve(plain.distribution_of(chances_a(plain)), plain.distribution_of(chances_b(plain)))
    light, dark = start_rates(plain.index, values_a, values_b)
    assert ours.win_rate_light == pytest.approx(100 * light, abs=1e-8)
    assert ours.win_rate_dark == pytest.approx(100 * dark, abs=1e-8)


def test_a_compact_distribution_is_kept_compactly():
    random = agent_policy("random", RULES, progress=False, cache=False).policy
    slip = agent_policy("perfect:epsilon=0.9", RULES, progress=False, cache=False).policy
    dense = agent_policy(Proportional(), RULES, progress=False, cache=False).policy
    assert len(random.dense) == 0 and random.keep[2] == 0.5  # with two pieces at most two moves: 1/2 each
    assert len(slip.dense) == 0 and not slip.deterministic
    assert dense.dense.shape == (PositionIndex(RULES).size * 5, core.MAX_MOVES)


def test_an_agent_that_does_not_say_how_it_randomizes_is_one_draw(capsys):
    result = exact_match(Unsaid(seed=3), "perfect", RULES, seed=3, progress=False)
    assert not result.exact_policies
    draw = agent_policy(Unsaid(), RULES, seed=3, progress=False, cache=False)
    assert not draw.exact
    other = agent_policy(Unsaid(), RULES, seed=4, progress=False, cache=False)
    assert not np.array_equal(draw.policy.choices, other.policy.choices)  # the draw is the seed's
    from urgym.evaluation.scoring.report import format_exact

    assert "one draw" in format_exact(result)


@pytest.mark.parametrize("pieces", [2, 3])
@pytest.mark.parametrize("agent", ["greedy", "random", "perfect:epsilon=0.3"])
def test_losses_add_up_to_what_the_agent_lacks_against_perfect_play(agent, pieces):
    """The performance-difference identity: a second, forward computation agrees with the exact value."""
    rules = get_rules("finkel", pieces)
    table = load_or_solve(rules, progress=False)
    a = agent_policy(agent, rules, progress=False, cache=False)
    b = agent_policy("perfect", rules, 1, progress=False, cache=False)
    light, dark = evaluate_policies(rules, a.policy, b.policy, progress=False).start()
    losses = policy_losses(rules, a.policy, b.policy, table.probabilities(), progress=False)
    assert losses.loss.sum() == pytest.approx(0.5 - (light + dark) / 2, abs=1e-10)
    start = losses.index.rank(Position.start(rules))
    assert losses.reach[0, start] >= 0.5 and losses.reach[1, start] >= 0.5 and np.all(losses.reach >= 0)


def test_worst_decisions_are_records_that_review_reads(tmp_path):
    from urgym.evaluation.review.grades import review_game
    from urgym.evaluation.scoring.exact import save_worst

    report = exact_results("greedy", "perfect", RULES, progress=False, worst=3, cache=False)
    worst = report.worst
    assert len(worst) == 3 and worst[0].loss >= worst[1].loss >= worst[2].loss > 0
    assert sum(w.loss for w in worst) <= 50 - report.match.win_rate + 1e-9
    files = save_worst(worst, "greedy", tmp_path)
    assert len(files) == sum(len(w.rolls) for w in worst)
    table = load_or_solve(RULES, progress=False)
    record = GameRecord.load(files[0])
    assert record.first_position() == worst[0].position
    review = review_game(record, table)
    assert review.moves[0].regret * 100 == pytest.approx(worst[0].rolls[0][4], abs=1e-9)
    with pytest.raises(ValueError, match="RGN records begin at the start"):
        record.to_rgn()


def test_a_record_refuses_a_start_that_is_no_position():
    data = GameRecord(RULES, (), start=Position.start(RULES).code).to_dict()
    assert GameRecord.from_dict(data).start == Position.start(RULES).code
    assert "start" not in GameRecord(RULES, ()).to_dict()  # records from the start are written as before
    for bad in (-1, 2**70, "12", 1.5):
        with pytest.raises(ValueError, match="start"):
            GameRecord.from_dict({**data, "start": bad})


def test_policies_are_cached_and_a_bad_cache_is_asked_again(tmp_path):
    first = agent_policy("greedy", RULES, progress=False, directory=tmp_path)
    assert first.cached is not None and first.cached.exists() and first.seconds > 0
    again = agent_policy("greedy", RULES, progress=False, directory=tmp_path)
    assert again.seconds == 0 and np.array_equal(again.policy.choices, first.policy.choices)
    first.cached.write_bytes(first.cached.read_bytes()[:1000])  # a damaged file
    with pytest.warns(UserWarning, match="not an intact policy"):
        mended = agent_policy("greedy", RULES, progress=False, directory=tmp_path)
    assert mended.seconds > 0 and np.array_equal(mended.policy.choices, first.policy.choices)
    other = agent_policy("last", RULES, progress=False, directory=tmp_path)  # another agent: another file
    assert other.cached != first.cached
    assert agent_policy(Unsaid(), RULES, progress=False, directory=tmp_path).cached is None  # no spec pins it down


def test_the_cache_key_reads_model_files_and_nothing_else(tmp_path, monkeypatch):
    import shutil

    from urgym.agents.models import DEFAULT_TD_MODEL
    from urgym.evaluation.scoring.policies import _cache_key

    monkeypatch.chdir(tmp_path)
    epsilon = make_agent("perfect:epsilon=0.1")
    before = _cache_key(epsilon, epsilon.spec, RULES, 0)
    (tmp_path / "0.1").write_text("a file that happens to share a parameter's value")
    assert _cache_key(epsilon, epsilon.spec, RULES, 0) == before  # a value is not a path unless it names a model
    shutil.copy(DEFAULT_TD_MODEL, tmp_path / "mine.npz")
    td = make_agent("td:model=mine.npz")
    first = _cache_key(td, td.spec, RULES, 0)
    with open(tmp_path / "mine.npz", "ab") as f:
        f.write(b"retrained")  # the same name, other contents: another policy
    assert _cache_key(td, td.spec, RULES, 0) != first


def test_an_interrupted_policy_resumes_from_its_checkpoint(tmp_path, monkeypatch, capsys):
    from urgym.evaluation.scoring import policies

    whole = agent_policy("greedy", RULES, progress=False, cache=False)
    monkeypatch.setattr(policies, "CHECKPOINT_SECONDS", -1.0)  # a checkpoint after every pair
    calls = {"n": 0}
    real = policies._ask_pair

    def interrupted(*args):
        calls["n"] += 1
        if calls["n"] == 3:  # finkel 2 has three pairs to ask
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(policies, "_ask_pair", interrupted)
    with pytest.raises(KeyboardInterrupt):
        agent_policy("greedy", RULES, progress=False, directory=tmp_path)
    assert list(tmp_path.glob("*.partial.npz")) and not list(tmp_path.glob("*p-*[0-9a-f].npz"))
    monkeypatch.setattr(policies, "_ask_pair", real)
    resumed = agent_policy("greedy", RULES, progress=False, directory=tmp_path)
    assert "resuming from" in capsys.readouterr().err
    assert np.array_equal(resumed.policy.choices, whole.policy.choices) and resumed.asked == whole.asked
    assert not list(tmp_path.glob("*.partial.npz"))


def test_the_estimate_counts_the_decisions_and_refuses_what_does_not_fit():
    from urgym.evaluation.scoring.policies import check_exact_fits, estimate_exact

    rules = get_rules("finkel", 3)
    estimate = estimate_exact(["greedy"], rules, 1, cache=False)
    asked = agent_policy("greedy", rules, progress=False, cache=False).asked
    assert abs(estimate.decisions - asked) < 0.1 * asked
    assert estimate.positions == PositionIndex(rules).size and "greedy" in estimate.ask_seconds
    with pytest.raises(ValueError, match="more than --max-minutes"):
        check_exact_fits(estimate, max_minutes=1e-9)
    huge = dataclasses.replace(estimate, memory=1 << 60)
    with pytest.raises(ValueError, match="of memory"):
        check_exact_fits(huge)
    with pytest.raises(ValueError) as both:  # over both limits: one answer names each, whatever the free memory
        check_exact_fits(huge, max_minutes=1e-9)
    assert "of memory" in str(both.value) and "more than --max-minutes" in str(both.value)


def test_an_exact_tournament_is_every_pair_exactly():
    from urgym.evaluation.scoring.exact import exact_tournament

    result = exact_tournament(["greedy", "random", "perfect"], RULES, progress=False, cache=False)
    table = np.array(result.win_rate)
    assert np.allclose(table + table.T, 100.0)
    pair = exact_match("greedy", "random", RULES, progress=False)
    assert table[0, 1] == pytest.approx(pair.win_rate, abs=1e-9)
    assert result.mean(2) == max(result.mean(i) for i in range(3))  # perfect play beats both


def test_the_estimate_of_a_whole_policy_is_its_passes_not_its_searches():
    from urgym.evaluation.scoring.policies import estimate_exact

    class Sleepy(Agent):
        """Answers one decision at a time, a tenth of a millisecond each."""

        spec = "sleepy"

        def select_move(self, position, roll):
            __import__("time").sleep(1e-4)
            return position.legal_moves(roll)[0]

    rules = get_rules("finkel", 4)
    estimate = estimate_exact(["expectimax:7", Sleepy()], rules, 1, cache=False)
    assert estimate.ask_seconds["expectimax:depth=7"] < 120  # eight passes over 2.6 million positions
    assert estimate.ask_seconds["sleepy"] > 900  # 9.2 million decisions asked one by one


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--worst", "3"], "--worst goes with --exact"),
        (["--exact", "--save-worst", "d"], "--save-worst goes with --worst N"),
        (["--exact", "--worst", "-1"], "--worst"),
        (["--no-policy-cache"], "--no-policy-cache goes with --exact"),
        (["--max-minutes", "5"], "--max-minutes goes with --exact"),
    ],
)
def test_evaluate_refuses_exact_options_out_of_place(argv, message, capsys):
    from urgym.commands.evaluate import main as evaluate_main

    with pytest.raises(SystemExit):
        evaluate_main(["--agent", "greedy", "--pieces", "2", *argv])
    assert message in capsys.readouterr().err


def test_evaluate_exact_tournament_and_worst_from_the_command_line(tmp_path, capsys):
    import json

    from urgym.commands.evaluate import main as evaluate_main

    out = tmp_path / "t.json"
    argv = ["--tournament", "greedy,random,expectimax:2", "--exact", "--pieces", "2", "--no-progress"]
    assert evaluate_main([*argv, "--json", str(out)]) == 0
    data = json.loads(out.read_text())["exact_tournament"]
    assert data["agents"] == ["greedy", "random", "expectimax:depth=2"] and len(data["mean_win_rate"]) == 3
    assert "exact head-to-head" in capsys.readouterr().out
    folder = tmp_path / "worst"
    argv = ["--agent", "greedy", "--exact", "--pieces", "2", "--worst", "2", "--save-worst", str(folder)]
    assert evaluate_main([*argv, "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "loses most" in printed and "review" in printed
    assert sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))[0] == "game-000001.json"
    # too long for the limit given: refused before any work, with the estimate
    assert evaluate_main(["--agent", "greedy", "--exact", "--pieces", "3", "--max-minutes", "0.00001"]) == 2
    assert "more than --max-minutes" in capsys.readouterr().err


def test_uniform_play_reads_no_chosen_move_and_a_slip_does():
    """1/n per move is uniform play though (1 - 1/3) / 2 is not 1/3 in floating point: no bonus for the chosen."""
    n = np.arange(core.MAX_MOVES + 1)
    uniform = Policy(np.zeros(1, np.uint8), np.where(n > 0, 1.0 / np.maximum(n, 1), 1.0), np.zeros((0, core.MAX_MOVES)))
    share, bonus = _move_chances(uniform)
    assert np.all(bonus == 0.0) and share[1] == 1.0
    assert share[2:] == pytest.approx(1.0 / n[2:], rel=1e-15)
    slip = Policy(uniform.choices, np.full(core.MAX_MOVES + 1, 0.7), uniform.dense)
    share, bonus = _move_chances(slip)
    assert share[1] == 1.0 and bonus[1] == 0.0
    assert share[3] == pytest.approx(0.15) and bonus[3] == pytest.approx(0.55)


@pytest.mark.parametrize("agent", ["random", "perfect:epsilon=0.3"])
def test_the_compact_form_with_three_moves_equals_its_dense_form(agent):
    """On 3 pieces (up to three moves) uniform play and a slip agree with the same chances given move by move."""
    rules = get_rules("finkel", 3)
    policy = agent_policy(agent, rules, progress=False, cache=False).policy
    perfect = agent_policy("perfect", rules, progress=False, cache=False).policy
    dense, n_moves = _dense_form(policy, rules)
    assert n_moves.max() == 3
    compact = evaluate_policies(rules, policy, perfect, progress=False)
    given = evaluate_policies(rules, Policy(policy.choices, policy.keep, dense), perfect, progress=False)
    assert np.abs(compact.a - given.a).max() < 1e-11 and np.abs(compact.b - given.b).max() < 1e-11


def _dense_form(policy: Policy, rules) -> tuple[np.ndarray, np.ndarray]:
    """A compact policy's chances given move by move, and each decision's number of legal moves."""
    index = PositionIndex(rules)
    states = np.concatenate([decision_states(index, lo, hi) for lo, hi in index.pair_ranges])
    n_moves = every_roll(states, rules).counts
    chosen = np.arange(core.MAX_MOVES)[None, :] == policy.choices[:, None]
    others = np.where(n_moves > 1, (1.0 - policy.keep[n_moves]) / np.maximum(n_moves - 1, 1), 0.0)[:, None]
    dense = np.where(chosen, policy.keep[n_moves][:, None], others)
    dense[np.arange(core.MAX_MOVES)[None, :] >= n_moves[:, None]] = 0.0
    assert np.allclose(dense.sum(axis=1)[n_moves > 1], 1.0)  # (no choice: a sure move, or the pass)
    return dense, n_moves


def test_dense_chances_that_are_not_a_distribution_over_the_legal_moves_are_refused():
    policy = agent_policy("random", RULES, progress=False, cache=False).policy
    dense, n_moves = _dense_form(policy, RULES)
    index = PositionIndex(RULES)
    playing = np.zeros(index.size, dtype=bool)  # positions where the game goes on (the rest are not swept)
    for pair, (lo, hi) in zip(index.pairs, index.pair_ranges, strict=True):
        playing[lo:hi] = index.pieces not in pair
    row = int(np.flatnonzero((n_moves == 2) & np.repeat(playing, len(n_moves) // index.size))[0])
    leaking = dense.copy()
    leaking[row, :3] = [0.25, 0.25, 0.5]  # half the mass on a move past the two legal ones
    with pytest.raises(ValueError, match=r"policy B's dense chances sum to 0\.5 in position \d+ .*has 2 legal moves"):
        evaluate_policies(RULES, policy, Policy(policy.choices, policy.keep, leaking), progress=False)
    for bad in (-0.5, np.nan):
        hostile = dense.copy()
        hostile[row, 0] = bad
        with pytest.raises(ValueError, match="policy A's dense chances must be finite and non-negative"):
            evaluate_policies(RULES, Policy(policy.choices, policy.keep, hostile), None, progress=False)
    no_choice = dense.copy()
    no_choice[n_moves <= 1] = 0.0  # rows without a choice are not read: any content is accepted
    fine = evaluate_policies(RULES, Policy(policy.choices, policy.keep, no_choice), None, progress=False)
    assert fine.start() == evaluate_policies(RULES, policy, None, progress=False).start()


def test_the_chance_of_a_single_legal_move_is_not_read():
    choices = agent_policy("greedy", RULES, progress=False, cache=False).policy.choices
    keep = np.ones(core.MAX_MOVES + 1)
    keep[:2] = 0.3  # no choice among one move or none
    policy = Policy(choices, keep, np.zeros((0, core.MAX_MOVES)))
    assert policy.deterministic
    held = evaluate_policies(RULES, policy, None, progress=False)
    np.testing.assert_array_equal(held.a, evaluate_policies(RULES, choices, None, progress=False).a)


@pytest.mark.parametrize(
    ("part", "value", "refusal"),
    [
        ("dense", lambda rows: np.full((rows, core.MAX_MOVES), "x"), "dense chances must be float64"),
        ("dense", lambda rows: np.full((rows, core.MAX_MOVES), None, dtype=object), "dense chances must be float64"),
        ("dense", lambda rows: np.ones((rows, core.MAX_MOVES), dtype=np.int64), "dense chances must be float64"),
        ("keep", lambda rows: np.full(core.MAX_MOVES + 1, "1"), r"keep must be float64\[\d+\], chances in \[0, 1\]"),
        ("keep", lambda rows: np.ones(core.MAX_MOVES + 1, dtype=np.int64), r"keep must be float64"),
    ],
)
def test_a_policy_of_the_wrong_kind_of_numbers_is_refused_by_name(part, value, refusal):
    """Strings, objects and integers where chances belong get the policy's own error, not numpy's or numba's."""
    policy = agent_policy("random", RULES, progress=False, cache=False).policy
    hostile = policy._replace(**{part: value(len(policy.choices))})
    with pytest.raises(ValueError, match="policy A's " + refusal):
        evaluate_policies(RULES, hostile, None, progress=False)


@pytest.mark.parametrize("tol", [0, -1e-9, float("nan"), 1.0, 10, "1e-9", True, 1e-300])
def test_a_tolerance_outside_its_range_is_refused_before_any_sweep(tol):
    choices = agent_policy("greedy", RULES, progress=False, cache=False).policy
    with pytest.raises(ValueError, match="tol must be"):
        evaluate_policies(RULES, choices, None, tol=tol, progress=False)
    with pytest.raises(ValueError, match="tol must be"):
        policy_losses(RULES, choices, choices, np.zeros(PositionIndex(RULES).size), progress=False, tol=tol)


@pytest.mark.parametrize("policy", [(1, 2, 3), [0, 1], None, "greedy"])
def test_a_policy_that_is_no_policy_is_refused_naming_what_is_allowed(policy):
    allowed = r"a policy must be a urgym\.solver\.policy\.Policy, a BestMoves or a numpy array"
    with pytest.raises(ValueError, match=allowed):
        evaluate_policies(RULES, policy, None, progress=False)


@pytest.mark.parametrize(("worst", "seed"), [(-1, 0), (1.5, 0), (True, 0), (0, 2**64 - 1), (0, -1)])
def test_worst_and_seed_out_of_range_are_refused(worst, seed):
    with pytest.raises(ValueError, match=r"(worst|seed) must be an integer"):
        exact_results("greedy", "perfect", RULES, seed=seed, progress=False, worst=worst, cache=False)


def test_an_agent_object_is_never_cached_under_its_spec(tmp_path, monkeypatch):
    """A TD network of one's own has the spec 'td', as the shipped one: its policy must not be taken for that one."""
    from urgym.agents.networks.td import TDAgent
    from urgym.evaluation.training.td_lambda import TDLambda

    monkeypatch.setenv("URGYM_CACHE", str(tmp_path))
    rules = get_rules("finkel", 3)
    first = TDAgent(TDLambda.initial(rules, hidden=8, seed=1).network())
    second = TDAgent(TDLambda.initial(rules, hidden=8, seed=2).network())
    assert first.spec == second.spec == "td"
    a = agent_policy(first, rules, progress=False)
    b = agent_policy(second, rules, progress=False)
    assert a.cached is None and b.cached is None and not (tmp_path / "policies").exists()
    assert not np.array_equal(a.policy.choices, b.policy.choices)


def test_a_plug_in_whose_policy_table_seconds_is_not_a_duration_is_refused():
    from urgym.evaluation.scoring.policies import estimate_exact

    class Odd(Agent):
        spec = "odd"

        def select_move(self, position, roll):
            return position.legal_moves(roll)[0]

        def policy_table_seconds(self, rules, threads):
            return float("nan")

    with pytest.raises(ValueError, match="agent odd: policy_table_seconds gave nan"):
        estimate_exact([Odd()], RULES, 1, 0, False)


def _rewrite(path, **changes):
    """The cached policy at ``path`` with some arrays replaced, its header (and checksum) left as it was."""
    with np.load(path) as data:
        arrays = {name: data[name] for name in data.files}
    arrays.update(changes)
    with open(path, "wb") as f:
        np.savez(f, **arrays)


@pytest.mark.parametrize(
    "change",
    [
        lambda a: {"keep": np.where(np.arange(a["keep"].size) >= 2, 0.5, 1.0)},  # greedy made to slip half the time
        lambda a: {"dense": np.full((a["choices"].size, core.MAX_MOVES), 1 / core.MAX_MOVES)},  # uniform play
        lambda a: {"progress": np.array([10**6, 5], dtype=np.int64)},  # a claim of every pair done
        lambda a: {"progress": np.array([-1, 0], dtype=np.int64)},
        lambda a: {"progress": np.array([np.nan, 0.0])},  # NaN progress
        lambda a: {"keep": np.full(a["keep"].size, 3.0)},  # a keep out of range
        lambda a: {"choices": np.full_like(a["choices"], 200)},  # choices past any legal move
        lambda a: {"header": np.frombuffer(b"[1, 2]", dtype=np.uint8)},  # a header that is a JSON list
        lambda a: {"header": np.frombuffer(b"null", dtype=np.uint8)},
    ],
)
def test_a_changed_cached_policy_is_set_aside_and_asked_again_never_trusted(tmp_path, change):
    from urgym.evaluation.scoring.policies import agent_policy as policy_of

    truth = exact_results("greedy", "perfect", RULES, progress=False, cache=False).match.win_rate
    first = policy_of("greedy", RULES, progress=False, directory=tmp_path)
    with np.load(first.cached) as data:
        arrays = {name: data[name] for name in data.files}
    _rewrite(first.cached, **change(arrays))
    with pytest.warns(UserWarning, match=r"moved aside to .*\.corrupt, and the agent is asked again") as said:
        again = policy_of("greedy", RULES, progress=False, directory=tmp_path)
    assert str(first.cached) in str(said[0].message)
    assert again.seconds > 0 and np.array_equal(again.policy.choices, first.policy.choices)
    assert first.cached.with_name(first.cached.name + ".corrupt").exists()
    light, dark = evaluate_policies(
        RULES, again.policy, agent_policy("perfect", RULES, 1, progress=False, cache=False).policy, progress=False
    ).start()
    assert 100 * (light + dark) / 2 == pytest.approx(truth, abs=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert policy_of("greedy", RULES, progress=False, directory=tmp_path).seconds == 0  # cached again, intact


def test_a_forged_checkpoint_is_not_resumed(tmp_path):
    from urgym.evaluation.scoring.policies import agent_policy as policy_of

    first = policy_of("greedy", RULES, progress=False, directory=tmp_path)
    partial = first.cached.with_name(first.cached.name + ".partial.npz")
    first.cached.rename(partial)
    with np.load(partial) as data:
        arrays = {name: data[name] for name in data.files}
    _rewrite(partial, choices=np.zeros_like(arrays["choices"]))  # every decision's first move, claimed done
    with pytest.warns(UserWarning, match="does not match its checksum"):
        again = policy_of("greedy", RULES, progress=False, directory=tmp_path)
    assert np.array_equal(again.policy.choices, first.policy.choices)


def test_a_policy_cache_that_cannot_be_used_names_the_setting_and_the_way_out(tmp_path):
    from urgym.evaluation.scoring.policies import agent_policy as policy_of

    (tmp_path / "a-file").write_text("x")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    for folder in (tmp_path / "a-file", tmp_path / "loop"):
        with pytest.raises(ValueError, match="set URGYM_POLICY_CACHE to a writable folder, or ask without the cache"):
            policy_of("greedy", RULES, progress=False, directory=folder)


def test_a_checkpoint_that_cannot_be_written_costs_the_checkpoints_not_the_result(tmp_path, monkeypatch):
    import urgym.evaluation.scoring.policies as policies

    monkeypatch.setattr(policies, "CHECKPOINT_SECONDS", 0.0)  # a checkpoint after every chunk

    def full_disk(path, arrays):
        if path.name.endswith(".partial.npz"):
            raise OSError(28, "No space left on device")
        np.savez(path, **arrays)

    monkeypatch.setattr(policies, "_save", full_disk)
    with pytest.warns(UserWarning, match=r"could not write the checkpoint .* \(No space left on device\)"):
        asked = policies.agent_policy("greedy", RULES, progress=False, directory=tmp_path)
    assert np.array_equal(
        asked.policy.choices, agent_policy("greedy", RULES, progress=False, cache=False).policy.choices
    )


def test_a_policy_read_from_the_cache_reports_no_decision_asked(tmp_path, monkeypatch):
    monkeypatch.setenv("URGYM_POLICY_CACHE", str(tmp_path))
    first = exact_results("greedy", "perfect", RULES, progress=False)
    again = exact_results("greedy", "perfect", RULES, progress=False)
    assert first.match.decisions > 0 and again.match.decisions == 0
    assert again.match.win_rate == first.match.win_rate


class Misbehaving(Agent):
    """A plug-in whose answer under ``--exact`` is an exception or a malformed array, chosen by ``how``."""

    spec = "misbehaving"

    def __init__(self, how: str, randomizes: bool = False) -> None:
        super().__init__(0)
        self.how, self.randomizes = how, randomizes

    def select_move(self, position, roll):
        return position.legal_moves(roll)[0]

    def select_moves(self, rules, decisions):
        if self.how == "raises":
            raise KeyError("no such square")
        if self.how == "ragged":
            return [[int(decisions.moves[i, 0])] * (i % 2 + 1) for i in range(len(decisions))]
        return decisions.moves[:, 0]

    def move_probabilities(self, rules, decisions):
        if self.how == "raises":
            raise ZeroDivisionError("division by zero")
        if self.how == "not-said":
            return super().move_probabilities(rules, decisions)  # the base class's documented "no distribution"
        return [[1.0] * (i % 3 + 1) for i in range(len(decisions))]  # ragged


@pytest.mark.parametrize(
    ("how", "randomizes", "message"),
    [
        ("raises", False, r"agent misbehaving: select_moves raised KeyError: 'no such square'"),
        ("raises", True, r"agent misbehaving: move_probabilities raised ZeroDivisionError: division by zero"),
        ("ragged", False, r"misbehaving answered \d+ decisions with a list that is no array of integers"),
        ("ragged", True, r"agent misbehaving: move_probabilities gave a list that is no float\[\d+, \d+\] array"),
    ],
)
def test_a_plug_in_that_fails_under_exact_is_named_not_a_traceback(how, randomizes, message):
    with pytest.raises(ValueError, match=message):
        agent_policy(Misbehaving(how, randomizes), RULES, progress=False, cache=False)


def test_a_plug_in_whose_move_probabilities_says_not_implemented_is_one_draw():
    """The base class's NotImplementedError is its documented "no distribution": the agent is asked for moves."""
    asked = agent_policy(Misbehaving("not-said", randomizes=True), RULES, progress=False, cache=False)
    assert not asked.exact
    first_moves = agent_policy("greedy", RULES, progress=False, cache=False)  # any legal move, held as a choice
    assert asked.policy.choices.shape == first_moves.policy.choices.shape
    assert np.all(asked.policy.choices[asked.policy.choices != 255] == 0)  # its first legal move everywhere


def test_evaluate_exact_names_a_failing_plug_in_in_one_line(tmp_path, capsys, monkeypatch):
    from urgym.commands.evaluate import main

    plugin = tmp_path / "failing_plugin.py"
    plugin.write_text(
        "from urgym.agents import Agent\n"
        "class Failing(Agent):\n"
        "    spec = 'failing'\n"
        "    def select_move(self, position, roll):\n"
        "        raise RuntimeError('the plug-in broke')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    code = main(["--agent", "failing_plugin:Failing", "--exact", "--pieces", "2", "--no-progress", "--no-policy-cache"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err == ["evaluate: error: agent failing_plugin:Failing: select_moves raised RuntimeError: the plug-in broke"]


def test_the_estimate_counts_cache_disk_only_for_policies_that_will_be_cached(tmp_path, monkeypatch):
    from urgym.evaluation.scoring.policies import estimate_exact

    monkeypatch.setenv("URGYM_POLICY_CACHE", str(tmp_path))
    rows = PositionIndex(RULES).size * 5
    assert estimate_exact([Misbehaving("first")], RULES, 1, 0, True).disk == 0  # an agent object: never cached
    assert estimate_exact(["greedy"], RULES, 1, 0, False).disk == 0  # no cache asked for
    assert estimate_exact(["greedy", Misbehaving("first")], RULES, 1, 0, True).disk == rows  # greedy's alone
    agent_policy("greedy", RULES, progress=False)
    assert estimate_exact(["greedy"], RULES, 1, 0, True).disk == 0  # cached already: nothing more written
