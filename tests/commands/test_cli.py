import csv
import json
import re

import numpy as np
import pytest
from urgym.commands import evaluate as cli
from urgym.commands.review import main as review_main


def test_evaluate_an_agent_with_its_options(finkel3_table, tmp_path, capsys):
    out = tmp_path / "run"
    code = cli.main(
        [
            "--agent",
            "expectimax",
            "--depth",
            "2",
            "--pieces",
            "3",
            "--games",
            "20",
            "--positions",
            "30",
            "--workers",
            "1",
            "--json",
            str(out / "r.json"),
            "--csv",
            str(out / "r.csv"),
            "--plot",
            str(out / "r.png"),
            "--no-progress",
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "expectimax:depth=2 vs perfect" in text
    assert "position benchmark (test set v1, 30 positions)" in text
    data = json.loads((out / "r.json").read_text())
    agent = data["match"]["agents"][0]
    assert agent["agent"] == "expectimax:depth=2"
    assert agent["win_rate"]["games"] == 20
    assert data["position_benchmark"][0]["positions"] == 30
    rows = list(csv.DictReader((out / "r.csv").open()))
    assert [r["agent"] for r in rows] == ["expectimax:depth=2", "perfect"]
    assert float(rows[1]["positions_regret_mean"]) == 0.0
    assert (out / "r.png").read_bytes()[:4] == b"\x89PNG"
    assert not list(out.glob(".*tmp"))  # atomic writes leave no temporary files


def test_same_seed_same_output(finkel3_table, capsys):
    argv = [
        "--agent",
        "random",
        "--opponent",
        "greedy",
        "--pieces",
        "3",
        "--games",
        "40",
        "--positions",
        "20",
        "--workers",
        "1",
        "--seed",
        "9",
        "--no-progress",
    ]
    cli.main(argv)
    first = capsys.readouterr().out
    cli.main(argv)
    second = capsys.readouterr().out
    strip = [line for line in first.splitlines() if "games/s" not in line and "time per move" not in line]
    assert strip == [line for line in second.splitlines() if "games/s" not in line and "time per move" not in line]


def test_tournament(finkel3_table, tmp_path, capsys):
    cli.main(
        [
            "--tournament",
            "random,greedy,perfect",
            "--pieces",
            "3",
            "--games",
            "20",
            "--positions",
            "20",
            "--workers",
            "1",
            "--no-progress",
            "--csv",
            str(tmp_path / "t.csv"),
            "--plot",
            str(tmp_path / "t.svg"),
        ]
    )
    text = capsys.readouterr().out
    assert text.startswith("finkel, 3 pieces, 20 games per pair")
    assert "luck-adjusted win rate of row against column [95% interval]" in text
    assert "raw win rate of row against column" in text
    perfect_row = next(line for line in text.split("raw")[0].splitlines() if line.startswith("perfect"))
    cells = re.findall(r"(\d+\.\d)% \[([\d.]+), ([\d.]+)\]", perfect_row)  # a rate and its interval per column
    assert len(cells) == 2 and all(0 <= float(x) <= 100 for cell in cells for x in cell)  # shown within 0-100%
    rows = list(csv.DictReader((tmp_path / "t.csv").open()))
    assert len(rows) == 6 and all(float(r["luck_adjusted_low"]) <= float(r["luck_adjusted_win_rate"]) for r in rows)
    svg = (tmp_path / "t.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "luck-adjusted win rate" in svg
    assert "tournament: finkel, 3 pieces, 20 games per pair" in svg


def test_missing_table_with_no_solve_gives_the_command(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("URGYM_CACHE", str(tmp_path))  # its own cache: another test may have solved masters-2
    with pytest.raises(SystemExit) as stop:
        cli.main(["--agent", "greedy", "--rules", "masters", "--pieces", "2", "--no-solve", "--no-progress"])
    assert stop.value.code == 3
    assert "solve --rules masters --pieces 2" in capsys.readouterr().err


def test_missing_table_is_solved_after_saying_so(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("URGYM_CACHE", str(tmp_path))  # its own cache: another test may have solved blitz-2
    assert (
        cli.main(
            [
                "--agent",
                "greedy",
                "--rules",
                "blitz",
                "--pieces",
                "2",
                "--games",
                "10",
                "--positions",
                "10",
                "--workers",
                "1",
                "--no-progress",
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "No solved table for blitz (2 pieces) yet: solving it now" in err
    assert "solve --rules blitz --pieces 2" in err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--agent", "deep-blue"], "unknown agent 'deep-blue'"),
        (["--agent", "expectimax", "--breadth", "3"], "has no parameter 'breadth'"),
        (["--agent", "expectimax:3", "--depth", "4"], "not both"),
        (["--agent", "greedy", "--rules", "chess"], "unknown rule set 'chess'"),
        (["--agent", "greedy", "--games", "-1"], "--games must be from 0 to 10,000,000"),
        (["--agent", "greedy", "--games", "0", "--positions", "0"], "--games 0 with --positions 0 would measure"),
        (["--tournament", "greedy,random", "--games", "0"], "--tournament needs games"),
        ([], "give --agent SPEC"),
        (["--tournament", "greedy"], "at least two agents"),
        (["--agent", "perfect", "--rules", "murray"], "the perfect player needs a solved table"),
        (["--tournament", "greedy,random", "--position-set", "held-out"], "a tournament's table reports the test"),
        (["--agent", "greedy", "--exact", "--position-set", "held-out"], "--position-set does not go with --exact"),
        (["--agent", "greedy", "--position-set", "train"], "invalid choice: 'train'"),
    ],
)
def test_bad_arguments_say_what_is_wrong(argv, message, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    assert stop.value.code == 2
    assert message in capsys.readouterr().err


def test_rules_too_large_to_solve_still_play_matches(capsys):
    assert (
        cli.main(
            [
                "--agent",
                "greedy",
                "--opponent",
                "random",
                "--rules",
                "murray",
                "--pieces",
                "5",
                "--games",
                "10",
                "--workers",
                "1",
                "--no-progress",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    assert "regrets and the position benchmark are skipped" in captured.err
    assert "greedy vs random" in captured.out


def test_too_few_benchmark_positions_is_a_clear_error_before_any_game(capsys):
    """One piece never offers a choice of moves: the benchmark cannot be drawn (this used to hang)."""
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--agent", "random", "--pieces", "1", "--games", "2", "--no-progress"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "no decision has a choice of moves" in err and "--positions 0" in err and "Traceback" not in err
    assert cli.main(["--agent", "random", "--pieces", "1", "--games", "2", "--positions", "0", "--no-progress"]) == 0


def _record(tmp_path, pieces=3):
    from urgym import Game, GameRecord

    game = Game("finkel", seed=1, pieces=pieces)
    while not game.is_over:
        game.play(game.legal_moves[-1])
    return GameRecord.from_game(game, {"light": "a", "dark": "b"}).save(tmp_path / "rec.json")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--json", "{rec}"], "would replace the game record"),
        (["--html", "{dir}/sub/../rec.json"], "would replace the game record"),
        (["--json", "{dir}/x", "--csv", "{dir}/x"], "--json and --csv both write"),
        (["--json", "-", "--html", "-"], "--json and --html both write -"),
        (["--json", ""], "an empty output path"),
        (["--html", "{dir}/folder/"], "it names a folder"),
        (["--json", "/dev/null"], "it is a device"),
    ],
)
def test_review_outputs_never_replace_the_record_or_each_other(finkel3_table, tmp_path, capsys, extra, message):
    record = _record(tmp_path)
    before = record.read_bytes()
    argv = [str(record)] + [a.format(rec=record, dir=tmp_path) for a in extra]
    with pytest.raises(SystemExit) as info:
        review_main(argv)
    assert info.value.code == 2 and message in capsys.readouterr().err
    assert record.read_bytes() == before


def test_review_writes_json_to_standard_output(finkel3_table, tmp_path, capsys):
    record = _record(tmp_path)
    assert review_main([str(record), "--json", "-", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["format"] == "urgym-game-review"  # stdout holds the JSON only
    assert "accuracy" in captured.err  # and the report went to stderr


def test_save_games_refuses_a_folder_with_records_unless_told(finkel3_table, tmp_path, capsys):
    games = tmp_path / "games"
    argv = [
        "--agent",
        "random",
        "--opponent",
        "greedy",
        "--pieces",
        "3",
        "--games",
        "4",
        "--positions",
        "0",
        "--workers",
        "1",
        "--no-progress",
        "--save-games",
        str(games),
    ]
    assert cli.main(argv) == 0
    first = {p.name: p.read_bytes() for p in games.iterdir()}
    assert sorted(first) == [f"game-{g:06d}.json" for g in range(4)]
    with pytest.raises(SystemExit):
        cli.main(argv)
    assert "already holds 4 game records" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in games.iterdir()} == first  # nothing lost
    assert cli.main([*argv[:7], "2", *argv[8:], "--replace-games"]) == 0
    assert sorted(p.name for p in games.iterdir()) == ["game-000000.json", "game-000001.json"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--agent", "greedy", "--ray-address", "auto"], "--ray-address names a Ray cluster"),
        (["--tournament", "expectimax:3,greedy,expectimax:depth=3"], "is in the tournament twice"),
        (["--agent", "greedy", "--replace-games"], "--replace-games goes with --save-games"),
        (["--agent", "greedy", "--json", ""], "an empty output path"),
    ],
)
def test_options_a_mode_would_ignore_are_refused(finkel3_table, capsys, argv, message):
    with pytest.raises(SystemExit):
        cli.main([*argv, "--pieces", "3", "--no-progress"])
    assert message in capsys.readouterr().err


def test_a_card_covers_every_rule_set_the_agent_plays(finkel3_table, tmp_path, capsys):
    assert (
        cli.main(
            [
                "--agent",
                "greedy",
                "--card",
                "--rules",
                "finkel,blitz",
                "--pieces",
                "2",
                "--games",
                "10",
                "--positions",
                "40",
                "--workers",
                "1",
                "--json",
                str(tmp_path / "card.json"),
                "--no-progress",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    card = json.loads((tmp_path / "card.json").read_text())
    assert card["format"] == "urgym-agent-card" and card["agent"] == "greedy"
    for name in ("finkel", "blitz"):
        entry = card["rule_sets"][name]
        assert entry["positions"] == 40 and len(entry["positions_hash"]) == 12
        assert entry["regret"] > 0 and entry["vs_perfect"]["games"] == 10
    assert out.startswith("| agent | finkel: regret | blitz: regret |") and "| `greedy` |" in out
    assert (
        cli.main(
            [
                "--agent",
                "td",
                "--card",
                "--rules",
                "finkel",
                "--pieces",
                "2",
                "--games",
                "2",
                "--positions",
                "10",
                "--workers",
                "1",
                "--no-progress",
            ]
        )
        == 0
    )
    assert "finkel: skipped (cannot play" in capsys.readouterr().out  # td was trained on 7 pieces


def test_the_luck_adjusted_rate_is_never_shown_outside_0_to_100():
    from urgym.evaluation.scoring.stats import MeanInterval

    below = MeanInterval.of(np.array([-0.05, -0.02, 0.01, -0.04]))
    text = str(below)
    assert text.startswith("0.0% [0.0%, ") and "clipped to 0-100%; the unbiased estimate is -2.5%" in text
    assert below.to_dict()["shown_mean"] == 0.0 and below.to_dict()["mean"] == pytest.approx(-0.025)
    inside = MeanInterval.of(np.array([0.4, 0.5, 0.6]))
    assert "clipped" not in str(inside)


def test_tournament_names_given_with_spaces_get_a_hint(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["--tournament", "random", "greedy", "heuristic", "--pieces", "2"])
    assert stop.value.code == 2
    assert "comma-separated list: --tournament random,greedy,heuristic" in capsys.readouterr().err


def test_luck_adjusted_cells_are_shown_within_0_100_and_marked_when_clipped():
    from urgym.evaluation.scoring.report import _adjusted_cell

    assert _adjusted_cell(np.array([0.652, 0.640, 0.663])) == "65.2% [64.0, 66.3]"
    assert _adjusted_cell(np.array([1.004, 0.966, 1.042])) == "100.0% [96.6, 100.0]*"
    assert _adjusted_cell(np.array([-0.004, -0.042, 0.034]), digits=0) == "0% [0, 3]*"


def test_a_record_or_folder_named_twice_is_reviewed_once(tmp_path):
    """Issue 38: `review D D --player alice` counted each game twice."""
    import argparse

    from urgym.commands.review import _record_paths

    for i in range(2):
        (tmp_path / f"game-{i:06d}.json").write_text("{}")
    parser = argparse.ArgumentParser()
    paths = _record_paths(parser, [str(tmp_path), str(tmp_path), str(tmp_path / "game-000001.json")])
    assert [p.name for p in paths] == ["game-000000.json", "game-000001.json"]


def test_games_0_gives_the_test_set_regret_alone(tmp_path, capsys, finkel3_table):
    from urgym.evaluation.scoring.positions import benchmark_positions, score_positions

    out = tmp_path / "alone.json"
    assert cli.main(["--agent", "greedy", "--pieces", "3", "--games", "0", "--json", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "no games played" in text and "position benchmark (test set v1, 1,000 positions)" in text
    data = json.loads(out.read_text())
    assert "match" not in data and data["table_hash"] == finkel3_table.header["checksum"] and data["urgym"]
    expected = score_positions("greedy", finkel3_table, benchmark_positions(finkel3_table)).regret.mean
    assert data["position_benchmark"][0]["regret"]["mean"] == pytest.approx(expected)


def test_the_held_out_set_is_another_sample_with_the_mean_regrets_interval(tmp_path, capsys, finkel3_table):
    from urgym.evaluation.scoring.positions import HELD_OUT_SEED, benchmark_positions, score_positions

    out = tmp_path / "held.json"
    argv = ["--agent", "greedy", "--pieces", "3", "--games", "0", "--position-set", "held-out", "--positions", "600"]
    assert cli.main([*argv, "--json", str(out), "--no-progress"]) == 0
    assert "position benchmark (held-out set v1, 600 positions)" in capsys.readouterr().out
    regret = json.loads(out.read_text())["position_benchmark"][0]["regret"]
    expected = score_positions("greedy", finkel3_table, benchmark_positions(finkel3_table, 600, HELD_OUT_SEED))
    assert regret["mean"] == pytest.approx(expected.regret.mean)
    test = score_positions("greedy", finkel3_table, benchmark_positions(finkel3_table, 600))
    assert regret["mean"] != pytest.approx(test.regret.mean)  # another sample than the test set's
    half = 1.959964 * expected.regrets.std(ddof=1) / 600**0.5
    assert (regret["low95"], regret["high95"]) == pytest.approx((regret["mean"] - half, regret["mean"] + half))


def test_a_damaged_table_is_treated_as_a_missing_one_by_the_rule_about_long_solves(capsys, private_cache):
    from urgym.solver.cache import cache_slots

    from urgym import get_rules

    rules = get_rules("masters")  # a solve of half an hour or more: never started without --solve
    path, _ = cache_slots(rules)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"URGYMTBL" + b"\0" * 100)  # damaged
    assert cli.main(["--agent", "greedy", "--rules", "masters", "--games", "2", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "has no intact solved table, and solving it takes long" in err and "add --solve" in err
    assert not path.exists() and path.with_name(path.name + ".corrupt").exists()  # moved aside, nothing solved
    path.with_name(path.name + ".corrupt").unlink()
