"""A read-only install works: numba's cache elsewhere, no home needed, a corrupt table in a read-only cache named."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest
from urgym.solver import cache as cache_module
from urgym.solver.table import TableError

from urgym import get_rules
from urgym.files import cache_dir

# Python run as if urgym's folder and the user's home were read-only: every file numba (or anyone) tries to make in
# a __pycache__ folder or under the home is refused, as on a system install used by another user.
READ_ONLY = """
import os, sys, tempfile
real = tempfile.TemporaryFile
def refuse(*args, dir=None, **kwargs):
    if dir is not None and ("__pycache__" in dir or dir.startswith(os.path.expanduser("~"))):
        raise PermissionError(13, "Permission denied", dir)
    return real(*args, dir=dir, **kwargs)
tempfile.TemporaryFile = refuse
sys.argv = ["ur-simulate", "--games", "200", "--pieces", "2"]
from urgym.commands.simulate import main
sys.exit(main())
"""


def test_a_read_only_install_caches_numba_code_elsewhere_and_says_so_once(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    env["HOME"] = str(tmp_path / "home")
    env["TMPDIR"] = str(tmp_path / "tmp")
    (tmp_path / "tmp").mkdir()
    result = subprocess.run([sys.executable, "-c", READ_ONLY], capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    assert "200 games" in result.stdout
    notes = [line for line in result.stderr.splitlines() if "numba caches compiled code in" in line]
    assert len(notes) == 1 and str(tmp_path / "tmp") in notes[0]
    assert any((tmp_path / "tmp").glob("urgym-numba-cache-*/*"))  # the compiled code went there


def test_a_writable_install_is_left_alone(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    code = "import os, urgym; print(os.environ.get('NUMBA_CACHE_DIR'))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0 and result.stdout.strip() == "None" and "note:" not in result.stderr


def test_without_a_home_folder_the_cache_is_a_private_temporary_folder(monkeypatch):
    monkeypatch.delenv("URGYM_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(os.path, "expanduser", lambda path: path)  # no HOME, no passwd entry: "~" stays "~"
    folder = cache_dir()
    assert folder.name == f"urgym-cache-{os.getuid()}" and folder.is_absolute()


def test_a_corrupt_table_in_a_read_only_cache_is_named_as_corrupt(tmp_path, monkeypatch, finkel3_table):
    rules = get_rules("finkel", 3)
    path, _ = cache_module.cache_slots(rules, tmp_path)
    data = bytearray(Path(finkel3_table.path).read_bytes())
    data[-100] ^= 0xFF  # one value changed: the checksum no longer matches
    path.write_bytes(bytes(data))

    def read_only(source, target):
        raise PermissionError(errno.EROFS, "Read-only file system", str(source))

    monkeypatch.setattr(cache_module.os, "replace", read_only)
    with pytest.raises(
        TableError, match=r"failed its checks .*corrupt.*cannot be moved aside .*\(Read-only file system\)"
    ):
        cache_module.load_or_solve(rules, progress=False, directory=tmp_path)
