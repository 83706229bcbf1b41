import numpy as np
import pytest
from urgym.agents import Agent, make_agent
from urgym.evaluation.scoring.match import play_match
from urgym.evaluation.scoring.positions import benchmark_positions, score_positions
from urgym.evaluation.scoring.runner import RunOptions
from urgym.evaluation.scoring.tournament import run_tournament

from urgym import Position, get_rules

RULES = get_rules("finkel", 3)


@pytest.mark.parametrize("opponent", ["first", "last", "greedy"])
def test_numba_and_python_loops_play_the_same_games(finkel3_table, opponent):
    fast = play_match(
        "perfect", opponent, RULES, games=60, seed=3, table=finkel3_table, run=RunOptions(workers=1, progress=False)
    )
    slow = play_match(
        "perfect",
        opponent,
        RULES,
        games=60,
        seed=3,
        table=finkel3_table,
        use_numba=False,
        run=RunOptions(workers=1, progress=False),
    )
    assert np.array_equal(fast.winners, slow.winners)
    assert fast.turns_per_player == slow.turns_per_player
    assert fast.legal_moves_per_decision == slow.legal_moves_per_decision
    for a, b in zip(fast.agents, slow.agents, strict=True):
        assert a.regret.decisions == b.regret.decisions
        assert a.regret.mean == pytest.approx(b.regret.mean, abs=1e-12)
        assert a.regret.blunders == b.regret.blunders


def test_same_seed_same_numbers_with_any_worker_count(finkel3_table):
    one = play_match(
        "heuristic",
        "perfect:epsilon=0.1",
        RULES,
        games=24,
        seed=5,
        table=finkel3_table,
        run=RunOptions(workers=1, progress=False),
    )
    two = play_match(
        "heuristic",
        "perfect:epsilon=0.1",
        RULES,
        games=24,
        seed=5,
        table=finkel3_table,
        run=RunOptions(workers=2, progress=False),
    )
    assert np.array_equal(one.winners, two.winners)
    assert one.agents[0].regret.mean == pytest.approx(two.agents[0].regret.mean, abs=1e-12)
    other = play_match(
        "heuristic",
        "perfect:epsilon=0.1",
        RULES,
        games=24,
        seed=6,
        table=finkel3_table,
        run=RunOptions(workers=1, progress=False),
    )
    assert not np.array_equal(one.winners, other.winners)


def test_sides_alternate_and_perfect_play_has_no_regret(finkel3_table):
    match = play_match(
        "perfect", "random", RULES, games=400, seed=1, table=finkel3_table, run=RunOptions(workers=1, progress=False)
    )
    perfect, random = match.agents
    assert perfect.as_light.games == perfect.as_dark.games == 200
    assert perfect.wins.wins + random.wins.wins == 400
    assert perfect.as_light.wins + perfect.as_dark.wins == perfect.wins.wins
    assert perfect.regret.mean == 0.0 and perfect.regret.perfect_share == 1.0
    assert random.regret.mean > 0.5 and random.regret.perfect_share < 0.9
    assert perfect.wins.rate > 0.85
    assert 1.5 < match.legal_moves_per_decision < 3.5  # fewer pieces, fewer choices than 7-piece finkel


def test_slips_cost_win_rate_and_show_as_regret(finkel3_table):
    match = play_match(
        "perfect:epsilon=0.5",
        "perfect",
        RULES,
        games=400,
        seed=2,
        table=finkel3_table,
        run=RunOptions(workers=1, progress=False),
    )
    sloppy, perfect = match.agents
    assert sloppy.wins.rate < 0.5
    # Half the decisions slip to another move; a slip is perfect only when moves tie.
    assert 0.4 < sloppy.regret.perfect_share < 0.75
    assert perfect.regret.mean == 0.0


def test_an_illegal_move_is_reported(finkel3_table):
    class Cheater(Agent):
        spec = "cheater"

        def select_move(self, position, roll):
            return 99

    with pytest.raises(ValueError, match="chose illegal move 99"):
        play_match(
            Cheater(), "random", RULES, games=2, seed=0, table=finkel3_table, run=RunOptions(workers=1, progress=False)
        )


