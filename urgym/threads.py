"""Thread counts of numba's parallel kernels and of torch, which share one OpenMP runtime.

numba's OpenMP threading layer and torch's CPU kernels load the same libgomp. When numba runs a parallel kernel it
sets that runtime's thread count to its own (every core), and torch reads it from then on: a training process that
set torch to one thread finds it on every core after an exact evaluation, its threads competing with its own
environment workers and the learner ten times slower. :func:`keep_torch_threads` puts torch's count back after such
work; :func:`one_thread` runs a block on one thread of each, as a seed of the benchmark does.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["keep_torch_threads", "one_thread"]


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
