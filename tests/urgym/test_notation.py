"""RGN (RoyalUr's game notation): written by hand from the rules, round trips, and errors naming the action."""

import numpy as np
import pytest

from urgym import RULE_SET_NAMES, Game, GameStep, Position
from urgym.notation import move_text
from urgym.records import GameRecord


def random_game(rules, seed, pieces=None):
    game = Game(rules, seed=seed, pieces=pieces)
    rng = np.random.default_rng(seed)
    while not game.is_over:
        game.play(game.legal_moves[int(rng.integers(len(game.legal_moves)))])
    return game


def test_moves_are_written_with_their_tiles_marks_and_entry_and_exit_tiles():
    start = Position.start("finkel")
    assert move_text(start, 4, 0) == "a5a1+"  # enters onto A1, a rosette (Bell's path starts at A4, from a5)
    assert move_text(start, 2, 0) == "a5a3"
    assert move_text(start, 0, None) == "0-"
    # Dark's piece on B2 (position 6) is captured by light's piece moving from A1 (position 4) with a 2.
    position = Position.from_pieces("finkel", light=[4], dark=[6], light_home=6, dark_home=6)
    assert move_text(position, 2, 4) == "a1b2x"
    # Bearing off from A7 (position 14) with a 1 leaves onto a6; dark bears off onto c6.
    assert move_text(Position.from_pieces("finkel", light=[14], dark=[1], light_home=0, dark_home=6), 1, 14) == "a7a6"
    dark_to_move = Position.from_pieces("finkel", light=[1], dark=[13], light_home=6, dark_home=0, turn="dark")
    assert move_text(dark_to_move, 2, 13) == "c8c6"
    with pytest.raises(ValueError, match="legal moves"):
        move_text(start, 2, None)


def test_a_hand_written_game_start_reads_to_its_steps():
    text = '[Rules "finkel"]\n[Pieces "7"]\n[Light "ann"]\n\n1. a5a1+ a5a3 / 0-\n2. a1b2 / c5c2\n'
    record = GameRecord.from_rgn(text)
    assert record.players == {"light": "ann", "dark": ""}
    assert record.steps == (
        GameStep("light", 4, 0),
        GameStep("light", 2, 0),
        GameStep("dark", 0, None),
        GameStep("light", 2, 4),
        GameStep("dark", 3, 0),
    )
    assert record.seed is None


@pytest.mark.parametrize("rules", RULE_SET_NAMES)
def test_round_trip_on_every_rule_set(rules, tmp_path):
    for seed in range(6):
        game = random_game(rules, seed)
        record = GameRecord.from_game(game, {"light": 'say "hi"\\', "dark": 'tab]\\n[Rules "x"]'})
        text = record.to_rgn()
        assert text.rstrip().endswith("#")
        again = GameRecord.from_rgn(text)
        assert again.steps == record.steps and again.players == record.players
        assert (again.seed, again.game) == (record.seed, record.game)
        assert GameRecord.load(record.save(tmp_path / "g.rgn")).steps == record.steps


def test_unfinished_games_round_trip_without_an_end_mark():
    game = Game("masters", seed=3)
    for _ in range(12):
        game.play(game.legal_moves[-1])
    record = GameRecord.from_game(game)
    assert "#" not in record.to_rgn()
    assert GameRecord.from_rgn(record.to_rgn()).steps == record.steps


def test_rules_come_from_the_metadata_or_the_caller():
    body = "\n1. a5a3 / c5c4\n"
    with pytest.raises(ValueError, match="names no rule set"):
        GameRecord.from_rgn(body)
    assert len(GameRecord.from_rgn(body, "finkel").steps) == 2
    with pytest.raises(ValueError, match=r"not 'blitz"):
        GameRecord.from_rgn('[Rules "finkel"]\n' + body, "blitz")
    with pytest.raises(ValueError, match="unknown rule set"):
        GameRecord.from_rgn('[Rules "chess"]\n' + body)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("1. a5a3 / c5c4 a5a2", "action 3 ('a5a2'): light's turn starts here, so '2.' must come before it"),
        ("1. a5a3 / c2c4", "action 2 ('c2c4'): dark has no piece on c2"),
        ("1. a5a3 / c5b2", "no roll of"),
        ("1. a5a3x", "does not capture"),
        ("1. a5a1", "lands on a rosette"),
        ("1. 2-", "legal moves"),
        ("1. a5a3#", "the game goes on"),
        ("1. e4e5", "light has no piece on e4"),
        ("1. a5", "not an action"),
    ],
)
def test_bad_actions_are_named(body, message):
    with pytest.raises(ValueError, match="RGN action") as info:
        GameRecord.from_rgn('[Rules "finkel"]\n\n' + body)
    assert message in str(info.value)


