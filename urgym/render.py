"""Drawing positions: a text board for terminals and an RGB image for videos and notebooks."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from urgym.rules import Rules

__all__ = ["RENDER_MODES", "board_image", "board_text", "check_render_mode", "render_frame"]

RENDER_MODES = ["ansi", "rgb_array", "human"]
"""The render modes of the environments: text, an RGB image, or text printed after every step."""


class Position(Protocol):
    """What drawing needs of a position (:class:`urgym.Position` has it; this module does not import it)."""

    rules: Rules
    turn: str
    winner: str | None
    is_over: bool

    def tiles(self, side: str) -> tuple[str, ...]: ...
    def home(self, side: str) -> int: ...
    def scored(self, side: str) -> int: ...


_ROWS = "ABC"
_SYMBOL = {"light": "L", "dark": "D"}


def _columns(position: Position) -> int:
    return max(int(t[1:]) for t in position.rules.board)


def _occupants(position: Position) -> dict[str, str]:
    return {tile: side for side in ("light", "dark") for tile in position.tiles(side)}


def board_text(position: Position) -> str:
    """The board as text: ``[L]``/``[D]`` pieces, ``{L}``/``{D}`` a piece on a rosette, ``[*]`` an empty rosette."""
    rules = position.rules
    occupants = _occupants(position)
    columns = _columns(position)
    lines = ["     " + "".join(f"{c:^3}" for c in range(1, columns + 1))]
    for row in _ROWS:
        cells = []
        for c in range(1, columns + 1):
            tile = f"{row}{c}"
            if tile not in rules.board:
                cells.append("   ")
            elif tile in occupants:  # braces keep a rosette's mark in sight under its piece
                symbol = _SYMBOL[occupants[tile]]
                cells.append(f"{{{symbol}}}" if tile in rules.rosettes else f"[{symbol}]")
            else:
                cells.append("[*]" if tile in rules.rosettes else "[.]")
        lines.append(f"  {row}  " + "".join(cells).rstrip())
    for side in ("light", "dark"):
        lines.append(
            f"{side:>5} ({_SYMBOL[side]}): home {position.home(side)}, scored {position.scored(side)} of {rules.pieces}"
        )
    status = f"{position.winner} has won" if position.is_over else f"{position.turn} to move"
    lines.append(f"{rules.name}: {status}")
    return "\n".join(lines)


_TILE_PX = 48
_COLORS = {
    "background": (40, 33, 28),
    "tile": (214, 190, 140),
    "rosette": (178, 54, 54),
    "light": (245, 245, 240),
    "dark": (25, 25, 30),
    "outline": (90, 70, 50),
}


def _disc(image: np.ndarray, cy: int, cx: int, radius: float, color: tuple[int, int, int]) -> None:
    ys, xs = np.ogrid[: image.shape[0], : image.shape[1]]
    image[(ys - cy) ** 2 + (xs - cx) ** 2 <= radius**2] = color


def board_image(position: Position) -> np.ndarray:
    """The board as an RGB ``uint8`` image (rows A, B, C top to bottom; a status strip below).

    The strip shows light's pieces at home (left) and scored (right) on top, dark's below.
    """
    rules = position.rules
    columns = _columns(position)
    t = _TILE_PX
    height, width = 3 * t + 2 * (t // 2) + 8, columns * t + 8
    image = np.empty((height, width, 3), dtype=np.uint8)
    image[:] = _COLORS["background"]
    occupants = _occupants(position)
    for r, row in enumerate(_ROWS):
        for c in range(1, columns + 1):
            tile = f"{row}{c}"
            if tile not in rules.board:
                continue
            y0, x0 = 4 + r * t, 4 + (c - 1) * t
            image[y0 + 1 : y0 + t - 1, x0 + 1 : x0 + t - 1] = _COLORS["tile"]
            cy, cx = y0 + t // 2, x0 + t // 2
            if tile in rules.rosettes:
                _disc(image, cy, cx, t * 0.38, _COLORS["rosette"])
                _disc(image, cy, cx, t * 0.16, _COLORS["tile"])
            if tile in occupants:
                _disc(image, cy, cx, t * 0.33, _COLORS["outline"])
                _disc(image, cy, cx, t * 0.29, _COLORS[occupants[tile]])
    strip = 4 + 3 * t
    dot = t // 2
    for i, side in enumerate(("light", "dark")):
        cy = strip + i * dot + dot // 2
        for k in range(position.home(side)):
            _disc(image, cy, 4 + dot // 2 + k * dot, dot * 0.4, _COLORS[side])
        for k in range(position.scored(side)):
            _disc(image, cy, width - 4 - dot // 2 - k * dot, dot * 0.4, _COLORS[side])
    return image


def check_render_mode(render_mode: str | None) -> str | None:
    """``render_mode`` if it is one of :data:`RENDER_MODES` or None, else a ValueError saying what is allowed."""
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode must be one of {RENDER_MODES} or None, got {render_mode!r}")
    return render_mode


def render_frame(render_mode: str | None, position: Position | None, decision: str = "") -> str | np.ndarray | None:
    """What an environment's ``render()`` returns in ``render_mode`` (``decision``: a line on the roll to play).

    ``"human"`` prints the text board and returns None; None warns that no mode was chosen.
    """
    if render_mode is None:
        import gymnasium

        gymnasium.logger.warn("render() called without a render_mode; pass render_mode= to the environment")
        return None
    if position is None:
        raise RuntimeError("call reset() before render()")
    if render_mode == "rgb_array":
        return board_image(position)
    text = board_text(position) + (f"\n{decision}" if decision else "")
    if render_mode == "ansi":
        return text
    print(text + "\n")
    return None
