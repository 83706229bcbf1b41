"""Bad command lines beyond the hostile rounds' (tests/hostile): mismatched records, the cache, ``--debug``, Ctrl-C.

Each ends with one line on stderr naming what was wrong, exit status 2, and no traceback (``--debug`` shows the
traceback).
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent


def run(argv, tmp_path, env=None):
    return subprocess.run(
        [str(BIN / argv[0]), *argv[1:]],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, **(env or {})},
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_review_refuses_rules_that_do_not_match_the_record(tmp_path):
    from urgym import Game, GameRecord

    game = Game("finkel", seed=0, pieces=2)
    while not game.is_over:
        game.play(game.legal_moves[0])
    GameRecord.from_game(game).save(tmp_path / "record.json")
    result = run(["review", "record.json", "--rules", "blitz", "--pieces", "2", "--summary"], tmp_path)
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "record.json is a game of finkel: path of 14, 2 pieces" in result.stderr
    assert "not of the --rules/--pieces given (blitz" in result.stderr


def test_cache_set_to_a_file_is_named(tmp_path):
    result = run(
        ["evaluate", "--agent", "greedy", "--pieces", "2", "--games", "2"], tmp_path, env={"URGYM_CACHE": "/etc/passwd"}
    )
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "URGYM_CACHE=/etc/passwd is a file" in result.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["evaluate", "--agent", "neural:model=\x1b]0;owned\x07\x1b[2Jnet.npz", "--pieces", "2"],  # a missing file
        ["evaluate", "--agent", "no-such\x1b[31m-agent", "--pieces", "2"],  # a value the parser refuses
        ["review", "\x1b[2J\u202egame.json"],  # a path the OS refuses
    ],
    ids=["missing-file", "refused-value", "os-error"],
)
def test_an_escape_sequence_in_a_name_reaches_the_terminal_written_out(argv, tmp_path):
    result = run(argv, tmp_path)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr and "\u202e" not in result.stderr
    assert "\\x1b[" in result.stderr, result.stderr


def test_debug_shows_the_traceback(tmp_path):
    result = run(
        ["evaluate", "--agent", "greedy", "--pieces", "2", "--games", "2", "--debug"],
        tmp_path,
        env={"URGYM_CACHE": "/etc/passwd"},
    )
    assert result.returncode == 1 and "Traceback" in result.stderr and "is a file" in result.stderr


@pytest.mark.parametrize(
    "argv",
    [
        [
            "evaluate",
            "--agent",
            "greedy",
            "--pieces",
            "2",
            "--games",
            "10000000",
            "--positions",
            "0",
            "--workers",
            "2",
        ],
        ["ur-simulate", "--pieces", "2", "--games", "1000000000"],
        # one move of a deep search is a single numba call of minutes, run on a thread the main thread waits for
        ["evaluate", "--agent", "expectimax:16", "--opponent", "random", "--no-table", "--games", "2"],
    ],
    ids=["evaluate with workers", "ur-simulate", "evaluate in the middle of one deep search"],
)
def test_ctrl_c_stops_a_long_command_with_one_line_and_no_leftovers(argv, tmp_path):
    import signal
    import time

    # A terminal's Ctrl-C goes to the whole process group; a background job would start with SIGINT ignored.
    process = _start_as_from_a_terminal([str(BIN / argv[0]), *argv[1:]], tmp_path)
    time.sleep(6)
    assert process.poll() is None, "the command finished before Ctrl-C"
    os.killpg(process.pid, signal.SIGINT)
    started = time.monotonic()
    _, stderr = process.communicate(timeout=15)  # it takes well under a second; it used to take 20 s or for ever
    assert time.monotonic() - started < 3
    assert process.returncode == 130
    assert stderr.replace("\r", "\n").strip().splitlines()[-1] == f"{argv[0]}: interrupted"
    assert "Traceback" not in stderr and "leaked" not in stderr
    deadline = time.monotonic() + 10  # the resource tracker ends once it has cleaned up after the workers
    while time.monotonic() < deadline and _group_alive(process.pid):
        time.sleep(0.1)
    assert not _group_alive(process.pid), "processes of the command are left running"


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize(
    "after",
    ["urgym.startup", "numpy._core._multiarray_umath", "numba.core.config", "numba"],
    ids=["as the package starts", "inside numpy's import", "inside numba's import", "after numba's import"],
)
def test_ctrl_c_while_a_command_starts_gives_one_line(after, tmp_path):
    """Ctrl-C during the imports (numpy, numba, ...) before main runs: one line and status 130, no traceback.

    The moment is read off the import log Python writes (``-X importtime``), not a clock: on a busy machine a fixed
    delay can fall inside Python's own start-up, before any of the package's code runs.
    """
    import signal

    process = _start_as_from_a_terminal(
        [str(BIN / "evaluate"), "--agent", "greedy", "--pieces", "2", "--games", "2"],
        tmp_path,
        env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"},
    )
    log = []
    while not (log and log[-1].rsplit("|", 1)[-1].strip() == after):
        line = process.stderr.readline()
        assert line, f"the command ended before it imported {after}"
        log.append(line)
    os.killpg(process.pid, signal.SIGINT)
    _, rest = process.communicate(timeout=30)
    stderr = "".join(line for line in [*log, *rest.splitlines(True)] if not line.startswith("import time:"))
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert stderr.replace("\r", "\n").strip().splitlines()[-1] == "evaluate: interrupted"


def test_ctrl_c_that_python_swallows_in_a_ctypes_callback_still_stops_the_command(tmp_path):
    """Numba's cache calls back into Python through ctypes, where a KeyboardInterrupt can only be ignored.

    The command must still stop at once with one line and status 130 (it used to finish its work as if Ctrl-C never
    came).
    """
    import time

    script = tmp_path / "demo.py"
    script.write_text(
        "from urgym.commands.common import command\n"
        "import ctypes, os, signal, sys, time\n"
        "@command('demo')\n"
        "def main(argv):\n"
        "    def inside_c():\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "        time.sleep(0.2)  # the KeyboardInterrupt is raised here, inside the callback\n"
        "    ctypes.CFUNCTYPE(None)(inside_c)()\n"
        "    time.sleep(10)\n"
        "    print('finished as if not interrupted')\n"
        "sys.exit(main())\n"
    )
    started = time.monotonic()
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    elapsed = time.monotonic() - started
    assert result.returncode == 130, result.stdout + result.stderr
    assert result.stderr.strip().splitlines()[-1] == "demo: interrupted"
    assert "Traceback" not in result.stderr and "finished" not in result.stdout
    assert elapsed < 8, "the interrupt waited for the work to finish"


def test_ctrl_c_while_a_command_solves_says_the_solve_resumes(monkeypatch, capsys, tmp_path):
    """Evaluate (and review, stats, ur-play) solve a missing table first; stopped there, they say it resumes."""
    from urgym.commands import common
    from urgym.commands.evaluate import main as evaluate_main

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setenv("URGYM_CACHE", str(tmp_path))
    monkeypatch.setattr(common, "table_for", interrupted)
    assert evaluate_main(["--agent", "greedy", "--pieces", "2", "--games", "2"]) == 130
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "evaluate: interrupted; run the same command again: the table's solve resumes from its last finished layer pair"
    )


def test_evaluate_without_the_table_plays_win_rates_only(tmp_path):
    """--no-table: a match of the full game at once, with no solve and nothing written to the cache."""
    env = {**os.environ, "URGYM_CACHE": str(tmp_path / "cache")}
    result = subprocess.run(
        [
            str(BIN / "evaluate"),
            "--agent",
            "greedy",
            "--opponent",
            "random",
            "--games",
            "20",
            "--no-table",
            "--no-progress",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "greedy vs random on finkel" in result.stdout and "wins" in result.stdout
    assert "regret" not in result.stdout and "luck-adjusted" not in result.stdout
    assert "note: --no-table" in result.stderr
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["review", "loop"],
        ["train", "--algo", "td", "--pieces", "2", "--timesteps", "100", "--out", "loop"],
        ["evaluate", "--agent", "greedy", "--pieces", "2", "--games", "2", "--positions", "0", "--save-games", "loop"],
        ["urgym", "bench", "--task", "finkel-3", "--algo", "td", "--out", "loop"],
    ],
)
def test_a_link_loop_given_as_a_path_is_one_line(argv, tmp_path):
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    result = run(argv, tmp_path)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert "loop is a symbolic link that leads nowhere (dangling, or a loop of links)" in lines[0]


def test_review_of_a_folder_names_the_links_it_leaves_out_and_resolves_each_path_once(tmp_path, monkeypatch):
    from urgym.commands import review

    folder = tmp_path / "games"
    folder.mkdir()
    (folder / "game-000002.json").symlink_to(tmp_path / "nowhere")
    (folder / "looping.json").symlink_to(folder / "looping.json")
    result = run(["review", str(folder)], tmp_path)
    assert result.returncode == 2
    assert "left out" in result.stderr and "game-000002.json: a symbolic link that leads nowhere" in result.stderr
    calls = []
    real = Path.resolve
    monkeypatch.setattr(Path, "resolve", lambda self, *a, **k: calls.append(self) or real(self, *a, **k))
    paths = [tmp_path / f"r{i}.json" for i in range(300)]
    for path in paths:
        path.write_text("{}")
    assert review._record_paths(None, [str(p) for p in paths + paths[:5]]) == paths  # named twice: once
    assert len(calls) == 305  # once per path given (it was once per path per record: 90,000 here)


def test_ctrl_c_while_an_exact_evaluation_sweeps_gives_one_line(tmp_path):
    """The sweeps are numba kernels: Ctrl-C in the middle of them still ends with status 130 and one line."""
    import signal
    import time

    marker = tmp_path / "sweeping"
    script = tmp_path / "exact.py"
    script.write_text(
        "import sys\n"
        "from urgym.solver import policy\n"
        "from urgym.commands.evaluate import main\n"
        "real = policy._sweep_pair\n"
        "def sweep_for_ever(*args, **kwargs):\n"
        f"    open({str(marker)!r}, 'w').close()\n"
        "    while True:\n"
        "        real(*args, **kwargs)\n"
        "policy._sweep_pair = sweep_for_ever\n"
        "sys.exit(main(['--agent', 'greedy', '--exact', '--pieces', '3', '--no-policy-cache', '--no-progress']))\n"
    )
    process = _start_as_from_a_terminal([sys.executable, str(script)], tmp_path)
    deadline = time.monotonic() + 240  # the table of 3 pieces may be solved first
    while not marker.exists() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.1)
    assert marker.exists(), "the evaluation never reached its sweeps"
    time.sleep(1.0)
    os.killpg(process.pid, signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert stderr.replace("\r", "\n").strip().splitlines()[-1] == "evaluate: interrupted"


def _start_as_from_a_terminal(argv: list[str], cwd: Path, env: dict | None = None) -> subprocess.Popen:
    """A command in its own process group with Ctrl-C's default action, as a terminal starts it (stderr piped).

    A background job would start with SIGINT ignored, and a terminal's Ctrl-C goes to the whole group.
    """
    import signal

    return subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def test_a_worker_a_command_spawns_ignores_ctrl_c_from_its_start(tmp_path):
    """The terminal's Ctrl-C reaches the workers too, maybe still importing: the command answers it and stops them."""
    script = tmp_path / "command.py"
    script.write_text(
        "from urgym.commands.stats import main  # noqa: F401 (the import line of urgym's console scripts)\n"
        "import multiprocessing\n"
        "import signal\n"
        "\n"
        "\n"
        "def report(queue):\n"
        "    queue.put(signal.getsignal(signal.SIGINT) == signal.SIG_IGN)\n"
        "\n"
        "\n"
        "if __name__ == '__main__':\n"
        "    context = multiprocessing.get_context('spawn')\n"
        "    queue = context.Queue()\n"
        "    worker = context.Process(target=report, args=(queue,))\n"
        "    worker.start()\n"
        "    print('worker ignores Ctrl-C:', queue.get(timeout=120))\n"
        "    worker.join()\n"
    )
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "worker ignores Ctrl-C: True" in result.stdout
