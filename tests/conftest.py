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
    """Point URGYM_CACHE at a fresh directory for the whole session."""
    old = os.environ.get("URGYM_CACHE")
    path = tmp_path_factory.mktemp("urgym-cache")
    os.environ["URGYM_CACHE"] = str(path)
    yield path
    if old is None:
        os.environ.pop("URGYM_CACHE", None)
    else:
        os.environ["URGYM_CACHE"] = old


@pytest.fixture(scope="session")
def finkel3_table(private_cache):
    """Finkel with 3 pieces, solved once and cached where agents look for it (264,304 positions)."""
    return solver.load_or_solve(get_rules("finkel", 3), progress=False)
