"""A full disk: a solve checks the space its files need before any work.

It reserves its checkpoint's blocks (so a full disk is an error, never a SIGBUS from the memory-mapped values),
says in one line which folder lacks how much space, and leaves no lock, checkpoint or partial table behind.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import tempfile
from collections import namedtuple
from pathlib import Path

import pytest
from urgym.solver import solve
from urgym.solver.budget import NoSpaceError, table_bytes

from urgym import get_rules

RULES = get_rules("finkel", 2)  # 13,112 positions: 105 KB of checkpoint, 105 KB of table
BIN = Path(sys.executable).parent
Usage = namedtuple("Usage", "total used free")


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_too_little_free_space_is_refused_before_any_work(tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "disk_usage", lambda path: Usage(10**9, 10**9 - 50_000, 50_000))
    with pytest.raises(NoSpaceError) as caught:
        solve(RULES, progress=False, out=tmp_path / "t.urtable")
    message = str(caught.value)
    assert message.startswith(f"not enough space in {tmp_path} to solve into t.urtable: it needs 275.3 KB")
    assert "50.0 KB is free" in message and caught.value.errno == errno.ENOSPC
    assert leftovers(tmp_path) == []  # no lock, no checkpoint


def test_a_reservation_that_fails_is_one_error(tmp_path, monkeypatch):
    def full(fd, offset, size):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", full)
    with pytest.raises(NoSpaceError, match=f"not enough space in {tmp_path} .* its checkpoint needs 104.9 KB"):
        solve(RULES, progress=False, out=tmp_path / "t.urtable")
    assert leftovers(tmp_path) == []


def test_a_table_that_does_not_fit_keeps_the_solved_values(tmp_path, monkeypatch):
    """The last write fails (another program filled the disk meanwhile).

    The checkpoint is kept, and the same solve, run again with space, writes the table without solving anything again.
    """
    from urgym.solver import table as table_module

    real_write = table_module.write_table

    def full(path, header, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(table_module, "write_table", full)
    out = tmp_path / "t.urtable"
    with pytest.raises(NoSpaceError, match="the solved values are kept in its checkpoint"):
        solve(RULES, progress=False, out=out)
    assert leftovers(tmp_path) == ["t.urtable.partial", "t.urtable.partial.json"]
    monkeypatch.setattr(table_module, "write_table", real_write)
    table = solve(RULES, progress=False, out=out)
    assert table.header["pairs"] == []  # every pair came from the checkpoint
    assert leftovers(tmp_path) == ["t.urtable"]


def test_table_bytes():
    assert table_bytes(1000, "float64") == 8000 + 65536
    assert table_bytes(1000, "uint16") == 2000 + 65536


def _small_filesystem() -> Path | None:
    folder = Path(tempfile.mkdtemp(prefix="urgym-full-"))
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=160k", "tmpfs", str(folder)], capture_output=True)
    return folder if result.returncode == 0 else None


def test_a_real_full_file_system(tmp_path):
    """On a 160 KB tmpfs, evaluate and solve stop with one line and exit status 2.

    They leave the file system as they found it. Mounting needs root.
    """
    folder = _small_filesystem()
    if folder is None:
        pytest.skip("mounting a small tmpfs needs root here; the tests above cover the same paths")
    try:
        env = {**os.environ, "URGYM_CACHE": str(folder / "cache")}
        for argv in (
            [str(BIN / "evaluate"), "--agent", "greedy", "--pieces", "2", "--games", "2", "--no-progress"],
            [str(BIN / "solve"), "--pieces", "2", "--out", str(folder / "t.urtable"), "--no-progress"],
        ):
            result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
            assert result.returncode == 2, result.stderr
            last = result.stderr.strip().splitlines()[-1]
            assert "not enough space in" in last and "Traceback" not in result.stderr, result.stderr
        assert [p for p in folder.rglob("*") if p.is_file()] == []
    finally:
        subprocess.run(["umount", str(folder)], check=False)
        folder.rmdir()
