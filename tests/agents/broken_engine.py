"""A deliberately broken UEI engine for the tests: ``python broken_engine.py MODE``.

Modes: ``crash`` (exits at the first go), ``hang`` (never answers go), ``illegal`` (plays move 99), ``early``
(answers a position line out of turn), ``garbage`` (answers go with nonsense), ``mute`` (never finishes the
handshake), ``exit`` (exits at once), ``chatty`` (writes info lines everywhere, otherwise plays the first move).
"""

import sys
import time

MODE = sys.argv[1]


def say(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


if MODE == "exit":
    sys.exit(3)
moves = []
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if MODE == "chatty":
        say("info thinking hard")
    if words[0] == "uei":
        if MODE == "mute":
            time.sleep(3600)
        say("id name broken-" + MODE)
        say("ueiok")
    elif words[0] == "isready":
        say("readyok")
    elif words[0] == "position":
        moves = words[words.index("moves") + 1].split(",")
        if MODE == "early":
            say("bestmove " + moves[0])
    elif words[0] == "go":
        if MODE == "crash":
            sys.exit(1)
        if MODE == "hang":
            time.sleep(3600)
        if MODE == "illegal":
            say("bestmove 99")
        elif MODE == "garbage":
            say("I resign")
        else:
            say("bestmove " + moves[0])
    elif words[0] == "quit":
        break
