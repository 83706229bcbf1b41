"""How to play a rule set, in words made from its data."""

import dataclasses
import re

import pytest

from urgym import RULE_SET_NAMES, get_rules
from urgym.howto import dice_count, how_to_play, path_runs


def test_the_path_is_cut_into_straight_runs():
    assert path_runs(get_rules("finkel").path) == [("A4", "A1"), ("B1", "B8"), ("A8", "A7")]
    assert path_runs(get_rules("masters").path) == [
        ("A4", "A1"),
        ("B1", "B7"),
        ("C7", "C8"),
        ("B8", "B8"),
        ("A8", "A7"),
    ]
    # murray turns back along row B: a run never changes direction
    runs = path_runs(get_rules("murray").path)
    assert ("B7", "B1") in runs and ("B1", "B7") in runs


@pytest.mark.parametrize("name", RULE_SET_NAMES)
def test_every_rule_set_is_explained_from_its_own_data(name):
    rules = get_rules(name)
    text = dict(how_to_play(rules))
    assert list(text) == ["Goal", "The path", "The dice", "A move", "Capturing", "Rosettes"]
    assert f"Each player has {rules.pieces} pieces" in text["Goal"]
    assert f"{rules.length} tiles" in text["The path"]
    rosettes = {t for t in (*rules.path, *rules.dark_path) if t in rules.rosettes}
    assert all(t in text["Rosettes"] for t in rosettes)
    assert ("another roll" in text["Capturing"]) == rules.capture_extra_roll
    assert ("is safe" in text["Rosettes"]) == rules.safe_rosettes
    assert ("visits some tiles twice" in text["The path"]) == rules.visits_tiles_twice
    assert dice_count(rules) == (3 if name == "masters" else 4)
    assert ("Three tetrahedral dice" in text["The dice"]) == (name == "masters")


def test_custom_rules_are_explained_too():
    rules = dataclasses.replace(get_rules("finkel", 2), roll_probabilities=(0.0, 0.5, 0.5), name="custom")
    text = dict(how_to_play(rules))
    assert dice_count(rules) is None and "from 0 to 2, with chances 1: 1/2, 2: 1/2" in text["The dice"]
    assert "Each player has 2 pieces" in text["Goal"]


def test_a_tiny_chance_is_never_shown_as_zero():
    rules = dataclasses.replace(get_rules("finkel", 2), roll_probabilities=(0.0, 1e-9, 0.25, 0.75 - 1e-9), name="tiny")
    dice = dict(how_to_play(rules))["The dice"]
    assert "1: 1e-09" in dice and "2: 1/4" in dice and "3: 0.75" in dice
    assert re.search(r": 0(?![.\d])", dice) is None  # no chance above zero reads 0


def test_a_board_without_rosettes_says_so_and_promises_nothing_of_them():
    rules = dataclasses.replace(get_rules("finkel", 2), rosettes=frozenset(), name="plain")
    text = dict(how_to_play(rules))["Rosettes"]
    assert "no rosettes" in text and "another roll" not in text.replace("no tile gives another roll", "")
    assert "none" not in text
