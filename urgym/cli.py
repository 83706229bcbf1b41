"""What every command does with a user's error: one line on stderr and exit status 2, never a traceback.

A command's ``main`` is wrapped with :func:`command`. Errors that come from what the user asked for (a bad
value, a missing or corrupt file, a missing optional extra) end with ``PROG: error: MESSAGE`` and status 2;
Ctrl-C ends with ``PROG: interrupted`` and status 130. ``--debug`` anywhere on the command line, or
``URGYM_DEBUG=1``, lets the exception through with its traceback.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from urgym import _startup
from urgym.files import MissingExtraError
from urgym.rules import RULE_SET_NAMES, get_rules
from urgym.simulate import POLICY_NAMES, simulate

__all__ = ["USER_ERRORS", "ArgumentParser", "command", "seed", "simulate_main"]

USER_ERRORS = (ValueError, OSError, MissingExtraError)
"""Exceptions that report a problem with the user's input or files (FileNotFoundError is an OSError). A TypeError
or AttributeError is a bug, and shows its traceback."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser, with its errors on one line (``PROG: error: MESSAGE (see PROG --help)``), status 2."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (see {self.prog} --help)\n")


def seed(text: str) -> int:
    """An argparse ``type`` for ``--seed``: a whole number from 0 to 2**64 - 1 (the dice streams' seeds)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a seed is a whole number from 0 to 2**64 - 1, got {text!r}") from None
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(f"a seed is a whole number from 0 to 2**64 - 1, got {value}")
    return value


def command(prog: str, interrupted: str = "") -> Callable[[Callable[..., Any]], Callable[..., int]]:
    """Wrap a command's ``main(argv=None)``: user errors become one line and exit status 2.

    Args:
        prog: The command's name, as the user typed it.
        interrupted: Extra words after ``interrupted`` on Ctrl-C (e.g. how to resume).
    """

    def wrap(main: Callable[..., Any]) -> Callable[..., int]:
        @functools.wraps(main)
        def run(argv: list[str] | None = None, **options: Any) -> int:
            _startup.end()  # from here on Ctrl-C is a KeyboardInterrupt, handled below
            args = list(sys.argv[1:] if argv is None else argv)
            debug = "--debug" in args or os.environ.get("URGYM_DEBUG", "") not in ("", "0")
            args = [a for a in args if a != "--debug"]
            if debug:
                return main(args, **options) or 0
            try:
                return main(args, **options) or 0
            except KeyboardInterrupt:
                _close_progress_bars()  # else the message would continue the bar's line
                print(f"{prog}: interrupted{'; ' + interrupted if interrupted else ''}", file=sys.stderr)
                if argv is None:  # run as a command: stop now, without waiting for worker processes at exit
                    _exit_now(130)
                return 130
            except USER_ERRORS as err:
                print(f"{prog}: error: {_one_line(err)}", file=sys.stderr)
                return 2

        return run

    return wrap


def _close_progress_bars() -> None:
    """Close the progress bars still open, which ends their lines."""
    from tqdm import tqdm

    for bar in list(getattr(tqdm, "_instances", ())):
        bar.close()


def _exit_now(status: int) -> None:
    """End the process at once: stop child processes and skip the exit handlers. Those would wait for a worker
    pool's threads, which may wait for ever on a worker stopped in the middle of sending its result."""
    import multiprocessing

    for child in multiprocessing.active_children():
        child.terminate()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def _one_line(err: BaseException) -> str:
    if isinstance(err, OSError) and err.filename is not None and err.strerror:
        return f"{err.filename}: {err.strerror}"
    text = " ".join(str(err).split()) or type(err).__name__
    return text


@command("ur-simulate")
def simulate_main(argv: list[str] | None = None) -> None:
    """``ur-simulate``: play games between built-in policies and report win rates and speed."""
    parser = ArgumentParser(prog="ur-simulate", description=simulate_main.__doc__)
    parser.add_argument("--rules", default="finkel", choices=RULE_SET_NAMES)
    parser.add_argument("--pieces", type=int, default=None, help="pieces per side (default: the rule set's)")
    parser.add_argument("--light", default="random", choices=POLICY_NAMES)
    parser.add_argument("--dark", default="random", choices=POLICY_NAMES)
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--seed", type=seed, default=0)
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    rules = get_rules(args.rules, args.pieces)
    simulate(rules, args.light, args.dark, games=1, seed=args.seed)  # compile (or load the cache) first
    start = time.perf_counter()
    result = simulate(rules, args.light, args.dark, games=args.games, seed=args.seed)
    elapsed = time.perf_counter() - start
    print(rules.describe())
    print(f"{args.games:,} games, light {args.light} vs dark {args.dark}: light wins "
          f"{100 * result.light_win_rate:.2f}%, {result.turns.mean() / 2:.1f} turns and "
          f"{result.moves.mean() / 2:.1f} moves per player per game, {args.games / elapsed:,.0f} games/s")
