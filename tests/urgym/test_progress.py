"""Progress bars are drawn only when asked for and stderr is a terminal (issue 42)."""

import io

import pytest

from urgym.progress import progress_bar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("stream", "enabled", "forced", "shown"),
    [
        (io.StringIO(), True, "", False),  # a pipe, a log file, CI: off by default
        (Terminal(), True, "", True),
        (Terminal(), False, "", False),  # --no-progress
        (io.StringIO(), True, "1", True),  # URGYM_PROGRESS=1 draws it anyway
        (Terminal(), True, "0", False),
    ],
)
def test_a_bar_is_drawn_only_on_a_terminal_or_when_forced(monkeypatch, stream, enabled, forced, shown):
    monkeypatch.setenv("URGYM_PROGRESS", forced)
    bar = progress_bar(10, "work", enabled, file=stream)
    bar.update(10)
    bar.close()
    assert ("work" in stream.getvalue()) == shown
