import csv
import json

import pytest

from evaluation import cli


def test_evaluate_an_agent_with_its_options(finkel3_table, tmp_path, capsys):
    out = tmp_path / "run"
    code = cli.main(["--agent", "expectimax", "--depth", "2", "--pieces", "3", "--games", "20", "--positions", "30",
                     "--workers", "1", "--json", str(out / "r.json"), "--csv", str(out / "r.csv"),
                     "--plot", str(out / "r.png"), "--no-progress"])
    assert code == 0
    text = capsys.readouterr().out
    assert "expectimax:depth=2 vs perfect" in text
    assert "position benchmark (30 positions)" in text
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
    argv = ["--agent", "random", "--opponent", "greedy", "--pieces", "3", "--games", "40", "--positions", "20",
            "--workers", "1", "--seed", "9", "--no-progress"]
    cli.main(argv)
    first = capsys.readouterr().out
    cli.main(argv)
    second = capsys.readouterr().out
    strip = [line for line in first.splitlines() if "games/s" not in line and "time per move" not in line]
    assert strip == [line for line in second.splitlines() if "games/s" not in line and "time per move" not in line]


def test_tournament(finkel3_table, tmp_path, capsys):
    cli.main(["--tournament", "random,greedy,perfect", "--pieces", "3", "--games", "20", "--positions", "20",
              "--workers", "1", "--no-progress", "--csv", str(tmp_path / "t.csv"), "--plot", str(tmp_path / "t.svg")])
    text = capsys.readouterr().out
    assert "win rate of row against column" in text
    assert len(list(csv.DictReader((tmp_path / "t.csv").open()))) == 6
    assert (tmp_path / "t.svg").read_text().lstrip().startswith("<?xml")


def test_missing_table_with_no_solve_gives_the_command(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["--agent", "greedy", "--rules", "masters", "--pieces", "2", "--no-solve", "--no-progress"])
    assert stop.value.code == 3
    assert "solve --rules masters --pieces 2" in capsys.readouterr().err


def test_missing_table_is_solved_after_saying_so(capsys):
    assert cli.main(["--agent", "greedy", "--rules", "blitz", "--pieces", "2", "--games", "10", "--positions", "10",
                     "--workers", "1", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "No solved table for blitz (2 pieces) yet: solving it now" in err
    assert "solve --rules blitz --pieces 2" in err


@pytest.mark.parametrize("argv, message", [
    (["--agent", "deep-blue"], "unknown agent 'deep-blue'"),
    (["--agent", "expectimax", "--breadth", "3"], "has no parameter 'breadth'"),
    (["--agent", "expectimax:3", "--depth", "4"], "not both"),
    (["--agent", "greedy", "--rules", "chess"], "unknown rule set 'chess'"),
    (["--agent", "greedy", "--games", "0"], "--games must be at least 1"),
    ([], "give --agent SPEC"),
    (["--tournament", "greedy"], "at least two agents"),
    (["--agent", "perfect", "--rules", "murray"], "the perfect player needs a solved table"),
])
def test_bad_arguments_say_what_is_wrong(argv, message, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    assert stop.value.code == 2
    assert message in capsys.readouterr().err


def test_unsolvable_rules_still_play_matches(capsys):
    assert cli.main(["--agent", "greedy", "--opponent", "random", "--rules", "murray", "--pieces", "2",
                     "--games", "10", "--workers", "1", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "regrets and the position benchmark are skipped" in captured.err
    assert "greedy vs random" in captured.out


def test_too_few_benchmark_positions_is_a_clear_error_before_any_game(capsys):
    """One piece never offers a choice of moves: the benchmark cannot be drawn (this used to hang)."""
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--agent", "random", "--pieces", "1", "--games", "2", "--no-progress"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "offered only 0 decisions" in err and "--positions 0" in err and "Traceback" not in err
    assert cli.main(["--agent", "random", "--pieces", "1", "--games", "2", "--positions", "0", "--no-progress"]) == 0
