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
