"""Files in and out.

Atomic writes that keep modes, output paths checked before work, strict JSON for files from strangers, and the error for
a missing optional extra.

Every file the package writes goes through :func:`write_atomic`; every output path a command takes goes through
:func:`check_output` (and :func:`check_distinct` when a command has several paths), and every JSON file it reads
from outside (records, table headers, model cards) through :func:`loads_json`.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import io
import json
import math
import os
import shutil
import stat
import sys
import tempfile
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "CLAIM_NAME",
    "PLOT_FORMATS",
    "STDOUT",
    "TABLE_MAGICS",
    "MissingExtraError",
    "cache_dir",
    "check_distinct",
    "check_not_broken_link",
    "check_output",
    "claim_folder",
    "existing_file",
    "hold_lock",
    "in_table_cache",
    "install_command",
    "loads_json",
    "open_regular",
    "policy_cache_dir",
    "precious_kind",
    "private_temp_folder",
    "read_bounded",
    "read_json",
    "read_npz",
    "release_claims",
    "release_folder",
    "require_extra",
    "table_kind",
    "write_atomic",
]

PLOT_FORMATS = ("png", "pdf", "svg")
"""File types that plots are written as (by the path's suffix)."""

STDOUT = "-"
"""The output path that means standard output."""

TABLE_MAGICS = {b"URGYMTBL": "an urgym solved table", b"RGU\x00": "a RoyalUr table (.rgu)"}
"""The first bytes of the table files urgym reads and writes, and what each is: files no report ever replaces."""


def check_not_broken_link(path: str | os.PathLike, what: str) -> None:
    """Refuse a symbolic link that leads nowhere (dangling, or a loop) where a folder or file is to be made or read.

    Without this, making the folder fails with "File exists" and resolving it with a symlink-loop traceback.

    Raises:
        ValueError: Naming the path and what it should be.
    """
    path = Path(path)
    if path.is_symlink() and not path.exists():
        raise ValueError(
            f"{path} is a symbolic link that leads nowhere (dangling, or a loop of links); give {what} instead"
        )


def cache_dir() -> Path:
    """The folder of urgym's table cache: ``$URGYM_CACHE``, else ``$XDG_CACHE_HOME/urgym``, else ``~/.cache/urgym``.

    Without a home folder (no ``HOME`` and no passwd entry), ``urgym-cache-UID`` in the temporary directory.

    Raises:
        ValueError: If ``$URGYM_CACHE`` names a file.
    """
    if os.environ.get("URGYM_CACHE"):
        path = Path(os.environ["URGYM_CACHE"])
        if path.exists() and not path.is_dir():
            raise ValueError(f"URGYM_CACHE={path} is a file; it should name a directory for solved tables")
        return path
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        home = os.path.expanduser("~")
        if home == "~":  # no HOME and no passwd entry for this uid: a private folder in the temporary directory
            return private_temp_folder(f"urgym-cache-{os.getuid()}", "URGYM_CACHE")
        base = os.path.join(home, ".cache")
    return Path(base) / "urgym"


def private_temp_folder(name: str, setting: str) -> Path:
    """The folder ``name`` in the temporary directory, this user's alone: made with mode 0700, else checked.

    Another local user could make the folder first (the temporary directory is everyone's) and plant files in it;
    a folder that is a link, belongs to another user, or others may write to, is refused.

    Raises:
        ValueError: Naming the folder, who owns it, and the setting that names another.
    """
    path = Path(tempfile.gettempdir()) / name
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700)
    info = path.lstat()
    if path.is_symlink() or not path.is_dir() or info.st_uid != os.getuid():
        raise ValueError(
            f"{path} (urgym's private folder in the temporary directory) is not a folder of yours (it is a link, a "
            f"file, or belongs to user {info.st_uid}); set {setting} to a folder of your own"
        )
    if info.st_mode & 0o077:  # made by an older urgym with the umask's mode: made private now
        path.chmod(0o700)
    return path


def policy_cache_dir() -> Path:
    """The folder of cached agent policies (exact evaluation): ``$URGYM_POLICY_CACHE``, else beside the table cache.

    Beside it, not inside: the table cache holds solved tables only. With the table cache at ``~/.cache/urgym``
    the policies lie in ``~/.cache/urgym-policies``.

    Raises:
        ValueError: If ``$URGYM_POLICY_CACHE`` lies inside the table cache.
    """
    if os.environ.get("URGYM_POLICY_CACHE"):
        path = Path(os.environ["URGYM_POLICY_CACHE"])
        cache = in_table_cache(path)
        if cache is not None:
            raise ValueError(
                f"URGYM_POLICY_CACHE={path} lies inside urgym's table cache ({cache}), which holds solved tables "
                "only; give a folder outside it"
            )
        return path
    tables = Path(os.path.abspath(cache_dir()))  # URGYM_CACHE=. has no name to put "-policies" after
    return tables.with_name(tables.name + "-policies")


