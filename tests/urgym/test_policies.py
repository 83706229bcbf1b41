import numpy as np
import pytest

from urgym import Position, core, get_rules
from urgym.core import geometry
from urgym.simulate import policy_id


def choose(policy, p, roll):
    moves = np.array(p.legal_moves(roll) + (0,) * core.MAX_MOVES, dtype=np.int64)
    rng = np.zeros(1, dtype=np.uint64)
    return core.policy_choice(policy_id(policy), p.code, roll, moves, len(p.legal_moves(roll)), geometry(p.rules), rng)


@pytest.fixture
def position():
    # Light: pieces at 2 (can reach the rosette at 4), 5 (can capture dark at 7) and 10.
    return Position.from_pieces(get_rules("finkel", 5), light=[2, 5, 10], dark=[7], light_home=2, dark_home=4)


def test_greedy_prefers_capture_then_rosette_then_most_advanced(position):
    assert choose("greedy", position, 2) == 5  # capture on 7
    no_capture = Position.from_pieces(get_rules("finkel", 5), light=[2, 5, 10], dark=[], light_home=2, dark_home=5)
    assert choose("greedy", no_capture, 2) == 2  # rosette on 4
    assert choose("greedy", no_capture, 1) == 10  # otherwise the most advanced piece


def test_first_and_last(position):
    assert choose("first", position, 1) == 0
    assert choose("last", position, 1) == 10
