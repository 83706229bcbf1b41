"""Ctrl-C while a command starts: one line and status 130, not a traceback from the middle of an import.

The commands' modules import numpy, numba and more before their ``main`` (wrapped by
:func:`urgym.commands.common.command`) can catch ``KeyboardInterrupt``. Each package imports this module first;
when the program is one of urgym's console scripts, it installs a SIGINT handler that ends the start-up at once,
and :func:`end` hands SIGINT back to Python once the command's own handling is in place. A program that merely
imports urgym is left alone.

A ``KeyboardInterrupt`` raised inside a ctypes callback (numba's cache, through llvmlite) cannot propagate: Python
prints it as "Exception ignored" and goes on, as if Ctrl-C never came. :func:`end` therefore also installs a
``sys.unraisablehook`` that sends such an interrupt again a moment later, once the callback has returned.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
import threading

_SCRIPT = re.compile(rb"^from urgym\.commands\.[\w.]+ import", re.MULTILINE)


def _interrupted(signum: int, frame: object) -> None:
    name = os.path.basename(sys.argv[0]) if sys.argv else "urgym"
    os.write(2, f"\n{name}: interrupted\n".encode())
    os._exit(130)


def _redeliver_swallowed_interrupt(unraisable: object) -> None:
    """``sys.unraisablehook`` of a command: a Ctrl-C that Python had to ignore is sent again, a moment later."""
    if isinstance(getattr(unraisable, "exc_value", None), KeyboardInterrupt):
        timer = threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT))  # a real signal wakes a sleep
        timer.daemon = True
        timer.start()
        return
    _default_unraisablehook(unraisable)


_default_unraisablehook = sys.unraisablehook


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
        sys.unraisablehook = _redeliver_swallowed_interrupt


begin()
