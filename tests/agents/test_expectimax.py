import math

import pytest
from urgym.agents import ExpectimaxAgent, make_agent
from urgym.agents.expectimax import win_score

from tests.agents import reference_search
from tests.agents.positions import decision_positions
from urgym import Position


@pytest.mark.parametrize("rules_name", ["finkel", "masters", "blitz", "aseb"])
@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_pruned_search_matches_the_plain_reference(rules_name, depth):
    """Values and moves equal a plain expectiminimax written from the definition."""
    agent = ExpectimaxAgent(depth=depth)
    count = 12 if depth < 4 else 6
    for position, roll in decision_positions(rules_name, count, seed=depth):
        win = win_score(position.rules)
        ref_move, ref_values = reference_search.best_move(position, roll, depth, win)
        result = agent.search(position, roll)
        best = max(ref_values.values())
        assert math.isclose(result.values[result.move], best, rel_tol=0, abs_tol=1e-9)
        near_ties = [m for m, v in ref_values.items() if abs(v - best) <= 1e-9]
        assert result.move == ref_move or result.move in near_ties
        for move, value in result.values.items():
            # Pruning may leave a move it proved worse at -inf; every other value is exact.
            if value != -math.inf:
                assert math.isclose(value, ref_values[move], rel_tol=0, abs_tol=1e-9)
            else:
                assert ref_values[move] <= best + 1e-9
        exact = agent.search(position, roll, all_values=True)
        assert exact.move == result.move
        for move, value in exact.values.items():
            assert math.isclose(value, ref_values[move], rel_tol=0, abs_tol=1e-9)


@pytest.mark.parametrize("rules_name", ["finkel", "masters"])
def test_pruning_never_changes_the_move_or_value_at_depth_5(rules_name):
    pruned = ExpectimaxAgent(depth=5)
    plain = ExpectimaxAgent(depth=5, prune=False)
    for position, roll in decision_positions(rules_name, 8, seed=11):
        a = pruned.search(position, roll)
        b = plain.search(position, roll)
        assert a.move == b.move
        assert a.values[a.move] == pytest.approx(b.values[b.move], abs=1e-9)
        assert a.nodes <= b.nodes


def test_pruning_saves_work_at_depth_5():
    pruned = ExpectimaxAgent(depth=5)
    plain = ExpectimaxAgent(depth=5, prune=False)
    positions = decision_positions("finkel", 8, seed=5)
    assert sum(pruned.search(p, r).nodes for p, r in positions) < sum(plain.search(p, r).nodes for p, r in positions)


def test_a_forced_move_is_played_without_search():
    agent = ExpectimaxAgent(depth=7)
    start = Position.start("finkel")
    assert agent.select_move(start, 2) == 0
    assert agent.search_stats(start.rules) == (0, 0, 0, 0)


def test_depth_one_takes_the_largest_advancement_gain():
    # Light 3 -> 6 captures dark's piece there: a gain of 3 + 6, against 3 for any other move.
    position = Position.from_pieces("finkel", light=[1, 3], dark=[6], light_home=5, dark_home=6)
    result = ExpectimaxAgent(depth=1).search(position, 3, all_values=True)
    assert result.move == 3
    assert result.values[3] - result.values[1] == pytest.approx(6.0)


def test_deterministic_and_reusable_across_rule_sets():
    agent = ExpectimaxAgent(depth=4)
    finkel = decision_positions("finkel", 3, seed=2)
    first = [agent.select_move(p, r) for p, r in finkel]
    masters = decision_positions("masters", 3, seed=2)
    [agent.select_move(p, r) for p, r in masters]
    assert [agent.select_move(p, r) for p, r in finkel] == first
    assert [ExpectimaxAgent(depth=4).select_move(p, r) for p, r in finkel] == first


@pytest.mark.parametrize("bad", [0, -1, 31, 2.5, True, "7"])
def test_rejects_a_bad_depth(bad):
    with pytest.raises(ValueError, match="depth must be an integer from 1 to 30"):
        ExpectimaxAgent(depth=bad)


def test_no_decision_to_make_is_an_error():
    with pytest.raises(ValueError, match="no legal move"):
        make_agent("expectimax:2").select_move(Position.start("finkel"), 0)


@pytest.mark.parametrize(("depth", "count"), [(2, 300), (5, 150), (7, 50)])
def test_a_batch_searched_on_threads_plays_the_moves_of_searches_one_at_a_time(depth, count):
    """A batch searched on two threads, each with its own table, plays the moves of single fresh searches."""
    from urgym.batch import Decisions

    asked = decision_positions("finkel", count, seed=4)
    one_at_a_time = [ExpectimaxAgent(depth=depth, threads=1, tt_bits=12).search(p, r).move for p, r in asked]
    batched = ExpectimaxAgent(depth=depth, threads=2).select_moves(asked[0][0].rules, Decisions.of_positions(asked))
    assert batched.tolist() == one_at_a_time
