"""What the tests of engines' processes share: the misbehaving engine, whether its processes still run, a match."""

from __future__ import annotations

import sys
import time
from pathlib import Path

BROKEN = [sys.executable, str(Path(__file__).with_name("broken_engine.py"))]
"""The engine that misbehaves as its first argument says (``forking``, ``deaf``, ``hang-forking``, ...)."""
BIN = Path(sys.executable).parent


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, dead but not yet reaped by its parent, counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def gone(pids: list[int], timeout: float = 5.0) -> bool:
    """Whether every process of ``pids`` has ended within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(alive(p) for p in pids)


def evaluate_against_random(engine_spec: str, workers: int) -> list[str]:
    """``evaluate`` of an engine agent against random, 2 games of finkel with 2 pieces, no position benchmark."""
    return [
        str(BIN / "evaluate"),
        "--agent",
        engine_spec,
        "--opponent",
        "random",
        "--pieces",
        "2",
        "--games",
        "2",
        "--positions",
        "0",
        "--workers",
        str(workers),
        "--no-progress",
    ]
