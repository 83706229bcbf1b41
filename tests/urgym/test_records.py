"""Game records: written from a Game, saved and loaded, replayed; bad records name their first bad entry."""

import json

import numpy as np
import pytest

from urgym import Game, Position
from urgym.records import GameRecord


def finished_game(seed=0, rules="finkel", pieces=3):
    game = Game(rules, seed=seed, pieces=pieces)
    rng = np.random.default_rng(seed)
    while not game.is_over:
        game.play(game.legal_moves[int(rng.integers(len(game.legal_moves)))])
    return game


@pytest.mark.parametrize("rules", ["finkel", "blitz", "masters", "murray"])
def test_save_load_replay(tmp_path, rules):
    game = finished_game(rules=rules)
    record = GameRecord.from_game(game, {"light": "random", "dark": "random"})
    again = GameRecord.load(record.save(tmp_path / "game.json"))
    assert again == record
    assert again.replay() == game.position and again.winner == game.winner
    assert len(again.positions()) == len(game.history) + 1
    data = json.loads((tmp_path / "game.json").read_text())
    assert data["format"] == "urgym-game-record" and data["version"] == 1 and data["seed"] == 0
    if 0 in game.rules.rolls:  # a roll of 0 never has a move: every such game has passes, and records them
        assert any(step["move"] is None for step in data["steps"])


def corrupt(record, index, **change):
    data = record.to_dict()
    data["steps"][index].update(change)
    return data


def test_first_bad_entry_is_named():
    record = GameRecord.from_game(finished_game())
    moves = [i for i, s in enumerate(record.steps) if s.move is not None]
    i = moves[3]
    bad_move = 13 if record.steps[i].move != 13 else 12
    with pytest.raises(ValueError, match=rf"step {i} \(.*\): illegal move {bad_move}"):
        GameRecord.from_dict(corrupt(record, i, move=bad_move))
    with pytest.raises(ValueError, match=rf"step {i} .*it is \w+'s roll"):
        GameRecord.from_dict(corrupt(record, i, side="dark" if record.steps[i].side == "light" else "light"))
    with pytest.raises(ValueError, match=rf"step {i} .*roll 9 is impossible"):
        GameRecord.from_dict(corrupt(record, i, roll=9))
    with pytest.raises(ValueError, match=rf"step {i} .*must move if they can"):
        GameRecord.from_dict(corrupt(record, i, move=None))
    with pytest.raises(ValueError, match=r"step 2 .*a step is"):
        data = record.to_dict()
        data["steps"][2] = {"side": "light"}
        GameRecord.from_dict(data)
    data = record.to_dict()
    data["winner"] = "dark" if record.winner == "light" else "light"
    with pytest.raises(ValueError, match="the record says"):
        GameRecord.from_dict(data)
    data = record.to_dict()
    data["steps"].append(dict(data["steps"][-1]))
    with pytest.raises(ValueError, match="already over"):
        GameRecord.from_dict(data)


def test_bad_files_name_the_file(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("{not json")
    with pytest.raises(ValueError, match=r"x\.json"):
        GameRecord.load(path)
    path.write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(ValueError, match="not a urgym game record"):
        GameRecord.load(path)
    path.write_text(json.dumps({"format": "urgym-game-record", "version": 7}))
    with pytest.raises(ValueError, match="version 7"):
        GameRecord.load(path)


def test_unfinished_record_replays_to_its_position():
    game = Game("finkel", seed=2)
    for _ in range(10):
        game.play(game.legal_moves[0])
    record = GameRecord.from_game(game)
    assert record.replay() == game.position and record.winner is None
    assert record.positions()[0] == Position.start("finkel")


def _valid():
    return GameRecord.from_game(finished_game(pieces=2), {"light": "a", "dark": "b"}).to_dict()


HOSTILE_RECORDS = [  # (what changes, the message naming it)
    ({"version": True}, "game record version True"),
    ({"version": 1.0}, "game record version 1.0"),
    ({"seed": -1}, "seed must be an integer from 0 to 2\\*\\*64 - 1, got -1"),
    ({"seed": 2**64}, "seed must be an integer from 0 to 2\\*\\*64 - 1"),
    ({"seed": 1.5}, "seed must be an integer"),
    ({"seed": "7"}, "seed must be an integer"),
    ({"game": True}, "game must be an integer"),
    ({"players": {"light": 3, "dark": "b"}}, "light player's name must be a string, got 3"),
    ({"players": ["a", "b"]}, "players must be an object"),
    ({"players": {"light": "a", "referee": "c"}}, "players are 'light' and 'dark'"),
    ({"players": {"light": "x" * 201}}, "201 characters"),
    ({"players": {"light": "evil\x1b[2J"}}, "control character"),
    ({"players": {"dark": "line\nbreak"}}, "control character"),
    ({"steps": 5}, "steps must be a list, got int"),
    ({"winner": "nobody"}, "winner must be 'light', 'dark' or null"),
    ({"extra": 1}, "unknown fields \\['extra'\\]"),
    ({"rules": "finkel"}, "rule set data must be a JSON object"),
]


@pytest.mark.parametrize(("change", "message"), HOSTILE_RECORDS, ids=[str(c) for c, _ in HOSTILE_RECORDS])
def test_hostile_record_fields_are_refused(change, message):
    with pytest.raises(ValueError, match=message):
        GameRecord.from_dict({**_valid(), **change})


@pytest.mark.parametrize(
    ("rules_change", "message"),
    [
        ({"name": "../../escaped"}, "invalid rule set name"),
        ({"name": "/etc/x"}, "invalid rule set name"),
        ({"safe_rosettes": "no"}, "safe_rosettes must be true or false, got 'no'"),
        ({"roll_probabilities": [0.2, 0.2, 0.2, 0.2, float("nan")]}, "must be finite"),
    ],
)
def test_hostile_rules_in_a_record_are_refused(rules_change, message):
    data = _valid()
    data["rules"] = {**data["rules"], **rules_change}
    with pytest.raises(ValueError, match=message):
        GameRecord.from_dict(data)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"format": "urgym-game-record", "format": "x"}', "appears twice"),
        ("[" * 50_000 + "]" * 50_000, "nested too deeply"),
        ('{"format": "urgym-game-record", "version": NaN}', "NaN is not a JSON number"),
    ],
)
def test_hostile_json_files_name_the_file(tmp_path, text, message):
    path = tmp_path / "hostile.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"hostile\.json: .*{message}"):
        GameRecord.load(path)
    path.write_bytes(b"\xff\x00binary")
    with pytest.raises(ValueError, match=r"hostile\.json: not a game record: it is not UTF-8"):
        GameRecord.load(path)


def test_seeds_up_to_2_64_are_kept():
    data = _valid()
    data.update(seed=2**64 - 1, game=2**63 - 1)
    record = GameRecord.from_dict(data)
    assert (record.seed, record.game) == (2**64 - 1, 2**63 - 1)
    with pytest.raises(ValueError, match="game must be an integer from 0 to 2\\*\\*63 - 1"):
        GameRecord.from_dict({**data, "game": 2**63})
