"""The reference engine as an installed program, found whether or not the environment is activated (issue 42)."""

import os
import shutil
import sys
from pathlib import Path

import pytest
from urgym.agents import make_agent
from urgym.agents.outside.engine import beside_interpreter

from urgym import Position

SCRIPT = Path(sys.executable).parent / "urgym-uei-engine"


@pytest.mark.skipif(not SCRIPT.exists(), reason="urgym is not installed with its console scripts here")
def test_the_engine_program_is_found_beside_the_interpreter_without_path(monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # an environment that is not activated
    assert shutil.which("urgym-uei-engine") is None
    assert beside_interpreter("urgym-uei-engine") == str(SCRIPT)
    agent = make_agent("engine:urgym-uei-engine")
    try:
        assert agent.spec == "engine:urgym-uei-engine"  # the spec as given, not the path it was found at
        position = Position.start("finkel")
        assert agent.select_move(position, 2) in position.legal_moves(2)
    finally:
        agent.close()


def test_a_program_on_path_or_with_a_path_is_left_as_it_is(tmp_path):
    assert beside_interpreter("sh") == "sh"
    assert beside_interpreter(str(tmp_path / "x")) == str(tmp_path / "x")
    assert beside_interpreter("no-such-program-anywhere") == "no-such-program-anywhere"
    assert os.access(sys.executable, os.X_OK)
