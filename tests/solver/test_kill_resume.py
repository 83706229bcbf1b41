"""A solve killed (SIGKILL) or interrupted (Ctrl-C) in the middle resumes to the same table."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from urgym import get_rules, solver

SOLVE = str(Path(sys.executable).parent / "solve")


def _default_sigint() -> None:
    """Let the child take Ctrl-C even when this test runs in a background job (which ignores SIGINT)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_and_stop(out: Path, sig: int) -> subprocess.CompletedProcess:
    """Start a solve, wait until it has finished a layer pair or two, then send ``sig``."""
    process = subprocess.Popen(
        [SOLVE, "--rules", "finkel", "--pieces", "4", "--out", str(out), "--no-progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )
    state = out.with_name(out.name + ".partial.json")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if state.exists():
            try:
                if len(json.loads(state.read_text())["done"]) >= 2:
                    break
            except (ValueError, KeyError):
                pass
        time.sleep(0.02)
    if process.poll() is not None:
        pytest.skip("the solve finished before it could be stopped (machine too fast for this test)")
    process.send_signal(sig)
    stdout, stderr = process.communicate(timeout=60)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_a_stopped_solve_resumes_to_the_same_table(tmp_path, sig):
    out = tmp_path / "finkel4.urtable"
    stopped = start_and_stop(out, sig)
    assert not out.exists()
    if sig == signal.SIGINT:
        assert stopped.returncode == 130
        assert stopped.stderr.strip().splitlines()[-1] == (
            "solve: interrupted; run the same command again to resume from the last finished layer pair"
        )
    resumed = subprocess.run(
        [SOLVE, "--rules", "finkel", "--pieces", "4", "--out", str(out), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming from" in resumed.stderr
    fresh = solver.load_or_solve(get_rules("finkel", 4), progress=False)  # the cache's, shared with other tests
    table = solver.SolvedTable.load(out)
    assert np.max(np.abs(table.probabilities() - fresh.probabilities())) < 1e-11
    assert table.header["residual"] < 1e-12