def test_match_without_a_table_reports_no_regret():
    match = play_match(
        "greedy",
        "random",
        get_rules("murray", 2),
        games=20,
        seed=0,
        table=None,
        run=RunOptions(workers=1, progress=False),
    )
    assert match.agents[0].regret is None
    assert match.agents[0].wins.games == 20


def test_benchmark_positions_are_fixed_decisions(finkel3_table):
    positions = benchmark_positions(finkel3_table, 50)
    assert positions == benchmark_positions(finkel3_table, 50)
    assert all(len(p.legal_moves(r)) >= 2 and not p.is_over for p, r in positions)
    assert len({p for p, _ in positions}) > 40  # spread over many games


def test_position_regrets_match_the_table(finkel3_table):
    positions = benchmark_positions(finkel3_table, 80)
    bench = score_positions("greedy", finkel3_table, positions, run=RunOptions(workers=1, progress=False))
    greedy = make_agent("greedy")
    for (position, roll), regret in zip(positions, bench.regrets, strict=True):
        values = finkel3_table.move_values(position, roll)
        expected = max(values.values()) - values[greedy.select_move(position, roll)]
        assert regret == pytest.approx(100 * expected, abs=1e-10)  # win-% points, as every regret urgym reports
    assert bench.regret.mean == pytest.approx(bench.regrets.mean())
    two = score_positions("greedy", finkel3_table, positions, run=RunOptions(workers=2, progress=False))
    assert np.array_equal(two.regrets, bench.regrets)


def test_tournament_win_matrix_and_regrets(finkel3_table):
    result = run_tournament(
        ["random", "greedy", "perfect"],
        RULES,
        games=100,
        seed=0,
        table=finkel3_table,
        positions=60,
        run=RunOptions(workers=1, progress=False),
    )
    matrix = result.win_matrix
    for i in range(3):
        assert np.isnan(matrix[i, i])
        for j in range(3):
            if i != j:
                assert matrix[i, j] + matrix[j, i] == pytest.approx(1.0)
    assert matrix[2, 0] > 0.8 and matrix[2, 1] > 0.5
    assert result.benchmarks[2].regret.mean == 0.0
    assert result.benchmarks[0].regret.mean > result.benchmarks[2].regret.mean
    assert result.match_regret(2) == 0.0
    # the luck-adjusted matrix: each pair's two cells are the same match seen from both sides
    adjusted = result.adjusted_matrix
    for (i, j), match in result.matches.items():
        for row, col, side in ((i, j, match.agents[0]), (j, i, match.agents[1])):
            assert tuple(adjusted[row, col]) == (
                side.luck_adjusted.mean,
                side.luck_adjusted.low,
                side.luck_adjusted.high,
            )
        assert adjusted[i, j, 0] + adjusted[j, i, 0] == pytest.approx(1.0)
    assert adjusted[2, 0, 1] < adjusted[2, 0, 0] < adjusted[2, 0, 2] and np.isnan(adjusted[1, 1]).all()
    cell = result.to_dict()["luck_adjusted_matrix"][2][0]
    assert cell["mean"] == adjusted[2, 0, 0] and 0.0 <= cell["shown_low"] <= cell["shown_high"] <= 1.0


def test_validation_positions_are_drawn_apart_from_the_test_set(finkel3_table):
    """Training picks models on the validation set; evaluate reports the test set, which shares none of it."""
    from urgym.evaluation.scoring.positions import VALIDATION_SEED, validation_positions

    test = {(p.code, r) for p, r in benchmark_positions(finkel3_table)}
    validation = validation_positions(finkel3_table, 300)
    assert len(validation) == 300 and validation == validation_positions(finkel3_table, 300)
    assert not test & {(p.code, r) for p, r in validation}
    drawn = benchmark_positions(finkel3_table, 1000, VALIDATION_SEED)
    assert set(validation) <= set(drawn)
    assert validation != drawn[:300] or not test & {(p.code, r) for p, r in drawn[:300]}


