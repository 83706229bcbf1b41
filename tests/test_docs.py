"""The documentation's Python examples run: every ```python block of README.md and of each page under docs/.

A page's blocks run in order as one script (later blocks use what earlier ones made), in a fresh process and an
empty folder, as a reader would run them, against the tests' private table cache. A block fenced as
```python no-run is shown only (an excerpt that cannot run alone); each such block must say why in its first line.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```python( no-run)?\n(.*?)^```", re.MULTILINE | re.DOTALL)


def python_blocks(page: Path) -> list[tuple[bool, str]]:
    """Every ```python block of a page: (runs, code)."""
    return [(not match.group(1), match.group(2)) for match in FENCE.finditer(page.read_text(encoding="utf-8"))]


def test_the_docs_have_examples():
    """Guards the pattern: the pages hold many runnable blocks, and shown-only blocks are few and say why."""
    blocks = [block for page in PAGES for block in python_blocks(page)]
    assert sum(runs for runs, _ in blocks) >= 20
    for runs, code in blocks:
        if not runs:
            assert code.lstrip().startswith("#"), f"a no-run block must start with a comment saying why:\n{code}"


@pytest.mark.parametrize(
    "page",
    [page for page in PAGES if any(runs for runs, _ in python_blocks(page))],
    ids=lambda page: page.relative_to(ROOT).as_posix(),
)
def test_examples_run(page, tmp_path, private_cache):
    """The page's runnable blocks, run as one script from an empty folder, exit with status 0."""
    script = "\n\n".join(code for runs, code in python_blocks(page) if runs)
    (tmp_path / "example.py").write_text(script, encoding="utf-8")
    env = {**os.environ, "URGYM_CACHE": str(private_cache), "MPLBACKEND": "Agg"}
    result = subprocess.run(
        [sys.executable, "example.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, f"{page.name}'s examples failed:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
