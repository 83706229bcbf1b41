"""The one check of integer arguments: the same exception type, and the same words, for the same mistake."""

from __future__ import annotations

import numpy as np

__all__ = ["integer", "integer_array", "is_integer", "plural", "printable", "short_repr"]


def is_integer(value: object) -> bool:
    """True for a Python or numpy integer; False for a bool, a float, a string and anything else."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def integer(
    value: object, name: str, low: int | None = None, high: int | None = None, bounds: str | None = None
) -> int:
    """``value`` as an ``int``: a Python or numpy integer (never a bool, a float or a string), within [low, high].

    Raises:
        ValueError: ``"{name} must be an integer from {low} to {high}, got {value!r}"`` (the range as given, or
            ``bounds`` in its place, e.g. ``"from 0 to 2**64 - 1"``).
    """
    if not is_integer(value) or (low is not None and value < low) or (high is not None and value > high):
        if bounds is not None:
            bounds = f" {bounds}"
        elif low is not None and high is not None:
            bounds = f" from {low} to {high}"
        elif low is not None:
            bounds = f" of at least {low}"
        elif high is not None:
            bounds = f" of at most {high}"
        else:
            bounds = ""
        raise ValueError(f"{name} must be an integer{bounds}, got {value!r}")
    return int(value)


_INT64 = np.iinfo(np.int64)


def integer_array(value: object, name: str) -> np.ndarray:
    """``value`` (an integer or a list or array of them) as an int64 array, refusing what is not exactly integers.

    A float (even ``3.0``: a large one is rounded and names another number), a bool, a string or a number outside
    int64 is refused rather than converted.

    Raises:
        ValueError: ``"{name} must be integers (int64), got ..."``.
    """
    try:
        array = np.asarray(value)
    except (ValueError, TypeError, OverflowError):
        array = None
    if array is not None and array.dtype == object:
        items = array.reshape(-1)
        if all(is_integer(v) and _INT64.min <= v <= _INT64.max for v in items):
            array = np.array([int(v) for v in items], dtype=np.int64).reshape(array.shape)
    if array is None or array.dtype.kind not in "iu" or array.dtype == np.bool_:
        raise ValueError(f"{name} must be integers (int64), got {short_repr(value)}")
    if array.dtype.kind == "u" and array.size and array.max() > _INT64.max:
        raise ValueError(f"{name} must be integers from {_INT64.min} to {_INT64.max}, got {short_repr(value)}")
    return array.astype(np.int64, copy=False)


def short_repr(value: object) -> str:
    """``repr(value)`` cut to 80 characters (a value from a stranger quoted in an error message)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def printable(text: str) -> str:
    r"""``text`` with each character a terminal would act on written as its Python escape (``\x1b``).

    An error or a table names paths and values that the user, or an attacker, chose: an escape sequence in one must
    not reach the terminal.
    """
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else ascii(char)[1:-1] for char in text)


def plural(count: int, word: str, many: str | None = None) -> str:
    """``count`` and ``word`` in the right number: ``1 seed``, ``2 seeds``, ``1,000 decisions``."""
    return f"{count:,} {word if count == 1 else many or word + 's'}"