class OneByOne(Agent):
    """Asks the agent it wraps about one decision at a time: the games must not change."""

    def __init__(self, agent):
        self.agent = agent
        self.spec = agent.spec
        super().__init__(None)

    def reseed(self, seed):
        super().reseed(seed)
        if hasattr(self, "agent"):
            self.agent.reseed(seed)

    def select_move(self, position, roll):
        return self.agent.select_move(position, roll)

    def select_moves(self, rules, decisions):
        return np.concatenate(
            [
                self.agent.select_moves(rules, type(decisions)(*(a[i : i + 1] for a in decisions)))
                for i in range(len(decisions))
            ]
        )


BUILTIN_AGENTS = ["random", "first", "last", "greedy", "heuristic", "expectimax:2", "perfect", "perfect:epsilon=0.3"]


@pytest.mark.parametrize("spec", BUILTIN_AGENTS)
def test_every_builtin_agent_plays_the_same_games_on_every_path(finkel3_table, tmp_path, spec):
    """Inside the numba kernel (where the agent can), through its batch method, and one decision at a time.

    The same games, move for move, for randomizing agents too (each game draws from its own streams).
    """
    import json

    def moves(folder, agent, use_numba):
        play_match(
            agent,
            "random",
            RULES,
            games=10,
            seed=11,
            table=finkel3_table,
            use_numba=use_numba,
            run=RunOptions(workers=1, progress=False, save_games=tmp_path / folder),
        )
        return [json.loads((tmp_path / folder / f"game-{g:06d}.json").read_text())["steps"] for g in range(10)]

    kernel = moves("kernel", spec, True)
    assert kernel == moves("batch", spec, False)
    assert kernel == moves("single", OneByOne(make_agent(spec)), False)


def test_benchmark_arrays_hold_every_move_s_chance(finkel3_table):
    from urgym.evaluation.scoring.positions import benchmark_arrays

    arrays = benchmark_arrays(RULES, "validation", 50, table=finkel3_table)
    assert arrays.observations.shape == (50, 36) and arrays.masks.shape == (50, 15)
    perfect = np.nanargmax(arrays.values, axis=1)
    assert np.all(arrays.regrets(perfect) == 0)
    first = arrays.masks.argmax(axis=1)
    positions = [(Position(RULES, int(s)), int(r)) for s, r in zip(arrays.states, arrays.rolls, strict=True)]
    bench = score_positions("first", finkel3_table, positions, run=RunOptions(workers=1, progress=False))
    assert np.allclose(arrays.regrets(first), bench.regrets)
    assert np.array_equal(np.isnan(arrays.values), ~arrays.masks)


def test_a_script_without_a_main_guard_gets_one_explanation(tmp_path, finkel3_table):
    import subprocess
    import sys

    script = tmp_path / "no_guard.py"
    script.write_text(
        "from urgym.evaluation.scoring.match import play_match\n"
        "from urgym.evaluation.scoring.runner import RunOptions\n"
        "from urgym.solver import load_or_solve\nfrom urgym import get_rules\nrules = get_rules('finkel', 3)\n"
        "play_match('heuristic', 'random', rules, games=40, table=load_or_solve(rules, progress=False), "
        "run=RunOptions(workers=2, progress=False))\n"
    )
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    assert 'if __name__ == "__main__":' in result.stderr.strip().splitlines()[-1]
    assert "BrokenProcessPool" not in result.stderr.strip().splitlines()[-1]


def test_an_in_process_match_plays_on_the_callers_table_not_a_second_map_of_its_file(finkel3_table):
    from urgym.evaluation.scoring.runner import table_key, worker_table
    from urgym.solver import TableError

    key = table_key(finkel3_table, in_process=True)
    assert worker_table(key, finkel3_table.rules) is finkel3_table  # one map of the file: the table's memory once
    with pytest.raises(TableError, match="was solved for"):  # the held table serves its own rules only
        worker_table(key, get_rules("finkel", 2))