def in_table_cache(path: str | os.PathLike) -> Path | None:
    """The table cache's folder if ``path`` lies inside it (links and ``..`` resolved), else None."""
    try:
        cache = Path(os.path.realpath(cache_dir()))
    except ValueError:  # $URGYM_CACHE names a file: no cache to protect
        return None
    real = Path(os.path.realpath(os.fspath(path)))
    return cache if real == cache or cache in real.parents else None


def table_kind(path: str | os.PathLike) -> str | None:
    """What table ``path`` holds, by its first bytes (:data:`TABLE_MAGICS`); None for anything else or no file."""
    try:
        with open_regular(os.path.realpath(os.fspath(path)), "a table") as f:  # a FIFO never blocks the check
            head = f.read(8)
    except (OSError, ValueError):
        return None
    return next((kind for magic, kind in TABLE_MAGICS.items() if head.startswith(magic)), None)


def precious_kind(path: str | os.PathLike) -> str | None:
    """Why an output may not be written at ``path``.

    It lies in the table cache, or it is a table file (:func:`in_table_cache`, :func:`table_kind`); None otherwise.
    """
    cache = in_table_cache(path)
    if cache is not None:
        return f"inside urgym's table cache ({cache}), which holds solved tables only"
    return table_kind(path)


def write_atomic(path: str | os.PathLike, write: Callable[[Path], None], table: bool = False) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it onto ``path``.

    A crash or interrupt leaves either the old file or the new one, never a partial one. The new file gets the
    old file's mode, or for a new file the mode the user's umask gives (not the temporary file's 0600).
    ``path`` ``-`` writes the bytes to standard output instead.

    Args:
        path: The file to write.
        write: Writes the new content to the path it is given.
        table: True only for the solver's table files, which may replace a table; anything else refuses to.

    Raises:
        ValueError: If ``path`` is a table file (see :func:`table_kind`) and ``table`` is False.
    """
    if str(path) == STDOUT:
        return _write_stdout(write)
    if not table and (kind := table_kind(path)):
        raise ValueError(f"cannot write {path}: it is {kind}; give another path")
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as err:
        raise _naming(err, path) from None
    os.close(fd)
    try:
        write(Path(tmp))
        with open(tmp, "rb+") as f:  # on disk before the rename, so a power cut cannot leave an empty file
            os.fsync(f.fileno())
        os.chmod(tmp, _mode_for(path))
        os.replace(tmp, path)
    except OSError as err:  # a full disk, a quota: the error names the file it was writing
        Path(tmp).unlink(missing_ok=True)
        raise _naming(err, path, tmp) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _naming(err: OSError, path: Path, tmp: str | None = None) -> OSError:
    """``err`` as an error of the same kind naming ``path`` as its file (a command shows ``PATH: reason``).

    An error that names another file (one ``write`` read) is kept; one naming none, or the temporary file, names
    ``path``.
    """
    if err.filename is not None and str(err.filename) != str(tmp):
        return err
    return type(err)(err.errno, err.strerror or str(err), str(path))


def _write_stdout(write: Callable[[Path], None]) -> Path:
    with tempfile.TemporaryDirectory(prefix="urgym-") as folder:
        tmp = Path(folder) / "out"
        write(tmp)
        sys.stdout.flush()
        with open(tmp, "rb") as f:
            shutil.copyfileobj(f, sys.stdout.buffer)
        sys.stdout.buffer.flush()
    return Path(STDOUT)


def _mode_for(path: Path) -> int:
    """The mode a written file gets: the existing file's, else what the umask leaves of 0666."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    try:  # Linux reports it without changing it (changing it, even briefly, races with other threads)
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def check_output(
    path: str | os.PathLike, formats: tuple[str, ...] | None = None, stdout: bool = False, table: str | None = None
) -> Path:
    """Check, before any long work, that ``path`` can be written as a regular file.

    Refused: an empty path, a path ending in ``/``, a directory, a symbolic link, a FIFO, a device or socket,
    a folder that cannot be created or written, and (with ``formats``) a suffix other than those. With ``stdout``,
    ``-`` is allowed and means standard output. A path in the table cache or naming a table file
    (:func:`precious_kind`) is refused too, unless ``table`` says what the solver is writing there: ``"cache"``
    (the cache's own slot, which may exist) or ``"out"`` (a table the user asked for, which may replace a table
    outside the cache).

    Raises:
        ValueError: Saying what is wrong with the path and what is allowed.
    """
    text = os.fspath(path)
    if not text.strip():
        raise ValueError("an empty output path; give a file name" + (" or - for standard output" if stdout else ""))
    if text == STDOUT:
        if stdout:
            return Path(STDOUT)
        raise ValueError("- (standard output) is not allowed here; give a file name")
    if text.endswith(("/", os.sep)):
        raise ValueError(f"cannot write {text}: it names a folder; give a file name inside it")
    path = Path(text)
    if formats is not None and path.suffix.lstrip(".").lower() not in formats:
        raise ValueError(f"cannot write {path}: give a file ending in " + ", ".join(f".{f}" for f in formats))
    kind = _special_kind(path)
    if kind:
        raise ValueError(f"cannot write {path}: it is {kind}; give the name of a regular file (or a new one)")
    if table not in (None, "cache", "out"):
        raise ValueError(f"table must be None, 'cache' or 'out', got {table!r}")
    cache = None if table == "cache" else in_table_cache(path)
    if cache is not None:
        raise ValueError(
            f"cannot write {path}: it is inside urgym's table cache ({cache}), which holds solved "
            "tables only; give another path"
        )
    kind = None if table is not None else table_kind(path)
    if kind:
        raise ValueError(f"cannot write {path}: it is {kind}; give another path")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:  # a real probe: permission bits say nothing for root or for special file systems like /proc
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".urgym-probe.")
        os.close(fd)
        os.unlink(probe)
    except OSError:
        raise ValueError(f"cannot write {path}: {folder} is not a writable directory") from None
    return path


