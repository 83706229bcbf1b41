"""Ctrl-C while a command starts: one line and status 130, not a traceback from the middle of an import.

The commands' modules import numpy, numba and more before their ``main`` (wrapped by
:func:`urgym.commands.common.command`) can catch ``KeyboardInterrupt``. Each package imports this module first;
when the program is one of urgym's console scripts, it installs a SIGINT handler that ends the start-up at once,
and :func:`end` hands SIGINT back to Python once the command's own handling is in place; the worker processes such
a command spawns ignore Ctrl-C (the command stops them), and are born holding it back (:func:`worker_context`,
the context of urgym's worker pools, with :func:`ignore_ctrl_c` as their initializer). A program that merely
imports urgym is left alone.

It also places numba's cache before numba is imported: in a read-only install (a system or container install used by
another user, whose home may not exist or be writable), numba finds no folder for the compiled code of ``cache=True``
functions and every import fails. There the cache goes to a private folder in the temporary directory, said once.

A ``KeyboardInterrupt`` raised inside a ctypes callback (numba's cache, through llvmlite) cannot propagate: Python
prints it as "Exception ignored" and goes on, as if Ctrl-C never came. :func:`end` therefore also installs a
``sys.unraisablehook`` that sends such an interrupt again a moment later, once the callback has returned.
"""

from __future__ import annotations

# Built into the interpreter, so imported at once: the handler goes in before anything slower is imported (on a busy
# machine, typing alone takes tens of milliseconds, a window in which Ctrl-C gave a traceback).
import os
import signal
import sys

_SCRIPT = b"from urgym.commands."


def _interrupted(signum: int, frame: object) -> None:
    name = os.path.basename(sys.argv[0]) if sys.argv else "urgym"
    os.write(2, f"\n{name}: interrupted\n".encode())
    os._exit(130)


def _is_console_script(module: str = "__main__") -> bool:
    """Whether ``module`` (the program's main module) is one of urgym's console scripts."""
    script = getattr(sys.modules.get(module), "__file__", None)
    if not script:
        return False
    try:
        with open(script, "rb") as f:
            return any(line.startswith(_SCRIPT) for line in f.read(4096).splitlines())
    except OSError:
        return False


def begin() -> None:
    """Install the start-up handler when running as one of urgym's console scripts (the main thread only).

    A worker process such a command spawns (which imports the script again, as ``__mp_main__``) ignores Ctrl-C from
    its start: the terminal's Ctrl-C reaches it too, and the command answers it and stops its workers; a worker still
    importing would otherwise print a traceback of its own.
    """
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return
    try:
        if _is_console_script():
            signal.signal(signal.SIGINT, _interrupted)
        elif _is_console_script("__mp_main__"):
            signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread
        pass


begin()

import contextlib  # noqa: E402 (after the handler)
import multiprocessing.context  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from typing import Any, TypeVar  # noqa: E402

T = TypeVar("T")


def _redeliver_swallowed_interrupt(unraisable: object) -> None:
    """``sys.unraisablehook`` of a command: a Ctrl-C that Python had to ignore is sent again, a moment later."""
    if isinstance(getattr(unraisable, "exc_value", None), KeyboardInterrupt):
        timer = threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT))  # a real signal wakes a sleep
        timer.daemon = True
        timer.start()
        return
    _default_unraisablehook(unraisable)


_default_unraisablehook = sys.unraisablehook


def end() -> None:
    """Give SIGINT back to Python (KeyboardInterrupt), once a command catches it itself."""
    if signal.getsignal(signal.SIGINT) is _interrupted:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.unraisablehook = _redeliver_swallowed_interrupt


