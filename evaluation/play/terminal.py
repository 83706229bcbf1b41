"""``ur-play``: a person plays an agent in the terminal.

A thin shell over :class:`~urgym.evaluation.play.session.GameSession`.

Hints come from the solved table when one is cached, else from the rule set's shipped neural network (saying so).
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np
from urgym.agents.base import Agent
from urgym.evaluation.play.session import (
    Event,
    GameSession,
    Hint,
    cached_table,
    describe_move,
    hint_source,
    other_side,
)
from urgym.solver import is_cached

from urgym import Rules
from urgym.howto import path_runs
from urgym.notation import move_text
from urgym.render import board_text

__all__ = ["cached_table", "describe_move", "hint_source", "path_in_words", "play_game"]

HELP = (
    "type a move's number or its notation (a5a1+), h for a hint (every move's winning chance: exact from a solved "
    "table, else a network's estimate), q to quit"
)


def play_game(
    rules: Rules,
    agent: Agent | None,
    human_side: str,
    seed: int | None,
    read: Callable[[str], str],
    write: Callable[[str], None],
    save: str | os.PathLike | None = None,
    hints: bool = True,
) -> str | None:
    """Play one game; return the winner, or None if the human quit.

    The dice are game 0 of ``seed`` in the core's game flow (a random seed when None), the same rolls
    every other loop of the package makes for that seed. With ``save``, the game's record (finished or
    not) is written there as JSON when the game ends or the human quits. ``agent`` None: two people take
    turns at the keyboard; ``hints`` False refuses hints (two people play without them unless they ask).
    """
    if seed is None:
        seed = int(np.random.default_rng().integers(2**63))
    session = GameSession(rules, agent, human_side, seed)
    try:
        return _play(session, read, write, hints)
    finally:
        if save is not None:
            path = session.record().save(save)
            write(f"Game record written to {path}. Review it move by move: review {path}")
        elif session.game.is_over:
            write("To review a game move by move, play it with --save game.json, then run: review game.json")


def _play(session: GameSession, read: Callable[[str], str], write: Callable[[str], None], hints: bool) -> str | None:
    game, rules = session.game, session.rules
    if session.two_players:
        write(f"{rules.describe()}: two players, light moves first (dice seed {game.seed}). {HELP}.")
        for side in ("light", "dark"):
            write(f"{side.capitalize()}'s path: {path_in_words(rules, side)}.")
        write(BOARD_KEY)
    else:
        write(f"{rules.describe()}: you play {session.human} (dice seed {game.seed}). {HELP}.")
        write(f"Your path: {path_in_words(rules, session.human)}. {BOARD_KEY}")
    hinted = False
    while True:
        for event in session.advance():
            _tell(event, session, write)
        if game.is_over:
            break
        position, roll, moves = game.position, game.roll, game.legal_moves
        mover = session.human  # with two people, the side to move
        write("\n" + board_text(position))
        name = mover.capitalize()
        write(f"{name} rolled {roll}. {name}'s moves:" if session.two_players else f"You rolled {roll}. Your moves:")
        notations = [move_text(position, roll, m).rstrip("x+#") for m in moves]
        for i, m in enumerate(moves, 1):
            write(f"  {i}) {describe_move(position, roll, m)}")
        while True:
            answer = read(f"{mover}'s move> " if session.two_players else "your move> ").strip().lower()
            if answer in ("q", "quit", "exit"):
                write("You quit the game.")
                return None
            if answer in ("h", "hint"):
                if not hints:
                    write("Hints are off in this game (ur-play --two-players --hints turns them on).")
                    continue
                if not hinted:
                    _announce_hints(session, write)
                    hinted = True
                write(_hint_text(session))
                continue
            choice = _chosen(answer, notations)
            if choice is not None:
                for event in session.play(moves[choice])[1:]:  # the person's own move is not told
                    _tell(event, session, write)
                break
            write(f"{answer!r} is not a move: {HELP} (moves 1 to {len(moves)}).")
    write("\n" + board_text(game.position))
    winner = game.winner
    if session.two_players:
        loser = other_side(winner)
        score = f"{game.position.scored(winner)} to {game.position.scored(loser)}"
        write(f"{winner.capitalize()} won! Pieces borne off: {score}.")
        return winner
    human = session.human
    mine, theirs = game.position.scored(human), game.position.scored(other_side(human))
    score = f"{mine} to {theirs}" if winner == human else f"{theirs} to {mine}"
    write(("You won!" if winner == human else f"{session.agent.spec} won.") + f" Pieces borne off: {score}.")
    return winner


BOARD_KEY = "On the board: [L] [D] pieces, {L} {D} a piece on a rosette, [*] an empty rosette."


def path_in_words(rules: Rules, side: str) -> str:
    """A side's path as runs of tiles with arrows: ``in -> A4 to A1 -> B1 to B8 -> A8 to A7 -> off``."""
    path = rules.path if side == "light" else rules.dark_path
    return " -> ".join(["in", *(a if a == b else f"{a} to {b}" for a, b in path_runs(path)), "off"])


