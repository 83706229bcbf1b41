"""Engines in any language, over UEI 1 (the Ur Engine Interface).

An engine is a program that reads commands on stdin and answers on stdout, one line each, UTF-8.

========================================================  ==================================================
urgym sends                                               the engine replies
========================================================  ==================================================
``uei``                                                   any ``id <key> <text>`` lines, then ``ueiok``
``rules <Rules.to_dict() as one line of JSON>``           nothing
``isready``                                               ``readyok``
``position turn <light|dark> light <p1,...,pN> dark       nothing
<q1,...,qN> roll <r> moves <m1,...,mk>``
``go``                                                    ``bestmove <m>``
``quit``                                                  exits
========================================================  ==================================================

Each side's pieces are their path positions, comma-separated, ascending (0 = at home, L + 1 = scored); ``moves``
are the legal moves of the roll by the source position of the moving piece (0 enters a piece), ascending, and
``bestmove`` must be one of them. A ``position`` line is complete, so there is no ``newgame``. The engine may
write ``info ...`` lines at any time; urgym ignores them. urgym waits for a reply only where one is due, and for
at most the time limit; it sends ``isready`` after each ``position``, so an answer to a position is seen at
once. An engine that crashes, hangs, answers out of turn or plays an illegal move stops the
work with a message naming the engine and the position, and the engine's process is stopped.

An engine runs in a session and process group of its own; stopping it (at the end of the work, on an error, on
Ctrl-C, at exit, or when the worker process holding it is terminated) asks it to ``quit``, waits a second, then
kills its whole process group, so the processes it started go with it. A process that leaves the group on
purpose (``setsid``) is beyond reach, as it is for any supervisor.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import selectors
import shlex
import shutil
import signal
import subprocess
import sys
import time
import weakref
from pathlib import Path

from urgym.agents.base import Agent, legal_moves_or_raise

from urgym import SIDES, Position, Rules

__all__ = [
    "DEFAULT_MOVE_TIME",
    "MAX_MOVE_TIME",
    "EngineAgent",
    "EngineError",
    "missing_program",
    "position_line",
    "stop_all_engines",
]

DEFAULT_MOVE_TIME = 10.0
MAX_MOVE_TIME = 86_400.0
"""The longest move time (a day): beyond it a deadline would overflow the clock's arithmetic."""
"""Seconds an engine may think about one move (and take for the handshake)."""
MAX_LINE = 65_536
"""Longest line urgym reads from an engine."""


class EngineError(ValueError):
    """An engine broke the protocol: it crashed, hung, answered out of turn or played an illegal move."""


MOVE = re.compile(r"[0-9]{1,3}")
"""A move in ``bestmove``: ASCII digits only (``int`` would also read other scripts' digits and huge numbers)."""

STDERR_KEPT = 4096
"""Bytes of an engine's stderr kept (the end), to quote when it fails."""


def beside_interpreter(program: str) -> str:
    """``program``, or its path beside the running Python when it is not on PATH but there.

    A console script of the environment urgym runs in (``urgym-uei-engine``) is then found whether or not that
    environment is activated.
    """
    if "/" in program or shutil.which(program) is not None:
        return program
    beside = Path(sys.executable).parent / program
    return str(beside) if beside.is_file() and os.access(beside, os.X_OK) else program


def missing_program(argv: list[str]) -> str | None:
    """Why ``argv`` cannot start, when that is plain before starting it.

    A program that is not found, or a script an interpreter is given that does not exist (``python3 missing.py`` would
    only exit with status 2).
    """
    program = argv[0]
    if ("/" in program and not Path(program).exists()) or ("/" not in program and shutil.which(program) is None):
        return f"no such program: {program}"
    script = argv[1] if len(argv) > 1 and Path(program).name.startswith(("python", "pypy")) else "-"
    if not script.startswith("-") and not Path(script).exists():
        return f"no such file: {script} (the script {Path(program).name} is given)"
    return None


def position_line(position: Position, roll: int, moves: tuple[int, ...]) -> str:
    """The ``position`` command of a decision (see the module docstring)."""
    rules = position.rules
    parts = ["position", "turn", position.turn]
    for side in SIDES:
        pieces = [0] * position.home(side) + list(position.pieces(side)) + [rules.length + 1] * position.scored(side)
        parts += [side, ",".join(map(str, pieces))]
    return " ".join([*parts, "roll", str(roll), "moves", ",".join(map(str, moves))])


