"""Engines' processes: stopping an engine stops its whole process group.

The group is the engine and what it started, stopped on success, on error, on Ctrl-C of the command and at exit;
answers that are not moves are one-line faults.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from urgym.agents.outside.engine import EngineAgent, EngineError

from tests.agents.outside.engine_processes import BIN, BROKEN, alive, evaluate_against_random, gone
from urgym import Position


def pids_of(pidfile: Path, timeout: float = 30.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while not pidfile.exists():
        assert time.monotonic() < deadline, "the engine never started"
        time.sleep(0.05)
    return [int(p) for p in pidfile.read_text().split()]


def a_decision() -> tuple[Position, int]:
    return Position.start("finkel"), 2


@pytest.mark.parametrize("mode", ["forking", "deaf"])
def test_closing_an_engine_stops_its_children_and_a_deaf_engine(mode, tmp_path):
    pidfile = tmp_path / "pids"
    agent = EngineAgent([*BROKEN, mode, str(pidfile)], move_time=5.0)
    assert agent.select_move(*a_decision()) == 0
    pids = pids_of(pidfile)
    assert all(alive(p) for p in pids)
    agent.close()
    assert gone(pids)


def test_a_failing_engine_takes_its_children_with_it(tmp_path):
    pidfile = tmp_path / "pids"
    agent = EngineAgent([*BROKEN, "hang-forking", str(pidfile)], move_time=1.0)
    pids = pids_of(pidfile)
    with pytest.raises(EngineError, match="did not answer within 1 s"):
        agent.select_move(*a_decision())
    assert gone(pids)


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("closes", "closed its output and kept running during go"),
        ("digits", r"answered 'bestmove \u0663' to go .* ASCII digits"),
        ("huge", "answered 'bestmove 1111"),
        ("flood", "did not answer within 1 s during go"),
    ],
)
def test_answers_that_are_not_moves_are_one_line_faults(mode, message, tmp_path):
    pidfile = tmp_path / "pids"
    agent = EngineAgent([*BROKEN, mode, str(pidfile)], move_time=1.0)
    pids = pids_of(pidfile)
    with pytest.raises(EngineError, match=message) as caught:
        agent.select_move(*a_decision())
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 600
    assert gone(pids)


@pytest.mark.parametrize("command", ["evaluate", "engine-check"])
def test_ctrl_c_stops_the_engine_and_its_children(command, tmp_path):
    """Ctrl-C while the engine thinks for ever: the command ends with status 130, and nothing it started runs."""
    pidfile = tmp_path / "pids"
    engine = [*BROKEN, "hang-forking", str(pidfile)]
    argv = (
        evaluate_against_random("engine:move_time=600:" + " ".join(engine), workers=1)
        if command == "evaluate"
        else [str(BIN / "engine-check"), "--move-time", "600", *engine]
    )
    process = subprocess.Popen(
        argv,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "URGYM_CACHE": str(tmp_path / "cache")},
    )
    pids = pids_of(pidfile, timeout=120)
    time.sleep(1.0)  # the engine has been asked for a move by now
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert gone(pids), "the engine or its child outlived the command"


def test_a_terminated_worker_stops_its_engines(tmp_path):
    """A process holding an engine that gets SIGTERM (a worker stopped by its command) stops the engine first."""
    pidfile = tmp_path / "pids"
    script = (
        "import sys, time\nfrom urgym.agents.outside.engine import EngineAgent\n"
        f"agent = EngineAgent({[*BROKEN, 'forking', str(pidfile)]!r})\nprint('ready', flush=True)\n"
        "time.sleep(600)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "ready"
    pids = pids_of(pidfile)
    holder.terminate()
    holder.wait(timeout=30)
    assert holder.returncode == -signal.SIGTERM
    assert gone(pids)
