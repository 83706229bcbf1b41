"""Writing files so that nothing half-written is ever seen, and the error for a missing optional extra."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["PLOT_FORMATS", "MissingExtraError", "check_output", "require_extra", "write_atomic"]

PLOT_FORMATS = ("png", "pdf", "svg")
"""File types that plots are written as (by the path's suffix)."""


def write_atomic(path: str | os.PathLike, write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it onto ``path``.

    A crash or interrupt leaves either the old file or the new one, never a partial one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(Path(tmp))
        with open(tmp, "rb+") as f:  # on disk before the rename, so a power cut cannot leave an empty file
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def check_output(path: str | os.PathLike, formats: tuple[str, ...] | None = None) -> Path:
    """Check, before any long work, that ``path`` can be written: not a directory, its folder creatable and
    writable, and (with ``formats``) its suffix one of them.

    Raises:
        ValueError: Saying what is wrong with the path.
    """
    path = Path(path)
    if formats is not None and path.suffix.lstrip(".").lower() not in formats:
        raise ValueError(f"cannot write {path}: give a file ending in " + ", ".join(f".{f}" for f in formats))
    if path.is_dir():
        raise ValueError(f"cannot write {path}: it is a directory; give a file name")
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


class MissingExtraError(ImportError):
    """An optional integration was used without its extra installed; the message says how to install it."""


_TORCH_FIRST = "pip install torch==2.13.0 (the CPU build) first, then "


def require_extra(module: str, extra: str, purpose: str):
    """Import ``module`` or raise :class:`MissingExtraError` naming the extra that provides it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        first = _TORCH_FIRST if extra == "learn" else ""
        raise MissingExtraError(f"{purpose} needs the {extra!r} extra ({module} is not installed): "
                                f"{first}pip install 'urgym[{extra}]'") from None
