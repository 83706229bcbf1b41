"""The third round of hostile inputs.

Outputs aimed at the table cache, a full file system, engines that misbehave with their processes, networks with
non-finite scores, archive and size bombs, numbers from strangers, and the smaller faults found with them.

Each case is judged as in ``tests.hostile.commands`` (one clear line and the right status, or a clear library
error), and besides: ``data-loss`` (a table or a cache file changed, or files left behind on a full disk),
``leftover`` (a process still running after the command or agent ended), ``accepted`` (a silent wrong result: an
illegal move played, a hostile number taken as another), ``traceback``, ``unclear``.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from tests.agents.outside.engine_processes import BROKEN, alive, evaluate_against_random, gone
from tests.hostile.judge import BIN, SMALL, judge


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _pids(pidfile: Path, timeout: float = 60.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return [int(p) for p in pidfile.read_text().split()] if pidfile.exists() else []


def _run(argv: list[str], cwd: Path, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )


def game_record(work: Path) -> Path:
    """A finished game of finkel with 2 pieces saved as ``work/game.json`` (the input several parts review)."""
    from urgym import Game, GameRecord

    game = Game("finkel", seed=0, pieces=2)
    while not game.is_over:
        game.play(game.legal_moves[-1])
    return Path(GameRecord.from_game(game, {}).save(work / "game.json"))


# --- 1. outputs over the table cache --------------------------------------------------------------------------
def _cache_cases(work: Path, Outcome) -> list:
    from urgym.solver import cached_table_path, load_or_solve, write_rgu

    from urgym import get_rules

    rules = get_rules("finkel", 2)
    load_or_solve(rules, progress=False)
    cache = cached_table_path(rules)
    elsewhere = work / "mine.urtable"
    shutil.copyfile(cache, elsewhere)
    rgu = Path(write_rgu(load_or_solve(rules, progress=False), work / "mine.rgu"))
    record = game_record(work)
    partial = cache.with_name(cache.name + ".partial.json")  # a checkpoint's progress file, as a solve leaves it
    partial.write_text("{}")
    outputs = {
        "review --json": lambda t: ["review", str(record), "--json", t],
        "review --html": lambda t: ["review", str(record), "--html", t],
        "review --csv": lambda t: ["review", str(record), "--csv", t],
        "review --plot": lambda t: ["review", str(record), "--plot", t + ".png"],
        "evaluate --json": lambda t: ["evaluate", "--agent", "greedy", *SMALL, "--games", "2", "--json", t],
        "evaluate --csv": lambda t: ["evaluate", "--agent", "greedy", *SMALL, "--games", "2", "--csv", t],
        "stats --json": lambda t: ["stats", *SMALL, "--games", "2", "--json", t],
        "ur-play --save": lambda t: ["ur-play", *SMALL, "--save", t],
        "solve --tol 1e-6 --out": lambda t: ["solve", *SMALL, "--tol", "1e-6", "--out", t],
    }
    outcomes = []
    targets = {
        "the cached table": cache,
        "a checkpoint in the cache": partial,
        "a table elsewhere": elsewhere,
        "a RoyalUr table": rgu,
    }
    for option, make in outputs.items():
        for name, target in targets.items():
            if option.startswith("solve") and target in (elsewhere, rgu):
                continue  # solve --out may replace a table outside the cache: the user asked for it
            if option.endswith("--plot") and target is not cache:
                continue
            case = f"{option} aimed at {name}"
            path = target if not option.endswith("--plot") else Path(str(target) + ".png")
            before = {p: _digest(p) for p in (cache, partial, elsewhere, rgu)}
            result = _run([str(BIN / make(str(target))[0]), *make(str(target))[1:]], work)
            if any(_digest(p) != d for p, d in before.items()) or (option.endswith("--plot") and path.exists()):
                outcomes.append(Outcome(case, "data-loss", "a table or cache file changed"))
            else:
                outcomes.append(judge(result, "table", status=2, case=case))
    for option, argv in (
        (
            "evaluate --save-games",
            ["evaluate", "--agent", "greedy", *SMALL, "--games", "2", "--save-games", str(cache.parent / "games")],
        ),
        (
            "train --out",
            ["train", "--algo", "td-lambda", *SMALL, "--timesteps", "10", "--out", str(cache.parent / "runs")],
        ),
    ):
        result = _run([str(BIN / argv[0]), *argv[1:]], work)
        extra = [
            p.name
            for p in cache.parent.iterdir()
            if p.suffix != ".urtable" and p != partial and not p.name.startswith(".")
        ]
        outcomes.append(
            Outcome(f"{option} into the cache", "data-loss", f"left {extra}")
            if extra
            else judge(result, "table cache", status=2, case=f"{option} into the cache")
        )
    partial.unlink()
    return outcomes


# --- 2. a full file system ------------------------------------------------------------------------------------
def _full_disk_cases(work: Path, Outcome) -> list:
    folder = Path(tempfile.mkdtemp(prefix="urgym-full-"))
    if (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=200k", "tmpfs", str(folder)], capture_output=True
        ).returncode
        != 0
    ):
        return [Outcome("a full file system", "skipped", "mounting a tmpfs needs root")]
    outcomes = []
    try:
        env = {**os.environ, "URGYM_CACHE": str(folder / "cache")}
        cases = {
            "evaluate with the cache on a full disk": ["evaluate", "--agent", "greedy", *SMALL, "--games", "2"],
            "review with the cache on a full disk": ["review", str(game_record(work))],
            "solve --out on a full disk": ["solve", *SMALL, "--out", str(folder / "t.urtable")],
            "solve into the cache on a full disk": ["solve", *SMALL],
            "solve of 3 pieces on a full disk": ["solve", "--pieces", "3", "--out", str(folder / "t3.urtable")],
        }
        for case, argv in cases.items():
            result = _run([str(BIN / argv[0]), *argv[1:], "--no-progress"], work, env)
            left = [str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()]
            outcomes.append(
                Outcome(case, "data-loss", f"left behind: {left}")
                if left
                else judge(result, "not enough space in", status=2, case=case)
            )
    finally:
        subprocess.run(["umount", str(folder)], check=False)
        folder.rmdir()
    return outcomes


# --- 3. engines' processes ------------------------------------------------------------------------------------
def _engine_cases(work: Path, Outcome) -> list:
    outcomes = []
    for mode, status in (
        ("forking", 0),
        ("deaf", 0),
        ("closes", 1),
        ("flood", 1),
        ("digits", 1),
        ("huge", 1),
        ("hang-forking", 1),
    ):
        pidfile = work / f"pids-{mode}"
        pidfile.unlink(missing_ok=True)
        case = f"engine-check with an engine that {mode}"
        result = _run(
            [str(BIN / "engine-check"), "--positions", "5", "--move-time", "1", *BROKEN, mode, str(pidfile)],
            work,
            timeout=300,
        )
        pids = _pids(pidfile, timeout=1)
        if not gone(pids):
            outcomes.append(Outcome(case, "leftover", f"still running: {[p for p in pids if alive(p)]}"))
            for pid in pids:
                with_kill(pid)
        elif (
            "Traceback" in result.stderr
            or result.returncode != status
            or (mode in ("closes", "digits", "huge") and "not conformant" not in result.stdout)
        ):
            outcomes.append(
                Outcome(
                    case,
                    "traceback" if "Traceback" in result.stderr else "unclear",
                    f"status {result.returncode}: {result.stdout[-160:]!r}",
                )
            )
        else:
            outcomes.append(Outcome(case, "clear", result.stdout.strip().splitlines()[-1][:160]))
    for mode in ("forking", "deaf"):
        pidfile = work / f"pids-eval-{mode}"
        pidfile.unlink(missing_ok=True)
        case = f"evaluate with an engine that {mode}, to its end"
        spec = "engine:" + " ".join([*BROKEN, mode, str(pidfile)])
        result = _run(evaluate_against_random(spec, workers=1), work, timeout=300)
        pids = _pids(pidfile, timeout=1)
        outcomes.append(
            Outcome(case, "leftover", str(pids))
            if not gone(pids)
            else Outcome(case, "clear" if result.returncode == 0 else "unclear", f"status {result.returncode}")
        )
    for command in ("evaluate", "engine-check"):
        pidfile = work / f"pids-int-{command}"
        pidfile.unlink(missing_ok=True)
        engine = [*BROKEN, "hang-forking", str(pidfile)]
        argv = (
            evaluate_against_random("engine:move_time=600:" + " ".join(engine), workers=2)
            if command == "evaluate"
            else [str(BIN / "engine-check"), "--move-time", "600", *engine]
        )
        process = subprocess.Popen(
            argv, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
        )
        pids = _pids(pidfile)
        time.sleep(1.0)
        os.killpg(process.pid, signal.SIGINT)  # as a terminal does: the command's group
        _, err = process.communicate(timeout=60)
        case = f"Ctrl-C of {command} while an engine that forked thinks for ever"
        if not gone(pids):
            outcomes.append(Outcome(case, "leftover", f"still running: {[p for p in pids if alive(p)]}"))
            for pid in pids:
                with_kill(pid)
        else:
            outcomes.append(
                Outcome(
                    case,
                    "clear" if process.returncode == 130 and "Traceback" not in err else "unclear",
                    f"status {process.returncode}: {err.strip()[-120:]!r}",
                )
            )
    return outcomes


def with_kill(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


# --- 4. networks with non-finite scores; 5. bombs and sizes ---------------------------------------------------
def _network_files(work: Path) -> dict[str, Callable[[float], str]]:
    def onnx_file(value: float) -> str:
        import onnx
        from onnx import TensorProto, helper, numpy_helper

        graph = helper.make_graph(
            [helper.make_node("MatMul", ["obs", "w"], ["scores"])],
            "bad",
            [helper.make_tensor_value_info("obs", TensorProto.FLOAT, [None, 36])],
            [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [None, 15])],
            [numpy_helper.from_array(np.full((36, 15), value, np.float32), "w")],
        )
        path = work / f"bad-{value}.onnx"
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
        return f"onnx:{path}"

    def torchscript_file(value: float) -> str:
        import torch

        net = torch.nn.Linear(36, 15)
        with torch.no_grad():
            net.bias.fill_(value)
        path = work / f"bad-{value}.pt"
        torch.jit.script(net).save(str(path))
        return f"torchscript:{path}"

    def sb3_file(value: float) -> str:
        import torch
        from stable_baselines3 import PPO

        from urgym.env import UrEnv

        model = PPO("MlpPolicy", UrEnv("finkel", opponent="random"), policy_kwargs={"net_arch": [16]}, device="cpu")
        with torch.no_grad():
            model.policy.action_net.bias.fill_(value)
        path = work / f"bad-{value}.zip"
        model.save(path)
        return f"sb3:{path}"

    return {"onnx": onnx_file, "torchscript": torchscript_file, "sb3": sb3_file}


def _decisions():
    from urgym import Position, get_rules
    from urgym.batch import Decisions

    rules = get_rules("finkel")
    rng = np.random.default_rng(0)
    rows = []
    position = Position.start(rules)
    while len(rows) < 30:
        roll = int(rng.choice(rules.rolls, p=np.array(rules.roll_probabilities)[list(rules.rolls)]))
        moves = position.legal_moves(roll)
        if moves:
            rows.append((position.code, roll, moves))
        position = position.play(roll, moves[int(rng.integers(len(moves)))] if moves else None)
        if position.is_over:
            position = Position.start(rules)
    decisions = [Decisions.single(code, roll, moves, np.zeros(1, dtype=np.uint64)) for code, roll, moves in rows]
    return rules, Decisions(*(np.concatenate([getattr(d, f) for d in decisions]) for f in Decisions._fields))


def _network_cases(work: Path, Outcome) -> list:
    from urgym.agents import make_agent

    rules, decisions = _decisions()
    outcomes = []
    for fmt, make in _network_files(work).items():
        for value in (np.nan, np.inf, -np.inf):
            case = f"{fmt} network scoring {value}"
            try:
                chosen = make_agent(make(value)).select_moves(rules, decisions)
            except ValueError as err:
                outcomes.append(Outcome(case, "clear" if "not finite" in str(err) else "unclear", str(err)[:160]))
                continue
            except Exception as err:
                outcomes.append(Outcome(case, "traceback", f"{type(err).__name__}: {err}"[:160]))
                continue
            illegal = [int(m) for i, m in enumerate(chosen) if int(m) not in decisions.legal(i)]
            outcomes.append(
                Outcome(
                    case, "accepted", f"played illegal moves {illegal[:5]}" if illegal else "played on without a word"
                )
            )
    return outcomes


def _library_case(case: str, call: Callable[[], object], words: str, Outcome):
    try:
        result = call()
    except ValueError as err:
        return Outcome(case, "clear" if words in str(err) and "\n" not in str(err) else "unclear", str(err)[:160])
    except Exception as err:
        return Outcome(case, "traceback", f"{type(err).__name__}: {err}"[:160])
    return Outcome(case, "accepted", repr(result)[:120])


def _bomb_cases(work: Path, Outcome) -> list:
    from urgym.agents import make_agent
    from urgym.agents.networks.value import MAX_NETWORK_BYTES as MAX_TD_BYTES
    from urgym.agents.networks.value import ValueNetwork
    from urgym.agents.outside.policies import MAX_SB3_DATA, load_sb3_network
    from urgym.agents.outside.weights import MAX_WEIGHTS_BYTES, read_state_dict

    from urgym import GameRecord, records

    outcomes = []
    real = _network_files(work)["sb3"](0.0).split(":", 1)[1]
    bomb = work / "bomb.zip"
    with zipfile.ZipFile(real) as old, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            data = old.read(info.filename)
            if info.filename == "data":
                data = data[:-1] + b', "padding": "' + b" " * (MAX_SB3_DATA + 1) + b'"}'
            new.writestr(info.filename, data)
    outcomes.append(
        _library_case(
            f"sb3 zip of {bomb.stat().st_size:,} bytes whose data inflates past 16 MB",
            lambda: load_sb3_network(bomb),
            "inflates to",
            Outcome,
        )
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("archive/data.pkl", b"\0" * (MAX_WEIGHTS_BYTES + 1))
    outcomes.append(
        _library_case(
            "weights (policy.pth) whose pickle inflates past 256 MB",
            lambda: read_state_dict(buffer.getvalue()),
            "larger than",
            Outcome,
        )
    )
    npz = work / "bomb.npz"
    np.savez_compressed(
        npz, w1=np.zeros(MAX_TD_BYTES // 8 + 1), b1=np.zeros(1), w2=np.zeros(1), b2=np.zeros(1), meta=np.array("{}")
    )
    outcomes.append(
        _library_case(
            f"TD model of {npz.stat().st_size:,} bytes inflating past 64 MB",
            lambda: ValueNetwork.load(npz),
            "inflate to",
            Outcome,
        )
    )
    outcomes += _value_network_cases(work, Outcome)
    passes = " ".join(f"{turn}. 0- / 0-" for turn in range(1, 500_001))
    rgn = work / "passes.rgn"
    rgn.write_text('[Rules "finkel"]\n[Pieces "2"]\n\n' + passes)
    outcomes.append(
        _library_case("an RGN record of 10^6 passes", lambda: GameRecord.load(rgn), "more than any real game", Outcome)
    )
    result = _run([str(BIN / "review"), str(rgn)], work, timeout=120)
    outcomes.append(judge(result, "more than any real game", status=2, case="review of a record of 10^6 passes"))
    big = work / "big.json"
    step = {"side": "light", "roll": 0, "move": None}
    big.write_text(
        json.dumps(
            {"format": records.RECORD_FORMAT, "version": 1, "rules": {}, "players": {}, "steps": [step] * 1_000_000}
        )
    )
    outcomes.append(
        _library_case(
            f"a JSON record of {big.stat().st_size:,} bytes",
            lambda: GameRecord.load(big),
            "more than any real game",
            Outcome,
        )
    )
    outcomes.append(
        _library_case(
            "an ONNX model that is a bomb of zeros",
            lambda: make_agent(f"onnx:{_write(work / 'zeros.onnx', bytes(1 << 20))}"),
            "not an ONNX model",
            Outcome,
        )
    )
    return outcomes


def _value_network_cases(work: Path, Outcome) -> list:
    """Value network files (``neural:model=``) as a stranger sends them: bombs, devices, poisoned weights."""
    from urgym.agents.models import shipped_model
    from urgym.agents.networks.value import MAX_NETWORK_BYTES, ValueNetwork

    from urgym import get_rules

    with np.load(shipped_model(get_rules("blitz"))) as data:
        real = {name: data[name] for name in data.files}
    bomb = work / "value-bomb.npz"
    np.savez_compressed(bomb, **{**real, "w0": np.zeros(MAX_NETWORK_BYTES // 4 + 1, np.float32)})
    many = work / "value-many.npz"
    with zipfile.ZipFile(many, "w") as archive:
        for i in range(10_000):
            archive.writestr(f"a{i}.npy", b"")
    device = work / "value-device.npz"
    if not device.exists():
        device.symlink_to("/dev/zero")
    nan = work / "value-nan.npz"
    np.savez(nan, **{**real, "b1": np.full_like(real["b1"], np.nan)})
    return [
        _library_case(case, lambda path=path: ValueNetwork.load(path), words, Outcome)
        for case, path, words in (
            (f"value network of {bomb.stat().st_size:,} bytes inflating past 64 MB", bomb, "inflate to"),
            ("value network archive of 10,000 empty members", many, "more than a network's 64"),
            ("value network path that is /dev/zero", device, "not a regular file"),
            ("value network with NaN biases", nan, "not finite"),
        )
    ]


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


# --- the web server -------------------------------------------------------------------------------------------
def _web_cases(work: Path, Outcome) -> list:
    from urgym.agents import make_agent
    from urgym.evaluation.play.web import TOKEN_HEADER, WebGame, create_app
    from urgym.solver import load_or_solve
    from werkzeug.serving import make_server

    from urgym import get_rules

    rules = get_rules("finkel", 2)
    game = WebGame(rules, make_agent("random", seed=1), load_or_solve(rules, progress=False), "light", 7)
    server = make_server("127.0.0.1", 0, create_app(game, "t"), threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"

    def fetch(path: str, body: bytes | None = None, token: bool = True) -> int:
        request = urllib.request.Request(base + path, data=body, headers={TOKEN_HEADER: "t"} if token else {})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status
        except urllib.error.HTTPError as err:
            return err.code
        except (urllib.error.URLError, ConnectionError):
            return 413  # the server closed the connection while a refused body was still being sent

    outcomes = []
    for case, call, expected in (
        ("a 300 MB request body", lambda: fetch("/api/move", b"{" + b" " * (300 << 20) + b"}"), 413),
        ("a body nested 100,000 deep", lambda: fetch("/api/move", b"[" * 100_000 + b"]" * 100_000), 413),
        ("a body nested 8,000 deep", lambda: fetch("/api/move", b"[" * 8000 + b"]" * 8000), 400),
        ("a favicon request without the token", lambda: fetch("/favicon.ico", token=False), 204),
    ):
        status = call()
        outcomes.append(Outcome(f"web: {case}", "clear" if status == expected else "unclear", f"status {status}"))
    with game.lock:
        while not game.game.is_over:
            game.move(game.game.legal_moves[0])
    status = fetch("/api/hint")
    outcomes.append(
        Outcome("web: a hint after the game ended", "clear" if status == 409 else "unclear", f"status {status}")
    )
    server.shutdown()
    return outcomes


# --- 6. numbers from strangers --------------------------------------------------------------------------------
def _number_cases(work: Path, Outcome) -> list:
    from urgym import GameRecord, Position
    from urgym.jax import from_code

    code = Position.start("finkel").code
    outcomes = [
        _library_case(
            f"urgym.jax.from_code({bad!r}{', roll=' + repr(roll) if roll is not None else ''})",
            lambda bad=bad, roll=roll: from_code("finkel", bad, roll),
            "must be integers",
            Outcome,
        )
        for bad, roll in (
            (float(code), None),
            (code * 1.0, None),
            (True, None),
            ("12", None),
            (2**63, None),
            ([1.5], None),
            (code, 2.5),
            (code, True),
            (code, "2"),
        )
    ]
    rgn = '[Rules "finkel"]\n[Pieces "2"]\n\n1. a5a4\n'
    for case, text, words in (
        ('RGN [Seed "٣"]', rgn.replace('[Pieces "2"]', '[Pieces "2"]\n[Seed "\u0663"]'), "ASCII digits"),
        (
            "RGN seed of 5,000 digits",
            rgn.replace('[Pieces "2"]', '[Pieces "2"]\n[Seed "' + "1" * 5000 + '"]'),
            "not a whole number",
        ),
        ("RGN turn number of 5,000 digits", rgn.replace("1. a5a4", "1" * 5000 + ". a5a4"), "RGN action 1"),
        ("RGN turn number ١.", rgn.replace("1. a5a4", "\u0661. a5a4"), "RGN action 1"),
        ("RGN pieces of 5,000 digits", rgn.replace('"2"', '"' + "9" * 5000 + '"'), "Pieces"),
    ):
        outcome = _library_case(case, lambda text=text: GameRecord.from_rgn(text), words, Outcome)
        try:
            GameRecord.from_rgn(text)
        except ValueError as err:
            if outcome.verdict == "clear" and len(str(err)) > 400:  # the stranger's digits quoted in full
                outcome = Outcome(case, "unclear", f"a message of {len(str(err)):,} characters")
        outcomes.append(outcome)
    try:
        record = GameRecord.from_rgn("\ufeff" + rgn)
        outcomes.append(
            Outcome(
                "an RGN file that starts with a byte-order mark",
                "clear" if len(record.steps) == 1 else "accepted",
                f"{len(record.steps)} steps",
            )
        )
    except ValueError as err:
        outcomes.append(Outcome("an RGN file that starts with a byte-order mark", "unclear", str(err)[:160]))
    return outcomes


# --- 7. the smaller ones --------------------------------------------------------------------------------------
def _small_cases(work: Path, Outcome) -> list:
    import torch
    from urgym.agents import make_agent

    rules, decisions = _decisions()
    outcomes = []
    path = work / "small.pt"
    torch.jit.script(torch.nn.Linear(10, 15)).save(str(path))
    outcomes.append(
        _library_case(
            "a TorchScript network of the wrong input size",
            lambda: make_agent(f"torchscript:{path}").select_moves(rules, decisions),
            "the network fails on observations",
            Outcome,
        )
    )
    spec = _network_files(work)["sb3"](0.0)
    zip_path = Path(spec.split(":", 1)[1])
    bias_path = work / "bias.zip"
    with zipfile.ZipFile(zip_path) as old, zipfile.ZipFile(bias_path, "w") as new:
        for info in old.infolist():
            data = old.read(info.filename)
            if info.filename == "policy.pth":
                state = torch.load(io.BytesIO(data), weights_only=True)
                state["action_net.bias"] = torch.zeros(1)
                buffer = io.BytesIO()
                torch.save(state, buffer)
                data = buffer.getvalue()
            new.writestr(info.filename, data)
    outcomes.append(
        _library_case(
            "an sb3 model with a bias of the wrong shape",
            lambda: make_agent(f"sb3:{bias_path}"),
            "has a bias of shape",
            Outcome,
        )
    )
    # URGYM_PROGRESS=1: the case reads the solve's progress bar (and its ETA) from a pipe, where bars are off by default
    env = {**os.environ, "URGYM_CACHE": str(work / "fresh-cache"), "URGYM_PROGRESS": "1"}
    process = subprocess.Popen(
        [str(BIN / "evaluate"), "--agent", "greedy", "--pieces", "5", "--games", "2"],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    seen = b""
    while b"solve finkel" not in seen and process.poll() is None:  # its progress bar: the solve has begun
        seen += os.read(process.stderr.fileno(), 4096)
    time.sleep(3.0)
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=60)
    err = (seen + err).decode(errors="replace")
    last = err.strip().splitlines()[-1] if err.strip() else ""
    outcomes.append(
        Outcome(
            "Ctrl-C of evaluate while it solves the table",
            "clear" if process.returncode == 130 and "resumes" in last else "unclear",
            last[:160],
        )
    )
    eta = [line for line in err.replace("\r", "\n").splitlines() if "solve finkel" in line and "<" in line]
    hours = [line for line in eta if line.split("<")[1].split(",")[0].count(":") >= 2]  # h:mm:ss
    outcomes.append(
        Outcome(
            "the first solve's ETA",
            "unclear" if hours else "clear",
            hours[0][:160] if hours else f"{len(eta)} bar updates with an ETA, none in hours",
        )
    )
    return outcomes


PARTS = [
    _cache_cases,
    _full_disk_cases,
    _engine_cases,
    _network_cases,
    _bomb_cases,
    _web_cases,
    _number_cases,
    _small_cases,
]
"""Each part of the round: (work folder, Outcome) -> the outcomes of its cases."""
