"""A training run's checkpoint: everything needed to go on from an evaluation point as if never interrupted.

An algorithm that can (``maskable-ppo``, ``dqn``) writes ``checkpoint.pkl`` into its run folder after each evaluation:
the run's bookkeeping (curve, logs, best regret, seconds so far) and the learner's whole state (the model with its
optimizer, the replay buffer, the games in progress, every random stream). Resumed from it, a run ends with the same
model and the same curve as an uninterrupted one (tested to the bit). The file goes once the run finishes.

A checkpoint is a pickle, and reading a pickle runs whatever code it names; a file someone else placed in a run folder
must not be read. Each checkpoint is therefore signed (HMAC-SHA256) with a key private to the user
(``.checkpoint.key`` in the cache folder, a dot-file beside the tables, mode 0600, made on first use), and one whose
signature does not match is refused before it is unpickled.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import pickle
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from urgym.files import cache_dir, open_regular, write_atomic

__all__ = ["CHECKPOINT", "read_checkpoint", "remove_checkpoint", "write_checkpoint"]

CHECKPOINT = "checkpoint.pkl"
"""The checkpoint's name in a run folder."""
_MAGIC = b"urgym training checkpoint 1\n"
_KEY_BYTES = 32


def _key() -> bytes:
    """The user's signing key, made (0600, never replaced) on first use."""
    path = cache_dir() / ".checkpoint.key"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        pass
    else:
        with os.fdopen(fd, "wb") as f:
            f.write(os.urandom(_KEY_BYTES))
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        key = f.read(_KEY_BYTES + 1)
    if info.st_uid != os.getuid() or info.st_mode & 0o077 or len(key) != _KEY_BYTES:
        raise ValueError(
            f"{path} is not a private key of this user (owned by you, mode 0600, {_KEY_BYTES} bytes); remove it and "
            "a new one is made (checkpoints signed with the old one are then refused)"
        )
    return key


_SIGNATURE_LINE = 2 * hashlib.sha256().digest_size + 1  # hex digits and the newline


def _signature(chunks: Iterable[bytes]) -> bytes:
    """The signature of the bytes ``chunks`` make up, under this user's key."""
    mac = hmac.new(_key(), digestmod=hashlib.sha256)
    for chunk in chunks:
        mac.update(chunk)
    return mac.hexdigest().encode()


def _rest_of(file: BinaryIO, size: int = 1 << 20) -> Iterator[bytes]:
    """What is left of ``file``, ``size`` bytes at a time."""
    while chunk := file.read(size):
        yield chunk


def write_checkpoint(folder: Path, state: dict[str, Any]) -> Path:
    """Write ``state`` (picklable with cloudpickle) as ``folder``'s checkpoint, signed, atomically."""
    import cloudpickle

    payload = cloudpickle.dumps(state)
    content = _MAGIC + _signature([payload]) + b"\n" + payload
    return write_atomic(folder / CHECKPOINT, lambda tmp: tmp.write_bytes(content))


def read_checkpoint(folder: Path, identity: dict[str, Any]) -> dict[str, Any] | None:
    """``folder``'s checkpoint (None if it has none), checked to be this user's and of the run ``identity`` names.

    Raises:
        ValueError: For a file that is not a checkpoint (or not a regular file: a FIFO, a folder, a device), one not
            signed with this user's key, or one of another run (its algorithm, seed, budget or settings differ from
            ``identity``), naming what to do.
    """
    path = folder / CHECKPOINT
    if not path.exists():
        return None
    with open_regular(path, "a training checkpoint") as file:
        if file.readline(len(_MAGIC)) != _MAGIC:
            raise ValueError(f"{path} is not a urgym training checkpoint; remove it to train from the start")
        signature = file.readline(_SIGNATURE_LINE).rstrip(b"\n")
        start = file.tell()
        if not hmac.compare_digest(signature, _signature(_rest_of(file))):
            raise ValueError(
                f"{path} was not written by urgym under this user (its signature does not match this user's key), so "
                "it is not read; remove it to train from the start"
            )
        file.seek(start)
        state = pickle.loads(file.read())  # read only once signed: a planted file is refused without being held
    held = state.get("identity")
    if held != identity:
        differ = sorted(key for key in identity if held.get(key) != identity[key]) if isinstance(held, dict) else []
        raise ValueError(
            f"{path} is the checkpoint of another run (its {', '.join(differ) or 'identity'} differ); give the same "
            "algorithm, seed, budget and settings to resume it, or remove it to train from the start"
        )
    return state


def remove_checkpoint(folder: Path) -> None:
    """Remove ``folder``'s checkpoint (the run it belongs to has finished)."""
    (folder / CHECKPOINT).unlink(missing_ok=True)
