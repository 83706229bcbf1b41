"""MkDocs hook: lay out the package as it installs, for the API reference.

In the repository the subpackages sit beside ``urgym/`` (``agents/`` installs as ``urgym.agents``, and so on; see
pyproject.toml's ``package-dir``), so griffe, which reads the source, would find ``urgym`` without them. Before
every build this hook makes ``.api-tree/urgym``: links to the files of ``urgym/`` and to each mapped folder.
"""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TREE = ROOT / ".api-tree"


def _package_dirs() -> dict[str, Path]:
    """The package names pyproject.toml maps to folders: ``{"urgym.agents": ROOT / "agents", ...}``."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return {name: ROOT / folder for name, folder in config["tool"]["setuptools"]["package-dir"].items()}


def build_tree() -> Path:
    """Make ``.api-tree/urgym`` afresh and return ``.api-tree``."""
    shutil.rmtree(TREE, ignore_errors=True)
    package = TREE / "urgym"
    package.mkdir(parents=True)
    for entry in (ROOT / "urgym").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for name, folder in _package_dirs().items():
        if name != "urgym":
            (package / name.split(".", 1)[1]).symlink_to(folder, target_is_directory=True)
    return TREE


def on_startup(command: str, dirty: bool) -> None:
    """Build the tree once, before MkDocs reads its configuration's paths."""
    build_tree()
