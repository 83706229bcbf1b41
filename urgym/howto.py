"""How to play a rule set, in words drawn from its data (the play page's "how to play" and ``Rules`` users).

Nothing here is written per rule set: the path, the shared tiles, the rosettes, the dice and the three flags of a
:class:`~urgym.Rules` make the text, so a custom rule set is explained as well as a named one.
"""

from __future__ import annotations

from fractions import Fraction

from urgym.rules import DICE, Rules

__all__ = ["dice_count", "dice_name", "dice_text", "how_to_play", "path_runs"]

_DICE_COUNTS = {"four-binary": 4, "three-binary-zero-as-four": 3}


def dice_name(rules: Rules) -> str | None:
    """The name in :data:`~urgym.rules.DICE` of the rule set's dice, None for custom dice."""
    return next((name for name, chances in DICE.items() if chances == rules.roll_probabilities), None)


def dice_count(rules: Rules) -> int | None:
    """How many binary dice the rule set throws (4 or 3), None for custom dice (no dice to draw)."""
    return _DICE_COUNTS.get(dice_name(rules) or "")


def path_runs(path: tuple[str, ...]) -> list[tuple[str, str]]:
    """The path cut into straight runs along one row, each as its first and last tile (``A4``-``A1``, ...)."""
    runs: list[list[str]] = []
    for tile in path:
        if (
            runs
            and runs[-1][-1][0] == tile[0]
            and abs(int(runs[-1][-1][1:]) - int(tile[1:])) == 1
            and (len(runs[-1]) == 1 or _step(runs[-1][-2], runs[-1][-1]) == _step(runs[-1][-1], tile))
        ):
            runs[-1].append(tile)
        else:
            runs.append([tile])
    return [(run[0], run[-1]) for run in runs]


def _step(a: str, b: str) -> int:
    return int(b[1:]) - int(a[1:])


def _chance(p: float) -> str:
    """``p`` as a small fraction where it is one (3/8), else in digits (1e-09): never a rounding that reads 0."""
    fraction = Fraction(p).limit_denominator(256)
    return str(fraction) if fraction > 0 and abs(float(fraction) - p) <= 1e-12 else f"{p:.3g}"


def _tiles(tiles: list[str]) -> str:
    return ", ".join(tiles[:-1]) + (" and " if len(tiles) > 1 else "") + tiles[-1] if tiles else "none"


def how_to_play(rules: Rules) -> list[tuple[str, str]]:
    """The rules of ``rules`` for a player: (heading, paragraph) pairs, from the rule set's data alone."""
    on_path = [t for t in rules.path if t in rules.rosettes]
    rosettes = sorted(
        set(on_path) | {t for t in rules.dark_path if t in rules.rosettes}, key=lambda t: (t[0], int(t[1:]))
    )
    sections = [
        (
            "Goal",
            f"Each player has {rules.pieces} piece{'s' * (rules.pieces != 1)}, all starting at home, off the "
            f"board. Bring them along your path and off its end: the first player to score all "
            f"{rules.pieces} wins. Light moves first.",
        ),
        ("The path", _path_text(rules)),
        ("The dice", dice_text(rules)),
        (
            "A move",
            "With a roll of r, enter a new piece onto the r-th tile of your path, or move one of your pieces "
            "r tiles forward; pieces jump over any others. A piece leaves the board only with the exact "
            "roll: one more than the tiles it has left. A piece cannot land on one of your own pieces. A "
            "roll of 0, or a roll with no legal move, passes the turn; when you can move, you must. When "
            "only one move is legal, it is played for you.",
        ),
        (
            "Capturing",
            "Landing on an opponent's piece captures it: it goes back to its owner's home and must start "
            "again." + (" A capture also gives you another roll." if rules.capture_extra_roll else ""),
        ),
        ("Rosettes", _rosette_text(rules, rosettes)),
    ]
    return sections


def _path_text(rules: Rules) -> str:
    runs = " then ".join(_runs_text(rules.path))
    shared = [rules.path[p - 1] for p in rules.shared_positions]
    text = f"Light's pieces enter the board at {rules.path[0]} and run {runs}, {rules.length} tiles, then leave it."
    text += " Dark's path is its mirror image, rows A and C swapped. The arrows on the board show the way."
    if shared:
        text += f" The tiles both paths cross ({_tiles(_runs_text(shared))}) are where pieces capture each other."
    else:
        text += " The two paths never meet, so no piece is ever captured."
    if rules.visits_tiles_twice:
        text += " The path visits some tiles twice: a piece's place is how far it has gone, and two pieces never "
        text += "share a tile."
    return text


def _runs_text(tiles: tuple[str, ...] | list[str]) -> list[str]:
    """Tiles as runs (``B1 to B8``) where they are consecutive along the path."""
    return [a if a == b else f"{a} to {b}" for a, b in path_runs(tuple(tiles))]


def dice_text(rules: Rules) -> str:
    """How the rule set's dice make a roll, and each roll's chance, in a sentence or two."""
    name = dice_name(rules)
    chances = ", ".join(f"{r}: {_chance(p)}" for r, p in enumerate(rules.roll_probabilities) if p > 0)
    if name == "four-binary":
        return (
            "Four tetrahedral dice, each with two of its four tips marked. The roll is the number of marked "
            f"tips that land up, 0 to 4, with chances {chances}: a 2 is most common, a 0 or a 4 rare."
        )
    if name == "three-binary-zero-as-four":
        return (
            "Three tetrahedral dice, each with two of its four tips marked. The roll is the number of marked "
            f"tips that land up, and no marked tip up counts as 4, so every roll moves: {chances}."
        )
    return f"The roll is a number from 0 to {rules.max_roll}, with chances {chances}."


def _rosette_text(rules: Rules, rosettes: list[str]) -> str:
    if not rosettes:  # the flags say nothing on a board without rosettes
        return "This board has no rosettes: no tile gives another roll or keeps a piece safe."
    text = f"The rosettes are {_tiles(rosettes)}."
    if rules.rosette_extra_roll:
        text += " Landing on a rosette gives you another roll."
    if rules.safe_rosettes:
        text += " A piece on a rosette is safe: it cannot be captured, and no opponent may land there."
    else:
        text += " A piece on a rosette is not safe: an opponent landing there captures it."
    return text
