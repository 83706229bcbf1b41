"""Thread counts of numba's parallel kernels and of torch, which share one OpenMP runtime.

numba's OpenMP threading layer and torch's CPU kernels load the same libgomp. When numba starts its threads (at
its first parallel kernel, or its first ``get_num_threads``) it sets that runtime's thread count to its own (every
core), and torch reads it from then on: a training process that set torch to one thread found it on every core after
its first exact evaluation, its threads competing with its own environment workers and the learner several times
slower. :func:`start_numba_threads`, run when urgym is imported, starts numba's threads at once with torch's count
kept, so nothing urgym does later moves it; :func:`keep_torch_threads` guards a block all the same;
:func:`one_thread` runs a block on one thread of each, as a seed of the benchmark does.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["keep_torch_threads", "one_thread", "start_numba_threads"]


@contextmanager
def keep_torch_threads() -> Iterator[None]:
    """Leave torch's thread counts (intra- and inter-op) as they were before the block, whatever numba did in it.

    Torch is neither imported nor touched when the process has not imported it.
    """
    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None else None
    try:
        yield
    finally:
        torch = sys.modules.get("torch")
        if torch is not None and before is not None and torch.get_num_threads() != before:
            torch.set_num_threads(before)


def start_numba_threads() -> None:
    """Start numba's threads now, leaving torch's thread count as it was (see the module docstring)."""
    import numba

    with keep_torch_threads():
        numba.get_num_threads()


@contextmanager
def one_thread() -> Iterator[None]:
    """Run the block with numba's parallel kernels and torch on one thread each; restore both after it.

    Torch imported inside the block is set to one thread by whoever imports it (the trainers read it from their
    settings); torch imported before is set here.
    """
    import numba

    numba_before = numba.get_num_threads()
    torch = sys.modules.get("torch")
    torch_before = torch.get_num_threads() if torch is not None else None
    numba.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(numba_before)  # first: with OpenMP it may move torch's count as well
        torch = sys.modules.get("torch")
        if torch is not None and torch_before is not None:
            torch.set_num_threads(torch_before)
