"""Writing files so that nothing half-written is ever seen, and the error for a missing optional extra."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["MissingExtraError", "require_extra", "write_atomic"]


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
