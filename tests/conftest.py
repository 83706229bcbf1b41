"""Shared fixtures: every test runs against a private table cache, never the user's."""

from __future__ import annotations

import os
import signal

import pytest

from urgym import get_rules, solver

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    # A suite started in the background of a non-interactive shell inherits Ctrl-C ignored, and so would every
    # command the Ctrl-C tests start (an ignored signal stays ignored across exec); handled here, each child starts
    # with the default again.
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory):
    """Point URGYM_CACHE at a fresh directory for the whole session.

    SB3_LOGDIR too: a stable-baselines3 model learning without a logger of its own makes a folder in the system's
    temporary directory on every ``learn``, and a test leaves nothing behind.
    """
    path = tmp_path_factory.mktemp("urgym-cache")
    private = {"URGYM_CACHE": str(path), "SB3_LOGDIR": str(tmp_path_factory.mktemp("sb3-logs"))}
    old = {name: os.environ.get(name) for name in private}
    os.environ.update(private)
    yield path
    for name, value in old.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def finkel3_table(private_cache):
    """Finkel with 3 pieces, solved once and cached where agents look for it (264,304 positions)."""
    return solver.load_or_solve(get_rules("finkel", 3), progress=False)
