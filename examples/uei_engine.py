#!/usr/bin/env python3
"""A reference engine for UEI 1, the Ur Engine Interface, written from the protocol alone (it imports nothing of urgym).

Capture if it can, else land on a rosette, else move its most advanced piece.

Run it under urgym:  evaluate --agent "engine:python3 -m urgym.examples.uei_engine"
Check it:            engine-check python3 -m urgym.examples.uei_engine

The protocol, one line each way, UTF-8:
  uei                       -> "id name ...", "id author ...", then "ueiok"
  rules {JSON}              -> nothing (the rule set: "path" of light's tiles, "rosettes", "safe_rosettes", ...)
  isready                   -> "readyok"
  position turn light|dark light p1,...,pN dark q1,...,qN roll r moves m1,...,mk
                            -> nothing (pieces by path position: 0 at home, L + 1 scored)
  go                        -> "bestmove m" (one of the moves)
  quit                      -> exit
"""

import json
import sys


def mirror(tile):
    """Dark's path is light's with columns A and C swapped."""
    return {"A": "C", "C": "A"}.get(tile[0], tile[0]) + tile[1:]


class Engine:
    """A UEI engine that plays the greedy move."""

    def __init__(self):
        self.rules = None
        self.position = None

    def handle(self, line):
        """Answer one command line."""
        words = line.split()
        if not words:
            return True
        command = words[0]
        if command == "uei":
            self.say("id name greedy-reference")
            self.say("id author urgym examples")
            self.say("ueiok")
        elif command == "rules":
            self.rules = json.loads(line[len("rules") :])
        elif command == "isready":
            self.say("readyok")
        elif command == "position":
            self.position = self.parse(words[1:])
        elif command == "go":
            self.say(f"bestmove {self.choose()}")
        elif command == "quit":
            return False
        return True

    @staticmethod
    def say(text):
        """Write one line to stdout, flushed."""
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    @staticmethod
    def parse(words):
        """The rules, position and roll of a ``position`` command."""
        fields = dict(zip(words[::2], words[1::2], strict=False))
        numbers = {key: [int(x) for x in fields[key].split(",") if x] for key in ("light", "dark", "moves")}
        return {"turn": fields["turn"], "roll": int(fields["roll"]), **numbers}

    def tile(self, side, position):
        """The tile of a path position (None off the board)."""
        path = self.rules["path"]
        if not 1 <= position <= len(path):
            return None
        tile = path[position - 1]
        return tile if side == "light" else mirror(tile)

    def choose(self):
        """The move to play in the current position."""
        p = self.position
        me, other = p["turn"], "dark" if p["turn"] == "light" else "light"
        occupied = {self.tile(other, q) for q in p[other]}
        best, best_score = p["moves"][0], None
        for move in p["moves"]:
            dest = self.tile(me, move + p["roll"])
            capture = dest is not None and dest in occupied
            rosette = dest is not None and dest in self.rules["rosettes"]
            score = (capture, rosette, move)  # then the most advanced piece
            if best_score is None or score > best_score:
                best, best_score = move, score
        return best


def main():
    """Read commands from stdin until ``quit``."""
    engine = Engine()
    for line in sys.stdin:
        if not engine.handle(line.strip()):
            break


if __name__ == "__main__":
    main()
