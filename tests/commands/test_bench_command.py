"""``urgym bench``: the task list, scoring an agent, the leaderboard, and one-line refusals before any work."""

from __future__ import annotations

import json

import pytest
from urgym.commands.main import main as urgym


def test_the_list_names_every_task_and_what_it_fixes(capsys):
    assert urgym(["bench", "--list"]) == 0
    text = capsys.readouterr().out
    for task in ("finkel-3-v1", "finkel-4-v1", "finkel-7-v1"):
        assert task in text
    assert "budget 2,000,000 decisions, evaluated every 200,000; 5 seeds" in text and "exploitability:" in text


def test_an_agent_is_scored_under_a_task_and_its_result_validates(tmp_path, capsys, finkel3_table):
    from urgym.evaluation.bench import load_result

    out = tmp_path / "greedy"
    assert urgym(["bench", "--task", "finkel-3", "--agent", "greedy", "--out", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "finkel-3-v1" in text and "greedy" in text
    result = load_result(out / "results.json")
    assert result["agent"] == "greedy" and result["per_seed"][0]["final"]["policy"] == "deterministic"
    assert urgym(["bench", "--leaderboard", str(out / "results.json")]) == 0
    assert "greedy" in capsys.readouterr().out
    with pytest.raises(SystemExit):  # an agent scored has no curve to plot
        urgym(["bench", "--leaderboard", str(out / "results.json"), "--plot", str(tmp_path / "c.png")])
    assert "give the results of trained runs of one task" in capsys.readouterr().err


def test_a_task_without_its_table_solves_the_reproducible_one_once(tmp_path, monkeypatch, capsys):
    import sys

    from urgym.solver import cached_reproducible

    from urgym import get_rules

    monkeypatch.setenv("URGYM_CACHE", str(tmp_path / "cache"))
    solve_module = sys.modules["urgym.solver.solve"]
    real, threads = solve_module.solve, []

    def counted(*args, **kwargs):
        threads.append(kwargs.get("threads"))
        return real(*args, **kwargs)

    monkeypatch.setattr(solve_module, "solve", counted)
    argv = ["bench", "--task", "finkel-3", "--agent", "greedy", "--out", str(tmp_path / "greedy"), "--no-progress"]
    assert urgym(argv) == 0
    assert threads == [1]  # solved once, on one thread: no table of several threads first, solved again after
    assert cached_reproducible(get_rules("finkel", 3)) and "is not reproducible" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--task", "go-9", "--algo", "td"], "unknown task 'go-9'; tasks: finkel-3-v1"),
        (["--task", "finkel-3"], "give --task with --algo or --agent, or --list"),
        (["--task", "finkel-3", "--algo", "td", "--agent", "greedy"], "--agent and --algo are separate modes"),
        (["--task", "finkel-3", "--algo", "a2c", "--out", "x"], "unknown algorithm 'a2c'; algorithms: td-lambda"),
        (["--task", "finkel-3", "--algo", "td"], "give --out DIR"),
        (["--task", "finkel-3", "--algo", "td", "--out", "x", "--seeds", "0"], "--seeds must be from 1 to 100"),
        (["--task", "finkel-3", "--algo", "td", "--out", "x", "--jobs", "99"], "--jobs must be from 1 to"),
        (["--task", "finkel-3", "--algo", "ppo", "--out", "x", "--max-minutes", "1"], "is estimated at"),
        (["--task", "finkel-3", "--agent", "nosuch"], "unknown agent 'nosuch'; agents: random"),
        (  # "and its table's solve" too where no earlier test solved finkel 3 in this worker
            ["--task", "finkel-3", "--agent", "greedy", "--max-minutes", "1e-5"],
            ("scoring greedy", "on finkel-3-v1 is estimated at"),
        ),
        (["--task", "finkel-3", "--algo", "td", "--out", "x", "--max-minutes", "nan"], "--max-minutes must be above"),
        (["--task", "finkel-3", "--algo", "td", "--out", "x", "--max-minutes", "-5"], "--max-minutes must be above"),
        ([], "give --task"),
        (["--task", "finkel-3", "--agent", "greedy", "--plot", "c.png"], "--plot does not go with --agent"),
    ],
)
def test_a_bad_command_line_is_one_line_and_status_2_before_any_work(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        urgym(["bench", *argv])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    parts = (message,) if isinstance(message, str) else message
    assert all(part in err for part in parts) and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()  # nothing made


def test_a_leaderboard_file_that_is_no_result_is_refused_naming_it(tmp_path, capsys):
    bad = tmp_path / "evil.json"
    bad.write_text(json.dumps({"format": 1, "task": "<script>"}))
    with pytest.raises(SystemExit) as stop:
        urgym(["bench", "--leaderboard", str(bad)])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "evil.json" in err and "result lacks" in err and len(err.strip().splitlines()) == 1


def test_a_shipped_baseline_given_to_the_leaderboard_is_listed_once(capsys):
    from importlib.resources import files

    shipped = files("urgym.evaluation.bench") / "baseline-finkel-3-v1.dqn.json"
    assert urgym(["bench", "--leaderboard", str(shipped)]) == 0
    tasks, rows = [], []
    for line in capsys.readouterr().out.splitlines():
        if line and not line.startswith(" "):
            tasks.append(line.split()[0])  # a task's header line; its rows are indented below it
        elif line.split()[:1] == ["dqn"]:
            rows.append(tasks[-1])
    assert rows.count("finkel-3-v1") == 1, rows
