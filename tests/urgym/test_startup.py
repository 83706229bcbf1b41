"""Ctrl-C and the worker processes urgym starts: a worker is never interrupted in the middle of its own start."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from urgym.startup import ctrl_c_held, ignore_ctrl_c, worker_context

pytestmark = pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="signals are held back on POSIX only")

SLOW_START = "import time; time.sleep(1.0); print('alive')"  # a worker still starting when Ctrl-C comes


def _start_and_interrupt(code: str, held: bool) -> subprocess.CompletedProcess:
    """Start ``code`` in a new Python (inside :func:`ctrl_c_held` or not), send it SIGINT at once, wait for it."""
    argv = [sys.executable, "-c", code]
    if held:
        with ctrl_c_held():
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    else:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.3)
    os.kill(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def test_a_process_started_while_ctrl_c_is_held_is_not_interrupted_while_it_starts():
    plain = _start_and_interrupt(SLOW_START, held=False)
    assert plain.returncode != 0 and "KeyboardInterrupt" in plain.stderr  # the window the hold closes
    held = _start_and_interrupt(SLOW_START, held=True)
    assert (held.returncode, held.stdout.strip(), held.stderr) == (0, "alive", "")


def test_a_worker_that_then_ignores_ctrl_c_drops_the_one_held_back_and_ignores_later_ones():
    code = textwrap.dedent("""
        import os, signal, time
        time.sleep(1.0)
        from urgym.startup import ignore_ctrl_c
        ignore_ctrl_c()
        assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())  # no longer held back
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)
        print("alive")
    """)
    worker = _start_and_interrupt(code, held=True)
    assert (worker.returncode, worker.stdout.strip(), worker.stderr) == (0, "alive", "")


def test_the_hold_ends_with_the_block():
    before = signal.pthread_sigmask(signal.SIG_BLOCK, set())
    with ctrl_c_held():
        assert signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set())
    assert signal.pthread_sigmask(signal.SIG_BLOCK, set()) == before


def test_the_worker_pools_processes_are_born_holding_ctrl_c_and_their_initializer_ignores_it():
    with worker_context().Pool(1) as pool:  # no initializer: the mask the worker was born with
        assert signal.SIGINT in pool.apply(signal.pthread_sigmask, (signal.SIG_BLOCK, ()))
    with worker_context().Pool(1, initializer=ignore_ctrl_c) as pool:
        assert signal.SIGINT not in pool.apply(signal.pthread_sigmask, (signal.SIG_BLOCK, ()))
        assert pool.apply(signal.getsignal, (signal.SIGINT,)) == signal.SIG_IGN
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())  # the parent holds nothing after