def test_actions_after_the_end_and_bad_metadata_are_refused():
    record = GameRecord.from_game(random_game("finkel", 1, pieces=1))
    with pytest.raises(ValueError, match=r"more actions follow|already over"):
        GameRecord.from_rgn(record.to_rgn().rstrip() + " a5a3")
    with pytest.raises(ValueError, match="metadata line 1"):
        GameRecord.from_rgn("[Rules finkel]\n\n1. a5a3")
    with pytest.raises(ValueError, match="Pieces"):
        GameRecord.from_rgn('[Rules "finkel"]\n[Pieces "many"]\n\n1. a5a3')


def _rgn(seed=5):
    return GameRecord.from_game(random_game("finkel", seed, pieces=3), {"light": "a", "dark": "b"}).to_rgn()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace('[Pieces "3"]', '[Pieces "3"]\n[Pieces "3"]'), "'Pieces' is given twice"),
        (lambda t: t.replace('[Light "a"]', '[Light "a"]\n[Light "mallory"]'), "'Light' is given twice"),
        (lambda t: t.replace("\n2. ", "\n3. ", 1), "light's turn 2 is numbered '2.'"),
        (lambda t: t.replace("\n1. ", "\n0. ", 1), "light's turn 1 is numbered '1.'"),
        (lambda t: t.replace(" / ", " ", 1), "dark's turn starts here, so '/' must come before it"),
        (lambda t: t.replace('[Seed "5"]', '[Seed "-3"]'), "Seed '-3' is not a whole number"),
        (lambda t: t.replace('[Seed "5"]', f'[Seed "{2**64}"]'), "Seed must be an integer from 0 to 2\\*\\*64 - 1"),
        (lambda t: t.replace('[Game "0"]', '[Game "x"]'), "Game 'x' is not a whole number"),
        (lambda t: t.replace('[Pieces "3"]', '[Pieces "\u0663"]'), "is not a number of pieces"),
    ],
)
def test_hostile_rgn_is_refused(edit, message):
    text = _rgn()
    assert GameRecord.from_rgn(text) is not None
    with pytest.raises(ValueError, match=message):
        GameRecord.from_rgn(edit(text))


def test_a_turn_marker_inside_a_turn_is_refused():
    text = '[Rules "finkel"]\n\n1. a5a1+ 2. a5a3 / 0-\n'  # the rosette keeps light's turn going
    with pytest.raises(ValueError, match="light's turn goes on there"):
        GameRecord.from_rgn(text)


@pytest.mark.parametrize("text", [None, 42, b'[Rules "finkel"]'])
def test_rgn_text_must_be_a_string(text):
    with pytest.raises(ValueError, match="RGN text must be a string"):
        GameRecord.from_rgn(text)


def test_custom_rules_round_trip_or_are_refused():
    from urgym import Rules, get_rules

    finkel = get_rules("finkel")
    impostor = Rules.custom("finkel", path=list(reversed(finkel.path)), rosettes=sorted(finkel.rosettes), pieces=2)
    game = Game(impostor, seed=0)
    while not game.is_over:
        game.play(game.legal_moves[0])
    with pytest.raises(ValueError, match="custom rules named 'finkel'"):
        GameRecord.from_game(game).to_rgn()
    renamed = Rules.custom("reversed", path=list(reversed(finkel.path)), rosettes=sorted(finkel.rosettes), pieces=2)
    game = Game(renamed, seed=0)
    while not game.is_over:
        game.play(game.legal_moves[0])
    record = GameRecord.from_game(game)
    assert GameRecord.from_rgn(record.to_rgn(), renamed) == record  # read back by the caller's definition
    with pytest.raises(ValueError, match="unknown rule set 'reversed'"):
        GameRecord.from_rgn(record.to_rgn())