def hold_lock(path: Path, busy: str) -> tuple[io.TextIOWrapper, Path]:
    """Hold an exclusive lock on the file ``path`` (created if missing); raise ``ValueError(busy)`` if another holds it.

    The lock is the kernel's (``flock``), so it ends with the process that holds it, however it ends: no stale lock
    is ever left. Returns the open file (closing it releases the lock) and its path.
    """
    while True:
        handle = open(path, "a")  # noqa: SIM115 - held until the work ends
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise ValueError(busy) from None
        try:  # the holder may have removed it before we locked: hold the file that is on disk
            if os.path.samestat(os.fstat(handle.fileno()), os.stat(path)):
                return handle, path
        except FileNotFoundError:
            pass
        handle.close()


CLAIM_NAME = ".urgym-lock"
"""The file in an output folder whose lock says that a run is writing there."""
_CLAIMS: dict[Path, io.TextIOWrapper] = {}


def claim_folder(folder: Path, what: str) -> None:
    """Claim ``folder`` for this process's run until it exits: a second run that claims it is refused at once.

    Two runs started together on one folder would both find it empty and then mix (and partly replace) each
    other's files; the claim is taken before that check, so only one of them gets past it. Claiming a folder this
    process holds already does nothing.
    """
    key = Path(os.path.realpath(folder))
    if key in _CLAIMS:
        return
    handle, _ = hold_lock(
        key / CLAIM_NAME,
        f"another run is writing {what} to {folder} (it holds {CLAIM_NAME} there); wait for it to finish or give "
        "another folder",
    )
    _CLAIMS[key] = handle
    if len(_CLAIMS) == 1:
        atexit.register(release_claims)


def release_folder(folder: Path) -> None:
    """End this process's claim on ``folder`` (:func:`claim_folder`), if it holds one."""
    key = Path(os.path.realpath(folder))
    handle = _CLAIMS.pop(key, None)
    if handle is not None:
        (key / CLAIM_NAME).unlink(missing_ok=True)  # while still locked, as the solver does
        handle.close()


def release_claims() -> None:
    """End every claim this process holds (at exit, and when a command ends at once on Ctrl-C)."""
    for folder in list(_CLAIMS):
        release_folder(folder)


