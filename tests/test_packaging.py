"""urgym as a library beside its users' code.

One import name in the wheel, package data inside it, the umbrella command, and a project with its own ``agents/``,
``evaluation.py`` and ``solver.py`` that urgym leaves alone.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib
from urgym.commands import COMMANDS
from urgym.commands.main import main as urgym_main

import urgym

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel built from this checkout (without build isolation: setuptools of the test environment)."""
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        text=True,
    )
    # Package data lives in packages of its own (urgym.agents.models, urgym.evaluation.pages), declared: setuptools
    # warned "Package 'urgym.agents.models' is absent from the `packages` configuration" before 0.6 (issue 42).
    assert "absent from the `packages` configuration" not in built.stdout + built.stderr
    return next(out.glob("urgym-*.whl"))


def test_the_wheel_installs_one_import_name(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names}
    assert top == {"urgym", f"urgym-{urgym.__version__}.dist-info"}, top
    for package in ("agents", "solver", "evaluation", "commands", "examples"):
        assert f"urgym/{package}/__init__.py" in names


def test_the_wheel_carries_what_it_needs(wheel):
    """Shipped models, the web pages, the reference engine and the license: nothing of the checkout is needed."""
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in (
        "urgym/agents/models/ppo_finkel.zip",
        "urgym/agents/models/td_finkel.npz",
        "urgym/agents/models/ppo_finkel.json",
        "urgym/examples/uei_engine.py",
        "urgym/evaluation/play/strengths.json",
        "urgym/py.typed",
        f"urgym-{urgym.__version__}.dist-info/licenses/LICENSE",
    ):
        assert needed in names, needed
    assert any(name.startswith("urgym/evaluation/pages/") and name.endswith(".html") for name in names)
    metadata = zipfile.ZipFile(wheel).read(f"urgym-{urgym.__version__}.dist-info/METADATA").decode()
    assert "License-Expression: MIT" in metadata and "Project-URL: Documentation" in metadata
    entry_points = zipfile.ZipFile(wheel).read(f"urgym-{urgym.__version__}.dist-info/entry_points.txt").decode()
    assert "ur-play = urgym.commands.play:main" in entry_points and "\nplay =" not in entry_points


def test_version_is_one_number():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["project"]["version"] == urgym.__version__


USERS_CODE = {
    "agents/__init__.py": "WHO = 'the user'\n",
    "agents/registry.py": "raise ImportError('urgym imported the user\\'s agents package')\n",
    "evaluation.py": "def review_game():\n    return 'the user\\'s review'\n",
    "solver.py": "raise ImportError('urgym imported the user\\'s solver module')\n",
}

USERS_SCRIPT = """
import gymnasium as gym
import urgym
from urgym.agents import make_agent
from urgym.evaluation import review_game as urgym_review

env = gym.make("urgym/Ur-v2", pieces=2, opponent="expectimax:3")
obs, info = env.reset(seed=0)
env.step(info["legal_moves"][0])
print(make_agent("heuristic").spec)

import agents
from evaluation import review_game
print(agents.WHO, review_game(), urgym_review.__module__)
"""


def test_a_project_with_its_own_agents_and_evaluation(tmp_path):
    """The issue's case: a project's agents/ and evaluation.py no longer break urgym, nor urgym theirs."""
    for name, text in USERS_CODE.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "main.py").write_text(USERS_SCRIPT)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, "main.py"], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split("\n")[-2] == "the user the user's review urgym.evaluation.review.grades"


def test_the_umbrella_command_lists_every_command(capsys):
    assert urgym_main(["--help"]) == 0
    listing = capsys.readouterr().out
    for name in COMMANDS:
        assert f"  {name} " in listing
    assert urgym_main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"urgym {urgym.__version__}"


def test_the_umbrella_command_refuses_an_unknown_command(capsys):
    assert urgym_main(["evaluat"]) == 2
    assert "unknown command 'evaluat'; commands: evaluate, play" in capsys.readouterr().err


def test_the_umbrella_command_runs_a_command_as_a_program(tmp_path):
    result = subprocess.run(
        [str(BIN / "urgym"), "simulate", "--pieces", "2", "--games", "200"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "200" in result.stdout and "light" in result.stdout
    result = subprocess.run([str(BIN / "urgym"), "solve", "--pieces", "0"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr


def test_every_command_has_a_script_and_a_page():
    """Every umbrella command is installed under its own name too and documented in docs/commands.md."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    scripts = config["project"]["scripts"]
    page = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    modules = {target.split(":")[0] for target in scripts.values()}
    for name, (module, _) in COMMANDS.items():
        assert f"urgym.commands.{module}" in modules, name
    for script in scripts:
        assert f"`{script}" in page, script
    assert "play" not in scripts, "SoX installs a play command: urgym's is ur-play"
