"""The fourth round of hostile inputs.

Runs that meet (two runs on one folder, a run over a finished one, outputs aimed through links), special files
(devices, FIFOs, slow pipes), strangers' records that would start huge solves, the web server under load, read-only
installs, networks that overflow, lying archives, options past what a machine can give, and Ctrl-C in the middle of
one deep search.

Each case is judged as in ``tests.hostile.commands`` (one clear line and the right status, or correct behaviour),
and besides: ``data-loss`` (games or files lost or replaced), ``silent-wrong`` (a wrong result without a word),
``hang`` (no answer within the case's time), ``exhausted`` (memory or threads past a bound), ``traceback``,
``unclear``.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np

from tests.hostile.judge import BIN, SMALL, judge, library_case, review_peak_bytes, run


# --- 1. runs that meet ------------------------------------------------------------------------------------------
def _meeting_cases(work: Path, Outcome) -> list:
    outcomes = []
    for name, argv in (
        ("evaluate", ["evaluate", "--agent", "random", "--opponent", "greedy", "--no-table", "--games", "300"]),
        ("stats", ["stats", "--agent", "random", "--no-solve", "--games", "300", "--rules", "finkel"]),
    ):
        folder = work / f"together-{name}"
        if name == "stats":  # stats plays its agent against itself with the table: give one it has
            argv = ["stats", "--agent", "greedy", "--games", "300"]
        argv = [*argv, *SMALL, "--workers", "1", "--save-games", str(folder)]
        runs = [
            subprocess.Popen(
                [str(BIN / argv[0]), *argv[1:]], cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
            )
            for _ in range(2)
        ]
        statuses = sorted(run.wait(timeout=600) for run in runs)
        saved = len(list(folder.glob("game-*.json")))
        case = f"two `{name} --save-games` started together on one folder"
        lost = statuses != [0, 2] or saved != 300
        outcomes.append(Outcome(case, "data-loss" if lost else "clear", f"statuses {statuses}, {saved} records"))

    finished = work / "finished-run"
    finished.mkdir()
    (finished / "model.npz").write_bytes(b"the first run's model")
    argv = ["train", "--algo", "td-lambda", *SMALL, "--timesteps", "100", "--out", str(finished)]
    result = run(argv, work)
    kept = (finished / "model.npz").read_bytes() == b"the first run's model"
    outcomes.append(
        judge(result, "holds a finished training run", "train --out over a finished run")
        if kept
        else Outcome("train --out over a finished run", "data-loss", "the first run's model was replaced")
    )
    for case, prepare, words in (
        ("train with logs/ a link to another folder", lambda out: (out / "logs").symlink_to(work), "not a folder"),
        (
            "train whose best_model.npz is a solved table",
            lambda out: shutil.copy(_a_table(), out / "best_model.npz"),
            "urgym solved table",
        ),
    ):
        out = work / case.replace(" ", "-").replace("/", "")
        out.mkdir()
        prepare(out)
        started = time.monotonic()
        result = run(["train", "--algo", "td-lambda", *SMALL, "--timesteps", "100000", "--out", str(out)], work)
        outcome = judge(result, words, case)
        if outcome.verdict == "clear" and time.monotonic() - started > 30:
            outcome = Outcome(case, "unclear", "refused only after training")
        outcomes.append(outcome)

    from urgym.agents.models import DEFAULT_TD_MODEL

    odd = work / ("m" * 150) / "n\x1b[31mo"
    odd.mkdir(parents=True)
    shutil.copy(DEFAULT_TD_MODEL, odd / "td.npz")
    folder = work / "odd-names"
    spec = f"td:model={odd / 'td.npz'}"
    result = run(
        [
            "evaluate",
            "--agent",
            spec,
            "--opponent",
            "random",
            "--no-table",
            "--games",
            "4",
            "--workers",
            "1",
            "--save-games",
            str(folder),
        ],
        work,
        timeout=300,
    )
    saved = len(list(folder.glob("game-*.json")))
    case = "evaluate --save-games with an agent spec of 200+ characters and an escape"
    outcomes.append(
        Outcome(case, "clear" if result and result.returncode == 0 and saved == 4 else "data-loss", f"{saved} records")
    )
    return outcomes


def _a_table() -> Path:
    from urgym.solver import load_or_solve

    return load_or_solve("finkel", 2, progress=False).path


# --- 2. silent wrong results --------------------------------------------------------------------------------------
def _silent_cases(work: Path, Outcome) -> list:
    import dataclasses

    from urgym import get_rules
    from urgym.howto import how_to_play

    outcomes = []
    tiny = dataclasses.replace(get_rules("finkel", 2), roll_probabilities=(0.0, 1e-9, 0.25, 0.75 - 1e-9), name="tiny")
    dice = dict(how_to_play(tiny))["The dice"]
    outcomes.append(
        Outcome("how-to of a roll of chance 1e-9", "silent-wrong" if "1: 0," in dice else "clear", dice[-80:])
    )
    plain = dataclasses.replace(get_rules("finkel", 2), rosettes=frozenset(), name="plain")
    text = dict(how_to_play(plain))["Rosettes"]
    wrong = "are none" in text or "Landing on a rosette" in text
    outcomes.append(Outcome("how-to of a board without rosettes", "silent-wrong" if wrong else "clear", text[:120]))
    outcomes.append(_mixed_states(Outcome))
    return outcomes


def _mixed_states(Outcome):
    from urgym.agents import make_agent
    from urgym.evaluation.play.web import WebGame, create_app, game_server

    from urgym import get_rules

    game = WebGame(get_rules("finkel", 2), make_agent("random"), None, "light", 1)
    server = game_server(create_app(game, "t"))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    mixed, stop = [], threading.Event()

    def read():
        while not stop.is_set():
            with urllib.request.urlopen(f"{base}/api/state?token=t", timeout=30) as answer:
                state = json.loads(answer.read())
            position = state["position"]
            counts = {len(position[s]) + position["home"][s] + position["scored"][s] for s in ("light", "dark")}
            if counts != {state["pieces"]}:
                mixed.append(state["describe"])

    readers = [threading.Thread(target=read) for _ in range(3)]
    for reader in readers:
        reader.start()
    for k in range(60):
        body = json.dumps({"rules": "masters" if k % 2 else "finkel", "pieces": 3 if k % 2 else 2}).encode()
        request = urllib.request.Request(f"{base}/api/new?token=t", body, {"Content-Type": "application/json"})
        urllib.request.urlopen(request, timeout=30).read()
    stop.set()
    for reader in readers:
        reader.join()
    server.shutdown()
    return Outcome(
        "/api/state read while /api/new switches games", "silent-wrong" if mixed else "clear", str(mixed[:1])
    )


# --- 3. hangs and exhaustion -----------------------------------------------------------------------------------------
def _special_file_cases(work: Path, Outcome) -> list:
    outcomes = []
    fifo = work / "fifo.json"
    os.mkfifo(fifo)
    records = work / "records-with-a-device"
    records.mkdir()
    (records / "game-000000.json").symlink_to("/dev/zero")
    for argv in (
        ["review", "/dev/zero"],
        ["review", str(fifo)],
        ["review", "/dev/stdin"],
        ["solve", "--rules-file", "/dev/zero"],
        ["solve", "--rules-file", str(fifo)],
        ["solve", "--import-rgu", "/dev/zero"],
        ["stats", "--records", str(records)],
        ["evaluate", "--agent", "td:model=/dev/zero", *SMALL],
        ["evaluate", "--agent", f"sb3:{fifo}", *SMALL],
    ):
        result = run(argv, work, timeout=30, stdin=subprocess.PIPE)
        outcomes.append(judge(result, "regular file", " ".join(argv).replace(str(work), "W")))
    slow = subprocess.Popen(["sh", "-c", f"while true; do printf x; sleep 1; done > {fifo}"])
    try:
        outcomes.append(judge(run(["review", str(fifo)], work, timeout=30), "FIFO", "review of a slow pipe"))
    finally:
        slow.kill()
        slow.wait()
    model = work / "card-model.zip"
    shutil.copy(_a_model(), model)
    with open(model.with_suffix(".json"), "wb") as card:
        card.truncate(6 << 30)  # a sparse 6 GB card
    result = run(["evaluate", "--agent", f"sb3:{model}", *SMALL, "--no-table", "--opponent", "random"], work, 60)
    outcomes.append(judge(result, "more than 1,048,576 bytes", "a sparse 6 GB model card"))
    return outcomes


def _a_model() -> Path:
    from urgym.agents.models import DEFAULT_PPO_MODEL

    return DEFAULT_PPO_MODEL


def _solve_cases(work: Path, Outcome) -> list:
    from urgym import Game, GameRecord, get_rules

    game = Game(get_rules("masters", 8), seed=0)
    game.play(game.legal_moves[0])
    record = work / "masters8.json"
    record.write_text(json.dumps(GameRecord.from_game(game).to_dict()))
    outcomes = []
    for argv in (
        ["review", str(record)],
        ["ur-play", "--rules", "masters", "--pieces", "8", "--agent", "perfect"],
        ["evaluate", "--agent", "random", "--rules", "masters", "--pieces", "8"],
        ["stats", "--rules", "masters", "--pieces", "8"],
        ["train", "--rules", "masters", "--pieces", "8", "--out", str(work / "m8")],
    ):
        result = run(argv, work, timeout=60)
        outcomes.append(judge(result, "add --solve", " ".join(argv).replace(str(work), "W")))
    return outcomes


def _bound_cases(work: Path, Outcome) -> list:
    outcomes = []
    for argv, words in (
        (["train", "--eval-positions", "1000000000", *SMALL, "--out", "b1"], "from 1 to 1,000,000"),
        (["train", "--envs", "100000000", *SMALL, "--out", "b2"], "from 1 to 65,536"),
        (["train", "--hidden", "1000000000", *SMALL, "--out", "b3"], "from 1 to 16,384"),
        (["train", "--algo", "distill", "--decisions", "1000000000000", "--out", "b4"], "50,000,000"),
        (["stats", "--games", "20000000", *SMALL], "10,000,000"),
        (["evaluate", "--agent", "random", "--games", "2000000000", *SMALL], "10,000,000"),
        (["engine-check", "--positions", "100000000", "urgym-uei-engine"], "1,000,000"),
        (["evaluate", "--agent", "random", *SMALL, "--workers", "4096"], "this machine's cores"),
        (["engine-check", "--move-time", "1e300", "urgym-uei-engine"], "86400"),
        (["evaluate", "--agent", "engine:move_time=1e300:urgym-uei-engine", *SMALL], "86400"),
    ):
        outcomes.append(judge(run(argv, work, timeout=60), words, " ".join(argv)))
    return outcomes


def _web_load_cases(work: Path, Outcome) -> list:
    # 1,500 idle connections need more file descriptors than a default limit of 1,024
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(
        resource.RLIMIT_NOFILE, (max(soft, 4096 if hard == resource.RLIM_INFINITY else min(4096, hard)), hard)
    )
    from urgym.agents import make_agent
    from urgym.evaluation.play.web import MAX_CONNECTIONS, WebGame, create_app, game_server

    from urgym import get_rules

    game = WebGame(get_rules("finkel", 2), make_agent("random"), None, "light", 1)
    server = game_server(create_app(game, "t"), idle=2.0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    before = threading.active_count()
    sockets = []
    try:
        for _ in range(1500):
            sockets.append(socket.create_connection(("127.0.0.1", server.server_port)))
        time.sleep(0.5)
        threads = threading.active_count() - before
        time.sleep(2.5)
        with urllib.request.urlopen(f"http://127.0.0.1:{server.server_port}/api/state?token=t", timeout=10) as answer:
            answered = answer.status == 200
    finally:
        for s in sockets:
            s.close()
        server.shutdown()
    bounded = threads <= MAX_CONNECTIONS and answered
    return [
        Outcome(
            "1,500 idle connections without the token",
            "clear" if bounded else "exhausted",
            f"{threads} threads at most {MAX_CONNECTIONS}; the page answered after the idle limit: {answered}",
        )
    ]


def _review_memory_cases(work: Path, Outcome) -> list:
    """``review FOLDER`` over 4 and over 40 copies of a long game: the peak memory must not grow with the folder."""
    from urgym.agents import make_agent  # noqa: F401 (registers the agents the games need)
    from urgym.evaluation.scoring.match import play_match
    from urgym.evaluation.scoring.runner import RunOptions
    from urgym.solver import load_or_solve

    from urgym import get_rules

    rules = get_rules("finkel", 3)
    load_or_solve(rules, progress=False)
    source = work / "long-games"
    play_match("random", "random", rules, 2, 0, None, RunOptions(workers=1, progress=False, save_games=source))
    record = next(source.glob("game-*.json"))
    peaks = {}
    for count in (4, 40):
        folder = work / f"review-{count}"
        folder.mkdir()
        for k in range(count):
            shutil.copy(record, folder / f"game-{k:06d}.json")
        peaks[count] = review_peak_bytes(folder, "random")
    growth = peaks[40] - peaks[4]
    return [
        Outcome(
            "review of a folder of 40 games against one of 4",
            "clear" if growth < 30e6 else "exhausted",
            f"peak {peaks[4] / 1e6:.0f} MB and {peaks[40] / 1e6:.0f} MB",
        )
    ]


def _interrupt_cases(work: Path, Outcome) -> list:
    argv = ["evaluate", "--agent", "expectimax:16", "--opponent", "random", "--no-table", "--games", "2"]
    process = subprocess.Popen(
        [str(BIN / argv[0]), *argv[1:]],
        cwd=work,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(15)
    os.killpg(process.pid, signal.SIGINT)
    started = time.monotonic()
    try:
        _, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        return [Outcome("Ctrl-C of evaluate --agent expectimax:16", "hang", "still running 30 s after Ctrl-C")]
    took = time.monotonic() - started
    last = err.strip().splitlines()[-1] if err.strip() else ""
    ok = process.returncode == 130 and last == "evaluate: interrupted" and took < 1.0
    return [Outcome("Ctrl-C of evaluate --agent expectimax:16", "clear" if ok else "unclear", f"{took:.2f} s; {last}")]


# --- 4. tracebacks and unclear errors ---------------------------------------------------------------------------
def _read_only_cases(work: Path, Outcome) -> list:
    code = (
        "import os, sys, tempfile\n"
        "real = tempfile.TemporaryFile\n"
        "def refuse(*a, dir=None, **k):\n"
        "    if dir is not None and ('__pycache__' in dir or dir.startswith(os.path.expanduser('~'))):\n"
        "        raise PermissionError(13, 'Permission denied', dir)\n"
        "    return real(*a, dir=dir, **k)\n"
        "tempfile.TemporaryFile = refuse\n"
        "sys.argv = ['urgym', '--version']\n"
        "from urgym.commands.main import main\n"
        "sys.exit(main())\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(HOME=str(work / "no-home"), TMPDIR=str(work))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    notes = sum("numba caches compiled code" in line for line in result.stderr.splitlines())
    ok = result.returncode == 0 and notes == 1 and "Traceback" not in result.stderr
    outcomes = [Outcome("urgym --version in a read-only install", "clear" if ok else "traceback", result.stderr[-160:])]
    env = {k: v for k, v in os.environ.items() if k not in ("HOME", "URGYM_CACHE", "XDG_CACHE_HOME")}
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os; os.path.expanduser = lambda p: p; from urgym.files import cache_dir; print(cache_dir())",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    ok = result.returncode == 0 and "urgym-cache-" in result.stdout
    outcomes.append(
        Outcome("no home folder at all", "clear" if ok else "traceback", (result.stdout + result.stderr)[-160:])
    )
    return outcomes


def _network_cases(work: Path, Outcome) -> list:
    import io
    import zipfile

    from urgym.agents.networks.value import ValueNetwork

    from urgym import get_rules
    from urgym.features import feature_size
    from urgym.files import read_npz

    rules = get_rules("finkel", 3)
    n = feature_size(rules, "td-v1")
    outcomes = []
    w0 = np.full((n, 8), 3e37)
    w0[::2] *= -1
    outcomes.append(
        library_case(
            "finite weights whose activations overflow",
            lambda: ValueNetwork(rules, "td-v1", [(w0, np.zeros(8)), (np.ones((8, 1)), np.zeros(1))], "relu", {}),
            "overflow while playing",
            Outcome,
        )
    )
    data = io.BytesIO()
    np.savez(data, w0=np.arange(1000.0))
    corrupt = bytearray(data.getvalue())
    corrupt[corrupt.index(b"\x93NUMPY") + 600] ^= 0xFF
    crc = work / "crc.npz"
    crc.write_bytes(bytes(corrupt))
    outcomes.append(
        library_case("an npz member with a bad CRC-32", lambda: read_npz(crc, 1 << 26, "a network"), "intact", Outcome)
    )
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (1 << 42,)})
    huge = work / "huge.npz"
    with zipfile.ZipFile(huge, "w") as archive:
        archive.writestr("w0.npy", header.getvalue() + b"\0" * 64)
    outcomes.append(
        library_case("an npy header of 2^42 values", lambda: read_npz(huge, 1 << 26, "a network"), "declare", Outcome)
    )
    td = work / "td-without-rules.npz"
    np.savez(
        td,
        meta=np.array(json.dumps({"format": "urgym-td", "features_version": 1})),
        w1=np.zeros((4, n)),
        b1=np.zeros(4),
        w2=np.zeros(4),
        b2=np.zeros(1),
    )
    outcomes.append(
        judge(
            run(["evaluate", "--agent", f"td:model={td}", *SMALL], work),
            "no 'rules'",
            "a TD file without rules",
        )
    )
    return outcomes


def _corrupt_read_only_cache(work: Path, Outcome) -> list:
    from urgym.solver import cache as cache_module

    from urgym import get_rules

    rules = get_rules("finkel", 2)
    folder = work / "read-only-cache"
    folder.mkdir()
    path, _ = cache_module.cache_slots(rules, folder)
    data = bytearray(_a_table().read_bytes())
    data[-50] ^= 0xFF
    path.write_bytes(bytes(data))
    real = cache_module.os.replace

    def read_only(source, target):
        raise PermissionError(30, "Read-only file system", str(source))

    cache_module.os.replace = read_only
    try:
        return [
            library_case(
                "a corrupt table in a read-only cache",
                lambda: cache_module.load_or_solve(rules, progress=False, directory=folder),
                "failed its checks",
                Outcome,
            )
        ]
    finally:
        cache_module.os.replace = real


# --- exact evaluation (issue 39) ------------------------------------------------------------------------------
def _exact_cases(work: Path, Outcome) -> list:
    """Crafted policy files in the cache, records that begin at impossible positions, outputs aimed at inputs."""
    from urgym.evaluation.scoring.policies import agent_policy, policy_cache_path

    from urgym import get_rules
    from urgym.records import GameRecord

    outcomes = []
    rules = get_rules("finkel", 2)
    folder = work / "policies"
    made = agent_policy("greedy", rules, progress=False, directory=folder)
    good = made.policy.choices.copy()
    crafted = {
        "truncated": made.cached.read_bytes()[:500],
        "another agent's": policy_cache_path(rules, "0" * 16, folder),
        "a zip bomb": None,
    }
    for name, content in crafted.items():
        path = made.cached
        if name == "another agent's":  # a valid file of another key copied over this one
            agent_policy("last", rules, progress=False, directory=folder)
            other = next(p for p in folder.glob("*.npz") if p != made.cached)
            content = other.read_bytes()
        elif name == "a zip bomb":
            import io
            import zipfile

            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
                archive.writestr("choices.npy", b"\0" * (64 << 20))
            content = buffer.getvalue()
        path.write_bytes(content)
        try:
            import warnings

            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                again = agent_policy("greedy", rules, progress=False, directory=folder)
            same = np.array_equal(again.policy.choices, good)
            said = any("policy" in str(w.message) for w in caught)
            verdict = "clear" if same and said else "silent-wrong" if not same else "unclear"
            outcomes.append(Outcome(f"a {name} policy file in the cache", verdict, "asked again" if same else "used"))
        except Exception as err:
            outcomes.append(Outcome(f"a {name} policy file in the cache", "traceback", str(err)[:160]))
    record = GameRecord(rules, ()).to_dict()
    for start in (-5, 2**62 + 12345, "7", True):
        outcomes.append(
            library_case(
                f"a record that starts at {start!r}",
                lambda s=start: GameRecord.from_dict({**record, "start": s}),
                "start",
                Outcome,
            )
        )
    held = work / "held"
    held.mkdir()
    (held / "game-000001.json").write_text(json.dumps(GameRecord(rules, ()).to_dict()))
    for argv, words in (
        (["evaluate", "--agent", "greedy", "--exact", *SMALL, "--worst", "2", "--save-worst", "held"], "records"),
        (["evaluate", "--agent", "greedy", "--exact", *SMALL, "--worst", "100000000"], "10,000"),
        (["evaluate", "--agent", "greedy", "--exact", "--max-minutes", "0.000001"], "--max-minutes"),
        (["evaluate", "--agent", "greedy", "--exact", "--rules", "murray", "--pieces", "5"], "murray"),
    ):
        outcomes.append(judge(run(argv, work, timeout=120), words, " ".join(argv)))
    return outcomes


PARTS = [
    _meeting_cases,
    _silent_cases,
    _special_file_cases,
    _solve_cases,
    _bound_cases,
    _web_load_cases,
    _review_memory_cases,
    _interrupt_cases,
    _read_only_cases,
    _network_cases,
    _corrupt_read_only_cache,
    _exact_cases,
]
"""Each part of the round: (work folder, Outcome) -> the outcomes of its cases."""
