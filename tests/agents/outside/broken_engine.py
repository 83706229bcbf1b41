"""A deliberately broken UEI engine for the tests: ``python broken_engine.py MODE``.

Modes: ``crash`` (exits at the first go), ``hang`` (never answers go), ``illegal`` (plays move 99), ``early``
(answers a position line out of turn), ``garbage`` (answers go with nonsense), ``mute`` (never finishes the
handshake), ``exit`` (exits at once), ``chatty`` (writes info lines everywhere, otherwise plays the first move),
``forking`` (starts a child that sleeps, writes the pids to PIDFILE, plays the first move), ``deaf`` (ignores quit
and SIGTERM, plays the first move), ``closes`` (closes its stdout at the first go and keeps running),
``flood`` (answers go with endless info lines), ``digits`` (answers ``bestmove`` with Arabic-Indic digits),
``huge`` (answers ``bestmove`` with 5,000 digits), ``hang-forking`` (forks a child and never answers go).
An optional second argument PIDFILE receives the engine's pid and its child's.
"""

import os
import signal
import subprocess
import sys
import time

MODE = sys.argv[1]
PIDFILE = sys.argv[2] if len(sys.argv) > 2 else None
if MODE in ("forking", "hang-forking"):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    pids = [os.getpid(), child.pid]
else:
    pids = [os.getpid()]
if PIDFILE:
    with open(PIDFILE + ".tmp", "w") as f:
        f.write(" ".join(map(str, pids)))
    os.replace(PIDFILE + ".tmp", PIDFILE)
if MODE == "deaf":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


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
        if MODE in ("hang", "hang-forking"):
            time.sleep(3600)
        if MODE == "closes":
            sys.stdout.flush()
            os.close(1)  # the descriptor itself: sys.stdout.close() would leave it open
            time.sleep(3600)
        if MODE == "flood":
            while True:
                say("info " + "x" * 1000)
        if MODE == "digits":
            say("bestmove \u0663")
            continue
        if MODE == "huge":
            say("bestmove " + "1" * 5000)
            continue
        if MODE == "illegal":
            say("bestmove 99")
        elif MODE == "garbage":
            say("I resign")
        else:
            say("bestmove " + moves[0])
    elif words[0] == "quit" and MODE != "deaf":
        break
if MODE == "deaf":  # stdin closed: still does not leave
    time.sleep(3600)
