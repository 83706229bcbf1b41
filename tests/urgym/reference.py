"""An independent, deliberately naive implementation of the rules (docs/rules.md), used only as a test oracle.

It works on tiles and explicit piece lists, never on bitmasks or the kernels' geometry tables, so it
checks the numba core rather than restating it.
"""

from __future__ import annotations

from dataclasses import dataclass

from urgym import Rules


@dataclass(frozen=True)
class RefState:
    pieces: dict  # side -> tuple of on-board path positions
    home: dict  # side -> pieces at home
    turn: str


def other(side: str) -> str:
    return "dark" if side == "light" else "light"


def tile(rules: Rules, side: str, position: int) -> str:
    """The tile a side's piece stands on at a path position (dark mirrors A and C)."""
    t = rules.path[position - 1]
    if side == "dark":
        t = {"A": "C", "B": "B", "C": "A"}[t[0]] + t[1:]
    return t


def legal(rules: Rules, s: RefState, roll: int) -> list[int]:
    me, you = s.turn, other(s.turn)
    if roll == 0:
        return []
    my_tiles = {tile(rules, me, p) for p in s.pieces[me]}
    your_tiles = {tile(rules, you, p) for p in s.pieces[you]}
    sources = ([0] if s.home[me] > 0 else []) + sorted(s.pieces[me])
    moves = []
    for src in sources:
        dest = src + roll
        if dest > rules.length + 1:
            continue
        if dest == rules.length + 1:
            moves.append(src)
            continue
        t = tile(rules, me, dest)
        if t in my_tiles and (src == 0 or tile(rules, me, src) != t):
            continue
        if t in your_tiles and rules.safe_rosettes and t in rules.rosettes:
            continue
        moves.append(src)
    return moves


def play(rules: Rules, s: RefState, roll: int, src: int) -> tuple[RefState, dict]:
    me, you = s.turn, other(s.turn)
    mine = list(s.pieces[me])
    yours = list(s.pieces[you])
    home = dict(s.home)
    dest = src + roll
    if src == 0:
        home[me] -= 1
    else:
        mine.remove(src)
    captured = landed_rosette = False
    if dest <= rules.length:
        mine.append(dest)
        t = tile(rules, me, dest)
        hit = [q for q in yours if tile(rules, you, q) == t]
        if hit:
            yours.remove(hit[0])
            home[you] += 1
            captured = True
        landed_rosette = t in rules.rosettes
    won = not mine and home[me] == 0
    extra = not won and ((landed_rosette and rules.rosette_extra_roll) or (captured and rules.capture_extra_roll))
    nxt = RefState({me: tuple(sorted(mine)), you: tuple(sorted(yours))}, home, me if extra else you)
    return nxt, {
        "captured": captured,
        "rosette": landed_rosette,
        "extra": extra,
        "won": won,
        "scored": dest == rules.length + 1,
    }
