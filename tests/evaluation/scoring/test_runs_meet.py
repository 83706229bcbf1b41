"""Nothing is lost when two runs meet: one folder, one run; names from any spec; a finished training run is kept."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from urgym.agents.models import DEFAULT_TD_MODEL
from urgym.evaluation.scoring.match import play_match
from urgym.evaluation.scoring.runner import RunOptions

from urgym import GameRecord, get_rules
from urgym.files import CLAIM_NAME, claim_folder, release_folder
from urgym.records import MAX_PLAYER_NAME, player_name

BIN = Path(sys.executable).parent
RULES = get_rules("finkel", 2)


def start(argv, cwd):
    return subprocess.Popen(
        [str(BIN / argv[0]), *argv[1:]],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "URGYM_PROGRESS": "0"},
    )


def test_two_runs_started_together_on_one_folder_never_mix(tmp_path):
    """Of two ``evaluate --save-games g`` started at once, one saves all its games and the other is refused."""
    argv = ["evaluate", "--agent", "random", "--opponent", "greedy", "--pieces", "2", "--no-table"]
    argv += ["--games", "400", "--workers", "1", "--save-games", "g"]
    runs = [start(argv, tmp_path), start(argv, tmp_path)]
    results = [(run.wait(timeout=300), run.stderr.read()) for run in runs]
    statuses = sorted(status for status, _ in results)
    assert statuses == [0, 2], results
    refused = next(err for status, err in results if status == 2)
    assert "another run is writing game records to g" in refused and len(refused.strip().splitlines()) == 1
    records = sorted((tmp_path / "g").glob("game-*.json"))
    assert len(records) == 400 and not (tmp_path / "g" / CLAIM_NAME).exists()


def test_a_claimed_folder_is_refused_to_another_process_and_freed_when_the_run_ends(tmp_path):
    folder = tmp_path / "games"
    folder.mkdir()
    claim_folder(folder, "game records")
    try:
        result = subprocess.run(
            [str(BIN / "stats"), "--pieces", "2", "--agent", "random", "--games", "5", "--save-games", str(folder)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 2 and "another run is writing game records" in result.stderr
    finally:
        release_folder(folder)
    play_match("random", "greedy", RULES, 4, 0, None, RunOptions(workers=1, progress=False, save_games=folder))
    assert len(list(folder.glob("game-*.json"))) == 4 and not (folder / CLAIM_NAME).exists()


def test_a_spec_is_not_a_player_name_and_its_games_are_never_lost(tmp_path):
    """A spec with a long, odd model path plays, and its records are saved under a valid form of it."""
    odd = tmp_path / ("m" * 120) / ("n\x1b[31m" + "o" * 120)
    odd.mkdir(parents=True)
    model = odd / "td.npz"
    shutil.copy(DEFAULT_TD_MODEL, model)
    spec = f"td:model={model}"
    assert len(spec) > MAX_PLAYER_NAME
    folder = tmp_path / "games"
    rules = get_rules("finkel")
    play_match(spec, "random", rules, 2, 0, None, RunOptions(workers=1, progress=False, save_games=folder))
    names = {GameRecord.load(path).players["light"] for path in folder.glob("game-*.json")}
    name = player_name(spec)
    assert name in names and len(name) == MAX_PLAYER_NAME and name.endswith("…") and "\x1b" not in name


@pytest.mark.parametrize("text", ["plain", "x" * 500, "a\x00b\u202ec", "\ud800"])
def test_player_name_always_gives_a_name_records_accept(text):
    name = player_name(text)
    record = GameRecord(RULES, (), {"light": name, "dark": "other"})
    assert record.players["light"] == name and len(name) <= MAX_PLAYER_NAME


def test_train_refuses_a_finished_run_unless_told_to_replace_it(tmp_path):
    """A second ``train --out run`` over a finished run is refused before any work; ``--replace`` overwrites it."""
    out = tmp_path / "run"
    out.mkdir()
    (out / "model.npz").write_bytes(b"the old model")
    argv = [str(BIN / "train"), "--algo", "td-lambda", "--pieces", "2", "--timesteps", "200", "--out", str(out)]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and "holds a finished training run (model.npz)" in result.stderr
    assert (out / "model.npz").read_bytes() == b"the old model"
    result = subprocess.run([*argv, "--replace", "--eval-positions", "20"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert (out / "model.npz").read_bytes() != b"the old model" and not (out / CLAIM_NAME).exists()


@pytest.mark.parametrize("clash", ["logs-link", "table"])
def test_train_refuses_outputs_aimed_at_other_files_before_training(tmp_path, clash, finkel3_table):
    out = tmp_path / "run"
    out.mkdir()
    if clash == "logs-link":
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (out / "logs").symlink_to(elsewhere)
        message = "logs is not a folder"
    else:
        shutil.copy(finkel3_table.path, out / "best_model.npz")
        message = "urgym solved table"
    argv = [str(BIN / "train"), "--algo", "td-lambda", "--pieces", "2", "--timesteps", "200", "--out", str(out)]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert "td-lambda" not in result.stdout  # refused before training started
