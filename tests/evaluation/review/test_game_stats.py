"""Game-tree statistics: counting rules checked on a game counted by hand, and the stats command."""

import json
import math

import pytest
from urgym.commands.stats import main as stats_main
from urgym.evaluation.review.game_stats import game_tree_stats

from urgym import Game, GameStep, get_rules
from urgym.records import GameRecord


def test_a_game_counted_by_hand():
    # finkel, 1 piece: light 4 (A1, rosette: again), 4 (B4, rosette: again), 4 (B8); dark 0 (passes);
    # light 3 bears off and wins. 5 rolls, 3 turns, 4 moves, no choice; every move forced.
    steps = (
        GameStep("light", 4, 0),
        GameStep("light", 4, 4),
        GameStep("light", 4, 8),
        GameStep("dark", 0, None),
        GameStep("light", 3, 12),
    )
    record = GameRecord(get_rules("finkel", 1), steps)
    assert record.winner == "light"
    stats = game_tree_stats([record])
    assert stats.n == {"rolls": 2.5, "turns": 1.5, "moves": 2.0, "choices": 0.0}
    assert stats.b["rolls"] == 4 / 5 and stats.b["rolls_pass_1"] == 1.0 and stats.b["moves"] == 1.0
    assert math.isnan(stats.b["choices"])
    assert stats.c == 5
    assert stats.complexity_log10("moves", "rolls") == pytest.approx(2.5 * math.log10(5))


def test_countings_are_ordered_and_unfinished_games_refused():
    records = []
    for g in range(10):
        game = Game("masters", seed=1, game=g, pieces=3)
        while not game.is_over:
            game.play(game.legal_moves[-1])
        records.append(GameRecord.from_game(game))
    stats = game_tree_stats(records)
    assert stats.c == 4  # masters' dice never show 0
    assert stats.n["rolls"] >= stats.n["moves"] >= stats.n["choices"] and stats.n["turns"] <= stats.n["rolls"]
    assert stats.b["rolls"] <= stats.b["rolls_pass_1"] <= stats.b["moves"] <= stats.b["choices"]
    unfinished = Game("finkel", seed=0)
    unfinished.play(unfinished.legal_moves[0])
    with pytest.raises(ValueError, match="unfinished"):
        game_tree_stats([GameRecord.from_game(unfinished)])
    with pytest.raises(ValueError, match="different rules"):
        game_tree_stats([records[0], GameRecord.from_game(unfinished)])


def test_stats_command_from_self_play_and_from_records(finkel3_table, tmp_path, capsys):
    out_json = tmp_path / "stats.json"
    assert (
        stats_main(
            [
                "--pieces",
                "3",
                "--games",
                "40",
                "--workers",
                "1",
                "--no-progress",
                "--save-games",
                str(tmp_path / "games"),
                "--json",
                str(out_json),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "paper" not in text.split("turns per player")[1].splitlines()[0]  # 3 pieces: not the paper's rules
    assert "positions (exact" in text
    played = json.loads(out_json.read_text())
    assert stats_main(["--pieces", "3", "--records", str(tmp_path / "games"), "--json", str(out_json)]) == 0
    again = json.loads(out_json.read_text())
    assert again["N"] == played["N"] and again["b"] == played["b"] and again["games"] == 40
    with pytest.raises(SystemExit) as info:
        stats_main(["--records", str(tmp_path / "empty-folder")])
    assert info.value.code == 2
