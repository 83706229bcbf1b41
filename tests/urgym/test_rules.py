import itertools
from fractions import Fraction

import pytest

from urgym import DICE, RULE_SET_NAMES, Rules, get_rules


def test_all_named_rule_sets_exist_with_their_piece_counts():
    expected = {"finkel": 7, "blitz": 5, "masters": 7, "aseb": 5, "murray": 7, "skiriuk": 7}
    assert set(RULE_SET_NAMES) == set(expected)
    for name, pieces in expected.items():
        assert get_rules(name).pieces == pieces
        assert get_rules(name.upper()).name == name


@pytest.mark.parametrize(
    "name, length, shared, rosettes",
    [
        ("finkel", 14, tuple(range(5, 13)), (4, 8, 14)),
        ("blitz", 16, tuple(range(5, 17)), (4, 8, 12, 16)),
        ("masters", 16, tuple(range(5, 17)), (4, 8, 12, 16)),
        ("aseb", 16, tuple(range(5, 17)), (4, 8, 12, 16)),
        ("skiriuk", 23, tuple(range(5, 24)), (4, 8, 12, 16, 20)),
        ("murray", 27, tuple(range(1, 28)), (4, 8, 12, 16, 20, 24)),
    ],
)
def test_paths_match_rules_md(name, length, shared, rosettes):
    rules = get_rules(name)
    assert rules.length == length
    assert rules.shared_positions == shared
    assert rules.rosette_positions == rosettes


def test_flags_match_rules_md():
    table = {  # safe rosettes, rosette extra roll, capture extra roll
        "finkel": (True, True, False),
        "blitz": (False, True, True),
        "masters": (False, True, False),
        "aseb": (True, True, False),
        "murray": (True, True, False),
        "skiriuk": (True, True, False),
    }
    for name, flags in table.items():
        r = get_rules(name)
        assert (r.safe_rosettes, r.rosette_extra_roll, r.capture_extra_roll) == flags


def _enumerate_dice(n_dice, zero_as):
    counts = {}
    for tips in itertools.product((0, 1), repeat=n_dice):
        roll = sum(tips) or zero_as
        counts[roll] = counts.get(roll, 0) + Fraction(1, 2**n_dice)
    return counts


def test_four_binary_dice_match_enumeration():
    counts = _enumerate_dice(4, 0)
    for name in ("finkel", "blitz", "aseb", "murray", "skiriuk"):
        probs = get_rules(name).roll_probabilities
        assert [Fraction(p) for p in probs] == [counts.get(r, 0) for r in range(5)]
    mean = sum(r * p for r, p in enumerate(DICE["four-binary"]))
    assert mean == 2
    assert DICE["four-binary"][1] + DICE["four-binary"][3] == 0.5 > DICE["four-binary"][2] == 3 / 8


def test_three_binary_dice_zero_counts_as_four():
    counts = _enumerate_dice(3, 4)
    probs = get_rules("masters").roll_probabilities
    assert [Fraction(p) for p in probs] == [counts.get(r, 0) for r in range(5)]
    assert probs[0] == 0 and get_rules("masters").rolls == (1, 2, 3, 4)


def test_piece_count_override_and_errors():
    assert get_rules("finkel", pieces=2).pieces == 2
    assert get_rules("finkel", pieces=2).path == get_rules("finkel").path
    for bad in (0, 16, -1, "3", 2.0, True):
        with pytest.raises(ValueError, match="pieces must be an integer from 1 to 15"):
            get_rules("finkel", pieces=bad)


def test_unknown_rule_set_names_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown rule set 'chess'.*finkel.*skiriuk"):
        get_rules("chess")


def test_custom_rule_set():
    rules = Rules.custom(
        "short", ["A2", "A1", "B1", "B2", "B3"], ["A1", "B3"], pieces=2, dice=[0.25, 0.5, 0.25], capture_extra_roll=True
    )
    assert rules.length == 5 and rules.max_roll == 2
    assert rules.shared_positions == (3, 4, 5)
    assert rules.rosette_positions == (2, 5)
    assert rules.dark_path == ("C2", "C1", "B1", "B2", "B3")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(path=[]), "the path is empty"),
        (dict(path=["A1", "D2"]), "bad tile names"),
        (dict(path=["A1", "A1"]), "stays on tile A1"),
        (dict(path=[f"B{i}" for i in range(1, 29)]), "at most 27"),
        (dict(dice=[0.5, 0.6]), "sum to 1"),
        (dict(dice=[1.0, 0.0]), "never roll a positive number"),
        (dict(dice="five-binary"), "unknown dice 'five-binary'; known dice: four-binary"),
        (dict(pieces=0), "pieces must be an integer"),
        (dict(dice=[float("nan")] * 5), "must be finite"),
        (dict(dice=[float("inf"), 0, 0, 0, 0]), "must be finite"),
        (dict(dice=[-0.5, 0.5, 0.5, 0.5, 0]), "non-negative"),
        (dict(dice=["0.5", "0.5"]), "dice must be a name"),
        (dict(name="../../escaped"), "invalid rule set name"),
        (dict(name="/abs/path"), "invalid rule set name"),
        (dict(name=""), "invalid rule set name"),
        (dict(name="x" * 41), "invalid rule set name"),
        (dict(name="<img src=x>"), "invalid rule set name"),
        (dict(safe_rosettes="no"), "safe_rosettes must be true or false"),
        (dict(capture_extra_roll=1), "capture_extra_roll must be true or false"),
    ],
)
def test_inconsistent_custom_rule_sets_are_rejected(kwargs, message):
    args = dict(name="bad", path=["A1", "B1", "B2"], rosettes=["A1"], pieces=2, dice="four-binary")
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        Rules.custom(**args)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"name": "../../escaped"}, "invalid rule set name"),
        ({"safe_rosettes": "no"}, "safe_rosettes must be true or false, got 'no'"),
        ({"rosette_extra_roll": "false"}, "rosette_extra_roll must be true or false"),
        ({"roll_probabilities": [0.0625, 0.25, "0.375", 0.25, 0.0625]}, "must hold numbers"),
        ({"roll_probabilities": [0.0625, 0.25, True, 0.25, 0.0625]}, "must hold numbers"),
        ({"path": "A4A3"}, "'path' must be a list"),
        ({"rosettes": [["A1"]]}, "bad tile name"),
        ({"pieces": 2.0}, "pieces must be an integer"),
        ({"color": "red"}, "unknown fields \\['color'\\]"),
    ],
)
def test_rules_from_data_are_read_strictly(change, message):
    data = {**get_rules("finkel", 2).to_dict(), **change}
    with pytest.raises(ValueError, match=message):
        Rules.from_dict(data)


def test_rules_from_data_round_trip():
    for name in RULE_SET_NAMES:
        rules = get_rules(name)
        assert Rules.from_dict(rules.to_dict()) == rules
