"""The solver against an independent computation, the Bellman equation and known values."""

import numpy as np
import pytest

from urgym import Position, get_rules, solver

from .independent import all_positions, solve_by_policy_iteration

SOLVABLE = ("finkel", "blitz", "masters", "aseb")


@pytest.fixture(scope="module")
def tables():
    return {(name, n): solver.solve(get_rules(name, n), progress=False) for name in SOLVABLE for n in (1, 2)}


@pytest.mark.parametrize("name", SOLVABLE)
@pytest.mark.parametrize("pieces", [1, 2])
def test_agrees_with_policy_iteration_on_every_position(tables, name, pieces):
    table = tables[name, pieces]
    # One piece starts from a naive policy; two start from the table's moves to save LU factorisations.
    # Either way the reference only stops at a policy that exact evaluation shows no move can improve.
    start = None if pieces == 1 else (lambda p, r, moves: table.best_move(p, r))
    reference = solve_by_policy_iteration(get_rules(name, pieces), first_choice=start)
    worst = max(abs(table.win_probability(p) - v) for p, v in reference.items())
    assert worst < 1e-10


@pytest.mark.parametrize("name", SOLVABLE)
def test_bellman_residual_below_tolerance_on_every_position(tables, name):
    table = tables[name, 2]
    rules = table.rules
    worst = 0.0
    for p in all_positions(rules):
        if p.is_over:
            continue
        expected = 0.0
        for r in rules.rolls:
            moves = table.move_values(p, r)
            expected += rules.roll_probabilities[r] * (
                max(moves.values()) if moves else table.win_probability(p.play(r, None), side="light")
            )
        worst = max(worst, abs(expected - table.win_probability(p)))
    assert worst < 1e-12
    assert table.header["residual"] < 1e-12


@pytest.mark.parametrize("name", SOLVABLE)
def test_values_are_probabilities(tables, name):
    values = tables[name, 2].probabilities()
    assert values.min() >= 0.0 and values.max() <= 1.0


@pytest.mark.parametrize(
    "name, pieces", [("finkel", 1), ("finkel", 2), ("blitz", 1), ("blitz", 2), ("masters", 1), ("masters", 2)]
)
def test_last_piece_race_on_the_last_tile(tables, name, pieces):
    rules = get_rules(name, pieces)
    p = Position.from_pieces(rules, light=[rules.length], dark=[rules.length], light_home=0, dark_home=0)
    one = rules.roll_probabilities[1]
    # the mover needs a 1: v = P(1) + (1 - P(1)) (1 - v)  =>  v = 1 / (2 - P(1)); 4/7 with four binary dice
    expected = 1 / (2 - one)
    if rules.roll_probabilities == get_rules("finkel").roll_probabilities:
        assert expected == pytest.approx(4 / 7, abs=1e-15)
    assert tables[name, pieces].win_probability(p) == pytest.approx(expected, abs=1e-12)
    assert tables[name, pieces].win_probability(p, side="dark") == pytest.approx(1 - expected, abs=1e-12)


def test_best_move_is_the_argmax_and_finished_games_are_certain(tables):
    table = tables["finkel", 2]
    p = Position.from_pieces(table.rules, light=[6], dark=[5], light_home=1, dark_home=1, turn="dark")
    values = table.move_values(p, 1)
    assert set(values) == set(p.legal_moves(1))
    assert table.best_move(p, 1) == max(values, key=values.get)
    assert values[5] > values[0]  # capturing light's piece at B2 beats entering
    assert table.best_move(Position.start(table.rules), 0) is None
    won = Position.from_pieces(table.rules, light=[], dark=[3], light_home=0, dark_home=1)
    assert table.win_probability(won, side="light") == 1.0 and table.win_probability(won) == 1.0


def test_start_value_favours_the_first_player(tables):
    for name in SOLVABLE:
        start = Position.start(get_rules(name, 2))
        assert 0.5 < tables[name, 2].win_probability(start) < 0.6


def test_positions_from_other_rules_are_refused(tables):
    with pytest.raises(ValueError, match="given to a table of"):
        tables["finkel", 2].win_probability(Position.start(get_rules("blitz", 2)))


def test_tolerance_must_be_sane():
    with pytest.raises(ValueError, match="tol must be between 0 and 1"):
        solver.solve("finkel", tol=0)


def test_parallel_sweeps_reach_the_same_values():
    one = solver.solve(get_rules("aseb", 3), progress=False, threads=1)
    two = solver.solve(get_rules("aseb", 3), progress=False, threads=2)
    assert np.max(np.abs(one.probabilities() - two.probabilities())) < 1e-11


def test_bad_dtype_is_refused_before_any_work():
    with pytest.raises(ValueError, match="unknown dtype 'float16'; allowed: float64, float32, uint16"):
        solver.solve(get_rules("finkel", 1), dtype="float16", progress=False)


def test_threads_setting_does_not_leak_and_memory_tables_are_float64():
    import numba

    before = numba.get_num_threads()
    table = solver.solve(get_rules("finkel", 1), progress=False, threads=1, dtype="uint16")
    assert numba.get_num_threads() == before
    assert table.header["dtype"] == "float64" and table.values.dtype == np.float64


