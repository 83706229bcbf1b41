"""How the hostile-input cases are run and judged: one outcome per case, "clear" or the class of what went wrong.

The promises judged are those of docs/errors.md: a bad command line ends with status 2 and one line
``PROG: error: ...`` naming what was wrong, a library call raises the documented exception naming it, and nothing is
lost, left running or taken silently.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import traceback
import warnings
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

BIN = Path(sys.executable).parent
SMALL = ["--pieces", "2"]  # cases that get past argument checking solve (or load) the tiny finkel table
RGU = Path(__file__).resolve().parents[3] / "shared" / "references" / "data" / "finkel2p.rgu"
TIME_LIMIT = 90  # seconds per case; every case should fail in a few seconds


@dataclass
class Outcome:
    """What one case gave: ``verdict`` is "clear" or the class of a remaining problem."""

    case: str
    verdict: str
    detail: str


def run(argv: list[str], cwd: Path, timeout: float = 120, **kwargs) -> subprocess.CompletedProcess | None:
    """One of urgym's commands in a process of its own; None when it gave no answer within ``timeout``."""
    try:
        return subprocess.run(
            [str(BIN / argv[0]), *argv[1:]],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=kwargs.pop("stdin", subprocess.DEVNULL),
            **kwargs,
        )
    except subprocess.TimeoutExpired:
        return None


def judge(result: subprocess.CompletedProcess | None, words: str, case: str, status: int = 2) -> Outcome:
    """One clear last line holding ``words``, exit ``status`` and no traceback; ``hang`` for no answer."""
    if result is None:
        return Outcome(case, "hang", "no answer within the case's time")
    lines = [line for line in result.stderr.strip().splitlines() if line.strip()]
    if "Traceback" in result.stderr:
        return Outcome(case, "traceback", lines[-1][:160])
    if result.returncode != status or not lines or words not in lines[-1]:
        return Outcome(case, "unclear", f"status {result.returncode}; {(lines or [''])[-1][:160]!r}")
    return Outcome(case, "clear", lines[-1][:160])


def library_case(case: str, call, words: str, Outcome) -> Outcome:
    """A library call that must refuse with a ValueError or OSError holding ``words``.

    ``silent-wrong`` where it is accepted, ``traceback`` for any other exception, ``unclear`` for other words.
    """
    try:
        call()
    except (ValueError, OSError) as err:
        return Outcome(case, "clear" if words in str(err) else "unclear", str(err)[:160])
    except Exception as err:
        return Outcome(case, "traceback", f"{type(err).__name__}: {err}"[:160])
    return Outcome(case, "silent-wrong", "accepted")


class TimeLimitError(Exception):
    """A case ran past its time limit."""


@contextlib.contextmanager
def time_limit(seconds: int):
    """Raise ``TimeLimitError`` in the main thread once ``seconds`` have passed (a hang is a finding, not a stall)."""

    def expire(*_: object) -> None:
        raise TimeLimitError

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run_in_process(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int | None, str, str]:
    """A command's ``main`` called as its console script would be: (status, stdout, stderr); None for a hang.

    ``sys.argv``, the working folder and the environment are the command's while it runs; an exception that escapes
    ``main`` is printed as Python prints it (a traceback) with status 1, and warnings go to stderr, as in a process of
    its own. It costs milliseconds where a process costs a second of start-up.
    """
    (script,) = entry_points(group="console_scripts", name=argv[0])
    main = script.load()
    out, err = io.StringIO(), io.StringIO()
    saved = (sys.argv, os.getcwd(), dict(os.environ))
    sys.argv = [argv[0], *argv[1:]]
    os.chdir(cwd)
    os.environ.update(env)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
            warnings.simplefilter("default")
            try:
                with time_limit(TIME_LIMIT):
                    status = main(argv[1:]) or 0
            except TimeLimitError:
                status = None
            except SystemExit as stop:
                status = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
            except BaseException:  # what a process would print before dying
                traceback.print_exc()
                status = 1
    finally:
        sys.argv = saved[0]
        os.chdir(saved[1])
        os.environ.clear()
        os.environ.update(saved[2])
    return status, out.getvalue(), err.getvalue()


def review_peak_bytes(folder: Path, player: str) -> int:
    """The peak memory of ``review FOLDER --player PLAYER`` in a process of its own (its maximum resident size)."""
    code = (
        "import resource, sys; from urgym.commands.review import main; main(sys.argv[1:]);"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(folder), "--player", player, "--no-progress"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    return int(result.stderr.strip().splitlines()[-1]) * 1024