_LIVE: weakref.WeakSet[EngineAgent] = weakref.WeakSet()


def stop_all_engines(polite: bool = True) -> None:
    """Stop every engine this process started, with its process group (also done at exit and on SIGTERM).

    Args:
        polite: Send ``quit`` and give each engine a second first; False kills them at once (Ctrl-C).
    """
    for engine in list(_LIVE):
        engine.close(polite)


atexit.register(stop_all_engines)


def _on_sigterm(signum, frame) -> None:
    """A terminated process (a worker stopped by Ctrl-C of its command) stops its engines first."""
    stop_all_engines(polite=False)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def _stop_engines_on_sigterm() -> None:
    """Install :func:`_on_sigterm` where SIGTERM still has its default action and this is the main thread."""
    with contextlib.suppress(ValueError):  # not the main thread: leave the signal alone
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _on_sigterm)


class EngineAgent(Agent):
    """An engine program speaking UEI 1, as an agent (``engine:COMMAND``).

    Args:
        command: The program's command line, run without a shell (a string is split as a shell would split it).
        move_time: Seconds the engine may take per move (and for the handshake).
        seed: Unused (the engine decides); accepted like every agent's.

    Raises:
        EngineError: If the program does not start or fails the handshake.
    """

    def __init__(self, command: str | list[str], move_time: float = DEFAULT_MOVE_TIME, seed: int | None = None) -> None:
        self._process: subprocess.Popen | None = None
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise EngineError("an engine spec needs a command: engine:COMMAND")
        if not 0 < move_time <= MAX_MOVE_TIME:
            raise ValueError(
                f"an engine's move time must be more than 0 and at most {MAX_MOVE_TIME:g} seconds, got {move_time!r}"
            )
        self.move_time = float(move_time)
        self.spec = "engine:" + shlex.join(self.argv)
        self.argv[0] = beside_interpreter(self.argv[0])  # after the spec: records name the command as given
        self.name = Path(self.argv[0]).name
        self.ids: dict[str, str] = {}
        self._process: subprocess.Popen | None = None
        self._buffer = b""
        self._stderr = b""  # the end of what the engine wrote on stderr, quoted when it fails
        self._rules: Rules | None = None
        super().__init__(seed)
        self._start()

    # --- the process -------------------------------------------------------------------------------------
    def _start(self) -> None:
        missing = missing_program(self.argv)
        if missing:
            raise EngineError(f"engine {self.spec!r} does not start: {missing}")
        try:
            self._process = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
            )
        except OSError as err:
            raise EngineError(f"engine {self.spec!r} does not start: {err.strerror or err}") from None
        _LIVE.add(self)
        _stop_engines_on_sigterm()
        self._selector = selectors.DefaultSelector()
        for stream in (self._process.stdout, self._process.stderr):
            os.set_blocking(stream.fileno(), False)
            self._selector.register(stream, selectors.EVENT_READ)
        self._send("uei")
        while True:
            line = self._read("the handshake (uei)")
            if line == "ueiok":
                break
            words = line.split(None, 2)
            if words[:1] == ["id"] and len(words) >= 2:
                self.ids[words[1]] = words[2] if len(words) > 2 else ""
            elif words[:1] != ["info"]:
                self._fail(f"answered {line[:80]!r} to uei (expected id lines, then ueiok)")
        self.name = self.ids.get("name", self.name)

    def close(self, polite: bool = True) -> None:
        """Ask the engine to quit.

        After a second (at once if not ``polite``), kill its process group: the engine and the processes it started.
        """
        process, self._process = getattr(self, "_process", None), None
        if process is None:
            return
        _LIVE.discard(self)
        with contextlib.suppress(OSError, ValueError, subprocess.TimeoutExpired):
            process.stdin.write(b"quit\n")
            process.stdin.flush()
            process.wait(timeout=1.0 if polite else 0.05)
        with contextlib.suppress(OSError):  # its group: started in a session of its own, its id is the engine's pid
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout, process.stderr):
            with contextlib.suppress(OSError):
                stream.close()
        self._selector.close()

    def __del__(self) -> None:
        self.close()

    def __getstate__(self) -> dict:
        # An engine travels to worker processes as its command; each starts its own.
        return {"argv": self.argv, "move_time": self.move_time}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["argv"], state["move_time"])

    def _send(self, line: str) -> None:
        if self._process is None:
            raise EngineError(f"engine {self.name!r} has been closed")
        try:
            self._process.stdin.write(line.encode() + b"\n")
            self._process.stdin.flush()
        except (BrokenPipeError, OSError):
            self._fail(f"stopped reading its input (it crashed or exited, status {self._process.poll()})")

    def _read(self, waiting_for: str) -> str:
        """The engine's next line that is not ``info``, within the move time."""
        deadline = time.monotonic() + self.move_time
        while True:
            if b"\n" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\n", 1)
                line = raw.decode("utf-8", "replace").strip()
                if line and not line.startswith("info"):
                    return line
                continue
            if len(self._buffer) > MAX_LINE:
                self._fail(f"wrote a line longer than {MAX_LINE:,} bytes during {waiting_for}")
            left = deadline - time.monotonic()
            if left <= 0:
                self._fail(f"did not answer within {self.move_time:g} s during {waiting_for}")
            for key, _ in self._selector.select(timeout=left):
                chunk = os.read(key.fd, 65_536)
                if key.fileobj is self._process.stderr:
                    if not chunk:  # closed: nothing more to quote
                        self._selector.unregister(key.fileobj)
                    self._stderr = (self._stderr + chunk)[-STDERR_KEPT:]
                    continue
                if not chunk:
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        self._process.wait(timeout=0.5)
                    status = self._process.poll()
                    self._fail(
                        f"closed its output and kept running during {waiting_for}"
                        if status is None
                        else f"exited (status {status}) during {waiting_for}"
                    )
                self._buffer += chunk

    def _drain_stderr(self) -> None:
        """Read what is left on the engine's stderr (it may come after its stdout closed), briefly."""
        stream = self._process.stderr if self._process is not None else None
        deadline = time.monotonic() + 0.5
        while stream is not None and not stream.closed and time.monotonic() < deadline:
            try:
                chunk = os.read(stream.fileno(), 65_536)
            except BlockingIOError:
                if self._process.poll() is not None and time.monotonic() > deadline - 0.4:
                    return
                time.sleep(0.01)
                continue
            if not chunk:
                return
            self._stderr = (self._stderr + chunk)[-STDERR_KEPT:]

    def _fail(self, what: str) -> None:
        spec = self.spec
        with contextlib.suppress(OSError, ValueError):
            self._drain_stderr()
        last = [line for line in self._stderr.decode("utf-8", "replace").splitlines() if line.strip()][-1:]
        self.close()
        said = f"; its last line on stderr: {last[0].strip()[:200]!r}" if last else ""
        raise EngineError(f"engine {spec!r} {what}{said}")

    # --- the agent ---------------------------------------------------------------------------------------
    def check_rules(self, rules: Rules) -> None:
        """Tell the engine the rules, and raise ``ValueError`` if it refuses them."""
        self._tell_rules(rules)

    def _tell_rules(self, rules: Rules) -> None:
        if rules == self._rules:
            return
        self._send("rules " + json.dumps(rules.to_dict(), separators=(",", ":")))
        self._send("isready")
        line = self._read("isready")
        if line != "readyok":
            self._fail(f"answered {line[:80]!r} to isready (expected readyok)")
        self._rules = rules

    def select_move(self, position: Position, roll: int) -> int:
        """The engine's move: the position and roll are sent, and its answer is checked."""
        moves = legal_moves_or_raise(position, roll)
        self._tell_rules(position.rules)
        command = position_line(position, roll, moves)
        self._send(command)
        self._send("isready")  # a position wants no answer: anything before readyok is out of turn
        line = self._read(f"isready after {command!r}")
        if line != "readyok":
            self._fail(f"answered {line[:80]!r} out of turn, after {command!r}")
        self._send("go")
        line = self._read(f"go, at {command!r}")
        words = line.split()
        if len(words) != 2 or words[0] != "bestmove" or not MOVE.fullmatch(words[1]):
            self._fail(
                f"answered {line[:80]!r} to go at {command!r} (expected bestmove <m>, m a move of 1 to 3 ASCII digits)"
            )
        move = int(words[1])
        if move not in moves:
            self._fail(f"played the illegal move {move} at {command!r}; legal moves: {list(moves)}")
        return move
