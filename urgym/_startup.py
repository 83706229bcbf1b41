"""Ctrl-C while a command starts: one line and status 130, not a traceback from the middle of an import.

The commands' modules import numpy, numba and more before their ``main`` (wrapped by :func:`urgym.cli.command`)
can catch ``KeyboardInterrupt``. Each package imports this module first; when the program is one of urgym's
console scripts, it installs a SIGINT handler that ends the start-up at once, and :func:`end` hands SIGINT back
to Python once the command's own handling is in place. A program that merely imports urgym is left alone.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys

_SCRIPT = re.compile(rb"^from (urgym|solver|agents|evaluation)\.[\w.]+ import", re.MULTILINE)


def _interrupted(signum: int, frame: object) -> None:
    name = os.path.basename(sys.argv[0]) if sys.argv else "urgym"
    os.write(2, f"\n{name}: interrupted\n".encode())
    os._exit(130)


def _is_console_script() -> bool:
    script = getattr(sys.modules.get("__main__"), "__file__", None)
    if not script:
        return False
    try:
        with open(script, "rb") as f:
            return bool(_SCRIPT.search(f.read(4096)))
    except OSError:
        return False


def begin() -> None:
    """Install the start-up handler when running as one of urgym's console scripts (the main thread only)."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler and _is_console_script():
        with contextlib.suppress(ValueError):  # not the main thread
            signal.signal(signal.SIGINT, _interrupted)


def end() -> None:
    """Give SIGINT back to Python (KeyboardInterrupt), once a command catches it itself."""
    if signal.getsignal(signal.SIGINT) is _interrupted:
        signal.signal(signal.SIGINT, signal.default_int_handler)


begin()
