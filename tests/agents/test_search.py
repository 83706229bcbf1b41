"""The one expectiminimax: every leaf evaluation on one value frame, one meaning of depth."""

import math

import numpy as np
import pytest
from urgym.agents import search
from urgym.agents.expectimax import win_score

from tests.agents import reference_search
from tests.agents.positions import decision_positions
from urgym import core
from urgym.core import geometry


def heuristic_context(rules, depth, prune=True):
    return search.search_context(geometry(rules), search.Heuristic(win_score(rules)), depth, 12, prune)


@pytest.mark.parametrize("rules_name", ["finkel", "masters"])
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_a_chance_nodes_value_is_the_advancement_search_mapped_onto_0_1(rules_name, depth):
    """W(s, d) of the heuristic is (A + w) / (2 w) of the plain advancement search, A its value.

    The affine map that keeps every choice, and a change of side is 1 - v.
    """
    for position, _ in decision_positions(rules_name, 6, seed=depth):
        win = win_score(position.rules)
        expected = (reference_search.chance_value(position, depth, win) + win) / (2 * win)
        for prune in (True, False):
            ctx = heuristic_context(position.rules, depth, prune)
            assert search.chance_value(position.code, depth, 0.0, 1.0, ctx) == pytest.approx(expected, abs=1e-12)


def test_the_leaf_value_of_a_finished_game_is_a_loss_for_the_side_to_move():
    from urgym import Position

    over = Position.from_pieces("finkel", light=[], dark=[1], light_home=0, dark_home=0, turn="dark")
    assert over.is_over
    for evaluation in (search.Heuristic(win_score(over.rules)),):
        ctx = search.search_context(geometry(over.rules), evaluation, 1)
        assert search.leaf_value(over.code, ctx) == 0.0


def test_a_move_searched_to_depth_d_is_q_of_its_chance_node():
    """move_value(d) = 1 - W(s', d) for a move that passes the turn, W(s', d) for one that keeps it."""
    for position, roll in decision_positions("finkel", 8, seed=4):
        ctx = heuristic_context(position.rules, 2, prune=False)
        for move in position.legal_moves(roll):
            nxt, flags = core.apply_move(position.code, roll, move, geometry(position.rules))
            value = search.move_value(position.code, roll, move, 2, 0.0, ctx)
            if flags & core.WIN:
                assert value == 1.0
                continue
            w = search.chance_value(nxt, 2, 0.0, 1.0, ctx)
            assert math.isclose(value, w if flags & core.EXTRA_ROLL else 1.0 - w, abs_tol=1e-15)


def test_choose_takes_the_lowest_source_among_ties_and_marks_pruned_moves():
    for position, roll in decision_positions("finkel", 20, seed=7):
        moves = np.array(position.legal_moves(roll), dtype=np.int64)
        ctx = heuristic_context(position.rules, 2)
        values = np.zeros(core.MAX_MOVES)
        exact = np.zeros(core.MAX_MOVES)
        best = search.choose(position.code, roll, moves, len(moves), 2, ctx, values, False)
        search.choose(position.code, roll, moves, len(moves), 2, ctx, exact, True)
        top = exact[: len(moves)].max()
        assert best == min(k for k in range(len(moves)) if exact[k] >= top - search.TIE)
        for k in range(len(moves)):
            assert values[k] == -np.inf or values[k] == pytest.approx(exact[k], abs=1e-12)
