"""Numbers and sizes from strangers.

Only exact integers become codes and rolls, only ASCII digits of bounded length become RGN numbers, and records longer
than any real game are refused, each with one short line.
"""

from __future__ import annotations

import json

import pytest

from urgym import GameRecord, Position, get_rules
from urgym import records as records_module
from urgym.checks import integer_array
from urgym.game import MAX_RECORD_STEPS

CODE = Position.start("finkel").code


@pytest.mark.parametrize("bad", [float(CODE), CODE * 1.0, True, "12", [1.5], 2**63, [CODE, 2**64], None, {"a": 1}])
def test_integer_arrays_take_exact_integers_only(bad):
    with pytest.raises(ValueError, match="code must be integers"):
        integer_array(bad, "code")


def test_integer_arrays_keep_integers():
    assert integer_array(CODE, "code").tolist() == CODE
    assert integer_array([1, 2**63 - 1], "code").tolist() == [1, 2**63 - 1]


@pytest.mark.parametrize(
    ("code", "roll", "message"),
    [
        (float(CODE), None, "code must be integers"),
        (True, None, "code must be integers"),
        ("12", None, "code must be integers"),
        (2**63, None, "code must be integers from"),
        (CODE, 2.5, "roll must be integers"),
        (CODE, True, "roll must be integers"),
        (CODE, "2", "roll must be integers"),
        ([CODE, CODE], [1, 2, 3], "roll must be one roll or one per code"),
    ],
)
def test_jax_from_code_refuses_what_is_not_an_exact_integer(code, roll, message):
    jax_module = pytest.importorskip("urgym.jax", reason="the jax extra is not installed")
    with pytest.raises(ValueError, match=message):
        jax_module.from_code("finkel", code, roll)


RGN = '[Rules "finkel"]\n[Pieces "2"]\n\n1. a5a4\n'


def test_an_rgn_file_may_start_with_a_byte_order_mark(tmp_path):
    assert GameRecord.from_rgn("\ufeff" + RGN).rules == get_rules("finkel", 2)
    path = tmp_path / "game.rgn"
    path.write_bytes("\ufeff".encode() + RGN.encode())
    assert len(GameRecord.load(path).steps) == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (RGN.replace('[Pieces "2"]', '[Pieces "2"]\n[Seed "\u0663"]'), "Seed '٣' is not a whole number (ASCII digits"),
        (RGN.replace('[Pieces "2"]', '[Pieces "2"]\n[Seed "' + "1" * 5000 + '"]'), "(5,000 characters) is not a whole"),
        (RGN.replace('"2"', '"' + "9" * 5000 + '"'), "Pieces '99999"),
        (RGN.replace("1. a5a4", "1" * 5000 + ". a5a4"), "RGN action 1 ('1111"),
        (RGN.replace("1. a5a4", "\u0661. a5a4"), "RGN action 1 ('١.')"),
        (RGN.replace("a5a4", "a\u0665a4"), "RGN action 1"),
    ],
)
def test_rgn_numbers_are_ascii_digits_of_bounded_length(text, message):
    with pytest.raises(ValueError, match=None) as caught:
        GameRecord.from_rgn(text)
    assert message in str(caught.value) and len(str(caught.value)) < 300, str(caught.value)


def test_records_longer_than_any_real_game_are_refused(tmp_path, monkeypatch):
    step = {"side": "light", "roll": 0, "move": None}
    data = {
        "format": records_module.RECORD_FORMAT,
        "version": 1,
        "rules": get_rules("finkel", 2).to_dict(),
        "players": {},
        "steps": [step] * (MAX_RECORD_STEPS + 1),
    }
    with pytest.raises(ValueError, match=f"the record has {MAX_RECORD_STEPS + 1:,} rolls, more than any real game"):
        GameRecord.from_dict(data)
    passes = " ".join(f"{turn}. 0- / 0-" for turn in range(1, MAX_RECORD_STEPS // 2 + 2))
    with pytest.raises(ValueError, match="more than any real game"):
        GameRecord.from_rgn('[Rules "finkel"]\n\n' + passes)
    path = tmp_path / "big.json"
    path.write_text(json.dumps(data))
    monkeypatch.setattr(records_module, "MAX_RECORD_BYTES", 1000)
    with pytest.raises(
        ValueError, match=r"big.json: not a game record: more than [\d,]+ bytes, more than any real game's"
    ):
        GameRecord.load(path)
