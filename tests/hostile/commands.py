"""Rounds 1 and 2 of the hostile inputs: bad command lines, Ctrl-C in long runs, bad library calls.

Each command line must end with exit status 2 and exactly one line on stderr, ``PROG: error: ...``, naming the bad
value or option, without a traceback, within the time limit. A long command sent Ctrl-C (SIGINT to its process group,
as a terminal does) must end within two seconds with status 130 and the one line ``PROG: interrupted...`` (progress
bars may stand above it). Each library call must raise ``ValueError``, ``TypeError``, ``RuntimeError`` or
``solver.TableError`` with a message naming the bad value. Anything else is a finding, by class: ``hang`` (time
limit), ``traceback``, ``accepted`` (a bad input taken without complaint), ``unclear`` (wrong status, several lines,
or a message that does not name the value) and, for the library, ``wrong-exception``.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
from urgym.agents.models import DEFAULT_TD_MODEL

from tests.hostile.judge import BIN, RGU, SMALL, TIME_LIMIT, Outcome, TimeLimitError, run_in_process, time_limit

# --- command lines -----------------------------------------------------------------------------------------

NUMBER_OPTIONS = {  # command -> (option, bad values, what else the command needs)
    "ur-simulate": [("--games", ["0", "-5", "abc", "1.5", "nan", ""]), ("--seed", ["-1", "abc", "1.5"])],
    "solve": [("--tol", ["0", "1", "-1", "abc", "nan", "inf"]), ("--threads", ["0", "-3", "999", "abc", "1.5"])],
    "ur-play": [("--seed", ["-1", "abc"]), ("--port", ["-1", "70000", "abc", "1.5"])],
    "evaluate": [
        ("--games", ["-1", "abc", "1.5", "nan"]),  # 0 games: the test set's regret alone
        ("--positions", ["-1", "abc", "1.5"]),
        ("--workers", ["-2", "abc", "1.5"]),
        ("--seed", ["-1", "abc"]),
    ],
    "stats": [("--games", ["0", "-1", "abc"]), ("--workers", ["-2", "abc"]), ("--seed", ["-1", "abc"])],
    "train": [
        ("--timesteps", ["0", "-1", "abc", "1.5"]),
        ("--minutes", ["0", "-1", "abc", "nan", "inf"]),
        ("--envs", ["0", "-1", "abc"]),
        ("--threads", ["0", "-1", "abc"]),
        ("--eval-every", ["0", "-1", "abc"]),
        ("--eval-positions", ["0", "-1", "abc"]),
        ("--hidden", ["0", "-1", "abc"]),
        ("--alpha", ["0", "-1", "abc", "nan", "inf"]),
        ("--lam", ["-0.5", "1.5", "abc", "nan"]),
        ("--seed", ["-1", "abc"]),
    ],
}
NEEDS = {  # what a command needs besides the option under test, so only that option is wrong
    "ur-simulate": [*SMALL, "--games", "2"],
    "solve": ["--pieces", "1"],
    "ur-play": [*SMALL],
    "evaluate": ["--agent", "greedy", *SMALL, "--games", "2", "--positions", "10"],
    "stats": [*SMALL, "--games", "2"],
    "train": ["--algo", "td-lambda", *SMALL, "--timesteps", "50", "--out", "runs"],
    "review": ["record.json"],
}
BAD_RULES = ["chess", "", "finkel2", "murray7", "123"]
BAD_PIECES = ["0", "16", "-1", "abc", "2.5", ""]
BAD_SPECS = [
    "nosuch",
    "",
    ":",
    "expectimax:depth=0",
    "expectimax:depth=-1",
    "expectimax:depth=abc",
    "expectimax:depth=2.5",
    "expectimax:foo=1",
    "expectimax:depth=7:depth=3",
    "expectimax:=3",
    "random:3",
    "greedy:depth=2",
    "heuristic:max_moves=abc",
    "perfect:epsilon=2",
    "perfect:epsilon=-0.1",
    "td:model=/nope.npz",
    "td:model=/etc/passwd",
    "ppo:model=/nope.zip",
    "perfect:solve=maybe",
]
AGENT_OPTIONS = {
    "evaluate": ["--agent", "--opponent"],
    "ur-play": ["--agent"],
    "stats": ["--agent"],
    "ur-simulate": ["--light", "--dark"],
    "train": ["--opponent"],
}
OUTPUT_OPTIONS = {
    "evaluate": ["--json", "--csv", "--plot", "--save-games"],
    "review": ["--json", "--csv", "--plot", "--html"],
    "stats": ["--json", "--save-games"],
    "solve": ["--out"],
    "ur-play": ["--save"],
    "train": ["--out"],
}
BAD_OUTPUTS = ["/proc/x/out", "/etc/passwd/x", ".", "/proc"]  # (missing folders are created, so not here)
FOLDER_OUTPUTS = ("--save-games", "--out")  # these take a folder (except solve's --out): "." is fine


def command_cases() -> Iterator[tuple[list[str], str | tuple[str, ...], dict[str, str]]]:
    """(argv, text the error must name, extra environment) for every bad command line."""
    for cmd in ("ur-simulate", "solve", "ur-play", "evaluate", "stats", "train", "review"):
        base = NEEDS[cmd]
        for rules in BAD_RULES:
            yield [cmd, *_without(base, "--rules"), "--rules", rules], "rule", {}
        for pieces in BAD_PIECES:
            yield [cmd, *_without(base, "--pieces"), "--pieces", pieces], "pieces", {}
        yield [cmd, *base, "--no-such-option"], "--no-such-option", {}
    for cmd, options in NUMBER_OPTIONS.items():
        for option, values in options:
            for value in values:
                yield [cmd, *_without(NEEDS[cmd], option), option, value], option.lstrip("-").split("-")[0], {}
    for cmd, options in AGENT_OPTIONS.items():
        for option in options:
            for spec in BAD_SPECS:
                base = NEEDS[cmd]
                if cmd == "train":  # opponents are maskable-ppo's; td-lambda learns by self-play
                    base = ["--algo", "maskable-ppo", *_without(base, "--algo")]
                yield [cmd, *_without(base, option), option, spec], (_named(spec), option), {}
    for cmd, options in OUTPUT_OPTIONS.items():
        for option in options:
            for path in BAD_OUTPUTS:
                if option in FOLDER_OUTPUTS and cmd != "solve" and path == ".":
                    continue  # an existing folder is a fine place for game records or models
                argv = [cmd, *_without(NEEDS[cmd], option), option, path]
                if cmd == "solve":
                    argv = ["solve", "--pieces", "1", "--out", path]
                yield argv, "/".join(path.split("/")[:3]), {}
    for path, what in (
        ("/nonexistent/game.json", "/nonexistent/game.json"),
        ("/etc/passwd", "not a game record"),
        ("game.json", "game.json"),
        ("empty.json", "empty.json"),
        ("list.json", "list.json"),
        ("garbage.rgn", "garbage.rgn"),
        ("truncated.json", "truncated.json"),
        (".", "."),
        ("binary.json", "binary.json"),
    ):
        yield ["review", path], what, {}
    yield ["review", "record.json", "--plot", "graph.gif"], ".gif", {}
    for argv, what in (
        (["solve", "--compare", "missing.urtable", "missing.rgu"], "missing"),
        (["solve", "--compare", "/etc/passwd", "/etc/hosts"], "/etc/passwd"),
        (["solve", "--compare", "empty.json", "empty.json"], "empty.json"),
        (["solve", "--compare", "corrupt.urtable", "corrupt.urtable"], "corrupt.urtable"),
        (["solve", "--import-rgu", "/etc/passwd"], "/etc/passwd"),
        (["solve", "--import-rgu", "missing.rgu"], "missing.rgu"),
        (["solve", "--import-rgu", "truncated.rgu"], "truncated.rgu"),
        (["solve", "--rules", "blitz", "--format", "rgu", "--out", "t.rgu"], "finkel"),
        (["solve", "--rules", "murray", "--pieces", "5"], "too large to solve"),
        (["solve", "--dtype", "float16", "--pieces", "1"], "float16"),
        (["solve", "--format", "xml", "--pieces", "1"], "xml"),
        (["stats", "--records", "/nonexistent-folder"], "/nonexistent-folder"),
        (["stats", "--records", "/etc/passwd"], "/etc/passwd"),
        (["stats", "--records", "emptydir"], "emptydir"),
        (["evaluate", "--agent", "perfect", "--rules", "murray", "--pieces", "5"], "too large to solve"),
        (["evaluate", "--agent", "td", *SMALL, "--games", "2"], "trained on"),
        (["evaluate", "--agent", "greedy", *SMALL, "--backend", "spark"], "spark"),
        (["evaluate", *SMALL, "--tournament", "greedy"], "tournament"),
        (["evaluate", *SMALL, "--tournament", "greedy,nosuch"], "nosuch"),
        (["evaluate", "--agent", "greedy", *SMALL, "--tournament", "greedy,random"], "tournament"),
        (["evaluate", "--agent", "greedy", *SMALL, "--positions", "10", "--pieces", "1"], "pieces"),
        (["ur-play", "--agent", "td", *SMALL], "trained on"),
        (["ur-play", "--side", "purple"], "purple"),
        (["ur-play", "--no-browser", *SMALL], "--web"),
        (["ur-play", "--port", "8000", *SMALL], "--web"),
        (["evaluate", *SMALL, "--tournament", "greedy", "random"], "comma-separated"),
        (["train", "--algo", "a2c", *SMALL, "--out", "runs"], "a2c"),
        (["train", "--vec-env", "gpu", *SMALL, "--out", "runs"], "gpu"),
    ):
        yield argv, what, {}
    yield ["evaluate", "--agent", "greedy", *SMALL, "--games", "2"], "URGYM_CACHE", {"URGYM_CACHE": "/etc/passwd"}
    yield ["evaluate", "--agent", "greedy", *SMALL, "--games", "2"], "URGYM_CACHE", {"URGYM_CACHE": "/proc/x"}
    yield ["solve", "--pieces", "2", "--no-progress"], "URGYM_CACHE", {"URGYM_CACHE": "/etc/passwd"}


TD_MODEL = str(DEFAULT_TD_MODEL)
NAMED_CASES = [  # (argv, the words its one line must hold)
    (["ur-simulate", "--pieces", "0"], "pieces must be an integer from 1 to 15"),
    (["ur-simulate", "--games", "0"], "--games must be at least 1"),
    (["ur-simulate", "--light", "wizard"], "wizard"),
    (["solve", "--tol", "0", "--pieces", "1"], "tol must be between 0 and 1"),
    (["solve", "--threads", "-3", "--pieces", "1"], "threads must be from 1 to"),
    (["solve", "--rules", "murray"], "murray with 7 pieces is too large to solve"),
    (["solve", "--pieces", "1", "--out", "/proc/table.urtable"], "not a writable directory"),
    (["solve", "--rules", "blitz", "--format", "rgu", "--out", "t.rgu"], "covers finkel"),
    (["solve", "--compare", "nope-a.urtable", "nope-b.rgu"], "no such table"),
    (["evaluate", "--agent", "nosuch"], "unknown agent 'nosuch'"),
    (["evaluate", "--agent", "greedy", "--no-table", "--pieces", "2"], "the perfect player (the default opponent)"),
    (["evaluate", "--agent", "greedy", "--opponent", "random", "--no-table", "--no-solve"], "--no-solve does nothing"),
    (["evaluate", "--agent", "greedy", "--card", "--no-table"], "--card measures against the solved tables"),
    (["evaluate", "--agent", "greedy", "--rules", "chess"], "unknown rule set 'chess'"),
    (["evaluate", "--agent", "expectimax:depth=7:depth=3", "--pieces", "2"], "'depth' is given twice"),
    (["evaluate", "--agent", "expectimax:=3", "--pieces", "2"], "has no parameter name"),
    (["evaluate", "--agent", "greedy", "--workers", "-2", "--pieces", "2"], "--workers must be at least 1"),
    (["evaluate", "--agent", "greedy", "--games", "-3", "--pieces", "2"], "--games must be from 0 to 10,000,000"),
    (["evaluate", "--agent", "greedy", "--pieces", "2", "--exact", "--max-minutes", "nan"], "--max-minutes must be"),
    (["evaluate", "--agent", "greedy", "--pieces", "2", "--exact", "--max-minutes", "-3"], "--max-minutes must be"),
    (["evaluate", "--agent", "greedy", "--pieces", "2", "--exact", "--games", "9"], "--games does not go with --exact"),
    (["evaluate", "--agent", "greedy", "--pieces", "2", "--exact", "--positions", "9"], "--positions does not go"),
    (["evaluate", "--agent", "greedy", "--pieces", "2", "--exact", "--card"], "--card does not go with --exact"),
    (["evaluate", "--agent", "greedy", "--games", "0", "--pieces", "2", "--save-games", "d"], "needs games"),
    (["evaluate", "--agent", "td", "--pieces", "2", "--games", "2"], "trained on"),
    (["evaluate", "--agent", "td:model=/nope.npz", "--pieces", "2"], "no value network at /nope.npz"),
    (["evaluate", "--agent", "greedy", "--pieces", "2", "--plot", "x.gif"], "ending in .png, .pdf, .svg"),
    (["evaluate", "--agent", "greedy", "--pieces", "2", "--json", "/proc/x.json"], "not a writable directory"),
    (["evaluate", "--agent", "greedy", "--pieces", "2", "--save-games", "/etc/passwd"], "it is a file"),
    (["train", "--hidden", "0", "--pieces", "2", "--out", "runs"], "--hidden must be from 1 to 16,384"),
    # options that would allocate what no machine gives: refused with the bound
    (["train", "--hidden", "1000000000", "--pieces", "2", "--out", "runs"], "--hidden must be from 1 to 16,384"),
    (["train", "--envs", "100000000", "--pieces", "2", "--out", "runs"], "--envs must be from 1 to 65,536"),
    (["train", "--eval-positions", "1000000000", "--pieces", "2", "--out", "runs"], "from 1 to 1,000,000"),
    (["train", "--algo", "distill", "--decisions", "10**12", "--out", "runs"], "invalid int value"),
    (["train", "--algo", "distill", "--decisions", "1000000000000", "--out", "runs"], "from 1,000 to 50,000,000"),
    (["train", "--threads", "4096", "--pieces", "2", "--out", "runs"], "(this machine's cores)"),
    (["stats", "--games", "20000000", "--pieces", "2"], "--games must be from 1 to 10,000,000"),
    (["evaluate", "--agent", "random", "--games", "2000000000", "--pieces", "2"], "from 0 to 10,000,000"),
    (["evaluate", "--agent", "random", "--positions", "100000000", "--pieces", "2"], "from 0 to 1,000,000"),
    (["evaluate", "--agent", "random", "--pieces", "2", "--workers", "4096"], "(this machine's cores)"),
    (["engine-check", "--positions", "100000000", "urgym-uei-engine"], "--positions must be from 1 to 1,000,000"),
    (["engine-check", "--move-time", "1e300", "urgym-uei-engine"], "at most 86400 seconds"),
    (["evaluate", "--agent", "engine:move_time=1e300:urgym-uei-engine", "--pieces", "2"], "at most 86400 seconds"),
    (["train", "--algo", "td-lambda", "--pieces", "2", "--out", ""], "--out must name a folder"),
    (["train", "--alpha", "-1", "--pieces", "2", "--out", "runs", "--algo", "td-lambda"], "--alpha"),
    (["train", "--lam", "5", "--pieces", "2", "--out", "runs", "--algo", "td-lambda"], "--lam"),
    (["train", "--eval-every", "0", "--pieces", "2", "--out", "runs"], "--eval-every must be at least 1"),
    (["train", "--algo", "distill", "--pieces", "2", "--out", "runs", "--layers", "0,4"], "--layers must be"),
    (["train", "--algo", "distill", "--pieces", "2", "--out", "runs", "--layers", "a,b"], "--layers must be"),
    (["train", "--algo", "distill", "--pieces", "2", "--out", "runs", "--layers", "9,9,9,9,9,9,9"], "--layers"),
    (["train", "--algo", "distill", "--pieces", "2", "--out", "runs", "--lr", "0"], "--lr must be a positive"),
    (["train", "--algo", "distill", "--pieces", "2", "--out", "runs", "--rank", "nan"], "--rank must be a"),
    (["train", "--algo", "distill", "--pieces", "2", "--out", "runs", "--decisions", "5"], "--decisions must be"),
    (["train", "--algo", "distill", "--pieces", "2", "--out", "runs", "--opponent", "greedy"], "needs no opponent"),
    (["train", "--algo", "distill", "--pieces", "2", "--out", "runs", "--teacher", "/etc/passwd"], "--teacher: "),
    (["train", "--algo", "distill", "--pieces", "2", "--out", "runs", "--teacher", "/nope.npz"], "--teacher: "),
    (["train", "--algo", "distill", "--pieces", "2", "--out", "runs", "--teacher", TD_MODEL], "was trained on finkel"),
    (["train", "--algo", "distill", "--out", "runs", "--teacher", TD_MODEL, "--teacher-depth", "9"], "from 0 to 3"),
    (["train", "--algo", "distill", "--pieces", "2", "--out", "runs", "--teacher-depth", "1"], "needs --teacher"),
    (["train", "--algo", "td-lambda", "--out", "runs", "--teacher", TD_MODEL], "are for distill, not td-lambda"),
    (["train", "--algo", "expected-td", "--pieces", "2", "--out", "runs", "--epsilon", "1"], "--epsilon must be"),
    (["train", "--algo", "distill", "--pieces", "2", "--out", "runs", "--features", "x"], "invalid choice: 'x'"),
    (["evaluate", "--agent", "neural", "--pieces", "2", "--games", "2"], "no shipped neural model plays finkel with 2"),
    (["evaluate", "--agent", "neural:depth=12", "--pieces", "2"], "depth must be an integer from 0 to 8"),
    (["evaluate", "--agent", "neural:model=/nope.npz", "--pieces", "2"], "no value network at /nope.npz"),
    (["evaluate", "--agent", "td:depth=x", "--pieces", "2"], "depth must be int"),
    (["review", "/nonexistent/game.json"], "no such game record"),
    (["review", "game.json", "--plot", "graph.gif"], "ending in .png, .pdf, .svg"),
    (["review", "/etc/passwd"], "not a game record: it is not valid JSON"),
    (["ur-play", "--agent", "td", "--pieces", "2"], "TD model was trained on"),
    (["evaluate", "--agent", "perfect", "--rules", "skiriuk", "--pieces", "6"], "too large to solve on this machine"),
    (["solve", "--compare", "/etc/passwd", "/etc/hosts"], "not a urgym solved table"),
    (["solve", "--import-rgu", "/etc/passwd"], "not a RoyalUr lookup table"),
    (["solve", "--pieces", "1", "--out", "."], "it is a directory"),
    (["stats", "--games", "0"], "--games must be from 1 to 10,000,000"),
    (["stats", "--records", "/nonexistent-folder"], "no game records"),
    (["ur-play", "--agent", "nosuch"], "unknown agent"),
    (["evaluate", "--agent", "greedy", "--pieces", "2", "--seed", "-1"], "argument --seed: a seed is a whole number"),
    (["ur-play", "--seed", "x"], "argument --seed: a seed is a whole number from 0 to 2**64 - 1, got 'x'"),
    (["stats", "--pieces", "2", "--workers", "-2"], "--workers must be at least 1, got -2"),
    (["evaluate", "--agent", "greedy", "--pieces", "2", "--workers", "0"], "--workers must be at least 1, got 0"),
    (["train", "--algo", "td-lambda", "--pieces", "2", "--out", "runs", "--minutes", "nan"], "--minutes must be a"),
    (["train", "--algo", "td-lambda", "--pieces", "2", "--out", "runs", "--alpha", "inf"], "positive finite number"),
    (["review", "game.json", "--pieces", "3"], "--pieces needs --rules"),
    (["evaluate", "--agent", "greedy", "--pieces", "3", "--games", "2"], "set URGYM_CACHE to a writable"),
    # Issue 20: modes refuse options they would ignore, outputs never replace inputs, hostile values are named.
    (["solve", "--pieces", "2", "--tol", "0.9"], "holds ground truth only"),
    (["solve", "--pieces", "2", "--dtype", "uint16"], "holds ground truth only"),
    (["solve", "--pieces", "2", "--tol", "1e-17"], "tol must be at least 1e-15"),
    (["solve", "--compare", "a.urtable", "b.urtable", "--pieces", "2"], "--pieces does nothing with --compare"),
    (["solve", "--import-rgu", "x.rgu", "--rules", "finkel"], "--rules does nothing with --import-rgu"),
    (["solve", "--count", "--rules", "chess"], "unknown rule set 'chess'"),
    (["solve", "--count", "--tol", "0.1"], "--tol does nothing with --count"),
    (["solve", "--pieces", "1", "--out", "t.rgu", "--format", "urtable"], "ends in .rgu"),
    (["solve", "--rules-file", "game.json"], "not a game record or rule set"),
    (["solve", "--rules-file", "game.json", "--rules", "finkel"], "either --rules or --rules-file"),
    (["evaluate", "--agent", "greedy", "--pieces", "2", "--seed", str(2**64)], "from 0 to 2**64 - 1"),
    (["evaluate", "--agent", "greedy", "--pieces", "2", "--ray-address", "auto"], "--ray-address names a Ray"),
    (["evaluate", "--tournament", "greedy,random,greedy", "--pieces", "2"], "'greedy' is in the tournament twice"),
    (["evaluate", "--agent", "greedy", "--pieces", "2", "--json", ""], "an empty output path"),
    (["evaluate", "--agent", "greedy", "--pieces", "2", "--json", "out", "--csv", "out"], "--json and --csv both"),
    (["evaluate", "--agent", "greedy", "--pieces", "2", "--json", "/dev/null"], "it is a device"),
    (["evaluate", "--agent", "greedy", "--pieces", "2", "--replace-games"], "--replace-games goes with"),
    (["review", "game.json", "--json", "game.json"], "would replace the game record (game.json)"),
    (["review", "game.json", "--html", "pages/"], "it names a folder"),
    (["review", "game.json", "--csv", "x.csv", "--json", "./x.csv"], "--json and --csv both write x.csv"),
    (["stats", "--records", "games", "--games", "5"], "--records counts saved games"),
    (["ur-play", "--save", "", "--pieces", "2"], "an empty output path"),
]
NAMED_CASE_ENV = {"set URGYM_CACHE to a writable": {"URGYM_CACHE": "/proc/urgym-cache"}}


def _without(argv: list[str], option: str) -> list[str]:
    """``argv`` without ``option`` and its value."""
    out, skip = [], False
    for i, a in enumerate(argv):
        if skip:
            skip = False
            continue
        if a == option and i + 1 < len(argv):
            skip = True
            continue
        out.append(a)
    return out


def _named(spec: str) -> str:
    """What an error about an agent spec should quote: the model file, the parameter or the agent."""
    if spec.startswith(("td:", "ppo:")):
        return spec.split("=", 1)[1]
    key = spec.split(":", 1)[1].split("=")[0] if "=" in spec else ""
    if key:
        return key
    return spec.split(":")[0] if spec.strip(":") else "agent"


def write_inputs(folder: Path) -> None:
    """The input files the command cases read: one good game record, and bad ones."""
    from urgym import Game, GameRecord

    game = Game("finkel", seed=0, pieces=2)
    while not game.is_over:
        game.play(game.legal_moves[0])
    GameRecord.from_game(game).save(folder / "record.json")
    (folder / "game.json").write_text("{}")
    (folder / "empty.json").write_text("")
    (folder / "list.json").write_text("[1, 2, 3]")
    (folder / "truncated.json").write_text('{"rules": {"name": "finkel"}, "actions": [')
    (folder / "binary.json").write_bytes(bytes(range(256)))
    (folder / "garbage.rgn").write_text('[Rules "Finkel"]\n1. zz9 ?? #\n')
    (folder / "truncated.rgu").write_bytes(b"RGU\x00\x00\x00\x10{")
    (folder / "corrupt.urtable").write_bytes(b"URTABLE" + bytes(200))
    (folder / "emptydir").mkdir()


def run_command(argv: list[str], what: str | tuple[str, ...], env: dict[str, str], folder: Path) -> Outcome:
    """Judge one bad command line, run in this process as its console script would run it."""
    case = " ".join(repr(a) if not a or " " in a else a for a in argv) + "".join(f" [{k}={v}]" for k, v in env.items())
    status, out, err = run_in_process(argv, folder, env)
    if status is None:
        return Outcome(case, "hang", f"no answer in {TIME_LIMIT} s")
    err = err.strip()
    lines = err.splitlines()
    if argv[0] == "review":  # a folder's files that are not records are left out with a note each, by design
        lines = [line for line in lines if not line.startswith("note: left out ")]
    if "Traceback" in err:
        return Outcome(case, "traceback", lines[-1] if lines else "")
    if status == 0:
        return Outcome(case, "accepted", (out.strip().splitlines() or [""])[-1])
    if status != 2 or len(lines) != 1 or not lines[0].startswith(f"{argv[0]}: error: "):
        return Outcome(case, "unclear", f"status {status}: {' | '.join(lines)[:200]}")
    if not _names(lines[0], what):
        return Outcome(case, "unclear", f"does not name {what!r}: {lines[0]}")
    return Outcome(case, "clear", lines[0])


def _names(message: str, what: str | tuple[str, ...]) -> bool:
    """Does the message name the bad value (any of several), spelt with - or _ alike?"""

    def norm(text: str) -> str:
        return text.lower().replace("_", " ").replace("-", " ")

    return any(norm(w).strip() in norm(message) for w in ((what,) if isinstance(what, str) else what))


INTERRUPTED = [  # long runs that Ctrl-C must stop within INTERRUPT_LIMIT seconds, with one line and status 130
    ["ur-simulate", *SMALL, "--games", "100000000"],
    ["evaluate", "--agent", "greedy", *SMALL, "--games", "10000000", "--positions", "0"],
    ["evaluate", "--agent", "expectimax:5", "--opponent", "random", *SMALL, "--games", "100000", "--positions", "0"],
    ["evaluate", "--agent", "expectimax:3", *SMALL, "--games", "10", "--positions", "100000"],
    ["stats", *SMALL, "--games", "10000000"],
    ["train", "--algo", "td-lambda", *SMALL, "--timesteps", "100000000", "--out", "runs"],
    ["solve", "--pieces", "5", "--out", "interrupted.urtable"],
]
INTERRUPT_AFTER = 4.0  # seconds: past start-up, into the long work
INTERRUPT_LIMIT = 2.0  # seconds from Ctrl-C to exit


def run_interrupted(argv: list[str], folder: Path, ready: Callable[[], bool] | None = None) -> Outcome:
    """Ctrl-C to ``argv``'s process group INTERRUPT_AFTER seconds in (or once ``ready()`` holds), judged.

    Clear: status 130, one line saying so within INTERRUPT_LIMIT seconds, and no process of the group (a worker)
    left running a moment later.
    """
    import time

    case = "Ctrl-C in " + " ".join(argv)
    proc = subprocess.Popen(
        [str(BIN / argv[0]), *argv[1:]],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # a background
    # job starts with SIGINT ignored, and its children would inherit that
    began = time.perf_counter()
    time.sleep(INTERRUPT_AFTER)
    while ready is not None and not ready() and proc.poll() is None and time.perf_counter() - began < TIME_LIMIT:
        time.sleep(0.05)
    if proc.poll() is not None:
        return Outcome(case, "unclear", f"finished before Ctrl-C (status {proc.returncode})")
    sent = time.perf_counter()
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C does: to the whole process group
    try:
        _, err = proc.communicate(timeout=TIME_LIMIT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        return Outcome(case, "hang", f"still running {TIME_LIMIT} s after Ctrl-C")
    took = time.perf_counter() - sent
    left = _group_left_running(proc.pid)
    lines = [line for line in err.replace("\r", "\n").splitlines() if line.strip()]
    messages = [line for line in lines if not _is_progress(line)]  # a progress bar may stand above the message
    if "Traceback" in err:  # the whole traceback: where a Ctrl-C escaped is what a failure must show
        return Outcome(case, "traceback", err[-3000:])
    if left:
        return Outcome(case, "hang", f"processes of the command still running after it ended: {left}")
    name = " ".join(argv[:2]) if argv[0] == "urgym" else argv[0]  # urgym's subcommands name themselves
    one_line = len(messages) == 1 and messages[0].startswith(f"{name}: interrupted")
    if proc.returncode != 130 or not one_line or took > INTERRUPT_LIMIT:
        return Outcome(case, "unclear", f"status {proc.returncode} after {took:.1f} s: {' | '.join(lines)[:200]}")
    return Outcome(case, "clear", f"{took:.2f} s: {lines[0]}")


def _group_left_running(group: int, grace: float = INTERRUPT_LIMIT) -> str:
    """The command lines of ``group``'s processes still running after ``grace`` seconds (then killed); "" if none.

    Workers may finish their current short task after the command ends; none may go on with the run. Zombies (ended,
    waiting for a parent to read their status) do not count.
    """
    import time

    deadline = time.perf_counter() + grace
    while True:
        listing = subprocess.run(["ps", "-o", "stat=,args=", "-g", str(group)], capture_output=True, text=True).stdout
        running = [line.split(None, 1)[-1][:80] for line in listing.splitlines() if not line.lstrip().startswith("Z")]
        if not running or time.perf_counter() > deadline:
            break
        time.sleep(0.05)
    if running:
        os.killpg(group, signal.SIGKILL)
    return " | ".join(running)


def _is_progress(line: str) -> bool:
    """A tqdm progress bar's line (``label:  12%|...| 3/25 [00:01<00:09, ...]``) or the solver's start line."""
    return ("|" in line and "[" in line) or line.startswith("solving ")


# --- library calls -----------------------------------------------------------------------------------------


def library_cases(folder: Path) -> Iterator[tuple[str, Callable[[], object], str]]:
    """(description, call, text the error must name) for every bad library call."""
    from urgym.agents import make_agent

    from urgym import GameRecord, Position, Rules, get_rules, solver
    from urgym.env import UrEnv
    from urgym.multiagent import env as ma_env

    finkel = get_rules("finkel", 2)
    start = Position.start(finkel)
    roll = 2
    for code in (-1, 1.5, "x", None, np.float64(3.0), [1]):
        yield f"Position.from_code(finkel, {code!r})", lambda c=code: Position.from_code(finkel, c), "code"
    yield "Position.from_code(finkel, 2**62)", lambda: Position.from_code(finkel, 2**62), "scored every piece"
    for move in (-1, 99, 1.5, "a", None, np.float32(0.0), True, [0]):
        yield f"start.play({roll}, {move!r})", lambda m=move: start.play(roll, m), "move"
    for r in (-1, 5, 1.5, "2", None):
        yield f"start.play({r!r}, 0)", lambda r=r: start.play(r, 0), "roll"
        yield f"start.legal_moves({r!r})", lambda r=r: start.legal_moves(r), "roll"
    for name, pieces in (
        ("chess", None),
        ("finkel", 0),
        ("finkel", 16),
        ("finkel", 2.5),
        ("finkel", "3"),
        ("", None),
        (None, None),
        (3, None),
    ):
        yield (
            f"get_rules({name!r}, {pieces!r})",
            lambda n=name, p=pieces: get_rules(n, p),
            "pieces" if name == "finkel" else "rule",
        )
    good = finkel.to_dict()
    for field, value, what in (
        ("path", ["a1", "a1"], "path"),
        ("pieces", 0, "pieces"),
        ("path", [], "path"),
        ("roll_probabilities", [0.5, 0.6], "roll probabilities"),
        ("roll_probabilities", [], "roll probabilities"),
        ("rosettes", ["zz9"], "zz9"),
    ):
        yield f"Rules.from_dict(.. {field}={value!r})", lambda f=field, v=value: Rules.from_dict({**good, f: v}), what

    def stepped(action: object, **kwargs: object) -> Callable[[], object]:
        def call() -> object:
            env = UrEnv(rules="finkel", pieces=2, **kwargs)
            env.reset(seed=0)
            return env.step(action)

        return call

    for action in (0.7, -0.5, np.float32(0.2), "1", None, [0], np.array([0, 1]), 1 + 0j):
        yield f"UrEnv.step({action!r})", stepped(action), "action"
    yield "UrEnv.step(99, illegal_action='raise')", stepped(99, illegal_action="raise"), "illegal action"

    def after_end() -> object:
        env = UrEnv(rules="finkel", pieces=2)
        env.reset(seed=0)
        env.step(99)  # an illegal move ends the episode as a loss
        return env.step(0)

    yield "UrEnv.step after the episode ended", after_end, "reset"
    yield "UrEnv.step before reset", lambda: UrEnv(rules="finkel", pieces=2).step(0), "reset"
    for kwargs, what in (
        ({"rules": "chess"}, "chess"),
        ({"pieces": 0}, "pieces"),
        ({"opponent": "nosuch"}, "nosuch"),
        ({"render_mode": "3d"}, "render_mode"),
        ({"agent_side": "purple"}, "agent_side"),
        ({"illegal_action": "ignore"}, "illegal_action"),
        ({"opponent": 42}, "opponent"),
        ({"rules": "murray", "pieces": 5, "opponent": "perfect"}, "too large to solve"),
        ({"opponent": "td"}, "trained on"),
    ):
        yield f"UrEnv({kwargs})", lambda k=kwargs: UrEnv(**{"rules": "finkel", "pieces": 2, **k}), what

    def ma_step(action: object) -> Callable[[], object]:
        def call() -> object:
            env = ma_env(rules="finkel", pieces=2)
            env.reset(seed=0)
            return env.step(action)

        return call

    for action in (0.5, "0", [0], -3):
        yield f"PettingZoo step({action!r})", ma_step(action), "action"
    for spec in BAD_SPECS:
        yield f"make_agent({spec!r})", lambda s=spec: make_agent(s), _named(spec)
    yield "make_agent(42)", lambda: make_agent(42), "42"
    for kwargs, what in (
        ({"tol": 0}, "tol"),
        ({"tol": 2}, "tol"),
        ({"threads": 0}, "threads"),
        ({"dtype": "float16"}, "float16"),
    ):
        yield (
            f"solver.solve(finkel 1, {kwargs})",
            lambda k=kwargs: solver.solve(get_rules("finkel", 1), progress=False, **k),
            what,
        )
    yield "solver.solve('murray', 5)", lambda: solver.solve(get_rules("murray", 5), progress=False), "too large"
    yield "solver.solve('chess')", lambda: solver.solve("chess", progress=False), "chess"
    yield from _table_cases(folder, finkel)
    for name, text in (
        ("empty.json", ""),
        ("list.json", "[1]"),
        ("binary.json", None),
        ("truncated.json", '{"rules": '),
        ("wrong.json", '{"rules": {"name": "chess"}}'),
    ):
        path = folder / name
        if text is None:
            path.write_bytes(bytes(range(256)))
        else:
            path.write_text(text)
        yield f"GameRecord.load({name})", lambda p=path: GameRecord.load(p), name
    yield "GameRecord.load(missing)", lambda: GameRecord.load(folder / "missing.json"), "missing.json"
    for text, what in (
        ("1. zz9 #", "zz9"),
        ('[Rules "Chess"]\n1. a4 #', "chess"),
        ("1. c2c4 #", "c2"),
        ("1. 9- #", "9"),
        ("\x00\x01", "RGN"),
    ):
        yield f"GameRecord.from_rgn({text!r})", lambda t=text: GameRecord.from_rgn(t, "finkel"), what


def _table_cases(folder: Path, finkel: object) -> Iterator[tuple[str, Callable[[], object], str]]:
    """Damaged solved tables and RoyalUr tables: each must be a TableError naming the file."""
    from urgym import get_rules, solver

    one = get_rules("finkel", 1)
    good = folder / "good.urtable"
    solver.solve(one, progress=False).save(good)
    data = good.read_bytes()
    damaged = {
        "empty": b"",
        "magic": b"X" + data[1:],
        "truncated header": data[:20],
        "truncated data": data[:-8],
        "extra byte": data + b"\x00",
        "flipped data byte": data[:-3] + bytes([data[-3] ^ 0x10]) + data[-2:],
    }
    header_end = data.index(b"}") + 1
    for k in range(8, header_end, max(1, header_end // 24)):
        damaged[f"header byte {k}"] = data[:k] + bytes([data[k] ^ 0x04]) + data[k + 1 :]
    for label, blob in damaged.items():
        path = folder / f"damaged-{label.replace(' ', '-')}.urtable"
        path.write_bytes(blob)
        yield f"SolvedTable.load({label})", lambda p=path: solver.SolvedTable.load(p, one), path.name
    yield "SolvedTable.load(other rules)", lambda: solver.SolvedTable.load(good, get_rules("blitz", 1)), "blitz"
    if RGU.exists():
        blob = RGU.read_bytes()
        for label, damaged_rgu in (
            ("empty", b""),
            ("magic", b"XGU" + blob[3:]),
            ("truncated", blob[: len(blob) // 2]),
            ("header", blob[:8] + b"{{" + blob[10:]),
            ("extra", blob + b"\x00" * 5),
        ):
            path = folder / f"damaged-{label}.rgu"
            path.write_bytes(damaged_rgu)
            yield f"read_rgu({label})", lambda p=path: solver.read_rgu(p), path.name


def run_library_case(description: str, call: Callable[[], object], what: str) -> Outcome:
    from urgym import solver

    try:
        with time_limit(TIME_LIMIT):
            result = call()
    except TimeLimitError:
        return Outcome(description, "hang", f"no answer in {TIME_LIMIT} s")
    except (ValueError, TypeError, RuntimeError, solver.TableError, FileNotFoundError) as err:
        message = f"{type(err).__name__}: {err}"
        if not _names(message, what):
            return Outcome(description, "unclear", f"does not name {what!r}: {message[:200]}")
        return Outcome(description, "clear", message[:200])
    except Exception as err:
        return Outcome(description, "wrong-exception", f"{type(err).__name__}: {err}"[:200])
    return Outcome(description, "accepted", repr(result)[:120])
