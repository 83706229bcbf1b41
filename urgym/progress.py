"""Progress bars: one helper for every long piece of work (solves, matches, training, sampling).

A bar is drawn on stderr only when it is asked for and stderr is a terminal: in a log file, a pipe or CI it stays
off, so logs hold results rather than hundreds of redrawn bars. ``URGYM_PROGRESS=1`` draws bars anyway (a
terminal multiplexer that tqdm does not recognise) and ``URGYM_PROGRESS=0`` never draws them.
"""

from __future__ import annotations

import os
from typing import Any

from tqdm.auto import tqdm

__all__ = ["progress_bar"]


def progress_bar(total: int | None, desc: str | None, enabled: bool = True, **options: Any) -> tqdm:
    """A tqdm bar over ``total`` steps, shown when ``enabled`` and stderr is a terminal (see the module docstring).

    Args:
        total: The steps of the work (None: unknown).
        desc: The bar's label.
        enabled: False hides the bar whatever the terminal (a command's ``--no-progress``).
        **options: tqdm's other options (``unit``, ``unit_scale``, ``initial``, ``bar_format``...).
    """
    forced = os.environ.get("URGYM_PROGRESS", "")
    disable: bool | None = None  # tqdm: hide the bar when stderr is not a terminal
    if not enabled or forced == "0":
        disable = True
    elif forced == "1":
        disable = False
    return tqdm(total=total, desc=desc, disable=disable, dynamic_ncols=True, **options)