@contextlib.contextmanager
def ctrl_c_held() -> Iterator[None]:
    """Hold Ctrl-C back in this thread while a worker process starts.

    A terminal's Ctrl-C reaches every process of the group, and a worker just spawned meets it before it imports
    anything that could ignore it: it prints a traceback from the middle of Python's start. A started process inherits
    the signals its parent's thread holds back, so a worker started inside this block cannot be interrupted until it
    calls :func:`ignore_ctrl_c`. The parent still hears a Ctrl-C: at the end of the block, or at once where another of
    its threads takes the signal. Where signals cannot be held (not POSIX), a plain block.
    """
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def ignore_ctrl_c() -> None:
    """A worker process's start (a pool's initializer): it ignores Ctrl-C (its parent stops it), no longer held back.

    Workers of :func:`worker_context` hold SIGINT back from their birth; a Ctrl-C that came before this call is
    dropped, as an ignored signal is.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


class WorkerProcess(multiprocessing.context.SpawnProcess):
    """A spawned process born holding Ctrl-C back (:func:`ctrl_c_held`), whichever thread of a pool starts it."""

    def start(self) -> None:
        """Start the process, Ctrl-C held back in this thread meanwhile."""
        with ctrl_c_held():
            super().start()


class WorkerContext(multiprocessing.context.SpawnContext):
    """The spawn context whose processes are :class:`WorkerProcess`."""

    Process = WorkerProcess


_TRACKER_QUIET = "ignore:resource_tracker:UserWarning"


def worker_context() -> WorkerContext:
    """The multiprocessing context of urgym's worker pools (give ``ignore_ctrl_c`` as the pool's initializer).

    Spawned, not forked: the parent may hold numba worker threads, which fork does not copy safely. Its workers are
    born holding Ctrl-C back, wherever the pool starts them (a ``ProcessPoolExecutor`` starts them in ``submit``). The
    resource tracker (started with the first pool, with these flags) cleans up a pool's semaphores after a command
    stopped by Ctrl-C; its note that it did so is noise on the user's terminal.
    """
    if _TRACKER_QUIET not in sys.warnoptions:
        sys.warnoptions.append(_TRACKER_QUIET)
    return WorkerContext()


def interruptible(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)`` on a helper thread while the main thread waits, so that Ctrl-C is heard at once.

    A long numba call (one move of ``expectimax:16``) releases the GIL but cannot see a signal: run on the main thread,
    it would hold Ctrl-C back until it returns. Waiting in ``join``, the main thread raises KeyboardInterrupt within a
    moment; the helper is a daemon thread, and a command then ends the process. Off the main thread, a plain call.
    """
    if threading.current_thread() is not threading.main_thread():
        return function(*args)
    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            outcome.append((True, function(*args)))
        except BaseException as err:  # handed to the caller's thread
            outcome.append((False, err))

    helper = threading.Thread(target=run, name="urgym-work", daemon=True)
    helper.start()
    while helper.is_alive():
        helper.join(0.1)
    done, value = outcome[0]
    if not done:
        raise value
    return value


def _writable(folder: str) -> bool:
    """Whether files can be made in ``folder`` (made if missing), tried as numba tries it."""
    try:
        os.makedirs(folder, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def place_numba_cache() -> str | None:
    """Point numba's cache at a writable private folder where its own choices cannot be written; return that folder.

    Numba caches beside the source (``__pycache__``), else in the user's cache folder (``$XDG_CACHE_HOME`` or
    ``~/.cache``). Nothing is changed when either works or ``NUMBA_CACHE_DIR`` is set.
    """
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None
    package = os.path.dirname(os.path.abspath(__file__))
    if _writable(os.path.join(package, "__pycache__")):
        return None
    home = os.path.expanduser("~")
    user_cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(home, ".cache")
    if home != "~" and _writable(os.path.join(user_cache, "numba")):
        return None
    for base in (tempfile.gettempdir(), "/dev/shm"):
        folder = os.path.join(base, f"urgym-numba-cache-{os.getuid()}")
        if _writable(folder) and os.stat(folder).st_uid == os.getuid():  # never a folder another user made
            os.environ["NUMBA_CACHE_DIR"] = folder
            if "numba" in sys.modules:  # imported already: its config read the environment then
                sys.modules["numba"].config.CACHE_DIR = folder
            print(
                f"note: urgym's folder and your cache folder are read-only; numba caches compiled code in {folder}",
                file=sys.stderr,
            )
            return folder
    return None


place_numba_cache()