def _special_kind(path: Path) -> str | None:
    """What ``path`` is if it exists and is not a regular file (None: missing or a regular file)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    return _kind_of(mode)


def _kind_of(mode: int) -> str | None:
    """What a file of ``mode`` is when it is not a regular file (None: a regular file)."""
    for test, kind in (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return kind
    return None


def check_distinct(
    outputs: Mapping[str, str | os.PathLike | None], inputs: Mapping[str, str | os.PathLike | None] | None = None
) -> None:
    """Refuse, before any work, an output that would replace an input or another output.

    Args:
        outputs: Output paths by the option that gives them (``{"--json": "out.json"}``); None entries are unused.
        inputs: Input files by what they are (``{"the game record": "game.json"}``).

    Raises:
        ValueError: Naming the two that share a path.
    """
    inputs_seen: dict[str, str] = {}
    for name, path in (inputs or {}).items():
        if path is not None and os.fspath(path) != STDOUT:
            inputs_seen[_identity(path)] = f"{name} ({os.fspath(path)})"
    outputs_seen: dict[str, str] = {}
    for option, path in outputs.items():
        if path is None:
            continue
        key = STDOUT if os.fspath(path) == STDOUT else _identity(path)
        if key in inputs_seen:
            raise ValueError(f"{option} {os.fspath(path)} would replace {inputs_seen[key]}; give another path")
        if key in outputs_seen:
            raise ValueError(f"{outputs_seen[key]} and {option} both write {os.fspath(path)}; give each its own path")
        outputs_seen[key] = option


def _identity(path: str | os.PathLike) -> str:
    """A path as the file it names: symbolic links and ``..`` resolved, whether or not it exists."""
    return os.path.realpath(os.fspath(path))


class _DuplicateKeyError(ValueError):
    pass


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise _DuplicateKeyError(f"the key {key!r} appears twice in one object")
        data[key] = value
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def loads_json(text: str | bytes, what: str = "JSON") -> Any:
    """Parse JSON from a file that may come from a stranger: strictly.

    Refused, as a ``ValueError`` that starts with ``what``: text that is not JSON, a key given twice in one object
    (which plain ``json.loads`` resolves silently to the last), ``NaN`` and ``Infinity``, and nesting too deep to
    parse.
    """
    try:
        return json.loads(text, object_pairs_hook=_object, parse_constant=_no_constant)
    except json.JSONDecodeError as err:
        raise ValueError(f"{what} is not valid JSON ({err.msg} at line {err.lineno} column {err.colno})") from None
    except RecursionError:
        raise ValueError(f"{what} is nested too deeply to be a valid file") from None
    except UnicodeDecodeError:
        raise ValueError(f"{what} is not UTF-8 text") from None
    except ValueError as err:  # a duplicate key or a constant
        raise ValueError(f"{what} is not valid: {err}") from None


def open_regular(path: str | os.PathLike, what: str) -> io.BufferedReader:
    """Open a stranger's file for reading in binary, refusing anything but a regular file before reading.

    It is opened without blocking, so a FIFO with no writer is refused at once instead of waiting for one; a symbolic
    link is followed to what it names (a link to ``/dev/zero`` is a device).

    Raises:
        ValueError: If ``path`` is a directory, a FIFO, a device or a socket (naming it and ``what`` was expected).
        OSError: If it cannot be opened (``FileNotFoundError`` where there is no such file).
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        kind = _kind_of(os.fstat(fd).st_mode)
        if kind is not None:
            raise ValueError(f"{path} is {kind}, not a regular file; {what} is read from a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def existing_file(path: str | os.PathLike, what: str) -> Path:
    """``path`` if it names a regular file (a link to one counts); what ``what`` a library reads by its path.

    Raises:
        FileNotFoundError: If there is nothing at ``path`` ("no ``what`` at ``path``").
        ValueError: If it is a directory, a FIFO, a device or a socket.
    """
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise FileNotFoundError(f"no {what} at {path}") from None
    kind = _kind_of(mode)
    if kind is not None:
        raise ValueError(f"{path} is {kind}, not a regular file; {what} is read from a regular file")
    return path


def read_bounded(path: str | os.PathLike, limit: int, what: str) -> bytes:
    """The bytes of a stranger's regular file of at most ``limit`` bytes, counted while reading.

    Raises:
        ValueError: If it is not a regular file (:func:`open_regular`) or holds more than ``limit`` bytes (naming
            ``what`` and the bound).
        OSError: If it cannot be read.
    """
    with open_regular(path, what) as f:
        # A regular file's stated size refuses a big one before reading; the read itself bounds a file whose stated
        # size is not its length (``/proc``).
        too_big = os.fstat(f.fileno()).st_size > limit
        data = b"" if too_big else f.read(limit + 1)
        if too_big or len(data) > limit:
            raise ValueError(f"{path} holds more than {limit:,} bytes, more than {what} can hold")
    return data


MAX_JSON_DEPTH = 64
"""The deepest nesting of arrays and objects :func:`read_json` accepts (urgym's files nest at most 6 deep)."""


def read_json(path: str | os.PathLike, limit: int, what: str) -> Any:
    """A stranger's JSON file, read within bounds.

    A regular file of at most ``limit`` bytes, parsed strictly (:func:`loads_json`), nested at most
    :data:`MAX_JSON_DEPTH` deep.

    Raises:
        ValueError: Naming the file and what is wrong: not a regular file (a FIFO, a device, a folder), too large,
            not JSON, or nested too deeply.
        OSError: If it cannot be read (``FileNotFoundError`` where there is none).
    """
    data = loads_json(read_bounded(path, limit, what), f"{path}")
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise ValueError(f"{path} nests more than {MAX_JSON_DEPTH} levels deep; {what} is not")
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return data


MAX_NPZ_ARRAYS = 64
"""Most arrays :func:`read_npz` reads from one file (urgym's models hold at most 17)."""


def read_npz(path: str | os.PathLike, limit: int, what: str) -> dict[str, np.ndarray]:
    """The arrays of a stranger's ``.npz`` file, without unpickling anything.

    Refused before inflating past ``limit`` bytes: both the sizes the archive declares and the sizes its arrays'
    headers declare are counted before an array is read, and an array whose data does not match its header or its
    checksum is refused (``what`` names the kind of file in the messages).

    Raises:
        ValueError: If it is not a regular file, the arrays would inflate past ``limit``, are more than
            :data:`MAX_NPZ_ARRAYS`, hold Python objects, or the file is not an intact ``.npz`` archive.
        OSError: If it cannot be read.
    """
    with open_regular(path, what) as f:
        try:
            with zipfile.ZipFile(f) as archive:
                members = archive.infolist()
                if len(members) > MAX_NPZ_ARRAYS:
                    raise ValueError(f"it holds {len(members):,} arrays, more than {what}'s {MAX_NPZ_ARRAYS}")
                inflated = sum(info.file_size for info in members)
                if inflated > limit:
                    raise ValueError(f"its arrays inflate to {inflated:,} bytes, more than {what}'s {limit:,}")
                declared = sum(_npy_bytes(archive, info) for info in members)
                if declared > limit:
                    raise ValueError(f"its arrays declare {declared:,} bytes, more than {what}'s {limit:,}")
                arrays = {}
                for info in members:
                    with archive.open(info) as member:
                        name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
                        arrays[name] = np.lib.format.read_array(member, allow_pickle=False)
                return arrays
        except (zipfile.BadZipFile, EOFError, OSError) as err:  # bad CRC-32, a member shorter than it says
            raise ValueError(f"it is not an intact .npz archive ({err})") from None


def _npy_bytes(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> int:
    """The bytes an ``.npy`` member's header declares, read from the header alone."""
    with archive.open(info) as member:
        try:
            major, _ = np.lib.format.read_magic(member)
            read_header = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
            shape, _, dtype = read_header(member)
        except ValueError as err:
            raise ValueError(f"its member {info.filename[:60]!r} is not an .npy array ({err})") from None
    if dtype.hasobject:
        raise ValueError(f"its member {info.filename[:60]!r} holds Python objects, which are never read")
    return dtype.itemsize * math.prod(int(n) for n in shape)


class MissingExtraError(ImportError):
    """An optional integration was used without its extra installed; the message says how to install it."""


_TORCH_FIRST = "pip install torch==2.13.0 (the CPU build) first, then "


def require_extra(module: str, extra: str, purpose: str):
    """Import ``module`` or raise :class:`MissingExtraError` naming the extra and a command that installs it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        first = _TORCH_FIRST if extra in ("learn", "onnx") else ""
        raise MissingExtraError(
            f"{purpose} needs the {extra!r} extra ({module} is not installed): {first}{install_command(extra)}"
        ) from None


def install_command(extra: str) -> str:
    """A pip command that installs an extra here.

    From the source checkout urgym runs from, if it has one, else the extra's own requirements (urgym itself is not on
    PyPI).
    """
    root = Path(__file__).resolve().parents[1]
    if (root / "pyproject.toml").exists():
        return f"pip install -e '{root}[{extra}]'"
    from importlib.metadata import PackageNotFoundError, requires

    try:
        marker = f'extra == "{extra}"'
        needed = [r.split(";")[0].strip() for r in requires("urgym") or () if marker in r.replace("'", '"')]
    except PackageNotFoundError:
        needed = []
    return "pip install " + " ".join(f"'{r}'" for r in needed) if needed else f"pip install 'urgym[{extra}]'"
