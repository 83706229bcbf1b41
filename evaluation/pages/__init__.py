"""The web pages of urgym, and how they are filled.

The pages are package data: the review, the game, the how-to-play page, and the board they share. A page is a
self-contained HTML file whose data travels as JSON in a script element.

Shared by the review of games (``review --html``) and the games a person plays (``ur-play --web``).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

from urgym import SIDES, Position, Rules

__all__ = ["PAGES", "board_data", "fill_template", "position_data", "render_page", "script_json"]

PAGES = Path(__file__).parent
"""The pages' templates (``review.html``, ``play.html``) and the board they share (``board.css``, ``board.js``)."""


def render_page(name: str, title: str, data: Any) -> str:
    """Page ``name`` with its title (escaped), its data (JSON in a script element) and the shared board filled in."""
    page = (PAGES / f"{name}.html").read_text(encoding="utf-8")
    return fill_template(
        page,
        {
            "TITLE": html.escape(title),
            "DATA": script_json(data),
            "BOARD_CSS": (PAGES / "board.css").read_text(encoding="utf-8"),
            "BOARD_JS": (PAGES / "board.js").read_text(encoding="utf-8"),
        },
    )


def board_data(rules: Rules) -> dict[str, Any]:
    """The board's tiles as the pages draw them: each tile's name, row, column and whether it is a rosette."""
    return {
        "columns": max(int(t[1:]) for t in rules.board),
        "board": [
            {"tile": t, "row": "ABC".index(t[0]), "col": int(t[1:]) - 1, "rosette": t in rules.rosettes}
            for t in sorted(rules.board)
        ],
    }


def position_data(position: Position) -> dict[str, Any]:
    """A position as the pages draw it: each side's tiles, pieces at home and scored, the side to move."""
    return {
        "light": list(position.tiles("light")),
        "dark": list(position.tiles("dark")),
        "home": {s: position.home(s) for s in SIDES},
        "scored": {s: position.scored(s) for s in SIDES},
        "turn": position.turn,
        "winner": position.winner,
    }


def script_json(data: Any) -> str:
    r"""JSON to embed in a ``<script type="application/json">`` element.

    ``<``, ``>`` and ``&`` are written as ``\u`` escapes, so no string can end the element or open a comment, whatever
    it holds.
    """
    text = json.dumps(data, ensure_ascii=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def fill_template(page: str, values: dict[str, str]) -> str:
    """Replace each ``__NAME__`` of ``page`` in one pass, so a value that holds ``__DATA__`` stays as it is."""
    return re.sub(r"__([A-Z]+(?:_[A-Z]+)*)__", lambda m: values.get(m.group(1), m.group(0)), page)
