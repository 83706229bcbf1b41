"""Read PyTorch weight files without torch, so that a shipped network plays with numpy alone.

A weight file is ``torch.save`` of a state dict, as in a stable-baselines3 zip's ``policy.pth``.

Such a file is a zip: ``<name>/data.pkl`` (a pickle of the dict of tensors) and one member per storage,
``<name>/data/<key>``, holding the raw little-endian numbers. The pickle is read by a restricted unpickler that
knows exactly the names a state dict refers to (an ``OrderedDict``, typed storages, ``_rebuild_tensor_v2``,
``_rebuild_parameter``) and refuses every other global, as ``torch.load(weights_only=True)`` does: nothing in the
file can run code. Each tensor becomes a float64 or integer numpy array, checked to lie inside its storage.
"""

from __future__ import annotations

import collections
import io
import pickle
import zipfile
from typing import Any

import numpy as np

__all__ = ["MAX_WEIGHTS_BYTES", "read_state_dict"]

MAX_WEIGHTS_BYTES = 256 << 20
"""The most bytes of weights read from one file (a network urgym plays has well under 100 MB)."""

_STORAGE_DTYPES = {
    "DoubleStorage": np.float64,
    "FloatStorage": np.float32,
    "HalfStorage": np.float16,
    "LongStorage": np.int64,
    "IntStorage": np.int32,
    "ShortStorage": np.int16,
    "CharStorage": np.int8,
    "ByteStorage": np.uint8,
    "BoolStorage": np.bool_,
}
"""PyTorch's typed storages (as ``torch.save`` names them) and their numpy types."""


class _Storage:
    """One storage of the file: its numbers, read when a tensor refers to it."""

    def __init__(self, values: np.ndarray) -> None:
        self.values = values


def _rebuild_tensor(storage: _Storage, offset: int, size: tuple, stride: tuple, *_: Any) -> np.ndarray:
    """``torch._utils._rebuild_tensor_v2``: a view of ``storage``, checked to stay inside it, copied out."""
    if not isinstance(storage, _Storage):
        raise ValueError("a tensor refers to something that is not a storage")
    numbers = (offset, *size, *stride)
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in numbers) or len(size) != len(stride):
        raise ValueError(f"a tensor has a bad shape {size!r}, strides {stride!r} or offset {offset!r}")
    values = storage.values
    if any(n == 0 for n in size):
        return np.zeros(size, dtype=values.dtype)
    last = offset + sum((n - 1) * s for n, s in zip(size, stride, strict=True))
    if last >= values.shape[0]:
        raise ValueError(f"a tensor of shape {tuple(size)} reaches past its storage of {values.shape[0]} numbers")
    itemsize = values.dtype.itemsize
    view = np.lib.stride_tricks.as_strided(
        values[offset:], shape=tuple(size), strides=tuple(s * itemsize for s in stride), writeable=False
    )
    return np.array(view)


def _rebuild_parameter(data: np.ndarray, *_: Any) -> np.ndarray:
    """``torch._utils._rebuild_parameter``: a parameter is its tensor."""
    return data


_GLOBALS = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    **{("torch", name): name for name in _STORAGE_DTYPES},
}
"""Every global a state dict's pickle may name; anything else is refused."""


class _StateDictUnpickler(pickle.Unpickler):
    def __init__(self, data: bytes, archive: zipfile.ZipFile, prefix: str) -> None:
        super().__init__(io.BytesIO(data))
        self.archive = archive
        self.prefix = prefix
        self.storages: dict[str, _Storage] = {}
        self.total = 0

    def find_class(self, module: str, name: str) -> Any:
        try:
            return _GLOBALS[(module, name)]
        except KeyError:
            raise ValueError(f"it names {module}.{name}, which a file of weights does not need") from None

    def persistent_load(self, pid: Any) -> _Storage:
        if not (
            isinstance(pid, tuple)
            and len(pid) == 5
            and pid[0] == "storage"
            and pid[1] in _STORAGE_DTYPES
            and isinstance(pid[2], str)
            and pid[2].isascii()
            and pid[2].isdigit()
        ):
            raise ValueError(f"it refers to a storage urgym does not read: {str(pid)[:80]}")
        key = pid[2]
        if key not in self.storages:
            member = f"{self.prefix}data/{key}"
            size = self.archive.getinfo(member).file_size
            self.total += size
            if self.total > MAX_WEIGHTS_BYTES:
                raise ValueError(f"its weights are larger than {MAX_WEIGHTS_BYTES:,} bytes")
            dtype = np.dtype(_STORAGE_DTYPES[pid[1]]).newbyteorder("<")
            raw = self.archive.read(member)
            if len(raw) % dtype.itemsize:
                raise ValueError(f"its storage {key} is not a whole number of {pid[1]} values")
            self.storages[key] = _Storage(np.frombuffer(raw, dtype=dtype))
        return self.storages[key]


def read_state_dict(data: bytes) -> dict[str, np.ndarray]:
    """The tensors of a ``torch.save``'d state dict (the bytes of the file), by name, as numpy arrays.

    Raises:
        ValueError: For bytes that are not such a file, a pickle naming anything but a state dict's parts, a
            big-endian file, or a tensor outside its storage.
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise ValueError("it is not a PyTorch weights file (a zip holding data.pkl)") from None
    with archive:
        pickles = [n for n in archive.namelist() if n.endswith("/data.pkl") and n.count("/") == 1]
        if len(pickles) != 1:
            raise ValueError("it is not a PyTorch weights file (a zip holding one <name>/data.pkl)")
        prefix = pickles[0][: -len("data.pkl")]
        if f"{prefix}byteorder" in archive.namelist() and archive.read(f"{prefix}byteorder") != b"little":
            raise ValueError("its numbers are big-endian; urgym reads little-endian weights")
        if archive.getinfo(pickles[0]).file_size > MAX_WEIGHTS_BYTES:
            raise ValueError(f"its data.pkl is larger than {MAX_WEIGHTS_BYTES:,} bytes")
        try:
            state = _StateDictUnpickler(archive.read(pickles[0]), archive, prefix).load()
        except ValueError:
            raise
        except (pickle.UnpicklingError, KeyError, EOFError, TypeError, IndexError, AttributeError) as err:
            raise ValueError(f"its data.pkl cannot be read ({type(err).__name__}: {err})") from None
    if not isinstance(state, dict) or not all(
        isinstance(k, str) and isinstance(v, np.ndarray) for k, v in state.items()
    ):
        raise ValueError("it does not hold a state dict (names to tensors)")
    return dict(state)
