"""What the commands share: errors as one line, the options of commands that need a solved table, outputs.

A command's ``main`` is wrapped with :func:`command`. Errors that come from what the user asked for (a bad
value, a missing or corrupt file, a missing optional extra) end with ``PROG: error: MESSAGE`` and status 2;
Ctrl-C ends with ``PROG: interrupted`` and status 130. ``--debug`` anywhere on the command line, or
``URGYM_DEBUG=1``, lets the exception through with its traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from urgym.agents import builtin_name
from urgym.evaluation.scoring.report import write_csv, write_json
from urgym.evaluation.scoring.runner import RunOptions
from urgym.solver import SolvedTable, cached_reproducible, cached_table_path, is_cached, solve_command, table_for
from urgym.solver.budget import SolveEstimate, check_solvable, estimate_solve

from urgym import startup
from urgym.checks import printable
from urgym.files import PLOT_FORMATS, STDOUT, MissingExtraError, check_distinct, check_output, release_claims
from urgym.rules import Rules

__all__ = [
    "AUTO_SOLVE_MINUTES",
    "MAX_GAMES",
    "MAX_POSITIONS",
    "USER_ERRORS",
    "ArgumentParser",
    "add_table_options",
    "check_count",
    "check_outputs",
    "check_solve_allowed",
    "command",
    "key_values",
    "progress_off",
    "report_stream",
    "run_options",
    "seed",
    "table_or_solve",
    "write_outputs",
    "wrote",
]

AUTO_SOLVE_MINUTES = 15.0
"""The longest solve a command starts on its own (finkel's table, the default, takes about 4 minutes on 2 cores);
a longer one needs ``--solve`` or the ``solve`` command."""

MAX_GAMES = 10_000_000
"""The most games one command plays (``evaluate --games``, ``stats --games``): their results are kept in memory."""
MAX_POSITIONS = 1_000_000
"""The most positions one command draws and scores (``evaluate --positions``, ``engine-check --positions``)."""

USER_ERRORS = (ValueError, OSError, MissingExtraError)
"""Exceptions that report a problem with the user's input or files (FileNotFoundError is an OSError). A TypeError
or AttributeError is a bug, and shows its traceback."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser, with its errors on one line (``PROG: error: MESSAGE (see PROG --help)``), status 2."""

    def error(self, message: str):  # type: ignore[override]
        """Say ``message`` in one line on stderr and exit with status 2."""
        self.exit(2, f"{self.prog}: error: {printable(' '.join(message.split()))} (see {self.prog} --help)\n")


def seed(text: str) -> int:
    """An argparse ``type`` for ``--seed``: a whole number from 0 to 2**64 - 1 (the dice streams' seeds)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a seed is a whole number from 0 to 2**64 - 1, got {text!r}") from None
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(f"a seed is a whole number from 0 to 2**64 - 1, got {value}")
    return value


def check_count(
    parser: argparse.ArgumentParser, option: str, value: int | None, low: int, high: int, why: str = ""
) -> None:
    """Refuse ``--option value`` outside ``low..high`` in one line that names the bound (and ``why`` it is one)."""
    if value is not None and not low <= value <= high:
        parser.error(f"--{option} must be from {low:,} to {high:,}{f' ({why})' if why else ''}, got {value:,}")


def command(prog: str, interrupted: str = "") -> Callable[[Callable[..., Any]], Callable[..., int]]:
    """Wrap a command's ``main(argv=None)``: user errors become one line and exit status 2.

    Args:
        prog: The command's name, as the user typed it.
        interrupted: Extra words after ``interrupted`` on Ctrl-C (e.g. how to resume).
    """

    def wrap(main: Callable[..., Any]) -> Callable[..., int]:
        @functools.wraps(main)
        def run(argv: list[str] | None = None, **options: Any) -> int:
            startup.end()  # from here on Ctrl-C is a KeyboardInterrupt, handled below
            args = list(sys.argv[1:] if argv is None else argv)
            debug = "--debug" in args or os.environ.get("URGYM_DEBUG", "") not in ("", "0")
            args = [a for a in args if a != "--debug"]
            if debug:
                return main(args, **options) or 0
            try:
                return main(args, **options) or 0
            except KeyboardInterrupt as stop:
                _close_progress_bars()  # else the message would continue the bar's line
                note = stop.args[0] if stop.args and isinstance(stop.args[0], str) else interrupted
                print(f"{prog}: interrupted{'; ' + note if note else ''}", file=sys.stderr)
                if argv is None:  # run as a command: stop now, without waiting for worker processes at exit
                    _exit_now(130)
                return 130
            except USER_ERRORS as err:
                print(f"{prog}: error: {_one_line(err)}", file=sys.stderr)
                return 2

        return run

    return wrap


def key_values(items: list[str], option: str) -> dict[str, str]:
    """``KEY=VALUE`` words (a repeated option) as a dict.

    Raises:
        ValueError: For a word without ``=``, an empty key, or a key given twice, naming the option.
    """
    pairs: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"{option} takes KEY=VALUE, got {item!r}")
        if key in pairs:
            raise ValueError(f"{option} {key} is given twice ({pairs[key]!r} and {value!r})")
        pairs[key] = value
    return pairs


@contextlib.contextmanager
def progress_off(off: bool) -> Iterator[None]:
    """With ``off`` (``--no-progress``), hide every progress bar drawn inside the block, whoever draws it."""
    if not off:
        yield
        return
    before = os.environ.get("URGYM_PROGRESS")
    os.environ["URGYM_PROGRESS"] = "0"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("URGYM_PROGRESS", None)
        else:
            os.environ["URGYM_PROGRESS"] = before


def _close_progress_bars() -> None:
    """Close the progress bars still open, which ends their lines."""
    from tqdm import tqdm

    for bar in list(getattr(tqdm, "_instances", ())):
        bar.close()


def _exit_now(status: int) -> None:
    """End the process at once: stop child processes and skip the exit handlers.

    Those would wait for a worker pool's threads, which may wait for ever on a worker stopped in the middle of sending
    its result.
    """
    import multiprocessing

    from urgym.agents.outside.engine import stop_all_engines

    stop_all_engines(polite=False)  # engines run in sessions of their own: a terminal's Ctrl-C does not reach them
    for child in multiprocessing.active_children():  # a worker stops its own engines on SIGTERM
        child.terminate()
    release_claims()  # the exit handlers that would remove the folders' lock files are skipped
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def _one_line(err: BaseException) -> str:
    if isinstance(err, OSError) and err.filename is not None and err.strerror:
        return printable(f"{err.filename}: {err.strerror}")
    return printable(" ".join(str(err).split()) or type(err).__name__)


def add_table_options(parser: argparse.ArgumentParser) -> None:
    """The options every command that needs a solved table shares."""
    solving = parser.add_mutually_exclusive_group()
    solving.add_argument(
        "--no-solve", action="store_true", help="stop, with the command to run, instead of solving a missing table"
    )
    solving.add_argument(
        "--solve",
        action="store_true",
        help=f"solve a missing table even when that takes longer than {AUTO_SOLVE_MINUTES:g} minutes (without it, "
        "such a solve is refused with its estimate)",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")


def report_stream(args: argparse.Namespace) -> Any:
    """Where the report is printed: standard output, or standard error when an output file is ``-``."""
    used = [getattr(args, option, None) for option in ("json", "csv", "plot", "html")]
    return sys.stderr if STDOUT in used else sys.stdout


def table_or_solve(
    rules: Rules,
    args: argparse.Namespace,
    parser: argparse.ArgumentParser,
    specs: tuple[str, ...],
    record: str | None = None,
) -> SolvedTable | None:
    """The rule set's solved table: loaded from the cache, or solved and cached (unless --no-solve).

    A table that is not ground truth (RoyalUr's 16-bit import) is used with a note saying so. ``record``: the game
    record that holds custom rules, for the ``solve`` command to suggest.
    """
    try:
        estimate = estimate_solve(rules)
        check_solvable(rules, estimate)  # too large for the solver (murray from 5 pieces, skiriuk from 6)
    except ValueError as err:
        if any(builtin_name(s) == "perfect" for s in specs):
            parser.error(f"the perfect player needs a solved table: {err}")
        print(f"note: {err}; regrets and the position benchmark are skipped", file=sys.stderr)
        return None
    path = cached_table_path(rules)
    if not is_cached(rules):
        command = solve_command(rules, record)
        if args.no_solve:
            print(
                f"No solved table for {rules.describe()} at {path}.\nCreate it with:  {command}\n"
                f"({estimate.describe()})",
                file=sys.stderr,
            )
            raise SystemExit(3)
        try:
            check_output(path, table="cache")
        except ValueError as err:
            raise ValueError(f"cannot cache the solved table: {err}; set URGYM_CACHE to a writable folder") from None
        check_solve_allowed(rules, getattr(args, "solve", False), record, estimate)
        print(
            f"No solved table for {rules.name} ({rules.pieces} pieces) yet: solving it now ({estimate.describe()}) "
            f"and caching it at {path}. It is reused from then on; `{command}` does the same.",
            file=sys.stderr,
        )
    start = time.perf_counter()
    try:
        allowed = math.inf if getattr(args, "solve", False) else AUTO_SOLVE_MINUTES  # a damaged table: as a missing one
        table = table_for(rules, solve=True, progress=not args.no_progress, record=record, max_solve_minutes=allowed)
    except KeyboardInterrupt:
        raise KeyboardInterrupt(
            "run the same command again: the table's solve resumes from its last finished layer pair"
        ) from None
    if time.perf_counter() - start > 5:
        print(f"table ready in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    if table.precision_note:
        print(f"note: {table.precision_note}", file=sys.stderr)
    return table


def check_solve_allowed(
    rules: Rules,
    asked: bool,
    record: str | None = None,
    estimate: SolveEstimate | None = None,
    limit: float | None = None,
    reproducible: bool = False,
) -> SolveEstimate | None:
    """Refuse a missing table's solve that a command would start on its own but that takes too long or cannot run.

    A rule set past the solver's size is refused outright; a solve longer than ``limit`` minutes
    (:data:`AUTO_SOLVE_MINUTES` by default) runs only when the user ``asked`` (``--solve``). The message gives the
    estimate (time, memory, disk) and the command that solves it. Whether it fits this machine's memory and disk is
    the solver's own check, before any work. ``reproducible``: a cached table counts only if every machine's solve
    gives it to the last bit (the benchmark's tables), else it is solved again on one thread.

    Returns:
        The estimate of the solve about to run, or ``None`` when the table is cached (nothing is checked then).

    Raises:
        ValueError: Naming the rules, the estimate and what to run.
    """
    if cached_reproducible(rules) if reproducible else is_cached(rules):
        return None
    estimate = estimate or estimate_solve(rules)
    check_solvable(rules, estimate)
    if estimate.minutes > (AUTO_SOLVE_MINUTES if limit is None else limit) and not asked:
        lacking = "reproducible solved table (one solved on one thread)" if reproducible else "solved table"
        command = solve_command(rules, record, reproducible)
        raise ValueError(
            f"{rules.name} ({rules.pieces} pieces) has no {lacking} yet, and solving it takes long "
            f"({estimate.describe()}): add --solve to solve it now, or run `{command}` first"
        )
    return estimate


def check_outputs(args: argparse.Namespace, inputs: dict[str, str] | None = None) -> None:
    """Refuse, before any work starts, output paths that cannot be written as files.

    Also a plot of an unknown type, and outputs that would replace an input or each other.
    """
    outputs = {}
    for option in ("json", "csv", "plot", "html"):
        path = getattr(args, option, None)
        if path is not None:
            try:
                check_output(path, PLOT_FORMATS if option == "plot" else None, stdout=True)
            except ValueError as err:
                raise ValueError(f"--{option}: {err}") from None
            outputs[f"--{option}"] = path
    check_distinct(outputs, inputs)


def run_options(args: argparse.Namespace) -> RunOptions:
    """How the games of a command run, from its options.

    The options are ``--workers``, ``--backend``, ``--ray-address``, ``--no-progress``, ``--save-games`` and
    ``--replace-games``; those the command lacks keep their defaults.
    """
    return RunOptions(
        workers=getattr(args, "workers", None),
        backend=getattr(args, "backend", "process"),
        ray_address=getattr(args, "ray_address", None),
        progress=not getattr(args, "no_progress", False),
        save_games=getattr(args, "save_games", None),
        replace_games=getattr(args, "replace_games", False),
    )


def write_outputs(args: argparse.Namespace, data: dict, rows: list[dict], plot: Callable[[str], Path]) -> None:
    """Write what ``--json``, ``--csv`` and ``--plot`` ask for, saying where each went."""
    out = report_stream(args)
    if args.json is not None:
        wrote(write_json(args.json, data), out)
    if args.csv is not None:
        wrote(write_csv(args.csv, rows), out)
    if args.plot is not None:
        wrote(plot(args.plot), out)


def wrote(path: str | Path, out: Any) -> None:
    """Say that a file was written (nothing for standard output)."""
    if str(path) != STDOUT:
        print(f"wrote {path}", file=out)