def test_solve_records_sweeps_and_time_of_every_layer_pair(tables):
    table = tables["finkel", 2]
    pairs = table.header["pairs"]
    assert [tuple(p["pair"]) for p in pairs] == table.index.pairs
    assert [p["positions"] for p in pairs] == [end - start for start, end in table.index.pair_ranges]
    solved = [p for p in pairs if table.index.pieces not in p["pair"]]
    terminal = [p for p in pairs if table.index.pieces in p["pair"]]
    assert solved and all(p["sweeps"] > 0 and 0 <= p["residual"] < 1e-12 for p in solved)
    assert all(p["sweeps"] == 0 and p["build_seconds"] == 0 for p in terminal)
    assert table.header["sweeps"] == sum(p["sweeps"] for p in pairs)
    assert table.header["residual"] == max(p["residual"] for p in pairs)


def test_the_slow_mode_tail_extrapolates_steady_ratios_and_stops_where_it_stalls():
    from urgym.solver.solve import STALL_SWEEPS, SlowModeTail

    tail = SlowModeTail()
    assert tail.after_sweep(1e-3, 0.7) is None  # one ratio says nothing yet
    assert tail.after_sweep(0.7e-3, 0.7) == pytest.approx(0.7 / 0.3)  # two that agree: the geometric tail
    assert tail.after_sweep(0.5e-3, 0.2) is None  # measured afresh after a jump
    assert tail.after_sweep(0.4e-3, 0.6) is None  # ratios that disagree
    # changes that stay put over STALL_SWEEPS sweeps while the ratios keep agreeing: plain sweeps from then on
    stuck = SlowModeTail()
    factors = [stuck.after_sweep(4e-5, 0.71) for _ in range(3 * STALL_SWEEPS)]
    assert any(f is not None for f in factors[:STALL_SWEEPS])
    assert stuck.stalled and all(f is None for f in factors[STALL_SWEEPS:])
    slow = SlowModeTail()
    assert [slow.after_sweep(1e-6 * 0.953**k, 0.953) for k in range(5)] == [None] * 5  # above 0.95: never taken
    # halving in time keeps it going
    falling = SlowModeTail()
    assert all(falling.after_sweep(0.9**k, 0.9) is not None or k % 2 == 0 for k in range(3 * STALL_SWEEPS))
    assert not falling.stalled


def test_a_pair_swept_plainly_after_a_stall_still_meets_the_tolerance(tables, monkeypatch):
    import sys

    # a sweep that does not halve the largest change stalls the tail: most pairs end their sweeps plainly
    monkeypatch.setattr(sys.modules["urgym.solver.solve"], "STALL_SWEEPS", 1)
    table = solver.solve(get_rules("finkel", 2), progress=False)
    pairs = [p for p in table.header["pairs"] if p["sweeps"]]
    assert all(p["residual"] < 1e-12 for p in pairs)
    assert sum(p["plain_from"] is not None for p in pairs) > len(pairs) // 2
    assert np.max(np.abs(table.probabilities() - tables["finkel", 2].probabilities())) < 1e-10


REVISITING = ("murray", "skiriuk")  # paths down the middle row and back: the tile layout of the index


@pytest.mark.parametrize("name", REVISITING)
def test_paths_that_visit_tiles_twice_agree_with_policy_iteration_on_every_position(name):
    rules = get_rules(name, 1)
    table = solver.solve(rules, progress=False)
    reference = solve_by_policy_iteration(rules)
    assert len(reference) == table.index.size - 1  # every position but the impossible "both finished" slot
    assert max(abs(table.win_probability(p) - v) for p, v in reference.items()) < 1e-10


@pytest.mark.parametrize("name", REVISITING)
def test_paths_that_visit_tiles_twice_meet_the_bellman_equation_on_every_two_piece_position(name):
    rules = get_rules(name, 2)
    table = solver.solve(rules, progress=False)
    worst = 0.0
    for p in all_positions(rules):  # the rules of urgym.core, through Position, not the solver's graph
        if p.is_over:
            continue
        expected = 0.0
        for r in rules.rolls:
            moves = table.move_values(p, r)
            passed = 1 - table.win_probability(p.play(r, None)) if not moves else 0.0
            expected += rules.roll_probabilities[r] * (max(moves.values()) if moves else passed)
        worst = max(worst, abs(expected - table.win_probability(p)))
    assert worst < 1e-12 and table.header["residual"] < 1e-12


def test_one_thread_gives_the_same_table_every_time_and_a_table_says_whether_it_is_reproducible(monkeypatch):
    """A pair swept by several threads at once ends where their timing puts it: the table says so."""
    import numba
    from urgym.solver import graph

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one core: no sweep can share a pair between threads here")
    monkeypatch.setattr(graph, "SMALL_PAIR", 2_000)  # finkel 3's larger pairs swept by every thread, as finkel 4's are
    rules = get_rules("finkel", 3)
    first, second = (solver.solve(rules, progress=False, threads=1) for _ in range(2))
    assert np.array_equal(first.values, second.values)
    assert first.reproducible and first.header["reproducible"] and first.header["threaded_pairs"] == 0
    shared = solver.solve(rules, progress=False, threads=2)
    large = [p for p in shared.header["pairs"] if p["positions"] >= 2_000 and p["sweeps"] > 0]
    assert large and all(p["threads"] == 2 for p in large)
    assert shared.header["threaded_pairs"] == len(large) and not shared.reproducible
    assert np.max(np.abs(shared.values - first.values)) < 1e-11
    older = solver.SolvedTable(rules, first.values, {k: v for k, v in first.header.items() if k != "reproducible"})
    assert not older.reproducible  # recorded nothing: reproducible only if no pair is swept by every thread
    monkeypatch.setattr(graph, "SMALL_PAIR", 250_000)
    assert older.reproducible
