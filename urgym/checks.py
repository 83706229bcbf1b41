"""The one check of integer arguments: the same exception type, and the same words, for the same mistake."""

from __future__ import annotations

import numpy as np

__all__ = ["integer", "is_integer"]


def is_integer(value: object) -> bool:
    """True for a Python or numpy integer; False for a bool, a float, a string and anything else."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def integer(value: object, name: str, low: int | None = None, high: int | None = None,
            bounds: str | None = None) -> int:
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
