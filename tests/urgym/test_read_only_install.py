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
    assert folder.is_dir() and folder.stat().st_mode & 0o777 == 0o700  # made private


def test_a_temporary_cache_folder_someone_else_made_or_left_open_is_refused_or_made_private(tmp_path, monkeypatch):
    import tempfile

    from urgym.files import private_temp_folder

    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    open_folder = tmp_path / "open"
    open_folder.mkdir(mode=0o777)
    open_folder.chmod(0o777)
    assert private_temp_folder("open", "URGYM_CACHE").stat().st_mode & 0o777 == 0o700
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "planted").symlink_to(tmp_path / "elsewhere")  # a link another user could have planted
    with pytest.raises(ValueError, match=r"is not a folder of yours .* set URGYM_CACHE to a folder of your own"):
        private_temp_folder("planted", "URGYM_CACHE")
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(ValueError, match="is not a folder of yours"):
        private_temp_folder("a-file", "URGYM_CACHE")
    if os.getuid() == 0:  # root can give a folder away: one that belongs to another user
        other = tmp_path / "theirs"
        other.mkdir(mode=0o700)
        os.chown(other, 12345, 12345)
        with pytest.raises(ValueError, match=r"belongs to user 12345"):
            private_temp_folder("theirs", "URGYM_CACHE")


def test_the_policy_cache_is_never_inside_the_table_cache_and_a_dot_cache_has_one(tmp_path, monkeypatch):
    from urgym.files import policy_cache_dir

    monkeypatch.setenv("URGYM_CACHE", str(tmp_path / "tables"))
    monkeypatch.setenv("URGYM_POLICY_CACHE", str(tmp_path / "tables" / "policies"))
    with pytest.raises(ValueError, match="lies inside urgym's table cache"):
        policy_cache_dir()
    monkeypatch.delenv("URGYM_POLICY_CACHE")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("URGYM_CACHE", ".")
    assert policy_cache_dir() == tmp_path.parent / f"{tmp_path.name}-policies"


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
