"""Outputs never replace a solved table.

No command writes a report, page, CSV, record, plot, model or table over a file in the table cache, or over any urgym or
RoyalUr table anywhere, unless it is ``solve``'s own table output and the user asked for it. Each case is refused with
one line and exit status 2, before any work, and the table is byte for byte what it was.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from urgym.evaluation.scoring.report import write_csv, write_json
from urgym.solver import cached_table_path, load_or_solve, write_rgu
from urgym.solver.rgu import RGU_MAGIC
from urgym.solver.table import MAGIC

from urgym import Game, GameRecord, get_rules
from urgym.files import TABLE_MAGICS, precious_kind, write_atomic

BIN = Path(sys.executable).parent
SMALL = ["--pieces", "2"]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def setting(tmp_path_factory, private_cache):
    """The 2-piece finkel table in the cache, a copy of it and a RoyalUr export outside, and a game record."""
    folder = tmp_path_factory.mktemp("outputs")
    rules = get_rules("finkel", 2)
    load_or_solve(rules, progress=False)
    cached = cached_table_path(rules)
    outside = folder / "mine.urtable"
    shutil.copyfile(cached, outside)
    rgu = write_rgu(load_or_solve(rules, progress=False), folder / "mine.rgu")
    game = Game(rules, seed=0)
    while not game.is_over:
        game.play(game.legal_moves[-1])
    record = GameRecord.from_game(game, {"light": "last", "dark": "last"}).save(folder / "game.json")
    return {"cache": cached, "outside": outside, "rgu": Path(rgu), "record": Path(record), "folder": folder}


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / argv[0]), *argv[1:]], cwd=cwd, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL
    )


TARGETS = ("cache", "outside", "rgu")
COMMANDS = [
    lambda s, t: ["review", str(s["record"]), "--json", t],
    lambda s, t: ["review", str(s["record"]), "--html", t],
    lambda s, t: ["review", str(s["record"]), "--csv", t],
    lambda s, t: ["evaluate", "--agent", "greedy", *SMALL, "--games", "2", "--positions", "0", "--json", t],
    lambda s, t: ["evaluate", "--agent", "greedy", *SMALL, "--games", "2", "--positions", "0", "--csv", t],
    lambda s, t: ["stats", *SMALL, "--games", "2", "--json", t],
    lambda s, t: ["ur-play", *SMALL, "--save", t],
]
CASES = [(command, target) for command in range(len(COMMANDS)) for target in TARGETS]
# solve --out may replace a table outside the cache (the user asked for it, tested below), never the cache's own
SOLVE = lambda s, t: ["solve", *SMALL, "--tol", "1e-6", "--out", t]  # noqa: E731
COMMANDS.append(SOLVE)
CASES.append((len(COMMANDS) - 1, "cache"))


@pytest.mark.parametrize(("command", "target"), CASES)
def test_no_command_writes_over_a_table(setting, target, command, tmp_path):
    table = setting[target]
    before = digest(table)
    argv = COMMANDS[command](setting, str(table))
    result = run(argv, tmp_path)
    assert result.returncode == 2, (argv, result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert "inside urgym's table cache" in result.stderr or "table" in result.stderr.split(":", 2)[-1]
    assert digest(table) == before


def test_folders_in_the_cache_are_refused(setting, tmp_path):
    cache = setting["cache"].parent
    for argv in (
        [
            "evaluate",
            "--agent",
            "greedy",
            *SMALL,
            "--games",
            "2",
            "--positions",
            "0",
            "--save-games",
            str(cache / "games"),
        ],
        ["train", "--algo", "td-lambda", *SMALL, "--timesteps", "10", "--out", str(cache / "runs")],
        ["review", str(setting["record"]), "--json", str(cache / "review.json")],
    ):
        result = run(argv, tmp_path)
        assert result.returncode == 2 and "inside urgym's table cache" in result.stderr, (argv, result.stderr)
    assert sorted(p.name for p in cache.iterdir() if not p.name.startswith(".")) == sorted(
        p.name for p in cache.iterdir() if p.suffix == ".urtable" and not p.name.startswith(".")
    )


def test_solve_out_replaces_a_table_outside_the_cache_when_asked(setting, tmp_path):
    target = tmp_path / "replace-me.urtable"
    shutil.copyfile(setting["outside"], target)
    result = run(["solve", *SMALL, "--tol", "1e-6", "--out", str(target), "--no-progress"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert digest(target) != digest(setting["outside"])  # a loose table, where the user asked for it


def test_the_library_refuses_too(setting):
    """The one atomic writer refuses to replace a table unless the solver writes it."""
    before = digest(setting["outside"])
    for write in (
        lambda p: write_json(p, {"a": 1}),
        lambda p: write_csv(p, [{"a": 1}]),
        lambda p: GameRecord.load(setting["record"]).save(p),
    ):
        for target in (setting["outside"], setting["rgu"]):
            with pytest.raises(ValueError, match=r"it is (an urgym solved table|a RoyalUr table)"):
                write(target)
    assert digest(setting["outside"]) == before
    with pytest.raises(ValueError, match="solved table"):
        write_atomic(setting["outside"], lambda tmp: tmp.write_text("x"))


def test_what_counts_as_a_table(setting, tmp_path):
    assert MAGIC in TABLE_MAGICS and RGU_MAGIC + b"\x00" in TABLE_MAGICS  # one list of the formats' first bytes
    assert precious_kind(setting["outside"]) == "an urgym solved table"
    assert precious_kind(setting["rgu"]) == "a RoyalUr table (.rgu)"
    assert precious_kind(setting["cache"]).startswith("inside urgym's table cache")
    assert precious_kind(setting["cache"].parent / "new.json").startswith("inside")
    link = tmp_path / "link.json"
    os.symlink(setting["cache"], link)
    assert precious_kind(link).startswith("inside")  # a link into the cache is the cache
    (tmp_path / "report.json").write_text("{}")
    assert precious_kind(tmp_path / "report.json") is None
    assert precious_kind(tmp_path / "missing.json") is None