def _tell(event: Event, session: GameSession, write: Callable[[str], None]) -> None:
    """Tell one event: a pass, the agent's move or the person's forced move (with the board before it)."""
    if event.move is None:
        who = (
            event.side
            if session.two_players
            else "you"
            if event.side == session.human
            else f"{session.agent.spec} ({event.side})"
        )
        write(f"{who} rolled {event.roll}: no legal move, the turn passes.")
    elif session.two_players:
        if event.forced:
            write("\n" + board_text(event.before))
            write(f"{event.side} rolled {event.roll}; the only move, played: {event.text}.")
    elif event.side != session.human:
        write("\n" + board_text(event.before))
        write(f"{session.agent.spec} ({event.side}) rolled {event.roll} and plays {event.text}.")
    elif event.forced:
        write("\n" + board_text(event.before))
        write(f"You rolled {event.roll}; your only move, played: {event.text}.")


def _chosen(answer: str, notations: list[str]) -> int | None:
    """The index of the move ``answer`` names: its number in the list, or its notation (``x``/``+`` optional)."""
    if answer.isascii() and answer.isdigit() and 1 <= int(answer) <= len(notations):  # "²" is a digit int() refuses
        return int(answer) - 1
    bare = answer.rstrip("x+#")
    return notations.index(bare) if bare in notations else None


def _announce_hints(session: GameSession, write: Callable[[str], None]) -> None:
    """Say where the first hint comes from: the table being loaded, or a network's estimate."""
    rules = session.rules
    if is_cached(rules):
        write(f"Loading the solved table of {rules.describe()} for hints (the first hint only)...")
    source = session.hint_source()
    if source is not None and not is_cached(rules):
        write(
            f"No solved table of {rules.describe()} is cached: hints are {source.name}, not exact "
            f"(`solve --rules {rules.name} --pieces {rules.pieces}` makes them exact)."
        )


def _hint_text(session: GameSession) -> str:
    rules = session.rules
    try:
        hint: Hint = session.hint()
    except LookupError:
        return (
            f"No solved table is cached for {rules.describe()}, and no neural network of urgym plays it. "
            f"Create the table with `solve --rules {rules.name} --pieces {rules.pieces}` to get hints."
        )
    position, roll, moves = session.game.position, session.game.roll, session.game.legal_moves
    lines = [] if hint.exact else [f"({hint.source[:1].upper()}{hint.source[1:]}: not exact.)"]
    lines.append(f"Your winning chance before this roll: {hint.before:.1%}. With this roll:")
    values, best = hint.values, hint.best
    for i, m in enumerate(moves, 1):
        mark = (
            ("  <- perfect move" if hint.exact else "  <- the network's best")
            if m == best
            else f"  ({100 * (values[best] - values[m]):.1f} points less)"  # the page's unit, not a relative %
        )
        lines.append(f"  {i}) {describe_move(position, roll, m)}: {values[m]:.2%}{mark}")
    return "\n".join(lines)
