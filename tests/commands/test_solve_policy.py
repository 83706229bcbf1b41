"""A solve a command starts on its own fits the machine and is short, or is refused with its estimate."""

from __future__ import annotations

import dataclasses
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from urgym.commands import common
from urgym.solver.budget import estimate_solve
from urgym.solver.solve import solve

from urgym import Game, GameRecord, get_rules

BIN = Path(sys.executable).parent


def run(argv, cwd):
    return subprocess.run(
        [str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, cwd=cwd, timeout=120, stdin=subprocess.DEVNULL
    )


def test_the_estimate_follows_the_measured_rates():
    estimate = estimate_solve(get_rules("masters", 7))
    assert estimate.positions == 501_032_952
    assert 5e9 < estimate.memory < 12e9  # measured: 9.5 to 10.7 GB with a graph stored per position, not yet with runs
    assert estimate.disk > 2 * 4e9 * 0.99  # the checkpoint and the table, 8 bytes a position each
    assert "501,032,952 positions" in estimate.describe()


@pytest.mark.parametrize(
    "name, pieces, minutes, peak",
    [
        ("finkel", 7, 3.7, 1.27e9),
        ("skiriuk", 4, 3.5, 2.39e9),
        ("murray", 3, 0.59, 0.53e9),
        ("murray", 4, 88.6, 9.6e9),  # three runs, the last two resuming (RESULTS: the wall time of all three)
        ("skiriuk", 5, 109.5, 18.3e9),
    ],
)
def test_the_estimate_is_within_a_factor_of_two_of_the_measured_solves(name, pieces, minutes, peak, monkeypatch):
    """The figures of benchmarks/RESULTS.md (wall time and peak memory on the 2-core machine, each measured once)."""
    import numba

    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 2)  # the machine they were measured on
    estimate = estimate_solve(get_rules(name, pieces))
    assert minutes / 2 <= estimate.minutes <= 2 * minutes
    assert peak / 2 <= estimate.memory <= 2 * peak


def test_a_long_solve_needs_to_be_asked_for(monkeypatch):
    rules = dataclasses.replace(get_rules("finkel", 2), name="policy-test")  # custom rules: never cached
    monkeypatch.setattr(common, "AUTO_SOLVE_MINUTES", 0.0)
    with pytest.raises(ValueError, match=r"takes long \(13,112 positions.*add --solve.*solve --rules-file"):
        common.check_solve_allowed(rules, asked=False)
    common.check_solve_allowed(rules, asked=True)


def test_a_solve_that_would_not_fit_in_memory_is_refused_before_any_work(monkeypatch, tmp_path):
    """The solver's own check, so commands and library calls alike are refused before any work."""
    monkeypatch.setattr(importlib.import_module("urgym.solver.budget"), "available_memory", lambda: 1000)
    with pytest.raises(ValueError, match=r"not enough memory to solve .*it needs about"):
        solve(get_rules("finkel", 1), progress=False, out=tmp_path / "t.urtable")
    assert list(tmp_path.iterdir()) == []  # nothing was started: no lock, no checkpoint


def test_a_strangers_record_of_a_huge_rule_set_does_not_start_its_solve(tmp_path):
    game = Game(get_rules("masters", 8), seed=0)
    game.play(game.legal_moves[0])
    (tmp_path / "huge.json").write_text(json.dumps(GameRecord.from_game(game).to_dict()))
    result = run(["review", "huge.json"], tmp_path)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert "1,106,734,236 positions" in lines[0] and "add --solve" in lines[0]
    assert "solve --rules masters --pieces 8" in lines[0]


@pytest.mark.parametrize(
    "argv",
    [
        ["ur-play", "--rules", "masters", "--pieces", "8", "--agent", "perfect"],
        ["evaluate", "--agent", "random", "--rules", "masters", "--pieces", "8"],
        ["stats", "--rules", "masters", "--pieces", "8", "--games", "2"],
        ["train", "--rules", "masters", "--pieces", "8", "--out", "run"],
        ["evaluate", "--agent", "random", "--card", "--rules", "masters", "--pieces", "8"],
    ],
    ids=lambda argv: argv[0] + (" --card" if "--card" in argv else ""),
)
def test_commands_refuse_a_long_solve_with_its_estimate(argv, tmp_path):
    result = run(argv, tmp_path)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert "takes long (1,106,734,236 positions" in lines[0], lines[0]
    assert not (tmp_path / "run").exists()
